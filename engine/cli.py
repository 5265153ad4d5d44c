"""`evalspec`: check eval files, start one, print schemas, run suites, report results.

Exit codes: 0 clean (or ran), 1 findings that fail the check (errors; warnings too with --strict),
2 usage errors or unreadable input.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from . import __version__
from .analysis import Analysis, analyze_file
from .detect import FileKind, kind_from_name
from .finding_format import finding_json, format_finding
from .findings import Finding, Severity, Span
from .source import ParsedFile
from .terminal_text import safe_streams

_SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".ruff_cache",
              "dist", "build"}
_EXTENSIONS = (".yml", ".yaml", ".json")


class UsageError(Exception):
    pass


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        # The short-lived `evalspec` process (its entry point passes no argv): parsed files are large
        # acyclic trees that reference counting frees, so the cyclic collector would only rescan them.
        gc.disable()
    return _main(argv)


def _standard_streams_opened() -> None:
    """A closed standard descriptor (`evalspec check >&-`) opened on /dev/null: Python leaves sys.stdout
    None (every print an AttributeError in the stream wrapper), and the first file evalspec opens would
    take the free descriptor, so a code judge or cli target inheriting "stdout" would write into it."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            with contextlib.suppress(OSError):
                opened = os.open(os.devnull, os.O_RDWR)
                if opened != fd:  # the lowest free descriptor is `fd` itself unless a lower one is closed too
                    os.dup2(opened, fd)
                    os.close(opened)
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # noqa: SIM115  # the process's own


def _main(argv: Sequence[str] | None) -> int:
    if argv is None:
        _standard_streams_opened()
    # Model answers are printed (--json, the table's reasons): one holding a lone surrogate (decoded
    # from a `\ud800` escape) must print as that escape, not stop the run with UnicodeEncodeError.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    with safe_streams():  # no control character from a file, model or provider reaches the terminal raw
        return _command(argv)


def _command(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return 2
    code: int | None = None
    try:
        code = int(args.func(args))
        # Flushed here, where a closed pipe or a full disk can still be told apart and answered: left to
        # the interpreter's exit, the table still buffered failed as "Exception ignored … Broken pipe"
        # and exit status 120.
        sys.stdout.flush()
        return code
    except UsageError as exc:
        print(f"evalspec: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `evalspec check … | head`
        _silenced(sys.stdout)
        return code if code is not None else 0
    except OSError as exc:
        # Standard output that cannot be written (`> /dev/full`, a disk that fills, EIO on a hung-up
        # terminal): one clear line, not a traceback. Any other OSError is a bug that keeps its traceback.
        failed = getattr(sys.stdout, "failed", None) or getattr(sys.stderr, "failed", None)
        if failed is not exc:
            raise
        _silenced(sys.stdout)
        with contextlib.suppress(OSError, ValueError):
            print(f"evalspec: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        return 2


def _silenced(stream: object) -> None:
    """The stream's descriptor pointed at /dev/null, so the interpreter's last flush of what is still
    buffered does not fail again at exit ("Exception ignored … Broken pipe")."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())  # type: ignore[attr-defined]
        os.close(null)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalspec", description="Check and run Weval blueprints and AgentV eval files.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  evalspec init weval                        a starter blueprint\n"
               "  evalspec check .                           check every eval file below here\n"
               "  evalspec run blueprint.weval.yml -m echo   run offline; writes results and report.html\n"
               "  evalspec report OLD NEW -o diff.html       compare two runs\n"
               "\n'evalspec COMMAND --help' describes each command.")
    parser.add_argument("--version", action="version", version=f"evalspec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser(
        "check", help="validate eval files (folders are searched recursively)",
        description="Check Weval blueprints and AgentV eval files. On a terminal each finding is shown with its "
                    "source line and a caret under the range, in colour; piped, one line per finding "
                    "(path:line:col: severity[code]: message).")
    check.add_argument("paths", nargs="+", metavar="PATH",
                       help="eval files or folders (only files recognised as eval files are checked)")
    check.add_argument("--format", choices=("text", "concise", "full", "json", "github"), default="text",
                       help="text (default): full on a terminal, concise when piped; concise: one line per "
                            "finding; full: with the source line and a caret; json: a list of objects; "
                            "github: workflow annotations")
    check.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                       help="colour the full format (auto: on a terminal, unless NO_COLOR is set)")
    check.add_argument("--strict", action="store_true", help="also fail (exit 1) on warnings")
    check.add_argument("--models-dir", type=Path, metavar="DIR",
                       help="folder of Weval model collections (CORE.json, …)")
    check.add_argument("--quiet", "-q", action="store_true", help="no summary line")
    check.set_defaults(func=cmd_check)

    init = sub.add_parser(
        "init", help="write a small, commented starter eval file that runs offline",
        description="Write a starter Weval blueprint or AgentV eval file: valid, commented, and runnable "
                    "offline with `evalspec run FILE -m echo`.")
    init.add_argument("format", choices=("weval", "agentv"), help="which format to start with")
    init.add_argument("path", nargs="?", metavar="PATH",
                      help="the file to write, or a folder for the default name (blueprint.weval.yml, "
                           "suite.eval.yaml)")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    init.set_defaults(func=cmd_init)

    schema = sub.add_parser("schema", help="print the JSON Schema of a format",
                            description="Print the JSON Schema of a format (for editors and SchemaStore).")
    schema.add_argument("format", choices=("weval", "agentv"), help="which format's schema")
    schema.add_argument("--write", action="store_true", help="write schemas/*.json (for maintainers)")
    schema.set_defaults(func=cmd_schema)

    from .run.cli import add_run_parser  # only the parser: the runner itself loads when `run` runs

    add_run_parser(sub)
    from .run.merge_cli import add_merge_parser

    add_merge_parser(sub)
    from .report.cli import add_report_parser

    add_report_parser(sub)
    return parser


# --- check ----------------------------------------------------------------------------------------

def iter_eval_files(paths: Sequence[str]) -> Iterator[tuple[Path, bool]]:
    """Files to check: (path, named explicitly). Folders are walked; hidden and build folders skipped."""
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            yield p, True
        elif p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and (not d.startswith(".") or d == ".agentv"))
                for name in sorted(files):
                    if name.endswith(_EXTENSIONS):
                        yield Path(root) / name, False
        else:
            raise UsageError(f"no such file or folder: {raw}")


def cmd_check(args: argparse.Namespace) -> int:
    results: list[Analysis] = []
    for path, explicit in iter_eval_files(args.paths):
        # A JSON file in a folder is only a blueprint by its place (legacy JSON blueprints); reading
        # every package.json of a tree would be wasted work.
        if not explicit and path.suffix == ".json" and kind_from_name(path) is None:
            continue
        analysis = _check_one(path, args.models_dir)
        if analysis.kind is FileKind.NONE and not _crashed(analysis) and not (explicit and _too_large(analysis)) \
                and not _stopped(analysis):
            continue
        results.append(analysis)
    findings = [(a, f) for a in results for f in a.findings]
    fmt = args.format
    if fmt == "text":
        from .terminal import is_terminal

        fmt = "full" if is_terminal(sys.stdout) else "concise"
    if fmt == "json":
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
    errors = sum(len(a.errors) for a in results)
    warnings = sum(1 + _more(f) for _, f in findings if f.severity == "warning")
    total = sum(1 + _more(f) for _, f in findings)
    if not args.quiet and fmt in ("concise", "full"):
        print(f"{len(results):,} eval file(s) checked: {errors:,} error(s), {warnings:,} warning(s), "
              f"{total - errors - warnings:,} note(s)", file=sys.stderr)
    return 1 if errors or (args.strict and warnings) else 0


def _more(f: Finding) -> int:
    """How many more of its kind a finding stands for (analysis.capped)."""
    more = f.extra.get("more", 0)
    return more if isinstance(more, int) else 0


def _check_one(path: Path, models_dir: Path | None) -> Analysis:
    """One file's analysis; a bug in evalspec on one file is an error on that file, and the other files
    of a folder are still checked (never a traceback that hides them, never a silent pass)."""
    try:
        return analyze_file(path, models_dir=models_dir)
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


# --- init -----------------------------------------------------------------------------------------

def cmd_init(args: argparse.Namespace) -> int:
    from .starters import default_name, starter_text

    path = Path(args.path) if args.path else Path(default_name(args.format))
    if path.is_dir() or (args.path and args.path.endswith(("/", os.sep))):
        path = path / default_name(args.format)
    if path.exists() and not args.force:
        raise UsageError(f"{path} exists; pass --force to overwrite it")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(starter_text(args.format, str(path)), encoding="utf-8")
    print(f"wrote {path}")
    print(f"next: evalspec check {path} && evalspec run {path} -m echo")
    return 0


# --- schema ---------------------------------------------------------------------------------------

def cmd_schema(args: argparse.Namespace) -> int:
    if args.write:  # maintainers: regenerate the committed files from the registry
        from .schema_gen import write_all

        for path in write_all():
            print(f"wrote {path}", file=sys.stderr)
        return 0
    from . import schemas

    print(json.dumps(schemas.load(args.format), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
