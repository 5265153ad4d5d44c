"""The eval file's top level: metadata, defaults (`input`, `assert`), execution, workspace, and `tests`."""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Iterator
from collections.abc import Sequence as Sequence_
from pathlib import Path
from typing import Any, cast

from .. import item_processes
from ..findings import Edit, Fix, Related, Span, replace
from ..item_processes import Unshared
from ..source import LazyItems, Mapping, Node, Scalar, Sequence, node_type_name
from . import edits
from .assertions import check_assert_list
from .context import Context
from .messages import check_input
from .model import AgentvSuite, AgentvTest
from .test_store import Places, TestCollector, encoded
from .testcase import RepeatedTests, SuiteDefaults
from .tests_files import FILE_URL, Loaded, load_reference
from .workspace import check_workspace

NAME_PATTERN = re.compile(r"^[a-z0-9-]+$")
_SUITE_HANDLED = ("name", "description", "version", "author", "license", "tags", "input", "tests", "execution", "assert", "workspace", "target")


def check_suite(ctx: Context, root: Mapping) -> AgentvSuite:
    entries = ctx.object(root, "suite", handled=_SUITE_HANDLED, fixes=_target_fix(ctx, root),
                         missing={"tests": ("missing-tests", "Missing or invalid 'tests' field (must be an array "
                                            "or a file path string).")})
    assert entries is not None  # root is a mapping
    name, description = _metadata(ctx, entries)

    execution: dict[str, Any] = {}
    exec_entries = None
    if entries.get("execution") is not None:
        exec_entries = ctx.object(entries.get("execution"), "execution", handled=("assert",))
        if exec_entries is not None:
            execution = {n: ctx.values.plain(v) for n, (_, v) in exec_entries.found.items() if n != "assert"}

    input_defaults = check_input(ctx, entries.get("input"), suite_level=True) if entries.get("input") is not None else []

    assert_node = entries.get("assert")
    exec_assert = exec_entries.get("assert") if exec_entries is not None else None
    defaults = check_assert_list(ctx, assert_node) if assert_node is not None else []
    if exec_assert is not None:
        from_exec = check_assert_list(ctx, exec_assert, field=str(exec_entries.key("assert").value))  # type: ignore[union-attr]
        if assert_node is not None:
            ctx.out.warning("ignored-field", exec_entries.key("assert").span,  # type: ignore[union-attr]
                            f"'execution.{exec_entries.key('assert').value}' is ignored because the file sets "  # type: ignore[union-attr]
                            "a top-level 'assert'.")
        else:
            defaults = from_exec

    workspace_node = entries.get("workspace")
    workspace = check_workspace(ctx, workspace_node) if workspace_node is not None else None

    tests, files = _tests(ctx, entries.get("tests"), SuiteDefaults(input_defaults, defaults))

    target = execution.get("target") if isinstance(execution.get("target"), str) else ctx.str_of(entries.get("target"))
    listed = execution.get("targets")
    targets = listed if isinstance(listed, list) else []
    trials = _trials(execution.get("trials"))
    tags = ctx.values.plain(entries.get("tags"))
    return AgentvSuite.build(
        path=ctx.path, name=name, description=description,
        version=_text(ctx, entries.get("version")), author=ctx.str_of(entries.get("author")),
        license=ctx.str_of(entries.get("license")),
        tags=[t for t in tags if isinstance(t, str)] if isinstance(tags, list) else [],
        requires=ctx.values.plain(entries.get("requires")) or {},
        tests=tests, execution=execution, target=target,
        targets=[t for t in targets if isinstance(t, str)], trials=trials,
        assert_defaults=defaults, input_defaults=input_defaults, workspace=workspace,
        tests_files=files, span=root.span)


def _text(ctx: Context, node: Node | None) -> str | None:
    """A string, or a number written unquoted (`version: 1.0`) as its text."""
    if isinstance(node, Scalar) and node.value is not None and not isinstance(node.value, bool):
        return ctx.str_of(node) if isinstance(node.value, str) else node.raw
    return None


REFUSED = "AgentV's loader refuses the file"


def _metadata(ctx: Context, entries: Any) -> tuple[str | None, str | None]:
    """`name` and `description`. With a string `name`, AgentV's loader holds the suite's metadata to its
    schema (metadata.ts): a name of 1-64 of [a-z0-9-], a description of 1-1024 characters (and
    `version`, `author`, `license` strings, `tags` a list of strings: the registry's types); it refuses
    the file otherwise, and so do these errors."""
    name_node, desc_node = entries.get("name"), entries.get("description")
    name = ctx.str_of(name_node)
    strict = name is not None  # AgentV checks the metadata only when `name` is a string
    if name_node is not None:
        if name is None:  # AgentV reads the metadata only when 'name' is a string: it ignores this one
            ctx.out.warning("wrong-type", name_node.span, f"'name' must be a string; found {node_type_name(name_node)}. "
                            "AgentV ignores it (and the other metadata).")
        elif not NAME_PATTERN.match(name) or len(name) > 64:
            fixed = edits.slug(name)
            message = (f"Invalid 'name' format '{name}'. Must match pattern /^[a-z0-9-]+$/ (lowercase "
                       "alphanumeric with hyphens)." if not NAME_PATTERN.match(name) else
                       f"'name' is {len(name)} characters long; the limit is 64.")
            ctx.out.error("invalid-name", name_node.span, f"{message} {REFUSED}.",
                          fix=replace(f"Change to '{fixed}'", name_node.span, fixed) if fixed else None)
        if desc_node is None:
            ctx.out.warning("missing-description", entries.key("name").span,
                            "When 'name' is present, 'description' should also be provided.")
    description = ctx.str_of(desc_node)
    if desc_node is not None:
        if description is None:  # without a 'name' AgentV never reads it
            report = ctx.out.error if strict else ctx.out.warning
            report("wrong-type", desc_node.span, f"'description' must be a string; found {node_type_name(desc_node)}."
                   + (f" With a 'name', {REFUSED}." if strict else " AgentV ignores it (there is no 'name')."))
        elif not description:
            report = ctx.out.error if strict else ctx.out.warning
            report("invalid-description", desc_node.span,
                   "'description' is empty." + (f" With a 'name', {REFUSED}." if strict else ""))
        elif len(description) > 1024:
            report = ctx.out.error if strict else ctx.out.warning
            report("invalid-description", desc_node.span,
                   f"'description' is {len(description)} characters long; the limit is 1024."
                   + (f" With a 'name', {REFUSED}." if strict else ""))
    for field in ("version", "author", "license", "tags"):
        node = entries.get(field)
        if node is None or (isinstance(node, Sequence) and all(ctx.str_of(i) is not None for i in node.items)
                            if field == "tags" else ctx.str_of(node) is not None):
            continue
        wanted = "a list of strings" if field == "tags" else "a string"
        report = ctx.out.error if strict else ctx.out.warning
        report("wrong-type", node.span, f"'{field}' must be {wanted}; found {node_type_name(node)}."
               + (f" With a 'name', {REFUSED}." if strict else " AgentV ignores it (there is no 'name')."))
    return name, description


def _target_fix(ctx: Context, root: Mapping) -> dict[str, object]:
    """Legacy top-level `target: x` → `execution: {target: x}`."""
    key, value = root.key_node("target"), root.get("target")
    text = ctx.str_of(value)
    if key is None or text is None or value is None:
        return {}
    lines = edits.entry_lines(key, value, ctx.lines)
    execution = root.get("execution")
    if execution is None:
        new = f"execution:\n  target: {edits.scalar(str(value.value) if isinstance(value, Scalar) else text)}"
        return {"target": replace("Move to 'execution.target'", edits.pair_span(key, value), new)}
    if isinstance(execution, Mapping) and not execution.flow and execution.pairs and lines is not None \
            and not execution.has("target"):
        first = execution.pairs[0][0]
        indent = " " * first.span.start_col
        raw = str(value.value) if isinstance(value, Scalar) else text
        insert = Edit(Span.point(first.span.start_line, 0), f"{indent}target: {edits.scalar(raw)}\n")
        return {"target": Fix("Move to 'execution.target'", (Edit(lines, ""), insert))}
    return {}


def _tests(ctx: Context, node: Node | None, defaults: SuiteDefaults) -> tuple[Sequence_[AgentvTest], list[Any]]:
    if node is None:
        return [], []  # reported as missing-tests by the object check
    text = ctx.str_of(node)
    if text is None and not isinstance(node, Sequence):
        ctx.out.error("missing-tests", node.span,
                      f"Missing or invalid 'tests' field (must be an array or a file path string); found "
                      f"{node_type_name(node)}.")
        return [], []
    checker = UniqueTests(ctx, defaults)
    loaded = Loaded(checker.add)
    if text is not None:
        load_reference(ctx, node, text, loaded, from_item=False)
    else:
        add_test_items(ctx, cast(Sequence, node).items, loaded)
    loaded.finish(ctx.out)
    return checker.result(), loaded.files


def check_test_list(ctx: Context, items: Iterable[Node], defaults: SuiteDefaults,
                    loaded: Loaded) -> Sequence_[AgentvTest]:
    """Inline tests and `file://` references, in the order AgentV expands them; `loaded` gets the files
    read (its own sink is replaced)."""
    checker = UniqueTests(ctx, defaults)
    loaded.sink = checker.add
    add_test_items(ctx, items, loaded)
    return checker.result()


def add_test_items(ctx: Context, items: Iterable[Node], loaded: Loaded) -> None:
    """Each item to `loaded`'s sink in the order AgentV expands them: a test as it is, a `file://`
    reference as the tests of its file(s). Items in a list were scanned for `${{ VAR }}` with the file;
    others (a streamed list's LazyItems or a JSONL file's lines, in `check` and `run`) are scanned as they
    come, and dropped once checked."""
    checker = getattr(loaded.sink, "__self__", None)
    if isinstance(items, LazyItems) and isinstance(checker, UniqueTests) and _shared(ctx, items, checker):
        return
    lazy = isinstance(items, LazyItems) or not isinstance(items, list)
    scan = ctx.values.scan_item if isinstance(items, LazyItems) else ctx.values.scan
    values = ctx.values
    mark = 0
    for item in items:
        if lazy:
            mark = values.mark()
            scan(item, ctx.lines, ctx.out)
        # (a test is a mapping: no string to look at; 840,000 `- {}` in a 4 MB file)
        item_text = values.str_of(item) if isinstance(item, Scalar) else None
        if item_text is None:
            loaded.add(item, ctx)
        elif item_text.startswith(FILE_URL):
            load_reference(ctx, item, item_text[len(FILE_URL):], loaded, from_item=True)
        else:
            ctx.out.error("invalid-test", item.span, "Test case string must be a file reference (file://...).",
                          fix=replace("Make it a file:// reference", item.span, f"{FILE_URL}{item_text}")
                          if item_text.endswith((".yaml", ".yml", ".jsonl", ".csv")) else None)
        if lazy:
            values.forget(mark)


def _shared(ctx: Context, items: LazyItems, checker: UniqueTests) -> bool:
    """A streamed list of tests read in several processes (item_processes.py), as `add_test_items` reads
    it; False when it is read here alone. A part whose tests are not all inline mappings checked from
    their text alone (a `file://` reference, a test that reads a file) raises Unshared: the suite is read
    again in one process."""
    parts = item_processes.parts(ctx.processes, items.count()) if ctx.processes != 1 else 1
    if parts <= 1:
        return False
    ranges = items.ranges(parts)
    values, out, keep, lines = ctx.values, ctx.out, ctx.keep_tests, ctx.lines
    asked: set[Path] | None = getattr(ctx.fs.source, "paths", None)  # (a RecordingSource's: what was asked)
    asked_before = set(asked) if asked is not None else set()

    def work(start: int, end: int) -> Iterator[Any]:
        """A range's tests as (their findings, id, id span, span, tests file, record), then the paths its
        checks asked about (a custom assertion type's file looked for): the analysis depends on them."""
        for item in items.part(start, end):
            mark, values_mark, budget = len(out), values.mark(), ctx.budget_state()
            values.scan_item(item, lines, out)
            if isinstance(item, Scalar):
                raise Unshared(f"a test reference at line {item.span.start_line + 1}")
            test = checker.repeated.check(ctx, item, checker.defaults)
            if budget != ctx.budget_state():
                raise Unshared(f"a test that reads a file at line {item.span.start_line + 1}")
            found = out[mark:]
            del out[mark:]
            values.forget(values_mark)
            if test is None:
                yield found, None, None, None, None, None
            else:
                yield found, test.id, test.id_span, test.span, test.source_path, encoded(test) if keep else None
        yield asked - asked_before if asked is not None else set()

    with item_processes.shared(ranges[1:], work) as others:
        for item in items.part(*ranges[0]):  # this process's range, as add_test_items reads one
            mark = values.mark()
            values.scan_item(item, lines, out)
            if isinstance(item, Scalar):
                raise Unshared(f"a test reference at line {item.span.start_line + 1}")
            checker.add(item, ctx)
            values.forget(mark)
        for result in others.results():
            if type(result) is set:  # a range's end: the paths its checks asked about
                if asked is not None:
                    asked |= result
                continue
            found, pid, id_span, span, path, record = result
            if found:
                out.extend(found)
            if pid is not None:
                checker.add_record(ctx, pid, id_span, span, path, record)
    items.read_all()  # every item read, none said anything: nothing left to report
    return True


class UniqueTests:
    """Checks each test in its file's context as it comes; a repeated id is an error on the repeat. The
    tests go to a list, or in a streamed check past test_store.DEFAULT_BOUND to a TestStore on disk; what
    stays per test is its id's place (the first test of an id is read back for the rare repeat). A check
    that keeps no test (`ctx.keep_tests` False: `evalspec check`) keeps of each only what a repeat's
    finding cites (`test_store.Places`), and its result is empty."""

    def __init__(self, ctx: Context, defaults: SuiteDefaults) -> None:
        self.defaults = defaults
        self.tests: TestCollector | None = None
        self.held: list[AgentvTest] = []
        self.firsts: Places | None = None if ctx.keep_tests else Places()
        if ctx.streamed and ctx.keep_tests:
            self.tests = TestCollector(scratch=ctx.fs.source.scratch_file)
        self.seen: dict[str, int] = {}
        self.free: dict[str, int] = {}  # each repeated id's lowest free `-n` so far (see _rename_id_fix)
        self.count = 0
        self.repeated = RepeatedTests()

    def add(self, item: Node, item_ctx: Context) -> None:
        test = self.repeated.check(item_ctx, item, self.defaults)
        if test is None or self._repeated(item_ctx, test.id, test.id_span, test.span, test.source_path):
            return
        if self.firsts is not None:
            self.firsts.append(test.id_span or test.span, test.source_path)
        elif self.tests is not None:
            self.tests.append(test)
        else:
            self.held.append(test)

    def add_record(self, ctx: Context, pid: str, id_span: Span | None, span: Span, path: Path | None,
                   record: tuple[bytes, int] | None) -> None:
        """A test another process checked (`_shared`), as its id, places and record (test_store.encoded)."""
        if self._repeated(ctx, pid, id_span, span, path):
            return
        if self.firsts is not None:
            self.firsts.append(id_span or span, path)
        else:
            assert self.tests is not None and record is not None, "a shared read keeps its tests in a store"
            self.tests.append_record(record, pid, span, path)

    def _repeated(self, ctx: Context, pid: str, id_span: Span | None, span: Span, path: Path | None) -> bool:
        """An id used before: a duplicate-test-id error (True); else the id is noted (False)."""
        at = self.seen.get(pid)
        if at is None:
            self.seen[pid] = self.count
            self.count += 1
            return False
        first_span, first_path = self._first(at)
        where = ""
        if first_path != path:
            where = f" (in {first_path.name if first_path else 'the eval file'})"
        ctx.out.error("duplicate-test-id", id_span or span,
                      f"Duplicate test id '{pid}'; test ids must be unique in the file.",
                      related=(Related(first_span, f"'{pid}' first used here{where}"),),
                      fix=_rename_id_fix(pid, id_span, self.seen, self.free))
        return True

    def _first(self, k: int) -> tuple[Span, Path | None]:
        """The k-th test's span a repeat's finding cites (its id's, else its own) and its file."""
        if self.firsts is not None:
            return self.firsts.get(k)
        first = self.held[k] if self.tests is None else self.tests.get(k)
        return first.id_span or first.span, first.source_path

    def result(self) -> Sequence_[AgentvTest]:
        return self.tests.result() if self.tests is not None else self.held


def _rename_id_fix(pid: str, id_span: Span | None, seen: Container[str], free: dict[str, int]) -> Fix | None:
    """Rename a repeated id to the first `id-n` (n from 2) no test has. Ids only ever join `seen`, so the
    search for an id goes on from where it last stopped (from 2 for each repeat, `a-2` … `a-30000` then
    30,000 repeats of `a` were 450 million steps)."""
    if id_span is None:
        return None
    n = free.get(pid, 2)
    while f"{pid}-{n}" in seen:
        n += 1
    free[pid] = n
    new = f"{pid}-{n}"
    return Fix(f"Rename to '{new}'", (Edit(id_span, edits.scalar(new)),), preferred=False)


_TRIAL_STRATEGIES = ("pass_at_k", "mean", "confidence_interval")


def _trials(raw: Any) -> dict[str, Any] | None:
    """`execution.trials` as AgentV's loader reads it (the checker warns on each value it ignores): a
    count that is not a whole number ≥ 1 drops the setting, an unknown strategy is pass_at_k, a
    `cost_limit_usd` (or `costLimitUsd`) that is not a positive number is ignored."""
    if not isinstance(raw, dict):
        return None
    count = raw.get("count")
    if isinstance(count, bool) or not isinstance(count, int | float) or count != int(count) or count < 1:
        return None
    strategy = raw.get("strategy")
    out: dict[str, Any] = {"count": int(count),
                           "strategy": strategy if strategy in _TRIAL_STRATEGIES else "pass_at_k"}
    limit = raw.get("cost_limit_usd", raw.get("costLimitUsd"))
    if isinstance(limit, int | float) and not isinstance(limit, bool) and limit > 0:
        out["cost_limit_usd"] = limit
    return out
