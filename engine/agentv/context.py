"""What every AgentV rule needs while checking one file: findings, values, paths, the registry.

`Context.object` wraps the shared `check_object` and gives AgentV's own wording where AgentV has one
(a missing `value`, a missing `tests` list) and the quick fixes the generic checker cannot know.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..findings import Findings, Span, Tag
from ..findings import replace as replace_fix
from ..registry.agentv import REGISTRY
from ..registry.fields import ObjectSpec
from ..source import Node, Scalar, Sequence
from ..validation.objects import Entries, check_object
from . import edits, tests_glob
from .files import FileSystem, looks_like_script
from .interpolate import Values

FILES_PER_SUITE = 100
_OBJECTS = REGISTRY.objects  # REGISTRY[name] without a Python call (an object's check per test and assertion)


@dataclass
class Budget:
    """Bounds on the external files one suite may pull in."""

    files: int = FILES_PER_SUITE
    bytes: int = 10 * 1024 * 1024
    limit: int = 10 * 1024 * 1024  # what `bytes` started at: an editor's; `check` and `run` allow 32 MB
    glob_entries: int = field(default_factory=lambda: tests_glob.MAX_ENTRIES)  # entries globs may list
    visited: set[Path] = field(default_factory=set)

    def take(self, size: int) -> bool:
        if self.files <= 0 or size > self.bytes:
            return False
        self.files -= 1
        self.bytes -= size
        return True


# Unknown keys that are common mistakes with a known repair: (object, key) -> (message, rename to).
_KNOWN_MISTAKES: dict[tuple[str, str], tuple[str, str | None]] = {
    ("test", "reference_answer"): (
        "'reference_answer' is not a test field and is ignored; AgentV takes the reference answer from the "
        "last expected message. Write it as 'expected_output'.", "expected_output"),
    ("tool_call", "args"): ("A tool call's arguments go in 'input', not 'args'.", "input"),
    ("test", "evalcases"): ("'evalcases' belongs at the top of the file (as 'tests'), not in a test.", None),
    ("suite", "assertions"): ("'assertions' is not a field in AgentV v2.19; use 'assert'.", "assert"),
    ("test", "assertions"): ("'assertions' is not a field in AgentV v2.19; use 'assert'.", "assert"),
}


KEPT_TEXT = 256  # characters of an item whose check may be kept by its text (`kept_key`)


def kept_key(lines: list[str], span: Span) -> object | None:
    """What a check of the item at `span` is kept by (testcase.RepeatedTests, assertions._kept_or_checked):
    its text from its column, with its lines' breaks; None for an item whose check is not kept by its text
    (longer than KEPT_TEXT; an alias `*`, a block scalar `|` `>` or a `${{ VAR }}` in it)."""
    sl, sc, el, ec = span
    key: object
    if sl == el:
        key = text = lines[sl][sc:ec]
    else:  # the continuation lines' indentation is read against the item's column
        text = "\n".join([lines[sl][sc:], *[lines[i] for i in range(sl + 1, el)], lines[el][:ec]])
        key = (sc, text)
    if len(text) > KEPT_TEXT or "*" in text or "|" in text or ">" in text or "$" in text:
        return None
    return key


@dataclass
class Context:
    out: Findings
    values: Values
    lines: list[str]
    path: Path | None  # the file being checked (the eval file or an external tests file)
    folder: Path | None  # the eval file's folder: relative paths resolve from here
    fs: FileSystem
    budget: Budget
    custom_types: dict[str, Path | None] = field(default_factory=dict)
    # A streamed check (`check`, `run`): tests are parsed, checked and dropped one at a time, past
    # test_store.DEFAULT_BOUND kept on disk (in a scratch file of `fs.source`).
    streamed: bool = False
    # False (`evalspec check`, which reads only the findings): the tests are checked and dropped, none kept
    # (the suite's `tests` is empty; suite.UniqueTests)
    keep_tests: bool = True
    # A streamed list of tests read in that many processes (None: as item_processes.parts says; suite._shared)
    processes: int | None = 1
    # Set when a check read the file's lines (through `line`): a test's check that did depends on the text
    # around the test, and is not reused for another test of the same text (testcase.RepeatedTests).
    lines_read: bool = False
    # The checks of this file's assertions kept by their text (assertions.check_assert_list)
    kept_assertions: dict[object, Any] = field(default_factory=dict)

    def budget_state(self) -> tuple[int, int, int, int]:
        """What the suite's budget of files has given so far: a check that took from it is not kept (a second
        reference would find less left)."""
        b = self.budget
        return b.files, b.bytes, b.glob_entries, len(b.visited)

    def line(self, n: int) -> str:
        """Line `n` of the file ("" past its end), for fixes that edit around a node."""
        self.lines_read = True
        return self.lines[n] if 0 <= n < len(self.lines) else ""

    def child(self, out: Findings, values: Values, lines: list[str], path: Path) -> Context:
        """A context for an external tests file: its own findings and lines, the same suite folder."""
        return replace(self, out=out, values=values, lines=lines, path=path, kept_assertions={})

    def outside_project(self, node: Node, reference: str, path: Path, use: str = "send it to a model") -> bool:
        """Report (and return True for) a reference whose file lies outside the project, unless files
        outside may be read: such a file is neither read by `check` nor sent by `run`. `use`: what the
        run would do with it (send it to a model, run it, copy it into the workspace…)."""
        if self.folder is None or self.fs.allow_outside:
            return False
        if not self.fs.outside(path, self.folder):
            links = self.fs.hard_linked(path)
            if not links:
                return False
            # A hard link is another name for a file that may lie anywhere: nothing on this side says where.
            self.out.warning("file-outside-project", node.span,
                             f"'{reference}' has {links} hard links, and evalspec cannot tell whether the others "
                             "lie outside the eval file's project: it does not read it, and `evalspec run` "
                             f"refuses to {use} unless given --allow-outside-files. Copy the file instead.")
            return True
        where = ("its repository" if self.fs.exists(self.fs.project_root(self.folder) / ".git")
                 else "its folder, as no folder above it holds .git")
        self.out.warning("file-outside-project", node.span,
                         f"'{reference}' is outside the eval file's project ({where}): evalspec does not read "
                         f"it, and `evalspec run` refuses to {use} unless given --allow-outside-files.")
        return True

    def not_a_file(self, node: Node, reference: str, path: Path, instead: str) -> bool:
        """Report (and return True for) a reference to something that is not a regular file (a FIFO, a
        device, a socket, a folder): evalspec never reads one (a FIFO would block, a device never end).
        `instead`: what the run does in its place."""
        if self.fs.is_file(path):
            return False
        kind = "a folder" if self.fs.is_dir(path) else "not a regular file (a FIFO, a device or a socket)"
        self.out.warning("file-not-regular", node.span,
                         f"'{reference}' is {kind}: evalspec reads only regular files, so it is not read; "
                         f"`evalspec run` {instead}.")
        return True

    @property
    def roots(self) -> list[Path]:
        """Where file references resolve: the file's folder, the eval file's folder and their parents."""
        if self.folder is None:
            return []
        roots = list(self.fs.search_roots(self.folder))
        if self.path is not None and self.path.parent != self.folder:
            roots.insert(0, self.path.parent)
        return roots

    def object(self, node: Node | None, spec: str, *, handled: Collection[str] = (),
               missing: dict[str, tuple[str, str] | None] | None = None, where: str | None = None,
               fixes: dict[str, object] | None = None) -> Entries | None:
        """`check_object` with AgentV's messages.

        `missing` maps a required field to (code, message) replacing the generic "needs" finding, or to
        None to drop it (the caller reports it itself). `fixes` maps a deprecated field to the Fix that
        repairs it.
        """
        spec_obj = _OBJECTS[spec]
        tmp = Findings()
        missing = missing or {}
        entries = check_object(node, spec_obj, tmp, REGISTRY, handled=handled, where=where,
                               unreported=_Unreported(missing) if missing else ())
        key_at = _KeysBySpan(entries) if tmp else None
        for f in tmp:
            assert key_at is not None
            if f.code == "missing-field":
                name = f.extra.get("field")
                if isinstance(name, str) and name in missing:
                    repl = missing[name]
                    if repl is None:
                        continue
                    f.code, f.message = repl
            elif f.code == "unknown-key":
                key = key_at(f.span)
                mistake = _KNOWN_MISTAKES.get((spec, key)) if key else None
                if mistake:
                    message, rename = mistake
                    f.message = message
                    f.fixes = (replace_fix(f"Rename '{key}' to '{rename}'", f.span, rename),) if rename else ()
            elif f.code == "deprecated-field" and fixes:
                key = key_at(f.span)
                fix = fixes.get(key or "")
                if fix is not None:
                    f.fixes = (fix,)  # type: ignore[assignment]
            self.out.append(f)
        if entries is not None:
            # check_object leaves deprecated fields the caller handles to the caller: say it here, once.
            for name in _deprecated_among(spec_obj, handled):
                pair = entries.found.get(name)
                hit = spec_obj.lookup(name)
                if pair is None or hit is None or not hit[0].deprecated or pair[0].value != name:
                    continue
                key_node = pair[0]
                fix = (fixes or {}).get(name)
                self.out.warning("deprecated-field", key_node.span, f"'{name}' is deprecated: {hit[0].deprecated}",
                                 tags=(Tag.DEPRECATED,), fixes=(fix,) if fix is not None else ())
        return entries

    def str_of(self, node: Node | None) -> str | None:
        return self.values.str_of(node)

    def script_tokens(self, command: Node) -> Iterator[tuple[Node, str]]:
        """The tokens of a command (an argv list, or one string split as a shell would) that name a local
        script, each with the node it is written in."""
        items = command.items if isinstance(command, Sequence) else [command]
        for item in items:
            text = self.str_of(item)
            if text is None:
                continue
            for token in [text] if isinstance(command, Sequence) else edits.split_command(text):
                if looks_like_script(token):
                    yield item, token

    def display(self, path: Path) -> str:
        """A path as messages show it: relative to the eval file's folder when below it."""
        if self.folder is not None:
            try:
                return str(path.relative_to(self.folder))
            except ValueError:
                pass
        return str(path)


_DEPRECATED_AMONG: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}


def _deprecated_among(spec: ObjectSpec, handled: Collection[str]) -> tuple[str, ...]:
    """The deprecated fields among `handled` (most objects have none), once per spec and tuple of them."""
    key = (spec.name, tuple(handled))
    found = _DEPRECATED_AMONG.get(key)
    if found is None:
        found = _DEPRECATED_AMONG[key] = tuple(
            n for n in handled if (hit := spec.lookup(n)) is not None and hit[0].deprecated)
    return found


class _Unreported:
    """The fields `missing` maps to None (their caller reports them), asked only of a missing required field:
    not a list made for every object."""

    __slots__ = ("_missing",)

    def __init__(self, missing: dict[str, tuple[str, str] | None]) -> None:
        self._missing = missing

    def __contains__(self, name: object) -> bool:
        return name in self._missing and self._missing[name] is None


class _KeysBySpan:
    """The key at a finding's span; indexed on first use (a scan per finding was quadratic: 5,000
    unknown keys took 6 s)."""

    def __init__(self, entries: Entries | None) -> None:
        self._entries = entries
        self._index: dict[Span, str] | None = None

    def __call__(self, span: Span) -> str | None:
        if self._entries is None:
            return None
        if self._index is None:
            self._index = {}
            for key, _ in self._entries.node.pairs:
                if isinstance(key, Scalar):
                    self._index.setdefault(key.span, str(key.value))
        return self._index.get(span)
