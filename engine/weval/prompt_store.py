"""A big blueprint's prompts as compact records in memory (`model_store.py`'s store).

A checked prompt as objects (the prompt, its messages and points, every span) is ~4.6 KB of memory.
Past `DEFAULT_BOUND` prompts a streamed check (`check` and `run`) keeps each as a compact record (marshal
of plain tuples and dicts, pickle for a value marshal refuses), deflated a block of records at a time
(~68 bytes a prompt of bench/run_throughput.py's blueprint, where the record is ~880), in memory: nothing
is written to the disk for it. A prompt is decoded again when it is read (`model_store.py` says how). This
module holds the prompts' record format and the bounds.

A prompt's reference form (what the comparison file writes of it) is a part of its record of its own, with
what else the export reads (~47 % of the record): a run's cell reads the prompt without it (`cell_prompt`),
the export reads only that part (`exported_prompt`), a whole read both (`store[k]`).
"""

from __future__ import annotations

import dataclasses
import marshal
import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from ..findings import Span
from ..model_store import Collector, ModelStore, item_ids, keep_items
from ..spill_file import MemorySpill
from .model import Message, Point, Prompt

DEFAULT_BOUND = 4096  # prompts kept as objects; a file with more spills them all (a 2,000-prompt run never does)
RECENT = 256  # decoded prompts kept for reads that come again soon (a cell's stages; workers run ~32 at once)

# A record: its kind, then marshal's bytes. _MARSHAL: the prompt, without a reference form. _SPLIT: its
# length's _LENGTH bytes, the prompt with `reference` None (what a cell reads), then (id, ideal, weight,
# [(role, content)…], the reference form) (what the export reads). _PICKLE: the prompt, pickled.
_MARSHAL, _SPLIT, _PICKLE = b"m", b"s", b"p"
_LENGTH = 4
_SPANS = ("span", "id_span")
_POINTS = ("should", "should_not")

# An object's field names, once per process: a record holds the number of its names and its values
# (the names were ~40 % of a record). The records live only in this process's memory.
_SHAPES: list[tuple[str, ...]] = []
_SHAPE_AT: dict[tuple[str, ...], int] = {}


def _shape(names: tuple[str, ...]) -> int:
    found = _SHAPE_AT.get(names)
    if found is None:
        found = _SHAPE_AT.setdefault(names, len(_SHAPES))
        if found == len(_SHAPES):
            _SHAPES.append(names)
    return found


def _seeded() -> None:
    """The shapes of the prompt's objects as made by their classes, numbered the same in every process (the
    processes reading one file's prompts rarely make another: adopt_shapes)."""
    for cls in (Prompt, Message, Point):
        _shape(tuple(f.name for f in dataclasses.fields(cls)))


_seeded()


def _encode(p: Prompt) -> bytes:
    """The prompt as plain data: its fields' values (spans as tuples, messages and points likewise); its
    reference form, when it has one, in a second part with what the export reads beside it."""
    fields = p.__dict__
    names = tuple(fields)
    layout = _LAYOUTS.get(names)
    if layout is None:
        layout = _layout(names)
    shape, spans, messages, points, reference = layout
    values = list(fields.values())
    for i in spans:
        if values[i] is not None:
            values[i] = tuple(values[i])
    values[messages] = [_plain(m) for m in values[messages]]
    for i in points:
        if values[i]:
            values[i] = [_plain(pt) for pt in values[i]]
    ref = values[reference] if reference >= 0 else None
    try:
        if ref is None:
            return _MARSHAL + marshal.dumps((shape, tuple(values)), _MARSHAL_VERSION)
        values[reference] = None
        cell = marshal.dumps((shape, tuple(values)), _MARSHAL_VERSION)
        export = marshal.dumps((p.id, p.ideal, p.weight, [(m.role, m.content) for m in p.messages], ref),
                               _MARSHAL_VERSION)
        return _SPLIT + len(cell).to_bytes(_LENGTH, "little") + cell + export
    except ValueError:  # a value marshal does not know (only plain data is ever written): keep it as it is
        return _PICKLE + pickle.dumps(p, pickle.HIGHEST_PROTOCOL)


def encode(p: Prompt) -> bytes:
    """The prompt's record, as a store keeps it (a process reading part of a file's prompts sends these)."""
    return _encode(p)


def shape_names() -> list[tuple[str, ...]]:
    """This process's shapes (a record names its objects' fields by their number here)."""
    return _SHAPES


def shapes_since(count: int) -> list[tuple[str, ...]]:
    """The shapes made after the first `count` (by a forked process, which sends them with its records)."""
    return _SHAPES[count:]


def adopt_shapes(start: int, shapes: list[tuple[str, ...]]) -> None:
    """Another process's shapes, made after the fork (numbered from `start` there): its records read here
    only if each has the same number here (made in the same order, or first here); else Unshared (the
    file is read again in one process)."""
    from ..item_processes import Unshared

    for at, names in enumerate(shapes, start):
        if at < len(_SHAPES):
            if _SHAPES[at] != names:
                raise Unshared("another process numbered a record shape otherwise")
        else:
            _SHAPE_AT.setdefault(names, at)
            _SHAPES.append(names)


# marshal's version 2: no references between the objects it writes (a third faster than version 4, whose
# table of every object written was most of its cost; a record is a little longer, its block's deflate
# takes that out)
_MARSHAL_VERSION = 2

# A prompt's field names → (their shape, where its spans, messages, points and reference form are among its
# values, -1 for none): a prompt's fields are read by position, once the names are known (most of the cost of
# a record was testing each name)
_LAYOUTS: dict[tuple[str, ...], tuple[int, tuple[int, ...], int, tuple[int, ...], int]] = {}


def _layout(names: tuple[str, ...]) -> tuple[int, tuple[int, ...], int, tuple[int, ...], int]:
    found = _LAYOUTS[names] = (_shape(names), tuple(i for i, n in enumerate(names) if n in _SPANS),
                               names.index("messages"), tuple(i for i, n in enumerate(names) if n in _POINTS),
                               names.index("reference") if "reference" in names else -1)
    return found


# A message's or point's field names → (their shape, where its span is among its values, or -1)
_PLAIN_LAYOUTS: dict[tuple[str, ...], tuple[int, int]] = {}


def _plain(obj: Message | Point) -> tuple[int, tuple[Any, ...]]:
    fields = obj.__dict__
    names = tuple(fields)
    layout = _PLAIN_LAYOUTS.get(names)
    if layout is None:
        layout = _PLAIN_LAYOUTS[names] = (_shape(names), names.index("span") if "span" in names else -1)
    shape, at = layout
    if at < 0 or fields["span"] is None:
        return shape, tuple(fields.values())
    values = list(fields.values())
    values[at] = tuple(values[at])
    return shape, tuple(values)


_new = object.__new__
_new_span = tuple.__new__  # Span(*t) without NamedTuple's Python-level __new__

# A shape → (its names, how many, where its spans are among them and their names): a record's values back
# into fields by position
_READ_LAYOUTS: dict[int, tuple[tuple[str, ...], int, tuple[tuple[int, str], ...]]] = {}


def _read_layout(shape: int) -> tuple[tuple[str, ...], int, tuple[tuple[int, str], ...]]:
    names = _SHAPES[shape]
    found = _READ_LAYOUTS[shape] = (names, len(names), tuple((i, n) for i, n in enumerate(names) if n in _SPANS))
    return found


def _decode(data: bytes) -> Prompt:
    """The whole prompt, equal to the one stored."""
    kind = data[:1]
    if kind == _PICKLE:
        found: Prompt = pickle.loads(data[1:])
        return found
    if kind == _MARSHAL:
        return _prompt(marshal.loads(data[1:]))
    prompt = _cell(data)
    prompt.__dict__["reference"] = _export_part(data)[4]
    return prompt


def _cell(data: bytes) -> Prompt:
    """The prompt as a run's cell reads it: a split record's first part only, its reference form None
    (only the export reads it: `exported_prompt`)."""
    kind = data[:1]
    if kind == _SPLIT:
        return _prompt(marshal.loads(memoryview(data)[1 + _LENGTH:]))  # (marshal ignores the bytes past its own)
    return _decode(data)


def _export_part(data: bytes) -> tuple[str, str | None, float, list[tuple[str, str | None]], dict[str, Any]]:
    """A split record's second part: (id, ideal, weight, its messages' (role, content), its reference form)."""
    found: Any = marshal.loads(memoryview(data)[1 + _LENGTH + int.from_bytes(data[1:1 + _LENGTH], "little"):])
    return found


def _prompt(record: tuple[int, tuple[Any, ...]]) -> Prompt:
    (prompt,) = _objects(Prompt, (record,))
    fields = prompt.__dict__
    fields["messages"] = _objects(Message, fields["messages"])
    for name in _POINTS:
        if fields[name]:
            fields[name] = _objects(Point, fields[name])
    found: Prompt = prompt
    return found


def _objects(cls: type, records: Iterable[tuple[int, tuple[Any, ...]]]) -> list[Any]:
    """Records' values as the objects they were (of `cls`), spans made again; a loop, not a call an object."""
    out = []
    for shape, values in records:
        names, n, spans = _READ_LAYOUTS.get(shape) or _read_layout(shape)
        if n != len(values):
            raise ValueError("a record that does not fit its shape")
        # (the lengths were compared above; zip's strict keyword made each call ~1.6 k instructions more)
        fields = dict(zip(names, values))  # noqa: B905
        for i, name in spans:
            if values[i] is not None:
                fields[name] = _new_span(Span, values[i])
        obj: Any = _new(cls)
        obj.__dict__ = fields
        out.append(obj)
    return out


class Turn(NamedTuple):
    """A message as a results file lists it (promptContexts): its role and content."""

    role: str
    content: str | None


class ExportedPrompt(NamedTuple):
    """What a results file writes of a prompt with a reference form (write/weval_results.py): read from its
    record without making its points, spans and messages as objects (a third of a whole decode)."""

    id: str
    ideal: str | None
    weight: float
    reference: dict[str, Any]
    messages: list[Turn]


_turn = Turn._make


def _decode_export(data: bytes) -> Prompt | ExportedPrompt:
    """A record as ExportedPrompt (its second part only), or as the Prompt for one without a reference form."""
    if data[:1] == _SPLIT:
        pid, ideal, weight, turns, reference = _export_part(data)
        return ExportedPrompt(pid, ideal, weight, reference, [_turn(t) for t in turns])
    return _decode(data)


def cell_prompt(prompts: Sequence[Prompt], k: int) -> Prompt:
    """`prompts[k]` as a run's cell reads it: a store's prompt without its reference form (`reference`
    None: the export reads it, from the record, `exported_prompt`), a list's prompt as it is."""
    if isinstance(prompts, PromptStore):
        return prompts.cell(k)
    return prompts[k]


def cell_prompts(prompts: Sequence[Prompt]) -> Iterator[Prompt]:
    """Every prompt, in order, as `cell_prompt` reads it (none kept among the recent ones: a pass over all
    of them, planning a run)."""
    if isinstance(prompts, PromptStore):
        for k in range(len(prompts)):
            yield _cell(prompts.record(k))
    else:
        yield from prompts


def exported_prompt(prompts: Sequence[Prompt], k: int) -> Prompt | ExportedPrompt:
    """`prompts[k]` as a results file needs it: a store's record read in part (ExportedPrompt), a list's
    prompt as it is."""
    if isinstance(prompts, PromptStore):
        return _decode_export(prompts.record(k))
    return prompts[k]


def exported_prompts(prompts: Sequence[Prompt]) -> Iterator[Prompt | ExportedPrompt]:
    """Every prompt, in order, as `exported_prompt` reads it."""
    if isinstance(prompts, PromptStore):
        for k in range(len(prompts)):
            yield _decode_export(prompts.record(k))
    else:
        yield from prompts


class _PromptCodec:
    """A store's prompts as records (model_store.py deflates them a block at a time)."""

    def encode(self, item: Prompt) -> bytes:
        return _encode(item)

    def decode(self, data: bytes) -> Prompt:
        return _decode(data)

    def id_of(self, item: Prompt) -> str:
        return item.id


class PromptStore(ModelStore[Prompt]):
    """The prompts of one blueprint (or the part of them a run keeps), in memory; see the module's doc."""

    @classmethod
    def of_prompts(cls, prompts: Iterable[Prompt]) -> PromptStore:
        store: PromptStore = cls.of(prompts, MemorySpill(), _PromptCodec(), RECENT)
        return store

    def cell(self, index: int) -> Prompt:
        """Prompt `index` as `cell_prompt` reads it (the last few read so kept, apart from whole ones)."""
        found: Prompt = self.part(index, _cell)
        return found


def prompt_ids(prompts: Sequence[Prompt]) -> list[str]:
    """The ids of a list of prompts or a store (whose prompts are not decoded for it)."""
    return item_ids(prompts)


def keep_prompts(prompts: Sequence[Prompt], keep: Callable[[int, str], bool]) -> Sequence[Prompt]:
    """`[p for n, p in enumerate(prompts) if keep(n, p.id)]`, a store's subset for a store."""
    return keep_items(prompts, keep)


class PromptCollector(Collector[Prompt]):
    """What a streamed check appends its prompts to: a plain list up to `bound` prompts, past that a
    store (the prompts held so far go to it first). `result()` is the blueprint's `prompts`."""

    def __init__(self, bound: int | None = None) -> None:
        super().__init__(bound if bound is not None else DEFAULT_BOUND, PromptStore.of_prompts, _decode)
