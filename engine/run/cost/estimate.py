"""What a run will cost before it runs: estimated tokens and US dollars per model and role.

`--dry-run` prints it; `--max-cost` reserves a cell's estimate before the cell starts (cost/budget.py). The
rule is deliberately simple so a person can check it by hand (docs/guide/costs.md):

- tokens(text) = ceil(UTF-8 bytes of text / 4);
- a request's input tokens = the sum, over its messages (the system prompt counts as one message), of
  tokens(content) + 4 (MESSAGE_OVERHEAD);
- its output tokens = its max_tokens (1,500 by default, a target's `max_output_tokens` when set, Weval
  judges 500; an AgentV judge call sets none, as AgentV's, and 1,500 is assumed): counted in full;
- an answer not known yet (what a judge reads, an earlier generated turn) is assumed to fill its call's
  max_tokens: a placeholder of 4 × max_tokens ASCII bytes in the exact prompt the run would send;
- Weval key points extracted from an `ideal`: one call per prompt to the first key-point model, then
  KEY_POINTS_ASSUMED points of KEY_POINT_BYTES bytes each, judged like written points (batched when the
  extracting model and the judge have a batch API: batch mode extracts with the first answers);
- cost = (input × price.input + output × price.output) / 1,000,000 (no prompt-cache discount assumed);
  batch = that × (1 − batch_discount) for a call batch mode batches, the interactive cost for one it
  makes one by one (`CallEstimate.batchable`). A model with no price has an unknown cost, never zero.

Checks this cannot size (an agent-judge's tool loop, a prompt script's output, a code judge calling a
target) are named in `notes`, and the total then reads "at least".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...pricing import Price, PriceTable, call_cost
from ...providers.base import DEFAULT_MAX_TOKENS

if TYPE_CHECKING:
    from ..plan.agentv import AgentvPlan, AgentvTask, TargetSpec
    from ..plan.plan_for import Plan
    from ..plan.weval import WevalPlan, WevalTask

BYTES_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4  # tokens per message: role and separators
KEY_POINTS_ASSUMED = 5  # key points extracted from an ideal (the extraction asks for 3 to 8)
KEY_POINT_BYTES = 100  # the assumed length of one extracted key point
EMBED_BATCH = 64  # texts per embeddings request (score_embeddings.EMBED_BATCH)

ANSWERS, JUDGE, KEY_POINTS, EMBEDDINGS = "answers", "judge", "key points", "embeddings"


def tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def input_tokens(system: str | None, messages: Iterable[str]) -> int:
    """The rule's input tokens of one request: every message (the system prompt too) + MESSAGE_OVERHEAD."""
    total = tokens(system) + MESSAGE_OVERHEAD if system else 0
    for content in messages:
        total += tokens(content) + MESSAGE_OVERHEAD
    return total


def placeholder(max_tokens: int) -> str:
    """An answer of unknown text, assumed to use its whole max_tokens."""
    return "x" * (BYTES_PER_TOKEN * max_tokens)


@dataclass(frozen=True)
class CallEstimate:
    role: str  # answers | judge | key points | embeddings
    model: str  # as shown: the model id, target name or judge label
    price_names: tuple[str | None, ...]  # looked up in the price table, first found wins
    input_tokens: int
    output_tokens: int
    calls: int = 1
    batchable: bool = True  # False: batch mode still makes this call interactively (batch_usd at full price)


def batchable_model(model: str) -> bool:
    """Whether batch mode can send a model id's calls through a batch API (batch/__init__.batch_api_for)."""
    from ...batch import OPENAI_BATCH_PROVIDERS
    from ...providers.catalog import ANTHROPIC, GOOGLE, find

    provider, _, _ = model.partition(":")
    spec = find(provider) if _ else None
    return spec is not None and (spec.api in (ANTHROPIC, GOOGLE) or spec.name in OPENAI_BATCH_PROVIDERS)


@dataclass
class Line:
    """One row of the estimate: a role and a model, its calls and tokens, its price (None: unknown)."""

    role: str
    model: str
    price: Price | None
    priced_as: str = ""  # the model name looked up (an unpriced line names it)
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # Of those, the calls batch mode still makes interactively (an agent judge's tool loop, a cli target,
    # a model without a batch API): in `batch_usd` at the interactive price.
    interactive_calls: int = 0
    interactive_input: int = 0
    interactive_output: int = 0

    def cost(self, *, batch: bool = False) -> float | None:
        if self.price is None:
            return None
        if not batch:
            return call_cost(self.price, self.input_tokens, self.output_tokens)
        return (call_cost(self.price, self.input_tokens - self.interactive_input,
                          self.output_tokens - self.interactive_output, batch=True)
                + call_cost(self.price, self.interactive_input, self.interactive_output))

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "model": self.model, "priced_as": self.priced_as, "calls": self.calls, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "usd": self.cost(), "batch_usd": self.cost(batch=True),
                "batch_interactive_calls": self.interactive_calls, "priced": self.price is not None}


@dataclass
class Estimate:
    lines: list[Line] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the figures leave out

    def total(self, *, batch: bool = False) -> float:
        return sum(c for line in self.lines if (c := line.cost(batch=batch)) is not None)

    @property
    def unpriced(self) -> list[str]:
        return list(dict.fromkeys(line.priced_as or line.model for line in self.lines
                                  if line.price is None and line.calls))

    def to_json(self) -> dict[str, Any]:
        return {"rule": "input: sum over messages of ceil(UTF-8 bytes / 4) + 4; output: max_tokens; "
                        "unknown answers fill their max_tokens",
                "lines": [line.to_json() for line in self.lines],
                "input_tokens": sum(line.input_tokens for line in self.lines),
                "output_tokens": sum(line.output_tokens for line in self.lines),
                "usd": self.total(), "batch_usd": self.total(batch=True), "unpriced": self.unpriced,
                "at_least": bool(self.unpriced or self.notes), "notes": list(self.notes)}


def collect(calls: Iterable[CallEstimate], prices: PriceTable, notes: Iterable[str] = ()) -> Estimate:
    """Calls summed per (role, model), in the order first seen."""
    lines: dict[tuple[str, str], Line] = {}
    for c in calls:
        line = lines.get((c.role, c.model))
        if line is None:
            price = next((p for p in map(prices.price, c.price_names) if p is not None), None)
            named = next((n for n in c.price_names if n), c.model)
            line = lines[(c.role, c.model)] = Line(c.role, c.model, price, named)
        line.calls += c.calls
        line.input_tokens += c.input_tokens
        line.output_tokens += c.output_tokens
        if not c.batchable:
            line.interactive_calls += c.calls
            line.interactive_input += c.input_tokens
            line.interactive_output += c.output_tokens
    return Estimate(list(lines.values()), list(dict.fromkeys(notes)))


def cost_of_calls(calls: Iterable[CallEstimate], prices: PriceTable, *, batch: bool = False) -> tuple[float, list[str]]:
    """(US dollars of the priced calls, the models without a price) — a cell's reservation (cost/budget.py)."""
    usd = 0.0
    unpriced: list[str] = []
    for c in calls:
        price = next((p for p in map(prices.price, c.price_names) if p is not None), None)
        if price is None:
            unpriced.append(c.model)
        else:
            usd += call_cost(price, c.input_tokens, c.output_tokens, batch=batch and c.batchable)
    return usd, unpriced


# --- Weval ------------------------------------------------------------------------------------------

def weval_estimate(plan: WevalPlan, prices: PriceTable) -> Estimate:
    calls: list[CallEstimate] = []
    for task in plan.tasks:
        calls += weval_cell_calls(plan, task)
    for prompt in plan.prompts:
        calls += weval_prompt_calls(plan, prompt)
    calls += _weval_embeddings(plan)
    return collect(calls, prices)


def _weval_price_names(plan: WevalPlan, model: str) -> tuple[str | None, ...]:
    spec = plan.model_specs.get(model, model)
    if isinstance(spec, dict):  # a custom model: its own id, then the model it wraps
        return (model, *(str(spec[k]) for k in ("modelName", "model", "name") if spec.get(k)))
    return (model,)


def _weval_batchable(plan: WevalPlan, model: str) -> bool:
    spec = plan.model_specs.get(model, model)
    if isinstance(spec, dict):  # a custom model: its own URL, batched when named by --batch-model
        return False
    return batchable_model(str(spec))


def _weval_turns(task: WevalTask) -> Iterator[tuple[str | None, list[str]]]:
    """(system, contents) of every generation request of a cell, as generate/answers.py sends them, with each
    earlier generated turn a placeholder."""
    messages: list[tuple[str, str]] = []
    answer = placeholder(DEFAULT_MAX_TOKENS)
    prompt = task.prompt

    def request() -> tuple[str | None, list[str]]:
        # As generate.weval_request: `system:` turns inside the messages join the system prompt.
        system = task.system
        extra = [c for r, c in messages if r == "system"]
        if extra:
            system = "\n\n".join(([system] if system else []) + extra)
        return system or None, [c for r, c in messages if r != "system"]

    for msg in prompt.messages:
        if msg.role == "assistant" and msg.content is None:
            yield request()
            messages.append(("assistant", answer))
        else:
            messages.append((msg.role, msg.content or ""))
    if prompt.messages and prompt.messages[-1].role == "user":
        yield request()


def _weval_answers(plan: WevalPlan, task: WevalTask) -> list[str]:
    """The cell's generated turns: replayed ones when replaying, else placeholders."""
    if plan.replay is not None:
        rec = plan.replay.answer(task.cell)
        if rec is not None and rec.text is not None:
            return list(rec.generated) or [rec.text]
        return []
    n = sum(1 for _ in _weval_turns(task))
    return [placeholder(DEFAULT_MAX_TOKENS)] * n


def weval_cell_calls(plan: WevalPlan, task: WevalTask) -> list[CallEstimate]:
    """A cell's generation and judge calls (key-point extraction is the prompt's: weval_prompt_calls)."""
    from ..score.weval_judge import JUDGE_MAX_TOKENS, judge_label, judge_messages, transcript

    out: list[CallEstimate] = []
    names = _weval_price_names(plan, task.model)
    if plan.replay is None:
        for system, contents in _weval_turns(task):
            out.append(CallEstimate(ANSWERS, task.model, names, input_tokens(system, contents), DEFAULT_MAX_TOKENS,
                                    batchable=_weval_batchable(plan, task.model)))
    if "llm-coverage" not in plan.eval_methods:
        return out
    prompt = task.prompt
    points = prompt.points
    criteria = [p.text or "" for p in points if p.kind == "text"]
    batched = True
    if not points and prompt.ideal:
        criteria = ["k" * KEY_POINT_BYTES] * KEY_POINTS_ASSUMED
        # Batch mode knows the key points before the judges' phase when their extraction was batched.
        batched = bool(plan.key_point_models) and batchable_model(plan.key_point_models[0])
    if not criteria:
        return out
    answers = _weval_answers(plan, task)
    if not answers:
        return out
    history: list[tuple[str, str, bool]] = [("system", task.system, False)] if task.system else []
    turns = iter(answers)
    for msg in prompt.messages:
        if msg.role == "assistant" and msg.content is None:
            history.append(("assistant", next(turns, ""), True))
        else:
            history.append((msg.role, msg.content or "", False))
    if prompt.messages and prompt.messages[-1].role == "user":
        history.append(("assistant", next(turns, answers[-1]), True))
    conversation = transcript(history)
    subject = "\n\n".join(answers)
    for criterion in criteria:
        for judge in plan.judges:
            system, user = judge_messages(judge, conversation=conversation, text=subject, criterion=criterion,
                                          suite_description=plan.blueprint.description)
            out.append(CallEstimate(JUDGE, judge_label(judge), (judge.model,), input_tokens(system, [user]),
                                    JUDGE_MAX_TOKENS, batchable=batched and batchable_model(judge.model)))
    return out


def weval_prompt_calls(plan: WevalPlan, prompt: Any) -> list[CallEstimate]:
    """Key-point extraction from the prompt's ideal: once per prompt, by the first key-point model."""
    from ..score.weval_judge import EXTRACT_SYSTEM, extraction_prompt, transcript

    if "llm-coverage" not in plan.eval_methods or prompt.has_points or not prompt.ideal or not plan.key_point_models:
        return []
    model = plan.key_point_models[0]
    conversation = transcript([(m.role, m.content or "<TO_BE_GENERATED>", False) for m in prompt.messages])
    user = extraction_prompt(prompt.ideal, conversation)
    # Batch mode extracts with the first answers (score_judges.extraction_requests).
    return [CallEstimate(KEY_POINTS, model, (model,), input_tokens(EXTRACT_SYSTEM, [user]), DEFAULT_MAX_TOKENS,
                         batchable=batchable_model(model))]


def _weval_embeddings(plan: WevalPlan) -> list[CallEstimate]:
    """One text per ideal and per answer, EMBED_BATCH texts a request; embeddings have no output tokens."""
    if "embedding" not in plan.eval_methods:
        return []
    model = plan.blueprint.embedding_model
    texts = 0
    total = 0
    by_prompt: dict[str, int] = {}
    for t in plan.tasks:
        by_prompt[t.prompt.id] = by_prompt.get(t.prompt.id, 0) + 1
    for p in plan.prompts:
        if p.ideal:
            texts += 1
            total += tokens(p.ideal)
        n = by_prompt.get(p.id, 0)
        texts += n
        total += n * DEFAULT_MAX_TOKENS
    if not texts:
        return []
    return [CallEstimate(EMBEDDINGS, model, (model,), total, 0, calls=math.ceil(texts / EMBED_BATCH), batchable=False)]


# --- AgentV -----------------------------------------------------------------------------------------

AGENT_JUDGE_NOTE = "agent-judge assertions: a tool loop of unknown length (each counted as one judge call)"
PROMPT_SCRIPT_NOTE = "llm-judge prompt scripts are not run before the run: their calls are sized with the default template"
TARGET_PROXY_NOTE = "code judges that call a target (`target:`): their calls are not in the estimate"


def agentv_estimate(plan: AgentvPlan, prices: PriceTable) -> Estimate:
    calls: list[CallEstimate] = []
    notes: list[str] = []
    for task in plan.tasks:
        calls += agentv_cell_calls(plan, task, notes)
    return collect(calls, prices, notes)


def max_tokens_of(spec: TargetSpec | None, default: int) -> int:
    """A target's `max_output_tokens` (or its aliases) when it is a plain number, else `default`."""
    config = spec.config if spec is not None else None
    if config:
        for key in ("max_output_tokens", "maxOutputTokens", "max_tokens", "maxTokens"):
            value = config.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return default


def target_price_names(spec: TargetSpec) -> tuple[str | None, ...]:
    configured = None
    if spec.config is not None:
        value = spec.config.get("model") or spec.config.get("deployment_name") or spec.config.get("deployment")
        configured = str(value) if value else None
    return (configured, spec.model)


def agentv_cell_calls(plan: AgentvPlan, task: AgentvTask, notes: list[str] | None = None) -> list[CallEstimate]:
    """A cell's target and judge calls, every trial counted (an early stop only makes it cheaper)."""
    from ...scoring.trials import TrialSettings
    from ..generate.agentv_messages import chat_messages, target_system
    from ..generate.answers import provider_kind

    notes = notes if notes is not None else []
    test = task.test
    count = TrialSettings.of(plan.suite.trials).count
    out: list[CallEstimate] = []
    answer_tokens = max_tokens_of(task.target, DEFAULT_MAX_TOKENS)
    in_workspace = _in_workspace(plan, task)
    if plan.replay is None:
        system, messages = chat_messages(test.input_messages, plan.inside)
        system = target_system(system, provider_kind(task.target))
        out.append(CallEstimate(ANSWERS, task.target.name, target_price_names(task.target),
                                input_tokens(system, [m.content for m in messages]), answer_tokens,
                                batchable=not in_workspace and batchable_target(task.target)))
        answer = placeholder(answer_tokens)
    else:
        rec = plan.replay.answer(task.cell)
        answer = rec.text if rec is not None and rec.text is not None else ""
    if task.judge is not None:
        out += _agentv_judge_calls(plan, task, answer, notes, batchable=not in_workspace)
    return [CallEstimate(c.role, c.model, c.price_names, c.input_tokens * count, c.output_tokens * count,
                         c.calls * count, c.batchable) for c in out]


def batchable_target(spec: TargetSpec) -> bool:
    """Whether batch mode can batch a target's or judge's calls (generate.AgentvGenerate.wants_batch)."""
    from ..generate.answers import BATCH_KINDS, provider_kind

    if spec.config is not None:
        return provider_kind(spec) in BATCH_KINDS
    return batchable_model(spec.model or spec.name)


def _in_workspace(plan: AgentvPlan, task: AgentvTask) -> bool:
    """A test in a workspace: batch mode calls its target and judges one by one (agentv_stages.py)."""
    return task.test.workspace is not None or plan.suite.workspace is not None


def _agentv_judge_calls(plan: AgentvPlan, task: AgentvTask, answer: str, notes: list[str], *,
                        batchable: bool = True) -> list[CallEstimate]:
    from ...registry.stages import Stage
    from ..score.agentv_judge import (
        DEFAULT_TEMPLATE,
        FREEFORM_SYSTEM,
        JUDGE_OUTPUT_ESTIMATE,
        freeform_prompt,
    )
    from ..score.agentv_scorable import stage_of, unscorable
    from ..score.judged_types import judged_type

    judge = task.judge
    assert judge is not None
    test = task.test
    out_tokens = JUDGE_OUTPUT_ESTIMATE  # AgentV bounds no judge call: not the judge target's max_output_tokens
    names = target_price_names(judge)
    batched = batchable and batchable_target(judge)

    def call(system: str, user: str, *, batch: bool = True) -> CallEstimate:
        return CallEstimate(JUDGE, judge.name, names, input_tokens(system, [user]), out_tokens,
                            batchable=batch and batched)

    def judged(a: Any) -> list[CallEstimate]:
        if unscorable(a, judge=True) is not None:
            return []
        stage = stage_of(a)
        if stage is Stage.JUDGE:
            return [call(*judged_type(a).estimated(a, test, answer, lambda: _judge_template(plan, a, notes)))]
        if stage is Stage.AGENT_JUDGE:
            notes.append(AGENT_JUDGE_NOTE)
            return [call(*freeform_prompt(None, test, answer), batch=False)]  # a tool loop: never batched
        if stage is Stage.SCRIPT and not a.custom and a.config.get("target"):
            notes.append(TARGET_PROXY_NOTE)
            return []
        if stage is Stage.GROUP:
            got = [c for child in a.children for c in judged(child)]
            aggregator = a.config.get("aggregator")
            kind = aggregator.get("type") if isinstance(aggregator, dict) else None
            if isinstance(kind, str) and kind.replace("_", "-") == "llm-judge":
                got.append(call(FREEFORM_SYSTEM, _aggregator_text(aggregator, a.children)))
            return got
        return []

    if test.uses_default_judge:
        return [call(*freeform_prompt(DEFAULT_TEMPLATE, test, answer))]
    return [c for a in test.assertions for c in judged(a)]


def _aggregator_text(aggregator: Any, children: Sequence[Any]) -> str:
    """The aggregator's prompt with each child's result assumed a perfect pass (their size barely varies)."""
    from ...scoring.composite import Child, aggregator_prompt

    kids = [Child(c.name, c.type, 1.0, "pass", 1.0, (), (), None) for c in children]
    return str(aggregator_prompt(aggregator, kids))


def _judge_template(plan: AgentvPlan, a: Any, notes: list[str]) -> str | None:
    """The llm-judge's template as the run would read it: inline text or a prompt file (read, never
    run); a prompt script cannot run before the run, so the default template stands in for it."""
    prompt = a.config.get("prompt")
    if prompt is None:
        return None
    if isinstance(prompt, dict):
        notes.append(PROMPT_SCRIPT_NOTE)
        return None
    if not isinstance(prompt, str):
        return None
    from ...agentv.files import FileSystem, looks_like_prompt_file, read_text

    if looks_like_prompt_file(prompt):
        base = (a.source_path or plan.path).parent
        fs = FileSystem()
        found = fs.resolve(prompt, fs.search_roots(base))
        text = read_text(found, 256 * 1024, inside=plan.inside) if found is not None else None
        return text
    return prompt


# --- both -------------------------------------------------------------------------------------------

def cells_within(plan: Any, prices: PriceTable, cap: float, *, batch: bool = False) -> int:
    """How many cells, in the plan's order, start under a cap of `cap` US dollars before anything is
    spent (each reserves its estimate; cost/budget.py): at least these run, more when cells finish under
    their estimates."""
    weval = plan.kind == "weval"
    reserved = 0.0
    extracted: set[str] = set()
    for n, task in enumerate(plan.tasks):
        if weval:
            calls = weval_cell_calls(plan, task)
            if task.prompt.id not in extracted:
                extracted.add(task.prompt.id)
                calls += weval_prompt_calls(plan, task.prompt)
        else:
            calls = agentv_cell_calls(plan, task)
        reserved += cost_of_calls(calls, prices, batch=batch)[0]
        if reserved > cap + 1e-12:
            return n
    return len(plan.tasks)


def estimate(plan: Plan, prices: PriceTable) -> Estimate:
    if plan.kind == "weval":
        return weval_estimate(plan, prices)
    return agentv_estimate(plan, prices)
