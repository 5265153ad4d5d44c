"""Running an AgentV suite: each test on each target, its assertions scored, as a stream of events.

Deterministic assertions come from scoring/agentv_assertions; `rubrics` and `llm-judge` ask the
target's judge (`judge_target`, or `--judge`); gates, weights and verdicts from scoring/agentv_aggregate.
An assertion that cannot be scored (a type the registry does not mark runnable, a custom type, no
judge, a judge that failed, our own crash) is listed in the row as "not scored: <reason>" with no
score, and never counts as a pass: the test is then "not scored" (score None) unless a scored gate or
a missed required rubric criterion fails it (agentv_aggregate.outcome_of).

With `-m replay:<results file>` the answers come from an earlier run (replay.py) instead of the targets:
no target is called, a recorded execution error fails its cell again with the same message, and the
assertions are scored as above (judges are still called, so judged assertions still need one).

Results: `<runLabel>_<start time>.jsonl`, one row per (test, target), written by write_agentv.py; the
run journal beside it is what --resume reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shlex
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agentv.model import Assertion
from ..pricing import PriceTable, call_cost
from ..providers.base import ChatMessage, ChatRequest, ProviderError, ToolCall
from ..providers.tool_calls import calls_from_json, output_messages
from ..scoring.agentv_aggregate import (
    NOT_SCORED,
    negate_result,
    outcome_of,
    score_checklist,
    score_ranges,
    verdict,
)
from ..scoring.agentv_assertions import NotSupported, RunMetrics, evaluate_assertion
from ..scoring.composite import (
    DEFAULT_THRESHOLD,
    Child,
    CompositeScore,
    aggregator_kind,
    aggregator_prompt,
    results_object,
    weighted_average,
)
from ..scoring.composite import threshold as composite_threshold
from ..scoring.trials import Attempt, TrialSettings, combine, stop_reason
from .agentv_judge import (
    FREEFORM_SYSTEM,
    JUDGE_MAX_TOKENS,
    JudgeReplyError,
    freeform_prompt,
    freeform_result,
    parse_json_reply,
    question_text,
    rubric_checks,
    rubric_prompt,
)
from .agentv_measured import Measured, unmeasured
from .agentv_messages import chat_messages
from .agentv_plan import AgentvPlan, AgentvTask, TargetSpec
from .agentv_scorable import NO_JUDGE, unscorable
from .calls import Calls, provider_key
from .code_judge import DEFAULT_CONCURRENCY as CODE_JUDGE_CONCURRENCY
from .code_judge import judge_answer, run_code_judge, shell_argv, timeout_of
from .cost_guard import NOT_RUN, CostGuard
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
from .files import iso_timestamp, now_utc
from .journal import Journal, JournalState, run_header
from .journal_records import CellScore, Generated, JudgeReply, RunHeader
from .options import RunOptions
from .skeleton import RunSkeleton
from .workspace_setup import WorkspaceError, Workspaces, WorkspaceSpec, parse_workspace, workspace_changes
from .write_agentv import AgentvWriter, results_name

if TYPE_CHECKING:
    from .batch_stage import BatchStage

EXECUTED = frozenset({"code-judge"})  # a user's script, run as a subprocess (code_judge.py)
JUDGED = frozenset({"rubrics", "llm-judge"})
_UNSET = object()
DEFAULT_AGENT_STEPS = 10
# Targets that are coding agents (agent-judge `target`): evalspec does not drive them.
CODING_AGENTS = frozenset({"codex", "codex-cli", "claude-code", "claude", "claude-cli", "claude-sdk", "copilot",
                           "copilot-cli", "copilot-sdk", "pi", "pi-cli", "pi-coding-agent", "vscode",
                           "vscode-insiders", "agentv"})
ATTEMPT_STRIDE = 10_000  # journal key of a trial's judgement: attempt × stride + assertion index
NOTES_SHOWN = 10  # not-scored cells named in the run summary; the rest are counted
FILE_LIMIT = 256 * 1024


class AgentvRun:
    def __init__(self, plan: AgentvPlan, options: RunOptions) -> None:
        self.plan = plan
        self.options = options
        self.folder = options.output.joinpath(*plan.output_folder_parts)
        self.journal_path = self.folder / f"{plan.results_base}.journal.jsonl"
        self.state = JournalState()
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self.emit = self.queue.put_nowait
        self.calls = Calls(options, self.emit, concurrency=plan.concurrency)
        self.journal: Journal | None = None
        self.scores: dict[Cell, tuple[float | None, str | None]] = {}
        self.failed: set[Cell] = set()
        self.not_run: set[Cell] = set()  # cells a cost cap kept from starting (also in `failed`)
        self.resumed_cells = 0
        self.batch: BatchStage | None = None  # batch mode: the answers the provider batches gave
        self._judge_limit: asyncio.Semaphore | None = None  # code judges at once (created on the run's loop)
        execution = plan.suite.execution or {}
        if execution.get("cache") is True and options.cache is None:
            options = self.options = dataclasses.replace(options, cache=True)  # the suite asks for it; --no-cache wins
            self.calls = Calls(options, self.emit, concurrency=plan.concurrency)
        self.trials = TrialSettings.of(plan.suite.trials)
        self.workspaces = Workspaces(plan.path, options.env)
        self._workspace_specs: dict[Any, WorkspaceSpec | None] = {}
        self.fail_on_error = execution.get("fail_on_error") is True
        budget = execution.get("total_budget_usd")
        self.cost = CostGuard(plan, options, plan.prices or PriceTable.load(None, {}),
                              suite_budget=float(budget) if isinstance(budget, int | float)
                              and not isinstance(budget, bool) else None)
        self.calls.spend = self.cost.spend
        self._halt: str | None = None  # why the cells not started yet will not run (fail_on_error)
        self._prices: dict[tuple[str | None, str], Any] = {}
        execution_ws = plan.suite.workspace is not None or any(t.workspace is not None for t in plan.tests) or any(
            t.config is not None and t.config.get("workspace_template") for t in plan.targets)
        self._any_workspace = bool(execution_ws)

    # --- the skeleton's steps (skeleton.py) ------------------------------------------------------
    def header(self) -> RunHeader:
        # The results file's name carries the run's start time; a resumed run takes over the file of
        # the run it finishes (the header names it), see opened().
        self._results_name = results_name(self.plan.results_base, now_utc())
        return RunHeader(kind="agentv", file=str(self.plan.path), run_label=self.plan.run_label,
                         started=iso_timestamp(now_utc()), results=self._results_name,
                         **run_header(self.plan, self.options))

    def check(self) -> list[Event]:
        cap_warning = self.cost.check()  # raises PlanError when --max-cost cannot be held
        return [Notice(cap_warning, "warning")] if cap_warning else []

    def opened(self) -> None:
        assert self.journal is not None
        self.cost.attach(self.journal, self.state.usage)
        recorded = self.state.header.results if self.state.header is not None else None
        self.writer = AgentvWriter(self.folder / Path(recorded or self._results_name).name)

    def resumed_count(self) -> int:
        return sum(1 for t in self.plan.tasks if t.cell in self.state.scores)

    def prepare(self) -> Iterator[Event]:
        return iter(())

    async def before_cells(self) -> AsyncIterator[Event]:
        if self.plan.replay is None:
            async for event in self._batch_phase():
                yield event

    async def after_cells(self) -> AsyncIterator[Event]:
        for problem in await self.workspaces.close():
            yield Notice(problem, "warning")

    def write(self) -> list[Path]:
        files = self.writer.write((t.cell for t in self.plan.tasks), cost=self.cost.summary())
        if self.plan.shard is not None:  # a shard's manifest says it finished (shard.py)
            from .shard import write_manifest

            write_manifest(self.plan, files[0], timestamp=files[0].stem.rpartition("_")[2])
        return files

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.shield(self.workspaces.close())  # an interrupted run leaves no folder behind
        self.writer.close()

    def write_partial(self) -> None:
        self.writer.write_partial((t.cell for t in self.plan.tasks), cost=self.cost.summary())

    # --- one cell ---------------------------------------------------------------------------------
    async def cell(self, task: AgentvTask) -> None:
        await self._run_cell(task)
        self.writer.append(task.cell)

    async def _run_cell(self, task: AgentvTask) -> None:
        cell = task.cell
        done = self.state.scores.get(cell)
        if done is not None and not (self.options.retry_errors and done.result.get("error")):
            self.resumed_cells += 1
            row = dict(done.result)
            self.writer.keep(cell, row)
            if row.get("execution_status") == "execution_error":
                self.failed.add(cell)
                self.emit(CellFailed(cell, str(row.get("error")), "error", resumed=True))
                return
            self.scores[cell] = (done.score, done.verdict)
            self.emit(Response(cell, str(row.get("answer") or ""), resumed=True))
            self.emit(Scored(cell, done.score, done.verdict, row, resumed=True))
            return
        started = now_utc()
        if self._halt is not None:  # fail_on_error stopped the run
            self._fail(task, self._halt, "skipped", started)
            return
        why = self.cost.admit(task)
        if why is not None:  # a cost cap: not run, not journaled, so --resume with a higher cap runs it
            self._not_run(task, why, started)
            return
        try:
            await self._run_admitted(task, started)
        finally:
            self.cost.release(cell)

    async def _run_admitted(self, task: AgentvTask, started: Any) -> None:
        cell = task.cell
        try:
            spec = self._workspace_spec(task)
            folder = await self.workspaces.acquire(spec, task.test.id) if spec is not None else None
        except WorkspaceError as exc:
            self._fail(task, f"workspace: {exc}", "workspace", started)
            return
        problems: list[str] = []
        try:
            attempted = await self._attempts(task, started, folder)
        finally:
            if spec is not None and folder is not None:
                problems = await self.workspaces.release(spec, folder, task.test.id)
        if attempted is None:
            return
        row = attempted
        if problems:
            row["workspace_errors"] = problems
            for problem in problems:
                self.emit(Notice(f"{cell}: {problem}", "warning"))
        score = row["score"]
        judged = self.cost.spend.judge_usage(cell)
        if judged is not None:  # the judges' calls, apart from the target's token_usage and cost_usd
            row["judge_target"] = task.judge.name if task.judge is not None else None
            row["judge_token_usage"] = {"input": judged["input"], "output": judged["output"], "calls": judged["calls"]}
            row["judge_cost_usd"] = judged["cost_usd"]
        self.writer.keep(cell, row)
        self.scores[cell] = (score, row.get("verdict"))
        assert self.journal is not None
        self.journal.write(CellScore(cell, score, row.get("verdict"), row))
        self.emit(Scored(cell, score, row.get("verdict"), row))

    async def _attempts(self, task: AgentvTask, started: Any, folder: Path | None) -> dict[str, Any] | None:
        """The test on its target once, or `execution.trials.count` times combined by the strategy;
        None when the cell failed (recorded by _fail)."""
        cell = task.cell
        settings = self.trials
        attempts: list[Attempt] = []
        rows: list[dict[str, Any]] = []
        stopped: str | None = None
        for k in range(settings.count):
            began = started if k == 0 else now_utc()
            try:
                answer, usage, latency, cached, model, calls = await self._answer(task, k, folder)
            except (ProviderError, _ReplayedFailure) as err:
                message = err.message if isinstance(err, ProviderError) else str(err)
                kind = err.kind if isinstance(err, ProviderError) else "replay"
                if not settings.repeated or (k == settings.count - 1 and not rows):
                    self._fail(task, message, kind, started)
                    return None
                rows.append(self._row(task, began, "", (0, 0), 0.0, [], error=message))
                attempts.append(Attempt(None, None, None, message))
                continue
            self.emit(Response(cell, answer, usage, cached, latency, replayed=self.plan.replay is not None))
            cost = self._cost(task, model, usage)
            measured = Measured(answer=answer, usage=usage, duration_ms=latency, model=model, cost_usd=cost,
                                trace=[c.to_json() for c in calls], calls=calls,
                                output_messages=output_messages(answer, calls),
                                workspace=str(folder) if folder is not None else None,
                                file_changes=await self._file_changes(task, folder), started=began, ended=now_utc())
            metrics = measured.metrics()
            items = await self._assertions(task, answer, metrics, measured, attempt=k)
            row = self._row(task, began, answer, usage, latency, items, cost_usd=cost)
            if calls:
                row["output"] = measured.output_messages  # the trace, as AgentV's `output` messages
            rows.append(row)
            attempts.append(Attempt(row["score"], row.get("verdict"), cost))
            stopped = stop_reason(settings, attempts)
            if stopped is not None:
                break
        if not settings.repeated:
            return rows[0]
        return _with_trials(rows, combine(settings, attempts, stopped or "error"))

    async def _answer(self, task: AgentvTask, attempt: int = 0, folder: Path | None = None
                      ) -> tuple[str, tuple[int, int], float, bool, str | None, tuple[ToolCall, ...]]:
        """(text, (input, output tokens), latency ms, cached, the model that answered, tool calls)."""
        cell = task.cell
        done = self.state.turns.get(cell, {}).get(attempt)
        if done is not None:
            return (done.text, done.usage or (0, 0), done.ms or 0.0, False, done.model,
                    calls_from_json(list(done.tool_calls)))
        model: str | None = None
        if self.plan.replay is not None:
            text, usage, latency, cached, calls = self._replayed(cell)
        else:
            provider, model_name = self._provider(task.target)
            system, messages = chat_messages(task.test.input_messages)
            req = ChatRequest(model=model_name, messages=tuple(messages), system=system,
                              timeout=_timeout_seconds(task.test.execution)
                              or _timeout_seconds(self.plan.suite.execution))
            if attempt > 0:
                provider = _uncached(provider)  # a trial is a new sample, not the first answer again
            if folder is not None and _provider_kind(task.target) == "cli":
                # The agent works in the test's workspace: the command runs there.
                req = dataclasses.replace(req, extra={**req.extra, "cwd": str(folder), "attempt": attempt,
                                                      "eval_id": task.test.id})
            elif _provider_kind(task.target) == "cli":
                # The test id is the command's {EVAL_ID}; it picks this test's record of a batch output.
                req = dataclasses.replace(req, extra={**req.extra, "eval_id": task.test.id, "attempt": attempt})
            result = (self.batch.take(cell, attempt, label=task.target.name)
                      if self.batch is not None and attempt == 0 else None)
            if result is None:
                result = await self.calls.chat(provider, req, cell, limit_key=_limit_key(task.target),
                                               model_label=task.target.name)
            text, latency, cached, calls = result.text, result.latency_ms, result.cached, result.tool_calls
            usage = (result.usage.input_tokens, result.usage.output_tokens)
            model = result.raw_model or model_name or _configured_model(task.target)
        # Replayed answers are journalled too, so that a replay's own journal can be resumed or replayed.
        assert self.journal is not None
        self.journal.write(Generated(cell, attempt, text, usage, round(latency, 1), cached, model,
                                     tuple(c.to_json() for c in calls), names_model=True))
        return text, usage, latency, cached, model, calls

    def _cost(self, task: AgentvTask, model: str | None, usage: tuple[int, int]) -> float | None:
        """US dollars of the target's call, from the price table; None when its model has no price."""
        prices = self.plan.prices
        if prices is None:
            return None
        key = (model, task.target.name)
        price = self._prices.get(key, _UNSET)
        if price is _UNSET:  # looked up once per (model, target): a 2,000-test run asks 2,000 times
            names = (model, _configured_model(task.target), task.target.model)
            price = self._prices[key] = next((p for p in map(prices.price, names) if p is not None), None)
        return call_cost(price, usage[0], usage[1]) if price is not None else None

    def _replayed(self, cell: Cell) -> tuple[str, tuple[int, int], float, bool, tuple[ToolCall, ...]]:
        """The recorded answer of a cell, with the usage, duration and tool calls the original call
        reported (latency, token-usage and tool-trajectory score those). A recorded failure raises
        _ReplayedFailure."""
        replay = self.plan.replay
        rec = replay.answer(cell)
        if rec is None or rec.text is None:
            raise _ReplayedFailure(rec.error if rec is not None and rec.error else
                                   f"{replay.path} has no answer for {cell}")
        return rec.text, rec.usage, rec.latency_ms, False, rec.tool_calls

    async def _file_changes(self, task: AgentvTask, folder: Path | None) -> str | None:
        """The diff of the test's workspace against its template and repositories, once the agent has
        answered."""
        if folder is None or not _reads_changes(task.test.assertions):
            return None  # walking both trees is only worth it for a judge that reads the diff
        return await workspace_changes(self._workspace_spec(task), folder, self.options.env)

    def _workspace_spec(self, task: AgentvTask) -> WorkspaceSpec | None:
        """The test's workspace (its own, else the suite's, else its cli target's workspace_template).
        Raises WorkspaceError for one that cannot be used."""
        if not self._any_workspace:
            return None
        test = task.test
        raw: Any = test.workspace if test.workspace is not None else self.plan.suite.workspace
        key: Any = ("test", test.id) if test.workspace is not None else "suite"
        base = (test.source_path or self.plan.path).parent if test.workspace is not None else self.plan.path.parent
        if raw is None and task.target.config is not None and task.target.config.get("workspace_template"):
            # AgentV: a cli target's workspace_template, copied per test, relative to targets.yaml.
            base = self.plan.targets_file.parent if self.plan.targets_file else self.plan.path.parent
            raw = {"template": str(task.target.config["workspace_template"]), "isolation": "per_test"}
            key = ("target", task.target.name)
        if raw is None:
            return None
        if key not in self._workspace_specs:
            self._workspace_specs[key] = parse_workspace(raw, base)
        return self._workspace_specs[key]

    # --- batch mode -------------------------------------------------------------------------------
    def _wants_batch(self, target: TargetSpec) -> bool:
        """`--batch`, a `--batch-model` pattern naming the target, or `batch: true` in its settings; only
        chat targets (openai, anthropic, gemini: the APIs with a batch endpoint) and models."""
        from .batch_stage import wants_batch

        if target.config is not None and _provider_kind(target) not in ("openai", "anthropic", "gemini", "google",
                                                                        "google-gemini"):
            return False
        return wants_batch(self.options, target.name) or (target.config is not None
                                                          and target.config.get("batch") is True)

    async def _batch_phase(self) -> AsyncIterator[Event]:
        """The first attempt of every test whose target batches, through its batch API, before the tests
        run (run/batch_stage.py); what a batch does not answer is asked as usual."""
        from .batch_stage import BatchRequest, BatchStage, journaled_slots

        journaled = journaled_slots(self.journal_path, self.options)
        requests: list[BatchRequest] = []
        for task in self.plan.tasks:
            cell = task.cell
            submit = self._wants_batch(task.target)
            if not (submit or (cell, 0) in journaled) or cell in self.state.scores \
                    or 0 in self.state.turns.get(cell, {}):
                continue
            if self._workspace_spec(task) is not None:
                continue  # a workspace is set up per test, around its call
            try:
                provider, model_name = self._provider(task.target)
            except ProviderError:
                continue  # the test fails on its own, as it would interactively
            if self.cost.refuses(task):
                continue  # a cost cap: the test is refused when it runs, nothing of it is sent
            system, messages = chat_messages(task.test.input_messages)
            req = ChatRequest(model=model_name, messages=tuple(messages), system=system,
                              timeout=_timeout_seconds(task.test.execution)
                              or _timeout_seconds(self.plan.suite.execution))
            requests.append(BatchRequest(cell, 0, task.target.name, task.target.name, provider, req,
                                         custom=task.target.config is not None, submit=submit))
        if not requests:
            return
        assert self.journal is not None
        self.batch = BatchStage(calls=self.calls, journal=self.journal, journal_path=self.journal_path,
                                options=self.options)
        async for event in self.batch.run(requests):
            yield event

    def _provider(self, spec: TargetSpec) -> tuple[Any, str]:
        if spec.config is not None:
            return self.calls.target(spec.name, spec.config, base_dir=self.plan.path.parent), ""
        binding = self.calls.model(spec.model or spec.name)
        return binding.provider, binding.model_name

    def _not_run(self, task: AgentvTask, message: str, started: Any) -> None:
        """A cell a cost cap kept from starting: a row that is not scored (never a pass) with the reason;
        not journaled, so --resume with a higher cap runs it."""
        cell = task.cell
        self.failed.add(cell)
        self.not_run.add(cell)
        row = self._row(task, started, "", (0, 0), 0.0, [], error=message)
        row.update({"score": None, "verdict": NOT_SCORED})
        self.writer.keep(cell, row)
        self.emit(CellFailed(cell, message, NOT_RUN))

    def _fail(self, task: AgentvTask, message: str, kind: str, started: Any) -> None:
        cell = task.cell
        self.failed.add(cell)
        if self.fail_on_error and self._halt is None and kind != "skipped":
            self._halt = f"not run: execution.fail_on_error stopped the run after {cell} failed ({message})"
        row = self._row(task, started, "", (0, 0), 0.0, [], error=message)
        self.writer.keep(cell, row)
        assert self.journal is not None
        self.journal.write(CellScore(cell, None, None, row))
        self.emit(CellFailed(cell, message, kind))

    # --- assertions -------------------------------------------------------------------------------
    async def _assertions(self, task: AgentvTask, answer: str, metrics: RunMetrics,
                          measured: Measured | None = None, *, attempt: int = 0) -> list[dict[str, Any]]:
        test = task.test
        if test.uses_default_judge:
            # AgentV grades a test without assertions with its default LLM judge, against `criteria`.
            default = Assertion(type="llm-judge", name="llm-judge", span=test.span)
            return [await self._judged(task, ATTEMPT_STRIDE * attempt, default, answer)]
        measured = measured or Measured(answer=answer)
        return [await self._scored(task, ATTEMPT_STRIDE * attempt + i, a, answer, metrics, measured)
                for i, a in enumerate(test.assertions)]

    async def _scored(self, task: AgentvTask, index: int, a: Assertion, answer: str, metrics: RunMetrics,
                      measured: Measured) -> dict[str, Any]:
        """One assertion's result entry. `index` keys its judge calls in the journal (a composite's
        children get indexes of their own, see _composite)."""
        why = unscorable(a, judge=task.judge is not None)
        if why is not None:
            return _skipped(a, f"not scored: {why}")
        if a.type in JUDGED:
            return await self._judged(task, index, a, answer)
        if a.type == "agent-judge":
            return await self._agent_judged(task, index, a, answer, measured)
        if a.type in EXECUTED or a.custom:
            return await self._executed(task, a, measured)
        if a.type == "composite":
            return await self._composite(task, index, a, answer, metrics, measured)
        if (why := unmeasured(a, metrics, measured.model)) is not None:
            return _skipped(a, f"not scored: {why}")
        return _deterministic(a, answer, metrics, [(m.role, m.content) for m in task.test.expected_messages])

    async def _composite(self, task: AgentvTask, index: int, a: Assertion, answer: str, metrics: RunMetrics,
                         measured: Measured) -> dict[str, Any]:
        """A `composite`: every child scored as a test's assertion would be, then aggregated
        (scoring/composite.py); an llm-judge aggregator asks the judge, a code-judge one runs its script."""
        entries = [await self._scored(task, _child_index(index, j), child, answer, metrics, measured)
                   for j, child in enumerate(a.children)]
        nested = [{k: v for k, v in e.items() if not k.startswith("_")} for e in entries]
        missing = next((e for e in entries if e["score"] is None), None)
        if missing is not None:
            reason = str(missing["reasoning"] or "").removeprefix("not scored: ")
            entry = _skipped(a, f"not scored: its child '{missing['name']}' was not scored: {reason}")
            entry["scores"] = nested
            return entry
        children = [Child(e["name"], e["type"], float(e["score"]), str(e["verdict"]), float(e["weight"]),
                          tuple(e["hits"]), tuple(e["misses"]), e.get("reasoning")) for e in entries]
        raw = a.config.get("aggregator")
        aggregator: dict[str, Any] = raw if isinstance(raw, dict) else {}
        kind = aggregator_kind(aggregator)
        if kind == "threshold":
            got: CompositeScore | str = composite_threshold(children, aggregator.get("threshold", DEFAULT_THRESHOLD))
        elif kind == "llm-judge":
            got = await self._judged_aggregate(task, _child_index(index, AGGREGATOR_SLOT), aggregator, children)
        elif kind == "code-judge":
            got = await self._scripted_aggregate(a, aggregator, children)
        else:
            got = weighted_average(children, aggregator.get("weights"))
        if isinstance(got, str):
            entry = _skipped(a, f"not scored: {got}")
            entry["scores"] = nested
            return entry
        score, result_verdict, hits, misses = got.score, got.verdict, list(got.hits), list(got.misses)
        if a.negate:
            score, result_verdict = negate_result(score, result_verdict)
            hits, misses = misses, hits
        entry = _entry(a, score, result_verdict, hits, misses, got.reasoning)
        entry["scores"] = nested
        return entry

    async def _judged_aggregate(self, task: AgentvTask, index: int, aggregator: dict[str, Any],
                                children: list[Child]) -> CompositeScore | str:
        """The llm-judge aggregator: the judge reads the children's results and gives the score."""
        judge = task.judge
        if judge is None:
            return NO_JUDGE
        cell = task.cell
        done = self.state.judgements.get((cell, index, judge.name))
        reply = done.text if isinstance(done, JudgeReply) and not done.error else None
        try:
            if reply is None:
                provider, model_name = self._provider(judge)
                req = ChatRequest(model=model_name, messages=(ChatMessage("user", aggregator_prompt(aggregator, children)),),
                                  system=FREEFORM_SYSTEM, temperature=0.0, max_tokens=JUDGE_MAX_TOKENS)
                result = await self.calls.chat(provider, req, cell, limit_key=_limit_key(judge), purpose="judge",
                                               model_label=judge.name)
                reply = result.text
                assert self.journal is not None
                self.journal.write(JudgeReply(cell, index, judge.name, reply, None))
            score, hits, misses, reasoning = freeform_result(parse_json_reply(reply))
        except ProviderError as err:
            self._judge_error(cell, index, judge, err.message)
            return f"the judge {judge.name} failed: {err.message}"
        except JudgeReplyError as err:
            return str(err)
        return CompositeScore(score, verdict(score), tuple(hits), tuple(misses), reasoning)

    async def _scripted_aggregate(self, a: Assertion, aggregator: dict[str, Any],
                                  children: list[Child]) -> CompositeScore | str:
        """The code-judge aggregator: its script (`path`, a command line) gets `{results}` on stdin."""
        command = aggregator.get("path") or aggregator.get("command") or aggregator.get("script")
        if isinstance(command, str) and command.strip():
            # A command line, split as a POSIX shell would (no shell runs it); Windows gets cmd.exe.
            try:
                argv = shell_argv(command) if sys.platform.startswith("win") else shlex.split(command)
            except ValueError as exc:
                return f"the code-judge aggregator's path cannot be split into a command: {exc}"
        elif isinstance(command, list) and command:
            argv = [str(x) for x in command]
        else:
            return "the code-judge aggregator has no `path` (its script)"
        base = a.source_path.parent if a.source_path is not None else self.plan.path.parent
        cwd = base / str(aggregator["cwd"]) if aggregator.get("cwd") else base
        if self._judge_limit is None:
            self._judge_limit = asyncio.Semaphore(CODE_JUDGE_CONCURRENCY)
        outcome = await run_code_judge(argv, {"results": results_object(children)}, cwd=cwd,
                                       timeout=timeout_of(aggregator), env=self.options.env, limit=self._judge_limit)
        if outcome.score is None:
            return (outcome.error or "the code-judge aggregator was not run").removeprefix("not scored: ")
        misses = list(outcome.misses) + ([outcome.error] if outcome.error else [])
        return CompositeScore(outcome.score, verdict(outcome.score), outcome.hits, tuple(misses), outcome.reasoning)

    async def _judged(self, task: AgentvTask, index: int, a: Assertion, answer: str) -> dict[str, Any]:
        """One `rubrics` or `llm-judge` assertion, asked of the target's judge."""
        judge = task.judge
        if judge is None:
            return _skipped(a, f"not scored: {NO_JUDGE}")
        criteria = a.config.get("criteria") if a.type == "rubrics" else a.config.get("rubrics")
        cell = task.cell
        key = (cell, index, judge.name)
        done = self.state.judgements.get(key)
        reply = done.text if isinstance(done, JudgeReply) and not done.error else None
        try:
            if criteria:
                criteria = [_criterion(c, i) for i, c in enumerate(criteria)]
                system, user = rubric_prompt(criteria, task.test, answer)
            else:
                template = await self._template(a, task, answer)
                system, user = freeform_prompt(template, task.test, answer)
            if reply is None:
                provider, model_name = self._provider(judge)
                req = ChatRequest(model=model_name, messages=(ChatMessage("user", user),), system=system,
                                  temperature=0.0, max_tokens=JUDGE_MAX_TOKENS)
                result = await self.calls.chat(provider, req, cell, limit_key=_limit_key(judge), purpose="judge",
                                               model_label=judge.name)
                reply = result.text
                assert self.journal is not None
                self.journal.write(JudgeReply(cell, index, judge.name, reply, None))
            data = parse_json_reply(reply)
            if criteria:
                checks = rubric_checks(data)
                ranges = any(c.get("score_ranges") for c in criteria)
                rs = score_ranges(criteria, checks) if ranges else score_checklist(criteria, checks)
                score, result_verdict, fails = rs.score, rs.verdict, rs.failed_required
                hits, misses = list(rs.hits), list(rs.misses)
                reasoning = data.get("overall_reasoning") if isinstance(data.get("overall_reasoning"), str) else None
            else:
                score, hits, misses, reasoning = freeform_result(data)
                result_verdict, fails = verdict(score), False
        except ProviderError as err:
            self._judge_error(cell, index, judge, err.message)
            return _skipped(a, f"not scored: the judge {judge.name} failed: {err.message}")
        except (JudgeReplyError, _TemplateError) as err:
            return _skipped(a, f"not scored: {err}")
        if a.negate:
            score, result_verdict = negate_result(score, result_verdict)
            hits, misses, fails = misses, hits, False
        return _entry(a, score, result_verdict, hits, misses, reasoning, fails_test=fails)

    async def _agent_judged(self, task: AgentvTask, index: int, a: Assertion, answer: str,
                            measured: Measured) -> dict[str, Any]:
        """An `agent-judge`: the judge model inspects the test's workspace read-only (agent_judge.py)."""
        from .agent_judge import WorkspaceReader, judge_task, run_agent_judge, system_prompt, tools_for
        from .agentv_judge import render, variables

        judge = task.judge
        delegated = a.config.get("target")
        if isinstance(delegated, str) and delegated:
            entry = self._targets_entry(delegated)
            if entry is None:
                return _skipped(a, f"not scored: agent-judge target '{delegated}' is not in targets.yaml")
            kind = str(entry.get("provider") or "").lower()
            if kind in CODING_AGENTS:
                return _skipped(a, f"not scored: agent-judge target '{delegated}' is a coding agent ({kind}), "
                                   "which evalspec does not run; drop `target` to use the built-in agent judge")
            judge = TargetSpec(delegated, config=entry)
        if judge is None:
            return _skipped(a, f"not scored: {NO_JUDGE}")
        if measured.workspace is None:
            return _skipped(a, "not scored: agent-judge audits a workspace and this test has none (set "
                               "`workspace.template`, or the target's `workspace_template`)")
        criteria = [_criterion(c, i) for i, c in enumerate(a.config.get("rubrics") or [])]
        try:
            template = await self._template(a, task, answer, measured)
        except _TemplateError as err:
            return _skipped(a, f"not scored: {err}")
        prompt = render(template, variables(task.test, answer)) if template else None
        task_text = judge_task(question_text(task.test), task.test.criteria or "", answer,
                               task.test.reference_answer, criteria, prompt, measured.file_changes)
        provider, model_name = self._provider(judge)
        kind = _judge_kind(judge)
        temperature = a.config.get("temperature")
        steps = a.config.get("max_steps")
        system = system_prompt(bool(criteria))

        async def ask(messages: tuple[ChatMessage, ...], offer_tools: bool) -> Any:
            req = ChatRequest(model=model_name, messages=messages, system=system,
                              temperature=float(temperature) if isinstance(temperature, int | float) else 0.0,
                              max_tokens=JUDGE_MAX_TOKENS, extra=tools_for(kind) if offer_tools else {})
            return await self.calls.chat(provider, req, task.cell, limit_key=_limit_key(judge), purpose="judge",
                                         model_label=judge.name)

        try:
            outcome = await run_agent_judge(ask, task_text, WorkspaceReader(Path(measured.workspace)),
                                            rubric=bool(criteria),
                                            max_steps=steps if isinstance(steps, int) else DEFAULT_AGENT_STEPS)
        except ProviderError as err:
            self._judge_error(task.cell, index, judge, err.message)
            return _skipped(a, f"not scored: the agent judge {judge.name} failed: {err.message}")
        if outcome.verdict is None:
            return _skipped(a, f"not scored: {outcome.error}")
        fails = False
        try:
            if criteria:
                rs = score_checklist(criteria, rubric_checks(outcome.verdict))
                score, result_verdict, hits, misses = rs.score, rs.verdict, list(rs.hits), list(rs.misses)
                fails = rs.failed_required
                raw = outcome.verdict.get("overall_reasoning")
                reasoning = raw if isinstance(raw, str) else None
            else:
                score, hits, misses, reasoning = freeform_result(outcome.verdict)
                result_verdict = verdict(score)
        except JudgeReplyError as err:
            return _skipped(a, f"not scored: {err}")
        if a.negate:
            score, result_verdict = negate_result(score, result_verdict)
            hits, misses, fails = misses, hits, False
        entry = _entry(a, score, result_verdict, hits, misses, reasoning, fails_test=fails)
        entry["details"] = {"steps": outcome.steps, "tool_calls": outcome.tool_calls}
        return entry

    def _targets_entry(self, name: str) -> dict[str, Any] | None:
        from .agentv_plan import load_targets

        try:
            return load_targets(self.plan.targets_file).get(name)
        except Exception:  # PlanError: the file was readable when the run was planned
            return None

    async def _executed(self, task: AgentvTask, a: Assertion, measured: Measured) -> dict[str, Any]:
        """A `code-judge` or a custom assertion's script, run on the answer (code_judge.py), only inside
        this explicit run."""
        if self._judge_limit is None:
            self._judge_limit = asyncio.Semaphore(CODE_JUDGE_CONCURRENCY)
        env = self.options.env
        proxy = None
        wants_target = a.config.get("target") if a.type == "code-judge" else None
        if wants_target:
            if task.judge is None:
                return _skipped(a, f"not scored: the code judge calls a target (`target`) and there is {NO_JUDGE}")
            proxy = self._target_proxy(task, wants_target)
            env = {**env, **await proxy.start()}
        try:
            outcome = await judge_answer(a, task.test, measured, base=self.plan.path.parent, env=env,
                                         limit=self._judge_limit)
        finally:
            if proxy is not None:
                await proxy.close()
        if outcome.score is None:
            return _skipped(a, outcome.error or "not scored")
        score, result_verdict = outcome.score, verdict(outcome.score)
        hits, misses = list(outcome.hits), list(outcome.misses)
        if a.negate and outcome.error is None:
            score, result_verdict = negate_result(score, result_verdict)
            hits, misses = misses, hits
        entry = _entry(a, score, result_verdict, hits, misses, outcome.reasoning)
        if outcome.details is not None:
            entry["details"] = outcome.details
        if outcome.error is not None:
            entry["error"] = outcome.error
        if proxy is not None:
            entry["target_proxy"] = proxy.usage()
        return entry

    def _target_proxy(self, task: AgentvTask, wants: Any) -> Any:
        """The proxy a code judge with `target` calls LLMs through: the test's judge target (or another
        target of targets.yaml, by name), under the run's limits (target_proxy.py)."""
        from .agentv_plan import load_targets
        from .target_proxy import TargetProxy, max_calls_of

        judge = task.judge
        assert judge is not None
        try:
            names = list(load_targets(self.plan.targets_file))
        except Exception:  # PlanError: the file was readable when the run was planned
            names = []
        available = list(dict.fromkeys([judge.name, *names]))

        async def invoke(question: str, system: str | None, name: str | None) -> tuple[str, int, int]:
            spec = judge
            if name is not None and name != judge.name:
                entry = self._targets_entry(name)
                spec = TargetSpec(name, config=entry) if entry is not None else judge
            provider, model_name = self._provider(spec)
            req = ChatRequest(model=model_name, messages=(ChatMessage("user", question),), system=system,
                              max_tokens=JUDGE_MAX_TOKENS)
            result = await self.calls.chat(provider, req, task.cell, limit_key=_limit_key(spec), purpose="judge",
                                           model_label=spec.name)
            return result.text, result.usage.input_tokens, result.usage.output_tokens

        return TargetProxy(invoke, judge.name, available, max_calls_of(wants))

    def _judge_error(self, cell: Cell, index: int, judge: TargetSpec, message: str) -> None:
        assert self.journal is not None
        self.journal.write(JudgeReply(cell, index, judge.name, None, message))

    async def _template(self, a: Assertion, task: AgentvTask, answer: str, measured: Measured | None = None
                        ) -> str | None:
        """The llm-judge prompt: inline text, a template file (relative to the eval file), or what a
        prompt script (`prompt: {command}`) prints (code_judge.prompt_from_script)."""
        prompt = a.config.get("prompt")
        if prompt is None:
            return None
        if isinstance(prompt, dict):
            from .code_judge import PromptScriptError, prompt_from_script

            if self._judge_limit is None:
                self._judge_limit = asyncio.Semaphore(CODE_JUDGE_CONCURRENCY)
            try:
                return await prompt_from_script(prompt, a, task.test, measured or Measured(answer=answer),
                                                base=self.plan.path.parent, env=self.options.env,
                                                limit=self._judge_limit)
            except PromptScriptError as err:
                raise _TemplateError(str(err)) from None
        if not isinstance(prompt, str):
            raise _TemplateError("the judge prompt is neither text, a file nor {command: [...]}")
        from ..agentv.files import FileSystem, looks_like_prompt_file, read_text

        if looks_like_prompt_file(prompt):
            base = (a.source_path or self.plan.path).parent
            fs = FileSystem()
            found = fs.resolve(prompt, fs.search_roots(base))
            if found is not None and fs.outside(found, base) and not self.options.allow_outside_files:
                raise _TemplateError(f"the judge prompt file {prompt} is outside the project "
                                     "(--allow-outside-files reads it)")
            text = read_text(found, FILE_LIMIT) if found is not None else None
            if text is None:
                raise _TemplateError(f"the judge prompt file {prompt} cannot be read")
            return text
        return prompt

    # --- results ----------------------------------------------------------------------------------
    def _row(self, task: AgentvTask, started: Any, answer: str, usage: tuple[int, int], latency: float,
             items: list[dict[str, Any]], *, error: str | None = None, cost_usd: float | None = None
             ) -> dict[str, Any]:
        """One AgentV result row (AgentV's JSONL row, snake_case)."""
        test = task.test
        score: float | None
        row_verdict: str | None
        if error is not None:
            score, row_verdict = 0.0, "fail"
        elif items:
            outcome = outcome_of([(i["score"], i["weight"], i["_required"], i["_fails"]) for i in items])
            score, row_verdict = outcome.score, outcome.verdict
        else:
            score, row_verdict = None, NOT_SCORED
        hits = [h for i in items for h in i.get("hits", [])]
        misses = [m for i in items for m in i.get("misses", [])]
        reasons = [f"{i['name']}: {i['reasoning']}" for i in items if i.get("reasoning")]
        status = "execution_error" if error is not None else ("quality_failure" if row_verdict == "fail" else "ok")
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
            "token_usage": {"input": usage[0], "output": usage[1]},
            "cost_usd": cost_usd,
            "duration_ms": round(latency, 1),
            "scores": [{k: v for k, v in i.items() if not k.startswith("_")} for i in items],
            "error": error,
            "trials": None,
            "execution_status": status,
            "verdict": row_verdict,
        }
        unscored = [{"name": i["name"], "type": i["type"], "required": bool(i["_required"]),
                     "reason": str(i["reasoning"]).removeprefix("not scored: ")} for i in items if i["score"] is None]
        if unscored:
            row["not_scored"] = unscored
        return row

    def summary(self, files: list[Path]) -> RunSummary:
        rows: list[ModelSummary] = []
        for target in self.plan.targets:
            cells = [t.cell for t in self.plan.tasks if t.target.name == target.name]
            scored = [self.scores[c][0] for c in cells if c in self.scores and self.scores[c][0] is not None]
            verdicts = [self.scores[c][1] for c in cells if c in self.scores]
            rows.append(ModelSummary(
                model=target.name, cells=len(cells), scored=len(scored),
                mean=sum(scored) / len(scored) if scored else None,  # type: ignore[arg-type]
                passed=verdicts.count("pass"), borderline=verdicts.count("borderline"), failed=verdicts.count("fail"),
                not_scored=verdicts.count(NOT_SCORED) + sum(1 for c in cells if c in self.not_run),
                errors=sum(1 for c in cells if c in self.failed and c not in self.not_run)))
        notes = self._not_scored_notes() + ((self.cost.stopped,) if self.cost.stopped else ())
        return RunSummary(kind="agentv", run_label=self.plan.run_label, models=tuple(rows),
                          files=tuple(str(f) for f in files), calls=self.calls.calls, cached=self.calls.cached,
                          resumed=self.resumed_cells, notes=notes, cost=self.cost.summary(), stopped=self.cost.stopped)

    def _not_scored_notes(self) -> tuple[str, ...]:
        """The cells whose verdict is "not scored" or that failed with unscored checks, each with the
        assertions that were not scored and why (the first NOTES_SHOWN; the rest counted)."""
        lines: list[str] = []
        for t in self.plan.tasks:
            row = self.writer.rows.get(t.cell)
            if not row or not row.get("not_scored") or row.get("execution_status") == "execution_error":
                continue
            what = "; ".join(f"{u['name']} ({u['type']}{', required' if u['required'] else ''}): {u['reason']}"
                             for u in row["not_scored"])
            lines.append(f"{row.get('verdict')}: {t.cell}: not scored: {what}")
        if len(lines) > NOTES_SHOWN:
            lines[NOTES_SHOWN:] = [f"… and {len(lines) - NOTES_SHOWN} more cell(s) with checks not scored "
                                   "(the results file lists them)"]
        return tuple(lines)


class _TemplateError(Exception):
    pass


class _ReplayedFailure(Exception):
    """A replayed cell whose recorded run failed: it fails again, with the recorded message."""


def _reads_changes(assertions: list[Assertion]) -> bool:
    return any(a.type in ("code-judge", "agent-judge") or a.custom or _reads_changes(a.children) for a in assertions)


def _judge_kind(spec: TargetSpec) -> str:
    """Which API's tool format a judge speaks: anthropic, gemini, or openai (and compatibles)."""
    kind = _provider_kind(spec) if spec.config is not None else provider_key(spec.model or spec.name)
    if kind in ("anthropic", "claude"):
        return "anthropic"
    if kind in ("gemini", "google", "vertex"):
        return "gemini"
    return "openai"


def _provider_kind(spec: TargetSpec) -> str | None:
    return str(spec.config.get("provider") or "").lower() if spec.config is not None else None


def _uncached(provider: Any) -> Any:
    from ..providers.cache import CachedProvider

    return provider.inner if isinstance(provider, CachedProvider) else provider


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
    row["execution_status"] = "quality_failure" if row["verdict"] == "fail" else "ok"
    return row


def _configured_model(spec: TargetSpec) -> str | None:
    """The model a targets.yaml entry names (`model`, or an Azure `deployment_name`)."""
    if spec.config is None:
        return None
    value = spec.config.get("model") or spec.config.get("deployment_name") or spec.config.get("deployment")
    return str(value) if value else None


AGGREGATOR_SLOT = 999  # a composite's llm-judge aggregator call, next to its children's
CHILD_BASE = 10**9  # composite children's journal indexes live above every test-level index


def _child_index(index: int, j: int) -> int:
    """The journal index of a composite's child j < 1000 (or its aggregator). Injective: a test-level
    index p < CHILD_BASE (attempt × ATTEMPT_STRIDE + assertion) maps into [B, 1001·B), a child's
    into [1001·B, …), and so on down a nesting."""
    return CHILD_BASE + 1000 * index + min(j, 999)


def _provider_name(spec: TargetSpec) -> str | None:
    return str(spec.config.get("provider") or "").lower() if spec.config is not None else None


def _limit_key(spec: TargetSpec) -> str:
    if spec.config is not None:
        return str(spec.config.get("provider") or spec.name).lower()
    return provider_key(spec.model or spec.name)


def _criterion(c: Any, i: int) -> dict[str, Any]:
    if isinstance(c, str):
        return {"id": f"rubric-{i + 1}", "outcome": c, "weight": 1.0, "required": True}
    return dict(c)


def _deterministic(a: Assertion, answer: str, metrics: RunMetrics, expected: list[tuple[str, Any]]) -> dict[str, Any]:
    try:
        got = evaluate_assertion(a, answer, metrics, expected=expected)
    except Exception as exc:  # our bug must not pass a test, nor lose the run: the check was not made
        return _skipped(a, f"not scored: evalspec failed while scoring it ({type(exc).__name__}: {exc})")
    if isinstance(got, NotSupported):
        return _skipped(a, f"not scored: evalspec does not score '{got.type}' assertions yet")
    return _entry(a, got.score, got.verdict, list(got.hits), list(got.misses), got.reasoning)


def _entry(a: Assertion, score: float, result_verdict: str, hits: list[str], misses: list[str],
           reasoning: str | None, *, fails_test: bool = False) -> dict[str, Any]:
    return {"name": a.name, "type": a.type, "score": score, "weight": a.weight, "verdict": result_verdict,
            "hits": hits, "misses": misses, "reasoning": reasoning, "_required": a.required, "_fails": fails_test}


def _skipped(a: Assertion, reason: str) -> dict[str, Any]:
    """Not scored (a type not run yet, no judge, a failed judge): listed with its reason; the test is then
    not scored unless something else fails it (agentv_aggregate.outcome_of)."""
    return {"name": a.name, "type": a.type, "score": None, "weight": a.weight, "verdict": NOT_SCORED, "hits": [],
            "misses": [], "reasoning": reason, "_required": a.required, "_fails": False}


def run_agentv(plan: AgentvPlan, options: RunOptions) -> AsyncIterator[Event]:
    return RunSkeleton(AgentvRun(plan, options)).events()


def _timeout_seconds(execution: dict[str, Any]) -> float | None:
    """`execution.timeout_seconds` (the test's, else the suite's): each call to the test's target gets
    that long instead of --timeout."""
    value = execution.get("timeout_seconds")
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None
