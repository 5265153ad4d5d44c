"""The HTML report: one self-contained file (inline CSS and JavaScript, the results embedded once as JSON).

No CDN, no network, no server: the page's Content-Security-Policy allows no connection at all and only
the one inline script (by its hash). The data sits in `<script type="application/json">` blocks, which
the browser never executes; every `<`, `>` and `&` in them is written as a JSON escape, so a model
answer holding `</script>` cannot end the block. The page puts every untrusted string on screen with
`textContent`, never as HTML.

Layout of the data, chosen so that 100,000 cells open fast: a small block the page reads at once (ids,
prompt snippets, scores, flags, summaries: what the matrix, filters and sorting need) and one block per
run with the bulky details (answers, points, messages), parsed the first time a cell is opened or an
answer is searched (in chunks of CHUNK items, so that neither freezes the page). Per-cell values are
flat arrays indexed `item * models + model`; nothing is
repeated per view, so the file grows with the results and not with what the page can show.
"""

from __future__ import annotations

import base64
import hashlib
import tempfile
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from typing import IO, Any

from ..jsonio import dumps_bytes
from ..providers.redact import redact, redact_bytes
from . import costs
from .diff import RunDiff, run_names
from .json_pieces import EncodedList, pieces, plain
from .model import ERROR, NOT_SCORED, PENDING, CellResult, Item, ModelStats, Point, RunResults
from .spool import SpooledItems

# Cell flags (bit mask), what the filters test.
F_FAIL, F_NOT_SCORED, F_UNSCORED_POINT, F_ERROR, F_PENDING, F_MISSING = 1, 2, 4, 8, 16, 32
F_REGRESSED, F_IMPROVED, F_CHANGED = 64, 128, 256
_CHANGE_FLAGS = {"regressed": F_REGRESSED, "improved": F_IMPROVED, "changed": F_CHANGED, "added": F_CHANGED,
                 "removed": F_CHANGED}
SNIPPET = 120
BINS = 10
CHUNK = 1000  # items per details block


def _flags(c: CellResult | None) -> int:
    if c is None:
        return F_MISSING
    f = 0
    if c.status == PENDING:
        f |= F_PENDING
    elif c.status == ERROR:
        f |= F_ERROR
    elif c.status == NOT_SCORED:
        f |= F_NOT_SCORED
    elif (c.verdict or "") == "fail":
        f |= F_FAIL
    if any(p.score is None for p in c.points):
        f |= F_UNSCORED_POINT
    return f


class Strings:
    """Point texts, reflections and reasons repeat across cells (the same points for every model, the same
    function reflections): each is stored once in the details block and referred to by index."""

    def __init__(self) -> None:
        self.index: dict[str | None, int] = {None: -1}
        self.values: list[str] = []
        # a point's six strings → their indexes: the same point recurs in every model's cell, so one
        # tuple lookup replaces six
        self.points: dict[tuple[str | None, ...], tuple[int, ...]] = {}

    def ref(self, value: str | None) -> int:
        n = self.index.get(value)
        if n is None:
            n = self.index[value] = len(self.values)
            self.values.append(str(value))  # never None: None is in the index from the start
        return n


def _first_failed(c: CellResult) -> int:
    for n, p in enumerate(c.points):
        if p.failed:
            return n
    return -1


def _point(p: Point, s: Strings) -> list[Any]:
    key = (p.text, p.kind, p.note, p.not_scored, p.path, p.verdict)
    refs = s.points.get(key)
    if refs is None:
        refs = s.points[key] = tuple(s.ref(v) for v in key)
    text, kind, note, not_scored, path, verdict = refs
    return [text, p.score, p.weight, kind, note, not_scored, p.hits or 0, p.misses or 0, path,
            1 if p.counted else 0, p.extra or 0, verdict]


def _detail(c: CellResult | None, s: Strings, first: int) -> list[Any] | None:
    if c is None:
        return None
    points = [_point(p, s) for p in c.points]
    return [c.answer, c.history, points, c.error, c.tokens_in, c.tokens_out, c.cost_usd, c.duration_ms,
            c.extra or 0, first]


def _why(c: CellResult | None, first: int) -> str | None:
    if c is None:
        return None
    if c.status == ERROR:
        return "error: " + (c.error or "")[:300]
    if first >= 0:
        return f"first failed point: {c.points[first].text[:300]}"
    if c.status == NOT_SCORED:
        reason = next((p.not_scored for p in c.points if p.not_scored), None)
        return "not scored" + (f": {reason[:300]}" if reason else "")
    return None


def _snippet(messages: list[dict[str, Any]]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            text = " ".join(m["content"].split())
            return text[:SNIPPET] + ("…" if len(text) > SNIPPET else "")
    return ""


def _stats(s: ModelStats) -> dict[str, Any]:
    return {"model": s.model, "cells": s.cells, "mean": s.mean, "scored": s.scored, "pass": s.passed,
            "borderline": s.borderline, "fail": s.failed, "notScored": s.not_scored, "errors": s.errors,
            "pending": s.pending, "tokensIn": s.tokens_in if s.tokens_known else None,
            "tokensOut": s.tokens_out if s.tokens_known else None,
            "cost": s.cost_usd if s.cost_known else None, "costUnknown": s.cost_missing,
            "durationMs": s.duration_ms if s.duration_known else None}


def _histograms(run: RunResults) -> dict[str, list[int]]:
    """Each model's scores in BINS bins, in one pass over the items (a big file's cells are made when read)."""
    out = {m: [0] * BINS for m in run.models}
    for item in run.item_ids():
        for m, bins in out.items():
            c = run.cells.get((item, m))
            if c is not None and c.score is not None and c.status not in (ERROR, PENDING):
                bins[min(BINS - 1, int(c.score * BINS))] += 1
    return out


def _run_meta(run: RunResults, tallied: _Tally | None = None) -> dict[str, Any]:
    """`tallied`: the summaries and histograms counted while the page read the cells (one pass, not three)."""
    return {"kind": run.kind, "title": run.title, "source": run.source, "label": run.run_label,
            "timestamp": run.timestamp, "wall": list(run.wall) if run.wall else None, "complete": run.complete, "notes": run.notes, "evalFile": run.eval_file,
            "summary": [_stats(s) for s in costs.with_answer_costs(tallied.summaries() if tallied else run.summaries(),
                                                                    run.costs)],
            "costs": run.costs, "histograms": tallied.bins if tallied else _histograms(run)}


class _Tally:
    """RunResults.summaries() and _histograms(), counted cell by cell (in the same order) as the page
    reads a single run's cells."""

    def __init__(self, models: list[str]) -> None:
        self.models = models
        self.stats = {m: ModelStats(m) for m in models}
        self.bins = {m: [0] * BINS for m in models}

    def add(self, model: str, c: CellResult | None) -> None:
        self.stats[model].add(c)
        if c is not None and c.score is not None and c.status not in (ERROR, PENDING):
            self.bins[model][min(BINS - 1, int(c.score * BINS))] += 1

    def summaries(self) -> list[ModelStats]:
        return [self.stats[m] for m in self.models]


def _page(runs: list[RunResults], diff: RunDiff | None, detail: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """The small block; each details block is handed to `detail` as soon as it is made (the page's
    writer encodes it there and then: the blocks of a 100,000-cell run as objects were ~2× the page)."""
    items: Sequence[Item]
    if diff is not None:
        models, item_ids = diff.models, diff.items
    else:
        models, item_ids = runs[0].models, runs[0].item_ids()
    if diff is None and isinstance(runs[0].items, SpooledItems):
        items = runs[0].items  # a big file's (their ids are distinct): made when read, never all at once
    else:
        by_id = {}
        for run in reversed(runs):  # the newest run's prompt text wins
            by_id.update({i.id: i for i in run.items})
        items = [by_id[i] for i in item_ids]
    chunks = max(1, -(-len(items) // CHUNK))
    # a big file's items are made when read: their snippets are taken below, with each chunk's items
    spooled = isinstance(items, SpooledItems)
    # the lists that grow with the run are kept as JSON (json_pieces.py: ~25 MB as objects at 100,000 cells)
    ids, snippets = EncodedList(), EncodedList()
    ids.extend(item_ids if spooled else (i.id for i in items))
    if not spooled:
        snippets.extend(_snippet(i.messages) for i in items)
    main: dict[str, Any] = {
        "v": 1, "mode": "diff" if diff is not None else "single", "models": models,
        "items": ids, "snippets": snippets,
        "runs": [], "scores": [], "flags": [], "chunk": CHUNK, "chunks": chunks,
        "systems": runs[-1].system_prompts, "why": [], "whyText": [],
    }
    # Why a cell failed (its first failed point, or its error), for the cell's tooltip: a reviewer sees
    # it by pointing at the matrix, before opening anything.
    why = Strings()
    why_ref = why.ref
    for n, run in enumerate(runs):
        scores, flags, reasons = EncodedList(), EncodedList(), EncodedList()
        # a single run: its summaries and histograms are counted here, from the cells the page reads anyway
        tally = _Tally(models) if diff is None and len(runs) == 1 and len(set(models)) == len(models) else None
        for c in range(chunks):
            strings = Strings()
            cells: list[list[Any] | None] = []
            for i in item_ids[c * CHUNK:(c + 1) * CHUNK]:
                for m in models:
                    cell = run.cells.get((i, m))
                    if tally is not None:
                        tally.add(m, cell)
                    scores.append(cell.score if cell is not None and cell.status not in (ERROR, PENDING) else None)
                    f = _flags(cell)
                    if diff is not None and n == len(runs) - 1:
                        f |= _CHANGE_FLAGS.get(diff.changes.get((i, m), "same"), 0)
                    flags.append(f)
                    first = _first_failed(cell) if cell is not None else -1
                    reasons.append(why_ref(_why(cell, first)))
                    cells.append(_detail(cell, strings, first))
            block: dict[str, Any] = {"run": n, "chunk": c, "cells": cells, "strings": strings.values}
            if n == len(runs) - 1:
                chunk_items = items[c * CHUNK:(c + 1) * CHUNK]
                block["items"] = [[i.messages, i.description, i.ideal] for i in chunk_items]
                if spooled:
                    snippets.extend(_snippet(i.messages) for i in chunk_items)
            detail(block)
        main["scores"].append(scores)
        main["flags"].append(flags)
        main["why"].append(reasons)
        main["runs"].append(_run_meta(run, tally))
    main["whyText"] = why.values
    if diff is not None:
        main["diff"] = {"regressed": diff.count("regressed"), "improved": diff.count("improved"),
                        "changed": diff.count("changed"), "added": diff.count("added"),
                        "removed": diff.count("removed"),
                        "perModel": [vars(md) for md in diff.per_model], "threshold": diff.threshold,
                        "names": list(run_names(diff.old, diff.new))}
    return main


def _json_block(block_id: str, value: Any) -> bytes:
    """A `<script type="application/json">` block of `value`, UTF-8."""
    return b"".join(_json_block_pieces(block_id, value))


def _json_block_pieces(block_id: str, value: Any) -> Iterator[bytes]:
    """`_json_block` in pieces: a value holding EncodedLists (the small block) is encoded a piece at a time
    (each piece holds whole JSON values, so it is masked and escaped on its own)."""
    found = pieces(value)
    if found is None:  # a value orjson refuses: the whole value, with the standard library's fallback
        found = [dumps_bytes(plain(value))]
    yield f'<script type="application/json" id="{block_id}">'.encode()
    for piece in found:
        # `<` `>` `&` only ever occur inside JSON strings, so escaping them byte-wise keeps the JSON valid
        # and makes `</script>` and `<!--` impossible inside the block.
        yield (redact_bytes(piece).replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
               .replace(_LS, b"\\u2028").replace(_PS, b"\\u2029"))
    yield b"</script>"


_LS, _PS = "\u2028".encode(), "\u2029".encode()  # line and paragraph separators, as UTF-8


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def render_html(runs: list[RunResults], diff: RunDiff | None = None) -> str:
    return b"".join(html_pieces(runs, diff)).decode("utf-8")


def html_pieces(runs: list[RunResults], diff: RunDiff | None = None) -> Iterator[bytes]:
    """The page in pieces, UTF-8 (`render_html` joined): written a piece at a time, it is never one string
    and its encoded copy in memory. The details blocks are encoded as they are made."""
    blocks = _Blocks()
    main = _page(runs, diff, lambda d: blocks.add(_json_block(f"evalspec-details-{d['run']}-{d['chunk']}", d)))
    script = _asset("page.js")
    style = _asset("page.css")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
           "connect-src 'none'; form-action 'none'; base-uri 'none'")
    title = runs[-1].title if diff is None else f"{runs[0].title} → {runs[-1].title}"
    # The page's script comes right after the small block, before the bulky ones: the browser runs it and
    # paints the summary and the matrix while it is still reading the details (a cell opened before they
    # are read shows them as soon as they are).
    yield "\n".join([
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        f"<title>{_text(redact(title))} · evalspec report</title>",
        f"<style>{style}</style>",
        "</head><body>",
        '<noscript><p class="noscript">This report needs JavaScript to show the results (it runs only the '
        "page's own script; nothing is fetched).</p></noscript>",
        '<div id="app" aria-busy="true"></div>',
        "",
    ]).encode("utf-8")
    yield from _json_block_pieces("evalspec-data", main)
    yield f"\n<script>{script}</script>\n".encode()
    for block in blocks.taken():
        yield block
        yield b"\n"
    yield b"</body></html>\n"


class _Blocks:
    """The details blocks, made before the small block that goes first in the page: held as they are up
    to HELD_BYTES, past that on an unlinked temporary file (a 100,000-cell page's blocks were ~50 MB)."""

    HELD_BYTES = 8 << 20

    def __init__(self) -> None:
        self._held: list[bytes] = []
        self._size = 0
        self._file: IO[bytes] | None = None
        self._sizes: list[int] = []

    def add(self, block: bytes) -> None:
        if self._file is None:
            self._held.append(block)
            self._size += len(block)
            if self._size <= self.HELD_BYTES:
                return
            # unlinked already; closed by taken() (or with this object)
            self._file = tempfile.TemporaryFile(prefix=".evalspec-page-")  # noqa: SIM115
            held, self._held = self._held, []
            for b in held:
                self._write(b)
            return
        self._write(block)

    def _write(self, block: bytes) -> None:
        assert self._file is not None
        self._file.write(block)
        self._sizes.append(len(block))

    def taken(self) -> Iterator[bytes]:
        """Each block in order, let go as it is handed out."""
        if self._file is None:
            self._held.reverse()
            while self._held:
                yield self._held.pop()
            return
        with self._file as f:
            f.seek(0)
            for size in self._sizes:
                yield f.read(size)


def _text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
