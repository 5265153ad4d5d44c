"""One batch's requests, encoded and framed as its API sends them, in an unlinked temporary file.

The batch stage encodes each request as it comes and appends it here, and the upload or the creation
streams the file (`chunks()`, or `file()` for a multipart form) with its length known, so memory holds
one request and one chunk, not the batch.

The framing is the API's: a JSONL file (OpenAI, Gemini: every encoded request ends its own line) or
Anthropic's creation body (`{"requests":[` … `,` … `]}`). The file is unlinked from the start, so a
killed run leaves nothing behind; `close()` frees it.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

CHUNK = 1 << 20  # bytes read at a time while the body streams out


@dataclass(frozen=True, slots=True)
class Framing:
    head: bytes = b""
    separator: bytes = b""
    tail: bytes = b""


LINES = Framing()  # JSONL: the encoded requests one after the other


class PartFile:
    def __init__(self, framing: Framing = LINES) -> None:
        self.framing = framing
        self._file: BinaryIO = tempfile.TemporaryFile(prefix="evalspec-batch-")  # noqa: SIM115 (closed by close())
        self._file.write(framing.head)
        self.count = 0  # requests added
        self.length = len(framing.head)  # bytes of the body so far
        self._finished = False

    def add(self, encoded: bytes) -> None:
        if self._finished:
            raise ValueError("a finished batch file takes no more requests")
        if self.count:
            self._file.write(self.framing.separator)
            self.length += len(self.framing.separator)
        self._file.write(encoded)
        self.length += len(encoded)
        self.count += 1

    def finish(self) -> PartFile:
        """Closes the framing and writes the buffered bytes out: the body is whole on disk (once)."""
        if not self._finished:
            self._file.write(self.framing.tail)
            self.length += len(self.framing.tail)
            self._file.flush()
            self._finished = True
        return self

    def file(self) -> BinaryIO:
        """The body as a file at its start (httpx reads a multipart file field from it, by chunks)."""
        self.finish()
        self._file.seek(0)
        return self._file

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body, CHUNK bytes at a time: a request's streamed content (each send reads it again)."""
        f = self.file()
        while chunk := f.read(CHUNK):
            yield chunk

    def read(self) -> bytes:
        """The whole body (for tests and small checks)."""
        return self.file().read()

    def close(self) -> None:
        self._file.close()

    @classmethod
    def of(cls, encoded: Iterable[bytes], framing: Framing = LINES) -> PartFile:
        part = cls(framing)
        for item in encoded:
            part.add(item)
        return part.finish()


@contextlib.contextmanager
def part_file(requests: PartFile | Iterable[bytes], framing: Framing) -> Iterator[PartFile]:
    """`requests` as a finished PartFile: itself (the stage's, which the stage closes), or a new one
    holding a sequence of encoded requests, closed on leaving."""
    if isinstance(requests, PartFile):
        yield requests.finish()
        return
    part = PartFile.of(requests, framing)
    try:
        yield part
    finally:
        part.close()
