"""Every regex vector of the reference implementations, through evalspec's real scorers: zero differences.

`../shared/vectors/weval/points.jsonl` holds Weval's own answers (commit 51dc4d3, Node 20) for its point
functions and `agentv/assertions.jsonl` AgentV's (v2.19.0, bun) for its assertions. Every vector of the
regex family (`$matches`, `$imatches`, `$matches_all_of`, `$imatch_all_of`, `$matches_at_least_n_of`,
`$imatch_at_least_n_of`, their aliases and `not_` forms; AgentV's `regex`) is scored here by
`evaluate_point` / `evaluate_assertion` and must give the reference's answer: the same score, or an error
where the reference errs, with the reference's message. A difference kept on purpose would be named in
DELIBERATE with its reason (none is needed: no regex vector lifts a score on a check not made).
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from evalspec.analysis import analyze
from evalspec.registry.weval_functions import resolve_function
from evalspec.scoring.agentv_assertions import AssertionScore, RunMetrics, evaluate_assertion
from evalspec.scoring.weval_points import PointContext, evaluate_point

VECTORS = Path(__file__).resolve().parents[2].parent / "shared" / "vectors"

# (file, line number) -> why evalspec differs from the reference there on purpose.
DELIBERATE: dict[tuple[str, int], str] = {
    # `[[:alpha:]]` with `u` throws; AgentV's evaluator fails the assertion (score 0) and `negate: true`
    # then turns that failure into a pass (score 1) for an answer no regex ever looked at. evalspec keeps
    # the error an error (score 0, fail), negated or not: a check that was not made never passes.
    ("agentv/assertions.jsonl", 2288): "negate does not turn an invalid pattern into a pass",
}
# Vectors of the regex family whose answer is settled before any pattern is compiled, by a rule shared
# with the substring functions: not regex semantics, and walked by the Weval vector test instead.
NOT_REGEX = {
    "`n` is NaN in `$…at_least_n_of`: evalspec refuses the argument (the point is not scored), as for "
    "`$contains_at_least_n_of`; the reference scores NaN (or 1 with no patterns)":
        lambda v: isinstance(v["args"], list) and v["args"][:1] == [{"$$": "NaN"}],
}

_JS_VALUES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf, "undefined": None}


def _decode(value: Any) -> Any:
    """The vectors' `{"$$": "NaN"|"undefined"|…}` for values JSON cannot carry."""
    if isinstance(value, dict):
        if set(value) == {"$$"}:
            return _JS_VALUES[value["$$"]]
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


@cache
def _lines(name: str) -> list[tuple[int, dict[str, Any]]]:
    path = VECTORS / name
    return [(n, json.loads(line)) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]


def _is_regex_function(fn: str) -> bool:
    found = resolve_function(fn)
    return found is not None and "match" in (found.negates or found.name)


def weval_regex_vectors() -> list[tuple[int, dict[str, Any]]]:
    """Registered regex-family names. An unregistered one (`imatches_all_of`: not a name of the reference's)
    is answered "Unknown point function" before any regex runs: a naming vector, walked by the name tests."""
    return [(n, v) for n, v in _lines("weval/points.jsonl") if v["registered"] and _is_regex_function(v["fn"])
            and not any(rule(v) for rule in NOT_REGEX.values())]


def agentv_regex_vectors() -> list[tuple[int, dict[str, Any]]]:
    return [(n, v) for n, v in _lines("agentv/assertions.jsonl") if v["assertion"].get("type") == "regex"]


def _weval_difference(vector: dict[str, Any]) -> str | None:
    found = resolve_function(vector["fn"])
    assert found is not None
    ctx = PointContext(messages=[], model_id="m", prompt_id="p")
    result = evaluate_point(found.name, _decode(vector["args"]), vector["answer"], ctx)
    reference = _decode(vector["reference"])
    if isinstance(reference, dict):  # {error: true, message}
        if result.score is not None:
            return f"reference: error {reference['message']!r}; evalspec: {result.score}"
        if result.error != reference["message"]:
            return f"reference: {reference['message']!r}; evalspec: {result.error!r}"
        return None
    if result.score is None:
        return f"reference: {reference}; evalspec: error {result.error!r}"
    score = 1.0 - result.score if vector.get("inverted") else result.score
    if not math.isclose(score, reference, abs_tol=1e-12):
        return f"reference: {reference}; evalspec: {score}"
    return None


def _agentv_difference(vector: dict[str, Any]) -> str | None:
    assertion, response = vector["assertion"], vector["response"]
    reference = vector["reference"].get("assertion")
    if reference is None:
        # The reference's loader dropped the assertion (`Skipping regex evaluator …: missing value`): the
        # test has no assertions. evalspec's checker must drop it too (with a warning), not run it.
        kept = _checked_assertions(assertion)
        return None if kept == [] else f"reference: no assertion; evalspec keeps {kept}"
    got = evaluate_assertion(assertion, response["answer"], RunMetrics())
    if not isinstance(got, AssertionScore):
        return f"reference: {reference['score']}; evalspec: {got}"
    mine = {"score": got.score, "verdict": got.verdict, "hits": list(got.hits), "misses": list(got.misses)}
    if not assertion.get("negate"):  # a negated reasoning is "[Negated] … (original score: …)": negate's
        mine["reasoning"] = got.reasoning
    theirs = {k: reference.get(k) for k in mine}
    return None if mine == theirs else f"reference: {theirs}; evalspec: {mine}"


def _checked_assertions(assertion: dict[str, Any]) -> list[str]:
    """The assertions evalspec's checker keeps from a suite with this one assertion."""
    suite = {"description": "d", "tests": [{"id": "t1", "input": "Q", "assert": [assertion]}]}
    analysis = analyze(json.dumps(suite), "/p/evals/dataset.eval.yaml")
    assert analysis.agentv is not None
    return [a.type for test in analysis.agentv.suite.tests for a in test.assertions]


def test_the_vectors_are_there() -> None:
    # The walk below is only as good as its input: the reference's files, in full.
    assert len(weval_regex_vectors()) > 9_000
    assert len(agentv_regex_vectors()) == 900


@pytest.mark.parametrize("family", ["weval", "agentv"])
def test_every_regex_vector_matches_the_reference(family: str) -> None:
    if family == "weval":
        walked = [("weval/points.jsonl", n, _weval_difference(v)) for n, v in weval_regex_vectors()]
    else:
        walked = [("agentv/assertions.jsonl", n, _agentv_difference(v)) for n, v in agentv_regex_vectors()]
    differences = {(f, n): d for f, n, d in walked if d is not None and (f, n) not in DELIBERATE}
    assert differences == {}


def test_the_deliberate_differences_still_differ() -> None:
    # A row whose vector now agrees is stale: remove it (and its line in docs/reference-differences.md).
    vectors = dict(agentv_regex_vectors())
    for (name, line), _reason in DELIBERATE.items():
        assert name == "agentv/assertions.jsonl" and _agentv_difference(vectors[line]) is not None


def _patterns() -> set[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()
    for _, v in weval_regex_vectors():
        args = _decode(v["args"])
        items = args[1] if isinstance(args, list) and len(args) == 2 and isinstance(args[1], list) else args
        function = resolve_function(v["fn"])
        assert function is not None
        flags = "i" if (function.negates or function.name).startswith("i") else ""
        for p in items if isinstance(items, list) else [items]:
            if isinstance(p, str):
                found.add((p, flags, "weval"))
    for _, v in agentv_regex_vectors():
        a = v["assertion"]
        if isinstance(a.get("value"), str) and a["value"] and isinstance(a.get("flags", ""), str):
            found.add((a["value"], a.get("flags", ""), "agentv"))
    return found


def test_the_lint_errs_exactly_where_scoring_errs() -> None:
    """The checker's error on a pattern means the reference errs on it, and only then (every vector's)."""
    from evalspec.scoring.js_regex import JsRegexError, JsRegexNotEvaluated, js_regex_test, regex_findings

    patterns = _patterns()
    assert len(patterns) > 300
    disagreements = []
    for pattern, flags, dialect in sorted(patterns):
        linted = any(p.severity == "error" for p in regex_findings(pattern, flags, dialect=dialect))  # type: ignore[arg-type]
        try:
            js_regex_test(pattern, "", flags, dialect=dialect)  # type: ignore[arg-type]
            scored = False
        except JsRegexError:
            scored = True
        except JsRegexNotEvaluated:
            scored = False
        if linted != scored:
            disagreements.append((pattern, flags, dialect, linted))
    assert disagreements == []
