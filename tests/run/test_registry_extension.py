"""A new point function and a new judged assertion type, each one registry entry plus its scorer, declared
in a test registry (registry/extend.registered): check, completion, hover, the generated JSON Schema, the
docs' reference pages and a `-m echo` run see them as they see a built-in entry, and nothing of them is
left once the block ends. They are the worked examples of docs/internals/extending.md, which shows the
code between the `--8<--` markers as it is here.

The entries name their scorers as built-in ones do, `"module:attribute"`, imported on first use. The
judge is the fake provider on 127.0.0.1 the run tests use (tests/run/conftest.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from evalspec.analysis import analyze
from evalspec.ide.completion import complete
from evalspec.ide.hover import hover
from evalspec.registry.agentv_assertions import AssertionType
from evalspec.registry.extend import registered
from evalspec.registry.fields import F
from evalspec.registry.stages import Stage
from evalspec.registry.weval_functions import Arg, PointFunction
from evalspec.run.score.judged_types import JudgedType
from evalspec.schema_gen import generate
from evalspec.scoring.weval_points import PointContext, PointScore

from .conftest import SmartFake, comparison, env_for, options, run_events, write

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from gen_docs import pages

HERE = __name__  # what the entries' "module:attribute" scorers name

# --8<-- [start:point-scorer]
def trimmed_starts_with(response: str, arg: Any, ctx: PointContext) -> PointScore:
    """1 when the response, stripped of surrounding whitespace, starts with the text, else 0."""
    if not isinstance(arg, str):  # a bad argument: the point is not scored (an error), never a 0
        return PointScore(None, None, "Invalid arguments for 'trimmed_starts_with'. Expected a string prefix.")
    return PointScore(1.0 if response.strip().startswith(arg) else 0.0)
# --8<-- [end:point-scorer]


# --8<-- [start:point-entry]
TRIMMED = PointFunction(
    "trimmed_starts_with", Arg.STRING, False,
    "True when the response, stripped of surrounding whitespace, starts with the text (case-sensitive).",
    '$trimmed_starts_with: "Yes"', negatable=True,  # also declares $not_trimmed_starts_with
    stage=Stage.FUNCTION, scorer=f"{HERE}:trimmed_starts_with")
# --8<-- [end:point-entry]


# --8<-- [start:judged-scorer]
async def tone_prompt(a: Any, test: Any, answer: str, template: Any) -> tuple[str | None, str]:
    """The judge's (system, user) messages; the reply is read as AgentV's judge JSON {score, hits, …}."""
    from evalspec.run.score.agentv_judge import FREEFORM_SYSTEM

    return FREEFORM_SYSTEM, (f"TONE ({a.config['value']}): does the tone of this answer match? "
                             f"Score 1 when it does, 0 when it does not.\n\n{answer}")


TONE_SCORER = JudgedType(tone_prompt)
# --8<-- [end:judged-scorer]


# --8<-- [start:judged-entry]
TONE = AssertionType(
    "tone", "An LLM judge decides whether the answer's tone matches `value` (formal, friendly…).",
    "The judge's score (0–1).", "- type: tone\n  value: formal",
    (F("value", "The tone the answer should have.", "string", required=True, example="value: formal"),),
    runnable=True, stage=Stage.JUDGE, scorer=f"{HERE}:TONE_SCORER")
# --8<-- [end:judged-entry]


# --- and a deterministic one beside it (stage FUNCTION: its scorer is a function of the answer) -----------

def word_limit(spec: Any, output: str, metrics: Any, expected: Any) -> Any:
    from evalspec.scoring.agentv_assertions import AssertionScore

    n, most = len(output.split()), spec["max_words"]
    passed = n <= most
    return AssertionScore(1.0 if passed else 0.0, "pass" if passed else "fail", (f"{n} words",) if passed else (),
                          () if passed else (f"{n} words > {most}",), f"{n} words")


WORD_LIMIT = AssertionType(
    "word-limit", "Passes when the answer has at most `max_words` words.", "1 when it holds, else 0.",
    "- type: word-limit\n  max_words: 50",
    (F("max_words", "The most words.", "integer", minimum=1, required=True),),
    runnable=True, stage=Stage.FUNCTION, scorer=f"{HERE}:word_limit")


BLUEPRINT = """title: Extension
models: [echo]
---
- id: short
  prompt: "  Yes, indeed."
  should:
    - $trimmed_starts_with: "Yes"
    - $not_trimmed_starts_with: "No"
    - $starts_with: "Yes"
"""

SUITE = """name: tone
description: A judged type of our own.
tests:
  - id: weighed
    input: "Good morning, dear customer."
    criteria: formal
    assert:
      - type: tone
        value: formal
        weight: 3
      - {type: word_limit, max_words: 3}
  - id: gated
    input: "Good morning, dear customer."
    criteria: formal
    assert:
      - {type: tone, value: formal, required: true}
      - {type: contains, value: morning}
"""


BP = Path("/nonexistent/blueprints/b.yml")  # checked as the editor would, before it is saved
EVAL = Path("/nonexistent/evals/s.eval.yaml")


def _codes(analysis: Any) -> list[tuple[str, int]]:
    return [(f.code, f.span.start_line) for f in analysis.findings]


def test_a_new_point_function_is_checked_completed_hovered_in_the_schema_docs_and_run(tmp_path: Path,
                                                                                    smart: SmartFake) -> None:
    bad = BLUEPRINT.replace('$not_trimmed_starts_with: "No"', "$not_trimmed_starts_with: [No]")
    assert any(c == "unknown-function" for c, _ in _codes(analyze(BLUEPRINT, BP)))  # not yet registered
    with registered(TRIMMED):
        assert analyze(BLUEPRINT, BP).findings == []  # both forms known, arguments right
        # its argument shape is checked: a list where a string goes is reported on its line
        assert _codes(analyze(bad, BP)) == [("invalid-argument", 7)]

        text = BLUEPRINT.replace('    - $not_trimmed_starts_with: "No"\n', "    - $trim\n")
        line = text.split("\n").index("    - $trim")
        labels = {i.label for i in complete(analyze(text, BP), line, 11, snippets=True).items}
        assert {"$trimmed_starts_with", "$not_trimmed_starts_with"} <= labels

        shown = hover(analyze(BLUEPRINT, BP), 6, 9)
        assert shown is not None and "stripped of surrounding whitespace" in shown.markdown

        schema = generate("weval")["$defs"]["functionPoint"]["properties"]
        assert schema["$trimmed_starts_with"]["type"] == "string"  # Arg.STRING's shape
        assert "$not_trimmed_starts_with" in schema

        reference = pages()["reference/functions.md"]
        assert "## $trimmed_starts_with {#trimmed_starts_with}" in reference
        assert "## $not_trimmed_starts_with {#not_trimmed_starts_with}" in reference

        bp = write(tmp_path / "b.yml", BLUEPRINT)
        run_events(bp, options(tmp_path, env_for(smart), models=["echo"]))
    result = comparison(tmp_path / "out")
    assessments = [a for cell in result["evaluationResults"]["llmCoverageScores"]["short"].values()
                   for a in cell["pointAssessments"]]
    # The echo model answers with the prompt, "  Yes, indeed.": it starts with "Yes" once stripped only.
    assert [(a["keyPointText"], a["coverageExtent"]) for a in assessments] == [
        ('Function: trimmed_starts_with("Yes")', 1.0), ('Function: not_trimmed_starts_with("No")', 1.0),
        ('Function: starts_with("Yes")', 0.0)]
    # Gone once the block ends: the checker, the schema and the reference no longer know it.
    assert any(c == "unknown-function" for c, _ in _codes(analyze(BLUEPRINT, BP)))
    assert "$trimmed_starts_with" not in generate("weval")["$defs"]["functionPoint"]["properties"]
    assert "trimmed_starts_with" not in pages()["reference/functions.md"]


def _judge(req: dict[str, Any]) -> str | None:
    if req.get("model") != "grader-model":
        return None
    prompt = req["messages"][-1]["content"]
    assert prompt.startswith("TONE (formal)") and prompt.endswith("Good morning, dear customer.")
    return json.dumps({"score": 0.75, "hits": ["greets"], "misses": ["no sign-off"], "reasoning": "mostly formal"})


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    return {r["test_id"]: r for p in sorted(out.glob("agentv/*/*.jsonl")) if not p.name.endswith(".journal.jsonl")
            for r in map(json.loads, p.read_text().splitlines())}


def test_a_new_judged_assertion_type_is_checked_completed_hovered_in_the_schema_docs_and_run(
        tmp_path: Path, smart: SmartFake) -> None:
    assert ("unknown-assertion-type", 7) in _codes(analyze(SUITE, EVAL))  # not yet registered
    with registered(TONE, WORD_LIMIT):
        assert analyze(SUITE, EVAL).findings == []
        # its argument shape (its fields) is checked where it is wrong: a number for `value`, no `value`
        wrong = analyze(SUITE.replace("value: formal\n        weight", "value: 42\n        weight"), EVAL).findings
        assert [(f.code, f.span.start_line) for f in wrong] == [("wrong-type", 8)]
        missing = analyze(SUITE.replace("        value: formal\n", ""), EVAL).findings
        assert [(f.code, f.span.start_line) for f in missing] == [("missing-field", 7)]

        text = SUITE.replace("type: tone", "type: to", 1)
        labels = {i.label for i in complete(analyze(text, EVAL), 7, 16, snippets=True).items}
        assert "tone" in labels
        text = SUITE.replace("        value: formal\n", "        va\n", 1)
        labels = {i.label for i in complete(analyze(text, EVAL), 8, 10, snippets=True).items}
        assert "value" in labels

        shown = hover(analyze(SUITE, EVAL), 7, 15)
        assert shown is not None and "tone matches `value`" in shown.markdown

        schema = generate("agentv")["$defs"]["assertion"]
        assert "tone" in schema["properties"]["type"]["anyOf"][0]["enum"]
        branch = next(b for b in schema["allOf"] if b["if"]["properties"]["type"]["enum"] == ["tone"])
        assert branch["then"]["required"] == ["value"] and branch["then"]["properties"]["value"]["type"] == "string"

        reference = pages()["reference/assertions.md"]
        assert "## tone {#tone}" in reference and "| [`tone`](#tone) | llm | yes |" in reference

        smart.decide = _judge
        suite = write(tmp_path / "s.eval.yaml", SUITE)
        run_events(suite, options(tmp_path, env_for(smart), models=["echo"], judges=["openai:grader-model"]))
        # And with no judge to call: not scored, with the reason, never a pass.
        run_events(suite, options(tmp_path, env_for(smart), models=["echo"], output=tmp_path / "nojudge"))
    rows = _rows(tmp_path / "out")
    toned, limited = rows["weighed"]["scores"]
    assert (toned["type"], toned["score"], toned["weight"], toned["verdict"]) == ("tone", 0.75, 3.0, "borderline")
    assert toned["hits"] == ["greets"] and toned["reasoning"] == "mostly formal"
    assert (limited["type"], limited["score"], limited["misses"]) == ("word-limit", 0.0, ["4 words > 3"])
    assert rows["weighed"]["score"] == 0.5625  # (0.75 × 3 + 0 × 1) / 4
    assert rows["weighed"]["answer"] == "Good morning, dear customer."  # the echo model
    # `required: true` wants 0.8: the judge's 0.75 fails the whole test, whatever `contains` says.
    assert (rows["gated"]["score"], rows["gated"]["verdict"]) == (0.0, "fail")
    assert len([r for r in smart.chat_requests() if r.get("model") == "grader-model"]) == 2

    unjudged = _rows(tmp_path / "nojudge")
    for row in unjudged.values():
        assert (row["score"], row["verdict"]) == (None, "not scored")
        [entry] = [s for s in row["scores"] if s["type"] == "tone"]
        assert entry["score"] is None and entry["verdict"] == "not scored" and "no judge" in entry["reasoning"]
        assert [n["name"] for n in row["not_scored"]] == ["tone"]
    assert len([r for r in smart.chat_requests() if r.get("model") == "grader-model"]) == 2  # none asked

    # Gone once the block ends.
    assert ("unknown-assertion-type", 7) in _codes(analyze(SUITE, EVAL))
    assert "tone" not in generate("agentv")["$defs"]["assertion"]["properties"]["type"]["anyOf"][0]["enum"]
    assert "## tone" not in pages()["reference/assertions.md"]


def test_a_name_declared_twice_is_refused_and_changes_nothing() -> None:
    import pytest

    from evalspec.registry.agentv import REGISTRY
    from evalspec.registry.agentv_assertions import ASSERTION_TYPES
    from evalspec.registry.weval_functions import FUNCTION_NAMES, POINT_FUNCTIONS

    before = (dict(POINT_FUNCTIONS), dict(FUNCTION_NAMES), dict(ASSERTION_TYPES), dict(REGISTRY.objects))
    clash = PointFunction("starts", Arg.STRING, False, "d", '$starts: "x"', ("contain",),
                          scorer=trimmed_starts_with)  # `$contain` is $contains' alias
    with pytest.raises(ValueError, match="contain"), registered(TRIMMED, clash):
        pass
    with pytest.raises(ValueError, match="contains"), registered(TONE, AssertionType(
            "contains", "d", "s", "- type: contains", stage=Stage.GROUP)):
        pass
    assert (dict(POINT_FUNCTIONS), dict(FUNCTION_NAMES), dict(ASSERTION_TYPES), dict(REGISTRY.objects)) == before
    with pytest.raises(ValueError, match="declares no scorer"):
        PointFunction("unscored", Arg.NONE, False, "d", "$unscored: true")
