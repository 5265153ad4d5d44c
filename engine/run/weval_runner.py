"""Running a Weval blueprint: the skeleton's hooks (skeleton.py) wiring the stages, as a stream of events.

Each cell (prompt × effective model) is generated (generate/answers.py) and scored on its own, as soon as a
worker is free: function points (score/functions.py), then the text points' judges and the key points
extracted from an ideal (score/judges.py); the embedding similarity comes after every cell
(score/embeddings.py), the comparison file and artefacts at the end (write/weval.py). Results stream out
while the run goes on, and every finished answer, judgement and score is in the journal the moment it
exists.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..own_files import own_folder
from ..providers.base import ProviderError
from ..scoring.agentv_aggregate import verdict
from ..scoring.weval_aggregate import CoveragePoint, avg_coverage_extent, reference_order
from ..scoring.weval_points import PointContext
from ..weval.model import Point
from .cost.guard import NOT_RUN, CostGuard
from .events import (
    Cell,
    CellFailed,
    Event,
    ModelSummary,
    Notice,
    Response,
    RunSummary,
    Scored,
)
from .generate.answers import CellError, WevalGenerate, weval_history
from .generate.calls import Calls
from .journal.held_records import HeldRecords
from .journal.journal_file import Journal, JournalState, run_header
from .journal.records import CellScore, Failed, RunHeader
from .options import RunOptions
from .plan.cell_index import CellIndex, CellScores
from .plan.weval import WevalPlan, WevalTask
from .score.embeddings import embedding_similarity
from .score.functions import AssessmentBases, function_point, score_function_point, scored_at_once
from .score.judges import WevalJudges
from .score.weval_judge import transcript
from .skeleton import RunSkeleton
from .write.files import iso_timestamp, now_utc
from .write.weval import WevalWriter

NO_POINTS = "Not scored: the prompt has no points (no should or should_not) and no ideal to extract key points from."
SKIPPED_EXTRACTION = "Not scored: --eval-method none skips extracting key points from the ideal."


def verdict_for(score: float | None) -> str | None:
    """Weval has no verdicts; the table uses AgentV's (pass ≥ 0.8, borderline ≥ 0.6) for both formats."""
    return None if score is None else verdict(score)


class WevalRun:
    def __init__(self, plan: WevalPlan, options: RunOptions) -> None:
        self.plan = plan
        self.options = options
        self.bp = plan.blueprint
        own_folder(options.output, plan.output_folder_parts)  # never a link planted below the output folder
        own_folder(options.output, (".cache",))  # where the response cache is kept (options.cache_path)
        self.folder = options.output.joinpath(*plan.output_folder_parts)
        self.journal_path = self.folder / f"{plan.results_base}{_replay_suffix(plan)}.journal.jsonl"
        self.state = JournalState()
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self.emit = self.queue.put_nowait
        self.calls = Calls(options, self.emit, concurrency=plan.concurrency)
        self.cost = CostGuard(plan, options, plan.prices)
        self.calls.spend = self.cost.spend
        self.journal: Journal | None = None
        self.held = HeldRecords()  # journal records of this step, written together
        # each cell's place in the plan (plan/cell_index.py): the scores, the results' and the batch answers'
        # places on disk are arrays by it (dicts by cell were ~16 MB each at 200,000 cells)
        self.cells = CellIndex(plan.tasks)
        # each cell's score (its verdict follows from it: verdict_for)
        self.scores = CellScores(self.cells)
        self.failed: set[Cell] = set()
        self.not_run: set[Cell] = set()  # cells a cost cap kept from starting (also in `failed`)
        self.resumed_cells = 0
        self.bases = AssessmentBases()
        # `--eval-method none`: no judge, no key-point extraction, no embeddings, but the function points
        # still run (they cost nothing) and their results are written as llm-coverage results.
        self.judging = "llm-coverage" in plan.eval_methods
        self.coverage = self.judging or not plan.eval_methods
        self.writer = WevalWriter(plan, self.folder, coverage=self.coverage, index=self.cells)
        self.skipped_extractions: set[str] = set()
        # The stages, made once the journal is open (opened()): they read what an earlier run has.
        self.generate: WevalGenerate
        self.judges: WevalJudges

    @property
    def tasks(self) -> Sequence[WevalTask]:
        return self.plan.tasks

    # --- the skeleton's steps (skeleton.py) ------------------------------------------------------
    def header(self) -> RunHeader:
        return RunHeader(kind="weval", file=str(self.plan.path), config_id=self.plan.config_id,
                         run_label=self.plan.run_label, started=iso_timestamp(now_utc()),
                         systems={t.cell.model: t.system for t in self.plan.tasks},
                         **run_header(self.plan, self.options))

    def check(self) -> list[Event]:
        cap_warning = self.cost.check()  # raises PlanError when --max-cost cannot be held
        return [Notice(cap_warning, "warning")] if cap_warning else []

    def opened(self) -> None:
        self.held.journal = self.journal
        self.generate = WevalGenerate(self.plan, self.options, self.calls, self.state, self.held)
        self.judges = WevalJudges(self.plan, self.options, self.calls, self.state, self.held, self.bases)
        # Usage records wait with the answer or judgement they belong to, and go out in its write.
        self.cost.attach(self.held.hold, self.state.usage)

    def resumed_count(self) -> int:
        return sum(1 for t in self.plan.tasks if t.cell in self.state.scores or
                   (t.cell in self.state.failures and not self.options.retry_errors))

    def prepare(self) -> Iterator[Event]:
        self.judges.bind()
        if self.judges.problem:
            yield Notice(f"Judged points will not be scored: {self.judges.problem}", "warning")
        if not self.plan.eval_methods:
            yield Notice("--eval-method none: function points are scored; judged points, key-point "
                         "extraction and embeddings are skipped", "info")

    async def before_cells(self) -> AsyncIterator[Event]:
        """Batch mode: every answer the batch APIs can give (a phase per generated turn; the key-point
        extractions with the first), then the judges' calls on them, before the cells run
        (run/generate/batch_stage.py); the cells `take()` what the batches answered."""
        from .generate.batch_stage import BatchStage, journaled_slots

        if self.plan.replay is not None:
            return
        journaled = journaled_slots(self.journal_path, self.options)
        if not (self.options.batch or self.options.batch_models or journaled):
            return
        assert self.journal is not None
        batch = BatchStage(calls=self.calls, journal=self.journal, journal_path=self.journal_path,
                           options=self.options, journaled=journaled, cells=self.cells)
        self.generate.batch = self.judges.batch = batch
        self.judges.generate = self.generate
        # A phase per generated turn: a conversation's next request holds the answer the phase before
        # returned (a one-turn prompt is done after the first).
        turns = max((self.generate.generated_turns(t) for t in self.plan.tasks), default=0)
        budget = self.cost.budget
        # Each phase's requests are made as the stage reads them (generators), never held all at once.
        for turn in range(max(turns, 1)):
            refuses = self.cost.refuses if budget.active else None  # no cap: nothing to ask per cell
            requests: Iterable[Any] = self.generate.batch_requests(journaled, refuses, turn)
            if turn == 0:
                # Key points are extracted from the prompt alone: with the first answers, for the prompts
                # some of whose cells a cost cap admitted (while the answers' requests were made) or that
                # run without a cap.
                requests = itertools.chain(requests, self.judges.extraction_requests(
                    journaled, lambda cell: not budget.active or budget.holds(cell)))
            async for event in batch.run(requests):
                yield event
        await self.judges.take_key_points()
        if self.judging and not self.judges.problem:
            # The last phase: the judges' calls on the answers the first ones returned (on the key points
            # extracted from an ideal too).
            # Made as the stage reads them (a generator), not all at once.
            async for event in batch.run(self.judges.batch_requests(journaled)):
                yield event
        # No phase comes after this one: the journal's slot keys (24 bytes a batch item, ~25 MB of a resumed
        # 100,000-prompt judged run) go before the cells, which take their answers from `batch.waiting`.
        batch.forget_journaled()

    def workers(self, default: int) -> int:
        return default

    async def after_cells(self) -> AsyncIterator[Event]:
        if "embedding" in self.plan.eval_methods:
            assert self.journal is not None
            async for event in embedding_similarity(self.plan, self.calls, self.journal, self.state.embeddings,
                                                    self.writer, self.failed, self.queue):
                yield event

    def write(self) -> list[Path]:
        return self.writer.write(cost=self.cost.summary())

    async def stop(self) -> None:
        self.held.flush()

    def write_partial(self) -> None:
        self.writer.write_partial(cost=self.cost.summary())

    # --- one cell: generate, then score -----------------------------------------------------------
    async def cell(self, task: WevalTask) -> None:
        cell = task.cell
        state = self.state
        done = state.scores.get(cell)
        if done is not None and not (self.options.retry_errors and _has_errors(done.result)):
            turns = state.turns.get(cell, {})
            self._restore(task, [turns[n].text for n in sorted(turns)], done)
            return
        failure = state.failures.get(cell)
        if failure is not None and not self.options.retry_errors:
            self.resumed_cells += 1
            self._fail(task, failure.error, failure.kind, resumed=True)
            return
        why = self.cost.admit(task)
        if why is not None:  # a cost cap: not run, not journaled, so --resume with a higher cap runs it
            self._fail(task, why, NOT_RUN)
            return
        try:
            answer = await self.generate.turns(task)
        except ProviderError as err:
            self._fail(task, f"Failed to get response for {cell.model}: {err.message}", err.kind)
            return
        except CellError as err:
            self._fail(task, str(err), err.kind)
            return
        final = answer.texts[-1]
        history = weval_history(task, answer.texts)
        self.writer.answered(task, final, history)
        self.emit(Response(cell, final, (answer.usage[0], answer.usage[1]), answer.cached and not answer.resumed,
                           answer.latency_ms, resumed=answer.resumed, replayed=self.plan.replay is not None))
        await self._score(task, answer.texts, history)

    def _restore(self, task: WevalTask, texts: list[str], done: CellScore) -> None:
        """A cell the journal already has whole: no call, the same events and results."""
        cell = task.cell
        self.resumed_cells += 1
        if not texts and self.plan.replay is not None:
            rec = self.plan.replay.answer(cell)
            texts = list(rec.generated) if rec is not None and rec.text is not None else []
        final = texts[-1] if texts else ""
        history = weval_history(task, texts or [""])
        self.writer.answered(task, final, history)
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

    def _fail(self, task: WevalTask, message: str, kind: str, *, resumed: bool = False) -> None:
        cell = task.cell
        self.failed.add(cell)
        self.cost.release(cell)
        if kind == NOT_RUN:
            self.not_run.add(cell)
        self.writer.failed(task, message, not_run=kind == NOT_RUN)
        if not resumed and kind != NOT_RUN:
            self.held.hold(Failed(cell, message, kind))
        self.held.flush()
        self.emit(CellFailed(cell, message, kind, resumed=resumed))

    async def _score(self, task: WevalTask, texts: list[str], history: list[tuple[str, str, bool]]) -> None:
        """The cell's rubric: function points at once, the rest (`$call`, `$js`, judged points) awaited
        together; key points extracted from the ideal first when the prompt has no points."""
        cell = task.cell
        if not self.coverage:
            self._scored(cell, None, {})
            return
        prompt = task.prompt
        points: list[Point] = list(prompt.points)
        if not points and not prompt.ideal:
            # The reference leaves such a result without avgCoverageExtent and says nothing; the format's
            # marker for a result without a score is `error`, so the dashboard (and a reader) learns why.
            self._scored(cell, None, {"keyPointsCount": 0, "pointAssessments": [], "error": NO_POINTS})
            return
        if not points and not self.judging:
            self.skipped_extractions.add(prompt.id)
            self._scored(cell, None, {"keyPointsCount": 0, "pointAssessments": [], "error": SKIPPED_EXTRACTION})
            return
        if not points and prompt.ideal:
            self.held.flush()
            key_points, error = await self.judges.key_points(prompt)
            if key_points:
                self.writer.key_points(prompt.id, key_points)
            if key_points is None:
                self._scored(cell, None, {"error": f"Key point extraction failed: {error}"})
                return
            points = [Point(kind="text", text=t, span=prompt.span) for t in key_points]
        # The scored text of a conversation is its generated turns joined by a blank line (§3).
        subject = "\n\n".join(texts)
        ctx = PointContext(messages=[{"role": r, "content": c} for r, c, _ in history], model_id=cell.model,
                           prompt_id=prompt.id)
        assessments: list[Any] = [None] * len(points)
        waiting: list[tuple[int, Point]] = []
        for i, point in enumerate(points):
            if scored_at_once(point):
                assessments[i] = function_point(point, subject, ctx, self.bases(point))
            else:
                waiting.append((i, point))
        if waiting:
            self.held.flush()  # the answer is on disk before waiting on judges or services
            conversation = transcript(history)

            async def one(index: int, point: Point) -> dict[str, Any]:
                if point.kind == "fn":
                    return await score_function_point(point, subject, ctx, services=self.bp.external_services,
                                                      client=self.calls.client, env=self.options.env)
                return await self.judges.point(cell, index, point, subject, conversation)

            for (i, _), got in zip(waiting, await asyncio.gather(*(one(i, p) for i, p in waiting)), strict=True):
                assessments[i] = got
        assessments = reference_order(assessments, [p.kind == "fn" for p in points])  # functions first
        score = avg_coverage_extent(CoveragePoint(a.get("coverageExtent"), a.get("multiplier", 1.0), a.get("pathId"))
                                    for a in assessments)
        result: dict[str, Any] = {"keyPointsCount": len(assessments)}
        if score is not None:
            result["avgCoverageExtent"] = score
        result["pointAssessments"] = assessments
        self._scored(cell, result.get("avgCoverageExtent"), result)

    def _scored(self, cell: Cell, score: float | None, result: dict[str, Any]) -> None:
        self.cost.release(cell)
        self.writer.scored(cell, result)
        verdict = verdict_for(score)
        self.scores[cell] = score
        assert self.journal is not None
        self.held.hold(CellScore(cell, score, verdict, result))
        self.held.flush()
        self.emit(Scored(cell, score, verdict, result))

    # --- the end ----------------------------------------------------------------------------------
    def summary(self, files: list[Path]) -> RunSummary:
        rows: list[ModelSummary] = []
        for model in self.plan.effective_models:
            cells = [t.cell for t in self.plan.tasks if t.cell.model == model]
            scored = [self.scores[c] for c in cells if c in self.scores and self.scores[c] is not None]
            verdicts = [verdict_for(self.scores[c]) for c in cells if c in self.scores]
            rows.append(ModelSummary(
                model=model, cells=len(cells), scored=len(scored),
                mean=sum(scored) / len(scored) if scored else None,  # type: ignore[arg-type]
                passed=verdicts.count("pass"), borderline=verdicts.count("borderline"),
                failed=verdicts.count("fail"), not_scored=sum(1 for c in cells if (c in self.scores
                                                              and self.scores[c] is None) or c in self.not_run),
                errors=sum(1 for c in cells if c in self.failed and c not in self.not_run)))
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
        points_not_scored = sum(1 for by_model in self.writer.results.coverage.values() for result in by_model.values()
                                if isinstance(result, dict)
                                for pa in result.get("pointAssessments") or [] if isinstance(pa, dict) and pa.get("error"))
        if self.cost.stopped:
            notes.append(self.cost.stopped)
        return RunSummary(kind="weval", run_label=self.plan.run_label, models=tuple(rows),
                          files=tuple(str(f) for f in files), calls=self.calls.calls, cached=self.calls.cached,
                          resumed=self.resumed_cells, notes=tuple(notes), points_not_scored=points_not_scored,
                          cost=self.cost.summary(), stopped=self.cost.stopped)


def _has_errors(result: Any) -> bool:
    if not isinstance(result, dict):
        return False
    if result.get("error") == NO_POINTS:
        return False  # nothing to retry: the prompt itself has nothing to score
    if result.get("error"):
        return True
    return any(isinstance(pa, dict) and pa.get("error") for pa in result.get("pointAssessments") or [])


def run_weval(plan: WevalPlan, options: RunOptions) -> AsyncIterator[Event]:
    """Run a blueprint plan; yields RunStarted, then per-cell events, then RunFinished."""
    return RunSkeleton(WevalRun(plan, options)).events()


def _replay_suffix(plan: WevalPlan) -> str:
    """A replay keeps the run label (the same blueprint and models: the dashboard groups it with the
    original) but gets its own journal, so the original run's journal, often the replay's very source,
    is neither set aside nor mixed with the replay on --resume."""
    if plan.replay is None:
        return ""
    import hashlib

    return ".replay-" + hashlib.sha256(str(plan.replay.path.resolve()).encode()).hexdigest()[:8]
