"""Semantic tokens: which points a run scores by itself, which need an LLM judge, what is inverted, what is
a named reference — told apart at a glance.

`semantic_tokens(analysis)` returns `Token`s (line, column and length in code points, a type from
TOKEN_TYPES, modifiers from TOKEN_MODIFIERS) in text order, for Weval blueprints:

- a function point's `$name` key: `function` (+ `deterministic` when scored without a model: everything
  but `$call`, which calls a service, and `$js`, which runs code: `defaultLibrary` only);
- a judged point (rubric text, a `text:` value): `string` + `judged`;
- `$ref: name` values and `point_defs` names: `variable` (+ `declaration` for the definition), with
  `judged` or `deterministic` after what the definition is;
- the `should_not` key: `keyword` + `negated`, and every point under it carries `negated`.

A multi-line text is one token per line (LSP tokens do not span lines). Plain data; the server encodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..detect import FileKind
from ..registry.weval import PROMPT
from ..registry.weval_functions import resolve_function
from ..source import Mapping, Node, Scalar, Sequence
from .token_legend import TOKEN_MODIFIERS, TOKEN_TYPES

FUNCTION, STRING, VARIABLE, KEYWORD = TOKEN_TYPES
DETERMINISTIC, JUDGED, NEGATED, DECLARATION, LIBRARY = TOKEN_MODIFIERS


@dataclass(frozen=True, slots=True)
class Token:
    line: int
    col: int
    length: int
    type: str
    modifiers: tuple[str, ...] = ()


def semantic_tokens(analysis: Any) -> list[Token]:
    if analysis.kind is not FileKind.WEVAL or analysis.parsed.too_large or analysis.weval is None:
        return []
    out: list[Token] = []
    lines: list[str] = analysis.parsed.lines
    defs = _point_defs(analysis)
    kinds = {name: _def_kind(value) for name, value in (analysis.blueprint.point_defs.items()
                                                       if analysis.blueprint is not None else ())}
    if defs is not None:
        for key, _ in defs.pairs:
            if isinstance(key, Scalar) and isinstance(key.value, str):
                _add(out, lines, key, VARIABLE, (DECLARATION, *kinds.get(key.value, ())))
    for node in analysis.weval.prompt_nodes:
        if isinstance(node, Mapping):
            _prompt(out, lines, node, kinds)
    out.sort(key=lambda t: (t.line, t.col))
    return out


def _def_kind(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return ()  # JavaScript, as $js
    if isinstance(value, dict):
        fn_keys = [k for k in value if isinstance(k, str) and k.startswith("$")]
        if fn_keys:
            fn = resolve_function(fn_keys[0][1:])
            return (DETERMINISTIC,) if fn is not None and fn.stage.deterministic else ()
        if "text" in value or "point" in value:
            return (JUDGED,)
    return ()


def _prompt(out: list[Token], lines: list[str], node: Mapping, kinds: dict[str, tuple[str, ...]]) -> None:
    for key, value in node.pairs:
        if not isinstance(key, Scalar) or not isinstance(key.value, str):
            continue
        hit = PROMPT.lookup(key.value)
        if hit is None or hit[0].name not in ("should", "should_not"):
            continue
        negated = hit[0].name == "should_not"
        if negated:
            _add(out, lines, key, KEYWORD, (NEGATED,))
        if isinstance(value, Sequence):
            extra = (NEGATED,) if negated else ()
            for item in value.items:
                if isinstance(item, Sequence):  # an alternative path
                    for member in item.items:
                        _point(out, lines, member, extra, kinds)
                else:
                    _point(out, lines, item, extra, kinds)


def _point(out: list[Token], lines: list[str], node: Node, extra: tuple[str, ...],
           kinds: dict[str, tuple[str, ...]]) -> None:
    if isinstance(node, Scalar):
        if isinstance(node.value, str) and not node.value.startswith("$"):
            _add(out, lines, node, STRING, (JUDGED, *extra))
        return
    if not isinstance(node, Mapping):
        return
    for key, value in node.pairs:
        if not isinstance(key, Scalar) or not isinstance(key.value, str):
            continue
        name = key.value
        if name == "$ref":
            if isinstance(value, Scalar) and isinstance(value.value, str):
                _add(out, lines, value, VARIABLE, (*kinds.get(value.value, ()), *extra))
        elif name.startswith("$"):
            fn = resolve_function(name[1:])
            if fn is not None:
                how = (DETERMINISTIC,) if fn.stage.deterministic else (LIBRARY,)  # $js, $call: not pure functions
                _add(out, lines, key, FUNCTION, (*how, *extra))
        elif name in ("text", "point") and isinstance(value, Scalar) and isinstance(value.value, str):
            _add(out, lines, value, STRING, (JUDGED, *extra))


def _add(out: list[Token], lines: list[str], node: Node, kind: str, modifiers: tuple[str, ...]) -> None:
    s = node.span
    if s.start_line == s.end_line:
        if s.end_col > s.start_col:
            out.append(Token(s.start_line, s.start_col, s.end_col - s.start_col, kind, modifiers))
        return
    first = s.start_line + 1 if getattr(node, "style", None) in ("|", ">") else s.start_line  # not the `|`
    for line in range(first, min(s.end_line, len(lines) - 1) + 1):
        text = lines[line].rstrip("\r")
        start = s.start_col if line == s.start_line else len(text) - len(text.lstrip(" \t"))
        end = s.end_col if line == s.end_line else len(text)
        if end > start:
            out.append(Token(line, start, end - start, kind, modifiers))


def _point_defs(analysis: Any) -> Mapping | None:
    header = analysis.weval.header_node
    if not isinstance(header, Mapping):
        return None
    defs = header.get("point_defs") or header.get("defs")
    return defs if isinstance(defs, Mapping) else None
