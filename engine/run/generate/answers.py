"""The generate stage: a cell's answers, from the journal (`--resume`), a provider batch, a replayed
run (`-m replay:`) or a call to the model, with the requests those calls send.

`WevalGenerate` produces every generated turn of a Weval conversation (`assistant: null` turns in
order, then the final answer when the last message is the user's, as the reference does);
`AgentvGenerate` asks a test's target once per attempt and prices the call. Both build the request a
batch would carry for the same cell (generate/batch_stage.py sends it), so a batched answer is the one an
interactive run would have got.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Container, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...pricing import call_cost
from ...providers.base import ChatMessage, ChatRequest, ChatResult, Provider, ProviderError, ToolCall
from ...providers.tool_calls import calls_from_json
from ..events import Cell
from ..journal.held_records import HeldRecords
from ..journal.records import Generated
from ..journal.run_store import Journal, JournalState
from ..options import RunOptions
from .calls import Calls, provider_key

if TYPE_CHECKING:
    from ...weval.model import Prompt
    from ..plan.agentv import AgentvPlan, AgentvTask, TargetSpec
    from ..plan.weval import WevalPlan, WevalTask
    from .batch_rounds import BatchRounds
    from .batch_stage import BatchRequest, BatchStage

# targets.yaml providers whose calls batch mode can send through a batch API (OpenAI, Anthropic, Gemini).
BATCH_KINDS = frozenset({"openai", "anthropic", "gemini", "google", "google-gemini"})
EMPTY_ANSWER = "Model returned an empty or whitespace-only response."
_UNSET = object()


class CellError(Exception):
    """A cell that cannot get its answer (an empty answer, a replay without one): it fails with `kind`."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class Turns:
    """The answers of one cell: every generated turn, with usage and cache/resume flags."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.usage = [0, 0]
        self.latency_ms = 0.0
        self.cached = True
        self.resumed = True


# --- Weval ----------------------------------------------------------------------------------------

class WevalGenerate:
    def __init__(self, plan: WevalPlan, options: RunOptions, calls: Calls, state: JournalState,
                 held: HeldRecords) -> None:
        self.plan = plan
        self.options = options
        self.calls = calls
        self.state = state
        self.held = held
        self.batch: BatchStage | None = None  # batch mode: the answers the provider batches gave
        self._admitted: set[Cell] = set()  # cells a cost cap admitted before their first batched turn

    async def turns(self, task: WevalTask) -> Turns:
        """Every generated turn of the conversation: `assistant: null` turns in order, then the final
        answer when the last message is the user's (as the reference does). Raises ProviderError or
        CellError."""
        out = Turns()
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

    def _replayed(self, task: WevalTask, out: Turns) -> Turns:
        replay = self.plan.replay
        assert replay is not None
        rec = replay.answer(task.cell)
        if rec is None or rec.text is None:
            raise CellError(rec.error if rec is not None and rec.error else
                            f"{replay.path} has no answer for {task.cell}", "replay")
        out.texts = list(rec.generated) or [rec.text]
        if rec.history and len(out.texts) == 1:
            out.texts = generated_from_history(task.prompt, rec.history) or out.texts
        out.cached = False
        out.resumed = False
        return out

    async def _turn(self, task: WevalTask, messages: list[ChatMessage], n: int, out: Turns) -> str:
        cell = task.cell
        turns = self.state.turns  # empty in a fresh run
        done = turns[cell].get(n) if turns and cell in turns else None
        if done is not None:
            text = done.text
            out.texts.append(text)
            return text
        self.held.flush()
        result = self.batch.take(cell, n, label=task.model) if self.batch is not None else None
        if result is None:
            binding = self.calls.model(self.plan.model_specs.get(task.model, task.model),
                                       cache=not task.prompt.no_cache)
            req = weval_request(task, messages, binding.model_name)
            result = await self.calls.chat(binding.provider, req, cell, limit_key=provider_key(task.model),
                                           model_label=task.model)
        text = result.text
        if not text or not text.strip():
            raise CellError(f"Failed to get response for {cell.model}: {EMPTY_ANSWER}", "bad_response")
        # Held back until the next await (another turn, a judge) or the score, whichever comes first:
        # nothing else can happen in between, so nothing received can be lost by waiting.
        self.held.hold(Generated(cell, n, text, (result.usage.input_tokens, result.usage.output_tokens),
                                 round(result.latency_ms, 1), result.cached))
        out.texts.append(text)
        out.usage[0] += result.usage.input_tokens
        out.usage[1] += result.usage.output_tokens
        out.latency_ms += result.latency_ms
        out.cached = out.cached and result.cached
        out.resumed = False
        return text

    def batch_requests(self, journaled: Container[Any], refuses: Callable[[WevalTask], bool] | None,
                       turn: int = 0) -> Iterator[BatchRequest]:
        """The calls an interactive run would make for generated turn `turn` of every cell batch mode can
        take: its earlier turns known (answered by the batches of the earlier phases, or in the journal),
        this one not yet in the journal nor in the response cache. A conversation with `assistant: null`
        turns is batched phase by phase: each phase's requests hold the answers the one before returned.
        `journaled`: the calls an earlier run of the journal put in a batch; `refuses`: a cost cap that
        will refuse the cell (asked once per cell, before its first batched turn; None without a cap: a set
        of the admitted cells was ~16 MB at 200,000 cells). Made one at a time as the batch stage reads them."""
        from ...providers.cache import CachedProvider, cache_key
        from .batch_stage import BatchRequest, wants_batch

        state = self.state
        for task in self.plan.tasks:
            cell = task.cell
            submit = wants_batch(self.options, task.model)
            done = state.turns.get(cell, {})
            if not (submit or (cell, turn) in journaled) or cell in state.scores or turn in done \
                    or (cell in state.failures and not self.options.retry_errors):
                continue
            messages = self._messages_before(task, turn, done)
            if messages is None:
                continue
            spec = self.plan.model_specs.get(task.model, task.model)
            try:
                binding = self.calls.model(spec, cache=not task.prompt.no_cache)
            except ProviderError:
                continue  # the cell fails on its own, with the message the interactive path gives
            req = weval_request(task, messages, binding.model_name)
            provider = binding.provider
            if isinstance(provider, CachedProvider) \
                    and provider.cache.get(cache_key(provider.identity(), req)) is not None:
                continue  # answered from the response cache when the cell runs
            if refuses is not None and cell not in self._admitted:
                if refuses(task):
                    continue  # a cost cap: the cell is refused when it runs, nothing of it is sent
                self._admitted.add(cell)
            yield BatchRequest(cell, turn, task.model, spec, binding.provider, req, submit=submit)

    def _messages_before(self, task: WevalTask, turn: int, done: Any) -> list[ChatMessage] | None:
        """The messages of generated turn `turn`'s request, the turns before it filled with their answers
        (as `turns` builds them); None when the prompt has no such turn or an earlier answer is not
        known yet (or is empty: the cell then fails on its own)."""
        messages: list[ChatMessage] = []
        n = 0
        for msg in task.prompt.messages:
            if msg.role == "assistant" and msg.content is None:
                if n == turn:
                    return messages
                text = self.known_text(task.cell, n, done)
                if not text:
                    return None
                messages.append(ChatMessage("assistant", text))
                n += 1
            else:
                messages.append(ChatMessage(msg.role, msg.content or ""))
        if n == turn and task.prompt.messages and task.prompt.messages[-1].role == "user":
            return messages
        return None

    def known_text(self, cell: Any, n: int, done: Any) -> str | None:
        """Generated turn `n` of `cell` as far as it is known before the cells run: the journal's, else
        what a batch answered (None: not known, or the batch's answer is an error)."""
        rec = done.get(n)
        if rec is not None:
            return str(rec.text)
        got = self.batch.answer(cell, n) if self.batch is not None else None
        return got.text if isinstance(got, ChatResult) else None

    def generated_turns(self, task: WevalTask) -> int:
        """How many turns of the prompt the model generates (`assistant: null` turns, then the final
        answer when the prompt ends on a user turn)."""
        msgs = task.prompt.messages
        return sum(1 for m in msgs if m.role == "assistant" and m.content is None) + \
            (1 if msgs and msgs[-1].role == "user" else 0)


def weval_request(task: WevalTask, messages: list[ChatMessage], model_name: str) -> ChatRequest:
    """The request of one generated turn (the same in batch mode: generate/batch_stage.py sends this body)."""
    system = task.system
    chat = [m for m in messages if m.role != "system"]
    if len(chat) < len(messages):  # `system:` turns inside messages join the system prompt
        parts = [system] if system else []
        parts += [m.content for m in messages if m.role == "system"]
        system = "\n\n".join(parts)
    return ChatRequest(model=model_name, messages=tuple(chat), system=system or None,
                       temperature=task.temperature)


def weval_history(task: WevalTask, texts: list[str]) -> list[tuple[str, str, bool]]:
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


def as_messages(history: list[tuple[str, str, bool]]) -> list[dict[str, str]]:
    """`weval_history`'s exchange as {role, content}: the comparison's history and a point's messages."""
    return [{"role": r, "content": c} for r, c, _ in history]


def generated_from_history(prompt: Prompt, history: list[dict[str, Any]]) -> list[str]:
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


# --- AgentV ---------------------------------------------------------------------------------------

class ReplayedFailure(Exception):
    """A replayed cell whose recorded run failed: it fails again, with the recorded message."""


# (text, (input, output) tokens or None when the target reported none, latency ms, cached, model,
# tool calls, the cost the target reported itself or None)
Answer = tuple[str, tuple[int, int] | None, float, bool, str | None, tuple[ToolCall, ...], float | None]


# A target's settings that become generation parameters (providers/targets.py `_parameters`).
TARGET_GENERATION_SETTINGS = frozenset({"temperature", "max_output_tokens", "maxOutputTokens", "max_tokens",
                                        "maxTokens"})


class AgentvGenerate:
    def __init__(self, plan: AgentvPlan, options: RunOptions, calls: Calls, state: JournalState,
                 journal: Journal) -> None:
        self.plan = plan
        self.options = options
        self.calls = calls
        self.state = state
        self.journal = journal
        self.batch: BatchStage | None = None  # batch mode: the answers the provider batches gave
        self.rounds: BatchRounds | None = None  # batch mode: later trials, batched as the cells ask them
        self._prices: dict[tuple[str | None, str], Any] = {}
        self._base_dir = plan.path.parent  # where a target's relative paths start
        # Imported here: it brings AgentV's model, ~0.1 s of imports a Weval run never needs.
        from .agentv_messages import chat_messages, target_system

        self._chat_messages = chat_messages
        self._target_system = target_system

    def provider(self, spec: TargetSpec) -> tuple[Provider, str]:
        """The provider of a target (targets.yaml entry or model id) and the model name to send."""
        if spec.config is not None:
            return self.calls.target(spec.name, spec.config, base_dir=self._base_dir), ""
        binding = self.calls.model(spec.model or spec.name)
        return binding.provider, binding.model_name

    def judge_provider(self, spec: TargetSpec) -> tuple[Provider, str]:
        """The provider an LLM judge asks (llm-judge, rubrics, a composite's aggregator, agent-judge): the
        target's, without its generation settings, which AgentV applies to a target's answers only (its judges
        call the AI SDK model with none: `temperature`, `max_output_tokens` are not sent)."""
        if spec.config is None:
            return self.provider(spec)
        config = {k: v for k, v in spec.config.items() if k not in TARGET_GENERATION_SETTINGS}
        return self.calls.target(spec.name, config, base_dir=self._base_dir, key=f"judge:{spec.name}"), ""

    def request(self, task: AgentvTask, model_name: str) -> ChatRequest:
        """The test's input as the target's request (the same in batch mode)."""
        system, messages = self._chat_messages(task.test.input_messages, self.plan.inside)
        system = self._target_system(system, provider_kind(task.target))
        return ChatRequest(model=model_name, messages=tuple(messages), system=system,
                           timeout=timeout_seconds(task.test.execution) or timeout_seconds(self.plan.suite.execution))

    def _request(self, task: AgentvTask, model_name: str, attempt: int, folder: Path | None) -> ChatRequest:
        """The cell's request for `attempt`: a `cli` target's with the test's id (and workspace)."""
        req = self.request(task, model_name)
        kind = provider_kind(task.target)
        if folder is not None and kind == "cli":
            # The agent works in the test's workspace: the command runs there.
            req = dataclasses.replace(req, extra={**req.extra, "cwd": str(folder), "attempt": attempt,
                                                  "eval_id": task.test.id})
        elif kind == "cli":
            # The test id is the command's {EVAL_ID}; it picks this test's record of a batch output.
            req = dataclasses.replace(req, extra={**req.extra, "eval_id": task.test.id, "attempt": attempt})
        return req

    async def answer(self, task: AgentvTask, attempt: int = 0, folder: Path | None = None) -> Answer:
        """(text, (input, output tokens) or None when not reported, latency ms, cached, the model that
        answered, tool calls, the cost the target reported). Raises ProviderError, or ReplayedFailure for a
        replayed cell that failed."""
        cell = task.cell
        turns = self.state.turns  # empty in a fresh run
        done = turns[cell].get(attempt) if turns and cell in turns else None
        if done is not None:
            return (done.text, done.usage, done.ms or 0.0, False, done.model,
                    calls_from_json(list(done.tool_calls)), done.cost_usd)
        model: str | None = None
        reported_cost: float | None = None
        usage: tuple[int, int] | None
        if self.plan.replay is not None:
            text, usage, latency, cached, calls = self._replayed(cell)
        else:
            provider, model_name = self.provider(task.target)
            # batch mode: the answer its batch gave (the request was made for the batch, not again here)
            result = (self.batch.take(cell, attempt, label=task.target.name)
                      if self.batch is not None and attempt == 0 else None)
            if result is None:
                req = self._request(task, model_name, attempt, folder)
                if attempt > 0:
                    provider = _uncached(provider)  # a trial is a new sample, not the first answer again
                if attempt > 0 and self.rounds is not None and folder is None:
                    # A later trial: asked only when the one before did not stop the test, so in a round
                    # of the cells' calls (generate/batch_rounds.py), not the phase before the cells.
                    from .batch_stage import BatchRequest

                    result = await self.rounds.ask(
                        BatchRequest(cell, attempt, task.target.name, task.target.name, provider, req,
                                     custom=task.target.config is not None, submit=self.wants_batch(task.target)),
                        label=task.target.name)
                if result is None:
                    result = await self.calls.chat(provider, req, cell, limit_key=limit_key(task.target),
                                                   model_label=task.target.name)
            text, latency, cached, calls = result.text, result.latency_ms, result.cached, result.tool_calls
            usage = (result.usage.input_tokens, result.usage.output_tokens) if result.usage.reported else None
            model = result.raw_model or model_name or configured_model(task.target)
            reported_cost = result.cost_usd
        # Replayed answers are journalled too, so that a replay's own journal can be resumed or replayed.
        self.journal.write(Generated(cell, attempt, text, usage, round(latency, 1), cached, model,
                                     tuple(c.to_json() for c in calls) if calls else (), names_model=True,
                                     cost_usd=reported_cost))
        return text, usage, latency, cached, model, calls, reported_cost

    def _replayed(self, cell: Cell) -> tuple[str, tuple[int, int] | None, float, bool, tuple[ToolCall, ...]]:
        """The recorded answer of a cell, with the usage, duration and tool calls the original call
        reported (latency, token-usage and tool-trajectory score those). A recorded failure raises
        ReplayedFailure."""
        replay = self.plan.replay
        assert replay is not None
        rec = replay.answer(cell)
        if rec is None or rec.text is None:
            raise ReplayedFailure(rec.error if rec is not None and rec.error else
                                  f"{replay.path} has no answer for {cell}")
        return rec.text, rec.usage, rec.latency_ms, False, rec.tool_calls

    def cost(self, task: AgentvTask, model: str | None, usage: tuple[int, int] | None) -> float | None:
        """US dollars of the target's call, from the price table; None when its model has no price (or
        the target reported no usage)."""
        prices = self.plan.prices
        if prices is None or usage is None:
            return None
        key = (model, task.target.name)
        price = self._prices.get(key, _UNSET)
        if price is _UNSET:  # looked up once per (model, target): a 2,000-test run asks 2,000 times
            names = (model, configured_model(task.target), task.target.model)
            price = self._prices[key] = next((p for p in map(prices.price, names) if p is not None), None)
        return call_cost(price, usage[0], usage[1]) if price is not None else None

    def wants_batch(self, target: TargetSpec) -> bool:
        """`--batch`, a `--batch-model` pattern naming the target, or `batch: true` in its settings; only
        chat targets (openai, anthropic, gemini: the APIs with a batch endpoint) and models."""
        from .batch_stage import wants_batch

        if target.config is not None and provider_kind(target) not in BATCH_KINDS:
            return False
        return wants_batch(self.options, target.name) or (target.config is not None
                                                          and target.config.get("batch") is True)

    def batch_requests(self, journaled: Container[Any], has_workspace: Callable[[AgentvTask], bool],
                       refuses: Callable[[AgentvTask], bool]) -> list[BatchRequest]:
        """The first attempt of every test whose target batches (or whose call an earlier run of the
        journal put in a batch: `journaled`), not yet answered; not a test with a workspace, nor one a
        cost cap will refuse."""
        from .batch_stage import BatchRequest

        requests: list[BatchRequest] = []
        for task in self.plan.tasks:
            cell = task.cell
            submit = self.wants_batch(task.target)
            if not (submit or (cell, 0) in journaled) or cell in self.state.scores \
                    or 0 in self.state.turns.get(cell, {}):
                continue
            if has_workspace(task):
                continue  # a workspace is set up per test, around its call
            try:
                provider, model_name = self.provider(task.target)
            except ProviderError:
                continue  # the test fails on its own, as it would interactively
            if refuses(task):
                continue  # a cost cap: the test is refused when it runs, nothing of it is sent
            requests.append(BatchRequest(cell, 0, task.target.name, task.target.name, provider,
                                         self.request(task, model_name), custom=task.target.config is not None,
                                         submit=submit))
        return requests


def provider_kind(spec: TargetSpec) -> str | None:
    """A targets.yaml entry's `provider`, lower case; None for a target named by model id."""
    return str(spec.config.get("provider") or "").lower() if spec.config is not None else None


def limit_key(spec: TargetSpec) -> str:
    """The concurrency lane of a target's calls (generate/calls.py)."""
    if spec.config is not None:
        return str(spec.config.get("provider") or spec.name).lower()
    return provider_key(spec.model or spec.name)


def configured_model(spec: TargetSpec) -> str | None:
    """The model a targets.yaml entry names (`model`, or an Azure `deployment_name`)."""
    if spec.config is None:
        return None
    value = spec.config.get("model") or spec.config.get("deployment_name") or spec.config.get("deployment")
    return str(value) if value else None


def timeout_seconds(execution: dict[str, Any]) -> float | None:
    """`execution.timeout_seconds` (the test's, else the suite's): each call to the test's target gets
    that long instead of --timeout."""
    value = execution.get("timeout_seconds")
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def _uncached(provider: Provider) -> Provider:
    from ...providers.cache import CachedProvider

    return provider.inner if isinstance(provider, CachedProvider) else provider
