"""An assertion item whose text was checked before in the same file gives that check moved to its place
(assertions._kept_or_checked): the same findings, fixes and assertions as checking it again, wherever the
item stands (another line, another column, block or flow), and no two tests share an assertion's config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalspec.agentv import assertions
from evalspec.analysis import analyze, analyze_file

_ASSERTS = [
    '{type: contains, value: "x", wieght: 2}',  # an unknown key, with its did-you-mean fix
    '{type: regex, value: "(?i)abc"}',  # an invalid regex, with its fix
    "{type: latency, max_ms: 60000}",
    '{type: contains-any, value: [a, b, 3]}',
    '{type: equals, value: ""}',  # a value AgentV skips: an error
    "{type: is-json, required: 2}",  # an invalid `required`
    '{type: and, assert: [{type: contains, value: "q"}]}',  # a composite (not kept, its child is)
]


def _suite(tests: int) -> str:
    lines = ["name: s", "description: d", "tests:"]
    for i in range(tests):
        lines += [f"  - id: t{i}", f"    input: question {i}", "    criteria: c", "    assert:"]
        for k, a in enumerate(_ASSERTS):
            lines.append(("      - " if (i + k) % 2 else "      -   ") + a)  # two columns
        lines += ["      - type: contains", "        value: block", "        wieght: 1"]  # a block mapping
    return "\n".join(lines) + "\n"


def _facts(a):  # type: ignore[no-untyped-def]
    suite = a.agentv.suite
    return ([(f.code, f.severity, f.message, f.span, f.fixes, f.related) for f in a.findings],
            [repr(t) for t in suite.tests] if suite is not None else None)


def _kept_is_fresh(tmp_path: Path, text: str, streamed: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The suite's analysis with kept checks, asserted equal to one checking every item again."""
    path = tmp_path / "s.eval.yaml"
    path.write_text(text, encoding="utf-8")
    kept = analyze_file(path) if streamed else analyze(text, path, env={})
    monkeypatch.setattr(assertions, "SAME_ITEMS", 0)  # every item checked
    fresh = analyze_file(path) if streamed else analyze(text, path, env={})
    assert _facts(kept) == _facts(fresh)
    return kept


@pytest.mark.parametrize("streamed", [False, True])
def test_kept_checks_give_what_checking_again_gives(tmp_path: Path, streamed: bool,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    kept = _kept_is_fresh(tmp_path, _suite(12), streamed, monkeypatch)
    codes = [f.code for f in kept.findings]
    assert codes.count("unknown-key") == 24 and codes.count("invalid-regex") == 12  # each test's own
    unknown = [f for f in kept.findings if f.code == "unknown-key"]
    assert len({f.span for f in unknown}) == 24  # each on its own item's key
    assert all(f.fixes and e.span == f.span for f in unknown for x in f.fixes for e in x.edits)


def test_each_test_has_its_own_assertions(tmp_path: Path) -> None:
    text = _suite(3)
    a = analyze(text, tmp_path / "s.eval.yaml", env={})
    tests = a.agentv.suite.tests  # type: ignore[union-attr]
    first, second = (next(x for x in t.assertions if x.type == "contains-any") for t in tests[:2])
    assert first.config == second.config and first.config is not second.config
    assert first.config["value"] is not second.config["value"]
    assert first.span.start_line != second.span.start_line


def _valued_suite(tests: int) -> str:
    """Items that differ from test to test in their `value` only: kept by their text but the value
    (assertions._value_template), or not (a name, an empty or a number value, an unknown key)."""
    lines = ["name: s", "description: d", "tests:"]
    for i in range(tests):
        lines += [f"  - id: t{i}", f"    input: question {i}", "    criteria: c", "    assert:",
                  f'      - {{type: contains, value: "{i * 7}", required: true}}',  # lengths vary: 0, 7, 14 …
                  f"      - {{type: equals, value: v{i}}}",  # plain
                  f"      - {{type: icontains, value: 'x{i}', name: named}}",  # a name: checked each time
                  f'      - {{type: starts-with, value: "{"" if i % 3 == 0 else i}"}}',  # empty: an error
                  f"      - {{type: ends-with, value: {i}}}",  # a number: an error
                  f'      - {{type: contains, value: "{i}", wieght: 2}}',  # an unknown key: found, not kept
                  f'      - {{type: regex, value: "a{i}"}}']  # REGEX: not a value type's rule
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("streamed", [False, True])
def test_items_differing_in_their_value_give_what_checking_again_gives(
        tmp_path: Path, streamed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = _kept_is_fresh(tmp_path, _valued_suite(12), streamed, monkeypatch)
    tests = kept.agentv.suite.tests  # type: ignore[union-attr]
    names = [a.name for t in tests for a in t.assertions if a.type == "contains" and a.required]
    assert names == [f"contains-{i * 7}" for i in range(12)]
    assert all(a.span[3] - a.span[1] == len(f'{{type: contains, value: "{i * 7}", required: true}}')
               for i, t in enumerate(tests) for a in t.assertions if a.type == "contains" and a.required)
