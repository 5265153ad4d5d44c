"""The Markdown report (`evalspec report --format markdown`): for `$GITHUB_STEP_SUMMARY`, pull-request
comments and editors. The summary per model, then the failing items (and, comparing two runs, the
regressions and improvements first). Untrusted text (answers, reasons, ids, names) is flattened to one
line with control characters visible, HTML-escaped (GitHub renders HTML inside Markdown) and its Markdown
punctuation escaped (`cell_text`), or put in a code span it cannot close (`code_text`). Read as text
(`html=False`: an editor's Markdown buffer, which renders no HTML) it is not HTML-escaped: `&` stays `&`.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from typing import Any

from ..markdown_code import code_span
from ..terminal_text import shown
from .costs import with_answer_costs
from .diff import IMPROVED, REGRESSED, RunDiff, describe, run_names
from .model import ERROR, NOT_SCORED, CellResult, ModelStats, RunResults

LIMIT = 50  # rows per table; the rest is counted


# A link or image needs `](` (an answer's `![](https://…)` is an image GitHub fetches for everyone who opens
# the pull request): its `(` is escaped, as are backslashes (so the text cannot undo an escape), backticks
# (code spans) and `|` (table cells). Other Markdown (emphasis) only styles the text.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`|]|(?<=\])\()")
# An @mention in a comment notifies that user or team: a word joiner after the `@` keeps it text.
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")


_AS_HTML: ContextVar[bool] = ContextVar("markdown_as_html", default=True)  # render_markdown's `html`


def _flat(value: object, limit: int) -> str:
    text = shown(" ".join(str(value).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cell_text(value: object, limit: int = 160) -> str:
    """Untrusted text for a table cell or a line: one line, controls visible, Markdown and HTML inert."""
    text = _MARKDOWN_PUNCTUATION.sub(r"\\\1", _flat(value, limit))
    if _AS_HTML.get():
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MENTION.sub("@\u2060", text)


def code_text(value: object, limit: int = 160) -> str:
    """Untrusted text as a code span (shown as written: nothing in it renders): a fence longer than any
    run of backticks inside."""
    return code_span(_flat(value, limit))


def fmt_count(n: int) -> str:
    return f"{n:,}"


def fmt_score(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def fmt_duration(ms: float) -> str:
    return f"{ms / 1000:,.1f} s" if ms >= 1000 else f"{ms:,.0f} ms"


def wall_text(sessions: tuple[float, ...]) -> str:
    """"wall time 9.5 s"; a resumed run's "wall time 12.3 s (2 sessions: 8.2 s + 4.1 s)" (the time between
    them is not the run's). As the page's wallText."""
    def secs(x: float) -> str:
        if x < 60:
            return f"{x:.1f} s"
        return f"{x // 60:.0f} min {x % 60:02.0f} s" if x < 3600 else f"{x // 3600:.0f} h {x % 3600 // 60:02.0f} min"

    text = f"wall time {secs(sum(sessions))}"
    if len(sessions) > 1:
        text += f" ({len(sessions)} sessions: {' + '.join(secs(x) for x in sessions)})"
    return text


def summary_rows(stats: list[ModelStats]) -> list[list[str]]:
    rows = []
    for s in stats:
        rows.append([s.model, fmt_count(s.cells), fmt_score(s.mean), fmt_count(s.passed), fmt_count(s.borderline),
                     fmt_count(s.failed), fmt_count(s.not_scored), fmt_count(s.errors),
                     f"{fmt_count(s.tokens_in)} / {fmt_count(s.tokens_out)}" if s.tokens_known else "—",
                     _cost_cell(s),
                     fmt_duration(s.duration_ms) if s.duration_known else "—"])
    return rows


def _cost_cell(s: ModelStats) -> str:
    from .costs import usd_text

    if s.cost_missing:  # some cells' cost is unknown: never shown as a total
        return f"at least {usd_text(s.cost_usd)}" if s.cost_known else "unknown"
    return usd_text(s.cost_usd) if s.cost_known else "—"


SUMMARY_HEADERS = ["model", "cells", "mean", "pass", "borderline", "fail", "not scored", "errors",
                   "tokens in / out", "cost", "call time"]


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def why_failed(c: CellResult) -> str:
    """The first failed point (or the error, or why nothing was scored), for a table or a terminal."""
    if c.status == ERROR:
        return f"error: {c.error}"
    first = c.first_failed_point()
    if first is not None:
        return f"{first.text} ({fmt_score(first.score)})"
    if c.status == NOT_SCORED:
        reasons = [p.not_scored for p in c.points if p.not_scored]
        return f"not scored: {reasons[0]}" if reasons else "not scored"
    return ""


def failing(run: RunResults) -> list[tuple[str, str, CellResult]]:
    """Errors and failing cells, worst first (errors, then by score)."""
    out = [(i.id, m, c) for i in run.items for m in run.models
           if (c := run.cells.get((i.id, m))) is not None and (c.status == ERROR or c.verdict == "fail")]
    out.sort(key=lambda t: (t[2].status != ERROR, t[2].score if t[2].score is not None else 0.0))
    return out


def render_markdown(runs: list[RunResults], diff: RunDiff | None = None, *, html: bool = True) -> str:
    """`html`: the text is rendered as GitHub renders Markdown (HTML inside it works, so untrusted text is
    HTML-escaped); False: read as text (an editor's buffer), where an escape would show as `&amp;`."""
    token = _AS_HTML.set(html)
    try:
        return _render_markdown(runs, diff)
    finally:
        _AS_HTML.reset(token)


def _render_markdown(runs: list[RunResults], diff: RunDiff | None) -> str:
    run = runs[-1]
    lines = [f"## evalspec report: {cell_text(run.title)}", ""]
    if diff is not None:
        old_name, new_name = run_names(runs[0], run)
        lines += [f"Comparing {code_text(old_name)} (old) with {code_text(new_name)} (new); score changes under "
                  f"{diff.threshold:g} are not counted.", "",
                  f"**{fmt_count(diff.count(REGRESSED))} regressed, {fmt_count(diff.count(IMPROVED))} improved**, "
                  f"{fmt_count(diff.count('changed'))} changed otherwise, {fmt_count(diff.count('added'))} new, "
                  f"{fmt_count(diff.count('removed'))} gone.", ""]
        for kind, title in ((REGRESSED, "Regressions"), (IMPROVED, "Improvements")):
            cells = diff.cells(kind)
            if not cells:
                continue
            lines += [f"### {title} ({fmt_count(len(cells))})", ""]
            rows = [[cell_text(i), cell_text(m), describe(runs[0].cells.get((i, m)), run.cells.get((i, m))),
                     cell_text(why_failed(run.cells[(i, m)])) if (i, m) in run.cells else ""]
                    for i, m in cells[:LIMIT]]
            lines += _table(["item", "model", "old → new", "now failing on"], rows)
            if len(cells) > LIMIT:
                lines.append(f"\n… and {fmt_count(len(cells) - LIMIT)} more")
            lines.append("")
    what = "blueprint" if run.kind == "weval" else "suite"
    lines.append(f"{what.capitalize()} run {code_text(run.run_label or '—')} · {cell_text(run.timestamp or '—')} · "
                 f"{fmt_count(len(run.items))} item(s) × {fmt_count(len(run.models))} model(s)"
                 + (f" · {wall_text(run.wall)}" if run.wall else ""))
    lines.append("")
    for note in run.notes:
        lines += [f"> {cell_text(note, 400)}", ""]
    lines += _table(SUMMARY_HEADERS, [[cell_text(c) for c in r] for r in summary_rows(with_answer_costs(run.summaries(), run.costs))])
    lines.append("")
    if run.costs:
        lines += cost_section(run.costs)
    bad = failing(run)
    lines.append(f"### Failing items ({fmt_count(len(bad))})")
    lines.append("")
    if bad:
        rows = [[cell_text(i), cell_text(m), "error" if c.status == ERROR else fmt_score(c.score),
                 cell_text(why_failed(c))] for i, m, c in bad[:LIMIT]]
        lines += _table(["item", "model", "score", "first failed point"], rows)
        if len(bad) > LIMIT:
            lines.append(f"\n… and {fmt_count(len(bad) - LIMIT)} more")
    else:
        lines.append("None.")
    lines.append("")
    unscored = [(i.id, m, c) for i in run.items for m in run.models
                if (c := run.cells.get((i.id, m))) is not None and c.status == NOT_SCORED]
    if unscored:  # a check that was not made is never a pass: say which, and why
        lines += [f"### Not scored ({fmt_count(len(unscored))})", ""]
        lines += _table(["item", "model", "why"], [[cell_text(i), cell_text(m), cell_text(why_failed(c))]
                                                   for i, m, c in unscored[:LIMIT]])
        if len(unscored) > LIMIT:
            lines.append(f"\n… and {fmt_count(len(unscored) - LIMIT)} more")
        lines.append("")
    return "\n".join(lines)


def cost_section(costs: dict[str, Any]) -> list[str]:
    """Real tokens and cost per role and model (judges on their own lines); unknown stays unknown."""
    from .costs import total_text, usd_text

    lines = costs.get("lines") or []
    # The way the calls were sent, when some went through a batch API (at its price).
    via = any(x.get("via") == "batch" for x in lines)
    rows = [[cell_text(x["role"]), cell_text(x["model"]), *([x.get("via") or "interactive"] if via else []),
             fmt_count(x["calls"]), fmt_count(x["input_tokens"]), fmt_count(x["output_tokens"]), usd_text(x["usd"])]
            for x in lines]
    out = ["### Tokens and cost", ""]
    out += _table(["role", "model", *(["sent"] if via else []), "calls", "input tokens", "output tokens", "cost"], rows)
    out += ["", f"Total cost: {cell_text(total_text(costs))}", ""]
    if costs.get("stopped"):
        out += [f"> Stopped: {cell_text(str(costs['stopped']))}", ""]
    return out
