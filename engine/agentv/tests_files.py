"""External tests: `tests: ./cases.jsonl` and `file://path` / `file://glob` items.

Paths resolve from the referring file's folder (the eval file's, for the suite); globs expand sorted.
YAML files hold a list of tests, JSONL one JSON test per line, CSV a header row (id, input, criteria,
expected_output, …) and one test per row. Every test comes back as a located node with the context of
its own file, so findings land on the right line of the right file (`Finding.path`).

Bounded: at most `Budget.files` files and `Budget.bytes` bytes per suite, each file read once (a file
that includes itself, directly or not, is reported, not followed); globs list at most
`Budget.glob_entries` directory entries, never follow a symlinked folder and stay in the project
(`tests_glob.py`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Sequence as Sequence_
from pathlib import Path
from typing import cast

from ..file_source import MAX_READ, expand_home
from ..findings import Findings, Span
from ..jsonio import bounded_int
from ..line_breaks import as_read
from ..registry.agentv import REGISTRY, TESTS_FILE_EXTENSIONS
from ..source import (
    LINES_AS_OFFSETS_FROM,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    Mapping,
    Node,
    Scalar,
    Sequence,
    is_lazy,
    parse_yaml,
)
from ..text_lines import Lines
from ..validation.suggest import closest
from . import tests_glob
from .context import FILES_PER_SUITE, Context
from .interpolate import Values
from .yaml_tabs import tab_line_errors

FILE_URL = "file://"
_SUPPORTED = ", ".join(TESTS_FILE_EXTENSIONS)
_GLOB_CHARS = set("*?[")
# CSV columns that map to test fields (string-valued ones only).
CSV_COLUMNS = ("id", "input", "criteria", "expected_output", "conversation_id", "description", "note", "dataset")


class Loaded:
    """Where the tests found through references go, each with the context of its file (`sink`, as they
    are found: a streamed check keeps none of them), and the files read."""

    def __init__(self, sink: Callable[[Node, Context], None] | None = None) -> None:
        self.tests: list[tuple[Node, Context]] = []  # without a sink
        self.sink = sink
        self.files: list[Path] = []
        self.contexts: list[Context] = []

    def add(self, node: Node, ctx: Context) -> None:
        if self.sink is not None:
            self.sink(node, ctx)
        else:
            self.tests.append((node, ctx))

    def finish(self, out: Findings) -> None:
        """Move every external file's findings into `out`, marked with the file's path."""
        for child in self.contexts:
            for f in child.out:
                f.path = str(child.path)
                out.append(f)
            child.out.clear()


def load_reference(ctx: Context, node: Node, reference: str, loaded: Loaded, *, from_item: bool) -> None:
    """Load the tests a `tests:` path or a `file://` item names, reporting on `node` when it cannot."""
    base = ctx.path.parent if ctx.path is not None else ctx.folder
    if base is None:
        return  # an unsaved buffer: nothing to resolve against
    shown = f"{FILE_URL}{reference}" if from_item else reference
    if from_item and _GLOB_CHARS & set(reference):
        root = _project_root(ctx, base)
        walked = tests_glob.expand(reference, base, root, ctx.fs.source, budget=ctx.budget.glob_entries)
        ctx.budget.glob_entries = max(0, ctx.budget.glob_entries - walked.visited)
        if walked.outside is not None:
            ctx.out.error("tests-glob-outside", node.span,
                          f"'{reference}' searches '{walked.outside}', outside the project ({root}); evalspec "
                          "does not list folders outside it. Use a pattern inside the project.")
            return
        if walked.truncated:
            ctx.out.error("tests-glob-too-broad", node.span,
                          f"'{reference}' (relative to {_where(ctx, base)}) goes past the {tests_glob.MAX_ENTRIES:,} "
                          "files and folders a suite's globs may look at; evalspec stops there and loads none "
                          "of its tests. Narrow the pattern (e.g. 'cases/**/*.yaml').")
            return
        ctx.fs.is_dir(base)  # noted by a recording source: a new file in the folder changes the suite
        # Walked through the source, bounded (tests_glob.py); the source answers for each file found.
        matches = [p for p in walked.matches if ctx.fs.is_file(base / p)]
        if not matches:
            ctx.out.warning("tests-glob-empty", node.span,
                            f"No files match '{reference}' (relative to {_where(ctx, base)}); no tests are loaded.")
            return
        for rel in matches:
            path = base / rel
            if path.suffix.lower() not in TESTS_FILE_EXTENSIONS:
                ctx.out.error("unsupported-tests-extension", node.span,
                              f"'{rel}' matches '{reference}' but has an unsupported file extension "
                              f"'{path.suffix}'. Supported extensions: {_SUPPORTED}")
                continue
            _load_file(ctx, node, path, loaded)
        return
    ext = Path(reference).suffix
    if ext.lower() not in TESTS_FILE_EXTENSIONS:
        ctx.out.error("unsupported-tests-extension", node.span,
                      f"Unsupported file extension '{ext}' for tests path '{shown}'. Supported extensions: {_SUPPORTED}")
        return
    path = expand_home(reference, ctx.fs.source.env)
    path = path if path.is_absolute() else base / path
    if not ctx.fs.exists(path):
        ctx.out.error("missing-tests-file", node.span,
                      f"Tests file '{reference}' not found (relative to {_where(ctx, base)}).")
        return
    _load_file(ctx, node, path, loaded)


def _project_root(ctx: Context, base: Path) -> Path:
    """Where a glob may look: the repository (the folder holding .git above the eval file), else the
    eval file's folder."""
    folder = ctx.folder or base
    top = ctx.fs.search_roots(folder)[-1]
    return top if ctx.fs.exists(top / ".git") else folder


def _where(ctx: Context, base: Path) -> str:
    return "the eval file's folder" if base == ctx.folder else f"'{base}'"


def _load_file(ctx: Context, node: Node, path: Path, loaded: Loaded) -> None:
    if ctx.outside_project(node, str(path), path):
        return
    real = ctx.fs.source.resolve(path)
    size = ctx.fs.source.size(real)
    if size is None:
        ctx.out.error("missing-tests-file", node.span, f"Cannot read tests file '{path.name}': not a readable file.")
        return
    if real in ctx.budget.visited:
        ctx.out.warning("tests-file-repeated", node.span,
                        f"'{path.name}' is already included in this suite; it is not read again.")
        return
    if not ctx.budget.take(size):
        # The limit that was reached, named alone: the file count is the same everywhere, the bytes are not
        # (10 MB in the editor, 32 MB in check and run), and check must say what the editor says when both stop.
        reached = (f"at most {FILES_PER_SUITE} files per suite" if ctx.budget.files <= 0 else
                   f"at most {ctx.budget.limit >> 20} MB of tests files per suite")
        ctx.out.error("tests-limit", node.span,
                      f"This suite includes too many tests files (evalspec reads {reached}); '{path.name}' and "
                      "later files are not checked.")
        return
    ctx.budget.visited.add(real)
    # Confined on the file opened: a tests file swapped for a link pointing out since the checks above is
    # not read (read_regular_bytes).
    text = ctx.fs.source.read_text(real, max(MAX_READ, ctx.budget.limit),
                                   inside=ctx.fs.confinement(ctx.folder) if ctx.folder is not None else None)
    if text is None:
        ctx.out.error("missing-tests-file", node.span,
                      f"Cannot read tests file '{path.name}': unreadable, or not UTF-8 text.")
        return
    loaded.files.append(path)
    child_out = Findings()
    ext = path.suffix.lower()
    parsed = None
    if ext in (".jsonl", ".csv"):
        # A big file's lines as offsets into its text in a streamed check (text_lines.py), as a parse keeps them
        lines = cast(list[str], Lines(text)) if ctx.streamed and len(text) >= LINES_AS_OFFSETS_FROM else text.split("\n")
    else:
        text = as_read(text, path)  # its findings' lines as the editor counts them (line_breaks.py)
        parsed = parse_yaml(text, streamed=ctx.streamed, max_bytes=MAX_FILE_BYTES)
        root = parsed.documents[0].root if parsed.documents else None
        if isinstance(root, Mapping) and is_lazy(root.get("tests")):
            # A `tests:` mapping is read whole: a syntax error in one of its tests loses the whole document
            # in the editor's parse, and by then a streamed reading would have checked the tests before it.
            # (A list of tests, the usual tests file, is parsed item by item in both.)
            parsed = parse_yaml(text, max_bytes=MAX_FILE_BYTES)
        lines = parsed.lines
        tab_line_errors(text, lines, child_out)
    values = Values(ctx.values.env)
    child = ctx.child(child_out, values, lines, path)
    loaded.contexts.append(child)
    items: Iterable[Node]
    if ext == ".jsonl":
        items = iter_jsonl_tests(text, lines, child_out)
    elif ext == ".csv":
        items = csv_tests(text, child_out)
    else:
        assert parsed is not None
        items = _yaml_tests(parsed, child_out)
    del text
    # Each item is scanned for `${{ VAR }}`, then loaded or checked, then (streamed) dropped.
    for item in items:
        mark = values.mark()
        values.scan(item, lines, child_out)
        text_item = values.str_of(item)
        if text_item is not None and text_item.startswith(FILE_URL):
            load_reference(child, item, text_item[len(FILE_URL):], loaded, from_item=True)
        else:
            loaded.add(item, child)
        if ctx.streamed:
            values.forget(mark)
    if parsed is not None:  # the syntax findings (a streamed list's items add theirs as they are read)
        child_out.extend(parsed.findings)


def _yaml_tests(parsed, out: Findings) -> list[Node]:
    roots = [d.root for d in parsed.documents if d.root is not None]
    if not roots:
        return []
    root = roots[0]
    if isinstance(root, Mapping) and isinstance(root.get("tests"), Sequence):
        return root.get("tests").items  # type: ignore[union-attr]
    if not isinstance(root, Sequence):
        out.error("invalid-tests-file", Span(root.span.start_line, root.span.start_col, root.span.start_line,
                                             root.span.start_col + 1),
                  "A tests file must contain a YAML list of tests.")
        return []
    return root.items  # a streamed parse's LazyItems: read once


# --- JSONL ---------------------------------------------------------------------------------------------

def jsonl_tests(text: str, lines: list[str], out: Findings) -> list[Node]:
    """One located node per JSONL line; invalid lines are reported with their line number."""
    return list(iter_jsonl_tests(text, lines, out))


def iter_jsonl_tests(text: str, lines: Sequence_[str], out: Findings) -> Iterator[Node]:
    """`jsonl_tests` one line at a time (a streamed check keeps none)."""
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            value = json.loads(line, parse_int=bounded_int)
        except json.JSONDecodeError as exc:
            col = min(exc.colno - 1, max(len(line) - 1, 0))
            out.error("invalid-jsonl", Span(i, col, i, col + 1), f"Line {i + 1} is not valid JSON: {exc.msg}.")
            continue
        except RecursionError:  # the standard parser recurses once per level
            out.error("invalid-jsonl", Span(i, 0, i, min(len(line), 1)), f"Line {i + 1} is nested too deeply.")
            continue
        node = _located_json_line(line, i)
        if node is None:
            try:
                node = _from_json(value, Span(i, 0, i, len(line)))
            except _TooDeep:
                out.error("invalid-jsonl", Span(i, 0, i, min(len(line), 1)),
                          f"Line {i + 1} is nested deeper than {MAX_DEPTH} levels; it is not checked.")
                continue
        yield node


def _located_json_line(line: str, line_no: int) -> Node | None:
    """The line parsed as YAML flow (JSON is valid YAML), with spans moved to the line's real number."""
    parsed = parse_yaml(line)
    if parsed.findings or len(parsed.documents) != 1 or parsed.documents[0].root is None:
        return None
    root = parsed.documents[0].root
    stack: list[Node] = [root]
    while stack:
        n = stack.pop()
        s = n.span
        n.span = Span(s.start_line + line_no, s.start_col, s.end_line + line_no, s.end_col)
        if isinstance(n, Mapping):
            for k, v in n.pairs:
                stack.append(k)
                if v is not None:
                    stack.append(v)
        elif isinstance(n, Sequence):
            stack.extend(n.items)
    return root


class _TooDeep(Exception):
    pass


def _from_json(value: object, span: Span, depth: int = 0) -> Node:
    """A JSON value as nodes, all at the line's span; as deep as YAML may be (the checkers recurse)."""
    if depth > MAX_DEPTH:
        raise _TooDeep
    if isinstance(value, dict):
        return Mapping(span, [(Scalar(span, str(k), str(k), '"'), _from_json(v, span, depth + 1))
                              for k, v in value.items()], True)
    if isinstance(value, list):
        return Sequence(span, [_from_json(v, span, depth + 1) for v in value], True)
    return Scalar(span, value, json.dumps(value), '"' if isinstance(value, str) else None)


# --- CSV -----------------------------------------------------------------------------------------------

def csv_tests(text: str, out: Findings) -> list[Node]:
    """Tests from a CSV with a header row; cells keep their positions."""
    rows = _csv_cells(text)
    if not rows:
        return []
    header, body = rows[0], rows[1:]
    columns: list[str | None] = []
    test_fields = REGISTRY["test"]
    for i, (value, span) in enumerate(header):
        # A spreadsheet's "CSV UTF-8" starts with a byte order mark: not part of the first column's name
        # (it read as an unknown column '\ufeffid').
        name = (value.lstrip("\ufeff") if i == 0 else value).strip()
        if name in CSV_COLUMNS:
            columns.append(name)
            continue
        columns.append(None)
        if test_fields.lookup(name) is not None:
            out.warning("unsupported-csv-column", span,
                        f"Column '{name}' cannot be expressed in CSV (only {', '.join(CSV_COLUMNS)}); it is ignored.")
        else:
            best = closest(name, CSV_COLUMNS)
            out.warning("unknown-key", span, f"Unknown column '{name}'" + (f"; did you mean '{best}'?" if best else
                        f". Known columns: {', '.join(CSV_COLUMNS)}."))
    nodes: list[Node] = []
    for row in body:
        if all(not v.strip() for v, _ in row):
            continue
        pairs: list[tuple[Node, Node]] = []
        for (value, span), column in zip(row, columns, strict=False):
            if column is None or value == "":
                continue
            pairs.append((Scalar(span, column, column, None), Scalar(span, value, value, '"')))
        first, last = row[0][1], row[-1][1]
        nodes.append(Mapping(Span(first.start_line, first.start_col, last.end_line, last.end_col), pairs, False))
    return nodes


def _csv_cells(text: str) -> list[list[tuple[str, Span]]]:
    """RFC 4180 cells with their spans (quoted cells may span lines; "" is a quote)."""
    rows: list[list[tuple[str, Span]]] = []
    row: list[tuple[str, Span]] = []
    i, n, line, col = 0, len(text), 0, 0
    while i <= n:
        start_line, start_col = line, col
        buf: list[str] = []
        if i < n and text[i] == '"':
            i += 1
            col += 1
            while i < n:
                c = text[i]
                if c == '"':
                    if i + 1 < n and text[i + 1] == '"':
                        buf.append('"')
                        i += 2
                        col += 2
                        continue
                    i += 1
                    col += 1
                    break
                buf.append(c)
                i += 1
                if c == "\n":
                    line, col = line + 1, 0
                else:
                    col += 1
        while i < n and text[i] not in ",\n":
            if text[i] != "\r":
                buf.append(text[i])
            i += 1
            col += 1
        row.append(("".join(buf), Span(start_line, start_col, line, col)))
        if i >= n:
            if row != [("", Span(line, 0, line, 0))]:
                rows.append(row)
            break
        if text[i] == ",":
            i += 1
            col += 1
            continue
        rows.append(row)  # newline
        row = []
        i += 1
        line, col = line + 1, 0
    return rows
