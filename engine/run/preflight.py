"""What would fail before any call: missing API keys, unknown providers, unusable targets.

Providers are built exactly as the run builds them (which checks keys and settings) but nothing is
sent, so `--dry-run` can say "OPENROUTER_API_KEY is not set" without touching the network.

A problem `refuses` the run (exit 2 before any call, unless `--keep-going`) when every cell of a model
or target would fail with it: an unknown provider or a missing key for a model / target that answers,
an unknown provider for a judge (a typo, never meant). A judge or embedding model whose key is missing
only leaves those points not scored: it is listed, and the run goes on.

The eval file's check warnings are shown before the run as well (`file_warnings`), and repeated in the
closing notes with the prompt or test each lies in (`closing_notes`), so a typo (`shuld:`, `asserts:`)
that leaves cells not scored is named where the run's result is read.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..findings import Finding, Severity
from ..providers.base import CONFIG, MISSING_KEY, ProviderError
from .options import RunOptions

if TYPE_CHECKING:
    from ..analysis import Analysis
    from .runner import Plan


@dataclass(frozen=True, slots=True)
class Problem:
    who: str  # "model openai:x", "target default", "judge openai:y", or "" for the whole plan
    message: str
    refuses: bool = False

    def text(self) -> str:
        return f"{self.who}: {self.message}" if self.who else self.message


def problems(plan: Plan, options: RunOptions) -> list[str]:
    """One line per distinct problem: 30 models missing the same key are one line, not thirty."""
    return grouped(check(plan, options))


def refusing(found: list[Problem]) -> list[Problem]:
    return [p for p in found if p.refuses]


def grouped(found: list[Problem]) -> list[str]:
    by_message: dict[str, list[str]] = {}
    for p in found:
        by_message.setdefault(p.message, []).append(p.who)
    out = []
    for message, whos in by_message.items():
        whos = [w for w in whos if w]
        if len(whos) > 2:
            out.append(f"{message} ({len(whos)}: {', '.join(whos[:2])}, …)")
        elif whos:
            out.append(f"{', '.join(whos)}: {message}")
        else:
            out.append(message)
    return out


def did_you_mean(provider: str) -> str:
    """`; did you mean 'openai'?` for a provider name close to a known one; "" otherwise."""
    from ..providers.catalog import OFFLINE_PROVIDERS, PROVIDERS

    known = [*PROVIDERS, *OFFLINE_PROVIDERS, "azure", "gemini", "mock", "cli"]
    close = difflib.get_close_matches(provider.strip().lower(), known, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _provider_problem(who: str, model_id: str | None, err: ProviderError, *, answers: bool) -> Problem:
    message = err.message
    if err.kind == CONFIG and model_id and "unknown provider" in message:
        from ..providers.catalog import split_model_id

        message = message.replace(" (known:", f"{did_you_mean(split_model_id(model_id)[0])} (known:", 1)
    refuses = err.kind == CONFIG or (answers and err.kind == MISSING_KEY)
    return Problem(who, message, refuses)


def check(plan: Plan, options: RunOptions) -> list[Problem]:
    out: list[Problem] = []
    if plan.kind == "weval":  # (the other format's plan module is not loaded)
        from ..providers.factory import provider_for_model

        if plan.replay is None:
            for model in plan.models:
                spec = plan.model_specs.get(model, model)
                try:
                    provider_for_model(spec, env=options.env)
                except ProviderError as err:
                    out.append(_provider_problem(f"model {model}", spec if isinstance(spec, str) else None, err,
                                                 answers=True))
        # Judges matter only when some selected prompt has a judged point (or key points to extract).
        if "llm-coverage" in plan.eval_methods and plan.any_judged():
            bad = []
            for judge in plan.judges:
                try:
                    provider_for_model(judge.model, env=options.env)
                except ProviderError as err:
                    bad.append(_provider_problem(f"judge {judge.model}", judge.model, err, answers=False))
            out += bad
            if plan.judges and len(bad) == len(plan.judges):
                out.append(Problem("", "no judge can be called: judged (text) points will be reported as not scored"))
        if "embedding" in plan.eval_methods:
            try:
                provider_for_model(plan.blueprint.embedding_model, env=options.env)
            except ProviderError as err:
                out.append(_provider_problem(f"embedding model {plan.blueprint.embedding_model}",
                                             plan.blueprint.embedding_model, err, answers=False))
        return out
    return _agentv(plan, options)


def _agentv(plan: Plan, options: RunOptions) -> list[Problem]:
    from .plan.agentv import build_provider

    assert plan.kind == "agentv"
    out: list[Problem] = []
    seen: set[str] = set()
    called = [] if plan.replay is not None else plan.targets  # replay calls judges only
    judges = plan.tasks.judges()  # no task made per cell
    for spec in [*called, *judges]:
        if spec.name in seen:
            continue
        seen.add(spec.name)
        answers = spec in called
        try:
            build_provider(spec, options, client=None, base_dir=plan.path.parent)
        except ProviderError as err:
            who = f"target {spec.name}" if answers else f"judge {spec.name}"
            model_id = spec.model
            if spec.config is not None and err.kind == CONFIG and "unknown provider" in err.message:
                hint = did_you_mean(str(spec.config.get("provider") or ""))
                out.append(Problem(who, err.message.replace(" (supported:", f"{hint} (supported:", 1), True))
                continue
            out.append(_provider_problem(who, model_id, err, answers=answers))
    if plan.facts().unjudged:
        out.append(Problem("", "some tests need an LLM judge and their target has no judge_target: pass --judge MODEL"))
    return out


# --- the file's check warnings ------------------------------------------------------------------

MAPPED_AT_MOST = 200  # warnings tied to their item; past this (a generated file) listed without it


@dataclass(frozen=True, slots=True)
class FileWarning:
    line: str  # path:line:col: warning[code]: message
    item: str | None  # the prompt / test id it lies in
    code: str
    suggestion: str | None  # the did-you-mean of an unknown key


def warnings_of(analysis: Analysis) -> list[Finding]:
    return [f for f in analysis.findings if f.severity == Severity.WARNING]


def file_warnings(analysis: Analysis, found: list[Finding]) -> list[FileWarning]:
    if not found:
        return []
    from ..finding_format import format_finding

    # each item's lines, only for warnings to map (no warning: no prompt or test decoded from its store)
    items = _items(analysis) if found and len(found) <= MAPPED_AT_MOST else []
    out = []
    for f in found:
        item = next((i for path, first, last, i in items
                     if path == (f.path or None) and first <= f.span.start_line <= last), None)
        suggestion = f.extra.get("suggestion")
        out.append(FileWarning(format_finding(analysis, f), item, f.code,
                               suggestion if isinstance(suggestion, str) else None))
    return out


def _items(analysis: Analysis) -> list[tuple[str | None, int, int, str]]:
    """(the finding path its findings carry, first line, last line, id) of each prompt / test."""
    out: list[tuple[str | None, int, int, str]] = []
    bp = analysis.blueprint
    if bp is not None:
        for p in bp.prompts:
            out.append((None, p.span.start_line, p.span.end_line, p.id))
    suite = analysis.suite
    if suite is not None:
        own = analysis.path.resolve() if analysis.path is not None else None
        resolved: dict[Any, Any] = {}  # each tests file's real path, found once (not once a test)
        for t in suite.tests:
            src: Any = t.source_path
            if src is not None and src not in resolved:
                resolved[src] = src.resolve()
            where = None if src is None or (own is not None and resolved[src] == own) else str(src)
            out.append((where, t.span.start_line, t.span.end_line, t.id))
    return out


def closing_notes(warnings: list[FileWarning], not_scored_items: set[str]) -> list[str]:
    """The warnings again, after the results: each with its item, and why it may be the cause when that
    item has cells not scored."""
    out = []
    for w in warnings:
        line = f"check warning: {w.line}"
        if w.item is not None:
            line += f" (in {w.item!r}"
            if w.item in not_scored_items:
                line += ", which has cell(s) not scored"
                if w.code == "unknown-key" and w.suggestion in ("should", "should_not"):
                    line += ": the key is ignored, so its points were not run"
                elif w.code == "unknown-key" and w.suggestion in ("assert", "assertions"):
                    line += (": the key is ignored, so the test has no assertions and is graded by AgentV's "
                             "default LLM judge against its criteria")
            line += ")"
        out.append(line)
    return out
