"""The normalized model: defaults, precedence and shorthands (agentv-compat-notes.md §2–§4, §6)."""

from __future__ import annotations

from .helpers import check

SUITE = """
execution:
  target: default
  trials: {count: 3}
input:
  - role: system
    content: You are a support agent.
assert:
  - {name: fast, type: latency, max_ms: 1000}
tests:
  - id: inherits
    input: Hello
    criteria: Greets
    assert:
      - {type: contains, value: Hello}
  - id: skips
    input: Hello
    criteria: Greets
    skip_defaults: true
    assert:
      - {type: contains, value: Hi}
  - id: skips-by-execution
    input: Hello
    criteria: Greets
    execution: {skip_defaults: true}
"""


def test_defaults_are_applied_unless_skip_defaults() -> None:
    result = check(SUITE)
    # AgentV v2.19 reads skip_defaults under `execution:` only: the test-level one is ignored (load.jsonl 175)
    assert [(f.code, f.severity) for f in result.findings] == [("ignored-field", "warning")]
    suite = result.suite
    assert suite is not None
    assert suite.target == "default" and suite.trials == {"strategy": "pass_at_k", "count": 3}
    assert [m.role for m in suite.input_defaults] == ["system"]
    tests = {t.id: t for t in suite.tests}
    t = tests["inherits"]
    assert [(m.role, m.content) for m in t.input_messages] == [("system", "You are a support agent."),
                                                                ("user", "Hello")]
    assert [a.name for a in t.assertions] == ["contains-Hello", "fast"]  # AgentV's auto-name
    assert [m.role for m in tests["skips"].input_messages] == ["system", "user"]
    assert [a.type for a in tests["skips"].assertions] == ["contains", "latency"]
    assert tests["skips-by-execution"].assertions == [] and tests["skips-by-execution"].uses_default_judge


def test_suite_level_execution_evaluators_are_defaults_when_there_is_no_assert() -> None:
    result = check("""
        execution:
          evaluators:
            - {type: contains, value: x}
        tests:
          - {id: t, input: hi, criteria: ok}
    """)
    assert [a.config for a in result.suite.tests[0].assertions] == [{"value": "x"}]  # type: ignore[union-attr]


def test_test_assert_beats_execution_evaluators() -> None:
    result = check("""
        tests:
          - id: t
            input: hi
            execution:
              evaluators: [{type: contains, value: from-execution}]
            criteria: ok
          - id: u
            input: hi
            assert: [{type: contains, value: from-assert}]
            execution:
              evaluators: [{type: contains, value: from-execution}]
    """)
    t, u = result.suite.tests  # type: ignore[union-attr]
    assert [a.config["value"] for a in t.assertions] == ["from-execution"]
    assert [a.config["value"] for a in u.assertions] == ["from-assert"]


def test_suite_input_string_and_spans() -> None:
    result = check("input: Be brief.\ntests:\n  - id: t\n    input: hi\n    criteria: ok\n")
    suite = result.suite
    assert suite is not None
    t = suite.tests[0]
    assert [(m.role, m.content) for m in t.input_messages] == [("user", "Be brief."), ("user", "hi")]
    assert t.id_span is not None and (t.id_span.start_line, t.id_span.start_col) == (2, 8)
    assert t.criteria == "ok" and t.criteria_span is not None and t.span.start_line == 2


def test_assertion_normalization() -> None:
    result = check("""
        tests:
          - id: t
            input: hi
            assert:
              - {type: starts_with, value: He}
              - type: code_judge
                command: [uv, run, check.py]
              - type: tool_trajectory
                mode: in_order
                argsMatch: superset
                expected: [{tool: search}]
    """)
    a = result.suite.tests[0].assertions  # type: ignore[union-attr]
    assert [(x.type, x.name, x.weight) for x in a] == [("starts-with", "starts-with-He", 1.0),
                                                       ("code-judge", "code-judge", 1.0),
                                                       ("tool-trajectory", "tool-trajectory", 1.0)]
    assert a[1].config == {"command": ["uv", "run", "check.py"], "config": {}}  # no path: cwd unknown
    assert a[2].config == {"mode": "in_order", "args_match": "superset", "expected": [{"tool": "search"}]}
    assert a[0].span.start_line == 4


def test_metadata_and_legacy_target() -> None:
    result = check("""
        name: pack
        description: d
        version: 1.0
        tags: [a, b]
        target: legacy
        execution:
          targets: [x, y]
        tests:
          - {id: t, input: hi, criteria: ok}
    """)
    suite = result.suite
    assert suite is not None
    assert (suite.name, suite.version, suite.tags, suite.target, suite.targets) == (
        "pack", "1.0", ["a", "b"], "legacy", ["x", "y"])
