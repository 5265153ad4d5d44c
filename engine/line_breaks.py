"""Line breaks as the engine reads an eval file: "\\n", "\\r\\n", and a bare "\\r" (one not followed by
"\\n"), as YAML, LSP and editors all break lines.

The engine's spans count lines at "\\n". A text is read with each bare CR as "\\n" (`as_read`): one
character for one, so every offset stays put, YAML reads both as the same line break, and the lines of
a finding, of a fingerprint's source and of the editor's cursor are the same ones in `check`, `run` and
the language server. Without it, a file saved with CR line ends (a classic Mac editor; Neovim's
`fileformat=mac`) is one "line" of the engine's: `check` put every finding on line 1, and anything that
rebuilt a line's indentation from a column (adding prompt ids) copied a whole file's worth of spaces.

Not JSON Lines or CSV: there a CR inside a record does not end the record, so they are read as they are
(the server converts their positions, ide/bare_cr.py).
"""

from __future__ import annotations

import re
from pathlib import PurePath

from .detect import DATASET_SUFFIXES

BARE_CR = re.compile(r"\r(?!\n)")


def reads_bare_crs(path: str | PurePath | None) -> bool:
    """Are bare CRs line breaks in the file at `path` (not a JSON Lines or CSV dataset)?"""
    return path is None or PurePath(path).suffix.lower() not in DATASET_SUFFIXES


def as_read(text: str, path: str | PurePath | None) -> str:
    """`text` with each bare CR read as "\\n" (a dataset's as it is). The same string when it holds no
    CR: one scan in C; a CRLF file costs one regex search and no copy."""
    if "\r" not in text or not reads_bare_crs(path) or BARE_CR.search(text) is None:
        return text
    return BARE_CR.sub("\n", text)
