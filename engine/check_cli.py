"""`evalspec check PATH…`: the findings of eval files, as ruff shows its own (full excerpts on a terminal,
one line each when piped, JSON, GitHub annotations), filtered by `--select` / `--ignore` and the eval
repository's configuration (check_config.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .analysis import Analysis, analyze_file
from .detect import FileKind, kind_from_name
from .eval_files import UsageError, iter_eval_files
from .finding_format import finding_json, format_finding
from .findings import Finding, Severity, Span
from .source import ParsedFile


def cmd_check(args: argparse.Namespace) -> int:
    from .check_config import ConfigError, code_filter

    try:
        first = Path(args.paths[0])
        keep = code_filter(args.select, args.ignore, use_config=not args.no_config,
                           start=first if first.is_dir() else first.parent)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    results: list[Analysis] = []
    for path, explicit in iter_eval_files(args.paths):
        # A JSON file in a folder is only a blueprint by its place (legacy JSON blueprints); reading
        # every package.json of a tree would be wasted work.
        if not explicit and path.suffix == ".json" and kind_from_name(path) is None:
            continue
        analysis = _check_one(path, args.models_dir)
        if analysis.kind is FileKind.NONE and not _crashed(analysis) and not (explicit and _too_large(analysis)) \
                and not _stopped(analysis):
            if explicit:  # named on the command line: say why nothing was checked, never skip it in silence
                analysis.findings = [_not_eval_file(path), *analysis.findings]
                results.append(analysis)
            continue
        results.append(analysis)
    every = [(a, f) for a in results for f in a.findings]
    findings = [(a, f) for a, f in every if keep.keeps(f.code)]
    ignored = sum(1 + _more(f) for _, f in every) - sum(1 + _more(f) for _, f in findings)
    fmt = args.format
    if fmt == "text":
        from .terminal import is_terminal

        fmt = "full" if is_terminal(sys.stdout) else "concise"
    if args.statistics:
        _statistics(findings, as_json=fmt == "json")
    elif fmt == "json":
        json.dump([finding_json(a, f) for a, f in findings], sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    elif fmt == "full":
        from .finding_format import display_path
        from .terminal import excerpt, source_lines, use_color

        color = use_color(sys.stdout, choice=args.color)
        for a, f in findings:
            print(excerpt(f, display_path(a, f), source_lines(a.text, a.path, f.path), color=color) + "\n")
    else:
        for a, f in findings:
            print(format_finding(a, f, github=fmt == "github"))
    # Counted with those past the first thousand of their kind in a file (the last listed says how many).
    # An error left out by --select / --ignore does not fail the check (as ruff).
    errors = sum(1 + _more(f) for _, f in findings if f.severity == "error")
    by_severity = {sev: sum(1 + _more(f) for _, f in findings if f.severity == sev) for sev in ("warning", "info", "hint")}
    if not args.quiet and fmt in ("concise", "full"):
        words = [f"{errors:,} error(s)", f"{by_severity['warning']:,} warning(s)", f"{by_severity['info']:,} info"]
        if by_severity["hint"]:
            words.append(f"{by_severity['hint']:,} hint(s)")
        if ignored:
            words.append(f"{ignored:,} ignored (--select/--ignore"
                         + (f", {keep.source}" if keep.source else "") + ")")
        checked = sum(1 for a in results if a.kind is not FileKind.NONE or _crashed(a) or _too_large(a) or _stopped(a))
        print(f"{checked:,} eval file(s) checked: {', '.join(words)}", file=sys.stderr)
    return 1 if errors or (args.strict and by_severity["warning"]) else 0


def _not_eval_file(path: Path) -> Finding:
    return Finding("not-checked", Severity.INFO,
                   "Not a Weval blueprint or an AgentV eval file: nothing was checked. evalspec knows a file by its "
                   "name (*.weval.yml, *.eval.yaml, a .yml under blueprints/), its $schema, or a first line "
                   "`# evalspec: weval` (or agentv)", Span(0, 0, 0, 0))


def _statistics(findings: list[tuple[Analysis, Finding]], *, as_json: bool) -> None:
    """`--statistics`: one line per code, the commonest first (as ruff's)."""
    counts: dict[tuple[str, str], int] = {}
    for _, f in findings:
        key = (f.code, str(f.severity))
        counts[key] = counts.get(key, 0) + 1 + _more(f)
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if as_json:
        json.dump([{"code": c, "severity": s, "count": n} for (c, s), n in ordered], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    width = max((len(f"{n:,}") for n in counts.values()), default=1)
    sev_width = max((len(s) for _, s in counts), default=1)
    for (code, sev), n in ordered:
        print(f"{n:>{width},}  {sev:<{sev_width}}  {code}")


def _more(f: Finding) -> int:
    """How many more of its kind a finding stands for (analysis.capped)."""
    more = f.extra.get("more", 0)
    return more if isinstance(more, int) else 0


def _check_one(path: Path, models_dir: Path | None) -> Analysis:
    """One file's analysis; a bug in evalspec on one file is an error on that file, and the other files
    of a folder are still checked (never a traceback that hides them, never a silent pass)."""
    try:
        # only the findings are read; a big file's items in a process a core (item_processes.py)
        return analyze_file(path, models_dir=models_dir, findings_only=True, processes=None)
    except Exception as exc:  # a bug, not bad input: bad input is a finding
        a = Analysis("", path, FileKind.NONE, ParsedFile(text=""))
        a.findings = [Finding("internal-error", Severity.ERROR,
                              f"evalspec failed on this file ({type(exc).__name__}: {exc}); it is not checked. "
                              "Please report this with the file.", Span(0, 0, 0, 0))]
        return a


def _crashed(a: Analysis) -> bool:
    return any(f.code == "internal-error" for f in a.findings)


def _stopped(a: Analysis) -> bool:
    """A file of no known format whose parse stopped at an alias bomb or at nesting too deep: its one
    warning is shown (a large file of another kind in a folder is not: the size alone says nothing)."""
    return any(f.code in ("yaml-alias-bomb", "yaml-too-deep") for f in a.findings)


def _too_large(a: Analysis) -> bool:
    """Not read, so its format is unknown: a file named on the command line is still reported."""
    return any(f.code == "file-too-large" for f in a.findings)


