"""Check an AgentV eval file (or a tests file, or a targets file) and build its normalized model.

Tiers as everywhere in evalspec: YAML syntax findings stay in `parsed.findings` (the caller shows
them); this adds structure and meaning. Nothing in the file is executed: scripts and prompt files are
only looked up (a prompt template is read, bounded, to check its variables).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping as MappingABC
from dataclasses import dataclass, field
from pathlib import Path

from ..file_source import DiskSource, FileSource
from ..findings import Findings, Span, in_text_order
from ..registry.agentv import TARGETS_SCHEMA_ID
from ..source import MAX_FILE_BYTES, Document, Mapping, Node, ParsedFile, Sequence
from .context import Budget, Context
from .files import FileSystem
from .interpolate import Values
from .model import AgentvSuite
from .suite import check_suite, check_test_list
from .targets import check_agentv_targets
from .testcase import SuiteDefaults
from .tests_files import Loaded, csv_tests, iter_jsonl_tests
from .yaml_tabs import tab_line_errors


@dataclass
class AgentvResult:
    suite: AgentvSuite | None  # None when the file is not usable as a suite (not a mapping, a targets file…)
    findings: Findings = field(default_factory=Findings)


def check_agentv(parsed: ParsedFile, path: Path | None, *, source: FileSource | None = None,
                 env: MappingABC[str, str] | None = None, allow_outside: bool = False,
                 project: Path | None = None, keep_tests: bool = True, processes: int | None = 1) -> AgentvResult:
    """Check one AgentV file. `path` locates relative references (None: an unsaved buffer, references
    are not resolved). `source` gives the files it refers to and the environment `${{ VAR }}` reads
    (None: the disk, with `env` or the process environment). A `.jsonl` or
    `.csv` path is read as a tests file from `parsed.text`; a YAML list is a tests file too; a
    `targets.yaml` is checked as a targets file. `allow_outside` and `project`: see FileSystem (files
    outside the project are reported and not read unless allowed). `keep_tests=False` (`evalspec check`,
    which reads only the findings): each test is checked and dropped, the suite's `tests` stay empty.
    `processes`: a streamed list of tests read in that many processes (None: as item_processes.parts says);
    raises item_processes.Unshared when the file must be read again in one."""
    source = source if source is not None else DiskSource(env)
    result = _check(parsed, path, source, FileSystem(source, allow_outside=allow_outside, project=project),
                    keep_tests, processes)
    in_text_order(result.findings)
    return result


def _check(parsed: ParsedFile, path: Path | None, source: FileSource, fs: FileSystem,
           keep_tests: bool = True, processes: int | None = 1) -> AgentvResult:
    out = Findings()
    path = Path(path) if path is not None else None
    folder = path.parent if path is not None else None
    # A streamed check (`check`, `run`) reads tests files up to the CLI's file cap, as it does the eval file
    budget = Budget(bytes=MAX_FILE_BYTES, limit=MAX_FILE_BYTES) if parsed.streamed else Budget()
    ctx = Context(out=out, values=Values(source.env), lines=parsed.lines, path=path, folder=folder,
                  fs=fs, budget=budget, streamed=parsed.streamed, keep_tests=keep_tests,
                  processes=processes if parsed.streamed else 1)
    if path is not None:
        ctx.budget.visited.add(source.resolve(path))
        suffix = path.suffix.lower()
        if suffix in (".jsonl", ".csv"):
            nodes = (iter_jsonl_tests(parsed.text, parsed.lines, out) if suffix == ".jsonl"
                     else csv_tests(parsed.text, out))
            return AgentvResult(_tests_file(ctx, nodes), out)

    tab_line_errors(parsed.text, parsed.lines, out)
    documents = [d for d in parsed.documents if d.root is not None]
    if not documents:
        return AgentvResult(None, out)
    if len(documents) > 1:
        out.error("multiple-documents", _marker_span(parsed, documents[1]),
                  "AgentV reads one YAML document per eval file; this second document is not read.")
    root = documents[0].root
    assert root is not None  # documents without a root were left out above
    ctx.values.scan(root, parsed.lines, out)

    if isinstance(root, Mapping):
        if _is_targets_file(root, path):
            out.extend(check_agentv_targets(parsed, path))
            return AgentvResult(None, out)
        return AgentvResult(check_suite(ctx, root), out)
    if isinstance(root, Sequence):
        if path is not None and path.name.lower().endswith((".eval.yaml", ".eval.yml")):
            # AgentV's validator: "File must contain a YAML object"; its loader refuses the file.
            out.error("not-an-eval-file", root.span, "File must contain a YAML object: an AgentV eval file is a "
                      "mapping with 'tests' (AgentV refuses a list here; a list of tests belongs in a tests "
                      "file that `tests:` names).")
            return AgentvResult(None, out)
        return AgentvResult(_tests_file(ctx, root.items, scanned=True), out)
    out.error("not-an-eval-file", root.span, "An AgentV eval file is a mapping with 'tests' (and optional "
              "metadata, execution and assert); a tests file is a list of tests.")
    return AgentvResult(None, out)



def _marker_span(parsed: ParsedFile, document: Document) -> Span:
    """The second document's `---` line, or its root's first line when it has no marker there.

    The document's own start can be a blank or directive line before the marker (`%YAML 1.2` then `---`),
    so `---`'s three columns are only taken on a line that holds them."""
    lines = parsed.lines
    root = document.root
    first = document.span.start_line
    last = root.span.start_line if root is not None else first
    for n in range(first, min(last, len(lines) - 1) + 1):
        # after a bare CR (a line break to YAML, not to the lines), the marker is inside a line: where the
        # document starts
        col = document.span.start_col if n == first else 0
        if lines[n].startswith("---", col):
            return Span(n, col, n, col + 3)
    if root is None or root.span.start_line >= len(lines):
        return Span(first, 0, first, 0)
    line, col = root.span.start_line, root.span.start_col
    # a root that starts after the line's last character (an empty one after a bare CR) is an empty range
    return Span(line, col, line, max(col, len(lines[line].rstrip("\r"))))

def _is_targets_file(root: Mapping, path: Path | None) -> bool:
    schema = root.get("$schema")
    if schema is not None and str(getattr(schema, "value", "")).startswith("agentv-targets"):
        return True
    return root.has("targets") and not root.has("tests") and (
        path is None or path.name in ("targets.yaml", "targets.yml") or TARGETS_SCHEMA_ID in str(path))


def _tests_file(ctx: Context, nodes: Iterable[Node], *, scanned: bool = False) -> AgentvSuite:
    """A tests file on its own: every test checked as AgentV would load it, without suite defaults.
    `scanned`: the nodes were scanned for `${{ VAR }}` with their document (a list at the root; each
    variable was reported twice)."""
    loaded = Loaded()
    if not ctx.streamed and not scanned:  # streamed, each is scanned as it is checked (suite.add_test_items)
        nodes = list(nodes)
        for node in nodes:
            ctx.values.scan(node, ctx.lines, ctx.out)
    tests = check_test_list(ctx, nodes, SuiteDefaults(), loaded)
    loaded.finish(ctx.out)
    return AgentvSuite.build(path=ctx.path, tests=tests, tests_files=loaded.files,
                                       span=Span(0, 0, max(len(ctx.lines) - 1, 0), 0))
