"""The one entry point of the core: text (and its path) in, plain data out.

`analyze` parses once, decides the format, runs that format's checker and returns findings and the
normalized model, all with spans. The CLI, the language server and the runner all start here.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping as AbcMapping
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, countOf, not_
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .detect import FileKind, detect
from .file_source import DiskSource, FileSource, RecordingSource, read_regular_bytes
from .findings import Finding, Related, Severity, Span, in_text_order
from .item_processes import Unshared
from .line_breaks import as_read
from .source import (
    MAX_BYTES,
    MAX_FILE_BYTES,
    ChunkCache,
    ParsedFile,
    materialize,
    nested_lazy,
    parse_yaml,
    too_large_message,
    unread_lazy,
)
from .validation.suggest import searches_limited

if TYPE_CHECKING:  # the checkers load with the first file of their format
    from .agentv.check import AgentvResult
    from .agentv.model import AgentvSuite
    from .weval.check import WevalResult
    from .weval.model import Blueprint

T = TypeVar("T")


@dataclass
class Analysis:
    text: str
    path: Path | None
    kind: FileKind
    parsed: ParsedFile
    findings: list[Finding] = field(default_factory=list)
    weval: WevalResult | None = None  # blueprints
    agentv: AgentvResult | None = None  # AgentV eval files
    # Data derived from this analysis on first use (the IDE layer's layout, search roots…), see
    # `memoised`. The one part of an Analysis that fills in after it is handed out; the rest never
    # changes.
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # Every file the check asked its FileSource about (read, listed or tested for), absolute: an editor
    # checks the file again when one of them changes.
    dependencies: frozenset[Path] = frozenset()
    # Errors past the first thousand or so of their kind in a file (see `capped`): not shown (the one
    # before them says how many follow), but still errors: a run refuses, `--skip-invalid` skips by them.
    # Warnings and notes past it are only counted.
    omitted: list[Finding] = field(default_factory=list, repr=False)

    def memoised(self, key: str, compute: Callable[[Analysis], T]) -> T:
        """`compute(self)`, computed once per analysis and kept under `key`."""
        try:
            return self.memo[key]
        except KeyError:
            value = self.memo[key] = compute(self)
            return value

    @property
    def blueprint(self) -> Blueprint | None:
        return self.weval.blueprint if self.weval is not None else None

    @property
    def suite(self) -> AgentvSuite | None:
        return self.agentv.suite if self.agentv is not None else None

    @property
    def errors(self) -> list[Finding]:
        """Every error, those omitted from `findings` too (made safe to show as `findings` are)."""
        shown = [f for f in self.findings if f.severity == "error"]
        if not self.omitted:
            return shown
        return shown + self.memoised("omitted errors", lambda a: _inside_the_text(
            [f for f in a.omitted if f.severity == "error"], a.parsed.lines))

    @property
    def error_count(self) -> int:
        """`len(self.errors)`, counted in C without making that list: a 4 MB file can have millions of
        errors, and the server asks (lenses, the Plan and Run commands) on its event loop, which making the
        list held for seconds (every request meanwhile answered "busy" by the guard)."""
        return (countOf(map(_severity_of, self.findings), _ERROR)
                + countOf(map(_severity_of, self.omitted), _ERROR))

    @property
    def shown_errors(self) -> list[Finding]:
        """The errors in `findings` (to print: the last of a kind says how many more there are)."""
        return [f for f in self.findings if f.severity == "error"]




@dataclass
class Caches:
    """What an editor keeps between analyses of one document (see engine/incremental.py)."""

    chunks: ChunkCache = field(default_factory=ChunkCache)
    prompts: Any = None  # weval.check.PromptCache, created on first use


def analyze(text: str, path: str | Path | None = None, *, kind: FileKind | None = None,
            models_dir: Path | None = None, source: FileSource | None = None,
            env: AbcMapping[str, str] | None = None, caches: Caches | None = None,
            allow_outside_files: bool = False, max_bytes: int = MAX_BYTES, streamed: bool = False,
            findings_only: bool = False, note_prompts: Callable[[], Any] | None = None,
            processes: int | None = 1) -> Analysis:
    """Check one file. `kind` forces the format (an editor remembers it while the file is broken).

    `source` is everything else the check may read: the files the text refers to (a suite's tests
    files, judge prompts, Weval model collections) and the environment (`${{ VAR }}`). The CLI passes
    the disk (`DiskSource`, also the default); the language server its open documents, then the disk.
    Nothing is read except through it; `Analysis.dependencies` lists what was asked for. `env` alone
    means the disk with that environment. `allow_outside_files`: read files the text refers to outside its
    project (`run --allow-outside-files`); without it they are reported (file-outside-project), not read.
    `max_bytes`: a larger text is one file-too-large finding (an editor buffer's limit unless told).
    `streamed` (check and run, `analyze_file`): a blueprint's prompts are parsed, checked and dropped one
    at a time, so the located tree of the whole file never exists; the findings and the model are the
    same, but `weval.prompt_nodes` is empty (the IDE layer needs the full analysis). `findings_only`
    (`evalspec check`): only the findings are read, so a blueprint's checked prompts and a suite's checked
    tests are not kept (its `prompts`, its `tests` are empty): the same findings, without storing a big
    file's prompts or tests (not with `caches`, whose kept prompts a later analysis hands out). `note_prompts`
    (a run's check): weval.check.check_weval's `note`. `processes` (streamed): a big list of items is read
    in that many processes (None: as many as item_processes.parts says), with the same findings and model."""
    recording = RecordingSource(source if source is not None else DiskSource(env))
    if len(text) <= max_bytes:  # (a larger text is one finding, parse_yaml: not worth a copy)
        text = as_read(text, path)  # a bare CR is a line break (line_breaks.py): the editor's lines are check's
    with searches_limited():
        result = _analyze(text, Path(path) if path is not None else None, kind, models_dir, recording, caches,
                          allow_outside_files, max_bytes, streamed and caches is None,
                          findings_only and caches is None, note_prompts, processes)
    result.dependencies = frozenset(recording.paths)
    return result


# The findings of a parse that stopped at one of its limits (source.py).
LIMIT_CODES = frozenset({"file-too-large", "yaml-alias-bomb", "yaml-too-deep", "yaml-too-many-errors"})


def _analyze(text: str, p: Path | None, kind: FileKind | None, models_dir: Path | None,
             source: FileSource, caches: Caches | None, allow_outside_files: bool = False,
             max_bytes: int = MAX_BYTES, streamed: bool = False, findings_only: bool = False,
             note_prompts: Callable[[], Any] | None = None, processes: int | None = 1) -> Analysis:
    parsed = parse_yaml(text, caches.chunks if caches is not None else None, max_bytes=max_bytes, streamed=streamed)
    parse_found = len(parsed.findings)  # a streamed list's items add theirs as they are read (by `detect` too)
    detected = kind if kind is not None else detect(text, p, parsed)
    result = Analysis(text, p, detected, parsed)
    if detected is FileKind.NONE:
        # Unrelated YAML: no findings, not even syntax errors, except a limit the parse hit (an alias
        # bomb, nesting too deep, a file too large), which stops it before it can tell what the file is:
        # one warning, so that a hostile file never passes in silence.
        result.findings = [dataclasses.replace(f, severity=Severity.WARNING)
                           for f in parsed.findings if f.code in LIMIT_CODES][:1]
        return result
    tests_file = detected is FileKind.AGENTV and p is not None and p.suffix.lower() in (".jsonl", ".csv")
    if parsed.streamed and (detected not in (FileKind.WEVAL, FileKind.AGENTV) or tests_file):
        materialize(parsed)  # only the Weval and AgentV checkers read a list's items once and keep none
        if len(parsed.findings) > parse_found and not tests_file:
            # A syntax error in an item read on its own (a targets file's `tests:` list, found by
            # bench/fuzz.py): a whole parse loses the document, and check must say what the editor says.
            return _analyze(text, p, kind, models_dir, source, caches, allow_outside_files, max_bytes, False,
                            findings_only, note_prompts)
    findings: list[Finding] = list(parsed.findings)
    if tests_file:
        findings = []  # a tests file read alone: JSON lines or CSV rows, checked line by line, not as YAML
    if detected is FileKind.WEVAL:
        from .weval.check import PromptCache, check_weval

        if caches is not None and caches.prompts is None:
            caches.prompts = PromptCache()
        read = len(parsed.findings)
        try:
            result.weval = check_weval(parsed, p, models_dir=models_dir, cache=caches.prompts if caches else None,
                                       source=source, keep_prompts=not findings_only, note=note_prompts,
                                       processes=processes if streamed else 1)
        except Unshared:  # what only a read in one process says (a syntax error): read so
            return _analyze(text, p, kind, models_dir, source, caches, allow_outside_files, max_bytes, streamed,
                            findings_only, note_prompts, 1)
        if unread_lazy(parsed) or (len(parsed.findings) > read and nested_lazy(parsed)):
            # A streamed list the check never read (under `tests:`): what it says was lost; or a syntax
            # error in an item of a list under a key, which a whole parse (the editor's) reads as losing the
            # document: check must say what the editor says (found by tests/test_fuzz.py).
            return _analyze(text, p, kind, models_dir, source, caches, allow_outside_files, max_bytes, False,
                            findings_only, note_prompts)
        findings += parsed.findings[read:]  # a streamed parse's items, found while they were checked
        findings += result.weval.findings
    elif detected is FileKind.AGENTV:
        from .agentv.check import check_agentv

        try:
            result.agentv = check_agentv(parsed, p, source=source, allow_outside=allow_outside_files,
                                         keep_tests=not findings_only, processes=processes if streamed else 1)
        except Unshared:  # what only a read in one process says (a syntax error, a tests file): read so
            return _analyze(text, p, kind, models_dir, source, caches, allow_outside_files, max_bytes, streamed,
                            findings_only, note_prompts, 1)
        if (len(parsed.findings) > parse_found or unread_lazy(parsed)) and not tests_file:
            # A syntax error in a streamed test (source.LazyItems): a whole parse reads a suite's document
            # as one and loses it, and check and run must say what the editor says: read it that way. So
            # too a streamed list the check never read (a second document's: a syntax error in it was lost).
            return _analyze(text, p, kind, models_dir, source, caches, allow_outside_files, max_bytes, False,
                            findings_only, note_prompts)
        findings += result.agentv.findings
    elif detected is FileKind.AGENTV_TARGETS:
        from .agentv.check import check_agentv_targets
        from .agentv.yaml_tabs import tab_line_errors

        findings += check_agentv_targets(parsed, p)
        findings += tab_line_errors(parsed.text, parsed.lines)
    in_text_order(findings)
    shown, result.omitted = capped(findings)
    result.findings = _inside_the_text(shown, parsed.lines)
    return result


# Findings of one kind (code) in one file beyond which the rest are summed up in one. A 4 MB file can
# make two million (a flow list of a million bad model ids): as diagnostics they took most of a minute
# to convert and send, and no one reads past the first screenful. The corpus has at most 23 of a kind.
MAX_PER_KIND = 1000


_path_of = attrgetter("path")
_code_of = attrgetter("code")


def capped(findings: list[Finding], limit: int = MAX_PER_KIND) -> tuple[list[Finding], list[Finding]]:
    """`findings` (in text order) split into those shown and the errors omitted: at most `limit` + 1 of
    each code per file are shown, the first `limit` as they are, then the next one, still a true finding
    at its own place, its message saying how many more of its kind follow unlisted (`extra["more"]`).

    Every pass over all the findings is made in C (map, compress, list.index): a 4 MB file can make
    millions, and those past the cap should cost next to nothing; only the first `limit` + 1 of a kind
    past it are looked at one by one."""
    codes = list(map(_code_of, findings))
    keys: list[Any] = codes if not any(map(_path_of, findings)) else list(zip(map(_path_of, findings), codes,
                                                                              strict=True))
    counts = Counter(keys)
    over = {key: n for key, n in counts.items() if n > limit + 1}  # the kinds past the cap
    if not over:
        return findings, []
    keep = list(map(not_, map(over.__contains__, keys)))  # True: shown
    last_shown: list[tuple[int, Any]] = []  # for each kind past the cap, where its summing-up finding is
    for key in over:
        at = -1
        for _ in range(limit + 1):
            at = keys.index(key, at + 1)
            keep[at] = True
        last_shown.append((at, key))
    shown = list(compress(findings, keep))
    rest = list(compress(findings, map(not_, keep)))
    # the others are only counted (a million of them took 400 MB)
    omitted = list(compress(rest, map(_ERROR.__eq__, map(_severity_of, rest))))
    for at, key in last_shown:
        f = findings[at]
        more = over[key] - limit - 1
        where = "this file" if f.path is None else "that file"
        shown[keep[:at].count(True)] = dataclasses.replace(
            f, message=f"{f.message} (and {more:,} more '{f.code}' finding{'s' if more > 1 else ''} after this one in {where}, "
                       f"not listed: only the first {limit + 1:,} of each kind are)", extra={**f.extra, "more": more})
    return shown, omitted


_severity_of = attrgetter("severity")
_ERROR = str(Severity.ERROR)


def analyze_file(path: str | Path, **kw: Any) -> Analysis:
    """A file on disk, as `evalspec check` and `run` read it: up to MAX_FILE_BYTES (a bigger file is not
    read at all, so its size costs no memory)."""
    p = Path(path)
    limit = kw.setdefault("max_bytes", MAX_FILE_BYTES)
    try:
        size = p.stat().st_size
        if size > limit:
            a = Analysis("", p, kw.get("kind") or _kind_of_head(p), ParsedFile(text="", lines=[""], too_large=True))
            a.findings = [Finding("file-too-large", Severity.ERROR, too_large_message(size, limit), Span(0, 0, 0, 0))]
            return a
        read = read_regular_bytes(p, limit)
        if read is None:  # a FIFO, a device, a folder (or a file that grew past the limit meanwhile)
            raise OSError(0, "not a regular file" if size <= limit else "it grew past the size limit")
        raw = read
    except OSError as exc:
        parsed = ParsedFile(text="")
        a = Analysis("", p, FileKind.NONE, parsed)
        a.findings = [Finding("unreadable", Severity.ERROR, f"Cannot read the file: {exc.strerror}", Span(0, 0, 0, 0))]
        return a
    text = raw.decode("utf-8", errors="replace")
    del raw, read  # the bytes are not needed again (16 MB for a 100,000-prompt blueprint)
    kw.setdefault("streamed", True)
    return analyze(text, p, **kw)


def _kind_of_head(path: Path) -> FileKind:
    """The format of a file too large to read, from its name or its first 64 KB."""
    with path.open("rb") as f:
        head = f.read(65536).decode("utf-8", errors="replace")
    head = head[: head.rfind("\n") + 1] or head
    return detect(head, path, parse_yaml(head))


def _inside_the_text(findings: list[Finding], lines: list[str]) -> list[Finding]:
    """The last guard of a promise every check keeps on its own: a finding's range is well-formed (start
    before end, inside the text), and its message holds no registered secret. A range that is not (a bug)
    is pulled inside rather than sent to an editor that would reject the whole report; a fix whose edit
    is not is dropped, never applied. Such a finding is replaced by a corrected copy: the caches hand the
    same finding to the next analysis, and an analysis already returned never changes."""
    from .providers.redact import redact

    out = findings
    for i, f in enumerate(findings):
        # A message may quote a value `${{ VAR }}` put there (an assertion type, a regex): a secret's
        # value never reaches the terminal, a JSON report or an editor's diagnostics.
        message = redact(f.message)
        if message is not f.message:
            if out is findings:
                out = list(findings)
            f = out[i] = dataclasses.replace(f, message=message)
        if f.path is not None:
            continue  # about another file, in that file's lines
        span, related, fixes = f.span, f.related, f.fixes
        if not _fits(span, lines):
            span = _pulled_in(span, lines)
        if related and not all(_fits(r.span, lines) for r in related):
            related = tuple(Related(_pulled_in(r.span, lines), r.message) for r in related)
        if fixes and not all(_fits(e.span, lines) for x in fixes for e in x.edits):
            fixes = tuple(x for x in fixes if all(_fits(e.span, lines) for e in x.edits))
        if span is not f.span or related is not f.related or fixes is not f.fixes:
            if out is findings:
                out = list(findings)
            out[i] = dataclasses.replace(f, span=span, related=related, fixes=fixes)
    return out


def _fits(span: Span, lines: list[str]) -> bool:
    sl, sc, el, ec = span
    return (0 <= sl <= el < len(lines) and 0 <= sc <= len(lines[sl]) and 0 <= ec <= len(lines[el])
            and (sl < el or sc <= ec))


def _pulled_in(span: Span, lines: list[str]) -> Span:
    last = len(lines) - 1

    def point(line: int, col: int) -> tuple[int, int]:
        line = max(0, min(line, last))
        return line, max(0, min(col, len(lines[line])))

    start, end = point(span.start_line, span.start_col), point(span.end_line, span.end_col)
    return Span(*start, *max(start, end))

