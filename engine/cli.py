"""`evalspec`: check eval files, start one, print schemas, run suites, report results.

Exit codes: 0 clean (or ran), 1 findings that fail the check (errors; warnings too with --strict),
2 usage errors or unreadable input.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .eval_files import UsageError

if TYPE_CHECKING:
    import argparse

# Nothing heavier is imported here: `evalspec COMMAND --help` loads the parser alone, `evalspec
# --version` not even that (bench/cli_start.py); each command loads what it uses when it runs.


def main(argv: Sequence[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:  # answered before any parser is built
        print(f"evalspec {__version__}")
        return 0
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
    from .terminal_text import safe_streams

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
    except KeyboardInterrupt:  # Ctrl-C where no command handles it (a run's: as it prints its last lines)
        with contextlib.suppress(OSError, ValueError):
            print("\nevalspec: interrupted", file=sys.stderr)
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
    import argparse

    parser = argparse.ArgumentParser(
        prog="evalspec", description="Check and run Weval blueprints and AgentV eval files.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  evalspec init weval                        a starter blueprint\n"
               "  evalspec check .                           check every eval file below here\n"
               "  evalspec run blueprint.weval.yml -m echo   run offline; writes results and report.html\n"
               "  evalspec report OLD NEW -o diff.html       compare two runs\n"
               "  evalspec rule unknown-key                  what a finding code means, and the fix\n"
               "\n'evalspec COMMAND --help' describes each command.\n"
               "\ndocs: the guide and reference are docs/ of the source repository (`mkdocs serve` there builds\n"
               "the site); each finding's code links to its page (editors: the `docsUrl` setting or\n"
               "$EVALSPEC_DOCS_URL names a published site, else the page is written under ~/.cache/evalspec/docs).")
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
    check.add_argument("--select", action="append", default=[], metavar="CODE[,CODE…]",
                       help="report only these finding codes (globs: 'unknown-*'); replaces the configuration's "
                            "select")
    check.add_argument("--ignore", action="append", default=[], metavar="CODE[,CODE…]",
                       help="do not report these finding codes (globs); added to the configuration's ignore. An "
                            "ignored error does not fail the check")
    check.add_argument("--statistics", action="store_true",
                       help="print how many findings of each code, instead of the findings")
    check.add_argument("--no-config", action="store_true",
                       help="ignore evalspec.toml / pyproject.toml [tool.evalspec.check]")
    check.set_defaults(func=_cmd_check)

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
    from .rule_cli import add_rule_parser

    add_rule_parser(sub)
    return parser


def _cmd_check(args: argparse.Namespace) -> int:
    from .check_cli import cmd_check

    return cmd_check(args)


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
    import json

    from . import schemas

    print(json.dumps(schemas.load(args.format), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
