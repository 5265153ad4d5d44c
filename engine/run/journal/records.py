"""The run's records: one frozen dataclass per kind of thing a run learns, and the JSON line each was
written as in an earlier evalspec's JSONL journal.

A record is written by `Journal.write` (journal/run_store.py) into the run database's tables
(journal/database.py `put`) and read back from them as the same record (`load`, `records`). The JSON form
(`to_json`, short keys, `"t"` first) is how an earlier evalspec's journal holds it, read by
journal/legacy_jsonl.py through `decode` below; tests compare records through it too:

    {"t": "run", "v": 1, "kind", "file", …}                   RunHeader: what run this is
    {"t": "gen", "c": [item, model], "n": turn, "text", "u": [in, out], "ms", "cached"(, "m", "tc")}
                                                              Generated: an answer (a Weval turn, an AgentV attempt)
    {"t": "fail", "c": [...], "error", "kind"}                Failed: a Weval cell with no answer
    {"t": "judge", "c": [...], "p": point, "j": judge, "s": score | null, "r": reflection, "e": error}
                                                              Judged: one Weval judge on one point
    {"t": "judge", "c": [...], "p": index, "j": judge, "text": reply | null, "e": error}
                                                              JudgeReply: an AgentV judge's raw reply
    {"t": "kp", "i": prompt id, "m": model, "points": [...]}  KeyPoints: extracted from a prompt's ideal
    {"t": "emb", "k": key, "v": [floats]}                     Embedding
    {"t": "score", "c": [...], "s": score | null, "v": verdict, "r": result}
                                                              CellScore: a cell's result (AgentV: its row)
    {"t": "usage", "c": [...], "r": role, "m": label, "pm": priced as, "u": [in, out], "usd": cost | null, "b": 1 if batched, "k": 1 if cached}
                                                              Usage: one call's tokens and cost (cost/spend.py)
    {"t": "done"}                                             Done: the run finished
    {"t": "stop", "why": "cancelled", "cells": [[item, model]]} Stopped: the user stopped it (the editor's Cancel), calls in flight
    {"t": "batch_plan" | "batch_file" | "batch" | "batch_end" | "batch_cancel", "k": key, …}
                                                              batch mode's records (generate/batch_journal.py)

`NotRun` (a cell a cost cap kept from starting) and `ExportHead` (what `evalspec merge` needs of a shard's
export) live in the database only and have no JSON form.

**Adding a record type**: a frozen dataclass here with a `TAG`, `to_json()` and `from_json(rec)`
(registered with `@journal_record`), a table or columns for it in journal/database.py (its `put` case and
a reader merged by `in_order`), and, if `--resume` needs it, a field of `run_store.JournalState` and a
case in its `add`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from sys import intern
from typing import Any, ClassVar, TypeAlias, TypeVar

from ...jsonio import dumps_bytes, loads
from ..events import Cell

_DECODERS: dict[str, Callable[[dict[str, Any]], Any]] = {}

R = TypeVar("R")


def journal_record(cls: type[R]) -> type[R]:
    """Register a record class under its TAG, so the reader decodes its lines (`from_json`)."""
    tag = cls.TAG  # type: ignore[attr-defined]
    if tag not in _DECODERS:
        _DECODERS[tag] = cls.from_json  # type: ignore[attr-defined]
    return cls


def decode(rec: dict[str, Any]) -> Record | None:
    """The record a journal line holds, or None for a tag this evalspec does not know. Raises
    KeyError/TypeError/ValueError for a line of a known tag that does not read."""
    decoder = _DECODERS.get(rec.get("t"))  # type: ignore[arg-type]
    return decoder(rec) if decoder is not None else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def cell_ref(cell: Cell) -> list[str]:
    return [cell.item, cell.model]


def _cell(rec: dict[str, Any]) -> Cell:
    item, model = rec["c"]
    return Cell(str(item), str(model))


def _fingerprints(fp: dict[Any, Any]) -> Mapping[str, str]:
    """A header's item fingerprints as plan/items.py's Fingerprints (8 bytes an item beside its id: as a
    dict of strings a 100,000-prompt journal's were ~21 MB of a resumed run), the same mapping; a dict when
    a value is not the 16 lowercase hexadecimal digits the runners write."""
    from ..plan.items import Fingerprints

    if not all(isinstance(v, str) and len(v) == 16 and _HEX.issuperset(v) for v in fp.values()):
        return {str(k): str(v) for k, v in fp.items()}
    return Fingerprints((str(k), bytes.fromhex(v)) for k, v in fp.items())


_HEX = frozenset("0123456789abcdef")
_FP_VALUE = re.compile("[0-9a-f]{16}")
_FP_START = b',"fp":{'
# One fingerprint as json_line writes it: the item's id (a JSON string), its 16 hexadecimal digits.
_FP_ENTRY = re.compile(rb'"((?:[^"\\]|\\.)*)":"([0-9a-f]{16})"')


def _fingerprint_pairs(line: bytes, pos: int, end: list[int]) -> Iterator[tuple[str, bytes]]:
    """The (id, 8-byte digest) entries of the fingerprints' object that starts at `pos` (after its `{`), one
    at a time; where it ends (after its `}`) is appended to `end`. Raises ValueError for an object in
    another form."""
    if line[pos:pos + 1] == b"}":
        end.append(pos + 1)
        return
    while True:
        m = _FP_ENTRY.match(line, pos)
        if m is None:
            raise ValueError("a fingerprint in another form")
        raw = m.group(1)
        yield raw.decode() if b"\\" not in raw else str(loads(b'"' + raw + b'"')), bytes.fromhex(m.group(2).decode())
        pos = m.end()
        sep = line[pos:pos + 1]
        pos += 1
        if sep == b"}":
            end.append(pos)
            return
        if sep != b",":
            raise ValueError("a fingerprint in another form")


# Header keys the runners write, in their order (after "t" and "v"); others are kept in `extra`.
_HEADER_KEYS = ("kind", "file", "config_id", "run_label", "started", "systems", "results", "path", "select", "fp")


@journal_record
@dataclass(frozen=True, slots=True)
class RunHeader:
    """The first line: what run this is. `path` (absolute), `select` and `fp` (item fingerprints,
    plan/items.py) let an editor find a file's earlier runs (ide/run_history.py)."""

    TAG: ClassVar[str] = "run"
    kind: str  # "weval" | "agentv"
    file: str
    run_label: str
    started: str
    path: str = ""
    select: tuple[str, ...] = ()
    fp: Mapping[str, str] = field(default_factory=dict)
    config_id: str | None = None  # Weval
    systems: Mapping[str, Any] | None = None  # Weval: each model's system prompt
    results: str | None = None  # AgentV: the results file's name (a resumed run appends to it)
    version: int = 1
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys this evalspec does not know

    def to_json(self) -> dict[str, Any]:
        out = self._fields()
        out["fp"] = dict(self.fp)
        out.update(self.extra)
        return out

    def _fields(self) -> dict[str, Any]:
        """`to_json`'s keys before "fp"."""
        out: dict[str, Any] = {"t": self.TAG, "v": self.version, "kind": self.kind, "file": self.file}
        if self.config_id is not None:
            out["config_id"] = self.config_id
        out["run_label"] = self.run_label
        out["started"] = self.started
        if self.systems is not None:
            out["systems"] = dict(self.systems)
        if self.results is not None:
            out["results"] = self.results
        out.update({"path": self.path, "select": list(self.select)})
        return out

    def json_line(self) -> bytes:
        """`to_json`'s line (the journal writes this), its fingerprints encoded one at a time: as the dict
        `to_json` makes, a 100,000-prompt run's were ~15 MB of strings at the moment the run started."""
        out = self._fields()
        out["fp"] = {}
        line = bytearray(dumps_bytes(out)[:-2])  # up to `"fp":{`
        for n, (k, v) in enumerate(self.fp.items()):
            if n:
                line += b","
            line += dumps_bytes(str(k))
            line += b':"' + v.encode() + b'"' if isinstance(v, str) and _FP_VALUE.fullmatch(v) else b":" + dumps_bytes(v)
        line += b"}"
        if self.extra:
            line += b"," + dumps_bytes(dict(self.extra))[1:]
        else:
            line += b"}"
        return bytes(line + b"\n")

    @classmethod
    def from_line(cls, line: bytes) -> RunHeader | None:
        """The header a journal's first line holds (None: not a header), its fingerprints read one at a
        time into plan/items.py's Fingerprints, never a dict of 100,000 strings (parsed whole, the line left
        ~20 MB of a resumed run's heap behind it). A line not in the form `json_line` writes is parsed
        whole, to the same header. Raises KeyError/TypeError/ValueError as `from_json` does."""
        start = line.find(_FP_START)
        if start > 0:
            from ..plan.items import Fingerprints

            try:
                head = loads(line[:start] + b"}")
                if not isinstance(head, dict) or "fp" in head:
                    raise ValueError("not the header json_line writes")
                if head.get("t") != cls.TAG:
                    return None
                end: list[int] = []
                fp = Fingerprints(_fingerprint_pairs(line, start + len(_FP_START), end))
                rest = line[end[0]:].rstrip()
                extra = loads(b"{" + rest[1:]) if rest.startswith(b",") else {} if rest == b"}" else None
                if isinstance(extra, dict) and "fp" not in extra:
                    return replace(cls.from_json({**head, **extra}), fp=fp)
            except ValueError:
                pass
        rec = loads(line)
        if not isinstance(rec, dict) or rec.get("t") != cls.TAG:
            return None
        return cls.from_json(rec)

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> RunHeader:
        def text(key: str) -> str:
            value = rec.get(key)
            return "" if value is None else str(value)

        systems, fp, select = rec.get("systems"), rec.get("fp"), rec.get("select")
        return cls(kind=text("kind"), file=text("file"), run_label=text("run_label"), started=text("started"),
                   path=text("path"), select=tuple(str(s) for s in select) if isinstance(select, list) else (),
                   fp=_fingerprints(fp) if isinstance(fp, dict) else {},
                   config_id=None if rec.get("config_id") is None else str(rec["config_id"]),
                   systems=dict(systems) if isinstance(systems, dict) else None,
                   results=None if rec.get("results") is None else str(rec["results"]),
                   version=int(rec.get("v") or 1),
                   extra={k: v for k, v in rec.items() if k not in _HEADER_KEYS and k not in ("t", "v")})


@journal_record
@dataclass(frozen=True, slots=True)
class Generated:
    """An answer: a Weval cell's generated turn `turn`, or an AgentV cell's attempt `turn` (with the
    model that answered and its tool calls). Replayed answers are journaled too."""

    TAG: ClassVar[str] = "gen"
    cell: Cell
    turn: int
    text: str
    usage: tuple[int, int] | None  # (input, output) tokens; None on a line without them
    ms: float | None
    cached: bool
    model: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    names_model: bool = False  # AgentV writes "m" (null when no model is known); Weval leaves it out
    cost_usd: float | None = None  # the call's cost, when priced (written only then)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": self.TAG, "c": cell_ref(self.cell), "n": self.turn, "text": self.text,
                               "u": list(self.usage) if self.usage is not None else None, "ms": self.ms,
                               "cached": self.cached}
        if self.names_model:
            out["m"] = self.model
        if self.tool_calls:
            out["tc"] = list(self.tool_calls)
        if self.cost_usd is not None:
            out["cost_usd"] = self.cost_usd
        return out

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> Generated:
        u = rec.get("u")
        usage = (u[0], u[1]) if isinstance(u, list) and len(u) == 2 and all(isinstance(x, int) for x in u) else None
        ms = rec.get("ms")
        tc = rec.get("tc")
        model, cost = rec.get("m"), rec.get("cost_usd")
        return cls(_cell(rec), int(rec.get("n", 0)), str(rec.get("text", "")), usage, _number(ms),
                   bool(rec.get("cached")), None if model is None else str(model),
                   tuple(c for c in tc if isinstance(c, dict)) if isinstance(tc, list) else (), "m" in rec,
                   _number(cost))


@journal_record
@dataclass(frozen=True, slots=True)
class Failed:
    """A Weval cell that got no answer (AgentV records a failed cell as a CellScore of an error row)."""

    TAG: ClassVar[str] = "fail"
    cell: Cell
    error: str
    kind: str

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG, "c": cell_ref(self.cell), "error": self.error, "kind": self.kind}

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> Failed:
        return cls(_cell(rec), str(rec.get("error")), str(rec.get("kind") or "error"))


@dataclass(frozen=True, slots=True)
class Judged:
    """One Weval judge's assessment of one point of a cell (score None with `error` when it failed)."""

    TAG: ClassVar[str] = "judge"
    cell: Cell
    point: int
    judge: str
    score: float | None
    reflection: str | None
    error: str | None

    @property
    def key(self) -> tuple[Cell, int, str]:
        return (self.cell, self.point, self.judge)

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG, "c": cell_ref(self.cell), "p": self.point, "j": self.judge, "s": self.score,
                "r": self.reflection, "e": self.error}


@dataclass(frozen=True, slots=True)
class JudgeReply:
    """An AgentV judge's raw reply to one call (an assertion, a composite's aggregator; `index` keys it,
    agentv_stages.ATTEMPT_STRIDE), or the error of a call that failed (text None)."""

    TAG: ClassVar[str] = "judge"
    cell: Cell
    index: int
    judge: str
    text: str | None
    error: str | None

    @property
    def key(self) -> tuple[Cell, int, str]:
        return (self.cell, self.index, self.judge)

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG, "c": cell_ref(self.cell), "p": self.index, "j": self.judge, "text": self.text,
                "e": self.error}


def _judge_from_json(rec: dict[str, Any]) -> Judged | JudgeReply:
    """Both formats' judge lines share the tag: an AgentV one keeps the reply's `text`."""
    cell, index, judge = _cell(rec), int(rec["p"]), str(rec["j"])
    error = None if rec.get("e") is None else str(rec["e"])
    if "text" in rec:
        return JudgeReply(cell, index, judge, None if rec["text"] is None else str(rec["text"]), error)
    score = rec.get("s")
    reflection = rec.get("r")
    return Judged(cell, index, judge, score if isinstance(score, int | float) and not isinstance(score, bool) else None,
                  None if reflection is None else str(reflection), error)


_DECODERS["judge"] = _judge_from_json


@journal_record
@dataclass(frozen=True, slots=True)
class KeyPoints:
    """Key points a judge model extracted from a prompt's ideal (once per prompt; every model's cell
    shares them)."""

    TAG: ClassVar[str] = "kp"
    prompt_id: str
    model: str
    points: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG, "i": self.prompt_id, "m": self.model, "points": list(self.points)}

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> KeyPoints:
        points = rec.get("points")
        return cls(str(rec["i"]), str(rec.get("m") or ""),
                   tuple(str(p) for p in points) if isinstance(points, list) else ())


@journal_record
@dataclass(frozen=True, slots=True)
class Embedding:
    """One text's embedding vector; `key` is "<prompt id>\\x1f<model>" (the ideal's model is IDEAL_MODEL_ID)."""

    TAG: ClassVar[str] = "emb"
    key: str
    vector: list[float]

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG, "k": self.key, "v": self.vector}

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> Embedding:
        return cls(str(rec["k"]), [float(x) for x in rec["v"]])


@journal_record
@dataclass(frozen=True, slots=True)
class CellScore:
    """A cell's result: its score (None: not scored), verdict, and the result object (Weval: the
    coverage result; AgentV: the results row, an error row for a failed cell). The result is the
    object written, not a copy: readers must not change it."""

    TAG: ClassVar[str] = "score"
    cell: Cell
    score: float | None
    verdict: str | None
    result: dict[str, Any]
    # what the database stores for `result` when given, so it is not encoded again: its JSON text as the
    # caller encoded it (database.json_text), or an AgentV row packed (packed_rows.py)
    packed: str | bytes | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG, "c": cell_ref(self.cell), "s": self.score, "v": self.verdict, "r": self.result}

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> CellScore:
        score, result, verdict = rec.get("s"), rec.get("r"), rec.get("v")
        return cls(_cell(rec), score if isinstance(score, int | float) and not isinstance(score, bool) else None,
                   None if verdict is None else str(verdict), result if isinstance(result, dict) else {})


@journal_record
@dataclass(frozen=True, slots=True)
class Usage:
    """One provider call's tokens and cost (run/cost/spend.py), so a resumed run's totals and `--max-cost`
    include what its earlier attempts spent. `usd` None: the model has no price (unknown, never 0)."""

    TAG: ClassVar[str] = "usage"
    cell: Cell
    role: str  # answers | judge | key points | embeddings
    model: str  # as shown: the model id, target name or judge label
    priced_as: str | None  # the model name the price was looked up by
    usage: tuple[int, int]
    usd: float | None
    batched: bool = False  # answered by a batch API (`usd` is at its price)
    cached: bool = False  # answered from the response cache: no tokens, no cost, counted apart

    def to_json(self) -> dict[str, Any]:
        out = {"t": self.TAG, "c": cell_ref(self.cell), "r": self.role, "m": self.model, "pm": self.priced_as,
               "u": list(self.usage), "usd": self.usd}
        if self.batched:
            out["b"] = 1
        if self.cached:
            out["k"] = 1
        return out

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> Usage:
        inp, out = (int(x) for x in rec["u"])
        priced = rec.get("pm")
        item, model = _cell(rec)
        # A resumed run keeps every usage record (cost/spend.py): the few names they repeat, one string each.
        return cls(Cell(item, intern(model)), intern(str(rec["r"])), intern(str(rec["m"])),
                   None if priced is None else intern(str(priced)), (inp, out), _number(rec.get("usd")),
                   rec.get("b") == 1, rec.get("k") == 1)


@journal_record
@dataclass(frozen=True, slots=True)
class Done:
    """The last line of a run that finished."""

    TAG: ClassVar[str] = "done"

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG}

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> Done:
        return cls()


@journal_record
@dataclass(frozen=True, slots=True)
class Stopped:
    """Why a run stopped before the end ("cancelled": the editor's Cancel), appended after it closed, and
    the cells whose calls were in flight then (an editor shows them as cancelled after a restart too)."""

    TAG: ClassVar[str] = "stop"
    why: str
    cells: tuple[Cell, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": self.TAG, "why": self.why}
        if self.cells:
            out["cells"] = [cell_ref(c) for c in self.cells]
        return out

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> Stopped:
        cells = rec.get("cells")
        found = tuple(Cell(str(c[0]), str(c[1])) for c in cells if isinstance(c, list) and len(c) == 2) \
            if isinstance(cells, list) else ()
        return cls(str(rec.get("why") or "stopped"), found)


# --- batch mode (generate/batch_stage.py, generate/batch_journal.py) --------------------------------------------------


@journal_record
@dataclass(frozen=True, slots=True)
class BatchPlanned:
    """One provider batch about to be sent, written before anything goes out: which request (custom_id)
    is which cell, and which of its calls (`slot`: a generated turn's number, or `judge:<point>:<judge>`)."""

    TAG: ClassVar[str] = "batch_plan"
    key: str  # the run's name for this batch (in an OpenAI batch's metadata)
    model: str  # the model id as the plan names it, or the AgentV target's name
    planned_at: float  # Unix seconds
    # (custom_id, cell, slot); a view of the batch stage's lists when it writes the record (up to 100,000)
    items: Sequence[tuple[str, Cell, int | str]]

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG, "k": self.key, "m": self.model, "at": self.planned_at,
                "items": [[cid, cell.item, cell.model, slot] for cid, cell, slot in self.items]}

    def json_line(self) -> bytes:
        """`to_json`'s line, encoded an item at a time (the journal writes this): a part's 100,000 items
        as one list of lists and tuples were ~30 MB more at the moment the part was planned."""
        head = dumps_bytes({"t": self.TAG, "k": self.key, "m": self.model, "at": self.planned_at, "items": []})
        out = bytearray(head[:-2])  # up to `"items":[`
        for n, (cid, cell, slot) in enumerate(self.items):
            if n:
                out += b","
            out += dumps_bytes([cid, cell.item, cell.model, slot])
        out += b"]}\n"
        return bytes(out)

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> BatchPlanned:
        items = tuple((str(cid), Cell(str(item), str(model)), slot if isinstance(slot, str) else int(slot))
                      for cid, item, model, slot in rec["items"])
        return cls(str(rec["k"]), str(rec["m"]), float(rec.get("at") or 0.0), items)


@journal_record
@dataclass(frozen=True, slots=True)
class BatchFileUploaded:
    """OpenAI: the batch's input file, uploaded."""

    TAG: ClassVar[str] = "batch_file"
    key: str
    file_id: str

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG, "k": self.key, "f": self.file_id}

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> BatchFileUploaded:
        return cls(str(rec["k"]), str(rec["f"]))


@journal_record
@dataclass(frozen=True, slots=True)
class BatchCreated:
    """The provider created the batch: its id, written the moment the creation returns."""

    TAG: ClassVar[str] = "batch"
    key: str
    batch_id: str

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG, "k": self.key, "id": self.batch_id}

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> BatchCreated:
        return cls(str(rec["k"]), str(rec["id"]))


@journal_record
@dataclass(frozen=True, slots=True)
class BatchEnded:
    """The batch ended: its last status (state, counts, result files), to read its results again."""

    TAG: ClassVar[str] = "batch_end"
    key: str
    status: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG, "k": self.key, "s": dict(self.status)}

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> BatchEnded:
        status = rec["s"]
        if not isinstance(status, dict):
            raise TypeError("batch_end: s is not an object")
        return cls(str(rec["k"]), status)


@journal_record
@dataclass(frozen=True, slots=True)
class BatchCancelled:
    """The user cancelled the batch (after Ctrl-C)."""

    TAG: ClassVar[str] = "batch_cancel"
    key: str

    def to_json(self) -> dict[str, Any]:
        return {"t": self.TAG, "k": self.key}

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> BatchCancelled:
        return cls(str(rec["k"]))


@dataclass(frozen=True, slots=True)
class NotRun:
    """A cell a cost cap kept from starting, and why; `row`: the AgentV results row written for it (Weval:
    None, its comparison entries follow from `why`). Kept apart from the cell's score (the database's
    `not_run` table), so `--resume` with a higher cap runs the cell; a score of the cell replaces it in
    the exports. Database only: an earlier evalspec's JSONL journal never has one."""

    TAG: ClassVar[str] = "notrun"  # never in a JSONL journal (not a journal_record)
    cell: Cell
    why: str
    row: dict[str, Any] | None = None
    # `row` as stored: its JSON text (database.json_text) or packed (packed_rows.py)
    packed: str | bytes | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ExportHead:
    """What a run's export holds besides its cells' rows, kept for `evalspec merge` (the database's
    `exports` table): `body` is zlib-compressed JSON (run/write/weval_rebuild.py makes and reads it)."""

    TAG: ClassVar[str] = "export"  # never in a JSONL journal (not a journal_record)
    name: str
    body: bytes


@dataclass(frozen=True, slots=True)
class ResultsName:
    """The name of the run's results file (the run row's `results`), chosen once: a Weval comparison file's
    (`<label>_<stamp>_comparison.json`, named by when its first export was written) is kept before that
    export is begun, and every later export of the run (a `--resume`'s) reuses it."""

    TAG: ClassVar[str] = "results"  # never in a JSONL journal (not a journal_record)
    name: str


Record: TypeAlias = (RunHeader | Generated | Failed | Judged | JudgeReply | KeyPoints | Embedding | CellScore
                     | Usage | Done | Stopped | BatchPlanned | BatchFileUploaded | BatchCreated | BatchEnded
                     | BatchCancelled | NotRun | ExportHead | ResultsName)
