"""An AgentV suite's run: its stages, declared for the pipeline (pipeline.py), and their functions.

    before the cells   batches        batch mode: each test's first attempt through its target's batch
                                      API (generate/batch_stage.py), then the calls the cells name as
                                      they run, in rounds (generate/batch_rounds.py)
    each cell          batch_round    the cell takes part in batch mode's rounds (not in a workspace)
                       resumed        a cell the run database has whole: the same events and row
                       halted         execution.fail_on_error stopped the run: the cell fails
                       admitted       a cost cap's admission (pipeline.py)
                       workspace      the test's workspace, held while it runs (workspace/lifecycle.py)
                       each attempt   (`execution.trials`, scoring/trials.py; once without)
                           generate   the target's answer (generate/answers.py) and what it measured
                           assertions each assertion by the stage that scores it: deterministic ones
                                      (score/agentv_entries.py), `rubrics`, `llm-judge` and `agent-judge`
                                      (score/judges.py), `code-judge` and custom types as the user's
                                      scripts (score/scripts.py), `composite` children the same way,
                                      aggregated (scoring/composite.py)
                           attempt    the attempt's row; whether the trials stop
                       trials         the attempts combined into the cell's row
                       write          the row into the run database (write/agentv.py), a Scored event
    after the cells    workspaces     the workspaces closed
    at the end         write          `<runLabel>_<start time>.jsonl` from the database, a row per (test, target)

An assertion that cannot be scored (a type the registry does not mark runnable, a custom type, no judge,
a judge that failed, our own crash) is listed in the row as "not scored: <reason>" with no score, and
never counts as a pass: the test is then "not scored" (score None) unless a scored gate fails it
(scoring/agentv_aggregate.outcome_of). With `-m replay:<results file>` the answers come from an earlier
run (plan/replay.py): no target is called, a recorded execution error fails its cell again with the same
message, and the assertions are scored as above.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Container, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agentv.model import Assertion
from ..pricing import PriceTable
from ..providers.base import ProviderError
from ..providers.tool_calls import output_messages
from ..registry.stages import Stage
from ..scoring.agentv_aggregate import (
    NOT_SCORED,
    execution_status,
    negated,
    outcome_of,
)
from ..scoring.agentv_assertions import RunMetrics
from ..scoring.composite import (
    DEFAULT_THRESHOLD,
    Child,
    CompositeScore,
    aggregator_kind,
    weighted_average,
)
from ..scoring.composite import threshold as composite_threshold
from ..scoring.trials import Attempt, TrialSettings, combine, stop_reason
from .cost.guard import NOT_RUN, CostGuard
from .events import Cell, CellFailed, Event, ModelSummary, Notice, Response, RunSummary, Scored
from .generate.answers import AgentvGenerate, ReplayedFailure, provider_kind
from .generate.batch_rounds import BatchRounds
from .journal.records import CellScore, RunHeader
from .journal.run_store import run_header
from .options import RunOptions
from .pipeline import (
    DONE,
    NEXT_ATTEMPT,
    Around,
    CellWork,
    Flow,
    Format,
    Pipeline,
    Repeat,
    Stages,
    admitted,
    capped,
)
from .plan.agentv import AgentvPlan, AgentvTask, AgentvTasks
from .score.agentv_entries import deterministic, entry, skipped
from .score.agentv_judges import AgentvJudges
from .score.agentv_scorable import reads_workspace, stage_of, unscorable
from .score.code_judge import DEFAULT_CONCURRENCY as CODE_JUDGE_CONCURRENCY
from .score.scripts import AgentvScripts
from .split import Handed
from .workspace.lifecycle import WorkspaceError, Workspaces, WorkspaceSpec, parse_workspace, workspace_changes
from .write import agentv_outcomes as cell_outcomes
from .write.agentv import AgentvWriter, results_name
from .write.agentv_measured import Measured
from .write.agentv_outcomes import CellOutcomes
from .write.files import iso_timestamp, now_utc

ATTEMPT_STRIDE = 10_000  # database key of a trial's judgement: attempt × stride + assertion index
NOTES_SHOWN = 10  # not-scored cells named in the run summary; the rest are counted
MAX_BATCH_WORKERS = 10_000  # tests run at once in batch mode: a round holds up to this many tests' calls
AGGREGATOR_SLOT = 999  # a composite's llm-judge aggregator call, next to its children's
CHILD_BASE = 10**9  # composite children's database indexes live above every test-level index
TARGET_REPORTED = frozenset({"mock", "cli"})  # targets whose cost is what they report (AgentV), not a price


@dataclass(eq=False)
class AgentvCell(CellWork[AgentvTask]):
    """A cell (test × target) in flight: what each stage hands the next."""

    started: Any = None  # when the cell started (its first attempt's timestamp)
    folder: Path | None = None  # its workspace
    problems: list[str] = field(default_factory=list)  # what releasing the workspace reported
    began: Any = None  # when this attempt started
    answer: str = ""
    usage: tuple[int, int] | None = None  # what the target reported
    latency: float = 0.0
    measured: Measured | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)  # each attempt's row
    attempts: list[Attempt] = field(default_factory=list)
    stopped: str | None = None  # why the trials stopped early
    items: list[dict[str, Any]] = field(default_factory=list)  # this attempt's assertions' entries
    row: dict[str, Any] = field(default_factory=dict)  # the cell's row


# --- each cell's stages ------------------------------------------------------------------------------

class batch_round:
    """Batch mode: the cell takes part in the rounds of calls until it ends (not a test with a workspace,
    whose calls are made one by one while the workspace is held). A class, as pipeline.admitted: every
    cell enters it."""

    __slots__ = ("cell", "rounds")

    def __init__(self, run: Agentv, work: AgentvCell) -> None:
        self.cell = work.task.cell
        self.rounds = run.rounds if run.rounds is not None and not run.has_workspace(work.task) else None

    async def __aenter__(self) -> Flow | None:
        if self.rounds is not None:
            self.rounds.enter(self.cell)
        return None

    async def __aexit__(self, *exc: object) -> None:
        if self.rounds is not None:
            self.rounds.leave(self.cell)


def resumed(run: Agentv, work: AgentvCell) -> Flow | None:
    """A cell the database has whole (unless --retry-errors and it has an error): its row again."""
    task = work.task
    cell = task.cell
    done = run.state.scores.get(cell)
    if done is None:
        return None
    row = dict(run.state.result(done))  # (read back from the database for a resumed run)
    if run.options.retry_errors and row.get("error"):
        return None
    run.resumed_cells += 1
    run.writer.resumed(task.position)  # the row the database has is the one exported
    if run.ended(task.position, row, done.score, done.verdict):
        run.emit(CellFailed(cell, str(row.get("error")), "error", resumed=True))
        return DONE
    run.emit(Response(cell, str(row.get("answer") or ""), resumed=True))
    run.emit(Scored(cell, done.score, done.verdict, row, resumed=True))
    return DONE


def halted(run: Agentv, work: AgentvCell) -> Flow | None:
    work.started = now_utc()
    if run.halt is not None:  # fail_on_error stopped the run
        run.fail(work.task, run.halt, "skipped", work.started)
        return DONE
    return None


class workspace:
    """The test's workspace, acquired before its first attempt and released after its last; the cell
    fails when it cannot be had. (A class, as batch_round; a suite without workspaces passes through.)"""

    __slots__ = ("folder", "run", "spec", "work")

    def __init__(self, run: Agentv, work: AgentvCell) -> None:
        self.run, self.work = run, work
        self.spec: WorkspaceSpec | None = None
        self.folder: Path | None = None

    async def __aenter__(self) -> Flow | None:
        run, work = self.run, self.work
        task = work.task
        try:
            spec = run.workspace_spec(task)
            folder = await run.workspaces.acquire(spec, task.test.id) if spec is not None else None
        except WorkspaceError as exc:
            run.fail(task, f"workspace: {exc}", "workspace", work.started)
            return DONE
        self.spec, self.folder = spec, folder
        work.folder = folder
        return None

    async def __aexit__(self, *exc: object) -> None:
        if self.spec is not None and self.folder is not None:
            self.work.problems = await self.run.workspaces.release(self.spec, self.folder, self.work.task.test.id)


async def generate(run: Agentv, work: AgentvCell) -> Flow | None:
    """The attempt's answer and what the target reported; a failed call fails the cell, or (trials) is
    the attempt's row while another attempt may still answer."""
    task, k, settings = work.task, work.attempt, run.trials
    cell = task.cell
    work.began = began = work.started if k == 0 else now_utc()
    try:
        answer, usage, latency, cached, model, calls, reported_cost = await run.answers.answer(task, k, work.folder)
    except (ProviderError, ReplayedFailure) as err:
        message = err.message if isinstance(err, ProviderError) else str(err)
        kind = err.kind if isinstance(err, ProviderError) else "replay"
        # Every attempt failed (the rows so far hold only errors): the cell is an error, not a test
        # "not scored" (a check not made is never a pass, and the table counts it as an error).
        if not settings.repeated or (k == settings.count - 1 and all(r.get("error") for r in work.rows)):
            run.fail(task, message, kind, work.started)
            return DONE
        work.rows.append(run.row(task, began, "", (0, 0), 0.0, [], error=message))
        work.attempts.append(Attempt(None, None, None, message))
        return NEXT_ATTEMPT
    run.emit(Response(cell, answer, usage or (0, 0), cached, latency, replayed=run.plan.replay is not None))
    # AgentV reads usage, duration and cost from what the target reports: a mock reports none, a
    # cli target what its output says (its duration else the command's time), a chat API its usage
    # alone (evalspec prices it from the price table).
    target_kind = provider_kind(task.target)
    reports = target_kind in TARGET_REPORTED
    cost = reported_cost if reports else run.answers.cost(task, model, usage)
    work.answer, work.usage, work.latency = answer, usage, latency
    work.measured = Measured(answer=answer, usage=usage, duration_ms=latency if target_kind == "cli" else None,
                             model=model, cost_usd=cost, priced=not reports,
                             trace=[c.to_json() for c in calls], calls=calls,
                             output_messages=output_messages(answer, calls),
                             workspace=str(work.folder) if work.folder is not None else None,
                             file_changes=None if work.folder is None else await run.file_changes(task, work.folder),
                             started=began, ended=now_utc())
    return None


def assertions(run: Agentv, work: AgentvCell) -> Awaitable[Flow | None] | None:
    """The attempt's assertions scored: at once when every one is (most tests: deterministic checks, no
    coroutine made), else a coroutine that awaits those that wait (judges, scripts)."""
    measured = work.measured
    assert measured is not None
    if work.task.test.uses_default_judge:
        return _judged_entries(run, work, measured)
    entries, waiting = run.entries(work.task, work.answer, measured.metrics(), measured, attempt=work.attempt)
    if waiting is None:
        work.items = entries  # type: ignore[assignment]  # (no entry waits: none is None)
        return None
    return _awaited_entries(run, work, entries, waiting)


async def _judged_entries(run: Agentv, work: AgentvCell, measured: Measured) -> Flow | None:
    work.items = await run.assertions(work.task, work.answer, measured.metrics(), measured, attempt=work.attempt)
    return None


async def _awaited_entries(run: Agentv, work: AgentvCell, entries: list[dict[str, Any] | None],
                           waiting: list[tuple[int, Coroutine[Any, Any, dict[str, Any]]]]) -> Flow | None:
    work.items = await run.awaited_entries(work.task, entries, waiting)
    return None


def attempt(run: Agentv, work: AgentvCell) -> Flow | None:
    """The attempt's row, and whether the trials stop here."""
    measured = work.measured
    assert measured is not None
    row = run.row(work.task, work.began, work.answer, work.usage, work.latency, work.items,
                  cost_usd=measured.cost_usd)
    if measured.calls:
        row["output"] = measured.output_messages  # the trace, as AgentV's `output` messages
    work.rows.append(row)
    work.attempts.append(Attempt(row["score"], row.get("verdict"), measured.cost_usd, reported=not measured.priced))
    work.stopped = stop_reason(run.trials, work.attempts)
    return None


def trials(run: Agentv, work: AgentvCell) -> Flow | None:
    settings = run.trials
    if not settings.repeated:
        work.row = work.rows[0]
    else:
        work.row = _with_trials(work.rows, combine(settings, work.attempts, work.stopped or "error",
                                                   [str(r["execution_status"]) for r in work.rows]))
    return None


def write(run: Agentv, work: AgentvCell) -> Flow | None:
    task, row = work.task, work.row
    cell = task.cell
    if work.problems:
        row["workspace_errors"] = work.problems
        for problem in work.problems:
            run.emit(Notice(f"{cell}: {problem}", "warning"))
    score = row["score"]
    judged = run.cost.spend.take_judge_usage(cell)
    if judged is not None:  # the judges' calls, apart from the target's token_usage and cost_usd
        row["judge_target"] = task.judge.name if task.judge is not None else None
        row["judge_token_usage"] = {"input": judged["input"], "output": judged["output"], "calls": judged["calls"]}
        row["judge_cost_usd"] = judged["cost_usd"]
    run.keep(task, row, score=score, verdict=row.get("verdict"))
    run.outcomes.scored(task.position, score, row.get("verdict"))
    run.emit(Scored(cell, score, row.get("verdict"), row))
    return None


def _batch_rounds(run: Agentv) -> bool:
    return run.rounds is not None  # (set by the batches stage, before the cells)


def _has_workspaces(run: Agentv) -> bool:
    return run._any_workspace


def _attempts(run: Agentv, work: AgentvCell) -> int:
    return run.trials.count


def _trials_stop(run: Agentv, work: AgentvCell) -> bool:
    return work.stopped is not None


# --- before and after the cells ----------------------------------------------------------------------

async def batches(run: Agentv) -> AsyncIterator[Event]:
    """Batch mode: the first attempt of every test whose target batches, through its batch API, before
    the tests run (run/generate/batch_stage.py); what a batch does not answer is asked as usual. Then the
    calls the cells name as they run (judges, later trials) go out in rounds (run/generate/batch_rounds.py)."""
    from .generate.batch_journal import journaled_batches

    journal_path = run.journal_path
    journaled = journaled_batches(journal_path, run.options.resume)
    if not run.batching(journaled):
        return
    # batch mode only: the batch stage's modules are ~10 ms of imports an interactive run skips
    from .generate.batch_stage import BatchStage

    journal = run.journal

    # Numbered in the parts' keys: 0 the first attempts (whether or not any is asked), then each round.
    rounds = itertools.count(1)
    taken: set[str] = set()  # the batches the run's stages know are theirs

    def stage(phase: int | None = None) -> BatchStage:
        return BatchStage(calls=run.calls, journal=journal, journal_path=journal_path, options=run.options,
                          journaled=journaled, phase=next(rounds) if phase is None else phase, taken=taken)

    if run.plan.replay is None:
        requests = run.answers.batch_requests(journaled, run.has_workspace, run.cost.refuses)
        if requests:
            batch = run.answers.batch = stage(0)
            async for event in batch.run(requests):
                yield event
    run.rounds = run.answers.rounds = run.judges.rounds = BatchRounds(stage, run.emit, journaled)
    for note in run.interactive_in_batch_mode():
        yield Notice(note, "warning")


async def workspaces(run: Agentv) -> AsyncIterator[Event]:
    for problem in await run.workspaces.close():
        yield Notice(problem, "warning")


class Agentv(Format[AgentvPlan, AgentvCell]):
    """A suite's stages and what they share across the run."""

    stages = Stages(
        before=(batches,),
        cell=(Around(batch_round, (
            resumed, halted,
            Around(admitted, (
                Around(workspace, (Repeat((generate, assertions, attempt), _attempts, _trials_stop),),
                       _has_workspaces),
                trials, write), capped),
        ), _batch_rounds),),
        after=(workspaces,),
    )

    @classmethod
    def run_options(cls, plan: Any, options: RunOptions) -> RunOptions:
        execution = plan.suite.execution or {}
        if execution.get("cache") is True and options.cache is None:
            return dataclasses.replace(options, cache=True)  # the suite asks for it; --no-cache wins
        return options

    @classmethod
    def cost_guard(cls, plan: Any, options: RunOptions) -> CostGuard:
        budget = (plan.suite.execution or {}).get("total_budget_usd")
        return CostGuard(plan, options, plan.prices or PriceTable.load(None, {}),
                         suite_budget=float(budget) if isinstance(budget, int | float)
                         and not isinstance(budget, bool) and budget > 0 else None)  # else AgentV ignores it

    def __init__(self, pipeline: Pipeline) -> None:
        super().__init__(pipeline)
        plan = self.plan
        self.outcomes = CellOutcomes(len(plan.tasks))  # how each cell ended, by its place in the plan
        self.trials = TrialSettings.of(plan.suite.trials)
        self.workspaces = Workspaces(plan.path, self.options.env)
        self._workspace_specs: dict[Any, WorkspaceSpec | None] = {}
        self.fail_on_error = (plan.suite.execution or {}).get("fail_on_error") is True
        self.halt: str | None = None  # why the cells not started yet will not run (fail_on_error)
        self._any_workspace = plan.facts().any_workspace
        # The stages' parts, made once the database is open (opened()): they read what an earlier run has.
        self.writer: AgentvWriter
        self.answers: AgentvGenerate
        self.judges: AgentvJudges
        self.scripts: AgentvScripts
        self.rounds: BatchRounds | None = None  # batch mode: the calls cells name as they run (generate/batch_rounds.py)
        self._adopting: dict[Cell, CellScore] = {}  # rows another process sent, until their cells are finished

    @property
    def tasks(self) -> AgentvTasks:
        return self.plan.tasks

    # --- the pipeline's hooks (pipeline.py) ---------------------------------------------------------
    def header(self) -> RunHeader:
        # The results file's name carries the run's start time; a resumed run takes over the file of
        # the run it finishes (the header names it), see opened().
        self._results_name = results_name(self.plan.results_base, now_utc())
        # The tests whose targets' order is their own (merge.py orders a shard's rows by it)
        orders = self.plan.tasks.target_orders([t.name for t in self.plan.targets])
        return RunHeader(kind="agentv", file=str(self.plan.path), run_label=self.plan.run_label,
                         started=iso_timestamp(now_utc()), results=self._results_name,
                         extra={"target_order": orders} if orders else {}, **run_header(self.plan, self.options))

    def opened(self) -> None:
        self.cost.attach(self.journal, self.state.usage)
        recorded = self.state.header.results if self.state.header is not None else None
        self.writer = AgentvWriter(self.folder / Path(recorded or self._results_name).name, self.plan.tasks,
                                   self.journal)
        script_limit = asyncio.Semaphore(CODE_JUDGE_CONCURRENCY)  # code judges and prompt scripts at once
        self.answers = AgentvGenerate(self.plan, self.options, self.calls, self.state, self.journal)
        self.judges = AgentvJudges(self.plan, self.options, self.calls, self.state, self.journal, self.answers,
                                   script_limit)
        self.scripts = AgentvScripts(self.plan, self.options, self.judges, script_limit)

    def resumed_count(self) -> int:
        scores = self.state.scores
        if not scores:
            return 0
        return sum(1 for cell in self.plan.tasks.cells() if cell in scores)

    def work(self, task: AgentvTask) -> AgentvCell:
        return AgentvCell(task)

    def not_run(self, work: AgentvCell, why: str) -> None:
        """A cell a cost cap kept from starting: a row that is not scored (never a pass) with the reason;
        not recorded as the cell's score, so --resume with a higher cap runs it, but as a `not_run` row
        (the merge of shards reads it: merge.py)."""
        task = work.task
        self.outcomes.failed(task.position, not_run=True)
        row = self.row(task, work.started, "", (0, 0), 0.0, [], error=why)
        row.update({"score": None, "verdict": NOT_SCORED})
        self.keep(task, row, not_run=why)
        self.emit(CellFailed(task.cell, why, NOT_RUN))

    def workers(self, default: int) -> int:
        """Batch mode: every test at once (up to MAX_BATCH_WORKERS), so that a round of judge calls or
        trials holds all of them, not a worker pool's share. Not when a test has a workspace (every
        folder would be set up at once) or a cost cap reserves each started test's estimate: their
        rounds hold the pool's share."""
        if self.rounds is None or self._any_workspace or self.cost.budget.active:
            return default
        return max(default, min(len(self.plan.tasks), MAX_BATCH_WORKERS))

    def write(self) -> list[Path]:
        files = self.writer.write(cost=self.cost.summary())
        if self.plan.shard is not None:  # a shard's manifest says it finished (plan/shard.py)
            from .plan.shard import write_manifest

            write_manifest(self.plan, files[0], timestamp=files[0].stem.rpartition("_")[2],
                           models=[t.name for t in self.plan.targets])
        return files

    async def stop(self) -> None:
        if self.rounds is not None:
            await self.rounds.close()
        with contextlib.suppress(Exception):
            await asyncio.shield(self.workspaces.close())  # an interrupted run leaves no folder behind
        self.writer.close()

    def write_partial(self) -> None:
        self.writer.write_partial(cost=self.cost.summary())

    # --- cells another process ran (split.py) -------------------------------------------------------
    def unsplit(self) -> str | None:
        if self.rounds is not None:
            return "batch mode"
        if self._any_workspace:
            return "a test with a workspace"
        if self.fail_on_error:
            return "execution.fail_on_error stops every process's cells at the first failure"
        return None

    def forked(self) -> None:
        self.writer.packs = False

    def adopted(self, records: list[Any]) -> list[Any]:
        kept: list[Any] = []
        rows = self._adopting
        for r in records:
            kind = type(r)
            if kind is Handed:
                kept.extend(self._adopt(r.position, rows.pop(self.tasks.cell_at(r.position), None)))
            elif kind is CellScore:
                rows[r.cell] = r  # packed once its cell is finished (its Handed: the position)
            else:
                kept.append(r)
        return kept

    def _adopt(self, position: int, done: CellScore | None) -> list[Any]:
        out: list[Any] = []
        if done is not None:
            out = self.writer.adopt(position, done)
            row = done.result
        else:  # a cell the database had whole: as `resumed`
            done = self.state.scores[self.tasks.cell_at(position)]
            row = self.state.result(done)
            self.writer.resumed(position)
        self.ended(position, row, done.score, done.verdict)
        return out

    # --- what the stages share ----------------------------------------------------------------------
    def batching(self, journaled: Container[Any]) -> bool:
        """Batch mode for some call of the run: --batch, --batch-model, `batch: true` on a target or
        judge, or batches an earlier run of the database left."""
        if self.options.batch or self.options.batch_models or journaled:
            return True
        specs = [*self.plan.targets, *self.plan.tasks.judges()]
        return any(s.config is not None and s.config.get("batch") is True for s in specs)

    def has_workspace(self, task: AgentvTask) -> bool:
        try:
            return self.workspace_spec(task) is not None
        except WorkspaceError:
            return True  # the cell fails when it runs; nothing of it is batched

    def interactive_in_batch_mode(self) -> list[str]:
        """What batch mode leaves to interactive calls, said before the cells run (never silently)."""
        agent = proxy = workspace = 0
        judges: dict[str, None] = {}
        for task in self.plan.tasks:
            if task.cell in self.state.scores:
                continue
            types = list(_assertion_types(task.test.assertions))
            judged = task.test.uses_default_judge or any(stage_of(a).judged for _, a in types)
            agent += sum(1 for _, a in types if stage_of(a) is Stage.AGENT_JUDGE)
            proxy += sum(1 for _, a in types if stage_of(a) is Stage.SCRIPT and a.config.get("target"))
            if self.has_workspace(task) and (judged or self.trials.repeated):
                workspace += 1
            elif task.judge is not None and judged and not self.answers.wants_batch(task.judge):
                judges[task.judge.name] = None
        out = []
        if agent:
            out.append(f"batch mode: {agent:,} agent-judge assertion(s) call their judge one by one (a tool loop "
                       "cannot be batched)")
        if proxy:
            out.append(f"batch mode: {proxy:,} code judge(s) calling a target through the proxy call it one by one")
        if workspace:
            out.append(f"batch mode: {workspace:,} test(s) with a workspace call their judges and later trials one "
                       "by one (the workspace is held meanwhile)")
        if judges:
            out.append(f"batch mode: judge target(s) {', '.join(judges)} cannot be batched (not an OpenAI, "
                       "Anthropic or Gemini chat target, or not asked to batch): their calls are made one by one")
        return out


    async def file_changes(self, task: AgentvTask, folder: Path | None) -> str | None:
        """The diff of the test's workspace against its template and repositories, once the agent has
        answered."""
        if folder is None or not _reads_changes(task.test.assertions):
            return None  # walking both trees is only worth it for a judge that reads the diff
        return await workspace_changes(self.workspace_spec(task), folder, self.options.env)

    def workspace_spec(self, task: AgentvTask) -> WorkspaceSpec | None:
        """The test's workspace (its own, else the suite's; a target's workspace_template is refused).
        Raises WorkspaceError for one that cannot be used."""
        if not self._any_workspace:
            return None
        test = task.test
        raw: Any = test.workspace if test.workspace is not None else self.plan.suite.workspace
        key: Any = ("test", test.id) if test.workspace is not None else "suite"
        base = (test.source_path or self.plan.path).parent if test.workspace is not None else self.plan.path.parent
        if raw is None:
            return None
        if key not in self._workspace_specs:
            self._workspace_specs[key] = parse_workspace(raw, base, self._inside_project, root=self.plan.inside)
        return self._workspace_specs[key]

    @property
    def _inside_project(self) -> Callable[[Path], bool] | None:
        """Whether a path is inside the eval file's project; None with --allow-outside-files."""
        if self.options.allow_outside_files:
            return None
        from ..agentv.files import FileSystem

        fs, folder = FileSystem(), self.plan.path.parent
        return lambda path: not fs.outside(path, folder)

    def keep(self, task: AgentvTask, row: dict[str, Any], *, score: float | None = None, verdict: str | None = None,
             not_run: str | None = None) -> None:
        """The cell's row into the run database (the results file is exported from it), with its score
        (`not_run`: why a cost cap kept it from starting); whether the summary names it."""
        self.journal.write(*self.writer.record(task.position, task.cell, row, score=score, verdict=verdict,
                                               not_run=not_run))
        self.noted(task, row)

    def ended(self, position: int, row: dict[str, Any], score: float | None, verdict: str | None) -> bool:
        """Cell `position`, whose row the database has, into the summary's outcomes; True when its target
        failed (an execution error)."""
        self.outcomes.noted(position, bool(row.get("not_scored")) and row.get("execution_status") != "execution_error")
        if row.get("execution_status") == "execution_error":
            self.outcomes.failed(position)
            return True
        self.outcomes.scored(position, score, verdict)
        return False

    def noted(self, task: AgentvTask, row: dict[str, Any]) -> None:
        """Whether the summary names the cell (checks not scored, not an execution error)."""
        self.outcomes.noted(task.position, bool(row.get("not_scored"))
                            and row.get("execution_status") != "execution_error")

    def fail(self, task: AgentvTask, message: str, kind: str, started: Any) -> None:
        cell = task.cell
        self.outcomes.failed(task.position)
        if self.fail_on_error and self.halt is None and kind != "skipped":
            self.halt = f"not run: execution.fail_on_error stopped the run after {cell} failed ({message})"
        row = self.row(task, started, "", (0, 0), 0.0, [], error=message)
        self.keep(task, row)
        self.emit(CellFailed(cell, message, kind))


    # --- assertions -------------------------------------------------------------------------------
    async def assertions(self, task: AgentvTask, answer: str, metrics: RunMetrics,
                          measured: Measured | None = None, *, attempt: int = 0) -> list[dict[str, Any]]:
        test = task.test
        if test.uses_default_judge:
            # AgentV grades a test without assertions with its default LLM judge, against `criteria`.
            default = Assertion(type="llm-judge", name="llm-judge", span=test.span)
            return [await self.judges.judged(task, ATTEMPT_STRIDE * attempt, default, answer)]
        entries, waiting = self.entries(task, answer, metrics, measured, attempt=attempt)
        if waiting is None:
            return entries  # type: ignore[return-value]  # (no entry waits: none is None)
        return await self.awaited_entries(task, entries, waiting)

    def entries(self, task: AgentvTask, answer: str, metrics: RunMetrics, measured: Measured | None = None, *,
                attempt: int = 0) -> tuple[list[dict[str, Any] | None],
                                           list[tuple[int, Coroutine[Any, Any, dict[str, Any]]]] | None]:
        """The assertions' entries scored at once, None in the places of those that wait, and the
        coroutines of those (by place; None when none waits: no coroutine made). Not for a test graded by
        the default judge (`assertions` asks it)."""
        test = task.test
        measured = measured or Measured(answer=answer)
        base = ATTEMPT_STRIDE * attempt
        entries: list[dict[str, Any] | None] = []
        waiting: list[tuple[int, Coroutine[Any, Any, dict[str, Any]]]] = []
        expected: list[tuple[str, Any]] | None = None
        for i, a in enumerate(test.assertions):
            kind = a.registered
            if kind is not None and kind.at_once:
                # scored here and now: a pure function of the answer and the measurements (most
                # assertions), no coroutine to make and await
                if expected is None:
                    expected = [(m.role, m.content) for m in test.expected_messages]
                entries.append(deterministic(a, answer, metrics, expected))
            else:
                waiting.append((len(entries), self.assertion(task, base + i, a, answer, metrics, measured)))
                entries.append(None)
        return entries, waiting or None

    async def awaited_entries(self, task: AgentvTask, entries: list[dict[str, Any] | None],
                              waiting: list[tuple[int, Coroutine[Any, Any, dict[str, Any]]]]) -> list[dict[str, Any]]:
        """`entries` with the places of `waiting` filled by what each coroutine returns (`each`)."""
        for (k, _), got in zip(waiting, await self.each(task, [c for _, c in waiting]), strict=True):
            entries[k] = got
        return entries  # type: ignore[return-value]  # (every None replaced)

    async def each(self, task: AgentvTask, scoring: list[Coroutine[Any, Any, dict[str, Any]]]
                    ) -> list[dict[str, Any]]:
        """The entries in order. In batch mode side by side, so that a test's judge calls share a round
        (the same entries: each is scored on its own); otherwise one after the other, as AgentV does."""
        if self.rounds is not None and self.rounds.takes_part(task.cell):
            return list(await asyncio.gather(*scoring))
        return [await c for c in scoring]

    async def assertion(self, task: AgentvTask, index: int, a: Assertion, answer: str, metrics: RunMetrics,
                      measured: Measured) -> dict[str, Any]:
        """One assertion's result entry. `index` keys its judge calls in the database (a composite's
        children get indexes of their own, see _composite)."""
        why = unscorable(a, judge=task.judge is not None)
        if why is not None:
            return skipped(a, f"not scored: {why}")
        stage = stage_of(a)  # the registry entry's (a custom type: its script)
        if stage is Stage.JUDGE:
            return await self.judges.judged(task, index, a, answer)
        if stage is Stage.AGENT_JUDGE:
            return await self.judges.agent_judged(task, index, a, answer, measured)
        if stage is Stage.SCRIPT:
            return await self.scripts.executed(task, a, measured)
        if stage is Stage.GROUP:
            return await self.composite(task, index, a, answer, metrics, measured)
        return deterministic(a, answer, metrics, [(m.role, m.content) for m in task.test.expected_messages])

    async def composite(self, task: AgentvTask, index: int, a: Assertion, answer: str, metrics: RunMetrics,
                         measured: Measured) -> dict[str, Any]:
        """A `composite`: every child scored as a test's assertion would be, then aggregated
        (scoring/composite.py); an llm-judge aggregator asks the judge, a code-judge one runs its script."""
        # AgentV scores a composite's children without their `negate` (only a test's assertions negate).
        entries = await self.each(task, [self.assertion(task, _child_index(index, j),
                                                       dataclasses.replace(child, negate=False) if child.negate
                                                       else child, answer, metrics, measured)
                                          for j, child in enumerate(a.children)])
        nested = [{k: v for k, v in e.items() if not k.startswith("_")} for e in entries]
        missing = next((e for e in entries if e["score"] is None), None)
        if missing is not None:
            reason = str(missing["reasoning"] or "").removeprefix("not scored: ")
            out = skipped(a, f"not scored: its child '{missing['name']}' was not scored: {reason}")
            out["scores"] = nested
            return out
        children = [Child(e["name"], e["type"], float(e["score"]), str(e["verdict"]), float(e["weight"]),
                          tuple(e["hits"]), tuple(e["misses"]), e.get("reasoning")) for e in entries]
        raw = a.config.get("aggregator")
        aggregator: dict[str, Any] = raw if isinstance(raw, dict) else {}
        kind = aggregator_kind(aggregator)
        if kind == "threshold":
            got: CompositeScore | str = composite_threshold(children, aggregator.get("threshold", DEFAULT_THRESHOLD))
        elif kind == "llm-judge":
            got = await self.judges.aggregate(task, _child_index(index, AGGREGATOR_SLOT), aggregator, children)
        elif kind == "code-judge":
            got = await self.scripts.aggregate(a, aggregator, children)
        else:
            got = weighted_average(children, aggregator.get("weights"))
        if isinstance(got, str):
            out = skipped(a, f"not scored: {got}")
            out["scores"] = nested
            return out
        score, result_verdict, hits, misses = got.score, got.verdict, list(got.hits), list(got.misses)
        reasoning = got.reasoning
        if a.negate:
            score, result_verdict, hits, misses, reasoning = negated(score, result_verdict, hits, misses, reasoning)
        out = entry(a, score, result_verdict, hits, misses, reasoning)
        if got.child_weights is not None:  # the weight each child counted with (AgentV's row)
            nested = [{**e, "weight": w} for e, w in zip(nested, got.child_weights, strict=True)]
        out["scores"] = nested
        return out

    # --- results ----------------------------------------------------------------------------------
    def row(self, task: AgentvTask, started: Any, answer: str, usage: tuple[int, int] | None, latency: float,
             items: list[dict[str, Any]], *, error: str | None = None, cost_usd: float | None = None
             ) -> dict[str, Any]:
        """One AgentV result row (AgentV's JSONL row, snake_case)."""
        test = task.test
        score: float | None
        row_verdict: str | None
        if error is not None:
            score, row_verdict = 0.0, "fail"
        elif items:
            outcome = outcome_of([(i["score"], i["weight"], i["_required"]) for i in items])
            score, row_verdict = outcome.score, outcome.verdict
        else:
            score, row_verdict = None, NOT_SCORED
        hits: list[Any] = []
        misses: list[Any] = []
        reasons: list[str] = []
        scores: list[dict[str, Any]] = []
        unscored: list[dict[str, Any]] = []
        for i in items:  # (one pass: a row a cell)
            hits.extend(i.get("hits", ()))
            misses.extend(i.get("misses", ()))
            if i.get("reasoning"):
                reasons.append(f"{i['name']}: {i['reasoning']}")
            scores.append({k: v for k, v in i.items() if k[:1] != "_"})
            if i["score"] is None:
                unscored.append({"name": i["name"], "type": i["type"], "required": bool(i["_required"]),
                                 "reason": str(i["reasoning"]).removeprefix("not scored: ")})
        status = execution_status(score, error)
        row: dict[str, Any] = {
            "timestamp": iso_timestamp(started),
            "test_id": test.id,
            "dataset": test.dataset or self.plan.dataset,
            "conversation_id": test.conversation_id,
            "score": score,
            "hits": hits,
            "misses": misses,
            "answer": answer,
            "target": task.target.name,
            "reasoning": "\n".join(reasons) if reasons else None,
            "token_usage": {"input": usage[0], "output": usage[1]} if usage is not None else None,
            "cost_usd": cost_usd,
            "duration_ms": round(latency, 1),
            "scores": scores,
            "error": error,
            "trials": None,
            "execution_status": status,
            "verdict": row_verdict,
        }
        if unscored:
            row["not_scored"] = unscored
        return row

    def summary(self, files: list[Path]) -> RunSummary:
        rows: list[ModelSummary] = []
        outcomes = self.outcomes
        # per target: cells, the scores (summed in the plan's order, as the list they were), verdicts,
        # cells not run, cells failed
        counts: dict[str, tuple[list[int], list[float], dict[str | None, int]]] = {
            t.name: ([0, 0, 0], [], {}) for t in self.plan.targets}
        for n, name in enumerate(self.plan.tasks.cell_targets()):  # no task made per cell
            cells, scored, verdicts = counts[name]
            kind = outcomes.kind(n)
            cells[0] += 1
            if kind == cell_outcomes.SCORED:
                score = outcomes.score(n)
                if score is not None:
                    scored.append(score)
                verdict = outcomes.verdict(n)
                verdicts[verdict] = verdicts.get(verdict, 0) + 1
            elif kind == cell_outcomes.NOT_RUN:
                cells[1] += 1
            elif kind == cell_outcomes.FAILED:
                cells[2] += 1
        for target in self.plan.targets:
            cells, scored, verdicts = counts[target.name]
            rows.append(ModelSummary(
                model=target.name, cells=cells[0], scored=len(scored),
                mean=sum(scored) / len(scored) if scored else None,
                passed=verdicts.get("pass", 0), borderline=verdicts.get("borderline", 0),
                failed=verdicts.get("fail", 0), not_scored=verdicts.get(NOT_SCORED, 0) + cells[1], errors=cells[2]))
        notes = self._not_scored_notes() + ((self.cost.stopped,) if self.cost.stopped else ())
        return RunSummary(kind="agentv", run_label=self.plan.run_label, models=tuple(rows),
                          files=tuple(str(f) for f in files), calls=self.calls.calls, cached=self.calls.cached,
                          resumed=self.resumed_cells, notes=notes, cost=self.cost.summary(), stopped=self.cost.stopped)

    def _not_scored_notes(self) -> tuple[str, ...]:
        """The cells whose verdict is "not scored" or that failed with unscored checks, each with the
        assertions that were not scored and why (the first NOTES_SHOWN; the rest counted)."""
        lines: list[str] = []
        more = 0  # past NOTES_SHOWN only counted (100,000 judged cells not scored made 100,000 lines)
        for n in range(len(self.plan.tasks)):  # a cell made only for a note
            if not self.outcomes.unscored(n):
                continue
            if len(lines) >= NOTES_SHOWN:
                more += 1
                continue
            row = self.writer.row(n)
            assert row is not None
            what = "; ".join(f"{u['name']} ({u['type']}{', required' if u['required'] else ''}): {u['reason']}"
                             for u in row["not_scored"])
            lines.append(f"{row.get('verdict')}: {self.plan.tasks.cell_at(n)}: not scored: {what}")
        if more:
            lines.append(f"… and {more} more cell(s) with checks not scored (the results file lists them)")
        return tuple(lines)



def _reads_changes(assertions: list[Assertion]) -> bool:
    return any(reads_workspace(a) for a in assertions)


def _with_trials(rows: list[dict[str, Any]], result: Any) -> dict[str, Any]:
    """The row of a repeated test: the chosen attempt's answer and scores, the combined score and
    verdict, and every attempt kept in `trials`."""
    row = dict(rows[result.chosen])
    row["score"] = result.score
    row["verdict"] = result.verdict if result.verdict is not None else NOT_SCORED
    row["trials"] = [{"attempt": k, "score": r["score"], "verdict": r.get("verdict"), "answer": r["answer"],
                      "scores": r["scores"], "cost_usd": r["cost_usd"], "duration_ms": r["duration_ms"],
                      "token_usage": r["token_usage"], "error": r["error"]} for k, r in enumerate(rows)]
    row["trials_summary"] = result.details
    row["cost_usd"] = result.details.get("cost_usd")
    row["error"] = None
    row["execution_status"] = result.execution_status
    return row


def _child_index(index: int, j: int) -> int:
    """The database index of a composite's child j < 1000 (or its aggregator). Injective: a test-level
    index p < CHILD_BASE (attempt × ATTEMPT_STRIDE + assertion) maps into [B, 1001·B), a child's
    into [1001·B, …), and so on down a nesting."""
    return CHILD_BASE + 1000 * index + min(j, 999)


def _assertion_types(assertions: list[Assertion]) -> Iterator[tuple[str, Assertion]]:
    """Every assertion's type, composite children and llm-judge aggregators included."""
    for a in assertions:
        yield a.type, a
        yield from _assertion_types(a.children)
