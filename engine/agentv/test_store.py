"""A big suite's tests in memory that does not grow with the suite (`model_store.py`'s store).

A checked test as objects (its messages, assertions and their spans) is ~3–4 KB of memory; a
100,000-test suite's model was ~400 MB, held from the analysis to the end of the run and its report.
Past `DEFAULT_BOUND` tests a streamed check (`check` and `run`) keeps each as a compact record in a
temporary file: marshal of plain data (the test's fields by name, spans as tuples, paths as text,
messages, content blocks, tool calls and assertions as dicts), pickle for a test holding a value marshal
refuses (marshal takes exact built-in types only, so nothing is silently changed), deflated a block of
records at a time. A test is decoded
again when it is read; a suite with fewer tests keeps its list, as the editor's analyses always do.
A marshal record is two marshal values, the fields a report shows of a test (`SHOWN`: criteria, input
and expected messages) first, so that `TestStore.shown` reads them without the rest (its assertions).
"""

from __future__ import annotations

import marshal
import pickle
from array import array
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..findings import Span
from ..model_store import Collector, ModelStore
from ..spill_file import SpillFile
from .model import AgentvTest, Assertion, ContentBlock, Message, ToolCall, reference_answer

DEFAULT_BOUND = 4096  # tests kept as objects; a suite with more spills them all (a 2,000-test run never does)
RECENT = 256  # decoded tests kept for reads that come again soon (a cell's stages; workers run ~30 at once)

SPILL_PREFIX = ".evalspec-tests-"  # the temporary file's name (unlinked at once: seen only in /proc)

_MARSHAL, _PICKLE = b"m", b"p"
_TEST_SPANS = ("span", "id_span", "criteria_span")
_MESSAGES = ("input_messages", "expected_messages")
SHOWN = ("criteria", *_MESSAGES)  # a marshal record's first value (a tuple): what a report shows of a test
_BLOCKS = "\x00blocks"  # a message whose content is a list of ContentBlocks (not plain structured content)


def _span(value: Span | None) -> tuple[int, ...] | None:
    return tuple(value) if value is not None else None


_PLAIN_PATH = type(Path())  # PosixPath or WindowsPath (made once: a Path() per call was a third of the encoding)


def _path(value: Path | None) -> str | None:
    if value is None:
        return None
    if type(value) is not _PLAIN_PATH:
        raise ValueError("not a plain path")  # kept whole, by pickle
    return str(value)


def _message(m: Message) -> dict[str, Any]:
    out = dict(m.__dict__)
    out["span"] = _span(m.span)
    content = m.content
    if isinstance(content, list) and content and all(type(b) is ContentBlock for b in content):
        out["content"] = [{**b.__dict__, "span": _span(b.span), "resolved_path": _path(b.resolved_path)}
                          for b in content]
        out[_BLOCKS] = True
    out["tool_calls"] = [{**c.__dict__, "span": _span(c.span)} for c in m.tool_calls]
    return out


def _assertion(a: Assertion) -> dict[str, Any]:
    out = dict(a.__dict__)
    out["span"] = _span(a.span)
    out["source_path"] = _path(a.source_path)
    out["children"] = [_assertion(c) for c in a.children]
    return out


def _encode(t: AgentvTest) -> bytes:
    data = dict(t.__dict__)
    try:
        for name in _TEST_SPANS:
            data[name] = _span(data.get(name))
        data["source_path"] = _path(t.source_path)
        for name in _MESSAGES:
            data[name] = [_message(m) for m in data[name]]
        data["assertions"] = [_assertion(a) for a in t.assertions]
        shown = marshal.dumps(tuple([data.pop(name) for name in SHOWN]))
        return b"".join((_MARSHAL, len(shown).to_bytes(4, "little"), shown, marshal.dumps(data)))
    except (ValueError, TypeError, AttributeError):  # a value marshal does not take: the test as it is
        return _PICKLE + pickle.dumps(t, pickle.HIGHEST_PROTOCOL)


_new = object.__new__


def _as_span(value: tuple[int, ...]) -> Span:
    # tuple.__new__ straight (a NamedTuple's own __new__ is a Python function: a third of the decoding)
    return tuple.__new__(Span, value)


class _Decoder:
    """Records back to tests; the paths they name are made once per store and shared."""

    def __init__(self) -> None:
        self._paths: dict[str, Path] = {}

    def path(self, text: str | None) -> Path | None:
        if text is None:
            return None
        found = self._paths.get(text)
        if found is None:
            found = self._paths[text] = Path(text)
        return found

    def test(self, data: bytes) -> AgentvTest:
        if data[:1] == _PICKLE:
            found: AgentvTest = pickle.loads(data[1:])
            return found
        view = memoryview(data)
        end = 5 + int.from_bytes(view[1:5], "little")
        fields: dict[str, Any] = marshal.loads(view[end:])
        fields["criteria"], fields["input_messages"], fields["expected_messages"] = marshal.loads(view[5:end])
        for name in _TEST_SPANS:
            if fields.get(name) is not None:
                fields[name] = _as_span(fields[name])
        fields["source_path"] = self.path(fields["source_path"])
        for name in _MESSAGES:
            fields[name] = [self.message(m) for m in fields[name]]
        fields["assertions"] = [self.assertion(a) for a in fields["assertions"]]
        return _made(AgentvTest, fields)

    def shown(self, data: bytes) -> Shown:
        """What a report shows of the test of a record (its `SHOWN` fields), the rest not decoded."""
        if data[:1] == _PICKLE:
            return Shown.of(self.test(data))
        view = memoryview(data)
        criteria, inputs, expected = marshal.loads(view[5:5 + int.from_bytes(view[1:5], "little")])
        return Shown(criteria, [self.message(m) for m in inputs], [self.message(m) for m in expected])

    def message(self, fields: dict[str, Any]) -> Message:
        fields["span"] = _as_span(fields["span"])
        if fields.pop(_BLOCKS, False):
            fields["content"] = [self.block(b) for b in fields["content"]]
        fields["tool_calls"] = [_made(ToolCall, {**c, "span": _as_span(c["span"])}) for c in fields["tool_calls"]]
        return _made(Message, fields)

    def block(self, fields: dict[str, Any]) -> ContentBlock:
        fields["span"] = _as_span(fields["span"])
        fields["resolved_path"] = self.path(fields["resolved_path"])
        return _made(ContentBlock, fields)

    def assertion(self, fields: dict[str, Any]) -> Assertion:
        fields["span"] = _as_span(fields["span"])
        fields["source_path"] = self.path(fields["source_path"])
        fields["children"] = [self.assertion(c) for c in fields["children"]]
        return _made(Assertion, fields)


class Shown(NamedTuple):
    """What a report shows of a test (report/sources.py): its criteria, input and reference answer."""

    criteria: str | None
    input_messages: list[Message]
    expected_messages: list[Message]

    @classmethod
    def of(cls, t: AgentvTest) -> Shown:
        return cls(t.criteria, t.input_messages, t.expected_messages)

    @property
    def reference_answer(self) -> str:
        return reference_answer(self.expected_messages)


def _made(cls: type, fields: dict[str, Any]) -> Any:
    obj: Any = _new(cls)
    obj.__dict__ = fields  # (the record's own dict, made for this object: not copied)
    return obj


def _plain_input(t: AgentvTest) -> int:
    """The characters of the test's input when that is all a run's plan reads of it besides its id (it
    names no target of its own, has no workspace, and its assertions are all of built-in types a run
    scores deterministically: no judge, script or child), else -1 (plan/agentv.py decodes the test)."""
    ex = t.execution or {}
    if not t.assertions or t.workspace is not None or ex.get("targets") or ex.get("target"):
        return -1
    for a in t.assertions:
        kind = a.registered
        if kind is None or not kind.at_once or a.children:
            return -1
    try:
        return sum(len(m.text()) for m in t.input_messages)
    except Exception:  # (the plan decodes the test and meets it again)
        return -1


class Places:
    """A span and a file for each of many tests, in arrays (18 bytes a test, not a Span and a reference):
    what a store's outline reads of every test, and what a check that keeps no test keeps for a repeated
    id's finding (suite.UniqueTests)."""

    def __init__(self) -> None:
        self.spans = array("q")  # 4 a test: the Span's fields
        self.files = array("i")  # an index in paths
        self.paths: list[Path | None] = []
        self._path_at: dict[Path | None, int] = {}

    def append(self, span: Span, path: Path | None) -> None:
        self.spans.extend(span)
        at = self._path_at.get(path)
        if at is None:
            at = self._path_at[path] = len(self.paths)
            self.paths.append(path)
        self.files.append(at)

    def get(self, k: int) -> tuple[Span, Path | None]:
        return _as_span(tuple(self.spans[4 * k:4 * k + 4])), self.paths[self.files[k]]


class _TestCodec:
    """A store's tests as records (model_store.py deflates them a block at a time: ~870 bytes a test
    become ~80). The file is written to the disk like any other."""

    def __init__(self) -> None:
        self._decoder = _Decoder()
        # Each test's span and tests file, in the order encoded (a store encodes each of its tests once):
        # what run/plan/items.entries reads of every test, without decoding any
        self.places = Places()
        # Each test's input length when the plan needs nothing else of it (`_plain_input`, 8 bytes a test):
        # the run's plan then reads no such test back (a decode is ~10 us a test, and its cell decodes it again)
        self.plain_inputs = array("q")

    def encode(self, item: AgentvTest) -> bytes:
        self.places.append(item.span, item.source_path)
        self.plain_inputs.append(_plain_input(item))
        return _encode(item)

    def decode(self, data: bytes) -> AgentvTest:
        return self._decoder.test(data)

    def shown(self, data: bytes) -> Shown:
        return self._decoder.shown(data)

    def id_of(self, item: AgentvTest) -> str:
        return item.id


class TestStore(ModelStore[AgentvTest]):
    """The tests of one suite (or the part of them a run keeps), on disk; see `model_store.py`."""

    __test__ = False  # not a pytest class

    @classmethod
    def of_tests(cls, tests: list[AgentvTest], spill: SpillFile | None = None) -> TestStore:
        store: TestStore = cls.of(tests, spill if spill is not None else SpillFile(SPILL_PREFIX), _TestCodec(), RECENT)
        return store

    def outline(self) -> Iterator[tuple[str, Span, Path | None]]:
        """(id, span, source_path) of each test, in order, none decoded."""
        file = self._file
        codec = file.codec
        assert isinstance(codec, _TestCodec)
        place, ids = codec.places.get, file.ids
        for k in (self._indexes if self._indexes is not None else range(len(ids))):
            yield (ids[k], *place(k))

    def shown(self, index: int) -> Shown:
        """What a report shows of test `index` (`Shown`), read without decoding the rest of the test."""
        codec = self._file.codec
        assert isinstance(codec, _TestCodec)
        return codec.shown(self.record(index))

    def plain_inputs(self) -> Sequence[int]:
        """Each test's `_plain_input`, in order, none decoded (-1: the test must be read)."""
        codec = self._file.codec
        assert isinstance(codec, _TestCodec)
        inputs = codec.plain_inputs
        return inputs if self._indexes is None else array("q", (inputs[k] for k in self._indexes))


class TestCollector(Collector[AgentvTest]):
    """A streamed check's tests: a list up to `bound`, past it a TestStore (the held ones go first)."""

    __test__ = False

    def __init__(self, bound: int | None = None, scratch: Callable[[str], SpillFile] | None = None) -> None:
        def make_store(held: list[AgentvTest]) -> ModelStore[AgentvTest]:
            return TestStore.of_tests(held, scratch(SPILL_PREFIX) if scratch is not None else None)

        super().__init__(bound if bound is not None else DEFAULT_BOUND, make_store, _Decoder().test)

    def append_record(self, record: tuple[bytes, int], item_id: str, span: Span, source_path: Path | None) -> None:
        """A test as `encoded` made it in another process (its record, its plain input's length), with its
        id, span and tests file."""
        data, plain_input = record
        store = self._store
        if store is not None:
            codec = store.codec
            assert isinstance(codec, _TestCodec)
            codec.places.append(span, source_path)
            codec.plain_inputs.append(plain_input)
        self.append_encoded(data, item_id)


def encoded(test: AgentvTest) -> tuple[bytes, int]:
    """The test's record and what a store notes of it besides (TestCollector.append_record takes them)."""
    return _encode(test), _plain_input(test)
