"""Keeping API keys out of everything we write or show.

Every secret a provider is built with is registered here; `redact()` replaces any registered value in a
string. ProviderError runs its message through it, so a key echoed back by a server's 401 body, or a key
in a custom model's URL, never reaches a results file, a cache entry, a log line or a traceback.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

MASK = "***"
MASK_BYTES = MASK.encode("ascii")
_MIN_LEN = 6  # shorter values would scrub ordinary words; no real key is that short
# A piece of a key this long is masked too, wherever it stands: a provider that echoes the key's first
# 20 characters ("Incorrect API key provided: sk-proj-abc…"), a preview cut through it, a key split over
# two stream chunks or lines. Shorter pieces stay: OpenAI's own masked form shows 8 and 4 characters,
# and a key's public prefix ("sk-ant-api03-" is 13: masking it is harmless) would otherwise go too.
PIECE = 12
_GRAM = 8  # pieces are found through the key's 8-character grams, looked up every _STEP characters:
_STEP = PIECE - _GRAM + 1  # any run of PIECE characters holds a gram starting at such a position


class _Pieces:
    """What finds the pieces of one secret (str or bytes) in a text of the same type. A piece lies in a
    run of PIECE or more of the secret's own characters, and prose has few: bytes (what is written, the
    hot path) find them by one C-level translate and find, str by a character class (linear: no
    nesting); only those runs are looked at, through the secret's grams, or for a run longer than
    _LONG_RUN its probes searched in C."""

    __slots__ = ("cls", "grams", "probes", "secret", "table")

    def __init__(self, secret: Any) -> None:
        self.secret = secret
        grams: dict[Any, tuple[int, ...]] = {}
        for at in range(len(secret) - _GRAM + 1):
            grams[secret[at:at + _GRAM]] = (*grams.get(secret[at:at + _GRAM], ()), at)
        self.grams = grams
        last = len(secret) - _GRAM
        self.probes = tuple((at, secret[at:at + _GRAM]) for at in sorted({*range(0, last + 1, _STEP), last}))
        if isinstance(secret, bytes):
            self.table = bytes(0x61 if c in secret else 0x20 for c in range(256))  # its bytes "a", others " "
            self.cls = None
        else:
            self.table = b""
            self.cls = re.compile("[" + "".join(re.escape(c) for c in sorted(set(secret))) + f"]{{{PIECE},}}")

    def runs(self, text: Any) -> Iterator[tuple[int, int]]:
        if self.cls is not None:
            for m in self.cls.finditer(text):
                yield m.span()
            return
        for start, chunk in _chunks(text):  # a run across two chunks is seen, cut, in one or both
            marks = chunk.translate(self.table)
            i = marks.find(_RUN)
            while i >= 0:
                end = marks.find(b" ", i)
                end = len(marks) if end < 0 else end
                yield start + i, start + end
                i = marks.find(_RUN, end)

    def spans(self, text: Any) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for a, b in self.runs(text):
            if b - a > _LONG_RUN:
                for at, probe in self.probes:
                    j = text.find(probe, a, b)
                    while j >= 0:
                        self._grow(text, j, at, out)
                        j = text.find(probe, j + 1, b)
                continue
            j = a
            while j <= b - _GRAM:
                far = j + _STEP
                for at in self.grams.get(text[j:j + _GRAM], ()):
                    far = max(far, self._grow(text, j, at, out) - _GRAM + 1)
                j = far
        return out

    def _grow(self, text: Any, j: int, at: int, out: list[tuple[int, int]]) -> int:
        """The run of the secret through `text[j:]` = `secret[at:]`, noted when PIECE long; its end. Grown
        in the text itself, past the run it was found in (which a chunk's end may have cut)."""
        secret = self.secret
        lo, hi, left, right = j, j + _GRAM, at, at + _GRAM
        while lo > 0 and left > 0 and text[lo - 1] == secret[left - 1]:
            lo, left = lo - 1, left - 1
        while hi < len(text) and right < len(secret) and text[hi] == secret[right]:
            hi, right = hi + 1, right + 1
        if hi - lo >= PIECE:
            out.append((lo, hi))
        return hi


_RUN = b"a" * PIECE
_LONG_RUN = 4096
# Bytes are translated a chunk at a time, chunks overlapping by a piece less one: a whole-file copy for
# each write of a results file grew a batch run's memory peak with its size (tests/batch/test_batch_memory).
_CHUNK = 1 << 16


def _chunks(data: bytes) -> Iterator[tuple[int, bytes]]:
    if len(data) <= _CHUNK:
        yield 0, data
        return
    for start in range(0, len(data), _CHUNK):
        yield start, data[start:start + _CHUNK + PIECE - 1]


def _mask_pieces(text: Any, finder: _Pieces, mask: Any) -> Any:
    """`text` (str or bytes) with every run of PIECE or more characters of the secret, in the secret's
    own order, replaced by `mask`."""
    spans = finder.spans(text)
    if not spans:
        return text
    spans.sort()
    out, pos = [], 0
    for lo, hi in spans:
        if hi <= pos:
            continue
        if lo > pos:
            out.append(text[pos:lo])
        if lo >= pos:
            out.append(mask)
        pos = hi
    out.append(text[pos:])
    return text[:0].join(out)


_lock = threading.Lock()
_secrets: tuple[str, ...] = ()  # longest first, so a key that contains another is masked whole
_secret_bytes: tuple[bytes, ...] = ()  # the same, UTF-8, for what is written to files
_pieces: tuple[_Pieces, ...] = ()  # for the secrets long enough to have pieces: str, then bytes
_piece_bytes: tuple[_Pieces, ...] = ()
_any_piece = b""  # the translate table of every such secret's bytes: one pass tells a clean text

SENSITIVE_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie"}
)


def register_secret(value: str | None) -> None:
    global _secrets, _secret_bytes, _pieces, _piece_bytes, _any_piece
    if not value or len(value) < _MIN_LEN:
        return
    with _lock:
        if value not in _secrets:
            _secrets = tuple(sorted((*_secrets, value), key=len, reverse=True))
            _secret_bytes = tuple(s.encode("utf-8") for s in _secrets)
            _pieces = tuple(_Pieces(s) for s in _secrets if len(s) >= PIECE)
            _piece_bytes = tuple(_Pieces(b) for b in _secret_bytes if len(b) >= PIECE)
            used = set(b"".join(p.secret for p in _piece_bytes))
            _any_piece = bytes(0x61 if c in used else 0x20 for c in range(256))
        # "Bearer <key>" is masked through the key itself; nothing else to add.


def registered() -> tuple[str, ...]:
    """The values registered as secrets so far."""
    return _secrets


def redact(text: str) -> str:
    for s in _secrets:
        if s in text:
            text = text.replace(s, MASK)
    if _pieces and any(_may_hold_a_piece(text[i:i + _CHUNK + PIECE - 1].encode("utf-8", "surrogatepass"))
                       for i in range(0, len(text), _CHUNK)):
        for finder in _pieces:
            text = _mask_pieces(text, finder, MASK)
    return text


def _may_hold_a_piece(data: bytes) -> bool:
    """False when `data` has no run of PIECE bytes of any secret's bytes (a piece of a str secret is
    such a run in the text's UTF-8 too): one translate and one search in C, ~3 µs a KB."""
    return any(chunk.translate(_any_piece).find(_RUN) >= 0 for _, chunk in _chunks(data))


def redact_value(value: Any) -> Any:
    """`redact` on every string inside JSON-like data (dicts, lists, tuples), for what is shown without
    being written first (an editor's hover, lens and diagnostics of a run)."""
    if not _secrets:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v) for v in value)
    return value


def clip(text: str, limit: int) -> str:
    """`text` masked, then cut to at most `limit` characters, for a preview in a message. Masking after
    the cut (where the message is written) would miss a key the cut went through, and leave its first
    characters in the file."""
    longest = len(_secrets[0]) if _secrets else 0
    return redact(text[:limit + longest])[:limit]


def redact_bytes(data: bytes) -> bytes:
    """`redact` for bytes about to be written: the journal, the cache, results files (appendlog.py,
    run/write/files.py), so a key a provider echoed in an answer, or one interpolated into an input, is
    masked wherever it would land."""
    for s in _secret_bytes:
        if s in data:
            data = data.replace(s, MASK_BYTES)
    if _piece_bytes and _may_hold_a_piece(data):
        for finder in _piece_bytes:
            data = _mask_pieces(data, finder, MASK_BYTES)
    return data


def is_sensitive_header(name: str) -> bool:
    n = name.lower()
    return n in SENSITIVE_HEADERS or "key" in n or "token" in n or "secret" in n or "auth" in n


class Secret:
    """A string that will not print itself. `reveal()` is the only way to the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value
        register_secret(value)

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)
