"""Documents whose lines break where LSP says they do.

pygls applies incremental edits on `TextDocument.lines`, which it builds with `str.splitlines`; that
also breaks lines at form feeds, `\\x1c`–`\\x1e`, `\\x85`, `\\u2028` and `\\u2029`. LSP (and the engine)
break lines only at `\\n`, `\\r\\n` and `\\r`, so in a file holding one of those characters an edit below it
would land on the wrong line. This class counts lines the LSP way; `install()` makes pygls's workspace
create it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pygls.workspace import TextDocument, Workspace

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def split_lines(source: str) -> tuple[str, ...]:
    """`source` as lines, each with its line ending, split at `\\n`, `\\r\\n` and `\\r` only."""
    return tuple(_LINE.findall(source))


class LspTextDocument(TextDocument):
    @property
    def lines(self) -> Sequence[str]:
        return split_lines(self.source)


def install() -> None:
    """Make every workspace create `LspTextDocument`s (pygls has no setting for the class)."""
    if getattr(Workspace, "_evalspec_documents", False):
        return

    def create(self: Workspace, doc_uri: str, source: str | None = None, version: int | None = None,
               language_id: str | None = None) -> TextDocument:
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=self._sync_kind, position_codec=self._position_codec)

    Workspace._create_text_document = create  # type: ignore[method-assign]
    Workspace._evalspec_documents = True  # type: ignore[attr-defined]


__all__: Any = ["LspTextDocument", "install", "split_lines"]
