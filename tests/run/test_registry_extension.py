"""A new point function and a new judged assertion type, each one registry entry plus its scorer, declared
in a test registry (registry/extend.registered): check, completion, hover, the generated JSON Schema and a
`-m echo` run see them as they see a built-in entry, and nothing of them is left once the block ends.

The judge is the fake provider on 127.0.0.1 the run tests use (tests/run/conftest.py)."""

from __future__ import annotations

import json
import re
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

# --- the new point function: one entry plus its scorer -----------------------------------------------


def sentence_count_between(response: str, arg: Any, ctx: PointContext) -> PointScore:
    """1 when the response has between min and max sentences (runs ending in . ! or ?), else 0."""
    if not (isinstance(arg, list) and len(arg) == 2 and all(isinstance(n, int) for n in arg)):
        return PointScore(None, None, "sentence_count_between needs [min, max]")
    n = len(re.findall(r"[^.!?]+[.!?]", response))
    return PointScore(1.0 if arg[0] <= n <= arg[1] else 0.0, f"{n} sentence(s)")


SENTENCES = PointFunction(
    "sentence_count_between", Arg.RANGE, False,
    "True when the response has between min and max sentences.", "$sentence_count_between: [1, 3]",
    negatable=True, stage=Stage.FUNCTION, scorer=sentence_count_between)


# --- the new judged assertion type: one entry plus its scorer (how it asks the judge) --------------------

async def politeness_prompt(a: Any, test: Any, answer: str, template: Any) -> tuple[str | None, str]:
    from evalspec.run.score.agentv_judge import FREEFORM_SYSTEM

    return FREEFORM_SYSTEM, f"POLITENESS ({a.config['tone']}): is this answer polite?\n{answer}"


POLITENESS = AssertionType(
    "politeness", "An LLM judge rates how polite the answer is, for the tone asked.",
    "The judge's score (0–1).", "- type: politeness\n  tone: formal",
    (F("tone", "The tone the answer should keep.", "string", enum=("formal", "friendly"), required=True),),
    runnable=True, stage=Stage.JUDGE, scorer=JudgedType(politeness_prompt))


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
    runnable=True, stage=Stage.FUNCTION, scorer=word_limit)


BLUEPRINT = """title: Extension
models: [echo]
---
- id: short
  prompt: "Say hi. Then stop."
  should:
    - $sentence_count_between: [1, 3]
    - $not_sentence_count_between: [5, 9]
"""

SUITE = """name: polite
description: A judged type of our own.
tests:
  - id: t
    input: "Good morning, dear customer."
    criteria: polite
    assert:
      - type: politeness
        tone: formal
      - {type: word_limit, max_words: 3}
"""


BP = Path("/nonexistent/blueprints/b.yml")  # checked as the editor would, before it is saved
EVAL = Path("/nonexistent/evals/s.eval.yaml")


def _codes(analysis: Any) -> list[tuple[str, int]]:
    return [(f.code, f.span.start_line) for f in analysis.findings]


def test_a_new_point_function_is_checked_completed_hovered_in_the_schema_and_run(tmp_path: Path,
                                                                               smart: SmartFake) -> None:
    bad = BLUEPRINT.replace("[5, 9]", '"many"')
    assert any(c == "unknown-function" for c, _ in _codes(analyze(BLUEPRINT, BP)))  # not yet registered
    with registered(SENTENCES):
        assert analyze(BLUEPRINT, BP).findings == []  # both forms known, arguments right
        # its argument shape is checked: a string where [min, max] goes is reported on its line
        assert _codes(analyze(bad, BP)) == [("invalid-argument", 7)]

        text = BLUEPRINT.replace("    - $not_sentence_count_between: [5, 9]\n", "    - $sent\n")
        line = text.split("\n").index("    - $sent")
        labels = {i.label for i in complete(analyze(text, BP), line, 10, snippets=True).items}
        assert {"$sentence_count_between", "$not_sentence_count_between"} <= labels

        shown = hover(analyze(BLUEPRINT, BP), 6, 9)
        assert shown is not None and "between min and max sentences" in shown.markdown

        schema = generate("weval")["$defs"]["functionPoint"]["properties"]
        assert schema["$sentence_count_between"]["type"] == "array"  # Arg.RANGE's shape
        assert "$not_sentence_count_between" in schema

        bp = write(tmp_path / "b.yml", BLUEPRINT)
        run_events(bp, options(tmp_path, env_for(smart), models=["echo"]))
    result = comparison(tmp_path / "out")
    assessments = [a for cell in result["evaluationResults"]["llmCoverageScores"]["short"].values()
                   for a in cell["pointAssessments"]]
    # The echo model answers with the prompt, "Say hi. Then stop.": two sentences.
    assert [(a["keyPointText"], a["coverageExtent"]) for a in assessments] == [
        ("Function: sentence_count_between([1,3])", 1.0), ("Function: not_sentence_count_between([5,9])", 1.0)]
    assert assessments[0]["reflection"] == "2 sentence(s)"
    # Gone once the block ends: the checker, completion and schema no longer know it.
    assert any(c == "unknown-function" for c, _ in _codes(analyze(BLUEPRINT, BP)))
    assert "$sentence_count_between" not in generate("weval")["$defs"]["functionPoint"]["properties"]


def _judge(req: dict[str, Any]) -> str | None:
    if req.get("model") != "grader-model":
        return None
    prompt = req["messages"][-1]["content"]
    assert prompt.startswith("POLITENESS (formal)")
    return json.dumps({"score": 0.75, "hits": ["greets"], "misses": ["no thanks"], "reasoning": "mostly polite"})


def test_a_new_judged_assertion_type_is_checked_completed_hovered_in_the_schema_and_run(
        tmp_path: Path, smart: SmartFake) -> None:
    assert ("unknown-assertion-type", 7) in _codes(analyze(SUITE, EVAL))  # not yet registered
    with registered(POLITENESS, WORD_LIMIT):
        assert analyze(SUITE, EVAL).findings == []
        # its argument shape (its fields) is checked: a tone outside its enum, a missing tone
        wrong = analyze(SUITE.replace("tone: formal", "tone: rude"), EVAL).findings
        assert [f.span.start_line for f in wrong] == [8] and wrong[0].code != "unknown-assertion-type"
        missing = analyze(SUITE.replace("        tone: formal\n", ""), EVAL).findings
        assert len(missing) == 1 and "tone" in missing[0].message

        text = SUITE.replace("type: politeness", "type: pol")
        labels = {i.label for i in complete(analyze(text, EVAL), 7, 17, snippets=True).items}
        assert "politeness" in labels
        text = SUITE.replace("        tone: formal\n", "        to\n")
        labels = {i.label for i in complete(analyze(text, EVAL), 8, 10, snippets=True).items}
        assert "tone" in labels

        shown = hover(analyze(SUITE, EVAL), 7, 15)
        assert shown is not None and "how polite the answer is" in shown.markdown

        schema = generate("agentv")["$defs"]["assertion"]
        assert "politeness" in schema["properties"]["type"]["anyOf"][0]["enum"]
        branch = next(b for b in schema["allOf"] if b["if"]["properties"]["type"]["enum"] == ["politeness"])
        assert branch["then"]["required"] == ["tone"] and branch["then"]["properties"]["tone"]["enum"] == [
            "formal", "friendly"]

        smart.decide = _judge
        suite = write(tmp_path / "s.eval.yaml", SUITE)
        run_events(suite, options(tmp_path, env_for(smart), models=["echo"], judges=["openai:grader-model"]))
    rows = [json.loads(line) for p in sorted((tmp_path / "out").glob("agentv/*/*.jsonl"))
            if not p.name.endswith(".journal.jsonl") for line in p.read_text().splitlines()]
    [row] = rows
    scored, limited = row["scores"]
    assert (scored["type"], scored["score"], scored["verdict"]) == ("politeness", 0.75, "borderline")
    assert scored["hits"] == ["greets"] and scored["reasoning"] == "mostly polite"
    assert (limited["type"], limited["score"], limited["misses"]) == ("word-limit", 0.0, ["4 words > 3"])
    assert row["score"] == 0.375  # the mean of the two
    assert row["answer"] == "Good morning, dear customer."  # the echo model
    assert len([r for r in smart.chat_requests() if r.get("model") == "grader-model"]) == 1
    # Gone once the block ends.
    assert ("unknown-assertion-type", 7) in _codes(analyze(SUITE, EVAL))
    assert "politeness" not in generate("agentv")["$defs"]["assertion"]["properties"]["type"]["anyOf"][0]["enum"]


def test_a_name_declared_twice_is_refused_and_changes_nothing() -> None:
    import pytest

    from evalspec.registry.agentv import REGISTRY
    from evalspec.registry.agentv_assertions import ASSERTION_TYPES
    from evalspec.registry.weval_functions import FUNCTION_NAMES, POINT_FUNCTIONS

    before = (dict(POINT_FUNCTIONS), dict(FUNCTION_NAMES), dict(ASSERTION_TYPES), dict(REGISTRY.objects))
    clash = PointFunction("sentences", Arg.RANGE, False, "d", "$sentences: [1, 2]", ("contain",),
                          scorer=sentence_count_between)  # `$contain` is $contains' alias
    with pytest.raises(ValueError, match="contain"), registered(SENTENCES, clash):
        pass
    with pytest.raises(ValueError, match="contains"), registered(POLITENESS, AssertionType(
            "contains", "d", "s", "- type: contains", stage=Stage.GROUP)):
        pass
    assert (dict(POINT_FUNCTIONS), dict(FUNCTION_NAMES), dict(ASSERTION_TYPES), dict(REGISTRY.objects)) == before
    with pytest.raises(ValueError, match="declares no scorer"):
        PointFunction("unscored", Arg.NONE, False, "d", "$unscored: true")
