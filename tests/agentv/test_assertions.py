"""Assertion rules (agentv-compat-notes.md §4): types, common fields, type-specific fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import apply, at, check, codes, one


def _with(items: str, **kw: object) -> str:
    """A suite with one test whose `assert` list is `items` (YAML list lines, indented by 6)."""
    return "tests:\n  - id: t\n    input: hi\n    criteria: ok\n    assert:\n" + items


def _a(result):  # type: ignore[no-untyped-def]
    return result.suite.tests[0].assertions


@pytest.mark.parametrize("spelling", ["llm_judge", "llm-judge", "is_json", "is-json", "contains_any",
                                      "icontains-all", "starts_with", "ends-with"])
def test_kebab_and_snake_spellings_are_the_same_type(spelling: str) -> None:
    value = "\n        value: [a]" if "any" in spelling or "all" in spelling else (
        "\n        value: a" if "with" in spelling else "")
    result = check(_with(f"      - type: {spelling}{value}\n"))
    assert result.findings == []
    assert _a(result)[0].type == spelling.replace("_", "-")


def test_unknown_type_with_did_you_mean() -> None:
    text = _with("      - type: containz\n        value: x\n")
    f = one(check(text), "unknown-assertion-type")
    assert f.severity == "warning" and at(f) == (6, 15)
    assert f.message.startswith("Unknown assertion type 'containz'; did you mean 'contains'?")
    assert "type: contains\n" in apply(text, f.fixes[0])


def test_custom_assertion_file_makes_a_type_known(tmp_path: Path) -> None:
    text = _with("      - type: word_count\n        min: 3\n")
    files = {".agentv/assertions/word-count.ts": "export default {}\n"}
    result = check(text, tmp_path, name="evals/suite.eval.yaml", files=files)
    assert result.findings == []
    a = _a(result)[0]
    assert a.custom and a.type == "word-count" and a.config == {"min": 3}


def test_missing_type() -> None:
    f = one(check(_with("      - value: x\n")), "missing-type")
    assert f.message == "Assertion item is missing a 'type' field."


def test_an_item_must_be_a_mapping() -> None:
    f = one(check(_with("      - contains\n")), "invalid-assertion")
    assert f.message.startswith("Assertion item must be an object with a type field")


@pytest.mark.parametrize(("type_name", "message"), [
    ("contains", "Assertion type 'contains' requires a 'value' field (string)."),
    ("icontains", "Assertion type 'icontains' requires a 'value' field (string)."),
    ("starts_with", "Assertion type 'starts-with' requires a 'value' field (string)."),
    ("equals", "Assertion type 'equals' requires a 'value' field (string)."),
    ("regex", "Assertion type 'regex' requires a 'value' field (string)."),
    ("contains-any", "Assertion type 'contains-any' requires a 'value' field (non-empty string array)."),
    ("icontains_all", "Assertion type 'icontains-all' requires a 'value' field (non-empty string array)."),
])
def test_value_types_need_a_value(type_name: str, message: str) -> None:
    f = one(check(_with(f"      - type: {type_name}\n")), "missing-value")
    assert f.message == message and f.severity == "error" and at(f) == (6, 9)


def test_a_number_value_gets_a_quote_fix() -> None:
    text = _with("      - type: equals\n        value: 4\n")
    f = one(check(text), "missing-value")
    assert at(f) == (7, 16) and check(apply(text, f.fixes[0])).findings == []


def test_array_values_must_be_non_empty_string_lists() -> None:
    for value in ("[]", "hello", "[3, true]"):
        f = one(check(_with(f"      - type: contains-all\n        value: {value}\n")), "missing-value")
        assert "non-empty string array" in f.message


def test_items_that_are_not_strings_are_dropped_as_agentv_drops_them() -> None:
    """AgentV's loader keeps a value list's strings (and names the assertion after all its items): an `-any`
    then looks for fewer alternatives (stricter) and runs, with a warning; an `-all` would leave checks out:
    refused, with a quote fix."""
    text = _with("      - type: contains-any\n        value: [4, four]\n")
    result = check(text)
    f = one(result, "wrong-type")
    assert f.severity == "warning" and at(f) == (7, 17) and "looks for 'four' only" in f.message
    (a,) = _a(result)
    assert a.name == "contains-any-2" and a.config == {"value": ["four"]}
    assert check(apply(text, f.fixes[0])).findings == []  # quoted: "4"
    f = one(check(_with("      - type: icontains-all\n        value: [4, four]\n")), "wrong-type")
    assert f.severity == "error" and "leaving this check out" in f.message


def test_tolerance_is_read_as_agentv_reads_it() -> None:
    """AgentV keeps a number `tolerance` and drops any other (tolerance 0); `diff <= tolerance` with a
    negative or NaN one never matches: those run, with warnings. An infinite one matches everything: refused."""
    def field(tolerance: str) -> str:
        return _with("      - type: field-accuracy\n        fields:\n"
                     f"          - {{path: a, match: numeric_tolerance, tolerance: {tolerance}}}\n")

    text = field("'0.5'")
    f = one(check(text), "wrong-type")
    assert f.severity == "warning" and "AgentV ignores it" in f.message and "tolerance 0" in f.message
    assert check(apply(text, f.fixes[0])).findings == []  # written as the number 0.5
    for value in ("-1", ".nan"):
        f = one(check(field(value)), "out-of-range")
        assert f.severity == "warning" and "never matches" in f.message, value
    f = one(check(field(".inf")), "out-of-range")
    assert f.severity == "error" and "checks nothing" in f.message
    assert check(field("0.5")).findings == []


def test_invalid_regex() -> None:
    f = one(check(_with('      - type: regex\n        value: "([a-z]+"\n')), "invalid-regex")
    assert at(f) == (7, 16) and f.message.startswith("Invalid regex pattern '([a-z]+':")
    # AgentV's validator only warns and its run scores the assertion 0: a warning, and the file runs.
    assert f.severity == "warning" and "scores this assertion 0" in f.message


def test_javascript_named_groups_are_valid() -> None:
    assert check(_with('      - type: regex\n        value: "(?<year>\\\\d{4})"\n')).findings == []


def test_regex_flags() -> None:
    ok = check(_with('      - type: regex\n        value: "a"\n        flags: gim\n'))
    assert ok.findings == [] and _a(ok)[0].config == {"value": "a", "flags": "gim"}
    for flags, detail in (("ix", "unknown flag 'x'"), ("ii", "flag 'i' repeated"), ("uv", "cannot be combined")):
        result = check(_with(f'      - type: regex\n        value: "a"\n        flags: {flags}\n'))
        f = one(result, "invalid-regex-flags")
        # AgentV runs it and scores the assertion 0: a warning, and the flags are kept for the run
        assert detail in f.message and f.severity == "warning" and _a(result)[0].config["flags"] == flags


@pytest.mark.parametrize(("weight", "message"), [
    ("heavy", "Invalid weight for assertion 'contains': must be a number"),
    (".inf", "Invalid weight for assertion 'contains': must be finite (got Infinity)"),
    ("-.inf", "must be finite (got -Infinity)"),
    (".nan", "must be finite (got NaN)"),
    ("-1", "Invalid weight for assertion 'contains': must be non-negative (got -1)"),
    ("-0.5", "must be non-negative (got -0.5)"),
])
def test_weight_errors_make_the_assertion_invalid(weight: str, message: str) -> None:
    result = check(_with(f"      - type: contains\n        value: a\n        weight: {weight}\n"))
    f = one(result, "invalid-weight")
    assert f.severity == "error" and message in f.message and at(f) == (8, 17)
    assert _a(result) == []


def test_weight_zero_is_fine() -> None:
    assert check(_with("      - type: contains\n        value: a\n        weight: 0\n")).findings == []


@pytest.mark.parametrize(("required", "message"), [
    ("0", "Invalid 'required' value 0. When a number, it must be between 0 (exclusive) and 1 (inclusive)."),
    ("1.5", "Invalid 'required' value 1.5. When a number, it must be between 0 (exclusive) and 1 (inclusive)."),
    ("-0.2", "Invalid 'required' value -0.2. When a number"),
    ("yes", "Invalid 'required' value. Must be a boolean or a number between 0 (exclusive) and 1 (inclusive)."),
])
def test_required_out_of_range(required: str, message: str) -> None:
    f = one(check(_with(f"      - type: contains\n        value: a\n        required: {required}\n")),
            "invalid-required")
    assert f.message.startswith(message) and at(f) == (8, 19)


def test_required_and_negate_in_the_model() -> None:
    result = check(_with("      - {type: contains, value: a, required: true}\n"
                         "      - {type: contains, value: b, required: 0.6, negate: true, name: nb, weight: 2}\n"
                         "      - {type: contains, value: c}\n"))
    a, b, c = _a(result)
    assert (a.required, a.threshold) == (True, 0.8)
    assert (b.required, b.threshold, b.negate, b.name, b.weight) == (0.6, 0.6, True, "nb", 2.0)
    assert (c.required, c.threshold, c.name, c.weight) == (False, None, "contains-c", 1.0)  # AgentV's auto-name


def test_negate_must_be_boolean() -> None:
    result = check(_with("      - {type: contains, value: a, negate: maybe}\n"))
    f = one(result, "wrong-type")
    assert "'negate' must be true or false" in f.message
    # AgentV negates only on `negate: true`: anything else is ignored, a warning (load.jsonl 387, 489 …)
    assert f.severity == "warning" and result.suite.tests[0].assertions[0].negate is False  # type: ignore[union-attr]


def test_unknown_key_on_an_assertion() -> None:
    f = one(check(_with("      - type: contains\n        valu: a\n")), "unknown-key")
    assert "did you mean 'value'" in f.message


# --- code-judge -----------------------------------------------------------------------------------------

def test_code_judge_command_rules() -> None:
    f = one(check(_with("      - type: code-judge\n        command: []\n")), "invalid-command")
    assert f.message == "'command' cannot be empty."
    f = one(check(_with("      - type: code_judge\n        command: [bun, 3]\n")), "invalid-command")
    assert f.message == "command[1] must be a string." and at(f) == (7, 24)
    f = one(check(_with("      - type: code_judge\n        command: [7]\n")), "invalid-command")
    assert "[0] must be a string" in f.message
    f = one(check(_with("      - type: code-judge\n        cwd: .\n")), "missing-command")
    assert f.message.startswith("Assertion type 'code-judge' requires 'command'")


def test_string_script_is_deprecated_with_an_argv_fix() -> None:
    text = _with("      - type: code_judge\n        script: bun run x.ts\n")
    result = check(text)
    f = one(result, "deprecated-field")
    assert at(f) == (7, 9) and "'script' is deprecated" in f.message
    fixed = apply(text, f.fixes[0])
    assert "        command: [bun, run, x.ts]\n" in fixed
    assert check(fixed).findings == []
    assert _a(result)[0].config["command"] == ["bun", "run", "x.ts"]


def test_argv_script_is_renamed_to_command() -> None:
    text = _with("      - type: code_judge\n        script: [python, check.py]\n")
    fixed = apply(text, one(check(text), "deprecated-field").fixes[0])
    assert "command: [python, check.py]" in fixed


def test_string_command_warns_with_an_argv_fix() -> None:
    text = _with('      - type: code-judge\n        command: uv run "my check.py" --strict\n')
    f = one(check(text), "command-string")
    fixed = apply(text, f.fixes[0])
    assert 'command: [uv, run, "my check.py", --strict]' in fixed
    assert check(fixed).findings == []


def test_code_judge_scripts_must_exist(tmp_path: Path) -> None:
    text = _with("      - type: code-judge\n        command: [bun, run, ../judges/check.ts]\n"
                 "      - type: code-judge\n        command: [uv, run, check.py]\n        cwd: ../judges\n"
                 "      - type: code-judge\n        command: [bun, run, ./missing.ts]\n")
    # A repository, so that ../judges is inside the project (file-outside-project otherwise).
    result = check(text, tmp_path, name="evals/suite.eval.yaml",
                   files={"judges/check.ts": "", "judges/check.py": "", ".git/HEAD": ""})
    f = one(result, "missing-script")
    assert at(f) == (12, 29) and "Script './missing.ts' not found" in f.message
    a = _a(result)
    assert a[1].config["cwd"] == str((tmp_path / "judges").resolve())


def test_missing_cwd(tmp_path: Path) -> None:
    f = one(check(_with("      - type: code-judge\n        command: [echo]\n        cwd: ./nowhere\n"), tmp_path),
            "missing-cwd")
    assert "'./nowhere' not found" in f.message


def test_extra_code_judge_keys_are_passed_as_config() -> None:
    result = check(_with("      - type: code-judge\n        command: [echo]\n        expect_edited: [a.txt]\n"
                         "        config: {strict: true}\n        target: {max_calls: 10}\n"))
    assert result.findings == []
    config = _a(result)[0].config
    assert config["config"] == {"expect_edited": ["a.txt"], "strict": True} and config["target"] == {"max_calls": 10}


# --- judges ---------------------------------------------------------------------------------------------

def test_judge_prompt_files(tmp_path: Path) -> None:
    files = {"judges/good.md": "Answer: {{answer}}\n", "judges/bad.md": "Is it polite?\n"}
    text = _with("      - {type: llm-judge, prompt: ./judges/good.md}\n"
                 "      - {type: llm-judge, prompt: ./judges/bad.md}\n"
                 "      - {type: llm-judge, prompt: ./judges/none.md}\n"
                 "      - type: llm-judge\n        prompt: |\n          Score the tone of {{ answer }}.\n"
                 "      - type: llm-judge\n        prompt:\n          command: [bun, run, ./p.ts]\n"
                 "          config: {strict: true}\n")
    result = check(text, tmp_path, files={**files, "p.ts": ""})
    assert codes(result) == ["judge-prompt-variables", "missing-prompt-file"]
    assert one(result, "judge-prompt-variables").message.startswith(
        "Judge prompt './judges/bad.md' uses neither {{ answer }} nor {{ expected_output }}")
    assert one(result, "missing-prompt-file").severity == "warning"
    a = _a(result)
    assert a[0].config["prompt_path"] == str(tmp_path / "judges/good.md")
    assert a[4].config["prompt"] == {"command": ["bun", "run", "./p.ts"], "config": {"strict": True}}


def test_agent_judge_ranges() -> None:
    result = check(_with("      - {type: agent-judge, max_steps: 0, temperature: 3}\n"))
    assert codes(result) == ["out-of-range", "out-of-range"]


def test_rubrics_inside_judges_are_checked() -> None:
    f = one(check(_with("      - type: llm-judge\n        rubrics:\n          - id: a\n            weight: 1\n")),
            "missing-outcome")
    assert at(f) == (8, 13)


# --- tool-trajectory ------------------------------------------------------------------------------------

def test_invalid_trajectory_mode_lists_the_supported_modes() -> None:
    text = _with("      - type: tool_trajectory\n        mode: sometimes\n        expected: [{tool: a}]\n")
    f = one(check(text), "invalid-mode")
    assert f.message == ("Invalid tool_trajectory mode 'sometimes' (must be any_order, in_order, exact, subset "
                         "or superset).")
    g = one(check(text.replace("sometimes", "inorder")), "invalid-mode")
    assert "in_order" in apply(text.replace("sometimes", "inorder"), g.fixes[0])


def test_trajectory_mode_needs() -> None:
    f = one(check(_with("      - type: tool-trajectory\n        mode: any_order\n")), "missing-minimums")
    assert f.message.startswith("tool-trajectory mode any_order requires 'minimums'")
    for mode in ("in_order", "exact", "subset", "superset"):
        f = one(check(_with(f"      - type: tool-trajectory\n        mode: {mode}\n")), "missing-expected")
        assert f.message.startswith(f"tool-trajectory mode {mode} requires 'expected'")
    f = one(check(_with("      - type: tool-trajectory\n")), "invalid-mode")
    assert "needs a 'mode'" in f.message


def test_trajectory_details() -> None:
    ok = check(_with("""      - type: tool-trajectory
        mode: superset
        args_match: superset
        expected:
          - tool: search
            args: any
          - tool: fetch
            args: {url: x}
            max_duration_ms: 100
            args_match: [url]
      - type: tool-trajectory
        mode: any_order
        minimums: {search: 2, fetch: 0}
"""))
    assert ok.findings == []
    bad = check(_with("""      - type: tool-trajectory
        mode: any_order
        minimums: {search: -1, fetch: 1.5}
      - type: tool-trajectory
        mode: in_order
        expected:
          - args: {a: 1}
          - tool: b
            args: some
            maxDurationMs: 5
"""))
    assert codes(bad) == ["deprecated-alias", "invalid-value", "invalid-value", "invalid-value", "missing-field"]


def test_a_fractional_minimum_is_run_as_agentv_runs_it() -> None:
    """AgentV keeps any minimum ≥ 0 and compares `count >= minimum` (0.5 needs one call): a warning, not an
    error; a negative or null one (dropped by AgentV: a check not made) stays an error."""
    found = check(_with("      - type: tool-trajectory\n        mode: any_order\n        minimums: {a: 0.5, b: 2, c: -1, d: null}\n"))
    assert [(f.code, f.severity.name) for f in found.findings] == [
        ("invalid-value", "WARNING"), ("invalid-value", "ERROR"), ("invalid-value", "ERROR")]
    assert "1 call(s) or more meet it" in found.findings[0].message


def test_an_exploration_ratio_above_1_is_run() -> None:
    """AgentV takes any target_exploration_ratio ≥ 0 (one above 1 is never within a small tolerance)."""
    assert check(_with("      - type: execution-metrics\n        target_exploration_ratio: 1.5\n")).findings == []


# --- composite ------------------------------------------------------------------------------------------

def test_composite_needs_an_aggregator() -> None:
    f = one(check(_with("      - type: composite\n        assert:\n          - {type: is-json}\n")),
            "missing-aggregator")
    assert f.message.startswith("A composite needs an 'aggregator'")


def test_composite_children_and_aggregators() -> None:
    result = check(_with("""      - type: composite
        aggregator: {type: threshold, threshold: 0.5}
        assert:
          - {name: a, type: llm-judge}
          - {name: b, type: contains}
      - type: composite
        aggregator: {type: threshold}
        evaluators:
          - {name: a, type: is-json}
      - type: composite
        aggregator: {type: average}
        assert: [{type: is-json}]
"""))
    assert codes(result) == ["deprecated-alias", "invalid-aggregator", "missing-field", "missing-value"]
    assert one(result, "missing-field").message.startswith("A threshold aggregator needs 'threshold'")
    composite = _a(result)[0]
    assert composite.config["aggregator"] == {"type": "threshold", "threshold": 0.5}
    assert [c.name for c in composite.children] == ["a"]  # the invalid child is left out


# --- metrics --------------------------------------------------------------------------------------------

def test_metric_thresholds() -> None:
    result = check(_with("""      - {type: latency, threshold: 100}
      - {type: cost, budget: 0.1}
      - {type: latency}
      - {type: token-usage}
      - {type: execution-metrics}
      - {type: execution_metrics, maxToolCalls: 3, target_exploration_ratio: 0.5}
"""))
    assert codes(result) == ["deprecated-alias", "missing-field", "missing-field", "missing-field"]
    messages = sorted(f.message for f in result.findings if f.code == "missing-field")
    assert messages[0].startswith("Assertion type 'execution-metrics' requires at least one of 'max_tool_calls'")
    assert messages[1] == "Assertion type 'latency' requires 'max_ms'."
    a = _a(result)
    assert a[0].config == {"max_ms": 100} and a[1].config == {"max_usd": 0.1}
    assert a[-1].config == {"max_tool_calls": 3, "target_exploration_ratio": 0.5}


def test_camel_case_metric_fix() -> None:
    text = _with("      - type: execution-metrics\n        maxDurationMs: 1000\n")
    fixed = apply(text, one(check(text), "deprecated-alias").fixes[0])
    assert "max_duration_ms: 1000" in fixed and check(fixed).findings == []


def test_field_accuracy() -> None:
    assert check(_with("      - type: field-accuracy\n        fields:\n          - {path: a.b, match: exact}\n"
                       "        aggregation: all_or_nothing\n")).findings == []
    result = check(_with("      - type: field-accuracy\n        fields:\n          - {path: a, match: fuzzy}\n"
                         "      - type: field_accuracy\n        fields: []\n      - type: field-accuracy\n"))
    assert codes(result) == ["invalid-value", "missing-field", "missing-field"]


def test_inline_regex_flags_move_to_the_flags_field() -> None:
    text = _with('      - type: regex\n        value: "(?i)hello"\n')
    f = one(check(text), "invalid-regex")
    assert "inline flag group '(?i)' is not valid in JavaScript" in f.message
    fixed = apply(text, f.fixes[0])
    assert '        value: "hello"\n        flags: i\n' in fixed and check(fixed).findings == []


def test_regex_that_means_something_else_in_javascript() -> None:
    f = one(check(_with('      - type: regex\n        value: "\\\\p{L}+"\n')), "regex-warning")
    assert f.severity == "warning" and "only with the u flag" in f.message
    assert check(_with('      - type: regex\n        value: "\\\\p{L}+"\n        flags: u\n')).findings == []


def test_an_empty_regex_refuses_the_file() -> None:
    # AgentV's loader drops it ("Skipping regex evaluator …: missing value") and scores the test without it;
    # run, the empty pattern would pass anything: evalspec refuses the file (docs/reference-differences.md).
    result = check(_with('      - type: regex\n        value: ""\n        flags: i\n'))
    f = one(result, "missing-value")
    assert f.severity == "error" and "AgentV skips this assertion" in f.message


def test_regex_lint_follows_bun_for_agentv() -> None:
    # bun (AgentV) accepts inline modifiers and a name used twice in alternatives; Node 20 (Weval) does not.
    assert check(_with('      - type: regex\n        value: "(?i:abc)|(?<a>x)|(?<a>y)"\n')).findings == []
    f = one(check(_with('      - type: regex\n        value: "\\\\p{Script=Klingon}"\n        flags: u\n')),
            "invalid-regex")
    assert f.message.startswith("Invalid regex pattern '\\p{Script=Klingon}': invalid property expression (")


def test_composite_with_an_empty_child_list() -> None:
    f = one(check(_with("      - type: composite\n        aggregator: {type: weighted_average}\n        assert: []\n")),
            "missing-assert")
    assert f.message == "A composite needs at least one child assertion."


def test_cwd_dot_under_a_symlinked_folder_is_still_the_eval_files_folder(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    text = _with("      - type: code-judge\n        command: [uv, run, check.py]\n        cwd: .\n")
    f = one(check(text, tmp_path / "link"), "missing-script")
    assert "(relative to the eval file's folder)" in f.message


def test_a_judge_prompt_file_with_only_legacy_names_is_refused(tmp_path: Path) -> None:
    """AgentV v2.19.0's validateTemplateVariables wants {{ answer }} or {{ expected_output }}; it skips the
    assertion otherwise, and substitutes no legacy name ({{ candidate_answer }} reaches the judge as written)."""
    files = {"judges/old.md": "Answer: {{ candidate_answer }} vs {{ expected_messages }}\n"}
    result = check(_with("      - {type: llm-judge, prompt: ./judges/old.md}\n"), tmp_path, files=files)
    assert codes(result) == ["judge-prompt-variables"]
