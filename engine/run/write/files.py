"""Writing result files: JSON as the reference writes it, atomically, and file-name-safe timestamps."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...jsonio import dumps_bytes
from ...own_files import create_fresh
from ...providers.redact import redact_bytes


def now_utc() -> datetime:
    return datetime.now(UTC)


def iso_timestamp(when: datetime) -> str:
    """JavaScript's `toISOString()`: `2024-01-01T12:30:00.123Z`."""
    # isoformat, not strftime: a third of the cost, and a run writes one per result row.
    if when.tzinfo is not UTC:  # (now_utc's is: a row's timestamp converts nothing)
        when = when.astimezone(UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def safe_timestamp(when: datetime) -> str:
    """The reference's `toSafeTimestamp`: `2024-01-01T12-30-00-123Z` (file names cannot hold `:`/`.`)."""
    return iso_timestamp(when).replace(":", "-").replace(".", "-")


def dumps_pretty(value: Any) -> bytes:
    """Indented two levels deep, compact below: every top-level field, and every prompt or model under
    it, on its own line, while the bulk stays compact (fully indented, a 2,000-prompt comparison file
    is twice the size)."""
    if not isinstance(value, dict) or not value:
        return dumps_bytes(value)
    lines = []
    for key, item in value.items():
        head = b"  " + dumps_bytes(str(key)) + b": "
        if isinstance(item, dict) and item:
            inner = b",\n".join(b"    " + dumps_bytes(str(k)) + b": " + dumps_bytes(v) for k, v in item.items())
            lines.append(head + b"{\n" + inner + b"\n  }")
        else:
            lines.append(head + dumps_bytes(item))
    return b"{\n" + b",\n".join(lines) + b"\n}"


class LazyMap(Mapping[str, Any]):
    """A JSON object whose values are made when they are read (`value(key)`), one at a time, and not
    kept: a results file's per-prompt maps, written without ever being whole in memory. Written only
    through `pretty_chunks` / `compact_chunks` (orjson does not know it)."""

    def __init__(self, keys: Sequence[str], value: Callable[[str], Any],
                 index: Mapping[str, Any] | AbstractSet[str] | None = None, *,
                 at: Callable[[int, str], Any] | None = None, plain: bool = False,
                 encoded: Callable[[int, str], bytes] | None = None) -> None:
        """`index`: the keys as a set or mapping, when the caller has one (several maps of the same keys
        share it: one made per map was ~4 MB each at 100,000 prompts); else made on the first lookup.
        `at(n, key)`: the n-th key's value, the same as `value(key)`, for a walk in order (the caller knows
        the place without looking the key up). `plain`: no value holds a LazyMap / LazyList (so each is
        written without looking). `encoded(n, key)`: the n-th key's value as `dumps_bytes` writes it, which
        the writers take instead of encoding the value (a results file's cells, kept encoded)."""
        self._keys = keys
        self._index: Mapping[str, Any] | AbstractSet[str] | None = index
        self._value = value
        self._at = at
        self.encoded = encoded
        self.plain = plain or encoded is not None

    def __getitem__(self, key: str) -> Any:
        if self._index is None:
            self._index = frozenset(self._keys)
        if key not in self._index:
            raise KeyError(key)
        return self._value(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def items(self) -> Iterator[tuple[str, Any]]:  # type: ignore[override]  # one pass, no view
        if self._at is not None:
            at = self._at
            for n, key in enumerate(self._keys):
                yield key, at(n, key)
            return
        value = self._value
        for key in self._keys:
            yield key, value(key)


class LazyList:
    """A JSON array whose elements are made when it is written (`elements()` called again each time).
    `summary`, when given, makes the elements as a summary file lists them (core.json: a prompt's id and
    weight) without making the whole elements first."""

    def __init__(self, elements: Callable[[], Iterable[Any]],
                 summary: Callable[[], Iterable[Any]] | None = None, *, plain: bool = False) -> None:
        """`plain`: no element holds a LazyMap / LazyList (so each is written without looking)."""
        self.elements = elements
        self.summary = summary
        self.plain = plain


_LAZY = (LazyMap, LazyList)
_ENTRIES_PER_CHUNK = 128  # a plain LazyMap's entries or LazyList's elements joined into one piece


def _holds_lazy(value: Any) -> bool:
    # By exact type, not isinstance(…, LazyMap): LazyMap is a collections.abc.Mapping, so that isinstance
    # on the plain values that make up nearly all of a results file takes ABCMeta's slow path (30,000
    # calls at 2,000 prompts). Neither class is subclassed.
    kind = type(value)
    if kind is LazyMap or kind is LazyList:
        return True
    return isinstance(value, dict) and any(type(v) is LazyMap or type(v) is LazyList for v in value.values())


def compact_chunks(value: Any) -> Iterator[bytes]:
    """`dumps_bytes(value)` in pieces, for a value that holds LazyMap / LazyList (at its top or one level
    down): the same bytes, a member at a time."""
    if not _holds_lazy(value):
        yield dumps_bytes(value)
        return
    if type(value) is LazyList and value.plain:
        yield b"["
        yield from _joined((dumps_bytes(element) for element in value.elements()), b",")
        yield b"]"
        return
    if type(value) is LazyList:
        yield b"["
        for n, element in enumerate(value.elements()):
            if n:
                yield b","
            yield from compact_chunks(element)
        yield b"]"
        return
    yield b"{"
    if type(value) is LazyMap and value.encoded is not None:
        yield from _joined(_encoded_entries(value, b""), b",")
        yield b"}"
        return
    for n, (key, item) in enumerate(value.items()):
        yield (b"," if n else b"") + dumps_bytes(str(key)) + b":"
        yield from compact_chunks(item)
    yield b"}"


def pretty_chunks(value: Any) -> Iterator[bytes]:
    """`dumps_pretty(value)` in pieces, one second-level entry (a prompt) at a time: a big comparison
    file is never one buffer in memory (at 20,000 prompts the buffer and its redacted copy were ~60 MB).
    LazyMap / LazyList values are written member by member (`compact_chunks`)."""
    if not isinstance(value, dict) or not value:
        yield dumps_bytes(value)
        return
    yield b"{\n"
    for n, (key, item) in enumerate(value.items()):
        head = (b",\n" if n else b"") + b"  " + dumps_bytes(str(key)) + b": "
        if type(item) is LazyMap and item.plain and item:
            yield head + b"{\n"
            yield from _plain_entries(item)
            yield b"\n  }"
        elif (isinstance(item, dict) or type(item) is LazyMap) and item:
            yield head + b"{\n"
            for m, (k, v) in enumerate(item.items()):
                entry = (b",\n" if m else b"") + b"    " + dumps_bytes(str(k)) + b": "
                if _holds_lazy(v):
                    yield entry
                    yield from compact_chunks(v)
                else:
                    yield entry + dumps_bytes(v)
            yield b"\n  }"
        elif _holds_lazy(item):
            yield head
            yield from compact_chunks(item)
        else:
            yield head + dumps_bytes(item)
    yield b"\n}"


def _plain_entries(item: LazyMap) -> Iterator[bytes]:
    """A plain LazyMap's entries as `pretty_chunks` writes them (`    "key": value`, one a line), joined a
    few dozen at a time (a piece each, looked at for LazyMap / LazyList each, was a third of the work of
    writing a big comparison file's per-prompt maps)."""
    if item.encoded is not None:
        yield from _joined(_encoded_entries(item, b"    ", b": "), b",\n")
        return
    yield from _joined((b"    " + dumps_bytes(str(key)) + b": " + dumps_bytes(value) for key, value in item.items()),
                       b",\n")


def _encoded_entries(item: LazyMap, indent: bytes, colon: bytes = b":") -> Iterator[bytes]:
    """An encoded LazyMap's entries, `indent`, the key, `colon`, its value as given."""
    encoded = item.encoded
    assert encoded is not None
    for n, key in enumerate(item._keys):
        yield indent + dumps_bytes(str(key)) + colon + encoded(n, key)


def _joined(pieces: Iterable[bytes], separator: bytes) -> Iterator[bytes]:
    """`separator.join(pieces)` in chunks of _ENTRIES_PER_CHUNK pieces."""
    pending: list[bytes] = []
    first = True
    for piece in pieces:
        pending.append(piece)
        if len(pending) >= _ENTRIES_PER_CHUNK:
            yield (b"" if first else separator) + separator.join(pending)
            first = False
            pending.clear()
    if pending:
        yield (b"" if first else separator) + separator.join(pending)


def write_json(path: Path, value: Any, *, pretty: bool = False) -> None:
    if pretty:
        write_stream(path, pretty_chunks(value))
    else:
        write_atomic(path, dumps_bytes(value))


WRITE_BUFFER = 1 << 20  # bytes gathered before a write


def write_stream(path: Path, chunks: Iterable[bytes], *, buffer: int | None = None) -> None:
    """`write_atomic` for data made in pieces: each piece redacted (a piece holds whole JSON strings, so
    a key cannot straddle two), written about `buffer` bytes at a time, renamed into place at the end."""
    path.parent.mkdir(parents=True, exist_ok=True)
    clear_stale_temporaries(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with os.fdopen(create_fresh(tmp), "wb") as f:  # never through a link planted under its name
            # copied into one buffer as they come, not kept: each of orjson's results, however short,
            # holds a 4 KB allocation, so a list of a megabyte of small pieces held ~100 MB
            pending = bytearray()
            for chunk in chunks:
                pending += redact_bytes(chunk)
                if len(pending) >= (buffer or WRITE_BUFFER):
                    f.write(pending)
                    pending.clear()
            f.write(pending)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def clear_stale_temporaries(folder: Path) -> list[str]:
    """Remove the `.<name>.<pid>.tmp` files in `folder` that a killed writer left (its process is gone);
    another live process's are left alone. The names removed, for the tests."""
    removed = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if not (name.startswith(".") and name.endswith(".tmp")) or not entry.is_file(follow_symlinks=False):
                continue
            pid = name[:-4].rpartition(".")[2]
            if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with os.fdopen(create_fresh(tmp), "wb") as f:  # never through a link planted under its name
        f.write(redact_bytes(data))
    os.replace(tmp, path)
