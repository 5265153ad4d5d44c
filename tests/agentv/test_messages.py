"""Input and expected output: message roles, content blocks, tool calls, shorthands."""

from __future__ import annotations

from pathlib import Path

from .helpers import apply, at, check, codes, one


def _test(body: str) -> str:
    return "tests:\n  - id: t\n    criteria: ok\n" + body


def test_roles_are_system_user_assistant_tool() -> None:
    result = check(_test("""    input:
      - {role: system, content: a}
      - {role: user, content: b}
      - {role: assistant, content: c}
      - {role: tool, content: d, name: search, tool_call_id: x1}
"""))
    assert result.findings == []
    assert [m.role for m in result.suite.tests[0].input_messages] == ["system", "user", "assistant", "tool"]  # type: ignore[union-attr]


def test_invalid_role_with_did_you_mean() -> None:
    text = _test("    input:\n      - role: usr\n        content: hi\n")
    f = one(check(text), "invalid-role")
    assert at(f) == (5, 15) and f.message.startswith("Invalid role 'usr'. Must be one of: system, user, assistant, tool")
    assert "role: user" in apply(text, f.fixes[0])
    # AgentV's loader leaves the message out and runs the test: a warning, and the message is left out
    assert f.severity == "warning" and "AgentV leaves this message out" in f.message


def test_a_message_with_an_unknown_role_is_left_out() -> None:
    result = check(_test("    input:\n      - {role: user, content: hi}\n      - {role: human, content: x}\n"))
    assert [(f.code, f.severity) for f in result.findings] == [("invalid-role", "warning")]
    assert [m.content for m in result.suite.tests[0].input_messages] == ["hi"]  # type: ignore[union-attr]


def test_missing_role() -> None:
    f = one(check(_test("    input:\n      - content: hi\n")), "invalid-role")
    assert at(f) == (5, 9) and "needs a 'role'" in f.message


def test_content_forms() -> None:
    result = check(_test("""    input:
      - role: user
        content:
          - Plain text item
          - type: text
            value: Review this
          - type: json
            value: {a: 1}
          - type: image
            value: data:image/png;base64,AAAA
      - role: user
        content: {request: {type: check}}
"""))
    assert result.findings == []
    msgs = result.suite.tests[0].input_messages  # type: ignore[union-attr]
    assert [b.type for b in msgs[0].content] == ["text", "text", "json", "image"]
    assert msgs[1].content == {"request": {"type": "check"}}


def test_content_block_rules() -> None:
    result = check(_test("""    input:
      - role: user
        content:
          - type: txt
            value: x
          - type: text
          - value: no type
          - 5
"""))
    assert codes(result) == ["invalid-content", "invalid-content-block", "invalid-content-block",
                             "invalid-content-type"]
    assert one(result, "invalid-content-type").message.startswith("Unknown content type 'txt'; use one of text, "
                                                                  "file, image, json. Did you mean 'text'?")
    assert one(result, "invalid-content").message.startswith("Content array items must be strings or objects")
    # AgentV keeps those three blocks and its prompt has nothing for them: warnings, left out of the prompt
    assert [f.severity for f in result.findings if f.code != "invalid-content"] == ["warning"] * 3


def test_content_must_be_present_unless_tool_calls() -> None:
    f = one(check(_test("    input:\n      - role: user\n")), "invalid-content")
    assert f.message.startswith("Missing 'content' field (must be a string, array, or object)")
    ok = check(_test("    input: hi\n    expected_output:\n      - role: assistant\n        tool_calls:\n"
                     "          - tool: search\n"))
    assert ok.findings == []


def test_content_of_the_wrong_type() -> None:
    f = one(check(_test("    input:\n      - role: user\n        content: 5\n")), "invalid-content")
    assert at(f) == (6, 18) and "found a number" in f.message


def test_file_blocks_resolve_from_the_eval_file(tmp_path: Path) -> None:
    result = check(_test("""    input:
      - role: user
        content:
          - type: file
            value: ./prompts/system.md
          - type: file
            value: ./prompts/missing.md
"""), tmp_path, files={"prompts/system.md": "Be brief."})
    f = one(result, "missing-file")
    assert f.severity == "warning" and at(f) == (10, 20)
    blocks = result.suite.tests[0].input_messages[0].content  # type: ignore[union-attr]
    assert blocks[0].resolved_path == tmp_path / "prompts/system.md" and blocks[1].resolved_path is None


def test_file_blocks_search_parent_folders(tmp_path: Path) -> None:
    result = check(_test("    input:\n      - role: user\n        content:\n          - type: file\n"
                         "            value: shared/guide.md\n"),
                   tmp_path, name="evals/suite.eval.yaml", files={"shared/guide.md": "x", ".git/HEAD": "ref"})
    assert result.findings == []  # the repository (the folder holding .git) is the project


def test_tool_calls_belong_to_assistant_messages_and_use_input() -> None:
    text = _test("""    input: hi
    expected_output:
      - role: user
        content: x
        tool_calls:
          - tool: search
            args: {q: 1}
""")
    result = check(text)
    assert codes(result) == ["tool-calls-role", "unknown-key"]
    f = one(result, "unknown-key")
    assert f.message == "A tool call's arguments go in 'input', not 'args'."
    assert "input: {q: 1}" in apply(text, f.fixes[0])


def test_role_markers_in_content() -> None:
    f = one(check(_test("    input: 'Please @[Assistant]: reply'\n")), "role-marker")
    assert f.message == ("Content contains potential role marker '@[Assistant]:'. This may confuse agentic "
                         "providers or cause prompt injection.")


def test_input_must_be_a_string_or_a_list() -> None:
    f = one(check(_test("    input: {text: hi}\n")), "invalid-input")
    assert f.message.startswith("Invalid 'input' field (must be a string or array of messages)")


def test_expected_output_shorthands() -> None:
    result = check("""
        tests:
          - {id: s, input: hi, expected_output: The answer is 4}
          - id: m
            input: hi
            expected_output: {riskLevel: High, reasoning: x}
          - id: l
            input: hi
            expected_output: [1, 2]
          - id: one
            input: hi
            expected_output: {role: assistant, content: done}
    """)
    assert result.findings == []
    tests = {t.id: t for t in result.suite.tests}  # type: ignore[union-attr]
    assert [(m.role, m.content) for m in tests["s"].expected_messages] == [("assistant", "The answer is 4")]
    assert [(m.role, m.content) for m in tests["m"].expected_messages] == [
        ("assistant", {"riskLevel": "High", "reasoning": "x"})]
    assert tests["l"].expected_messages[0].content == [1, 2]
    assert tests["one"].expected_messages[0].content == "done"
    # What AgentV's judges get as {{ reference_answer }}: JSON.stringify(content, null, 2) (yaml-parser.ts).
    assert tests["m"].reference_answer == '{\n  "riskLevel": "High",\n  "reasoning": "x"\n}'
    assert tests["l"].reference_answer == "[\n  1,\n  2\n]"
    assert tests["one"].reference_answer == "done"


def test_expected_output_of_the_wrong_type() -> None:
    f = one(check(_test("    input: hi\n    expected_output: 4\n")), "invalid-expected-output")
    assert f.message.startswith("Invalid 'expected_output' field (must be a string, object, or array)")


def test_a_message_must_be_a_mapping() -> None:
    f = one(check(_test("    input:\n      - hello\n")), "invalid-message")
    assert at(f) == (5, 9) and f.message.startswith("Message must be an object")
