"""Weval llm-coverage aggregation: judge answers, consensus, OR-paths, JavaScript rounding."""

from __future__ import annotations

import random

import pytest
import quickjs

from evalspec.scoring.weval_aggregate import (
    ALL_JUDGES_FAILED,
    CLASSIFICATION_SCORES,
    CoveragePoint,
    JudgeAnswerError,
    aggregate_coverage,
    avg_coverage_extent,
    consensus,
    consensus_judge_id,
    invert,
    inverted_reflection,
    js_round,
    js_to_fixed,
    parse_judge_answer,
    path_id,
)

CLASSES = [
    ("UTTERLY_UNMET", 0.0), ("UNMET", 0.001), ("TRACE", 0.125), ("SLIGHT", 0.25), ("PARTIAL", 0.375),
    ("MODERATE", 0.5), ("SUBSTANTIAL", 0.625), ("MAJOR", 0.75), ("VERY_NEARLY", 0.875), ("EXACT", 1.0),
]


def test_the_scale_has_ten_classes() -> None:
    assert {f"CLASS_{name}": score for name, score in CLASSES} == CLASSIFICATION_SCORES


@pytest.mark.parametrize(("name", "score"), CLASSES)
def test_each_class_with_and_without_prefix_in_any_case(name: str, score: float) -> None:
    answer = f"<reflection>Because.</reflection><classification>CLASS_{name}</classification>"
    assert parse_judge_answer(answer).score == score
    assert parse_judge_answer(f"<classification> {name.lower()} </classification>").score == score
    assert parse_judge_answer(f"<CLASSIFICATION>class_{name}</CLASSIFICATION>").score == score


def test_answer_parts() -> None:
    answer = parse_judge_answer("<reflection> Mostly there. </reflection>\n<classification>MAJOR</classification>")
    assert answer == (0.75, "CLASS_MAJOR", "Mostly there.")
    assert parse_judge_answer("CLASS_EXACT").score == 1.0  # a bare class name is accepted


@pytest.mark.parametrize("text", [
    "<classification>CLASS_GREAT</classification>",
    "<classification></classification>",
    "<reflection>fine</reflection>",
    "The response is great.",
    "",
    "   ",
])
def test_unusable_answers_are_judge_errors(text: str) -> None:
    with pytest.raises(JudgeAnswerError):
        parse_judge_answer(text)


def test_unknown_class_message_quotes_the_answer() -> None:
    with pytest.raises(JudgeAnswerError, match="Invalid classification value: 'CLASS_GREAT'"):
        parse_judge_answer("<classification>CLASS_GREAT</classification>")


@pytest.mark.parametrize(("scores", "expected"), [
    ([0.75, 1.0, 0.5], 0.75),
    ([0.75, None, 0.5], 0.63),  # mean of the successes 0.625, stored toFixed(2) like the reference
    ([0.125], 0.13),
    ([None, None], None),
    ([], None),
])
def test_consensus(scores: list[float | None], expected: float | None) -> None:
    assert consensus(scores) == expected


def test_consensus_unrounded_and_id() -> None:
    assert consensus([0.875, 0.75, 0.75], digits=None) == pytest.approx(0.7916666666666666)
    assert consensus_judge_id(["holistic(a)", "std(b)"]) == "consensus(holistic(a), std(b))"
    assert ALL_JUDGES_FAILED == "All judges failed in consensus mode."


def test_should_not_inversion() -> None:
    assert invert(0.75) == 0.25
    assert invert(0.0) == 1.0
    assert invert(None) is None
    assert inverted_reflection("Met.") == "[INVERTED] Met."
    assert path_id(3) == "path_3"


# The reference cases from weval-compat-notes §8, plus the edges of the rule.
COVERAGE = [
    ("three equal points", [(1, 1, None), (0.5, 1, None), (0, 1, None)], 0.5),
    ("weights", [(1, 2, None), (0.5, 1, None)], 0.8333333333333334),
    ("best path wins", [(0.8, 1, "path_0"), (0, 1, "path_0"), (0.8, 1, "path_1"), (1, 1, "path_1")], 0.9),
    ("required and paths each half",
     [(0.8, 1, None), (0.6, 1, None), (0.2, 1, "path_0"), (0.4, 1, "path_0"), (1, 1, "path_1")], 0.85),
    ("excluded points are skipped", [(1, 1, None), (None, 1, None), (0, 1, None)], 0.5),
    # as the reference: a group whose points all failed counts as 0 (dropping it would lift the score)
    ("an all-excluded path counts as 0", [(0.4, 1, None), (None, 1, "path_0")], 0.2),
    ("only paths", [(0.3, 1, "path_0"), (0.6, 1, "path_1")], 0.6),
    ("nothing scored", [(None, 1, None), (None, 2, "path_0")], None),
    ("no points", [], None),
    ("empty path id is required", [(1, 1, ""), (0, 1, "path_0")], 0.5),
    ("zero total weight", [(1, 0, None)], 0.0),
]


@pytest.mark.parametrize(("points", "expected"), [c[1:] for c in COVERAGE], ids=[c[0] for c in COVERAGE])
def test_aggregate_coverage(points: list[tuple], expected: float | None) -> None:
    result = aggregate_coverage(points)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected, abs=1e-12)


def test_points_as_named_tuples_and_objects() -> None:
    class Point:
        def __init__(self, score: float, weight: float, path: str | None) -> None:
            self.score, self.weight, self.path_id = score, weight, path

    assert aggregate_coverage([CoveragePoint(1.0, 2.0), CoveragePoint(0.5)]) == pytest.approx(0.8333333333)
    assert aggregate_coverage([Point(1, 1, None), Point(0, 1, "path_0")]) == 0.5
    assert aggregate_coverage([(1.0,), (0.0, 3.0)]) == 0.25


def test_avg_coverage_extent_rounds_like_the_reference() -> None:
    assert avg_coverage_extent([(1, 2, None), (0.5, 1, None)]) == 0.83
    assert avg_coverage_extent([(0.125, 1, None)]) == 0.13
    assert avg_coverage_extent([]) is None


@pytest.mark.parametrize(("x", "digits", "expected"), [
    (0.125, 2, 0.13), (1.005, 2, 1.0), (0.8333333, 2, 0.83), (2.5, 0, 3.0), (-2.5, 0, -2.0), (0.5, 0, 1.0),
    (0.49999999999999994, 0, 0.0), (1.115, 2, 1.12), (0.875, 2, 0.88), (0.0, 2, 0.0), (1.0, 2, 1.0),
])
def test_js_round(x: float, digits: int, expected: float) -> None:
    assert js_round(x, digits) == expected


@pytest.mark.parametrize(("x", "expected"), [(0.125, 0.13), (1.005, 1.0), (1.115, 1.11), (0.875, 0.88),
                                             (0.625, 0.63), (0.8333, 0.83), (2.675, 2.67)])
def test_js_to_fixed(x: float, expected: float) -> None:
    assert js_to_fixed(x, 2) == expected


def test_rounding_matches_javascript_on_random_and_tricky_values() -> None:
    rnd = random.Random(7)
    values = [rnd.random() for _ in range(300)] + [k / 1000 for k in range(0, 1001, 5)] + \
        [k / 8 for k in range(9)] + [1.005, 1.115, 2.675, 0.285, 1.255, 0.145, 8.345, 1.0049999999999999] + \
        [-k / 4 for k in range(9)] + [-0.0, 12345.75, 1e14 + 0.5, 3.0000000000000004, 0.25000000000000006]
    ctx = quickjs.Context()
    ctx.set("xs", ",".join(repr(v) for v in values))
    js_rounds = ctx.eval("xs.split(',').map(Number).map(x => Math.round(x * 100) / 100).join(',')").split(",")
    js_fixed = ctx.eval("xs.split(',').map(Number).map(x => parseFloat(x.toFixed(2))).join(',')").split(",")
    assert [js_round(v, 2) for v in values] == [float(v) for v in js_rounds]
    assert [js_to_fixed(v, 2) for v in values] == [float(v) for v in js_fixed]
