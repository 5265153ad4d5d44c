"""Running a Weval blueprint: answers, rubric scores, embeddings, result files — as a stream of events.

Each cell (prompt × effective model) is generated and scored on its own, as soon as a worker is free,
so results stream out while the run goes on and every finished answer, judgement and score is in the
journal the moment it exists. The comparison file and artefacts are written at the end (write_weval.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..providers.base import ChatMessage, ChatRequest, ChatResult, ProviderError
from ..scoring.agentv_aggregate import verdict
from ..scoring.weval_aggregate import (
    ALL_JUDGES_FAILED,
    CoveragePoint,
    JudgeAnswerError,
    avg_coverage_extent,
    consensus,
    consensus_judge_id,
    invert,
    inverted_reflection,
    parse_judge_answer,
)
from ..scoring.weval_points import PointContext, evaluate_point
from ..weval.ids import js_number
from ..weval.model import Point, Prompt
from .calls import Calls, provider_key
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
from .journal_records import (
    CellScore,
    Failed,
    Generated,
    Judged,
    KeyPoints,
    Record,
    RunHeader,
)
from .jsjson import js_to_fixed
from .options import RunOptions
from .score_embeddings import embedding_similarity
from .skeleton import RunSkeleton
from .weval_judge import (
    EXTRACT_SYSTEM,
    JUDGE_MAX_TOKENS,
    extraction_prompt,
    judge_label,
    judge_messages,
    parse_key_points,
    transcript,
)
from .weval_plan import WevalPlan, WevalTask
from .weval_points import ASYNC_FUNCTIONS, base_assessment, function_assessment, score_function_point
from .write_weval import WevalWriter

if TYPE_CHECKING:
    from .batch_stage import BatchRequest, BatchStage

EMPTY_ANSWER = "Model returned an empty or whitespace-only response."
NO_POINTS = "Not scored: the prompt has no points (no should or should_not) and no ideal to extract key points from."
SKIPPED_JUDGING = "Not scored: --eval-method none skips judged points."
SKIPPED_EXTRACTION = "Not scored: --eval-method none skips extracting key points from the ideal."


def judge_slot(index: int, label: str) -> str:
    """A judge call's place beside a cell's generated turns in batch mode: point index and judge."""
    return f"judge:{index}:{label}"


def verdict_for(score: float | None) -> str | None:
    """Weval has no verdicts; the table uses AgentV's (pass ≥ 0.8, borderline ≥ 0.6) for both formats."""
    return None if score is None else verdict(score)


class _Turns:
    """The answers of one cell: every generated turn, with usage and cache/resume flags."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.usage = [0, 0]
        self.latency_ms = 0.0
        self.cached = True
        self.resumed = True


class WevalRun:
    def __init__(self, plan: WevalPlan, options: RunOptions) -> None:
        self.plan = plan
        self.options = options
        self.bp = plan.blueprint
        self.folder = options.output.joinpath(*plan.output_folder_parts)
        self.journal_path = self.folder / f"{plan.results_base}{_replay_suffix(plan)}.journal.jsonl"
        self.state = JournalState()
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self.emit = self.queue.put_nowait
        self.calls = Calls(options, self.emit, concurrency=plan.concurrency)
        self.cost = CostGuard(plan, options, plan.prices)
        self.calls.spend = self.cost.spend
        self.journal: Journal | None = None
        self.scores: dict[Cell, tuple[float | None, str | None]] = {}
        self.failed: set[Cell] = set()
        self.not_run: set[Cell] = set()  # cells a cost cap kept from starting (also in `failed`)
        self.resumed_cells = 0
        self._key_points: dict[str, asyncio.Future[tuple[list[str] | None, str | None]]] = {}
        self._judges: list[tuple[Any, Any]] = []  # (Judge, binding or ProviderError)
        self._judge_problem: str | None = None
        self._bases: dict[int, tuple[Point, dict[str, Any]]] = {}
        self.unscored_points = 0  # judged points left unscored because no judge could be called
        # `--eval-method none`: no judge, no key-point extraction, no embeddings, but the function points
        # still run (they cost nothing) and their results are written as llm-coverage results.
        self.judging = "llm-coverage" in plan.eval_methods
        self.coverage = self.judging or not plan.eval_methods
        self.writer = WevalWriter(plan, self.folder, coverage=self.coverage)
        self.skipped_extractions: set[str] = set()
        self._pending: list[Record] = []  # journal records of this step, written together
        self.batch: BatchStage | None = None  # batch mode: the answers the provider batches gave
        self._journaled: set[Any] = set()  # calls an earlier run of the journal put in a batch

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
        # Usage records wait with the answer or judgement they belong to, and go out in its write.
        self.cost.attach(lambda rec: self._pending.append(rec), self.state.usage)

    def resumed_count(self) -> int:
        return sum(1 for t in self.plan.tasks if t.cell in self.state.scores or
                   (t.cell in self.state.failures and not self.options.retry_errors))

    def prepare(self) -> Iterator[Event]:
        if self._needs_judges():
            self._bind_judges()
        if self._judge_problem:
            yield Notice(f"Judged points will not be scored: {self._judge_problem}", "warning")
        if not self.plan.eval_methods:
            yield Notice("--eval-method none: function points are scored; judged points, key-point "
                         "extraction and embeddings are skipped", "info")

    async def before_cells(self) -> AsyncIterator[Event]:
        from .batch_stage import journaled_slots

        if self.plan.replay is not None:
            return
        self._journaled = journaled_slots(self.journal_path, self.options)
        if self.options.batch or self.options.batch_models or self._journaled:
            async for event in self._batch_phase():
                yield event

    async def after_cells(self) -> AsyncIterator[Event]:
        if "embedding" in self.plan.eval_methods:
            assert self.journal is not None
            async for event in embedding_similarity(self.plan, self.calls, self.journal, self.state.embeddings,
                                                    self.writer, self.failed, self.queue):
                yield event

    def write(self) -> list[Path]:
        return self.writer.write(cost=self.cost.summary())

    async def stop(self) -> None:
        self._flush()

    def write_partial(self) -> None:
        self.writer.write_partial(cost=self.cost.summary())

    def _needs_judges(self) -> bool:
        return "llm-coverage" in self.plan.eval_methods and any(
            any(p.kind == "text" for p in t.prompt.points) or (not t.prompt.points and t.prompt.ideal)
            for t in self.plan.tasks)

    def _bind_judges(self) -> None:
        problems: list[str] = []
        for judge in self.plan.judges:
            try:
                self._judges.append((judge, self.calls.model(judge.model)))
            except ProviderError as err:
                self._judges.append((judge, err))
                problems.append(err.message)
        if not self.plan.judges:
            self._judge_problem = "no judge is configured"
        elif len(problems) == len(self.plan.judges):
            self._judge_problem = "no judge can be called (" + "; ".join(dict.fromkeys(problems)) + ")"

    # --- one cell ---------------------------------------------------------------------------------
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
            answer = await self._generate(task)
        except ProviderError as err:
            self._fail(task, f"Failed to get response for {cell.model}: {err.message}", err.kind)
            return
        except _CellError as err:
            self._fail(task, str(err), err.kind)
            return
        final = answer.texts[-1]
        history = self._history(task, answer.texts)
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
        history = self._history(task, texts or [""])
        self.writer.answered(task, final, history)
        self.emit(Response(cell, final, resumed=True, replayed=self.plan.replay is not None))
        result = done.result
        self.unscored_points += sum(1 for pa in result.get("pointAssessments") or []
                                    if str(pa.get("error") or "").startswith("Not scored:"))
        self.writer.scored(cell, result)
        kp = self.state.key_points.get(cell.item)
        if kp and kp.points:
            self.writer.key_points(cell.item, list(kp.points))
        score = done.score
        verdict = verdict_for(score)
        self.scores[cell] = (score, verdict)
        self.emit(Scored(cell, score, verdict, result, resumed=True))

    def _fail(self, task: WevalTask, message: str, kind: str, *, resumed: bool = False) -> None:
        cell = task.cell
        self.failed.add(cell)
        self.cost.release(cell)
        if kind == NOT_RUN:
            self.not_run.add(cell)
        self.writer.failed(task, message, not_run=kind == NOT_RUN)
        if not resumed and kind != NOT_RUN:
            self._pending.append(Failed(cell, message, kind))
        self._flush()
        self.emit(CellFailed(cell, message, kind, resumed=resumed))

    # --- generation -------------------------------------------------------------------------------
    async def _generate(self, task: WevalTask) -> _Turns:
        """Every generated turn of the conversation: `assistant: null` turns in order, then the final
        answer when the last message is the user's (as the reference does)."""
        out = _Turns()
        if self.plan.replay is not None:
            return self._replayed(task, out)
        messages: list[ChatMessage] = []
        prompt = task.prompt
        for msg in prompt.messages:
            if msg.role == "assistant" and msg.content is None:
                text = await self._turn(task, messages, len(out.texts), out)
                messages.append(ChatMessage("assistant", text))
            else:
                messages.append(ChatMessage(msg.role, msg.content or ""))
        if prompt.messages and prompt.messages[-1].role == "user":
            await self._turn(task, messages, len(out.texts), out)
        if not out.texts:  # a conversation ending on a fixed assistant turn: nothing to generate
            last = next((m.content for m in reversed(prompt.messages) if m.role == "assistant" and m.content), "")
            out.texts.append(last or "")
        return out

    def _replayed(self, task: WevalTask, out: _Turns) -> _Turns:
        rec = self.plan.replay.answer(task.cell)
        if rec is None or rec.text is None:
            raise _CellError(rec.error if rec is not None and rec.error else
                             f"{self.plan.replay.path} has no answer for {task.cell}", "replay")
        out.texts = list(rec.generated) or [rec.text]
        if rec.history and len(out.texts) == 1:
            out.texts = _generated_from_history(task.prompt, rec.history) or out.texts
        out.cached = False
        out.resumed = False
        return out

    async def _turn(self, task: WevalTask, messages: list[ChatMessage], n: int, out: _Turns) -> str:
        cell = task.cell
        done = self.state.turns.get(cell, {}).get(n)
        if done is not None:
            text = done.text
            out.texts.append(text)
            return text
        self._flush()
        result = self.batch.take(cell, n, label=task.model) if self.batch is not None else None
        if result is None:
            binding = self.calls.model(self.plan.model_specs.get(task.model, task.model),
                                       cache=not task.prompt.no_cache)
            req = self._request(task, messages, binding.model_name)
            result = await self.calls.chat(binding.provider, req, cell, limit_key=provider_key(task.model),
                                           model_label=task.model)
        text = result.text
        if not text or not text.strip():
            raise _CellError(f"Failed to get response for {cell.model}: {EMPTY_ANSWER}", "bad_response")
        # Held back until the next await (another turn, a judge) or the score, whichever comes first:
        # nothing else can happen in between, so nothing received can be lost by waiting.
        self._pending.append(Generated(cell, n, text, (result.usage.input_tokens, result.usage.output_tokens),
                                       round(result.latency_ms, 1), result.cached))
        out.texts.append(text)
        out.usage[0] += result.usage.input_tokens
        out.usage[1] += result.usage.output_tokens
        out.latency_ms += result.latency_ms
        out.cached = out.cached and result.cached
        out.resumed = False
        return text

    @staticmethod
    def _request(task: WevalTask, messages: list[ChatMessage], model_name: str) -> ChatRequest:
        """The request of one generated turn (the same in batch mode: batch_stage.py sends this body)."""
        system = task.system
        chat = [m for m in messages if m.role != "system"]
        if any(m.role == "system" for m in messages):  # `system:` turns inside messages join the system prompt
            parts = [system] if system else []
            parts += [m.content for m in messages if m.role == "system"]
            system = "\n\n".join(parts)
        return ChatRequest(model=model_name, messages=tuple(chat), system=system or None,
                           temperature=task.temperature)

    # --- batch mode -------------------------------------------------------------------------------
    async def _batch_phase(self) -> AsyncIterator[Event]:
        """Every first answer the batch APIs can give, before the cells run (run/batch_stage.py)."""
        from .batch_stage import BatchStage

        assert self.journal is not None
        self.batch = BatchStage(calls=self.calls, journal=self.journal, journal_path=self.journal_path,
                                options=self.options)
        async for event in self.batch.run(self._batch_requests()):
            yield event
        if self.judging and not self._judge_problem:
            # The second phase: the judges' calls on the answers the first one returned.
            judge_requests = self._judge_batch_requests()
            if judge_requests:
                async for event in self.batch.run(judge_requests):
                    yield event

    def _batch_requests(self) -> list[BatchRequest]:
        """The calls an interactive run would make first, for the cells batch mode can take: one
        generated turn (a conversation with `assistant: null` turns needs each answer before the next
        request exists), not yet in the journal, not in the response cache."""
        from ..providers.cache import cache_key
        from .batch_stage import BatchRequest, wants_batch

        out: list[BatchRequest] = []
        state = self.state
        for task in self.plan.tasks:
            cell = task.cell
            msgs = task.prompt.messages
            submit = wants_batch(self.options, task.model)
            if not (submit or (cell, 0) in self._journaled) or cell in state.scores or 0 in state.turns.get(cell, {}) \
                    or (cell in state.failures and not self.options.retry_errors):
                continue
            if not msgs or msgs[-1].role != "user" or any(m.role == "assistant" and m.content is None for m in msgs):
                continue
            spec = self.plan.model_specs.get(task.model, task.model)
            try:
                binding = self.calls.model(spec, cache=not task.prompt.no_cache)
            except ProviderError:
                continue  # the cell fails on its own, with the message the interactive path gives
            req = self._request(task, [ChatMessage(m.role, m.content or "") for m in msgs], binding.model_name)
            cache = getattr(binding.provider, "cache", None)
            if cache is not None and cache.get(cache_key(binding.provider.identity(), req)) is not None:
                continue
            if self.cost.refuses(task):
                continue  # a cost cap: the cell is refused when it runs, nothing of it is sent
            out.append(BatchRequest(cell, 0, task.model, spec, binding.provider, req, submit=submit))
        return out

    def _judge_batch_requests(self) -> list[BatchRequest]:
        """Every judge call on a text point of a one-turn cell whose answer is known (from the first
        phase, or the journal of a resumed run) and whose judge has a batch API: the requests
        `_one_judge` would send."""
        from .batch_stage import BatchRequest, wants_batch

        assert self.batch is not None
        judges = [(judge, binding, wants_batch(self.options, judge.model)) for judge, binding in self._judges
                  if not isinstance(binding, ProviderError)]
        out: list[BatchRequest] = []
        if not judges:
            return out
        state = self.state
        for task in self.plan.tasks:
            cell = task.cell
            points = [(i, p) for i, p in enumerate(task.prompt.points) if p.kind == "text"]
            msgs = task.prompt.messages
            if not points or cell in state.scores or not msgs or msgs[-1].role != "user" \
                    or any(m.role == "assistant" and m.content is None for m in msgs):
                continue
            got = self.batch.results.get((cell, 0))
            if isinstance(got, ChatResult):
                text = got.text
            elif got is None and 0 in state.turns.get(cell, {}):
                text = state.turns[cell][0].text
            else:
                continue
            if not text.strip():
                continue  # the cell fails as an empty answer: nothing is judged
            conversation = transcript(self._history(task, [text]))
            for index, point in points:
                for judge, binding, submit in judges:
                    label = judge_label(judge)
                    slot = judge_slot(index, label)
                    if (cell, index, label) in state.judgements or not (submit or (cell, slot) in self._journaled):
                        continue
                    req = self._judge_request(judge, binding, point, text, conversation)
                    out.append(BatchRequest(cell, slot, judge.model, judge.model, binding.provider, req, submit=submit))
        return out

    def _history(self, task: WevalTask, texts: list[str]) -> list[tuple[str, str, bool]]:
        """(role, content, generated) for the whole exchange: system, fixed turns, generated turns."""
        out: list[tuple[str, str, bool]] = []
        if task.system:
            out.append(("system", task.system, False))
        generated = iter(texts)
        for msg in task.prompt.messages:
            if msg.role == "assistant" and msg.content is None:
                out.append(("assistant", next(generated, ""), True))
            else:
                out.append((msg.role, msg.content or "", False))
        if task.prompt.messages and task.prompt.messages[-1].role == "user":
            out.append(("assistant", next(generated, texts[-1] if texts else ""), True))
        return out

    # --- scoring ----------------------------------------------------------------------------------
    async def _score(self, task: WevalTask, texts: list[str], history: list[tuple[str, str, bool]]) -> None:
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
            self._flush()
            key_points, error = await self._extract(prompt)
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
            if point.kind == "fn" and point.fn not in ASYNC_FUNCTIONS:
                # Most points are plain string checks: scored right here, no task, no await.
                assessments[i] = function_assessment(point, evaluate_point(point.fn or "", point.fn_args, subject, ctx),
                                                     self._base(point))
            else:
                waiting.append((i, point))
        if waiting:
            self._flush()  # the answer is on disk before waiting on judges or services
            conversation = transcript(history)

            async def one(index: int, point: Point) -> dict[str, Any]:
                if point.kind == "fn":
                    return await score_function_point(point, subject, ctx, services=self.bp.external_services,
                                                      client=self.calls.client, env=self.options.env)
                return await self._judge_point(cell, index, point, subject, conversation)

            for (i, _), got in zip(waiting, await asyncio.gather(*(one(i, p) for i, p in waiting)), strict=True):
                assessments[i] = got
        score = avg_coverage_extent(CoveragePoint(a.get("coverageExtent"), a.get("multiplier", 1.0), a.get("pathId"))
                                    for a in assessments)
        result: dict[str, Any] = {"keyPointsCount": len(assessments)}
        if score is not None:
            result["avgCoverageExtent"] = score
        result["pointAssessments"] = assessments
        self._scored(cell, result.get("avgCoverageExtent"), result)

    def _base(self, point: Point) -> dict[str, Any]:
        """The point's fixed assessment fields (text, weight, path…), computed once for all models."""
        # Keyed by id() with the point kept beside its base: key points extracted from an ideal are new
        # Point objects, and an id freed by one of them and reused by the next would hand the second
        # point the first one's text.
        key = id(point)
        cached = self._bases.get(key)
        if cached is None or cached[0] is not point:
            cached = self._bases[key] = (point, base_assessment(point))
        return dict(cached[1])

    def _flush(self) -> None:
        """Write the answers held back to go out with their score (one write instead of two)."""
        if self._pending and self.journal is not None:
            self.journal.write(*self._pending)
            self._pending = []

    def _scored(self, cell: Cell, score: float | None, result: dict[str, Any]) -> None:
        self.cost.release(cell)
        self.writer.scored(cell, result)
        verdict = verdict_for(score)
        self.scores[cell] = (score, verdict)
        assert self.journal is not None
        self._pending.append(CellScore(cell, score, verdict, result))
        self._flush()
        self.emit(Scored(cell, score, verdict, result))

    async def _judge_point(self, cell: Cell, index: int, point: Point, subject: str,
                           conversation: str) -> dict[str, Any]:
        """Every judge on one text point, then their consensus (the reference's rule)."""
        out = self._base(point)
        if not self.judging:
            self.unscored_points += 1
            out.update({"coverageExtent": None, "reflection": SKIPPED_JUDGING, "error": SKIPPED_JUDGING,
                        "judgeLog": [SKIPPED_JUDGING]})
            return out
        if self._judge_problem:
            self.unscored_points += 1
            reason = f"Not scored: {self._judge_problem}."
            out.update({"coverageExtent": None, "reflection": reason, "error": reason, "judgeLog": [reason]})
            return out
        verdicts = await asyncio.gather(*(self._one_judge(cell, index, judge, binding, point, subject, conversation)
                                          for judge, binding in self._judges))
        log: list[str] = []
        ok = []
        for (judge, _), v in zip(self._judges, verdicts, strict=True):
            name = judge.id or judge_label(judge)
            if v["error"] is None:
                ok.append(v)
                log.append(f"[{name}] SUCCEEDED. Score: {js_number(v['score'])}")
            else:
                log.append(f"[{name}] FAILED: {v['error']}")
        mean = consensus(v["score"] for v in ok)
        if mean is None:
            log.append(f"FINAL_ERROR: {ALL_JUDGES_FAILED}")
            out.update({"coverageExtent": None, "error": ALL_JUDGES_FAILED, "judgeLog": log})
            return out
        reflection = (f"Consensus from {len(ok)} judge(s). Average score: {js_to_fixed(mean, 2)}. "
                      "See breakdown for individual reflections.")
        if len(ok) < len(self._judges):
            failed = len(self._judges) - len(ok)
            warning = (f"{failed} of {len(self._judges)} judges failed to return a valid assessment. "
                       "The final score is based on a partial consensus.")
            reflection += f"\n\nWARNING: {warning}"
            log.append(f"WARNING: {warning}")
            out["error"] = warning
        out["coverageExtent"] = invert(mean) if point.inverted else mean
        out["reflection"] = inverted_reflection(reflection) if point.inverted else reflection
        out["judgeModelId"] = consensus_judge_id([v["judge"] for v in ok])
        out["judgeLog"] = log
        out["individualJudgements"] = [{"judgeModelId": v["judge"], "coverageExtent": v["score"],
                                        "reflection": v["reflection"]} for v in ok]
        return out

    async def _one_judge(self, cell: Cell, index: int, judge: Any, binding: Any, point: Point, subject: str,
                         conversation: str) -> dict[str, Any]:
        label = judge_label(judge)
        done = self.state.judgements.get((cell, index, label))
        if isinstance(done, Judged) and not (self.options.retry_errors and done.error):
            return {"judge": label, "score": done.score, "reflection": done.reflection, "error": done.error}
        if isinstance(binding, ProviderError):
            return {"judge": label, "score": None, "reflection": None, "error": binding.message}
        req = self._judge_request(judge, binding, point, subject, conversation)
        try:
            result = (self.batch.take(cell, judge_slot(index, label), purpose="judge", label=label)
                      if self.batch is not None else None)
            if result is None:
                result = await self.calls.chat(binding.provider, req, cell, limit_key=provider_key(judge.model),
                                               purpose="judge", model_label=label)
            answer = parse_judge_answer(result.text)
        except ProviderError as err:
            record = Judged(cell, index, label, None, None, f"Client/Network error: {err.message}")
        except JudgeAnswerError as err:
            record = Judged(cell, index, label, None, None, str(err))
        else:
            record = Judged(cell, index, label, answer.score, answer.reflection, None)
        self._pending.append(record)  # with the call's usage record (cost_guard.attach), in one write
        self._flush()
        return {"judge": label, "score": record.score, "reflection": record.reflection, "error": record.error}

    def _judge_request(self, judge: Any, binding: Any, point: Point, subject: str, conversation: str) -> ChatRequest:
        system, user = judge_messages(judge, conversation=conversation, text=subject, criterion=point.text or "",
                                      suite_description=self.bp.description)
        return ChatRequest(model=binding.model_name, messages=(ChatMessage("user", user),), system=system,
                           temperature=0.0, max_tokens=JUDGE_MAX_TOKENS)

    async def _extract(self, prompt: Prompt) -> tuple[list[str] | None, str | None]:
        """Key points from the ideal, once per prompt (all models share them), journaled."""
        fut = self._key_points.get(prompt.id)
        if fut is None:
            fut = self._key_points[prompt.id] = asyncio.ensure_future(self._extract_once(prompt))
        points, error = await asyncio.shield(fut)
        if points:
            self.writer.key_points(prompt.id, points)
        return points, error

    async def _extract_once(self, prompt: Prompt) -> tuple[list[str] | None, str | None]:
        done = self.state.key_points.get(prompt.id)
        if done is not None and done.points:
            return list(done.points), None
        if self._judge_problem and not self.options.judges and not self.bp.judge_models:
            return None, self._judge_problem
        cell = Cell(prompt.id, "")
        conversation = transcript([(m.role, m.content or "<TO_BE_GENERATED>", False) for m in prompt.messages])
        errors: list[str] = []
        for model in self.plan.key_point_models:
            try:
                binding = self.calls.model(model)
                req = ChatRequest(model=binding.model_name, system=EXTRACT_SYSTEM, temperature=0.0,
                                  messages=(ChatMessage("user", extraction_prompt(prompt.ideal or "", conversation)),))
                result = await self.calls.chat(binding.provider, req, cell, limit_key=provider_key(model),
                                               purpose="extract", model_label=model)
            except ProviderError as err:
                errors.append(err.message)
                continue
            points = parse_key_points(result.text)
            if points:
                self._pending.append(KeyPoints(prompt.id, model, tuple(points)))
                self._flush()
                return points, None
            errors.append(f"{model}: no <key_point> in the answer")
        return None, "; ".join(dict.fromkeys(errors)) or "no judge model to extract key points"

    # --- the end ----------------------------------------------------------------------------------
    def summary(self, files: list[Path]) -> RunSummary:
        rows: list[ModelSummary] = []
        for model in self.plan.effective_models:
            cells = [t.cell for t in self.plan.tasks if t.cell.model == model]
            scored = [self.scores[c][0] for c in cells if c in self.scores and self.scores[c][0] is not None]
            verdicts = [self.scores[c][1] for c in cells if c in self.scores]
            rows.append(ModelSummary(
                model=model, cells=len(cells), scored=len(scored),
                mean=sum(scored) / len(scored) if scored else None,  # type: ignore[arg-type]
                passed=verdicts.count("pass"), borderline=verdicts.count("borderline"),
                failed=verdicts.count("fail"), not_scored=sum(1 for c in cells if (c in self.scores
                                                              and self.scores[c][0] is None) or c in self.not_run),
                errors=sum(1 for c in cells if c in self.failed and c not in self.not_run)))
        notes = []
        if not self.plan.eval_methods:
            skipped = [f"{self.unscored_points} judged point(s)"]
            if self.skipped_extractions:
                skipped.append(f"key-point extraction for {len(self.skipped_extractions)} prompt(s)")
            notes.append(f"--eval-method none: function points were scored; skipped {', '.join(skipped)} "
                         "and embeddings")
        elif self.unscored_points:
            why = self._judge_problem or "no judge could be called"
            notes.append(f"{self.unscored_points} judged point(s) not scored: {why}")
        points_not_scored = sum(1 for by_model in self.writer.results.coverage.values() for result in by_model.values()
                                if isinstance(result, dict)
                                for pa in result.get("pointAssessments") or [] if isinstance(pa, dict) and pa.get("error"))
        if self.cost.stopped:
            notes.append(self.cost.stopped)
        return RunSummary(kind="weval", run_label=self.plan.run_label, models=tuple(rows),
                          files=tuple(str(f) for f in files), calls=self.calls.calls, cached=self.calls.cached,
                          resumed=self.resumed_cells, notes=tuple(notes), points_not_scored=points_not_scored,
                          cost=self.cost.summary(), stopped=self.cost.stopped)


class _CellError(Exception):
    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def _has_errors(result: Any) -> bool:
    if not isinstance(result, dict):
        return False
    if result.get("error") == NO_POINTS:
        return False  # nothing to retry: the prompt itself has nothing to score
    if result.get("error"):
        return True
    return any(isinstance(pa, dict) and pa.get("error") for pa in result.get("pointAssessments") or [])


def _generated_from_history(prompt: Prompt, history: list[dict[str, Any]]) -> list[str]:
    """The generated turns of a recorded conversation: assistant turns at the prompt's `null` places,
    then the final answer when the prompt ends on a user turn."""
    assistants = [str(m.get("content") or "") for m in history if isinstance(m, dict) and m.get("role") == "assistant"]
    out: list[str] = []
    i = 0
    for msg in prompt.messages:
        if msg.role == "assistant":
            if i < len(assistants) and msg.content is None:
                out.append(assistants[i])
            i += 1
    if prompt.messages and prompt.messages[-1].role == "user" and i < len(assistants):
        out.append(assistants[i])
    return out


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
