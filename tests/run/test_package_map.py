"""run/__init__.py is the map of the runner: every module of engine/run/ is on it, under its folder, and
everything it names exists, so a newcomer can find the stages (plan → generate → score → write) and what
runs them from the file list and the map."""

from __future__ import annotations

import re
from pathlib import Path

import evalspec.run

RUN = Path(__file__).resolve().parents[2] / "engine" / "run"
STAGES = ("plan", "generate", "score", "write")


def _doc() -> str:
    return evalspec.run.__doc__ or ""


def _named() -> set[str]:
    """The modules the map names, as paths under engine/run/: a name on a line is in the folder whose
    `folder/` heads that block (a block runs until the next `folder/` or an unindented-heading line)."""
    named: set[str] = set()
    folder = ""
    for line in _doc().splitlines():
        head = re.match(r"^    (?:\d\. )?(\w+)/\s", line)
        if head:
            folder = head[1] + "/"
        elif re.match(r"^    \S", line):
            folder = ""
        for name in re.findall(r"(?<![/\w])(\w+)\.py\b", line):
            named.add(folder + name + ".py")
    return named


def _modules() -> set[str]:
    return {p.relative_to(RUN).as_posix() for p in RUN.rglob("*.py")
            if p.name != "__init__.py" and "__pycache__" not in p.parts}


def test_every_module_of_the_runner_is_on_the_map() -> None:
    missing = sorted(_modules() - _named())
    assert not missing, f"engine/run/{missing[0]} is not on run/__init__.py's map: add it under its folder"


def test_the_map_names_only_modules_that_exist() -> None:
    assert sorted(_named() - _modules()) == []


def test_each_stage_is_a_folder_and_the_map_gives_them_in_order() -> None:
    doc = _doc()
    stages = [doc.index(f"{n}. {name}/") for n, name in enumerate(STAGES, 1)]
    assert stages == sorted(stages)
    for name in (*STAGES, "journal", "cost", "workspace"):
        init = RUN / name / "__init__.py"
        assert init.is_file(), f"engine/run/{name}/ is not a package"
        assert init.read_text(encoding="utf-8").startswith('"""'), (
            f"engine/run/{name}/__init__.py says what the stage does in its docstring")


def test_the_top_of_the_package_holds_only_what_runs_the_stages() -> None:
    """A newcomer reads the stages off the folder list: no stage module is left at the top."""
    top = {p.stem for p in RUN.glob("*.py")} - {"__init__"}
    # A new module goes in its stage's folder; one that runs the stages (or is the CLI's) is added here.
    assert top == {"runner", "pipeline", "weval_stages", "agentv_stages", "pool", "split", "events", "options",
                   "preflight", "cli", "render", "outcome", "merge", "merge_cli"}
