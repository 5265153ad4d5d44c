"""Text from eval files, models and providers made safe to print on a terminal.

A key, an id, a path, a model's answer or a provider's error body may hold control characters. Printed
raw, `ESC ] 52` writes the clipboard (several terminals), `ESC ] 0` sets the window title, `ESC [ 8 m`
hides what follows, `CR` and `ESC [ K` overwrite a finding's line (a fake "0 errors"), and bidi
overrides (U+202E) show text reversed. `shown` writes every such character as a visible escape
(`\\x1b`, `\\u202e`); `SafeStream` does it for everything the CLI prints, letting through only the
styling evalspec itself uses (a few SGR colours and the progress line's erase), and masks every secret
registered by then (`providers/redact.py`: an API key, a variable named like a secret that a file
interpolated): an error message naming a path, a target or a folder built from `${{ OPENAI_API_KEY }}`
printed the key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from .providers.redact import redact

# C0 (but tab and newline), DEL, C1, the bidi embeddings, overrides and isolates, the directional marks
# (with U+061C, the Arabic letter mark: Unicode's Bidi_Control set is U+061C, U+200E-F, U+202A-E,
# U+2066-9), and the line and paragraph separators (some terminals break lines on them).
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
_CONTROL = re.compile(f"[{_UNSAFE}]")
_CONTROL_OR_NEWLINE = re.compile(f"[\n{_UNSAFE}]")
# What evalspec's own output uses (terminal.py's colours, render.py's progress line), whole sequences only.
_OURS = re.compile(r"(\r\x1b\[K|\x1b\[K|\x1b\[(?:0|1|2|1;3[1-6])m)|" + f"[{_UNSAFE}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\x1b": "\\x1b"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    if len(ch) > 1:
        return ch
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    # `\u` from DEL on: JSON printed through SafeStream (`check --format json`, `run --json`) holds C1
    # characters and bidi controls raw, and `\u009b` is still JSON where `\x9b` would not be. C0 never
    # reaches here inside JSON (the encoder escapes it), so its shorter form is safe.
    return f"\\x{code:02x}" if code < 0x7F else f"\\u{code:04x}"


def shown(text: str, *, newlines: bool = False) -> str:
    """`text` with every control character written as a visible escape; newlines too unless `newlines`."""
    pattern = _CONTROL if newlines else _CONTROL_OR_NEWLINE
    return pattern.sub(_escape, text) if pattern.search(text) else text


def _ours_or_escaped(match: re.Match[str]) -> str:
    return match.group(1) or _escape(match)


class SafeStream:
    """A text stream that escapes control characters in everything written to it, except evalspec's own
    styling sequences (whole). Other attributes are the wrapped stream's."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self.failed: OSError | None = None  # the write error, for the CLI to tell it from other OSErrors

    def write(self, text: str) -> int:
        text = redact(text)
        try:
            return self.inner.write(_OURS.sub(_ours_or_escaped, text) if _OURS.search(text) else text)
        except OSError as exc:
            self.failed = exc
            raise

    def flush(self) -> None:
        try:
            self.inner.flush()
        except OSError as exc:
            self.failed = exc
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextmanager
def safe_streams() -> Iterator[None]:
    """sys.stdout and sys.stderr wrapped in SafeStream for the duration (the CLI's whole command)."""
    import sys

    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
