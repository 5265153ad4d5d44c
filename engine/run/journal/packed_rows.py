"""Result rows the run database keeps deflated: an AgentV results row in `scores.result` and `not_run.row`.

A row is stored either as its JSON text (a TEXT value) or packed (a BLOB): `PACKED` then the raw deflate
of its JSON bytes against the run's dictionary, the `exports` row named `DICTIONARY`, which is the first
row without an error the run stored (rows stored before it stay JSON text). The rows of one suite share
their keys, their assertions' names and most of their messages, so a 1.2 KB row packs into ~80 bytes:
as JSON the database held as many bytes as the results file, written twice with WAL (the log, then the
checkpoint). `unpacker(dictionary)` turns either form back into the JSON bytes stored, the bytes the
results file has.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

PACKED = b"\x01"  # a packed row's first byte (JSON text never starts with it)
DICTIONARY = "rows"  # the `exports` row holding the dictionary
_WINDOW = -15  # raw deflate, 32 KB window: the dictionary's last 32 KB are what counts
# deflate's fast level: a row is ~20 k instructions less to pack than at 6 (the lazy matching's), for ~13
# bytes more (83 against 70 for the bench's row); any level reads back the same (rows of earlier runs too)
_LEVEL, _MEMORY = 1, 8


def pack(data: bytes, dictionary: bytes) -> bytes:
    """`data` (a row's JSON bytes) packed against `dictionary`."""
    out = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WINDOW, _MEMORY, zlib.Z_DEFAULT_STRATEGY, dictionary)
    return PACKED + out.compress(data) + out.flush()


def unpacker(dictionary: bytes | None) -> Callable[[str | bytes], bytes]:
    """What reads a stored row back as its JSON bytes (ValueError: a packed row whose dictionary the
    database lost, or damaged)."""

    def unpack(stored: str | bytes) -> bytes:
        if isinstance(stored, str):
            return stored.encode("utf-8", "surrogatepass")
        if stored[:1] != PACKED:
            return bytes(stored)
        if dictionary is None:
            raise ValueError("a packed results row, and the run database has no dictionary for it")
        try:
            out = zlib.decompressobj(_WINDOW, zdict=dictionary)
            data = out.decompress(stored[1:]) + out.flush()
        except zlib.error as exc:
            raise ValueError(f"a packed results row cannot be read ({exc})") from None
        if not out.eof:
            raise ValueError("a packed results row was cut short")
        return data

    return unpack
