"""Completion in both formats, mostly in documents that do not parse yet (the normal case)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.findings import Span
from evalspec.ide.completion import CompletionItem, complete

from .helpers import apply, at, cursor, load

HEADER = "title: T\nmodels:\n  - openai:gpt-4o-mini\n---\n"

# (name, format, text, labels that must be offered, labels that must not)
CASES = [
    ("prompt keys, half typed", "weval", HEADER + """
- id: p1
  prompt: Hi
  shou‸
""", ["should", "should_not", "ideal", "messages", "weight"], ["id", "prompt", "promptText", "title", "$contains"]),
    ("prompt keys after a value with a colon", "weval", HEADER + """
- prompt: "Part 1: intro"
  ‸
""", ["should", "id"], ["prompt", "promptText"]),
    ("aliases of a present field are gone too", "weval", HEADER + """
- promptText: Hi
  idealResponse: x
  ‸
""", ["should", "citation"], ["prompt", "ideal", "idealResponse", "promptText"]),
    ("point functions after $", "weval", HEADER + """
- prompt: Hi
  should:
    - $con‸
""", ["$contains", "$contains_any_of", "$not_contains", "$icontains_word", "$js", "$ref", "$word_count_between"],
     ["should", "id", "weight"]),
    ("point functions in should_not", "weval", HEADER + """
- prompt: Hi
  should_not:
    - ‸
""", ["$contains", "$matches", "text", "fn"], ["weight", "should"]),
    ("point functions inside an alternative path", "weval", HEADER + """
- prompt: Hi
  should:
    - - first path
      - $‸
""", ["$contains", "$imatch_all_of"], []),
    ("function point options", "weval", HEADER + """
- prompt: Hi
  should:
    - $contains: x
      ‸
""", ["weight", "multiplier", "citation"], ["$contains", "text", "fn"]),
    ("full point object", "weval", HEADER + """
- prompt: Hi
  should:
    - point: Is polite
      ‸
""", ["weight", "citation"], ["text", "point", "$contains"]),
    ("header keys", "weval", """
title: T
‸
---
- prompt: x
""", ["models", "system", "temperatures", "evaluationConfig", "point_defs", "description"], ["title", "configTitle",
                                                                                           "should"]),
    ("render_as values", "weval", """
title: T
render_as: ‸
---
- prompt: x
""", ["markdown", "html", "plaintext"], ["title"]),
    ("judge approach values", "weval", """
evaluationConfig:
  llm-coverage:
    judges:
      - model: openai:gpt-4o
        approach: ‸
---
- prompt: x
""", ["standard", "prompt-aware", "holistic"], []),
    ("message role values", "weval", HEADER + """
- messages:
    - role: ‸
""", ["user", "assistant", "system"], []),
    ("message keys and shorthand", "weval", HEADER + """
- messages:
    - ‸
""", ["role", "content", "user", "assistant", "ai"], ["should"]),
    ("noCache booleans", "weval", """
noCache: ‸
---
- prompt: x
""", ["true", "false"], []),
    ("fn names without $", "weval", HEADER + """
- prompt: Hi
  should:
    - fn: ‸
""", ["contains", "matches_all_of", "word_count_between"], ["$contains"]),
    ("suite keys", "agentv", """
description: d
‸
tests: []
""", ["name", "execution", "assert", "workspace", "input", "$schema"], ["description", "tests", "eval_cases"]),
    ("test keys", "agentv", """
tests:
  - id: a
    ‸
""", ["input", "criteria", "expected_output", "assert", "execution", "metadata"], ["id", "tests", "type"]),
    ("assertion types", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - type: ‸
""", ["contains", "regex", "llm-judge", "code-judge", "rubrics", "tool-trajectory", "field-accuracy",
      "execution-metrics", "is-json", "composite", "latency", "cost", "token-usage", "agent-judge", "equals",
      "icontains-any"], ["value", "input"]),
    ("assertion fields follow the type", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - type: regex
        ‸
""", ["value", "flags", "weight", "required", "negate", "name"], ["type", "criteria", "command", "max_ms"]),
    ("code-judge fields", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - type: code_judge
        ‸
""", ["command", "cwd", "script"], ["value", "prompt"]),
    ("assertion without a type yet", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - ‸
""", ["type", "name", "weight", "required", "negate"], ["value", "input"]),
    ("rubric criterion keys", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - type: rubrics
        criteria:
          - id: c1
            ‸
""", ["outcome", "weight", "required", "required_min_score", "score_ranges"], ["id", "type"]),
    ("trajectory modes", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - type: tool-trajectory
        mode: ‸
""", ["any_order", "in_order", "exact", "subset", "superset"], []),
    ("trials strategy", "agentv", """
execution:
  trials:
    strategy: ‸
tests: []
""", ["pass_at_k", "mean", "confidence_interval"], []),
    ("trials keys", "agentv", """
execution:
  trials:
    ‸
tests: []
""", ["count", "strategy", "cost_limit_usd"], ["target"]),
    ("execution keys", "agentv", """
execution:
  ‸
tests: []
""", ["target", "targets", "trials", "cache", "total_budget_usd"], ["count"]),
    ("workspace enums", "agentv", """
workspace:
  mode: ‸
tests: []
""", ["pooled", "temp", "static"], []),
    ("workspace keys", "agentv", """
workspace:
  ‸
tests: []
""", ["template", "isolation", "mode", "hooks", "repos"], []),
    ("message roles", "agentv", """
tests:
  - id: a
    input:
      - role: ‸
""", ["system", "user", "assistant", "tool"], []),
    ("content block types", "agentv", """
tests:
  - id: a
    input:
      - role: user
        content:
          - type: ‸
""", ["text", "file", "image", "json"], []),
    ("composite children", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - type: composite
        assert:
          - type: ‸
""", ["contains", "llm-judge"], []),
    ("aggregator types", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - type: composite
        aggregator:
          type: ‸
""", ["weighted_average", "threshold"], ["contains"]),
]


def labels(text: str, fmt: str, *, snippets: bool = True) -> list[str]:
    analysis, line, col = cursor(text, fmt)
    return [i.label for i in complete(analysis, line, col, snippets=snippets).items]


@pytest.mark.parametrize("name,fmt,text,wanted,unwanted", CASES, ids=[c[0] for c in CASES])
def test_offered(name: str, fmt: str, text: str, wanted: list[str], unwanted: list[str]) -> None:
    got = labels(text, fmt)
    missing = [w for w in wanted if w not in got]
    assert not missing, f"missing {missing} in {got}"
    extra = [u for u in unwanted if u in got]
    assert not extra, f"unexpected {extra}"


def items(text: str, fmt: str, *, snippets: bool = True) -> dict[str, CompletionItem]:
    analysis, line, col = cursor(text, fmt)
    return {i.label: i for i in complete(analysis, line, col, snippets=snippets).items}


def test_function_snippet_and_plain_insert_text() -> None:
    text = HEADER + "- prompt: Hi\n  should:\n    - $con‸\n"
    with_snippets = items(text, "weval")
    assert with_snippets["$contains_at_least_n_of"].insert_text == \
        '\\$contains_at_least_n_of: [${1:2}, ["${2:first}", "${3:second}", "${4:third}"]]'
    assert with_snippets["$contains_at_least_n_of"].is_snippet
    assert with_snippets["$word_count_between"].insert_text == "\\$word_count_between: [${1:10}, ${2:200}]"
    plain = items(text, "weval", snippets=False)
    assert plain["$contains_at_least_n_of"].insert_text == "$contains_at_least_n_of: "
    assert not plain["$contains_at_least_n_of"].is_snippet
    assert plain["$contains"].replace_span == Span(6, 6, 6, 10)  # `$con` is replaced
    assert plain["$contains"].filter_text == "$contains"
    assert "graded" in plain["$contains_all_of"].detail and "binary" in plain["$contains"].detail


def test_applying_a_function_completion_gives_the_point() -> None:
    text = HEADER + "- prompt: Hi\n  should:\n    - $con‸\n"
    clean, line, col = at(text)
    item = {i.label: i for i in complete(load(clean, "weval"), line, col, snippets=False).items}["$contains"]
    assert item.replace_span is not None
    from evalspec.findings import Edit

    after = apply(clean, [Edit(item.replace_span, item.insert_text + '"x"')])
    assert after.endswith('    - $contains: "x"\n')
    assert not load(after, "weval").errors


def test_aliases_and_deprecations() -> None:
    got = items(HEADER + "- prompt: Hi\n  ‸\n", "weval")
    assert got["idealResponse"].alias_of == "ideal" and got["idealResponse"].detail == "alias of ideal"
    assert got["expect"].alias_of == "should"
    assert got["ideal"].alias_of is None and not got["ideal"].deprecated
    assert got["ideal"].sort_text < got["idealResponse"].sort_text
    header = items("title: T\n‸\n---\n- prompt: x\n", "weval")
    assert header["id"].deprecated and header["defs"].deprecated and header["defs"].alias_of == "point_defs"
    ordinary = [i.sort_text for i in header.values() if not i.deprecated]
    assert all(header["defs"].sort_text > s for s in ordinary)  # deprecated names sort last
    test = items("tests:\n  - id: a\n    ‸\n", "agentv")
    assert test["evaluators"].deprecated and test["evaluators"].alias_of == "assert"
    assert test["expected_outcome"].deprecated and test["rubrics"].deprecated
    assert test["input"].alias_of == "input_messages" and not test["input"].deprecated


def test_assertion_types_prefer_kebab_case() -> None:
    got = items("tests:\n  - id: a\n    input: hi\n    assert:\n      - type: ‸\n", "agentv")
    assert got["code_judge"].alias_of == "code-judge"
    assert got["code-judge"].sort_text < got["code_judge"].sort_text
    assert "script" in got["code-judge"].documentation and "```yaml" in got["code-judge"].documentation


def test_key_snippets_indent_in_full() -> None:
    got = items(HEADER + "- prompt: Hi\n  ‸\n", "weval")
    assert got["should"].insert_text == "should:\n    - $0"
    assert got["render_as"].insert_text == "render_as: ${1|markdown,html,plaintext|}"
    plain = items(HEADER + "- prompt: Hi\n  ‸\n", "weval", snippets=False)
    assert plain["should"].insert_text == "should: "


def test_renaming_a_key_keeps_its_colon() -> None:
    got = items(HEADER + "- prompt: Hi\n  sho‸uld_nt: [a]\n", "weval")
    assert got["should_not"].insert_text == "should_not"
    assert got["should_not"].replace_span == Span(5, 2, 5, 11)


def test_bare_line_in_a_list_gets_a_dash() -> None:
    got = items(HEADER + "- prompt: Hi\n  should:\n    - a\n    ‸\n", "weval", snippets=False)
    assert got["$contains"].insert_text == "- $contains: "


def test_space_after_a_bare_colon() -> None:
    got = items("title: T\nrender_as:‸\n---\n- prompt: x\n", "weval")
    assert got["html"].insert_text == " html"


def test_value_in_quotes() -> None:
    got = items('title: T\nrender_as: "ht‸"\n---\n- prompt: x\n', "weval")
    assert got["html"].insert_text == "html" and got["html"].replace_span == Span(1, 12, 1, 14)


def test_ref_names_from_point_defs_while_the_prompt_is_broken() -> None:
    text = """
point_defs:
  polite: {$icontains: please}
  brief: "r.length < 200"
---
- prompt: x
  should:
    - $ref: ‸
  shou
"""
    got = items(text, "weval")
    assert set(got) == {"polite", "brief"} and got["polite"].kind == "reference"
    keys = items(text.replace("$ref: ‸", "$r‸"), "weval")
    assert keys["$ref"].insert_text == "\\$ref: ${1|polite,brief|}"


def test_ref_names_while_the_header_is_broken() -> None:
    text = "title: T\npoint_defs:\n  polite: {$icontains: please}\nmod\n---\n- prompt: x\n  should:\n    - $ref: ‸\n"
    assert labels(text, "weval") == ["polite"]


def test_model_ids(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "CORE.json").write_text(json.dumps(["openai:gpt-4.1", "anthropic:claude-3-5-haiku"]))
    (tmp_path / "blueprints").mkdir()
    (tmp_path / ".git").mkdir()
    path = tmp_path / "blueprints" / "x.yml"
    text = """
models:
  - together:meta-llama/Llama-3-8b
  - ‸
evaluationConfig:
  llm-coverage:
    judges:
      - model: xai:grok-3
---
- prompt: x
"""
    clean, line, col = at(text)
    result = complete(load(clean, "weval", path), line, col, snippets=True)
    got = {i.label: i for i in result.items}
    assert result.is_incomplete
    assert got["CORE"].detail == "collection · 2 models" and "openai:gpt-4.1" in got["CORE"].documentation
    assert {"openai:", "anthropic:", "google:", "openrouter:", "together:meta-llama/Llama-3-8b", "xai:grok-3",
            "openai:gpt-4.1"} <= set(got)
    assert all(i.kind == "model" for i in got.values())
    judge = at(text.replace("  - ‸\n", "").replace("model: xai:grok-3", "model: op‸"))
    assert "openai:" in [i.label for i in complete(load(judge[0], "weval", path), judge[1], judge[2],
                                                   snippets=True).items]


def test_model_ids_used_in_a_huge_list_are_read_once_and_a_thousand_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blueprint of a million model ids: each completion of a model id went through all of them (50 ms)
    and offered each distinct one, with its markdown."""
    from evalspec.ide import model_ids
    from evalspec.ide.completion import USED_IDS_OFFERED

    ids = ", ".join(f"openai:m{i}" for i in range(USED_IDS_OFFERED + 500))
    clean, line, col = at(f"title: T\nmodels: [{ids}, op‸]\n---\n- prompt: x\n")
    a = load(clean, "weval")
    reads: list[int] = []
    real = model_ids._used_ids
    monkeypatch.setattr(model_ids, "_used_ids", lambda analysis: reads.append(1) or real(analysis))
    first = complete(a, line, col, snippets=True)
    again = complete(a, line, col - 1, snippets=True)
    used = [i for i in first.items if i.detail == "used in this blueprint"]
    assert len(used) == USED_IDS_OFFERED and used[0].label == "openai:m0"
    assert "openai:" in [i.label for i in again.items]
    assert reads == [1]


def test_file_paths(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "basic.jsonl").write_text("{}\n")
    (tmp_path / "cases" / "notes.txt").write_text("x")
    (tmp_path / "judges").mkdir()
    (tmp_path / "judges" / "tone.md").write_text("{{ answer }}")
    (tmp_path / "check.py").write_text("print(1)")
    path = tmp_path / "suite.eval.yaml"

    def offered(text: str) -> dict[str, CompletionItem]:
        clean, line, col = at(text)
        result = complete(load(clean, "agentv", path), line, col, snippets=True)
        assert result.is_incomplete
        return {i.insert_text: i for i in result.items}

    assert set(offered("tests: ‸\n")) == {"cases/", "judges/"}  # test files only, and folders
    assert set(offered("tests: cases/‸\n")) == {"cases/basic.jsonl"}
    assert "file://cases/basic.jsonl" in offered("tests:\n  - file://cases/‸\n")
    judge = offered("tests:\n  - id: a\n    input: hi\n    assert:\n      - type: llm-judge\n        prompt: judges/‸\n")
    assert set(judge) == {"judges/tone.md"} and judge["judges/tone.md"].kind == "file"
    code = offered("tests:\n  - id: a\n    input: hi\n    assert:\n      - type: code-judge\n"
                   "        command: [uv, run, ./ch‸]\n")
    assert "./check.py" in code
    block = offered("tests:\n  - id: a\n    input:\n      - role: user\n        content:\n          - type: file\n"
                    "            value: ./‸\n")
    assert "./check.py" in block and "./cases/" in block


def test_file_paths_stay_inside_the_project(tmp_path: Path) -> None:
    """Folders outside the eval file's project are not listed (the fuzzer saw `/proc/<pid>`, `/**` and the
    parent of a suite outside any repository listed): a reference there would be a file-outside-project
    finding, and the server shows nothing of the disk beyond the project (SECURITY.md)."""
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.yaml").write_text("k: v")
    project = tmp_path / "proj"
    (project / "cases").mkdir(parents=True)
    (project / "cases" / "a.yaml").write_text("- id: a\n")
    (project / "out").symlink_to(tmp_path / "secrets")
    path = project / "suite.eval.yaml"

    def offered(text: str, where: Path = path) -> set[str]:
        clean, line, col = at(text)
        return {i.insert_text or "" for i in complete(load(clean, "agentv", where), line, col, snippets=True).items}

    assert offered("tests:\n  - file://cases/‸\n") == {"file://cases/a.yaml"}  # inside: listed
    assert offered("tests:\n  - file://../‸\n") == set()  # no repository: the project is the file's folder
    assert offered("tests:\n  - file://../secrets/‸\n") == set()
    assert offered("tests:\n  - file://out/‸\n") == set()  # a link pointing out
    assert offered("tests:\n  - file:///proc/self/‸\n") == set()
    assert offered("tests:\n  - file://" + str(tmp_path) + "/‸\n") == set()
    (tmp_path / ".git").mkdir()  # now the repository is the project, and its folders are inside
    assert offered("tests:\n  - file://../secrets/‸\n") == {"file://../secrets/key.yaml"}


def test_unrelated_yaml_gets_nothing() -> None:
    from evalspec.analysis import analyze

    analysis = analyze("on: push\njobs:\n  build:\n    runs-on: x\n", "/x/ci.yml")
    assert complete(analysis, 3, 4, snippets=True).items == []


def test_inside_block_text_gets_nothing() -> None:
    assert labels(HEADER + "- prompt: |\n    Say: ‸\n", "weval") == []


def test_reference_items() -> None:
    text = "title: T\nreferences:\n  - title: A paper\n    ‸\n---\n- prompt: x\n"
    assert labels(text, "weval") == ["url"]


def test_custom_assertion_types(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv" / "assertions").mkdir(parents=True)
    (tmp_path / ".agentv" / "assertions" / "word-count.ts").write_text("export default {}")
    (tmp_path / "evals").mkdir()
    path = tmp_path / "evals" / "x.eval.yaml"
    clean, line, col = at("tests:\n  - id: a\n    input: hi\n    assert:\n      - type: ‸\n")
    got = {i.label: i for i in complete(load(clean, "agentv", path), line, col, snippets=True).items}
    assert got["word-count"].kind == "assertion-type" and got["word-count"].detail == "custom · word-count.ts"
    assert got["contains"].sort_text < got["word-count"].sort_text


def test_inside_a_flow_mapping() -> None:
    got = items(HEADER + "- prompt: Hi\n  should: [{$contains: x, ‸}]\n", "weval")
    assert set(got) == {"weight", "multiplier", "citation"}
    test = items("tests:\n  - {id: a, ‸}\n", "agentv")
    assert "id" not in test and test["assert"].insert_text == "assert: "  # one line inside braces


def test_targets_file() -> None:
    from evalspec.analysis import analyze

    clean, line, col = at("targets:\n  - name: default\n    provider: ‸\n")
    analysis = analyze(clean, "/x/.agentv/targets.yaml")
    got = [i.label for i in complete(analysis, line, col, snippets=True).items]
    assert {"azure", "anthropic", "openai", "cli", "mock"} <= set(got)
    clean, line, col = at("targets:\n  - name: default\n    ‸\n")
    keys = [i.label for i in complete(analyze(clean, "/x/.agentv/targets.yaml"), line, col, snippets=True).items]
    assert "provider" in keys and "name" not in keys


def test_item_snippets() -> None:
    got = items("tests:\n  - id: a\n    input: hi\n    assert:\n      - ‸\n", "agentv")
    example = got["regex (example)"]
    assert example.kind == "snippet" and example.is_snippet
    assert example.insert_text == 'type: regex\n        value: "Good (morning|afternoon|evening)"\n        flags: i$0'
    new_test = items("tests:\n  - id: a\n    input: hi\n  - ‸\n", "agentv")["test"]
    assert new_test.insert_text == ("id: ${1:test-id}\n    criteria: ${2:What a good answer does}\n"
                                    "    input: ${3:The user message}$0")
    prompt = items("title: T\n---\n- prompt: a\n- ‸\n", "weval", snippets=False)["prompt with rubric"]
    assert prompt.insert_text == "prompt: \n  should:\n    - " and not prompt.is_snippet
    # Not once the item has keys.
    assert "test" not in items("tests:\n  - id: a\n    ‸\n", "agentv")
