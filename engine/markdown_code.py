"""Markdown code that the text inside cannot close: the one rule for the editor's hovers
(ide/markdown_text.py) and the reports (report/markdown.py), both of which show untrusted text.

A code span's fence is one backtick longer than the longest run of backticks in the text; a space pads
the text when it starts or ends with a backtick (so the fence stays whole) or is blank (two fences side
by side would be one longer fence). A block's fence is at least three backticks and likewise longer than
any run inside. The text is expected with its control characters already made visible."""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")


def longest_backticks(text: str) -> int:
    return max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)


def code_span(text: str) -> str:
    fence = "`" * (longest_backticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, lang: str = "text") -> str:
    fence = "`" * max(3, longest_backticks(text) + 1)
    return f"{fence}{lang}\n{text}\n{fence}"
