"""The core at its boundary: parsing, detection, ids, the normalized Weval model."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evalspec.analysis import analyze, analyze_file
from evalspec.detect import FileKind
from evalspec.source import MAX_DEPTH, parse_yaml, to_python
from evalspec.weval.check import reference_prompt
from evalspec.weval.ids import blueprint_id, blueprint_id_problem, js_number, prompt_hash_id, stable_json
from evalspec.weval.models import effective_model_id, parse_model_id

from .conftest import CORPUS

FIXTURES = Path(__file__).parent / "fixtures"


# --- parsing ----------------------------------------------------------------------------------------

def test_yaml_12_core_scalars() -> None:
    doc = parse_yaml("a: yes\nb: no\nc: on\nd: 0o17\ne: 012\nf: 1.0\ng: ~\nh: !!str 3\ni: 0x1F\nj: .inf\n")
    assert to_python(doc.documents[0].root) == {
        "a": "yes", "b": "no", "c": "on", "d": 15, "e": 12, "f": 1.0, "g": None, "h": "3", "i": 31,
        "j": float("inf")}


def test_spans_are_code_points_and_hug_block_collections() -> None:
    parsed = parse_yaml("a: é😀x\nlist:\n  - one\n  - two\n\nz: |\n  text\n\n")
    root = parsed.documents[0].root
    assert root.pairs[0][1].span == (0, 3, 0, 6)
    assert root.pairs[1][1].span == (2, 2, 3, 7)
    assert root.pairs[2][1].span == (5, 3, 6, 6)


def test_syntax_error_keeps_other_documents() -> None:
    parsed = parse_yaml("a: 1\n---\nb: [\n---\nc: 2\n")
    assert [to_python(d.root) for d in parsed.documents] == [{"a": 1}, {"c": 2}]
    assert [(f.code, f.span.start_line) for f in parsed.findings] == [("yaml-syntax", 3)]


def test_alias_bomb_is_reported_quickly() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{','.join(['*' + prev] * 9)}]")
    start = time.monotonic()
    parsed = parse_yaml("\n".join(lines) + "\n")
    assert time.monotonic() - start < 2
    assert [f.code for f in parsed.findings] == ["yaml-alias-bomb"]
    assert not parsed.documents


def test_deep_nesting_is_reported_not_crashed() -> None:
    text = "[" * 100_000 + "]" * 100_000 + "\n---\nx: 1\n"
    parsed = parse_yaml(text)
    assert parsed.findings[0].code == "yaml-too-deep"
    assert f"{MAX_DEPTH}" in parsed.findings[0].message
    assert [to_python(d.root) for d in parsed.documents] == [{"x": 1}]


def test_huge_file_gets_one_clear_finding() -> None:
    text = "# evalspec: weval\n" + ("- prompt: " + "x" * 90 + "\n") * 110_000  # ~10 MB
    start = time.monotonic()
    analysis = analyze(text, "big.yml")
    assert time.monotonic() - start < 2
    assert [f.code for f in analysis.findings] == ["file-too-large"]
    assert "MB" in analysis.findings[0].message


def test_tags_are_never_constructed() -> None:
    parsed = parse_yaml("a: !!python/object/apply:os.system ['echo hi']\nb: !custom 3\n")
    assert to_python(parsed.documents[0].root) == {"a": ["echo hi"], "b": "3"}


# --- detection ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["github-workflow.yml", "docker-compose.yaml", "deployment.yaml"])
def test_unrelated_yaml_gets_no_findings(name: str) -> None:
    analysis = analyze_file(FIXTURES / "none" / name)
    assert analysis.kind is FileKind.NONE
    assert analysis.findings == []


def _megabyte_alias_bomb() -> str:
    """~1 MB of plain YAML (nothing that looks like an eval file), an alias bomb at its end."""
    filler = "".join(f"key{i}: value {i}\n" for i in range(60_000))
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{','.join(['*' + prev] * 9)}]")
    return filler + "\n".join(lines) + "\n"


@pytest.mark.parametrize(("text", "code"), [
    (_megabyte_alias_bomb(), "yaml-alias-bomb"),
    ("config:\n  nested: " + "[" * (MAX_DEPTH + 50) + "]" * (MAX_DEPTH + 50) + "\n", "yaml-too-deep"),
    ("notes: |\n" + "  plain text line\n" * 300_000, "file-too-large"),
])
def test_a_limit_the_parse_hits_is_one_finding_even_in_a_file_that_is_no_eval_file(text: str, code: str) -> None:
    """The parse stops at the limit before the format can be told: a plain `w.yml` holding a 1 MB alias
    bomb showed nothing. It is one warning now (the file may be no eval file at all); ordinary
    unrelated YAML still gets none (above)."""
    analysis = analyze(text, "w.yml")
    assert analysis.kind is FileKind.NONE
    assert [(f.code, f.severity) for f in analysis.findings] == [(code, "warning")]
    lines = text.split("\n")
    span = analysis.findings[0].span
    assert span.start_line <= span.end_line < len(lines)


def test_a_syntax_error_in_a_file_that_is_no_eval_file_is_still_not_reported() -> None:
    assert analyze("services:\n  web: [nginx\n  db: x\n", "docker-compose.yml").findings == []


@pytest.mark.parametrize(("text", "path", "kind"), [
    ("# evalspec: agentv\ntests: []\n", "x.yml", FileKind.AGENTV),
    ("# evalspec: weval\nfoo: 1\n", "x.yml", FileKind.WEVAL),
    ("# evalspec: none\nprompt: x\nshould: [y]\n", "blueprints/x.yml", FileKind.NONE),
    ("$schema: agentv-eval-v2\ntests: []\n", "x.yml", FileKind.AGENTV),
    ("a: 1\n", "evals/suite.eval.yaml", FileKind.AGENTV),
    ("a: 1\n", "repo/blueprints/a.yml", FileKind.WEVAL),
    ("a: 1\n", "repo/.agentv/targets.yaml", FileKind.AGENTV_TARGETS),
    ("- prompt: hi\n  should: [greets]\n", "anything.yml", FileKind.WEVAL),
    ("title: t\nmodels: [openai:gpt-4o]\n---\n- prompt: hi\n", "x.yml", FileKind.WEVAL),
    ("tests:\n  - id: a\n    input: hi\n    criteria: ok\n", "x.yaml", FileKind.AGENTV),
    ("prompt: just a key\n", "config.yml", FileKind.NONE),
    # A run's results sit under <output>/live/blueprints/<id>/: they are not blueprints.
    ('{"configId": "b", "prompts": [], "models": ["echo"]}', "out/live/blueprints/b/x_2026_comparison.json",
     FileKind.NONE),
    ('{"prompts": []}', "out/live/blueprints/b/x_2026/core.json", FileKind.NONE),
])
def test_detection(text: str, path: str, kind: FileKind) -> None:
    assert analyze(text, path).kind is kind


# --- ids ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("prompt", "expected"), [
    ({"prompt": "This prompt needs an ID.", "ideal": "An ideal response."}, "hash-d35001ad5740"),
    ({"prompt": "Hi"}, "hash-d9bb90fa28f1"),
    ({"prompt": "Hi", "should": ["x", {"$contains": "y"}]}, "hash-d67d89b2253d"),
])
def test_prompt_hash_vectors(prompt: dict[str, object], expected: str) -> None:
    import json

    text = "- " + json.dumps(prompt) + "\n"
    bp = analyze(text, "blueprints/v.yml").blueprint
    assert bp.prompts[0].id == expected
    assert bp.prompts[0].id_generated
    assert prompt_hash_id(reference_prompt(bp.prompts[0])) == expected


@pytest.mark.parametrize(("path", "expected"), [
    ("configs/blueprints/subdir/special.civic.yaml", "subdir__special"),
    ("blueprints/a/b/c.weval.yml", "a__b__c"),
    ("elsewhere/my-test.yml", "my-test"),
    ("blueprints/legacy.json", "legacy"),
])
def test_blueprint_id_from_path(path: str, expected: str) -> None:
    assert blueprint_id(path) == expected


def test_rejected_blueprint_ids() -> None:
    assert blueprint_id_problem("_pr_x") and blueprint_id_problem("x__") and not blueprint_id_problem("ok")


def test_javascript_numbers_and_stable_json() -> None:
    assert [js_number(x) for x in (1.0, 0.7, 1e-7, 1e21, 2)] == ["1", "0.7", "1e-7", "1e+21", "2"]
    assert stable_json({"b": 1.0, "a": ["é", None]}) == '{"a":["é",null],"b":1}'


def test_model_ids() -> None:
    assert parse_model_id("openai : gpt-4o").normalized == "openai:gpt-4o"
    assert parse_model_id("openai : gpt-4o").trimmed
    assert parse_model_id("CORE").collection == "CORE"
    assert parse_model_id("gpt-4o").problem
    assert effective_model_id("openai:gpt-4o", 0.7) == "openai:gpt-4o[temp:0.7]"
    assert effective_model_id("openai:gpt-4o", None, 1) == "openai:gpt-4o[temp:0][sp_idx:1]"


# --- the normalized model -----------------------------------------------------------------------------

def test_legacy_json_blueprint() -> None:
    path = FIXTURES / "weval" / "blueprints" / "sub" / "legacy.json"
    analysis = analyze_file(path)
    assert analysis.kind is FileKind.WEVAL
    assert analysis.findings == []
    bp = analysis.blueprint
    assert bp.id == "sub__legacy"
    p = bp.prompts[0]
    assert (p.id, p.messages[0].content, p.ideal) == ("p1-json", "What is JSON?", "A lightweight data-interchange format.")
    assert p.should[0].text == "It is a data-interchange format"
    assert (p.should_not[0].fn, p.should_not[0].fn_args, p.should_not[0].inverted) == ("contains", "YAML", True)


def test_structures_and_aliases() -> None:
    text = (FIXTURES / "weval" / "valid.weval.yml").read_text()
    analysis = analyze(text, "blueprints/valid.weval.yml")
    assert analysis.findings == []
    bp = analysis.blueprint
    assert bp.title == "A valid blueprint comes out clean"
    assert [m.id for m in bp.models] == ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-20241022", "local-llama"]
    assert bp.temperatures == [0, 0.7]
    assert bp.judges[0].approach == "prompt-aware"
    p1, p2, chat = bp.prompts
    kinds = [(pt.kind, pt.fn, pt.weight) for pt in p1.should]
    assert kinds[:3] == [("text", None, 1.0), ("fn", "icontains", 2.0), ("fn", "js", 1.0)]
    assert p1.should[3].fn == "icontains" and p1.should[3].fn_args == "hi"  # $ref to a mapping definition
    assert p1.should[6].text.startswith("The response must detail") and p1.should[6].citation == "SEC Rule"
    assert p2.id.startswith("hash-")
    # pathId is the path's place in its block, as the reference numbers it (issue 25)
    assert [pt.path_id for pt in p2.should] == [None, "path_1", "path_1", "path_2", None, None, None, None]
    assert [(m.role, m.content) for m in chat.messages][-3:] == [("user", "What was its capital?"),
                                                                  ("assistant", None), ("user", "And now?")]


def test_collections_resolve_from_models_folder() -> None:
    blueprint = CORPUS / "weval-configs" / "blueprints"
    path = next(p for p in sorted(blueprint.glob("*.yml")) if "CORE" in p.read_text())
    bp = analyze_file(path).blueprint
    import json

    core = json.loads((CORPUS / "weval-configs" / "models" / "CORE.json").read_text())
    assert set(core) <= set(bp.models_resolved)


def test_unknown_collection_has_did_you_mean() -> None:
    models = CORPUS / "weval-configs" / "models"
    analysis = analyze("title: t\nmodels: [COREE]\n---\n- prompt: hi\n", "x.weval.yml", models_dir=models)
    assert [(f.code, f.message) for f in analysis.findings] == [
        ("unknown-collection", "Unknown model collection 'COREE'; did you mean 'CORE'?")]


def test_prompt_hash_uses_the_reference_normalized_function_name() -> None:
    """The reference normalizes `contain…` → `contains…` before hashing, so both spellings give one id."""
    written = analyze('- {prompt: Hi, should: [x, {$contain: "y"}]}\n', "blueprints/v.yml").blueprint
    assert written.prompts[0].id == "hash-d67d89b2253d"


def test_positions_count_lines_at_newlines_only() -> None:
    """libyaml breaks lines at \\u2028 inside scalars (YAML 1.1); LSP and evalspec count only \\n."""
    text = '- id: a\n  prompt: "x \u2028 y \u2029 z \x85"\n  shuld: [y]\n'
    [finding] = analyze(text, "blueprints/x.yml").findings
    assert (finding.code, finding.span) == ("unknown-key", (2, 2, 2, 7))


# --- structured data on findings --------------------------------------------------------------------

def test_a_missing_field_names_the_field_as_data() -> None:
    """Callers that reword a finding read the field from `extra`, never from the message text."""
    from evalspec.findings import Findings
    from evalspec.registry.agentv import REGISTRY
    from evalspec.validation.objects import check_object

    out = Findings()
    check_object(parse_yaml("{}\n").documents[0].root, REGISTRY["targets_file"], out, None)
    missing = [f for f in out if f.code == "missing-field"]
    assert missing and all(f.extra == {"field": "targets"} for f in missing)


def test_a_reworded_missing_field_keeps_its_place() -> None:
    # `field-accuracy` without `fields`: AgentV's own message replaces the generic "needs 'fields'".
    a = analyze("# evalspec: agentv\ntests:\n  - id: t\n    input: hi\n    criteria: c\n"
                "    assert:\n      - type: field-accuracy\n")
    assert [f.message for f in a.findings if f.code == "missing-field"] == [
        "Assertion type 'field-accuracy' requires a non-empty 'fields' list."]


def test_the_alias_bound_counts_what_aliases_add_not_a_large_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 100,000-test AgentV suite is ~1.2 million nodes as written: that is the file-size cap's to bound,
    not the alias-bomb rule's (it was refused as an alias bomb)."""
    import evalspec.source as source

    monkeypatch.setattr(source, "MAX_EXPANDED_NODES", 1000)
    big = "tests:\n" + "".join(f"  - id: t{i}\n    input: hi\n" for i in range(600))  # ~3,000 nodes, no alias
    parsed = parse_yaml(big)
    assert not parsed.findings and len(parsed.documents[0].root.get("tests").items) == 600  # type: ignore[union-attr]
    bomb = "a: &a [" + ",".join(["x"] * 40) + "]\nb: [" + ",".join(["*a"] * 30) + "]\n"  # aliases add 1,230
    assert [f.code for f in parse_yaml(bomb).findings] == ["yaml-alias-bomb"]
    fine = "a: &a [" + ",".join(["x"] * 40) + "]\nb: [" + ",".join(["*a"] * 20) + "]\n"  # 820: under the bound
    assert not parse_yaml(fine).findings
