"""The plan gathers a test whose assertions are all of built-in, runnable deterministic types without a
look at each (plan/agentv.py `_Facts.deterministic`): what it gathers is what the look gives."""

from __future__ import annotations

from pathlib import Path

from evalspec.analysis import analyze
from evalspec.run.events import Cell
from evalspec.run.plan.agentv import TargetSpec, _Facts

_TESTS = {
    "plain": ['{type: contains, value: "a"}', "{type: latency, max_ms: 100}"],
    "judged": ['{type: contains, value: "a"}', "{type: llm-judge, prompt: Is it right?}"],
    "script": ['{type: contains, value: "a"}', "{type: code-judge, command: [python, j.py]}"],
    "custom": ['{type: contains, value: "a"}', "{type: my-own-check}"],
    "group": ['{type: composite, assert: [{type: contains, value: "q"}], aggregator: {type: weighted_average}}'],
    "default-judge": [],
}


def _suite() -> str:
    lines = ["name: s", "description: d", "tests:"]
    for name, asserts in _TESTS.items():
        lines += [f"  - id: {name}", "    input: question", "    criteria: c"]
        if asserts:
            lines += ["    assert:", *(f"      - {a}" for a in asserts)]
    return "\n".join(lines) + "\n"


def test_a_deterministic_test_is_gathered_as_the_look_at_each_assertion_gathers_it(tmp_path: Path) -> None:
    suite = analyze(_suite(), tmp_path / "s.eval.yaml", env={}).agentv.suite  # type: ignore[union-attr]
    assert suite is not None and [t.id for t in suite.tests] == list(_TESTS)
    for judge in (None, TargetSpec("j", model="echo")):
        fast, looked = _Facts(suite, False), _Facts(suite, False)
        said = {}
        for test in suite.tests:
            said[test.id] = fast.deterministic(test)
            fast.add(Cell(test.id, "t"), judge, test, said[test.id])
            looked.add(Cell(test.id, "t"), judge, test)
        assert said == {name: name == "plain" for name in _TESTS}
        assert fast.facts() == looked.facts()
        assert looked.facts().unjudged is (judge is None)  # the judged and default-judge tests need one
