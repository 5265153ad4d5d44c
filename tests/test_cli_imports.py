"""The command line loads what a command uses (issue 30, item 7): `evalspec --version` and `evalspec
COMMAND --help` load no analysis, YAML, report or runner; bench/cli_start.py measures what that saves."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("yaml", "evalspec.analysis", "evalspec.source", "evalspec.report.build", "evalspec.report.sources",
         "evalspec.run.runner", "httpx", "aiohttp", "orjson")


def _modules(*argv: str) -> set[str]:
    # As the `evalspec` entry point runs it: main() with the process's own argv; the modules at exit.
    code = ("import sys, json, atexit\n"
            "atexit.register(lambda: sys.__stderr__.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
            f"sys.argv = ['evalspec', *{list(argv)!r}]\n"
            "from evalspec.cli import main\nmain()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def test_version_loads_nothing_of_the_engine() -> None:
    loaded = _modules("--version")
    assert not [m for m in HEAVY if m in loaded]
    assert "argparse" not in loaded  # answered before any parser is built


def test_help_loads_the_parser_only() -> None:
    for command in ("check", "run", "report"):
        loaded = _modules(command, "--help")
        assert not [m for m in HEAVY if m in loaded], command
