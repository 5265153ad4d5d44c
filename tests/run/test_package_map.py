"""run/__init__.py is the map of the runner: every module of engine/run/ is on it, and everything it names
exists, so a newcomer can find the stages (plan → generate → score → write) and what runs them."""

from __future__ import annotations

import re
from pathlib import Path

import evalspec.run

RUN = Path(__file__).resolve().parents[2] / "engine" / "run"


def _named() -> set[str]:
    return set(re.findall(r"(?<![/\w])(\w+)\.py\b", evalspec.run.__doc__ or ""))


def test_every_module_of_the_runner_is_on_the_map() -> None:
    modules = {p.stem for p in RUN.glob("*.py") if p.stem != "__init__"}
    missing = sorted(modules - _named())
    assert not missing, f"engine/run/{missing[0]}.py is not on run/__init__.py's map: add it to the stage or group it belongs to"


def test_the_map_names_only_modules_that_exist() -> None:
    modules = {p.stem for p in RUN.glob("*.py")}
    assert sorted(_named() - modules) == []


def test_the_map_gives_the_stages_in_order() -> None:
    doc = evalspec.run.__doc__ or ""
    stages = [doc.index(f"{n}. {name}") for n, name in enumerate(("plan", "generate", "score", "write"), 1)]
    assert stages == sorted(stages)
    for module in ("plan.py", "generate.py", "score_functions.py", "score_judges.py", "score_scripts.py",
                   "score_embeddings.py", "write_weval.py", "write_agentv.py"):
        assert module in doc
