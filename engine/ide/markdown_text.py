"""Untrusted text (a model's answer, a judge's reason, a provider's error, a name from someone else's eval
file) made safe to put in what the editor shows.

Hovers are Markdown, and editors render it: `![](https://host/x.png)` is fetched as the hover opens (a
beacon telling a stranger who looked, and when), `[approve](command:…)` is a command link, raw HTML
(`<img>`) is rendered by some clients, and a backtick in an id closes the code span around it. Lens
titles and diagnostics are plain text, but bidi overrides (U+202E) reverse them and ANSI or OSC 8
sequences show as garbage or links in terminal editors. So:

- `md_text(s)`: one line (newlines shown as `\\n`, so no block can start), control and bidi characters as
  visible escapes (`terminal_text.shown`), and what could start a link, an image, HTML or a code span
  escaped: the `(` after a `]`, `<`, backticks and backslashes (so the text cannot undo an escape).
  Emphasis only styles the text and is left alone, so names like `gpt_4` read as written.
- `md_code(s)`: a code span whose backtick fence is longer than any run of backticks inside, so the text
  cannot close it; control characters visible.
- `md_fence(s, lang)`: a fenced block the text cannot close (a longer fence), control characters visible
  but newlines kept.
- `plain(s)`: control and bidi characters visible, for lens titles and diagnostics.
"""

from __future__ import annotations

import re

from ..markdown_code import code_block, code_span
from ..terminal_text import shown

_ACTIVE = re.compile(r"([\\`<]|(?<=\])\()")


def plain(text: str) -> str:
    return shown(text, newlines=True)


def md_text(text: str) -> str:
    return _ACTIVE.sub(r"\\\1", shown(text))


def md_code(text: str) -> str:
    return code_span(shown(text))


def md_fence(text: str, lang: str = "text") -> str:
    return code_block(shown(text, newlines=True), lang)
