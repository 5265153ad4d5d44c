"""The judge stage of scoring: what an LLM judges, journaled so `--resume` asks no judge twice.

Weval (`WevalJudges`): every judge on a text point, then their consensus (the reference's rule), and
the key points extracted from a prompt's `ideal` once for all models; the judge's prompt and scale are
score/weval_judge.py, the arithmetic scoring/weval_aggregate. In batch mode the key-point extractions go
out with the first answers (`extraction_requests`: they need the prompt alone), and the judges' calls on
the answers a batch returned, written and extracted points alike, as a last batch (`batch_requests`).

AgentV's judges are score/agentv_judges.py (neither format's run loads the other's judge modules).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Container, Iterator
from typing import TYPE_CHECKING, Any

from ...providers.base import ChatMessage, ChatRequest, ProviderError
from ...scoring.js_text import to_fixed
from ...scoring.weval_aggregate import (
    ALL_JUDGES_FAILED,
    JudgeAnswerError,
    consensus,
    consensus_judge_id,
    invert,
    inverted_reflection,
    parse_judge_answer,
)
from ...weval.ids import js_number
from ...weval.model import Judge, Point, Prompt
from ..events import Cell
from ..generate.answers import weval_history
from ..generate.calls import Calls, provider_key
from ..journal.held_records import HeldRecords
from ..journal.records import Judged, KeyPoints
from ..journal.run_store import JournalState
from ..options import RunOptions
from .functions import AssessmentBases
from .judge_calls import extract_slot, judge_slot
from .weval_judge import (
    BACKUP_JUDGE,
    EXTRACT_SYSTEM,
    JUDGE_MAX_TOKENS,
    extraction_prompt,
    judge_label,
    judge_messages,
    parse_key_points,
    transcript,
)

if TYPE_CHECKING:
    from ...providers.factory import ModelBinding
    from ..generate.batch_stage import BatchRequest, BatchStage
    from ..plan.weval import WevalPlan

SKIPPED_JUDGING = "Not scored: --eval-method none skips judged points."
KEY_POINTS_AT_ONCE = 256  # batch mode: extracted key points read (and, when they have none, asked again) together


# --- Weval ----------------------------------------------------------------------------------------

def judged_assessment(out: dict[str, Any], point: Point, judges: list[Judge], verdicts: list[dict[str, Any]],
                      backup: dict[str, Any] | None) -> dict[str, Any]:
    """A judged point's assessment from its judges' verdicts ({judge, score, reflection, error}), as the
    reference's evaluateSinglePoint makes it: the mean of those that succeeded, the backup judge's
    (asked when a default judge failed) averaged in, rounded with toFixed(2), then inverted for should_not."""
    log: list[str] = []
    ok = []
    for judge, v in zip(judges, verdicts, strict=True):
        name = judge.id or judge_label(judge)
        if v["error"] is None:
            ok.append(v)
            log.append(f"[{name}] SUCCEEDED. Score: {js_number(v['score'])}")
        else:
            log.append(f"[{name}] FAILED: {v['error']}")
    used_backup = False
    if backup is not None:
        log.append(f"PRIMARY_PHASE_COMPLETE: {len(ok)}/{len(judges)} judges succeeded. Activating backup judge.")
        if backup["error"] is None:
            ok.append(backup)
            used_backup = True
            log.append(f"[{BACKUP_JUDGE.id}] BACKUP SUCCEEDED. Score: {js_number(backup['score'])}")
        else:
            log.append(f"[{BACKUP_JUDGE.id}] BACKUP FAILED: {backup['error']}")
    mean = consensus(v["score"] for v in ok)
    if mean is None:
        log.append(f"FINAL_ERROR: {ALL_JUDGES_FAILED}")
        out.update({"coverageExtent": None, "error": ALL_JUDGES_FAILED, "judgeLog": log})
        return out
    reflection = (f"Consensus from {len(ok)} judge(s). Average score: {to_fixed(mean, 2)}. "
                  "See breakdown for individual reflections.")
    if len(ok) < len(judges) and not used_backup:
        failed = len(judges) - len(ok)
        warning = (f"{failed} of {len(judges)} judges failed to return a valid assessment. The backup judge was not "
                   "used or also failed. The final score is based on a partial consensus.")
        reflection += f"\n\nWARNING: {warning}"
        log.append(f"WARNING: {warning}")
        out["error"] = warning
    elif used_backup:
        log.append("BACKUP_USED: Backup judge was successfully used to supplement failed primary judges.")
        reflection += "\n\nNOTE: Backup judge was used to supplement failed primary judges."
    out["coverageExtent"] = invert(mean) if point.inverted else mean
    out["reflection"] = inverted_reflection(reflection) if point.inverted else reflection
    out["judgeModelId"] = consensus_judge_id([v["judge"] for v in ok])
    out["judgeLog"] = log
    out["individualJudgements"] = [{"judgeModelId": v["judge"], "coverageExtent": v["score"],
                                    "reflection": v["reflection"]} for v in ok]
    return out


class WevalJudges:
    def __init__(self, plan: WevalPlan, options: RunOptions, calls: Calls, state: JournalState, held: HeldRecords,
                 bases: AssessmentBases) -> None:
        self.plan = plan
        self.options = options
        self.calls = calls
        self.state = state
        self.held = held
        self.bases = bases
        # `--eval-method none`: no judge, no key-point extraction.
        self.judging = "llm-coverage" in plan.eval_methods
        self.judges: list[tuple[Judge, ModelBinding | ProviderError]] = []
        self.problem: str | None = None  # why no judge can be called
        # the reference's backup judge, with the default judges only (weval_judge.BACKUP_JUDGE)
        self.backup: tuple[Judge, ModelBinding | ProviderError] | None = None
        self.unscored_points = 0  # judged points left unscored because no judge could be called
        self.batch: BatchStage | None = None  # batch mode: the judgements the provider batches gave
        self.generate: Any = None  # batch mode: the generate stage, which knows the answers batched so far
        self._key_points: dict[str, asyncio.Future[tuple[list[str] | None, str | None]]] = {}
        # Batch mode: the key points take_key_points extracted, as tuples (a finished Task each was ~1 KB:
        # 25 MB at 100,000 prompts).
        self._extracted: dict[str, tuple[str, ...]] = {}

    def bind(self) -> None:
        """The judges' providers, when some point will be judged; `problem` says why none can be."""
        if not ("llm-coverage" in self.plan.eval_methods and self._any_judged()):
            return
        problems: list[str] = []
        for judge in self.plan.judges:
            try:
                self.judges.append((judge, self.calls.model(judge.model)))
            except ProviderError as err:
                self.judges.append((judge, err))
                problems.append(err.message)
        if self.plan.judge_source == "default":
            try:
                self.backup = (BACKUP_JUDGE, self.calls.model(BACKUP_JUDGE.model))
            except ProviderError as err:
                self.backup = (BACKUP_JUDGE, err)
        if not self.plan.judges:
            self.problem = "no judge is configured"
        elif len(problems) == len(self.plan.judges):
            self.problem = "no judge can be called (" + "; ".join(dict.fromkeys(problems)) + ")"

    def _any_judged(self) -> bool:
        """Whether some cell has a text point or key points to extract: from the plan's facts of its
        prompts (read in one pass and kept) when every prompt has cells (not a replay), else cell by cell."""
        from ..plan.weval import WevalTasks

        plan = self.plan
        if isinstance(plan.tasks, WevalTasks) and plan.tasks.prompts is plan.prompts and plan.replay is None:
            return plan.any_judged()
        return any(any(p.kind == "text" for p in t.prompt.points) or (not t.prompt.has_points and t.prompt.ideal)
                   for t in plan.tasks)

    async def point(self, cell: Cell, index: int, point: Point, subject: str, conversation: str) -> dict[str, Any]:
        """Every judge on one text point, then their consensus (the reference's rule)."""
        out = self.bases(point)
        if not self.judging:
            self.unscored_points += 1
            out.update({"coverageExtent": None, "reflection": SKIPPED_JUDGING, "error": SKIPPED_JUDGING,
                        "judgeLog": [SKIPPED_JUDGING]})
            return out
        if self.problem:
            self.unscored_points += 1
            reason = f"Not scored: {self.problem}."
            out.update({"coverageExtent": None, "reflection": reason, "error": reason, "judgeLog": [reason]})
            return out
        verdicts = await asyncio.gather(*(self._one(cell, index, judge, binding, point, subject, conversation)
                                          for judge, binding in self.judges))
        backup = None
        if self.backup is not None and any(v["error"] is not None for v in verdicts):
            backup = await self._one(cell, index, self.backup[0], self.backup[1], point, subject, conversation)
        return judged_assessment(out, point, [judge for judge, _ in self.judges], list(verdicts), backup)

    async def _one(self, cell: Cell, index: int, judge: Judge, binding: ModelBinding | ProviderError, point: Point,
                   subject: str, conversation: str) -> dict[str, Any]:
        label = judge_label(judge)
        done = self.state.judgements.get((cell, index, label))
        if isinstance(done, Judged) and not (self.options.retry_errors and done.error):
            return {"judge": label, "score": done.score, "reflection": done.reflection, "error": done.error}
        if isinstance(binding, ProviderError):
            return {"judge": label, "score": None, "reflection": None, "error": binding.message}
        req = self._request(judge, binding, point, subject, conversation)
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
        self.held.hold(record)  # with the call's usage record (cost_guard.attach), in one write
        self.held.flush()
        return {"judge": label, "score": record.score, "reflection": record.reflection, "error": record.error}

    def _request(self, judge: Judge, binding: ModelBinding, point: Point, subject: str, conversation: str
                 ) -> ChatRequest:
        system, user = judge_messages(judge, conversation=conversation, text=subject, criterion=point.text or "",
                                      suite_description=self.plan.blueprint.description)
        return ChatRequest(model=binding.model_name, messages=(ChatMessage("user", user),), system=system,
                           temperature=0.0, max_tokens=JUDGE_MAX_TOKENS)

    async def key_points(self, prompt: Prompt) -> tuple[list[str] | None, str | None]:
        """Key points from the ideal, once per prompt (all models share them), journaled; or the error."""
        extracted = self._extracted.get(prompt.id)
        if extracted is not None:
            return list(extracted), None
        fut = self._key_points.get(prompt.id)
        if fut is None:
            fut = self._key_points[prompt.id] = asyncio.ensure_future(self._extract(prompt))
        return await asyncio.shield(fut)

    async def _extract(self, prompt: Prompt) -> tuple[list[str] | None, str | None]:
        done = self.state.key_points.get(prompt.id)
        if done is not None and done.points:
            return list(done.points), None
        if self.problem and not self.options.judges and not self.plan.blueprint.judge_models:
            return None, self.problem
        cell = Cell(prompt.id, "")
        conversation = transcript([(m.role, m.content or "<TO_BE_GENERATED>", False) for m in prompt.messages])
        errors: list[str] = []
        for model in self.plan.key_point_models:
            try:
                binding = self.calls.model(model)
                req = self._extraction_request(binding, prompt, conversation)
                result = (self.batch.take(cell, extract_slot(model), purpose="extract", label=model)
                          if self.batch is not None else None)
                if result is None:
                    result = await self.calls.chat(binding.provider, req, cell, limit_key=provider_key(model),
                                                   purpose="extract", model_label=model)
            except ProviderError as err:
                errors.append(err.message)
                continue
            points = parse_key_points(result.text)
            if points:
                self.held.hold(KeyPoints(prompt.id, model, tuple(points)))
                self.held.flush()
                return points, None
            errors.append(f"{model}: no <key_point> in the answer")
        return None, "; ".join(dict.fromkeys(errors)) or "no judge model to extract key points"

    @staticmethod
    def _extraction_request(binding: ModelBinding, prompt: Prompt, conversation: str) -> ChatRequest:
        return ChatRequest(model=binding.model_name, system=EXTRACT_SYSTEM, temperature=0.0,
                           messages=(ChatMessage("user", extraction_prompt(prompt.ideal or "", conversation)),))

    def extracts(self) -> bool:
        """Whether key points are extracted at all (`_extract`'s conditions)."""
        return self.judging and bool(self.plan.key_point_models) and not (
            self.problem and not self.options.judges and not self.plan.blueprint.judge_models)

    def extraction_requests(self, journaled: Container[Any], admitted: Callable[[Cell], bool]) -> Iterator[BatchRequest]:
        """Batch mode: the key-point extraction `_extract` would ask of the first key-point model, for every
        prompt with an `ideal` and no points whose key points are not in the journal and some of whose
        cells will run (not scored or failed already, admitted by a cost cap: `admitted`). The extraction
        reads the prompt alone, so it goes out with the first answers; a model after the first is asked
        one by one, only when the first gives no key points (as interactively). Made one at a time as the
        batch stage reads them."""
        from ...providers.cache import CachedProvider, cache_key
        from ..generate.batch_stage import BatchRequest, wants_batch

        if not self.extracts():
            return
        model = self.plan.key_point_models[0]
        submit = wants_batch(self.options, model)
        try:
            binding = self.calls.model(model)
        except ProviderError:
            return  # each prompt's extraction fails on its own, with the interactive path's message
        state = self.state
        decided: set[str] = set()
        for task in self.plan.tasks:
            prompt = task.prompt
            cell = task.cell
            if prompt.id in decided or prompt.has_points or not prompt.ideal:
                continue
            done = state.key_points.get(prompt.id)
            if (done is not None and done.points) or cell in state.scores \
                    or (cell in state.failures and not self.options.retry_errors) or not admitted(cell):
                continue  # this cell asks for no key points; another cell of the prompt may
            decided.add(prompt.id)
            slot = extract_slot(model)
            where = Cell(prompt.id, "")
            if not (submit or (where, slot) in journaled):
                continue
            conversation = transcript([(m.role, m.content or "<TO_BE_GENERATED>", False) for m in prompt.messages])
            req = self._extraction_request(binding, prompt, conversation)
            provider = binding.provider
            if isinstance(provider, CachedProvider) \
                    and provider.cache.get(cache_key(provider.identity(), req)) is not None:
                continue  # answered from the response cache when the cell asks
            yield BatchRequest(where, slot, model, model, provider, req, submit=submit)

    async def take_key_points(self) -> None:
        """Batch mode, after the phase that sent the extractions: each prompt's key points from its batch
        answer, journaled as `key_points` would (so the judges of the extracted points can batch); an
        extraction the batch did not answer is left to the prompt's first cell. A prompt at a time: its
        key points are kept (`known_key_points`), its answer is not."""
        assert self.batch is not None
        if not self.extracts():
            return
        slot = extract_slot(self.plan.key_point_models[0])
        last = None
        prompts: list[Prompt] = []
        for task in self.plan.tasks:
            prompt = task.prompt
            if prompt.id == last or prompt.has_points or not prompt.ideal:
                continue
            last = prompt.id
            if prompt.id not in self._key_points and prompt.id not in self._extracted \
                    and self.batch.has_answer(Cell(prompt.id, ""), slot):
                prompts.append(prompt)
            if len(prompts) >= KEY_POINTS_AT_ONCE:  # an extraction without key points asks the next model
                await self._take(prompts)
                prompts.clear()
        await self._take(prompts)

    async def _take(self, prompts: list[Prompt]) -> None:
        """These prompts' key points, kept as tuples (the Tasks that got them let go)."""
        for prompt, (points, _) in zip(prompts, await asyncio.gather(*(self.key_points(p) for p in prompts)),
                                       strict=True):
            if points is not None:
                self._extracted[prompt.id] = tuple(points)
                self._key_points.pop(prompt.id, None)

    def known_key_points(self, prompt: Prompt) -> list[str] | None:
        """A prompt's extracted key points as far as they are known before the cells run: the journal's,
        else what take_key_points extracted."""
        done = self.state.key_points.get(prompt.id)
        if done is not None and done.points:
            return list(done.points)
        extracted = self._extracted.get(prompt.id)
        if extracted is not None:
            return list(extracted)
        fut = self._key_points.get(prompt.id)
        if fut is not None and fut.done() and not fut.cancelled() and fut.exception() is None:
            return fut.result()[0]
        return None

    def batch_requests(self, journaled: Container[Any]) -> Iterator[BatchRequest]:
        """Every judge call on a text point of a cell whose answers are all known (from the batches of
        the answer phases, or the journal of a resumed run) and whose judge has a batch API, the key points
        extracted from an ideal (when known: take_key_points) included: the requests
        `_one` would send. `journaled`: the calls an earlier run of the journal put in a batch. Made one at a
        time as the batch stage reads them (a 10,000-prompt judged blueprint has 80,000)."""
        from ..generate.batch_stage import BatchRequest, wants_batch

        assert self.batch is not None and self.generate is not None
        judges = [(judge, binding, wants_batch(self.options, judge.model)) for judge, binding in self.judges
                  if not isinstance(binding, ProviderError)]
        if not judges:
            return
        state = self.state
        for task in self.plan.tasks:
            cell = task.cell
            prompt = task.prompt
            points = [(i, p) for i, p in enumerate(prompt.points) if p.kind == "text"]
            if not prompt.has_points and prompt.ideal:  # judged on the key points extracted from the ideal
                extracted = self.known_key_points(prompt)
                points = [(i, Point(kind="text", text=t, span=prompt.span)) for i, t in enumerate(extracted or [])]
            count = self.generate.generated_turns(task)
            if not points or cell in state.scores or not count:
                continue
            done = state.turns.get(cell, {})
            texts = [self.generate.known_text(cell, n, done) for n in range(count)]
            if not all(t and t.strip() for t in texts):
                continue  # a turn not answered yet, or empty (the cell fails on its own): nothing is judged
            known = [t for t in texts if t]
            # As the cell scores it: the generated turns joined by a blank line, in the whole exchange.
            text = "\n\n".join(known)
            conversation = transcript(weval_history(task, known))
            for index, point in points:
                for judge, binding, submit in judges:
                    label = judge_label(judge)
                    slot = judge_slot(index, label)
                    if (cell, index, label) in state.judgements or not (submit or (cell, slot) in journaled):
                        continue
                    req = self._request(judge, binding, point, text, conversation)
                    yield BatchRequest(cell, slot, judge.model, judge.model, binding.provider, req, submit=submit)
