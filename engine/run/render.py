"""Showing a run to a person (a live status line or plain lines, then a table) or to a machine (JSON lines).

On a terminal one status line is live from the start (redrawn by `tick()` as well as by events, so a
slow first answer does not leave the screen blank): done/total, cells running, errors, the ETA, the
answers' cost so far, and the rate-limit state of each provider (its concurrency, a pause); rate-limit
changes stay in that line instead of scrolling. Piped, progress is a line per tenth or 5 s. The closing
table is coloured on a terminal (not when piped or with NO_COLOR).

Our own rendering rather than rich: the line is one `\r\x1b[K` redraw that terminal_text.SafeStream lets
through, the table a few ANSI colours, and the start of every `evalspec` command stays free of rich's
import (bench/cli_start.py).

Rendering is cheap on purpose: a 2,000-cell run yields ~6,000 events in a second or two, so the bar is
redrawn at most ten times a second and nothing is formatted for events that are not shown.
"""

from __future__ import annotations

import json
import time
from heapq import heappush, heapreplace
from typing import Any, TextIO

from ..pricing import call_cost
from ..providers.redact import clip, redact
from ..scoring.agentv_aggregate import PASS_THRESHOLD  # report.model's PASS, without the report's modules
from ..terminal_text import shown
from .events import (
    BatchProgress,
    CallStarted,
    CellFailed,
    Event,
    Notice,
    RateLimit,
    Response,
    Retrying,
    RunFinished,
    RunStarted,
    RunSummary,
    Scored,
)

_FINISHED = (Scored, CellFailed)  # a cell's last event (a tuple: `Scored | CellFailed` is made at each use)
REDRAW_INTERVAL = 0.1
LINE_INTERVAL = 5.0  # plain-lines mode: a progress line at most this often (and at each 10%)


class _Redacting:
    """A text stream that masks known secrets (providers/redact.py) in everything written to it."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        return self.inner.write(redact(text))

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()


class JsonRenderer:
    """One JSON object per event, per line, on stdout (`--json`). The closing `run_finished` line is
    written at `close`, with the run's wall time (`wall_time_s`, and `session_wall_times_s` for each
    session of a resumed run) once the run database has it."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.summary: RunSummary | None = None
        self._dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
        self.journal: str | None = None
        self.wall: tuple[float, ...] | None = None
        self._finished: dict[str, Any] | None = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.journal = event.plan.get("journal")
        if isinstance(event, RunFinished):
            self.summary = event.summary
            self._finished = event.to_json()
            return
        self.out.write(redact(self._dumps(event.to_json())) + "\n")

    def close(self, interrupted: bool = False) -> None:
        finished, self._finished = self._finished, None
        if finished is not None:
            if self.wall:
                finished["summary"]["wall_time_s"] = round(sum(self.wall), 3)
                finished["summary"]["session_wall_times_s"] = [round(w, 3) for w in self.wall]
            self.out.write(redact(self._dumps(finished)) + "\n")
        self.out.flush()


class HumanRenderer:
    """A progress bar on a terminal (stderr), plain lines otherwise; the final table on stdout."""

    def __init__(self, out: TextIO, err: TextIO, *, tty: bool | None = None, prices: Any = None,
                 color: bool | None = None) -> None:
        self.tty = err.isatty() if tty is None else tty
        if color is None:
            from ..terminal import use_color

            color = use_color(out)
        self.color = color
        self.prices = prices  # pricing.PriceTable: the answers' cost so far (None: not shown)
        self._prices: dict[str, Any] = {}  # effective model → its Price (None: not priced)
        self.cost_so_far = 0.0
        self.unpriced_answers = 0
        self.running: set[Any] = set()  # cells with a call started and no result yet
        self.out: Any = _Redacting(out)
        self.err: Any = _Redacting(err)
        self.total = 0
        self.done = 0
        self.errors = 0
        self.retrying: dict[Any, tuple[float, str]] = {}  # cell → (resume time, reason)
        self.summary: RunSummary | None = None
        self.plan: dict[str, Any] = {}
        self.journal: str | None = None
        self.wall: tuple[float, ...] | None = None  # each session's wall time (the run database's), set after it
        self.started = time.monotonic()
        self._last_draw = 0.0
        self._last_line = 0.0
        self._next_tenth = 1
        self._bar_shown = False
        self._errors_seen: dict[str, int] = {}  # message → cells that failed with it
        self.not_run = 0  # cells a cost cap kept from starting
        self.worst = WorstItems()
        self._batch_line = ""
        self.pacing = Pacing()
        self.not_scored_items: set[str] = set()  # the prompts / tests with a cell not scored
        self._unscored_why: dict[str, list[str]] = {}  # a Weval cell's reason → its cells (the first few)
        self._unscored_count: dict[str, int] = {}

    def __call__(self, event: Event) -> None:
        if isinstance(event, CallStarted):
            if event.cell not in self.running:
                self.running.add(event.cell)
                self._progress()
            return
        if type(event) is Response:  # a cell's answer (most events), by its exact type: what the chain below does
            if not event.resumed and not event.cached:
                self._add_cost(event)
            self.retrying.pop(event.cell, None)
            return
        if isinstance(event, Response) and not event.resumed and not event.cached:
            self._add_cost(event)
        if isinstance(event, Scored) and event.score is None:
            self.not_scored_items.add(event.cell.item)
            why = event.details.get("error") if isinstance(event.details, dict) else None
            if isinstance(why, str) and self.plan.get("kind") == "weval":
                self._unscored_count[why] = self._unscored_count.get(why, 0) + 1
                cells = self._unscored_why.setdefault(why, [])
                if len(cells) < 3:
                    cells.append(str(event.cell))
        if isinstance(event, _FINISHED):
            self.worst.add(event, str(self.plan.get("kind") or "weval"))
            self.running.discard(event.cell)
            self.done += 1
            self.retrying.pop(event.cell, None)
            if isinstance(event, CellFailed) and event.kind == "not_run":  # a cost cap (cost/budget.py)
                self.not_run += 1
                if self.not_run == 1:
                    self._line(f"stopped: {event.error.removeprefix('not run: ')}; no new cell starts")
            elif isinstance(event, CellFailed):
                self.errors += 1
                if not event.resumed:
                    # The same failure on many cells (a missing key, a dead endpoint) is shown once.
                    message = event.error.replace(event.cell.model, "<model>")
                    seen = self._errors_seen.get(message, 0)
                    self._errors_seen[message] = seen + 1
                    if not seen:
                        self._line(f"error: {event.cell}: {event.error}")
            self._progress()
        elif isinstance(event, Response):
            self.retrying.pop(event.cell, None)
        elif isinstance(event, Retrying):
            self.retrying[event.cell] = (time.monotonic() + event.delay, event.reason)
            self.pacing.retries += 1
            self._progress(force=True)
        elif isinstance(event, RateLimit):
            line = self.pacing.add(event, time.monotonic())
            # On a terminal the status line shows each provider's state; only giving up scrolls.
            if line and (not self.tty or event.gave_up):
                self._line(f"rate limit: {line}")
            self._progress(force=True)
        elif isinstance(event, Notice):
            self._line(f"{event.level}: {event.message}")
        elif isinstance(event, BatchProgress):
            # One line whenever a batch's state or counts change (they move in minutes, not seconds).
            text = "; ".join(f"{b['model']} {b['id']} {b['progress']}" for b in event.batches)
            if text != self._batch_line:
                self._batch_line = text
                self._line(f"batch: {text}")
        elif isinstance(event, RunStarted):
            self.plan = event.plan
            self.journal = event.plan.get("journal")
            self.total = int(event.plan.get("cells") or 0)
            resumed = int(event.plan.get("resumed_cells") or 0)
            what = "blueprint" if event.plan.get("kind") == "weval" else "suite"
            shard = f" (shard {event.plan['shard']})" if event.plan.get("shard") else ""
            self._line(f"Running {what} {event.plan.get('file')}: {self.total:,} cell(s){shard}, run "
                       f"{event.plan.get('run_label')}" + (f", {resumed:,} already done (resumed)" if resumed else ""))
            if self.tty:  # live from the start, before the first answer
                self._draw(time.monotonic())
        elif isinstance(event, RunFinished):
            self.summary = event.summary

    def tick(self) -> None:
        """Redraw the status line (the clock and the ETA move between events); a no-op when piped."""
        if self.tty and self.plan and self.summary is None:
            self._draw(time.monotonic())

    def _add_cost(self, event: Response) -> None:
        if self.prices is None:
            return
        effective = event.cell.model
        if effective in self._prices:
            price = self._prices[effective]
        else:  # once per effective model: its price, without its [temp:…][sp_idx:…]
            import re

            price = self._prices[effective] = self.prices.price(re.sub(r"(\[[^\]]*\])+$", "", effective))
        if price is None:
            self.unpriced_answers += 1
        else:
            self.cost_so_far += call_cost(price, event.usage[0], event.usage[1])

    def _eta(self, now: float) -> str:
        left = self.total - self.done
        if left <= 0:
            return ""
        if not self.done:
            return "  ETA —"
        seconds = (now - self.started) / self.done * left
        return f"  ETA {_duration(seconds)}"

    def _cost(self) -> str:
        if self.prices is None or (not self.cost_so_far and not self.unpriced_answers):
            return ""
        usd = f"${self.cost_so_far:.6f}" if self.cost_so_far < 1 else f"${self.cost_so_far:,.2f}"
        # "answers": judges' calls are not counted here (the closing cost table has them)
        return f"  answers {'≥ ' if self.unpriced_answers else ''}{usd} so far"

    def unscored_notes(self) -> list[str]:
        """"2 cell(s) not scored (a × echo, b × echo): Not scored: the prompt has no points …": what the
        runner's own notes do not say (they cover judged points and AgentV's checks)."""
        out = []
        for why, cells in self._unscored_why.items():
            n = self._unscored_count[why]
            more = f", … {n - len(cells):,} more" if n > len(cells) else ""
            out.append(f"{n:,} cell(s) not scored ({', '.join(cells)}{more}): {why.removeprefix('Not scored: ')}")
        return out

    # --- progress ---------------------------------------------------------------------------------
    def _progress(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            if force or now - self._last_draw >= REDRAW_INTERVAL or self.done == self.total:
                self._last_draw = now
                self._draw(now)
            return
        tenth = self.total and self.done * 10 // self.total
        if self.done == self.total or tenth >= self._next_tenth or now - self._last_line >= LINE_INTERVAL:
            self._next_tenth = tenth + 1
            self._last_line = now
            self.err.write(f"progress: {self.done:,}/{self.total:,} done, {self.errors:,} error(s), "
                           f"{now - self.started:.1f} s{self.pacing.status(now)}\n")
            self.err.flush()

    def _draw(self, now: float) -> None:
        waiting = [(t, r) for t, r in self.retrying.values() if t > now]
        retry = ""
        if self.retrying:
            longest = max((t - now for t, _ in waiting), default=0.0)
            reasons = ",".join(sorted({r for _, r in self.retrying.values()}))
            retry = f"  retrying {len(self.retrying)} ({reasons}; back-off {longest:.1f} s)"
        running = f"  {len(self.running):,} in progress" if self.running else ""
        count = f" {self.done:,}/{self.total:,}"
        # (text, rank): on a narrow terminal the highest ranks go first, so the line never wraps (a wrapped
        # line is not erased by the redraw: each redraw scrolled a new line at 80 columns).
        parts = [(running, 4), (f"  errors {self.errors:,}", 1), (self._eta(now), 2), (self._cost(), 3), (retry, 5),
                 (self.pacing.status(now), 1), (f"  {now - self.started:.1f} s", 6)]
        room = self._columns() - 1
        bar_width = 28
        while True:
            line_len = bar_width + len(count) + sum(len(shown(t)) for t, _ in parts)
            if line_len <= room:
                break
            droppable = [k for k, (t, rank) in enumerate(parts) if t and rank > 1]
            if droppable:
                k = max(droppable, key=lambda k: parts[k][1])
                parts[k] = ("", 0)
            elif bar_width > 8:
                bar_width = max(8, bar_width - (line_len - room))
            else:
                break
        filled = int(bar_width * self.done / self.total) if self.total else bar_width
        bar = "█" * filled + "░" * (bar_width - filled)
        line = shown(bar + count + "".join(t for t, _ in parts))
        if len(line) > room:
            line = line[:max(1, room - 1)] + "…"
        # Erase, then draw: the one sequence terminal_text.SafeStream lets through with a CR.
        self.err.write("\r\x1b[K" + line)
        self.err.flush()
        self._bar_shown = True

    def _columns(self) -> int:
        """The terminal's width now (it may be resized during the run)."""
        import os
        import shutil

        inner = getattr(self.err, "inner", self.err)
        try:
            return os.get_terminal_size(inner.fileno()).columns or 80
        except (AttributeError, OSError, ValueError):
            return shutil.get_terminal_size((200, 24)).columns

    def _line(self, text: str) -> None:
        if self._bar_shown:
            self.err.write("\r\x1b[K")
        self.err.write(shown(text, newlines=True) + "\n")
        self.err.flush()
        if self._bar_shown:
            self._draw(time.monotonic())

    # --- the end ----------------------------------------------------------------------------------
    def close(self, interrupted: bool = False) -> None:
        if self._bar_shown:
            self.err.write("\n")
        for message, n in self._errors_seen.items():
            if n > 1:
                self.err.write(f"error: {n - 1} more cell(s) failed the same way: {message}\n")
        for line in self.pacing.summary():
            self.err.write(f"rate limits: {line}\n")
        self.err.flush()
        if self.summary is not None:
            self.out.write(format_table(self.summary, color=self.color, wall=self.wall) + "\n")
            worst = self.worst.format()
            if worst:
                self.out.write("\n" + worst + "\n\n")
            for f in self.summary.files:
                self.out.write(f"results: {f}\n")
            self.out.flush()


class Pacing:
    """The adaptive concurrency of each provider and key, from RateLimit events: which changes get a line
    of their own (a drop, a pause or pacing, giving up, full recovery; not each step up), the progress line's
    "openai 16/32, waiting 4 s" and the closing summary."""

    PAUSE_LINE_EVERY = 5.0  # a pause with no drop gets a line at most this often per provider

    def __init__(self) -> None:
        self.current: dict[str, RateLimit] = {}
        self.paused_until: dict[str, float] = {}
        self.lowest: dict[str, int] = {}
        self.throttled: dict[str, int] = {}
        self.retries = 0
        self._last_pause_line: dict[str, float] = {}

    def add(self, event: RateLimit, now: float) -> str | None:
        """Record `event`; the line to print for it, if any."""
        name = event.provider
        self.current[name] = event
        self.lowest[name] = min(self.lowest.get(name, event.ceiling), event.concurrency)
        self.throttled[name] = event.throttled
        if event.wait:
            self.paused_until[name] = now + event.wait
        if event.gave_up or event.concurrency < event.previous:
            self._last_pause_line[name] = now
            return event.text()
        if (event.wait or event.pace) and now - self._last_pause_line.get(name, -1e9) >= self.PAUSE_LINE_EVERY:
            self._last_pause_line[name] = now
            return event.text()
        if event.concurrency == event.ceiling and event.previous < event.ceiling:
            return f"{name}: concurrency back to {event.ceiling}"
        return None

    def status(self, now: float) -> str:
        """"  openai 16/32, waiting 4.0 s" for each provider below its ceiling or pausing; "" otherwise."""
        parts = []
        for name, e in self.current.items():
            wait = self.paused_until.get(name, 0.0) - now
            if e.gave_up:
                parts.append(f"{name} gave up")
            elif e.concurrency < e.ceiling or wait > 0:
                parts.append(f"{name} {e.concurrency}/{e.ceiling}" + (f", waiting {wait:.1f} s" if wait > 0 else ""))
        return ("  " + "; ".join(parts)) if parts else ""

    def summary(self) -> list[str]:
        out = []
        for name, e in self.current.items():
            what = "gave up" if e.gave_up else f"concurrency {e.ceiling} → lowest {self.lowest[name]}, " \
                                               f"{e.concurrency} at the end"
            out.append(f"{name}: {self.throttled.get(name, 0):,} rate-limit answer(s), {what}")
        if out and self.retries:
            out.append(f"{self.retries:,} retr{'y' if self.retries == 1 else 'ies'} in all (errors and rate limits)")
        return out


class WorstItems:
    """The few worst cells of each model (errors first, then the lowest scores below a pass), with the first
    point that failed: what to look at first, under the table. Bounded: a heap of `keep` per model."""

    def __init__(self, keep: int = 3) -> None:
        self.keep = keep
        self._heaps: dict[str, list[tuple[float, int, str, Any]]] = {}
        self._n = 0

    def add(self, event: Scored | CellFailed, kind: str) -> None:
        payload: tuple[str, Any]
        if isinstance(event, CellFailed) and event.kind == "not_run":
            return  # never tried (a cost cap): the summary's note says why
        if isinstance(event, CellFailed):
            rank, payload = -1.0, ("error", event.error)
        elif event.score is None or event.score >= PASS_THRESHOLD:
            return
        else:
            rank, payload = event.score, (kind, event.details)
        heap = self._heaps.setdefault(event.cell.model, [])
        self._n += 1
        entry = (-rank, self._n, event.cell.item, payload)  # a max-heap on the score: the best is dropped
        if len(heap) < self.keep:
            heappush(heap, entry)
        elif entry[0] > heap[0][0]:
            heapreplace(heap, entry)

    def format(self) -> str:
        if not self._heaps:  # nothing below a pass: the report's modules are not loaded (~6 ms)
            return ""
        from ..report.markdown import why_failed
        from ..report.model import ERROR, CellResult
        from ..report.sources import cell_from_details

        lines = ["worst items (first failed point):"]
        for model, heap in self._heaps.items():
            lines.append(f"  {model}")
            entries = sorted(heap, key=lambda e: (-e[0], e[1]))
            width = max(len(e[2]) for e in entries)
            for neg, _, item, (kind, payload) in entries:
                if kind == "error":
                    cell = CellResult(status=ERROR, error=str(payload))
                    score = "error"
                else:
                    cell = cell_from_details(kind, payload, -neg)
                    score = f"{-neg:.3f}"
                why = " ".join(why_failed(cell).split())
                if len(why) > 100:
                    why = clip(why, 99) + "…"
                lines.append(f"    {item.ljust(width)}  {score.rjust(5)}  {why}".rstrip())
        return "\n".join(lines)


def _n(x: Any) -> str:
    """Counts with thousands separators (`12,000`); anything else as it is."""
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else str(x)


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"
    return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:02.0f} min"


# The sequences terminal_text.SafeStream lets through (bold colours).
_GREEN, _YELLOW, _RED, _MAGENTA, _BOLD, _RESET = ("\x1b[1;32m", "\x1b[1;33m", "\x1b[1;31m", "\x1b[1;35m", "\x1b[1m",
                                                  "\x1b[0m")


def _mean_color(mean: float | None) -> str:
    if mean is None:
        return ""
    return _GREEN if mean >= PASS_THRESHOLD else _YELLOW if mean >= 0.6 else _RED


def wall_text(sessions: tuple[float, ...]) -> str:
    """"wall time 9.5 s", or for a resumed run "wall time 4.1 s (this session; 12.3 s over 2 sessions)"."""
    if len(sessions) == 1:
        return f"wall time {_seconds(sessions[0])}"
    return f"wall time {_seconds(sessions[-1])} (this session; {_seconds(sum(sessions))} over {len(sessions)} sessions)"


def _seconds(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else _duration(seconds)


def format_table(summary: RunSummary, *, color: bool = False, wall: tuple[float, ...] | None = None) -> str:
    """The closing table; `color`: the header bold, each mean in its verdict's colour, fails red, cells
    not scored magenta and errors red when there are any (a terminal's; never when piped). `wall`: each
    session's wall time (the run database's), the run's own time, not its calls' added up."""
    headers = ("model", "cells", "mean", "pass", "borderline", "fail", "not scored", "errors")
    rows = [(m.model, f"{m.cells:,}", _fmt(m.mean), f"{m.passed:,}", f"{m.borderline:,}", f"{m.failed:,}",
             f"{m.not_scored:,}", f"{m.errors:,}") for m in summary.models]
    styles = [("", "", _mean_color(m.mean), _GREEN if m.passed else "", _YELLOW if m.borderline else "",
               _RED if m.failed else "", _MAGENTA if m.not_scored else "", _RED if m.errors else "")
              for m in summary.models]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: tuple[str, ...], style: tuple[str, ...] = ()) -> str:
        padded = [c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cells)]
        if color:
            padded = [f"{style[i]}{c}{_RESET}" if i < len(style) and style[i] else c for i, c in enumerate(padded)]
        return "  ".join(padded)

    head = line(headers)
    out = [f"{_BOLD}{head}{_RESET}" if color else head, line(tuple("-" * w for w in widths)),
           *(line(r, st) for r, st in zip(rows, styles, strict=True))]
    mean = _fmt(summary.mean)
    if color and _mean_color(summary.mean):
        mean = f"{_mean_color(summary.mean)}{mean}{_RESET}"
    extra = [f"mean {mean}", f"{summary.calls:,} call(s)"]
    if summary.cached:
        extra.append(f"{summary.cached:,} from cache")
    if summary.resumed:
        extra.append(f"{summary.resumed:,} cell(s) resumed")
    if wall:
        extra.append(wall_text(wall))
    out.append("")
    out.append(", ".join(extra))
    if summary.cost:
        from .cost.cost_text import spend_lines

        out += spend_lines(summary.cost)
    out.extend(f"note: {n}" for n in summary.notes)
    return "\n".join(out)


def format_plan(plan: dict[str, Any]) -> str:
    """`--dry-run`: what would run, calls per model, judges, estimated tokens."""
    shard = f"  shard {plan['shard']}" if plan.get("shard") else ""
    lines = [f"{plan.get('kind')} {plan.get('file')}  run label {plan.get('run_label')}{shard}"]
    if plan.get("kind") == "weval":
        lines.append(f"{_n(plan.get('prompts'))} prompt(s) × {len(plan.get('effective_models') or [])} effective "
                     f"model(s) = {_n(plan.get('cells'))} cell(s); concurrency {plan.get('concurrency')}")
    else:
        lines.append(f"{_n(plan.get('tests'))} test(s) × {len(plan.get('targets') or [])} target(s) = "
                     f"{_n(plan.get('cells'))} cell(s); concurrency {plan.get('concurrency')}")
    if plan.get("replay"):
        lines.append(f"answers replayed from {plan['replay']} (no model is called)")
    lines.append("")
    headers = ("model", "cells", "calls", "judge calls")
    rows = [(m, _n(v["cells"]), _n(v["calls"]), _n(v.get("judge_calls", 0)))
            for m, v in (plan.get("per_model") or {}).items()]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines.append("  ".join(h.ljust(widths[0]) if i == 0 else h.rjust(widths[i]) for i, h in enumerate(headers)))
    for r in rows:
        lines.append("  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
    lines.append("")
    judges = plan.get("judges") or []
    if judges:
        lines.append(f"judges ({plan.get('judge_source')}): {', '.join(judges)}")
    elif plan.get("kind") == "weval":
        lines.append("judges: none (llm-coverage not run)")
    lines.append(f"eval methods: {', '.join(plan.get('eval_methods') or []) or 'none'}")
    lines.append(f"total: {_n(plan.get('calls'))} call(s)")
    if plan.get("cost"):
        from .cost.cost_text import estimate_lines

        lines.append("")
        lines += estimate_lines(plan["cost"])
    for w in plan.get("warnings") or []:
        lines.append(f"warning: {w}")
    for u in plan.get("not_scored") or []:
        first = ", ".join(u["first"]) + (", …" if u["cells"] > len(u["first"]) else "")
        lines.append(f"not scored: {u['name']} ({u['type']}{', required: those tests will be not scored' if u['required'] else ''})"
                     f" in {u['cells']} cell(s) ({first}): {u['reason']}")
    for p in plan.get("problems") or []:
        lines.append(f"problem: {p}")
    return "\n".join(lines)
