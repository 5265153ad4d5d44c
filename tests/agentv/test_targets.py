"""Targets files (agentv-compat-notes.md §7)."""

from __future__ import annotations

from .helpers import apply, at, codes, one, targets


def test_a_valid_targets_file() -> None:
    findings = targets("""
        $schema: agentv-targets-v2.2
        targets:
          - name: default
            provider: azure
            endpoint: ${{ AZURE_OPENAI_ENDPOINT }}
            api_key: ${{ AZURE_OPENAI_API_KEY }}
            model: ${{ AZURE_DEPLOYMENT_NAME }}
          - name: agent
            provider: cli
            command: bun run ./agent.ts --prompt {PROMPT} --output {OUTPUT_FILE}
            judge_target: default
            healthcheck: {command: bun run ./agent.ts --healthcheck}
          - name: mock
            provider: mock
            response: '{"riskLevel": "High"}'
          - {name: copilot, provider: copilot-cli, model: claude-haiku-4.5}
          - {name: templated, provider: "${{ PROVIDER }}"}
          - {name: delegated, use_target: default}
    """)
    assert findings == []


def test_a_target_level_workspace_template_is_refused_as_v2_19_refuses_it() -> None:
    findings = targets("""
        targets:
          - name: agent
            provider: cli
            command: ./a {PROMPT}
            workspace_template: ../ws
          - name: other
            provider: cli
            command: ./a {PROMPT}
            workspaceTemplate: ../ws
    """)
    assert codes(findings) == ["removed-field", "removed-field"]
    assert one(targets("targets:\n  - {name: a, provider: mock, workspace_template: w}\n"), "removed-field").message == (
        "target-level workspace_template has been removed. Use eval-level workspace.template.")


def test_targets_list_is_required() -> None:
    f = one(targets("foo: 1\n"), "missing-targets")
    assert f.message == "Missing or invalid 'targets' field (must be an array)."
    assert codes(targets("targets: {a: 1}\n")) == ["missing-targets"]


def test_names_are_required_and_unique() -> None:
    findings = targets("""
        targets:
          - {name: a, provider: mock}
          - {name: a, provider: mock}
          - {provider: mock}
    """)
    assert codes(findings) == ["duplicate-target-name", "missing-field"]
    f = one(findings, "duplicate-target-name")
    assert at(f) == (3, 12) and f.related[0].span.start_line == 1


def test_unknown_provider_with_did_you_mean() -> None:
    text = "targets:\n  - name: a\n    provider: azur\n"
    f = one(targets(text), "unknown-provider")
    assert f.severity == "warning" and f.message.startswith("Unknown provider 'azur'; did you mean 'azure'?")
    assert "provider: azure" in apply(text, f.fixes[0])
    assert codes(targets("targets:\n  - {name: a}\n")) == ["missing-provider"]


def test_literal_secrets_are_warned_with_a_fix() -> None:
    text = "targets:\n  - name: a\n    provider: openai\n    api_key: sk-abcdefghijklmnopqrstuvwx1234\n"
    f = one(targets(text), "literal-secret")
    assert f.severity == "warning" and at(f) == (4, 14)
    assert "${{ OPENAI_API_KEY }}" in f.message
    assert "api_key: ${{ OPENAI_API_KEY }}" in apply(text, f.fixes[0])
    # a key-looking value under any name
    g = one(targets("targets:\n  - {name: a, provider: anthropic, extra: sk-ant-abcdefghijklmnopqrstu123}\n"),
            "literal-secret")
    assert "looks like an API key" in g.message


def test_judge_target_must_exist() -> None:
    f = one(targets("targets:\n  - {name: judge, provider: mock}\n  - {name: a, provider: mock, judge_target: jugde}\n"),
            "unknown-target")
    assert "did you mean 'judge'" in f.message


def test_cli_command_and_placeholders() -> None:
    assert codes(targets("targets:\n  - {name: a, provider: cli}\n")) == ["missing-command"]
    f = one(targets("targets:\n  - {name: a, provider: cli, command: 'run {PROMT} {OUTPUT_FILE}'}\n"),
            "unknown-placeholder")
    assert f.message.startswith("Unknown CLI placeholder '{PROMT}'. Supported placeholders: {PROMPT}")


def test_target_name_must_be_a_non_empty_string() -> None:
    f = one(targets("targets:\n  - {name: '', provider: mock}\n"), "invalid-target-name")
    assert f.message == "Missing or invalid 'name' field (must be a non-empty string)."
