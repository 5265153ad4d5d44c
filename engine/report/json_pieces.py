"""The report's small block as compact JSON in pieces, the same bytes `dumps_bytes` writes for it whole.

The small block (report/html.py) holds a few values per cell and per prompt: ids, snippets, scores, flags,
reasons. Each such list is an `EncodedList`, kept as JSON a few thousand values at a time, and
`pieces(value)` hands the block out piece by piece (each piece holds whole values, so a key that is
masked cannot straddle two: run/files.write_stream relies on the same), so a big run's report never
holds the whole block as objects or text.

orjson encodes almost everything; a value it refuses (a lone surrogate in an answer's snippet, an integer
beyond 64 bits) makes `pieces` return None, and the caller encodes the whole value with `dumps_bytes`,
whose fallback writes every string with ASCII escapes.
"""

from __future__ import annotations

from typing import Any

from ..jsonio import dumps_orjson, loads

ENCODE_EVERY = 4096  # values encoded together


class EncodedList:
    """A list of JSON values, appended to and never read back except as JSON (`pieces`, or `values()`)."""

    __slots__ = ("_chunks", "_pending", "_refused")

    def __init__(self) -> None:
        self._chunks: list[bytes] = []  # the values so far, compact JSON without the brackets
        self._pending: list[Any] = []
        self._refused = False  # a value orjson refuses: every value is kept as it is (in _pending)

    def append(self, value: Any) -> None:
        self._pending.append(value)
        if len(self._pending) >= ENCODE_EVERY and not self._refused:
            self._encode()

    def extend(self, values: Any) -> None:
        for value in values:
            self.append(value)

    def _encode(self) -> None:
        try:
            self._chunks.append(dumps_orjson(self._pending)[1:-1])
        except TypeError:
            self._pending = self.values()
            self._chunks = []
            self._refused = True
            return
        self._pending = []

    def values(self) -> list[Any]:
        """The values, as the list they stand for."""
        out: list[Any] = [v for chunk in self._chunks for v in loads(b"[" + chunk + b"]")]
        return out + self._pending

    def into(self, out: list[bytes]) -> bool:
        """Append the list's JSON to `out` in pieces; False when a value is one orjson refuses."""
        if self._pending and not self._refused:
            self._encode()
        if self._refused:
            return False
        out.append(b"[")
        for n, chunk in enumerate(self._chunks):
            if n:
                out.append(b",")
            out.append(chunk)
        out.append(b"]")
        return True


def pieces(value: Any) -> list[bytes] | None:
    """`dumps_bytes(plain(value))` in pieces (joined, the same bytes), for a value that is or holds
    EncodedLists (see `_holds_encoded`; anything else is one piece); None when orjson refuses something."""
    out: list[bytes] = []
    try:
        if not _into(value, out):
            return None
    except TypeError:
        return None
    return out


def _into(value: Any, out: list[bytes]) -> bool:
    if isinstance(value, EncodedList):
        return value.into(out)
    if isinstance(value, dict) and _holds_encoded(value):
        out.append(b"{")
        for n, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                return False  # (the whole encoding writes it as a string; no block of the page has one)
            out.append((b"," if n else b"") + dumps_orjson(key) + b":")
            if not _into(item, out):
                return False
        out.append(b"}")
        return True
    if isinstance(value, list) and _holds_encoded(value):
        out.append(b"[")
        for n, item in enumerate(value):
            if n:
                out.append(b",")
            if not _into(item, out):
                return False
        out.append(b"]")
        return True
    out.append(dumps_orjson(value))
    return True


def _holds_encoded(value: Any) -> bool:
    """A dict or list holding EncodedLists: as values, or as the lists of them a value may be (the small
    block's per-run scores). Nothing deeper is looked at: a details block's cells are walked by orjson alone."""
    if isinstance(value, dict):
        return any(isinstance(v, EncodedList) or _list_of_encoded(v) for v in value.values())
    return _list_of_encoded(value)


def _list_of_encoded(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and isinstance(value[0], EncodedList)


def plain(value: Any) -> Any:
    """`value` with each EncodedList as the list it stands for."""
    if isinstance(value, EncodedList):
        return value.values()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
