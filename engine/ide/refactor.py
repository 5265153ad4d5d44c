"""Refactorings offered where the cursor (or selection) is, as minimal text edits.

- Weval: "Add an explicit id to this prompt" writes the id the prompt gets today (`hash-…`) as its
  first key, so results stay comparable when the prompt is edited later. Adding it does not change
  it: the hash is computed without the id.
- AgentV: "Convert test-level rubrics to an assert entry" turns the deprecated `rubrics:` of a test
  into a `type: rubrics` assertion, appended to the test's `assert` list (or a new one). The
  criteria's own lines are moved, re-indented, so their comments and formatting stay.
"""

from __future__ import annotations

from typing import Any

from ..detect import FileKind
from ..findings import Edit, Fix, Span
from ..source import Mapping, Node, Scalar, Sequence, to_python
from ..validation.yaml_text import entry_span, flow, quote
from .layout import layout
from .lines import indent_of

ADD_ID = "Add an explicit id to this prompt"
ADD_ALL_IDS = "Add explicit ids to all {n} prompts without one"
CONVERT_RUBRICS = "Convert test-level rubrics to an assert entry"


def refactorings(analysis: Any, span: Span) -> list[Fix]:
    """The refactorings that apply to the range `span` (a cursor is an empty span)."""
    if analysis.kind is FileKind.WEVAL:
        return _weval(analysis, span)
    if analysis.kind is FileKind.AGENTV:
        return _agentv(analysis, span)
    return []


def _touches(node_span: Span, span: Span) -> bool:
    """Whole lines: a cursor on a prompt's `- ` is on the prompt."""
    return span.start_line <= node_span.end_line and span.end_line >= node_span.start_line


# --- Weval: explicit prompt ids -----------------------------------------------------------------------

def _weval(analysis: Any, span: Span) -> list[Fix]:
    bp = analysis.blueprint
    if bp is None or analysis.weval is None:
        return []
    lines: list[str] = analysis.parsed.lines
    missing: list[tuple[Any, Node]] = analysis.memoised("ide.refactor.missing-ids", _missing_ids)
    out: list[Fix] = []
    here = [(p, n) for p, n in missing if _touches(n.span, span)]
    for p, n in here:
        edit = _id_edit(n, p.id, lines)
        if edit is not None:
            out.append(Fix(ADD_ID, (edit,)))
    if here and len(missing) > 1:
        # The same fix wherever the cursor is: made once per analysis (the editor asks at every cursor
        # move; 40,000 prompts took 0.1 s a request).
        out.append(analysis.memoised("ide.refactor.add-all-ids", _add_all_ids))
    return out


def _missing_ids(analysis: Any) -> list[tuple[Any, Node]]:
    """The prompts without an explicit id, with their nodes."""
    nodes = layout(analysis).prompt_nodes
    return [(p, n) for p, n in zip(analysis.blueprint.prompts, nodes, strict=False)
            if p.id_generated and p.span == n.span]


def _add_all_ids(analysis: Any) -> Fix:
    lines: list[str] = analysis.parsed.lines
    missing: list[tuple[Any, Node]] = analysis.memoised("ide.refactor.missing-ids", _missing_ids)
    edits = tuple(e for e in (_id_edit(n, p.id, lines) for p, n in missing) if e is not None)
    return Fix(ADD_ALL_IDS.format(n=len(edits)), edits, preferred=False)


def _id_edit(node: Node, prompt_id: str, lines: list[str]) -> Edit | None:
    """Insert `id: …` before the prompt's first key, at that key's indentation."""
    if not isinstance(node, Mapping):
        return None
    if node.flow:
        s = node.span
        sep = ", " if node.pairs else ""
        return Edit(Span.point(s.start_line, s.start_col + 1), f"id: {prompt_id}{sep}")
    if not node.pairs:
        return None
    first = node.pairs[0][0].span
    return Edit(Span.point(first.start_line, first.start_col), f"id: {prompt_id}\n{' ' * first.start_col}")


# --- AgentV: test-level rubrics → an assert entry -----------------------------------------------------

def _agentv(analysis: Any, span: Span) -> list[Fix]:
    docs = analysis.parsed.documents
    root = docs[0].root if docs else None
    if not isinstance(root, Mapping):
        return []
    tests = root.get("tests") or root.get("eval_cases") or root.get("evalcases")
    if not isinstance(tests, Sequence):
        return []
    lines: list[str] = analysis.parsed.lines
    out: list[Fix] = []
    for test in tests.items:
        if not isinstance(test, Mapping) or test.flow or not _touches(test.span, span):
            continue
        key = test.key_node("rubrics")
        value = test.get("rubrics")
        if key is None or value is None:
            continue
        edits = _convert_rubrics(test, key, value, lines)
        if edits:
            out.append(Fix(CONVERT_RUBRICS, tuple(edits)))
    return out


def _convert_rubrics(test: Mapping, key: Scalar, value: Node, lines: list[str]) -> list[Edit] | None:
    assert_key, assert_node = None, None
    for name in ("assert", "evaluators"):  # AgentV's precedence: assert, then the deprecated evaluators
        if test.key_node(name) is not None:
            assert_key, assert_node = test.key_node(name), test.get(name)
            break
    col = key.span.start_col
    if assert_key is None:
        # Replace `rubrics:` and its value with a new `assert:` list holding the entry.
        body = _criteria_text(value, key, lines, col + 4)
        if body is None:
            return None
        end = _end_of(value, lines)
        text = f"assert:\n{' ' * (col + 2)}- type: rubrics\n{' ' * (col + 4)}criteria:{body}"
        return [Edit(Span(key.span.start_line, key.span.start_col, end[0], end[1]), text)]
    removal = Edit(entry_span(key, value, lines), "")
    if isinstance(assert_node, Sequence) and assert_node.flow:
        criteria = _flow(to_python(value)) if value is not None else "[]"
        entry = f"{{type: rubrics, criteria: {criteria}}}"
        close = assert_node.span
        sep = ", " if assert_node.items else ""
        return [Edit(Span.point(close.end_line, close.end_col - 1), sep + entry), removal]
    if isinstance(assert_node, Sequence) and assert_node.items:
        item_col = _dash_col(assert_node, lines)
        body = _criteria_text(value, key, lines, item_col + 2)
        if body is None:
            return None
        last_line = _end_of(assert_node, lines)
        text = f"\n{' ' * item_col}- type: rubrics\n{' ' * (item_col + 2)}criteria:{body}"
        return [Edit(Span.point(*last_line), text), removal]
    # `assert:` with nothing (or null): the entry becomes its list.
    a_col = assert_key.span.start_col
    body = _criteria_text(value, key, lines, a_col + 4)
    if body is None:
        return None
    start = (assert_key.span.start_line, assert_key.span.end_col)
    end = _end_of(assert_node, lines) if assert_node is not None and assert_node.span.end_line >= start[0] \
        else start
    if end < start:
        end = start
    text = f":\n{' ' * (a_col + 2)}- type: rubrics\n{' ' * (a_col + 4)}criteria:{body}"
    colon = lines[start[0]].find(":", start[1])
    return [Edit(Span(start[0], colon if colon >= 0 else start[1], end[0], end[1]), text), removal]


def _criteria_text(value: Node, key: Scalar, lines: list[str], criteria_col: int) -> str | None:
    """The criteria after `criteria:`: the rubric's own lines moved under it, or its flow text."""
    if isinstance(value, Sequence) and not value.flow and value.items:
        first = key.span.start_line + 1
        last = value.span.end_line
        item_col = _dash_col(value, lines)
        shift = criteria_col + 2 - item_col
        return "\n" + "\n".join(_shift(lines[i], shift) for i in range(first, last + 1))
    if value.span.start_line == value.span.end_line:
        line = lines[value.span.start_line]
        return " " + line[value.span.start_col:value.span.end_col]
    return " " + _flow(to_python(value))


def _flow(value: Any) -> str:
    """A value as flow YAML, strings plain where they can be (`[One, Two]`, not `["One", "Two"]`)."""
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote(str(k))}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return quote(value)
    return flow(value)


def _shift(line: str, by: int) -> str:
    if not line.strip():
        return ""
    if by >= 0:
        return " " * by + line
    return line[min(-by, indent_of(line)):]


def _dash_col(seq: Sequence, lines: list[str]) -> int:
    """The column of a block list's `- ` markers (the node starts at its first one)."""
    first = seq.items[0].span if seq.items else seq.span
    line = lines[first.start_line]
    dash = line.rfind("-", 0, first.start_col + 1 if first.start_col < len(line) and line[first.start_col] == "-"
                      else first.start_col)
    return dash if dash >= 0 else seq.span.start_col


def _end_of(node: Node, lines: list[str]) -> tuple[int, int]:
    """Where a value's text ends, trailing comments on its last line included."""
    line = node.span.end_line
    return line, len(lines[line].rstrip("\r"))
