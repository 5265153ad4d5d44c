"""The outline of an eval file (document symbols) and where it folds.

Weval: the header, then each prompt by id and first words, with its `should` / `should_not` points
inside. AgentV: the suite, its default assertions, and each test by id with its assertions inside.
Built from the located tree (and the normalized blueprint for Weval), so a document that does not
parse yet simply has no symbols until it does; folding still follows its indentation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..detect import FileKind
from ..findings import Span
from ..source import BrokenItem, Mapping, Node, Scalar, Sequence, to_python
from ..validation.yaml_text import flow
from .layout import layout
from .lines import indent_of, is_blank


@dataclass(slots=True)
class Symbol:
    name: str
    detail: str
    kind: str  # an LSP SymbolKind name, lowercase: "module", "object", "function", "string", "array"…
    span: Span  # the whole thing
    selection_span: Span  # its name (inside `span`)
    children: list[Symbol] = field(default_factory=list)


def document_symbols(analysis: Any) -> list[Symbol]:
    if analysis.kind is FileKind.WEVAL:
        return _weval(analysis)
    if analysis.kind is FileKind.AGENTV:
        return _agentv(analysis)
    return []


def _short(text: str, n: int = 60) -> str:
    """`text` with its whitespace collapsed, cut to `n` characters. Only the words shown are split off:
    `" ".join(text.split())` of a 4 MB prompt was 65 ms in one C call holding the interpreter lock, three
    times per outline, and a hover on another document waited for them (0.5-1 s at load 17)."""
    enough = n // 2 + 2  # words of one character each, with a space between: more than n characters
    words = text.split(None, enough)[:enough]  # the rest of the text stays in one piece, unsplit
    short = " ".join(w[:n + 1] for w in words)
    return short if len(short) <= n else short[: n - 1] + "…"


# --- Weval ------------------------------------------------------------------------------------------

def _weval(analysis: Any) -> list[Symbol]:
    result = analysis.weval
    bp = analysis.blueprint
    if result is None or bp is None:
        return []
    out: list[Symbol] = []
    header = result.header_node
    if isinstance(header, Mapping) and header.pairs:
        pairs = [(k, v) for k, v in header.pairs if not (isinstance(k, Scalar) and k.value == "prompts")] or header.pairs
        first, last = pairs[0][0].span, pairs[-1][1].span
        span = Span(first.start_line, first.start_col, last.end_line, last.end_col)
        title_key = header.key_node("title") or header.key_node("configTitle")
        sel = title_key.span if title_key is not None else first
        n = len(bp.models)
        detail = f"header · {n} model{'s' if n != 1 else ''}" if n else "header"
        out.append(Symbol(bp.title, detail, "module", span, sel))
    for prompt, node in zip(bp.prompts, result.prompt_nodes, strict=False):
        sel = prompt.id_span or _first_key_span(node)
        children = [_point_symbol(p, "should") for p in prompt.should]
        children += [_point_symbol(p, "should_not") for p in prompt.should_not]
        name = prompt.id if not prompt.id_generated else f"{prompt.id} (generated)"
        out.append(Symbol(name, _short(prompt.first_words), "object", node.span, _inside(sel, node.span), children))
    return out


def _point_symbol(p: Any, where: str) -> Symbol:
    if p.kind == "fn":
        name = f"${p.fn_written or p.fn}" + (f": {_short(flow(p.fn_args), 40)}" if p.fn_args is not None else "")
        kind = "function"
    else:
        name = _short(p.text or "", 60)
        kind = "string"
    detail = where + (f" · {p.path_id}" if p.path_id else "") + (f" · ×{p.weight:g}" if p.weight != 1 else "")
    return Symbol(name, detail, kind, p.span, p.span)


def _first_key_span(node: Node) -> Span:
    if isinstance(node, Mapping) and node.pairs:
        return node.pairs[0][0].span
    s = node.span
    return Span(s.start_line, s.start_col, s.start_line, s.start_col)


def _inside(sel: Span, span: Span) -> Span:
    """LSP wants the selection inside the range; an id from elsewhere falls back to the range start."""
    if span.contains(sel.start_line, sel.start_col) and span.contains(sel.end_line, sel.end_col):
        return sel
    return Span(span.start_line, span.start_col, span.start_line, span.start_col)


# --- AgentV -----------------------------------------------------------------------------------------

def _agentv(analysis: Any) -> list[Symbol]:
    docs = analysis.parsed.documents
    root = docs[0].root if docs else None
    if not isinstance(root, Mapping):
        return []
    name_node = root.get("name")
    name = str(name_node.value) if isinstance(name_node, Scalar) and name_node.value else (
        analysis.path.name if analysis.path is not None else "eval file")
    desc = root.get("description")
    sel = name_key.span if (name_key := root.key_node("name")) is not None else _first_key_span(root)
    children: list[Symbol] = []
    for key in ("assert", "evaluators"):
        node = root.get(key)
        if isinstance(node, Sequence):
            k = root.key_node(key)
            span = Span(k.span.start_line, k.span.start_col, node.span.end_line, node.span.end_col)  # type: ignore[union-attr]
            children.append(Symbol(f"{key} (defaults)", f"{len(node.items)} assertions", "array", span,
                                   k.span, _assertions(node)))  # type: ignore[union-attr]
    tests = root.get("tests") or root.get("eval_cases") or root.get("evalcases")
    if isinstance(tests, Sequence):
        for i, item in enumerate(tests.items):
            children.append(_test_symbol(item, i))
    elif isinstance(tests, Scalar):
        children.append(Symbol(f"tests: {tests.value}", "external tests file", "file", tests.span, tests.span))
    detail = _short(str(desc.value)) if isinstance(desc, Scalar) and desc.value else "eval file"
    return [Symbol(name, detail, "module", root.span, sel, children)]


def _test_symbol(item: Node, index: int) -> Symbol:
    if not isinstance(item, Mapping):
        text = str(item.value) if isinstance(item, Scalar) else f"test {index + 1}"
        return Symbol(text, "file reference" if text.startswith("file://") else "", "file", item.span, item.span)
    id_node = item.get("id")
    name = str(id_node.value) if isinstance(id_node, Scalar) and id_node.value is not None else f"(test {index + 1})"
    sel = id_node.span if id_node is not None else _first_key_span(item)
    crit = item.get("criteria") or item.get("expected_outcome") or item.get("outcome")
    inp = item.get("input") if item.get("input") is not None else item.get("input_messages")
    detail = _short(str(crit.value)) if isinstance(crit, Scalar) and crit.value else (
        _short(str(inp.value)) if isinstance(inp, Scalar) and inp.value else "")
    children: list[Symbol] = []
    for key in ("assert", "evaluators"):
        node = item.get(key)
        if isinstance(node, Sequence):
            children += _assertions(node)
            break
    rubrics = item.get("rubrics")
    if isinstance(rubrics, Sequence):
        k = item.key_node("rubrics")
        span = Span(k.span.start_line, k.span.start_col, rubrics.span.end_line, rubrics.span.end_col)  # type: ignore[union-attr]
        children.append(Symbol("rubrics", f"{len(rubrics.items)} criteria (deprecated form)", "array", span,
                               k.span))  # type: ignore[union-attr]
    return Symbol(name, detail, "object", item.span, _inside(sel, item.span), children)


def _assertions(seq: Sequence) -> list[Symbol]:
    out: list[Symbol] = []
    for a in seq.items:
        if not isinstance(a, Mapping):
            continue
        t = a.get("type")
        n = a.get("name")
        # An empty `type:` is a null scalar: named for what it is, never Python's "None"
        type_text = str(t.value) if isinstance(t, Scalar) and t.value not in (None, "") else "(no type)"
        name = str(n.value) if isinstance(n, Scalar) and n.value else type_text
        detail = type_text if name != type_text else _assertion_detail(a)
        sel = (t or n or a).span if isinstance(t or n, Scalar) else _first_key_span(a)
        children: list[Symbol] = []
        inner = a.get("assert") or a.get("evaluators")
        if isinstance(inner, Sequence):
            children = _assertions(inner)
        out.append(Symbol(name, detail, "function", a.span, _inside(sel, a.span), children))
    return out


def _assertion_detail(a: Mapping) -> str:
    v = a.get("value")
    if v is None:
        return ""
    return _short(flow(to_python(v)), 40)


# --- folding ----------------------------------------------------------------------------------------

def folding_ranges(analysis: Any) -> list[tuple[int, int]]:
    """(first line, last line) of everything that folds: multi-line mappings, lists, block scalars,
    and whole documents. Documents that do not parse fold by indentation."""
    lines: list[str] = analysis.parsed.lines
    lay = layout(analysis)
    out: set[tuple[int, int]] = set()
    for i in range(len(lay.doc_starts)):
        start, end = lay.doc_range(i, len(lines))
        first, last = _content_bounds(lines, start, end)
        if first is not None and last is not None and last > first:
            out.add((first, last))
        doc = lay.tree_docs.get(i)
        if doc is not None and doc.root is not None:
            _fold_tree(doc.root, lines, out)
        elif first is not None:
            _fold_indent(lines, first, end, out)
    # Sorted as one int per range: sorting 90,000 tuples (a 12,915-prompt blueprint) is one C call
    # that holds the interpreter lock three times as long, and a request on another document waits.
    return [(key >> 32, key & 0xFFFFFFFF) for key in sorted([start << 32 | end for start, end in out])]


def _content_bounds(lines: list[str], start: int, end: int) -> tuple[int | None, int | None]:
    first = last = None
    for i in range(start, end):
        if lines[i].startswith("---") and i == start:
            continue
        if not is_blank(lines[i]):
            first = i
            break
    if first is None:
        return None, None
    for i in range(end - 1, first - 1, -1):
        if not is_blank(lines[i]):
            last = i
            break
    if lines[start].startswith("---"):
        first = start
    return first, last


def _fold_tree(root: Node, lines: list[str], out: set[tuple[int, int]]) -> None:
    # Only nodes over several lines are looked into: nothing within one line folds, and 4 MB of
    # nesting written on single lines (`[[[…]]]`) is millions of nodes, whose walk (and the set of the
    # ones seen) took seconds.
    stack: list[Node] = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:  # aliases share nodes
            continue
        seen.add(id(node))
        if isinstance(node, Mapping):
            for k, v in node.pairs:
                if v.span.end_line > k.span.start_line and (isinstance(v, (Mapping, Sequence)) or
                                                            (isinstance(v, Scalar) and v.style in ("|", ">"))):
                    out.add((k.span.start_line, v.span.end_line))
                if isinstance(v, (Mapping, Sequence)) and v.span.end_line > v.span.start_line:
                    stack.append(v)
        elif isinstance(node, Sequence):
            for it in node.items:
                if isinstance(it, BrokenItem):  # an item that does not parse yet: its indentation
                    _fold_indent(lines, it.span.start_line, it.span.end_line + 1, out)
                elif isinstance(it, (Mapping, Sequence)) and it.span.end_line > it.span.start_line:
                    out.add((it.span.start_line, it.span.end_line))
                    stack.append(it)


def _fold_indent(lines: list[str], start: int, end: int, out: set[tuple[int, int]]) -> None:
    """Fold each line over the deeper lines after it (the structure a broken document still shows)."""
    stack: list[tuple[int, int]] = []  # (indent, line)
    last_content = start
    for i in range(start, end):
        s = lines[i]
        if is_blank(s) or s.startswith("---"):
            continue
        ind = indent_of(s)
        while stack and stack[-1][0] >= ind:
            _, line0 = stack.pop()
            if last_content > line0:
                out.add((line0, last_content))
        stack.append((ind, i))
        last_content = i
    while stack:
        _, line0 = stack.pop()
        if last_content > line0:
            out.add((line0, last_content))
