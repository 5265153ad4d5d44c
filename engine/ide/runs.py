"""Runs seen from the editor, as plain data: what can be run in an eval file, and what its runs found.

`run_items(analysis)` lists the suite and each inline prompt / test, with the span its run lens sits
on and a fingerprint of its source text. `RunBoard` is one document's run state, fed by the runner's
own events (run/events.py; as JSON lines from the run's own process, run_process.py): per item and
model the latest score, verdict, error and details. The lens titles and the hover markdown are
derived from it here, so the server only converts and sends them.

A result outlives the text it scored: when an item's text changes after its run, its results are
marked as older than the text instead of vanishing or pretending to still hold.
"""

from __future__ import annotations

import bisect
import copy
import time
from dataclasses import dataclass, field
from typing import Any

from ..detect import FileKind
from ..findings import Span
from ..providers.redact import redact, redact_value
from ..run.events import (
    CallStarted,
    CellFailed,
    Event,
    ModelSummary,
    RateLimit,
    Response,
    Retrying,
    RunFinished,
    RunStarted,
    RunSummary,
    Scored,
    from_json,
)
from ..run.plan.items import entries as _entries
from ..run.plan.items import fingerprint as _fingerprint
from ..run.plan.items import runnable as _runnable
from .markdown_text import md_code, md_fence, md_text, plain

MAX_MODELS_IN_TITLE = 3  # more than this, and an item's result lens shows counts instead
ANSWER_EXCERPT = 600  # characters of an answer shown on hover
VERDICT_MARK = {"pass": "✓", "borderline": "~", "fail": "✗", "not scored": "⊘"}
UNSCORED_IN_TITLE = 70  # characters of "which check was not scored, and why" in a result lens


@dataclass(frozen=True, slots=True)
class RunItem:
    kind: str  # "suite" | "prompt" | "test"
    item_id: str | None  # None for the suite
    span: Span  # where its lens goes: the item's first line
    fingerprint: str = ""  # of its source text (run/plan/items.py); "" for the suite


def run_items(analysis: Any) -> list[RunItem]:
    """The suite (first), then every prompt or test written in this file, in order. Tests that come
    from an external tests file run with the suite but have no lens here."""
    if not _runnable(analysis):
        return []
    # Once per analysis (fingerprints of every item's text: 0.1-0.5 s on a 4 MB file); the server asks
    # for the lenses and to follow renamed ids. A copy, so no caller changes the kept list.
    return list(analysis.memoised("ide.run-items", _run_items))


def _run_items(analysis: Any) -> list[RunItem]:
    lines: list[str] = analysis.parsed.lines
    return [RunItem("suite", None, _suite_span(analysis)),
            *(RunItem(kind, item_id, _first_line(span), _fingerprint(lines, span))
              for kind, item_id, span in _entries(analysis))]


def item_at_line(analysis: Any, line: int) -> str | None:
    """The id of the prompt or test whose first line is `line` (where its lens sits), if any. Cheaper
    than run_items: a hover needs one item, not every fingerprint."""
    return next((item_id for _, item_id, span in _entries(analysis) if span.start_line == line), None)


# The lines of a prompt or test that offer its Run code actions: its first line and these keys' lines.
# Elsewhere nothing is offered (an action on every line put a lightbulb after the cursor everywhere).
RUN_LINE_KEYS = ("id:", "prompt:", "messages:", "input:")


def run_line_item(lines: Any, listed: list[tuple[str, str, Span]], line: int) -> str | None:
    """The id of the prompt or test whose run actions `line` offers (`listed`: run/plan/items.entries
    in file order), or None: only its first line and its id / prompt / messages / input lines do."""
    k = bisect.bisect_right(listed, line, key=lambda e: e[2].start_line) - 1
    if k < 0 or listed[k][2].end_line < line:
        return None
    _, item_id, span = listed[k]
    if line == span.start_line:
        return item_id
    text = str(lines[line]).lstrip() if 0 <= line < len(lines) else ""
    text = text[2:].lstrip() if text.startswith("- ") else text
    return item_id if text.startswith(RUN_LINE_KEYS) else None


def file_models(analysis: Any) -> list[str]:
    """The models (Weval) or targets (AgentV) the file names, in order, each once."""
    blueprint, suite = getattr(analysis, "blueprint", None), getattr(analysis, "suite", None)
    if blueprint is not None:
        return list(dict.fromkeys(blueprint.models_resolved or [m.id for m in blueprint.models]))
    return list(dict.fromkeys(suite.targets)) if suite is not None else []


def _suite_span(analysis: Any) -> Span:
    """The suite's lens: the AgentV file's first line; the Weval header's (else the first prompt's)."""
    if analysis.kind is FileKind.AGENTV:
        return _first_line(analysis.suite.span)
    result = analysis.weval
    node = result.header_node if result.header_node is not None else (
        result.prompt_nodes[0] if result.prompt_nodes else None)
    return _first_line(node.span) if node is not None else Span(0, 0, 0, 0)


def _first_line(span: Span) -> Span:
    return Span(span.start_line, span.start_col, span.start_line, span.start_col)



# --- results ----------------------------------------------------------------------------------------

@dataclass(slots=True)
class CellResult:
    model: str
    score: float | None = None
    verdict: str | None = None
    error: str | None = None
    answer: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    running: bool = False
    retry: str | None = None  # "429, retrying in 2.0 s" while it waits
    cancelled: bool = False  # its call was in flight when the run was cancelled
    when: float | None = None  # when it was run (epoch s), for results read back from disk; None: this session


@dataclass
class RunHistory:
    """Earlier runs' results of a file, read back from disk (run_history.py) for `RunBoard.restore`."""

    results: dict[str, dict[str, CellResult]] = field(default_factory=dict)
    fingerprints: dict[str, str] = field(default_factory=dict)
    summary: RunSummary | None = None
    summary_when: float | None = None
    cancelled: bool = False  # the run the summary is of was cancelled by the user
    journal: str | None = None  # of the newest run
    files: list[str] = field(default_factory=list)  # result files of the newest run

    @property
    def empty(self) -> bool:
        return not self.results and self.summary is None


@dataclass
class RunBoard:
    """One document's runs: the one going on (if any) and the results of every item ever run, newest
    per (item, model). A run of one prompt keeps the other prompts' earlier results."""

    running: bool = False
    label: str = ""
    total: int = 0
    done: int = 0
    errors: int = 0
    summary: RunSummary | None = None
    interrupted: bool = False
    cancelled: bool = False  # the user stopped the last run (interrupted says it did not finish)
    summary_when: float | None = None  # the summary was read back from disk: when that run was made
    journal: str | None = None  # the journal of the last run
    results: dict[str, dict[str, CellResult]] = field(default_factory=dict)
    fingerprints: dict[str, str] = field(default_factory=dict)  # of each item's text when it last ran
    renamed: dict[str, str] = field(default_factory=dict)  # ids renamed since the run started: old -> new
    cells: set[tuple[str, str]] = field(default_factory=set)  # (item, model) of the last run, as named then
    # Per provider and key while the run is going: its last RateLimit event (the current concurrency)
    # and the last one that slowed it down (why), shown in the progress as
    # "openai 17/32 (429: waiting 5 s, concurrency 32 → 16)".
    pacing: dict[str, RateLimit] = field(default_factory=dict)
    slowed: dict[str, RateLimit] = field(default_factory=dict)
    _before: RunBoard | None = field(default=None, repr=False, compare=False)  # the state start() replaced

    def start(self, items: list[RunItem], scope: str | None) -> None:
        """A run begins for `scope` (one item id) or the whole suite (None). Until its RunStarted event
        the state before it is kept, for `refuse()`."""
        before = copy.copy(self)
        before.results, before.fingerprints = dict(self.results), dict(self.fingerprints)
        before._before = None
        self._before = before
        self.running = True
        self.total = self.done = self.errors = 0
        self.summary, self.summary_when, self.interrupted, self.cancelled = None, None, False, False
        self.renamed, self.cells, self.pacing, self.slowed = {}, set(), {}, {}
        for item in items:
            if item.item_id is not None and (scope is None or item.item_id == scope):
                self.fingerprints[item.item_id] = item.fingerprint
                self.results.pop(item.item_id, None)  # their old results are about to be replaced

    def refuse(self) -> None:
        """The run never started (another process holds its run database's lock, run/journal/database.py): the
        board is as it was before `start()`, its earlier results and summary kept."""
        before = self._before
        if before is None:
            self.stop(interrupted=True)
            return
        self.__dict__.update(before.__dict__)
        self._before = None
        self.running = False

    def stop(self, *, interrupted: bool = False, cancelled: bool = False) -> None:
        """The run ended. When it did not finish, the calls in flight are marked cancelled and the
        summary covers the cells that did finish, so the suite's lens keeps saying what happened."""
        was_running = self.running
        self.running = False
        self.interrupted = self.interrupted or interrupted or cancelled
        self.cancelled = self.cancelled or cancelled
        for by_model in self.results.values():
            for cell in by_model.values():
                if cell.running and self.interrupted:
                    cell.cancelled = True
                cell.running, cell.retry = False, None
        if was_running and self.interrupted and self.summary is None:
            self.summary = self._partial_summary()

    def cancelled_cells(self) -> list[tuple[str, str]]:
        """(item, model) of the last run's cells stopped in flight (for the journal: run_history.py)."""
        return sorted((item, model) for item, model in self.cells
                      if (cell := self.results.get(self.renamed.get(item, item), {}).get(model)) is not None
                      and cell.cancelled and cell.score is None and not cell.error)

    def _partial_summary(self) -> RunSummary:
        per_model: dict[str, list[CellResult]] = {}
        for item, model in self.cells:
            cell = self.results.get(self.renamed.get(item, item), {}).get(model)
            if cell is not None:
                per_model.setdefault(model, []).append(cell)
        return RunSummary(kind="", run_label=self.label, interrupted=True,
                          models=tuple(model_summary(m, cells) for m, cells in per_model.items()))

    def _cell(self, item: str, model: str) -> CellResult:
        self.cells.add((item, model))
        item = self.renamed.get(item, item)
        return self.results.setdefault(item, {}).setdefault(model, CellResult(model))

    def rename(self, old: str, new: str) -> None:
        """An item's id was edited: its results (and those still to come under the old id) follow it."""
        if old == new or old not in self.results or new in self.results:
            return
        self.results[new] = self.results.pop(old)
        if old in self.fingerprints:
            self.fingerprints[new] = self.fingerprints.pop(old)
        for first, current in list(self.renamed.items()):
            if current == old:
                self.renamed[first] = new
        self.renamed[old] = new

    def follow(self, before: list[RunItem], after: list[RunItem]) -> None:
        """Detect ids renamed between two analyses of the same document: the same items in the same
        places, one id gone and one new at the same place."""
        if len(before) != len(after):
            return
        old_ids = {i.item_id for i in before}
        new_ids = {i.item_id for i in after}
        for a, b in zip(before, after, strict=True):
            if (a.item_id != b.item_id and a.item_id is not None and b.item_id is not None
                    and a.item_id not in new_ids and b.item_id not in old_ids):
                self.rename(a.item_id, b.item_id)

    def apply(self, event: Event) -> None:
        # What the editor shows of a run comes straight from its events, never through a file that
        # masks keys on writing: an answer or error echoing a key is masked here (providers/redact.py).
        if isinstance(event, RunStarted):
            self._before = None
            self.label = str(event.plan.get("run_label") or "")
            self.total = int(event.plan.get("cells") or 0)
            self.journal = str(event.plan.get("journal") or "") or None
        elif isinstance(event, CallStarted):
            if event.purpose == "generate":
                cell = self._cell(*event.cell)
                cell.running, cell.retry = True, None
        elif isinstance(event, Retrying):
            self._cell(*event.cell).retry = redact(f"{event.reason}, retrying in {event.delay:.1f} s")
        elif isinstance(event, RateLimit):
            self.pacing[event.provider] = event
            if event.gave_up or event.concurrency < event.previous or event.wait >= 0.05 or event.pace:
                self.slowed[event.provider] = event
        elif isinstance(event, Response):
            cell = self._cell(*event.cell)
            cell.answer, cell.retry = redact(event.text), None
        elif isinstance(event, Scored):
            cell = self._cell(*event.cell)
            cell.score, cell.verdict, cell.details = event.score, event.verdict, redact_value(dict(event.details))
            cell.error = detail_error(event.details)
            cell.running, cell.retry = False, None
            self.done += 1
        elif isinstance(event, CellFailed):
            cell = self._cell(*event.cell)
            cell.score = cell.verdict = None
            cell.error, cell.running, cell.retry = redact(event.error), False, None
            self.done += 1
            self.errors += 1
        elif isinstance(event, RunFinished):
            self.summary = event.summary
            self.stop(interrupted=event.summary.interrupted)

    def apply_json(self, data: dict[str, Any]) -> Event | None:
        """`apply` the event `to_json()` wrote; the event, or None for a type not known (left out)."""
        event = from_json(data)
        if event is not None:
            self.apply(event)
        return event

    def restore(self, history: RunHistory) -> None:
        """Results read back from disk (run_history.py): shown as if just run, with their age. Only
        items this session has not run yet take them."""
        if self.running:
            return
        for item, by_model in history.results.items():
            if item in self.results:
                continue
            self.results[item] = by_model
            if item in history.fingerprints:
                self.fingerprints[item] = history.fingerprints[item]
        if self.summary is None and history.summary is not None:
            self.summary, self.summary_when = history.summary, history.summary_when
            self.label, self.interrupted = history.summary.run_label, history.summary.interrupted
            self.cancelled = history.cancelled
            self.journal = history.journal

    # --- what the editor shows ----------------------------------------------------------------------

    def is_stale(self, item: RunItem) -> bool:
        return item.item_id in self.fingerprints and self.fingerprints[item.item_id] != item.fingerprint

    def progress_text(self) -> str:
        text = f"{self.done}/{self.total} done" if self.total else "starting"
        text += f", {self.errors} error(s)" if self.errors else ""
        if self.running:
            for name, e in self.pacing.items():  # providers slowed down by their rate limits
                if e.gave_up or e.concurrency < e.ceiling:
                    why = self.slowed.get(name, e)
                    text += f"; {name} {e.concurrency}/{e.ceiling} ({why.text().removeprefix(name + ': ')})"
        return text

    def outcome(self, item: str | None) -> str:
        """How the last run (of `item`, else of the file) ended, in a sentence ("run finished: mean …")."""
        what = f"run of {item}" if item else "run"
        if self.summary is None:
            return f"{what} stopped after {self.done} of {self.total} cell(s); every result received is kept"
        mean = self.summary.mean
        head = f"{what} {'cancelled' if self.cancelled else 'interrupted' if self.interrupted else 'finished'}"
        score = f"mean {mean:.3f}" if mean is not None else "nothing scored"
        done = f"{self.done} of {self.total} cell(s)" if self.interrupted and self.total else f"{self.done} cell(s)"
        return f"{head}: {score}, {done}, {self.errors} error(s)"

    def suite_title(self, now: float | None = None) -> str | None:
        """The suite's result lens: the last run's outcome, or None before any run."""
        if self.running:
            return plain(f"running: {self.progress_text()}")
        if self.summary is None:
            return None
        s = self.summary
        mean = s.mean
        counts = _count(list(s.models))
        head = "cancelled" if self.cancelled else "interrupted" if s.interrupted else "last run"
        if self.summary_when is not None:
            head += f" ({age(self.summary_when, now)})"
        text = f"{head}: mean {_score(mean)}" if mean is not None else f"{head}: nothing scored"
        return plain(text + counts)

    def item_title(self, item: RunItem, now: float | None = None) -> str | None:
        """An item's result lens: per model its mark and score, or counts when there are many."""
        by_model = self.results.get(item.item_id or "")
        if not by_model:
            return None
        cells = list(by_model.values())
        if any(c.running for c in cells):
            waiting = next((c.retry for c in cells if c.retry), None)
            return "running…" + (f" ({plain(waiting)})" if waiting else "")
        if len(cells) <= MAX_MODELS_IN_TITLE:
            text = " · ".join(f"{_mark(c)} {_cell_value(c)} {plain(c.model)}" for c in cells)
        else:
            scored = [c.score for c in cells if c.score is not None]
            mean = sum(scored) / len(scored) if scored else None
            text = f"{len(cells)} models: mean {_score(mean)}" + _cell_counts(cells)
        when = [c.when for c in cells if c.when is not None]
        if when:
            text += f" ({age(max(when), now)})"
        return plain(text) + (" (text changed since)" if self.is_stale(item) else "")

    def item_markdown(self, item_id: str, now: float | None = None) -> str | None:
        """Hover text: the item's last result per model, the points or assertions, the answer."""
        by_model = self.results.get(item_id)
        if not by_model:
            return None
        when = [c.when for c in by_model.values() if c.when is not None]
        # Everything below but our own words is someone else's text: escaped (markdown_text.py).
        out = [f"**Last run** of {md_code(item_id)}" + (f", {age(max(when), now)}" if when else "")]
        for cell in by_model.values():
            out.append("")
            out.append(f"**{md_text(cell.model)}**: {_mark(cell)} {md_text(_cell_value(cell))}"
                       + (f" ({md_text(cell.verdict)})" if cell.verdict else ""))
            if cell.error:
                out.append(f"\n> {md_text(_one_line(cell.error, 300))}")
            out += _breakdown(cell.details)
            if cell.answer:
                answer = cell.answer if len(cell.answer) <= ANSWER_EXCERPT else cell.answer[:ANSWER_EXCERPT] + "…"
                out.append("\nAnswer:\n" + md_fence(answer))
        return "\n".join(out)


def age(when: float, now: float | None = None) -> str:
    """`just now`, `5 min ago`, `3 h ago`, `2 days ago`."""
    seconds = max(0.0, (time.time() if now is None else now) - when)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86400)
    return f"{days} day{'s' if days != 1 else ''} ago"


def model_summary(model: str, cells: list[CellResult]) -> ModelSummary:
    scored = [c.score for c in cells if c.score is not None]
    verdicts = [c.verdict for c in cells]
    return ModelSummary(model=model, cells=len(cells), scored=len(scored),
                        mean=sum(scored) / len(scored) if scored else None,
                        passed=verdicts.count("pass"), borderline=verdicts.count("borderline"),
                        failed=verdicts.count("fail"),
                        not_scored=sum(1 for c in cells if c.score is None and not c.error and not c.cancelled),
                        errors=sum(1 for c in cells if c.error and c.score is None))


def detail_error(details: dict[str, Any]) -> str | None:
    error = details.get("error")
    if isinstance(error, str) and error.startswith("Not scored:"):
        return None  # nothing went wrong: there was nothing to score (the hover says why)
    return str(error) if error else None


def _breakdown(details: dict[str, Any]) -> list[str]:
    """Weval point assessments or AgentV assertion scores, one line each."""
    lines: list[str] = []
    for p in details.get("pointAssessments") or []:
        if not isinstance(p, dict):
            continue
        extent = p.get("coverageExtent")
        value = _score(extent) if isinstance(extent, int | float) else "not scored"
        text = md_text(_one_line(str(p.get("keyPointText") or ""), 80))
        where = f" \\[{md_text(str(p['pathId']))}\\]" if p.get("pathId") else ""
        inverted = " (should not)" if p.get("isInverted") else ""
        why = p.get("error") or ""
        lines.append(f"- {value} {text}{where}{inverted}" + (f": {md_text(_one_line(str(why), 120))}" if why else ""))
    for s in details.get("scores") or []:
        if not isinstance(s, dict):
            continue
        value = _score(s["score"]) if isinstance(s.get("score"), int | float) else "not scored"
        name = md_text(str(s.get("name") or s.get("type") or "?"))
        verdict = f" ({md_text(str(s['verdict']))})" if s.get("verdict") else ""
        reason = s.get("reasoning") or ""
        lines.append(f"- {value} {name}{verdict}" + (f": {md_text(_one_line(str(reason), 120))}" if reason else ""))
    return ["", *lines] if lines else []


def _mark(cell: CellResult) -> str:
    if cell.cancelled and cell.score is None and not cell.error:
        return "⊘"
    if cell.error and cell.score is None:
        return "⚠"
    return VERDICT_MARK.get(cell.verdict or "", "–")


def _cell_value(cell: CellResult) -> str:
    if cell.score is not None:
        return _score(cell.score)
    if cell.error:
        return "error"
    if cell.cancelled:
        return "cancelled"
    return "not scored" + _unscored(cell.details)


def _unscored(details: dict[str, Any]) -> str:
    """AgentV: which assertion was not scored and why (a required one first), for a lens title."""
    items = [u for u in details.get("not_scored") or [] if isinstance(u, dict)]
    if not items:
        return ""
    first = next((u for u in items if u.get("required")), items[0])
    more = f" +{len(items) - 1} more" if len(items) > 1 else ""
    text = f"{first.get('name')}: {first.get('reason')}"
    return f" ({plain(_one_line(text, UNSCORED_IN_TITLE))}{more})"


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _count(models: list[Any]) -> str:
    passed = sum(m.passed for m in models)
    borderline = sum(m.borderline for m in models)
    failed = sum(m.failed for m in models)
    errors = sum(m.errors for m in models)
    unscored = sum(m.not_scored for m in models)
    parts = [f"{passed} pass"] + ([f"{borderline} borderline"] if borderline else []) + [f"{failed} fail"]
    if unscored:
        parts.append(f"{unscored} not scored")
    if errors:
        parts.append(f"{errors} error(s)")
    return " · " + " · ".join(parts)


def _cell_counts(cells: list[CellResult]) -> str:
    by = {"pass": 0, "borderline": 0, "fail": 0}
    for c in cells:
        if c.verdict in by:
            by[c.verdict] += 1
    errors = sum(1 for c in cells if c.error and c.score is None)
    unscored = sum(1 for c in cells if c.verdict == "not scored")
    parts = ([f"{by['pass']} pass", f"{by['fail']} fail"] + ([f"{unscored} not scored"] if unscored else [])
             + ([f"{errors} error(s)"] if errors else []))
    return " · " + " · ".join(parts)


def _one_line(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
