"""The located YAML tree's nodes (what source.py's parse gives) and the YAML 1.2 core schema of plain scalars.

A node keeps its source span; a mapping keeps every pair in order, duplicates included. `resolve_plain` is
the value of a plain scalar as the reference tools read it (`yes` stays a string). source.py re-exports all
of it: its readers import these from there.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from .findings import Span
from .jsonio import bounded_int


class Node:
    __slots__ = ("anchor", "span", "tag")

    def __init__(self, span: Span, tag: str | None, anchor: str | None) -> None:
        self.span = span
        self.tag = tag
        self.anchor = anchor


class Scalar(Node):
    """`value` is the YAML 1.2 core value (str, int, float, bool or None); `raw` the text."""

    __slots__ = ("raw", "style", "value")

    def __init__(self, span: Span, value: Any, raw: str, style: str | None, tag: str | None = None,
                 anchor: str | None = None) -> None:
        self.span = span  # assigned here rather than through Node.__init__: this runs per scalar
        self.tag = tag
        self.anchor = anchor
        self.value = value
        self.raw = raw
        self.style = style  # None for plain, or one of ' " | >

    @property
    def quoted(self) -> bool:
        return self.style in ("'", '"')

    def __repr__(self) -> str:
        return f"Scalar({self.value!r})"


class BrokenItem(Scalar):
    """A list item whose text did not parse: it holds its place (as null) so later items keep their
    index; its syntax error is already reported, so checkers pass over it."""

    __slots__ = ()


class Sequence(Node):
    __slots__ = ("flow", "items")

    def __init__(self, span: Span, items: list[Node], flow: bool, tag: str | None = None,
                 anchor: str | None = None) -> None:
        self.span = span  # not through Node.__init__: this runs per collection (millions in a deep file)
        self.tag = tag
        self.anchor = anchor
        self.items = items
        self.flow = flow

    def __repr__(self) -> str:
        return f"Sequence({self.items!r})"


class Mapping(Node):
    """Keeps every pair in order, duplicates included, so validation can report them."""

    __slots__ = ("flow", "pairs")

    def __init__(self, span: Span, pairs: list[tuple[Node, Node]], flow: bool, tag: str | None = None,
                 anchor: str | None = None) -> None:
        self.span = span  # as in Sequence
        self.tag = tag
        self.anchor = anchor
        self.pairs = pairs
        self.flow = flow

    def get(self, key: str) -> Node | None:
        for k, v in self.pairs:
            if isinstance(k, Scalar) and k.value == key and isinstance(k.value, str):
                return v
        return None

    def key_node(self, key: str) -> Scalar | None:
        for k, _ in self.pairs:
            if isinstance(k, Scalar) and k.value == key and isinstance(k.value, str):
                return k
        return None

    def has(self, key: str) -> bool:
        return self.key_node(key) is not None

    def items(self) -> Iterator[tuple[Scalar, Node]]:
        """String-keyed pairs (the only ones eval formats use)."""
        for k, v in self.pairs:
            if isinstance(k, Scalar):
                yield k, v

    def keys(self) -> list[str]:
        return [str(k.value) for k, _ in self.items()]

    def __repr__(self) -> str:
        return f"Mapping({[(k, v) for k, v in self.pairs]!r})"


# --- YAML 1.2 core schema -------------------------------------------------------------------------

_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(nan|NaN|NAN)\Z")
_MAYBE_NOT_STR = frozenset("0123456789-+.~nNtTfF")
_WORD_START = frozenset("nNtTfF")  # no number starts so (nor .inf, .nan)
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_TRUE = frozenset(("true", "True", "TRUE"))
_FALSE = frozenset(("false", "False", "FALSE"))


def resolve_plain(text: str) -> Any:
    """The value of a plain scalar under the YAML 1.2 core schema."""
    if not text:
        return None
    first = text[0]
    if first not in _MAYBE_NOT_STR:
        return text
    if first in _WORD_START:  # a word (`note`, `type`, `false`): only null, true or false are not text
        return None if text in _NULLS else True if text in _TRUE else False if text in _FALSE else text
    if text in _NULLS:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT.match(text):
        return bounded_int(text)
    if _FLOAT.match(text):
        return float(text)
    if _OCT.match(text):
        return bounded_int(text[2:], 8)
    if _HEX.match(text):
        return bounded_int(text[2:], 16)
    if _INF.match(text):
        return -math.inf if text[0] == "-" else math.inf
    if _NAN.match(text):
        return math.nan
    return text
