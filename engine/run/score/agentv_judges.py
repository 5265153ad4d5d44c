"""The judge stage of scoring AgentV: what an LLM judges, journaled so `--resume` asks no judge twice (Weval's
judges are score/judges.py).

AgentV (`AgentvJudges`): `rubrics` and `llm-judge` assertions asked of the test's judge target
(score/agentv_judge.py; in batch mode through the rounds of generate/batch_rounds.py), the llm-judge aggregator of a
`composite` (the same), `agent-judge` (the judge inspects the
test's workspace read-only: score/agent_judge.py), and the judge target a code judge calls through the
loopback proxy (score/target_proxy.py). A judge that cannot be called or answers nonsense leaves its
assertion not scored, with the reason; it never counts as a pass.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...providers.base import ChatMessage, ChatRequest, ChatResult, Provider, ProviderError
from ...scoring.agentv_aggregate import (
    negate_result,
    rubric_items,
    score_checklist,
    verdict,
)
from ..events import Cell
from ..generate.answers import AgentvGenerate, limit_key, provider_kind
from ..generate.calls import Calls, provider_key
from ..journal.records import JudgeReply
from ..journal.run_store import Journal, JournalState
from ..options import RunOptions
from .agentv_entries import entry, skipped
from .judge_calls import judge_slot
from .judged_types import JUDGE_ATTEMPTS, UnreadReply, judged_type

if TYPE_CHECKING:
    from ...agentv.model import Assertion
    from ...scoring.composite import Child, CompositeScore
    from ..generate.batch_rounds import BatchRounds
    from ..plan.agentv import AgentvPlan, AgentvTask, TargetSpec
    from ..write.agentv_measured import Measured


DEFAULT_AGENT_STEPS = 10
# Targets that are coding agents (agent-judge `target`): evalspec does not drive them.
CODING_AGENTS = frozenset({"codex", "codex-cli", "claude-code", "claude", "claude-cli", "claude-sdk", "copilot",
                           "copilot-cli", "copilot-sdk", "pi", "pi-cli", "pi-coding-agent", "vscode",
                           "vscode-insiders", "agentv"})
FILE_LIMIT = 256 * 1024  # a judge prompt file read beyond this is not read


def judge_max_tokens(options: RunOptions) -> int | None:
    """The max tokens of a judge call (llm-judge, rubrics, a composite's aggregator, an agent-judge step): none,
    as AgentV asks, unless a cost cap is active: then what the cost estimate assumes a judge answers with."""
    if options.max_cost is None:
        return None
    from .agentv_judge import JUDGE_OUTPUT_ESTIMATE

    return JUDGE_OUTPUT_ESTIMATE


class TemplateError(Exception):
    """An llm-judge prompt (file, script) that cannot be had: the assertion is not scored."""


class AgentvJudges:
    # The judged types' modules are imported inside the methods: a suite without such assertions never
    # needs them.
    def __init__(self, plan: AgentvPlan, options: RunOptions, calls: Calls, state: JournalState, journal: Journal,
                 generate: AgentvGenerate, script_limit: asyncio.Semaphore) -> None:
        self.plan = plan
        self.options = options
        self.calls = calls
        self.state = state
        self.journal = journal
        self.generate = generate  # a judge target's provider is bound as a target's
        self.script_limit = script_limit  # prompt scripts share the code judges' limit
        self.rounds: BatchRounds | None = None  # batch mode: judge calls batched as the cells name them
        # AgentV bounds no judge call; under --max-cost a judge answers at most what the estimate assumes
        # (cost/estimate.py), so the cap holds (docs/reference-differences.md).
        self.max_tokens = judge_max_tokens(options)

    async def judged(self, task: AgentvTask, index: int, a: Assertion, answer: str) -> dict[str, Any]:
        """One assertion of a judged type (registry stage JUDGE: `rubrics`, `llm-judge`, …), asked of the
        target's judge with the prompt its entry's scorer makes, and read by that scorer
        (score/judged_types.py)."""
        judge = task.judge
        if judge is None:
            from .agentv_scorable import NO_JUDGE

            return skipped(a, f"not scored: {NO_JUDGE}")
        scorer = judged_type(a)
        cell = task.cell
        key = (cell, index, judge.name)
        done = self.state.judgements.get(key)
        reply = done.text if isinstance(done, JudgeReply) and not done.error else None
        out: dict[str, Any] = {}
        for attempt in range(JUDGE_ATTEMPTS):
            try:
                system, user = await scorer.prompt(a, task.test, answer, lambda: self.template(a, task, answer))
                if reply is None:
                    provider, model_name = self.generate.judge_provider(judge)
                    # As AgentV's llm-judge asks: no temperature, no max tokens (the API's defaults) but a cost cap's
                    req = ChatRequest(model=model_name, messages=(ChatMessage("user", user),), system=system,
                                      temperature=None, max_tokens=self.max_tokens)
                    # A second or third ask is interactive: a batch would hand back the reply just refused.
                    result = (await self._chat(judge, provider, req, cell, index) if attempt == 0 else
                              await self.calls.chat(provider, req, cell, limit_key=limit_key(judge), purpose="judge",
                                                    model_label=judge.name))
                    reply = result.text
                    self.journal.write(JudgeReply(cell, index, judge.name, reply, None))
            except ProviderError as err:
                self._error(cell, index, judge, err.message)
                return skipped(a, f"not scored: the judge {judge.name} failed: {err.message}")
            except TemplateError as err:
                return skipped(a, f"not scored: {err}")
            out = scorer.read(a, reply)
            if not isinstance(out, UnreadReply):
                return out
            reply = None  # outside AgentV's schema: AgentV asks again
        return dict(out, reasoning=f"{out['reasoning']} ({JUDGE_ATTEMPTS} answers, as AgentV asks)")

    async def aggregate(self, task: AgentvTask, index: int, aggregator: dict[str, Any],
                        children: list[Child]) -> CompositeScore | str:
        """A composite's llm-judge aggregator: the judge reads the children's results and gives the score;
        a string says why there is none."""
        from ...scoring.composite import CompositeScore, aggregator_prompt
        from .agentv_judge import FREEFORM_SYSTEM, JudgeReplyError, freeform_result, parse_json_reply
        from .agentv_scorable import NO_JUDGE

        judge = task.judge
        if judge is None:
            return NO_JUDGE
        cell = task.cell
        done = self.state.judgements.get((cell, index, judge.name))
        reply = done.text if isinstance(done, JudgeReply) and not done.error else None
        try:
            if reply is None:
                provider, model_name = self.generate.judge_provider(judge)
                req = ChatRequest(model=model_name, messages=(ChatMessage("user", aggregator_prompt(aggregator, children)),),
                                  system=FREEFORM_SYSTEM, temperature=None, max_tokens=self.max_tokens)
                result = await self._chat(judge, provider, req, cell, index)
                reply = result.text
                self.journal.write(JudgeReply(cell, index, judge.name, reply, None))
            score, hits, misses, reasoning = freeform_result(parse_json_reply(reply))
        except ProviderError as err:
            self._error(cell, index, judge, err.message)
            return f"the judge {judge.name} failed: {err.message}"
        except JudgeReplyError as err:
            return str(err)
        return CompositeScore(score, verdict(score), tuple(hits), tuple(misses), reasoning)

    async def agent_judged(self, task: AgentvTask, index: int, a: Assertion, answer: str,
                           measured: Measured) -> dict[str, Any]:
        """An `agent-judge`: the judge model inspects the test's workspace read-only (score/agent_judge.py)."""
        from ..plan.agentv import TargetSpec
        from .agent_judge import WorkspaceReader, judge_task, run_agent_judge, system_prompt, tools_for
        from .agentv_judge import (
            JudgeReplyError,
            freeform_result,
            question_text,
            render,
            rubric_checks,
            variables,
        )
        from .agentv_scorable import NO_JUDGE

        judge = task.judge
        delegated = a.config.get("target")
        if isinstance(delegated, str) and delegated:
            found = self.targets_entry(delegated)
            if found is None:
                return skipped(a, f"not scored: agent-judge target '{delegated}' is not in targets.yaml")
            kind = str(found.get("provider") or "").lower()
            if kind in CODING_AGENTS:
                return skipped(a, f"not scored: agent-judge target '{delegated}' is a coding agent ({kind}), "
                                  "which evalspec does not run; drop `target` to use the built-in agent judge")
            judge = TargetSpec(delegated, config=found)
        if judge is None:
            return skipped(a, f"not scored: {NO_JUDGE}")
        if measured.workspace is None:
            return skipped(a, "not scored: agent-judge audits a workspace and this test has none (set "
                              "`workspace.template`)")
        raw_criteria = a.config.get("rubrics")
        criteria = rubric_items(raw_criteria) if isinstance(raw_criteria, list) else []
        try:
            template = await self.template(a, task, answer, measured)
        except TemplateError as err:
            return skipped(a, f"not scored: {err}")
        prompt = render(template, variables(task.test, answer)) if template else None
        task_text = judge_task(question_text(task.test), task.test.criteria or "", answer,
                               task.test.reference_answer, criteria, prompt, measured.file_changes)
        provider, model_name = self.generate.judge_provider(judge)
        kind = _judge_kind(judge)
        temperature = a.config.get("temperature")
        steps = a.config.get("max_steps")
        system = system_prompt(bool(criteria))
        judge_spec = judge

        async def ask(messages: tuple[ChatMessage, ...], offer_tools: bool) -> Any:
            req = ChatRequest(model=model_name, messages=messages, system=system,
                              temperature=float(temperature) if isinstance(temperature, int | float) else 0.0,
                              max_tokens=self.max_tokens, extra=tools_for(kind) if offer_tools else {})
            return await self.calls.chat(provider, req, task.cell, limit_key=limit_key(judge_spec), purpose="judge",
                                         model_label=judge_spec.name)

        try:
            outcome = await run_agent_judge(ask, task_text, WorkspaceReader(Path(measured.workspace)),
                                            rubric=bool(criteria),
                                            max_steps=steps if isinstance(steps, int) else DEFAULT_AGENT_STEPS)
        except ProviderError as err:
            self._error(task.cell, index, judge, err.message)
            return skipped(a, f"not scored: the agent judge {judge.name} failed: {err.message}")
        if outcome.verdict is None:
            return skipped(a, f"not scored: {outcome.error}")
        try:
            if criteria:
                rs = score_checklist(criteria, rubric_checks(outcome.verdict))
                if rs.unassessed:
                    return skipped(a, "not scored: the judge did not assess " + ", ".join(
                        f"'{rid}'" for rid in rs.unassessed))
                score, result_verdict, hits, misses = rs.score, rs.verdict, list(rs.hits), list(rs.misses)
                raw = outcome.verdict.get("overall_reasoning")
                reasoning = raw if isinstance(raw, str) else None
            else:
                score, hits, misses, reasoning = freeform_result(outcome.verdict)
                result_verdict = verdict(score)
        except JudgeReplyError as err:
            return skipped(a, f"not scored: {err}")
        if a.negate:
            score, result_verdict = negate_result(score, result_verdict)
            hits, misses = misses, hits
        out = entry(a, score, result_verdict, hits, misses, reasoning)
        out["details"] = {"steps": outcome.steps, "tool_calls": outcome.tool_calls}
        return out

    def target_proxy(self, task: AgentvTask, wants: Any) -> Any:
        """The proxy a code judge with `target` calls LLMs through: the test's judge target (or another
        target of targets.yaml, by name), under the run's limits (score/target_proxy.py)."""
        from ..plan.agentv import TargetSpec, load_targets
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
                found = self.targets_entry(name)
                spec = TargetSpec(name, config=found) if found is not None else judge
            provider, model_name = self.generate.provider(spec)
            # AgentV's proxy invokes the target as a test's answer is asked: its own settings, no max tokens else
            req = ChatRequest(model=model_name, messages=(ChatMessage("user", question),), system=system,
                              max_tokens=None)
            result = await self.calls.chat(provider, req, task.cell, limit_key=limit_key(spec), purpose="judge",
                                           model_label=spec.name)
            return result.text, result.usage.input_tokens, result.usage.output_tokens

        return TargetProxy(invoke, judge.name, available, max_calls_of(wants))

    def targets_entry(self, name: str) -> dict[str, Any] | None:
        """A target of targets.yaml by name (a judge an assertion names instead of the test's)."""
        from ..plan.agentv import load_targets

        try:
            return load_targets(self.plan.targets_file).get(name)
        except Exception:  # PlanError: the file was readable when the run was planned
            return None

    async def _chat(self, judge: TargetSpec, provider: Provider, req: ChatRequest, cell: Cell, index: int
                    ) -> ChatResult:
        """A judge call of an `rubrics`, `llm-judge` or aggregator: in batch mode from the next round's
        batches (generate/batch_rounds.py), else (or when no batch answers it) asked interactively."""
        if self.rounds is not None:
            from ..generate.batch_stage import BatchRequest

            request = BatchRequest(cell, judge_slot(index, judge.name), judge.name, judge.name, provider, req,
                                   custom=judge.config is not None, submit=self.generate.wants_batch(judge))
            got = await self.rounds.ask(request, purpose="judge", label=judge.name)
            if got is not None:
                return got
        return await self.calls.chat(provider, req, cell, limit_key=limit_key(judge), purpose="judge",
                                     model_label=judge.name)

    def _error(self, cell: Cell, index: int, judge: TargetSpec, message: str) -> None:
        self.journal.write(JudgeReply(cell, index, judge.name, None, message))

    async def template(self, a: Assertion, task: AgentvTask, answer: str, measured: Measured | None = None
                       ) -> str | None:
        """The llm-judge prompt: inline text, a template file (relative to the eval file), or what a
        prompt script (`prompt: {command}`) prints (code_judge.prompt_from_script). Raises TemplateError."""
        prompt = a.config.get("prompt")
        if prompt is None:
            return None
        if isinstance(prompt, dict):
            from ..write.agentv_measured import Measured
            from .code_judge import PromptScriptError, prompt_from_script

            try:
                return await prompt_from_script(prompt, a, task.test, measured or Measured(answer=answer),
                                                base=self.plan.path.parent, env=self.options.env,
                                                limit=self.script_limit)
            except PromptScriptError as err:
                raise TemplateError(str(err)) from None
        if not isinstance(prompt, str):
            raise TemplateError("the judge prompt is neither text, a file nor {command: [...]}")
        from ...agentv.files import FileSystem, looks_like_prompt_file, read_text

        if looks_like_prompt_file(prompt):
            base = (a.source_path or self.plan.path).parent
            fs = FileSystem()
            found = fs.resolve(prompt, fs.search_roots(base))
            if found is not None and fs.outside(found, base) and not self.options.allow_outside_files:
                raise TemplateError(f"the judge prompt file {prompt} is outside the project "
                                    "(--allow-outside-files reads it)")
            # Confined on the file opened: one swapped for a link pointing out since `check` is refused.
            text = read_text(found, FILE_LIMIT, inside=self.plan.inside) if found is not None else None
            if text is None:
                raise TemplateError(f"the judge prompt file {prompt} cannot be read (a regular file inside the "
                                    "project, with one link, is needed; --allow-outside-files lifts the latter)")
            return text
        return prompt


def _judge_kind(spec: TargetSpec) -> str:
    """Which API's tool format a judge speaks: anthropic, gemini, or openai (and compatibles)."""
    kind = provider_kind(spec) if spec.config is not None else provider_key(spec.model or spec.name)
    if kind in ("anthropic", "claude"):
        return "anthropic"
    if kind in ("gemini", "google", "vertex"):
        return "gemini"
    return "openai"
