"""Reading a large JSON document a value at a time, in bounded memory.

`JsonReader` pulls keys and values out of a file while it reads it, so a 100,000-prompt comparison file
(over 100 MB, about 1.5 GB as one parsed object) becomes its entries one after another. Each value is
decoded by the standard library's scanner (`JSONDecoder.raw_decode`, C code) from a text buffer that
is refilled from the file as needed: memory is one read chunk plus the largest single value read.

    reader = JsonReader(f)
    for key in reader.entries():          # the top-level object's keys, in file order
        if key == "big":
            for k in reader.entries():    # an object inside, entry by entry
                use(k, reader.value())
        else:
            small[key] = reader.value()   # every key's value must be read (or skipped) before the next

What it accepts is what `jsonio.loads` accepts (orjson, else the standard parser): the same values.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import IO, Any

_WS = re.compile(r"[ \t\n\r]*")
_CHUNK = 1 << 20


class JsonReader:
    def __init__(self, f: IO[bytes], chunk: int = _CHUNK) -> None:
        self._f = f
        self._chunk = chunk
        self._decode = codecs.getincrementaldecoder("utf-8")("strict").decode
        self._scan = json.JSONDecoder().raw_decode
        self._buf = ""
        self._pos = 0
        self._eof = False

    def _more(self, at_least: int = 0) -> bool:
        """Read on (at least `at_least` bytes when given); False at the end of the file."""
        if self._eof:
            return False
        data = self._f.read(max(self._chunk, at_least))
        if not data:
            self._eof = True
        self._buf = self._buf[self._pos:] + self._decode(data, final=not data)
        self._pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ('' at the end)."""
        while True:
            self._pos = _WS.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._more():
                return ""

    def _expect(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise ValueError(f"expected {char!r}, found {found or 'the end of the file'!r}")
        self._pos += 1

    def value(self) -> Any:
        """The next whole value."""
        self.peek()
        while True:
            try:
                value, end = self._scan(self._buf, self._pos)
            except json.JSONDecodeError:
                if self._eof:
                    raise
                self._more(2 * (len(self._buf) - self._pos))  # cut short by the buffer: read as much again
                continue
            # A number at the end of the buffer may go on in the next chunk ("12" of "125", "1" of "1.5").
            if not self._eof and type(value) in (int, float) and len(self._buf) - end <= 2:
                self._more()
                continue
            self._pos = end
            return value

    def entries(self) -> Iterator[str]:
        """The keys of the object that comes next; read (or skip) each key's value before the next key."""
        self._expect("{")
        if self.peek() == "}":
            self._pos += 1
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                raise ValueError("an object key must be a string")
            self._expect(":")
            yield key
            found = self.peek()
            self._pos += 1
            if found == "}":
                return
            if found != ",":
                raise ValueError(f"expected ',' or '}}' after a value, found {found or 'the end of the file'!r}")

    def elements(self) -> Iterator[None]:
        """Once per element of the array that comes next; read (or skip) each element before the next."""
        self._expect("[")
        if self.peek() == "]":
            self._pos += 1
            return
        while True:
            yield None
            found = self.peek()
            self._pos += 1
            if found == "]":
                return
            if found != ",":
                raise ValueError(f"expected ',' or ']' after a value, found {found or 'the end of the file'!r}")

    def end(self) -> None:
        """Nothing but white space may follow the document."""
        if self.peek():
            raise ValueError("extra data after the JSON document")
