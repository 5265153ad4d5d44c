"""The README stays short and true: at most 250 lines, every relative link resolves, every `evalspec`
command it shows parses with the real CLI's options, and it never tells anyone to `pip install evalspec`
(another project's name on the package index)."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from evalspec.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_short_and_is_the_long_description() -> None:
    assert len(README.splitlines()) <= 250
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["readme"] == "README.md" and project["name"] == "evalspec-lsp"


def test_every_relative_link_and_picture_exists() -> None:
    targets = re.findall(r"\]\(([^)\s]+)\)", README)
    assert len(targets) > 10
    for target in targets:
        if "://" in target:
            continue
        assert (ROOT / target.split("#")[0]).exists(), target


def _commands() -> list[str]:
    out = []
    for block in re.findall(r"```sh\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("evalspec "):
                    out.append(part.split(">>")[0].strip())
    return out


@pytest.mark.parametrize("command", _commands())
def test_each_command_parses(command: str) -> None:
    argv = shlex.split(command)[1:]
    if argv == ["--version"]:
        with pytest.raises(SystemExit) as exited:
            build_parser().parse_args(argv)
        assert exited.value.code == 0
        return
    args = build_parser().parse_args(argv)
    assert args.command


def test_there_are_commands_for_check_run_report_and_rule() -> None:
    assert {c.split()[1] for c in _commands()} >= {"check", "run", "report", "rule", "init"}


def test_no_doc_says_pip_install_evalspec() -> None:
    places = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md")),
              *sorted((ROOT / "editors").glob("*/README.md")), *sorted((ROOT / "editors" / "vscode" / "src").glob("*.ts"))]
    for path in places:
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.search(r"pip install evalspec(?![-\w])", line):
                assert "unrelated project" in line, f"{path.relative_to(ROOT)}: {line}"
