"""Names an author renames, finds or highlights: a `point_defs` name and its `$ref`s, a Weval prompt id,
an AgentV test id.

`symbol_at(analysis, line, col)` says which name is under the cursor and every place it is written
(`Occurrence`: a file, None for the analysed one, and the span of the name's text). `references` and
`highlights` list them; `prepare_rename` gives the span to edit or a `Refusal`; `rename` the edits (per
file: a test written in a tests file is renamed there), or a `Refusal` when the new name is not a valid
name or clashes with one already used (another definition, prompt or test — across the suite and its
tests files). `prepare_rename_in_tests_file` and `rename_in_tests_file` do the same with the cursor in
an AgentV tests file, given the analysis of a suite that includes it (`suite_including`). New names are written as YAML scalars the way the old ones were (quoted stays quoted, in
the same quotes; a plain name that needs quoting is double-quoted). Nothing is written here.
"""

from __future__ import annotations

import json
from collections import abc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..detect import FileKind
from ..findings import Edit, Span
from ..source import Mapping, Node, Scalar, Sequence

POINT_DEF, PROMPT_ID, TEST_ID = "point definition", "prompt id", "test id"
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./")


@dataclass(frozen=True, slots=True)
class Occurrence:
    path: Path | None  # None: the analysed file
    span: Span  # the name's scalar, quotes included
    definition: bool  # where the name is defined (a point_defs key, an `id:` value)
    style: str | None = None  # the scalar's quoting: None (plain), "'" or '"'


@dataclass(frozen=True, slots=True)
class Symbol:
    kind: str  # POINT_DEF | PROMPT_ID | TEST_ID
    name: str
    span: Span  # the occurrence under the cursor
    occurrences: tuple[Occurrence, ...]


@dataclass(frozen=True, slots=True)
class Refusal:
    message: str


@dataclass(frozen=True, slots=True)
class FileEdits:
    path: Path | None  # None: the analysed file
    edits: tuple[Edit, ...]


def symbol_at(analysis: Any, line: int, col: int) -> Symbol | None:
    if analysis.parsed.too_large:
        return None
    if analysis.kind is FileKind.WEVAL and analysis.blueprint is not None:
        return _weval_symbol(analysis, line, col)
    if analysis.kind is FileKind.AGENTV and analysis.suite is not None:
        return _test_symbol(analysis, line, col)
    return None


def references(analysis: Any, line: int, col: int, include_declaration: bool = True) -> list[Occurrence]:
    symbol = symbol_at(analysis, line, col)
    if symbol is None:
        return []
    return [o for o in symbol.occurrences if include_declaration or not o.definition]


def highlights(analysis: Any, line: int, col: int) -> list[Occurrence]:
    """The occurrences in the analysed file itself."""
    symbol = symbol_at(analysis, line, col)
    return [] if symbol is None else [o for o in symbol.occurrences if _here(analysis, o.path)]


def including_suites(tests_file: Path) -> list[Occurrence]:
    """For an AgentV tests file (which is not a suite, so has no analysis of its own): where each suite
    that includes it names it (the line holding its file name, else the suite's start). Reads the disk,
    bounded (agentv/including_suites.py): an explicit request of the editor's, never part of a check."""
    from ..agentv.including_suites import suites_including
    from ..file_source import read_regular_bytes

    out: list[Occurrence] = []
    for suite in suites_including(tests_file):
        span = Span(0, 0, 0, 0)
        try:
            data = read_regular_bytes(suite, 1 << 20)
        except (OSError, ValueError):
            data = None
        if data is not None:
            for n, line in enumerate(data.decode("utf-8", errors="replace").split("\n")):
                at = line.find(tests_file.name)
                if at >= 0:
                    span = Span(n, at, n, at + len(tests_file.name))
                    break
        out.append(Occurrence(suite, span, False))
    return out


def suite_including(tests_file: Path, files: Any) -> tuple[Any, Path] | None:
    """For an AgentV tests file: the analysis of the nearest suite that includes it (its text and files
    read through the FileSource `files`) and the tests file's path as that suite's tests carry it."""
    from ..agentv.including_suites import suites_including
    from ..incremental import DocumentAnalyzer

    for suite in suites_including(tests_file):
        text = files.read_text(suite)
        if text is None:
            continue
        analysis = DocumentAnalyzer(suite, source=files).analyze(text)
        if analysis.kind is not FileKind.AGENTV or analysis.suite is None:
            continue
        named = next((Path(t.source_path) for t in analysis.suite.tests
                      if t.source_path is not None and Path(t.source_path).resolve() == tests_file.resolve()), None)
        if named is not None:
            return analysis, named
    return None


def prepare_rename(analysis: Any, line: int, col: int) -> Span | Refusal | None:
    """The span of the name to rename (its text, inside any quotes); None where there is no name."""
    symbol = symbol_at(analysis, line, col)
    if symbol is None:
        return _not_renamable(analysis, line, col)
    hit = next(o for o in symbol.occurrences if o.span == symbol.span and _here(analysis, o.path))
    return _inner(hit)


def rename(analysis: Any, line: int, col: int, new_name: str) -> list[FileEdits] | Refusal | None:
    symbol = symbol_at(analysis, line, col)
    if symbol is None:
        return _not_renamable(analysis, line, col)
    if new_name == symbol.name:
        return []
    problem = _invalid(symbol.kind, new_name) or _clash(analysis, symbol, new_name)
    if problem is not None:
        return Refusal(problem)
    by_file: dict[Path | None, list[Edit]] = {}
    for o in symbol.occurrences:
        path = None if _here(analysis, o.path) else o.path
        by_file.setdefault(path, []).append(Edit(o.span, scalar(new_name, o.style)))
    return [FileEdits(path, tuple(edits)) for path, edits in by_file.items()]


def prepare_rename_in_tests_file(suite: Any, tests_file: Path, lines: abc.Sequence[str], line: int, col: int,
                                 ) -> Span | None:
    """The span of the test id under the cursor in `tests_file` (its text's `lines`), a file of the
    analysed `suite`'s tests; None where there is none."""
    symbol = _tests_file_symbol(suite, tests_file, lines, line, col)
    return None if symbol is None else _inner(symbol.occurrences[0])


def rename_in_tests_file(suite: Any, tests_file: Path, lines: abc.Sequence[str], line: int, col: int, new_name: str,
                         ) -> list[FileEdits] | Refusal | None:
    """The edit renaming the test id under the cursor in `tests_file`, refused as `rename` refuses (a
    clash with any test of the suite, in it or in any of its tests files)."""
    symbol = _tests_file_symbol(suite, tests_file, lines, line, col)
    if symbol is None:
        return None
    if new_name == symbol.name:
        return []
    problem = _invalid(symbol.kind, new_name) or _clash(suite, symbol, new_name)
    if problem is not None:
        return Refusal(problem)
    o = symbol.occurrences[0]
    return [FileEdits(tests_file, (Edit(o.span, scalar(new_name, o.style)),))]


def scalar(name: str, style: str | None) -> str:
    """`name` as a YAML scalar in the given quoting (plain when it can be, else double quotes)."""
    if style == "'":
        return "'" + name.replace("'", "''") + "'"
    if style == '"' or not _plain_ok(name):
        return json.dumps(name, ensure_ascii=False)
    return name


def _plain_ok(name: str) -> bool:
    return bool(name) and set(name) <= _PLAIN and name[0] not in "-./" and name.lower() not in (
        "true", "false", "null", "yes", "no", "on", "off", "~") and not _numeric(name)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _invalid(kind: str, name: str) -> str | None:
    if not name.strip():
        return f"A {kind} may not be empty."
    if any(c in name for c in "\r\n\t") or any(ord(c) < 32 for c in name):
        return f"A {kind} is one line of text without control characters."
    if name != name.strip():
        return f"A {kind} may not start or end with spaces."
    return None


def _clash(analysis: Any, symbol: Symbol, new: str) -> str | None:
    if symbol.kind == POINT_DEF:
        if new in analysis.blueprint.point_defs:
            return f"Cannot rename '{symbol.name}' to '{new}': point_defs already defines '{new}'."
        return None
    if symbol.kind == PROMPT_ID:
        for p in analysis.blueprint.prompts:
            if p.id == new:
                how = "generated " if p.id_generated else ""
                return (f"Cannot rename '{symbol.name}' to '{new}': another prompt has the {how}id '{new}' "
                        f"(line {p.span.start_line + 1}).")
        return None
    for t in analysis.suite.tests:
        if t.id == new:
            where = f"line {t.span.start_line + 1}" + ("" if _here(analysis, t.source_path)
                                                      else f" of {t.source_path}")
            return f"Cannot rename '{symbol.name}' to '{new}': another test has the id '{new}' ({where})."
    return None


def _not_renamable(analysis: Any, line: int, col: int) -> Refusal | None:
    """A clear word where the cursor is on something that looks renamable but is not."""
    bp = analysis.blueprint if analysis.kind is FileKind.WEVAL else None
    if bp is not None:
        for p in bp.prompts:
            if p.id_generated and p.span.start_line == line:
                return Refusal(f"This prompt has no id (its results carry the generated '{p.id}'): add `id:` to name it.")
    return None


def _inner(o: Occurrence) -> Span:
    s = o.span
    if o.style is not None and s.start_line == s.end_line and s.end_col - s.start_col >= 2:
        return Span(s.start_line, s.start_col + 1, s.end_line, s.end_col - 1)
    return s


def _here(analysis: Any, path: Path | None) -> bool:
    return path is None or analysis.path is None or Path(path) == Path(analysis.path)


def _style(node: Node) -> str | None:
    style = getattr(node, "style", None)
    return style if style in ("'", '"') else None


# --- Weval ------------------------------------------------------------------------------------------


def _weval_symbol(analysis: Any, line: int, col: int) -> Symbol | None:
    defs = _point_defs(analysis)
    if defs is not None:
        for key, _ in defs.pairs:
            if isinstance(key, Scalar) and isinstance(key.value, str) and key.span.contains(line, col):
                return _point_def_symbol(analysis, defs, key.value, key.span)
    for name, node in _refs(analysis):
        if node.span.contains(line, col):
            if defs is None or defs.key_node(name) is None:
                return None  # a $ref to nothing: the checker says so; nothing to rename with it
            return _point_def_symbol(analysis, defs, name, node.span)
    bp = analysis.blueprint
    for p in bp.prompts:
        if p.id_span is not None and not p.id_generated and p.id_span.contains(line, col):
            return Symbol(PROMPT_ID, p.id, p.id_span, (Occurrence(None, p.id_span, True, _style_at(analysis, p.id_span)),))
    return None


def _point_def_symbol(analysis: Any, defs: Mapping, name: str, at: Span) -> Symbol:
    key = defs.key_node(name)
    assert key is not None
    found = [Occurrence(None, key.span, True, _style(key))]
    found += [Occurrence(None, node.span, False, _style(node)) for n, node in _refs(analysis) if n == name]
    return Symbol(POINT_DEF, name, at, tuple(found))


def _point_defs(analysis: Any) -> Mapping | None:
    header = analysis.weval.header_node if analysis.weval is not None else None
    if not isinstance(header, Mapping):
        return None
    defs = header.get("point_defs") or header.get("defs")
    return defs if isinstance(defs, Mapping) else None


def _refs(analysis: Any) -> list[tuple[str, Scalar]]:
    """Every `$ref: name` value in the file, in text order (once per analysis)."""
    return analysis.memoised("ide.refs", _collect_refs)


def _collect_refs(analysis: Any) -> list[tuple[str, Scalar]]:
    out: list[tuple[str, Scalar]] = []
    for doc in analysis.parsed.documents:
        stack: list[Node] = [doc.root] if doc.root is not None else []
        while stack:
            node = stack.pop()
            if isinstance(node, Mapping):
                for k, v in node.pairs:
                    if isinstance(k, Scalar) and k.value == "$ref" and isinstance(v, Scalar) and isinstance(v.value, str):
                        out.append((v.value, v))
                    else:
                        stack.append(v)
            elif isinstance(node, Sequence):
                stack.extend(node.items)
    out.sort(key=lambda found: found[1].span)
    return out


def _style_at(analysis: Any, span: Span) -> str | None:
    """The quoting of the scalar written at `span`."""
    lines = analysis.parsed.lines
    first = lines[span.start_line][span.start_col:span.start_col + 1] if span.start_line < len(lines) else ""
    return first if first in ("'", '"') else None


# --- AgentV -----------------------------------------------------------------------------------------


def _tests_file_symbol(suite: Any, tests_file: Path, lines: abc.Sequence[str], line: int, col: int) -> Symbol | None:
    if suite.kind is not FileKind.AGENTV or suite.suite is None:
        return None
    for t in suite.suite.tests:
        if (t.id_span is not None and t.source_path is not None and Path(t.source_path) == tests_file
                and t.id_span.contains(line, col)):
            s = t.id_span
            first = lines[s.start_line][s.start_col:s.start_col + 1] if s.start_line < len(lines) else ""
            style = first if first in ("'", '"') else None
            return Symbol(TEST_ID, t.id, s, (Occurrence(tests_file, s, True, style),))
    return None


def _test_symbol(analysis: Any, line: int, col: int) -> Symbol | None:
    for t in analysis.suite.tests:
        if t.id_span is not None and _here(analysis, t.source_path) and t.id_span.contains(line, col):
            return Symbol(TEST_ID, t.id, t.id_span, (Occurrence(None, t.id_span, True, _style_at(analysis, t.id_span)),))
    return None
