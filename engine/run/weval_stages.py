"""A Weval blueprint's run: its stages, declared for the pipeline (pipeline.py), and their functions.

    before the cells   batches        --batch: every answer and judgement through batch APIs first
                                      (generate/batch_stage.py); the cells take what they answered
    each cell          resumed        a cell the run database has whole: the same events and results
                       admitted       a cost cap's admission (pipeline.py)
                       generate       its answer: every generated turn (generate/answers.py)
                       rubric         its points; key points extracted from the ideal when it has none
                                      (score/judges.py)
                       functions      function points (score/functions.py): at once, or awaited
                       judges         text points asked of the judges (score/judges.py)
                       awaited        the functions and judges left waiting, side by side (pipeline.py)
                       aggregate      the cell's score: Weval's average coverage (scoring/weval_aggregate)
                       write          into the database, the results (write/weval.py), a Scored event
    after the cells    embeddings     Weval similarity (score/embeddings.py)
    at the end         write          the comparison file and artefacts (write/weval.py)

Every finished answer, judgement and score is in the run database the moment it exists.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..providers.base import ProviderError
from ..scoring.agentv_aggregate import verdict
from ..scoring.weval_aggregate import CoveragePoint, avg_coverage_extent, reference_order
from ..scoring.weval_points import PointContext
from ..weval.model import Point, Prompt
from .cost.guard import NOT_RUN
from .events import Cell, CellFailed, Event, ModelSummary, Notice, Response, RunSummary, Scored
from .generate.answers import CellError, WevalGenerate, as_messages, weval_history
from .journal.held_records import HeldRecords
from .journal.records import CellScore, ExportHead, Failed, NotRun, ResultsName, RunHeader
from .journal.run_store import run_header
from .pipeline import DONE, Around, CellWork, Flow, Format, Pipeline, Stages, admitted, awaited, capped
from .plan.cell_index import CellIndex, CellScores
from .plan.weval import WevalPlan, WevalTask, WevalTasks
from .score.functions import AssessmentBases, function_point, score_function_point, scored_at_once
from .score.judges import WevalJudges
from .score.weval_judge import transcript
from .split import Handed
from .write.files import iso_timestamp, now_utc, safe_timestamp
from .write.weval import WevalWriter, stored_result

NO_POINTS = "Not scored: the prompt has no points (no should or should_not) and no ideal to extract key points from."
SKIPPED_EXTRACTION = "Not scored: --eval-method none skips extracting key points from the ideal."


def verdict_for(score: float | None) -> str | None:
    """Weval has no verdicts; the table uses AgentV's (pass ≥ 0.8, borderline ≥ 0.6) for both formats."""
    return None if score is None else verdict(score)


@dataclass(eq=False)
class WevalCell(CellWork[WevalTask]):
    """A cell (prompt × effective model) in flight: what each stage hands the next."""

    texts: list[str] = field(default_factory=list)  # the generated turns
    history: list[tuple[str, str, bool]] = field(default_factory=list)  # (role, content, generated)
    messages: list[dict[str, str]] | None = None  # the history as {role, content}: the results' and the points'
    points: list[Point] = field(default_factory=list)  # the rubric scored, in the blueprint's order
    judged: list[tuple[int, Point]] = field(default_factory=list)  # the text points, by place (functions)
    subject: str = ""  # the scored text: the generated turns joined by a blank line (§3)
    context: PointContext | None = None
    result: dict[str, Any] = field(default_factory=dict)
    score: float | None = None


# --- each cell's stages ------------------------------------------------------------------------------

def resumed(run: Weval, work: WevalCell) -> Flow | None:
    """A cell the database has whole (or that failed, unless --retry-errors): no call, the same events."""
    task, state = work.task, run.state
    done = state.scores.get(task.cell)
    if done is not None and not (run.options.retry_errors and _has_errors(done.result)):
        turns = state.turns.get(task.cell, {})
        run.restore(task, [turns[n].text for n in sorted(turns)], done)
        return DONE
    failure = state.failures.get(task.cell)
    if failure is not None and not run.options.retry_errors:
        run.resumed_cells += 1
        run.fail(task, failure.error, failure.kind, resumed=True)
        return DONE
    return None


async def generate(run: Weval, work: WevalCell) -> Flow | None:
    task = work.task
    cell = task.cell
    try:
        answer = await run.answers.turns(task)
    except ProviderError as err:
        run.fail(task, f"Failed to get response for {cell.model}: {err.message}", err.kind)
        return DONE
    except CellError as err:
        run.fail(task, str(err), err.kind)
        return DONE
    final = answer.texts[-1]
    work.texts = answer.texts
    work.history = weval_history(task, answer.texts)
    work.messages = as_messages(work.history)
    run.writer.answered(task, final, work.messages)
    run.emit(Response(cell, final, (answer.usage[0], answer.usage[1]), answer.cached and not answer.resumed,
                      answer.latency_ms, resumed=answer.resumed, replayed=run.plan.replay is not None))
    return None


def rubric(run: Weval, work: WevalCell) -> Flow | Awaitable[Flow | None] | None:
    """The points scored: the prompt's own, else the key points extracted from its ideal (awaited: the
    only case that waits, so the others make no coroutine); a cell with nothing to score (or no coverage
    asked) is written as it is."""
    if not run.coverage:
        run.scored(work.task.cell, None, {})
        return DONE
    prompt = work.task.prompt
    points: list[Point] = prompt.points  # a new list each time it is read
    if not points and not prompt.ideal:
        # The reference leaves such a result without avgCoverageExtent and says nothing; the format's
        # marker for a result without a score is `error`, so the dashboard (and a reader) learns why.
        run.scored(work.task.cell, None, {"keyPointsCount": 0, "pointAssessments": [], "error": NO_POINTS})
        return DONE
    if not points and not run.judging:
        run.skipped_extractions.add(prompt.id)
        run.scored(work.task.cell, None, {"keyPointsCount": 0, "pointAssessments": [], "error": SKIPPED_EXTRACTION})
        return DONE
    if not points and prompt.ideal:
        return _extracted(run, work, prompt)
    _rubric(work, points)
    return None


async def _extracted(run: Weval, work: WevalCell, prompt: Prompt) -> Flow | None:
    """The key points extracted from the prompt's ideal, as the cell's rubric."""
    run.held.flush()
    key_points, error = await run.judges.key_points(prompt)
    if key_points:
        run.writer.key_points(prompt.id, key_points)
    if key_points is None:
        run.scored(work.task.cell, None, {"error": f"Key point extraction failed: {error}"})
        return DONE
    _rubric(work, [Point(kind="text", text=t, span=prompt.span) for t in key_points])
    return None


def _rubric(work: WevalCell, points: list[Point]) -> None:
    work.points = points
    work.entries = [None] * len(points)
    work.subject = "\n\n".join(work.texts)
    assert work.messages is not None  # (generate made them)
    work.context = PointContext(messages=work.messages, model_id=work.task.cell.model, prompt_id=work.task.prompt.id)


def functions(run: Weval, work: WevalCell) -> Flow | None:
    """Function points: scored at once, or (`$call`, `$js`) left waiting; the text points noted for the
    judges."""
    assert work.context is not None
    for i, point in enumerate(work.points):
        if scored_at_once(point):
            work.entries[i] = function_point(point, work.subject, work.context, run.bases(point))
        elif point.kind == "fn":
            work.waiting.append((i, score_function_point(point, work.subject, work.context,
                                                         services=run.plan.blueprint.external_services,
                                                         client=run.calls.client, env=run.options.env)))
        else:
            work.judged.append((i, point))
    return None


def judges(run: Weval, work: WevalCell) -> Flow | None:
    """Text points: each asked of the judges, left waiting; the answer is in the database before any
    judge or service is waited on."""
    if work.judged:
        conversation = transcript(work.history)
        for i, point in work.judged:
            work.waiting.append((i, run.judges.point(work.task.cell, i, point, work.subject, conversation)))
    if work.waiting:
        run.held.flush()
    return None


def aggregate(run: Weval, work: WevalCell) -> Flow | None:
    assessments = reference_order(work.entries, [p.kind == "fn" for p in work.points])  # functions first
    score = avg_coverage_extent(CoveragePoint(a.get("coverageExtent"), a.get("multiplier", 1.0), a.get("pathId"))
                                for a in assessments)
    work.result = {"keyPointsCount": len(assessments)}
    if score is not None:
        work.result["avgCoverageExtent"] = score
    work.result["pointAssessments"] = assessments
    work.score = work.result.get("avgCoverageExtent")
    return None


def write(run: Weval, work: WevalCell) -> Flow | None:
    run.scored(work.task.cell, work.score, work.result)
    return None


# --- before and after the cells ----------------------------------------------------------------------

async def batches(run: Weval) -> AsyncIterator[Event]:
    """Batch mode: every answer the batch APIs can give (a phase per generated turn; the key-point
    extractions with the first), then the judges' calls on them, before the cells run
    (run/generate/batch_stage.py); the cells `take()` what the batches answered."""
    from .generate.batch_journal import journaled_batches

    if run.plan.replay is not None:
        return
    journal_path = run.journal_path
    journaled = journaled_batches(journal_path, run.options.resume)
    if not (run.options.batch or run.options.batch_models or journaled):
        return
    # batch mode only: the batch stage's modules are ~10 ms of imports an interactive run skips
    from .generate.batch_stage import BatchStage

    batch = BatchStage(calls=run.calls, journal=run.journal, journal_path=journal_path,
                       options=run.options, journaled=journaled, cells=run.cells)
    run.answers.batch = run.judges.batch = batch
    run.judges.generate = run.answers
    # A phase per generated turn: a conversation's next request holds the answer the phase before
    # returned (a one-turn prompt is done after the first).
    turns = max((run.answers.generated_turns(t) for t in run.plan.tasks), default=0)
    budget = run.cost.budget
    # Each phase's requests are made as the stage reads them (generators), never held all at once.
    for turn in range(max(turns, 1)):
        refuses = run.cost.refuses if budget.active else None  # no cap: nothing to ask per cell
        requests: Iterable[Any] = run.answers.batch_requests(journaled, refuses, turn)
        if turn == 0:
            # Key points are extracted from the prompt alone: with the first answers, for the prompts
            # some of whose cells a cost cap admitted (while the answers' requests were made) or that
            # run without a cap.
            requests = itertools.chain(requests, run.judges.extraction_requests(
                journaled, lambda cell: not budget.active or budget.holds(cell)))
        async for event in batch.run(requests):
            yield event
    await run.judges.take_key_points()
    if run.judging and not run.judges.problem:
        # The last phase: the judges' calls on the answers the first ones returned (on the key points
        # extracted from an ideal too), made as the stage reads them (a generator), not all at once.
        async for event in batch.run(run.judges.batch_requests(journaled)):
            yield event
    # No phase comes after this one: the database's slot keys (24 bytes a batch item, ~25 MB of a resumed
    # 100,000-prompt judged run) go before the cells, which take their answers from `batch.waiting`.
    batch.forget_journaled()


async def embeddings(run: Weval) -> AsyncIterator[Event]:
    if "embedding" in run.plan.eval_methods:
        from .score.embeddings import embedding_similarity

        async for event in embedding_similarity(run.plan, run.calls, run.journal, run.state.embeddings,
                                                run.writer, run.failed, run.queue):
            yield event


class Weval(Format[WevalPlan, WevalCell]):
    """A blueprint's stages and what they share across the run."""

    stages = Stages(
        before=(batches,),
        cell=(resumed, Around(admitted, (generate, rubric, functions, judges, awaited, aggregate, write), capped)),
        after=(embeddings,),
    )

    @classmethod
    def database_name(cls, plan: Any) -> str:
        return f"{plan.results_base}{_replay_suffix(plan)}.run.db"

    def __init__(self, pipeline: Pipeline) -> None:
        super().__init__(pipeline)
        self.held = HeldRecords()  # database records of this step, written together
        # each cell's place in the plan (plan/cell_index.py): the scores, the results' and the batch answers'
        # places on disk are arrays by it (dicts by cell were ~16 MB each at 200,000 cells)
        self.cells = CellIndex(self.plan.tasks)
        self.scores = CellScores(self.cells)  # each cell's score (its verdict follows: verdict_for)
        self.failed: set[Cell] = set()
        self.not_run_cells: set[Cell] = set()  # cells a cost cap kept from starting (also in `failed`)
        # a point's fixed fields are remembered for the prompt's other cells, when it has any
        self.bases = AssessmentBases(shared=len(self.plan.effective_models) > 1)
        # `--eval-method none`: no judge, no key-point extraction, no embeddings, but the function points
        # still run (they cost nothing) and their results are written as llm-coverage results.
        self.judging = "llm-coverage" in self.plan.eval_methods
        self.coverage = self.judging or not self.plan.eval_methods
        self.writer = WevalWriter(self.plan, self.folder, coverage=self.coverage, index=self.cells,
                                  artefacts=self.options.artefacts)
        self.skipped_extractions: set[str] = set()
        self._stamp: str | None = None  # the comparison file's (stamp())
        # The stages' parts, made once the database is open (opened()): they read what an earlier run has.
        self.answers: WevalGenerate
        self.judges: WevalJudges

    # --- the pipeline's hooks (pipeline.py) ---------------------------------------------------------
    def header(self) -> RunHeader:
        return RunHeader(kind="weval", file=str(self.plan.path), config_id=self.plan.config_id,
                         run_label=self.plan.run_label, started=iso_timestamp(now_utc()),
                         systems=_systems(self.plan.tasks),
                         **run_header(self.plan, self.options))

    def opened(self) -> None:
        self.held.journal = self.journal
        self.answers = WevalGenerate(self.plan, self.options, self.calls, self.state, self.held)
        self.judges = WevalJudges(self.plan, self.options, self.calls, self.state, self.held, self.bases)
        # Usage records wait with the answer or judgement they belong to, and go out in its write.
        self.cost.attach(self.held.hold, self.state.usage)

    def resumed_count(self) -> int:
        done, failures = self.state.scores, self.state.failures
        if not done and not failures:
            return 0
        return sum(1 for cell in _cells(self.plan.tasks) if cell in done or
                   (cell in failures and not self.options.retry_errors))

    def prepare(self) -> Iterator[Event]:
        self.judges.bind()
        if self.judges.problem:
            yield Notice(f"Judged points will not be scored: {self.judges.problem}", "warning")
        if not self.plan.eval_methods:
            yield Notice("--eval-method none: function points are scored; judged points, key-point "
                         "extraction and embeddings are skipped", "info")

    def work(self, task: WevalTask) -> WevalCell:
        return WevalCell(task)

    def not_run(self, work: WevalCell, why: str) -> None:
        self.fail(work.task, why, NOT_RUN)

    def write(self) -> list[Path]:
        files = self.writer.write(cost=self.cost.summary(), stamp=self.stamp())
        if self.plan.shard is not None and self.writer.exported is not None and self.plan.replay is None:
            # What evalspec merge needs besides the cells' rows (write/weval_rebuild.py)
            from .write.weval_rebuild import HEAD, weval_head

            self.journal.write(ExportHead(HEAD, weval_head(self.plan, self.writer.exported)))
        return files

    async def stop(self) -> None:
        self.held.flush()

    def write_partial(self) -> None:
        try:
            stamp = self.stamp()
        except OSError:  # the database cannot keep the name (a full disk): no export a later one would not replace
            self.writer.results.cells.close()
            return
        self.writer.write_partial(cost=self.cost.summary(), stamp=stamp)

    def stamp(self) -> str:
        """The time that names the run's comparison file and is its `timestamp`: the one its first export
        chose (the run row's `results`), else now (as the reference, the time the results are written), kept
        in the database (committed) before the file is begun. So every export of one run (a `--resume` after a
        kill once it was written, a finished run resumed, a stopped run's partial results then the whole) is
        the same files: one comparison file, not one per export. A fresh run of the label is another run."""
        if self._stamp is not None:
            return self._stamp
        header = self.state.header
        named = header.results if header is not None else None
        base, ending = f"{self.plan.results_base}_", "_comparison.json"
        if named and named.startswith(base) and named.endswith(ending) and \
                _STAMP.fullmatch(named[len(base):-len(ending)]):
            self._stamp = named[len(base):-len(ending)]
            return self._stamp
        stamp = safe_timestamp(now_utc())
        self.held.flush()  # (nothing is held once the cells are done; written with the name in any case)
        self.journal.write(ResultsName(f"{base}{stamp}{ending}"))  # committed at once (run_store._AT_ONCE)
        self._stamp = stamp
        return stamp

    # --- what the stages share ----------------------------------------------------------------------
    def restore(self, task: WevalTask, texts: list[str], done: CellScore) -> None:
        """A cell the database already has whole: no call, the same events and results."""
        cell = task.cell
        self.resumed_cells += 1
        if not texts and self.plan.replay is not None:
            rec = self.plan.replay.answer(cell)
            texts = list(rec.generated) if rec is not None and rec.text is not None else []
        final = texts[-1] if texts else ""
        self.writer.answered(task, final, as_messages(weval_history(task, texts or [""])))
        self.emit(Response(cell, final, resumed=True, replayed=self.plan.replay is not None))
        result = done.result
        self.judges.unscored_points += sum(1 for pa in result.get("pointAssessments") or []
                                           if str(pa.get("error") or "").startswith("Not scored:"))
        self.writer.scored(cell, result)
        kp = self.state.key_points.get(cell.item)
        if kp and kp.points:
            self.writer.key_points(cell.item, list(kp.points))
        score = done.score
        self.scores[task.cell] = score
        self.emit(Scored(cell, score, verdict_for(score), result, resumed=True))

    # --- cells another process ran (split.py) -------------------------------------------------------
    def unsplit(self) -> str | None:
        if self.plan.replay is not None:
            return "a replay reads its answers from one file"
        if self.answers.batch is not None:
            return "batch mode"
        return None

    def forked(self) -> None:
        self.writer.hand_over()

    def handed(self, task: WevalTask) -> Any:
        cell = task.cell
        score = self.scores.get(cell, _ABSENT)
        return (self.writer.handed(cell), None if score is _ABSENT else (score,), cell in self.failed)

    def handed_run(self) -> Any:
        return (self.judges.unscored_points, sorted(self.skipped_extractions))

    def adopted_run(self, handed: Any) -> None:
        unscored, skipped = handed
        self.judges.unscored_points += unscored
        self.skipped_extractions.update(skipped)

    def adopted(self, records: list[Any]) -> list[Any]:
        kept: list[Any] = []
        tasks = self.tasks
        for r in records:
            kind = type(r)
            if kind is Handed:
                given, score, failed = r.payload
                task = tasks[r.position]
                self.writer.adopt(task, given)
                if score is not None:
                    self.scores[task.cell] = score[0]
                if failed:
                    self.failed.add(task.cell)
                continue
            kept.append(r)
        return kept

    def fail(self, task: WevalTask, message: str, kind: str, *, resumed: bool = False) -> None:
        cell = task.cell
        self.failed.add(cell)
        if kind == NOT_RUN:
            self.not_run_cells.add(cell)
        self.writer.failed(task, message, not_run=kind == NOT_RUN)
        if not resumed and kind != NOT_RUN:
            self.held.hold(Failed(cell, message, kind))
        elif kind == NOT_RUN:
            self.held.hold(NotRun(cell, message))  # not a failure: --resume with a higher cap runs it
        self.held.flush()
        self.emit(CellFailed(cell, message, kind, resumed=resumed))

    def scored(self, cell: Cell, score: float | None, result: dict[str, Any]) -> None:
        verdict = verdict_for(score)
        self.scores[cell] = score
        encoded, stored = stored_result(result)
        self.held.hold(CellScore(cell, score, verdict, result, packed=stored))
        self.held.flush()
        self.writer.scored(cell, result, encoded)
        self.emit(Scored(cell, score, verdict, result))

    # --- the end -----------------------------------------------------------------------------------
    def summary(self, files: list[Path]) -> RunSummary:
        rows: list[ModelSummary] = []
        # One pass over the plan's cells (not a task made per cell per model): each model's counts, the
        # scores added in the cells' order
        counts: dict[str, list[Any]] = {model: [0, [], 0, 0, 0, 0, 0] for model in self.plan.effective_models}
        scores, failed, not_run = self.scores, self.failed, self.not_run_cells
        for cell in _cells(self.plan.tasks):
            row = counts.get(cell.model)
            if row is None:
                continue
            row[0] += 1
            score = scores.get(cell, _ABSENT)
            if score is not _ABSENT and score is not None:
                row[1].append(score)
                row[_VERDICT_COLUMN[verdict(score)]] += 1
            if score is None or cell in not_run:
                row[5] += 1
            if cell in failed and cell not in not_run:
                row[6] += 1
        for model, (cells, scored, passed, borderline, failing, not_scored, errors) in counts.items():
            rows.append(ModelSummary(
                model=model, cells=cells, scored=len(scored), mean=sum(scored) / len(scored) if scored else None,
                passed=passed, borderline=borderline, failed=failing, not_scored=not_scored, errors=errors))
        notes = []
        if not self.plan.eval_methods:
            skipped = [f"{self.judges.unscored_points} judged point(s)"]
            if self.skipped_extractions:
                skipped.append(f"key-point extraction for {len(self.skipped_extractions)} prompt(s)")
            notes.append(f"--eval-method none: function points were scored; skipped {', '.join(skipped)} "
                         "and embeddings")
        elif self.judges.unscored_points:
            why = self.judges.problem or "no judge could be called"
            notes.append(f"{self.judges.unscored_points} judged point(s) not scored: {why}")
        points_not_scored = self.writer.points_not_scored  # counted as the cells were scored (not read back)
        if self.cost.stopped:
            notes.append(self.cost.stopped)
        return RunSummary(kind="weval", run_label=self.plan.run_label, models=tuple(rows),
                          files=tuple(str(f) for f in files), calls=self.calls.calls, cached=self.calls.cached,
                          resumed=self.resumed_cells, notes=tuple(notes), points_not_scored=points_not_scored,
                          cost=self.cost.summary(), stopped=self.cost.stopped)


_ABSENT = object()
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z")  # write/files.py's safe_timestamp
_VERDICT_COLUMN = {"pass": 2, "borderline": 3, "fail": 4}


def _cells(tasks: Any) -> list[Cell]:
    """The plan's cells in order: WevalTasks' own list (no task made per cell), else from each task."""
    return tasks.cells() if isinstance(tasks, WevalTasks) else [t.cell for t in tasks]


def _systems(tasks: Any) -> dict[str, str | None]:
    """Each model's system prompt (its last cell's), as the header records it: from WevalTasks' arrays (no
    task made per cell), else from each task."""
    if isinstance(tasks, WevalTasks):
        return {cell.model: system for cell, _, system in tasks.rows()}
    return {t.cell.model: t.system for t in tasks}


def _has_errors(result: Any) -> bool:
    if not isinstance(result, dict):
        return False
    if result.get("error") == NO_POINTS:
        return False  # nothing to retry: the prompt itself has nothing to score
    if result.get("error"):
        return True
    return any(isinstance(pa, dict) and pa.get("error") for pa in result.get("pointAssessments") or [])


def _replay_suffix(plan: WevalPlan) -> str:
    """A replay keeps the run label (the same blueprint and models: the dashboard groups it with the
    original) but gets its own database, so the original run's database, often the replay's very source,
    is neither set aside nor mixed with the replay on --resume."""
    if plan.replay is None:
        return ""
    import hashlib

    return ".replay-" + hashlib.sha256(str(plan.replay.path.resolve()).encode()).hexdigest()[:8]
