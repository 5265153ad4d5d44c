"""Weval's own answers (../shared/vectors/weval, see its README) walked through evalspec's code paths.

Every vector of points.jsonl, aggregate.jsonl and normalize.jsonl goes through the functions `check` and
`run` use (tests/weval/vector_walk.py). A vector evalspec answers differently on purpose is named in
DELIBERATE with its reason (each reason is a row of docs/reference-differences.md, "Weval"); any other
difference fails, and so does a listed vector that in fact matches, so the table cannot go stale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .vector_walk import (
    PARSER_VECTORS,
    aggregate_outcome,
    normalize_outcome,
    parser_outcome,
    point_outcome,
    vectors,
)

NAN_FROM_JS = ("$js returned NaN: the reference keeps NaN as the point's score, and the cell's "
               "avgCoverageExtent becomes NaN (written null); evalspec reports the point not scored")
NAN_ARGUMENT = ("a NaN argument (`.nan`): the reference compares with NaN, always false, and scores NaN or "
                "a pass on a bound it never checked; evalspec reports the point not scored")
NO_BOUNDS = ("$tool_call_count_between without numeric bounds: the reference reads them as 0 and Infinity "
             "and scores a check that was not made; evalspec reports the point not scored")
ALL_FAILED = ("every point of the cell failed: the reference scores the cell 0; evalspec leaves it without a "
              "score (a check not made is never a score)")

DELIBERATE: dict[str, dict[str, tuple[int, ...]]] = {
    NAN_FROM_JS: {
        "aggregate.jsonl": (
            1746, 1770, 1782, 1854, 1890, 1962, 1974, 1998, 2010, 2022, 2034, 2058, 2070, 2082, 2118, 2154, 2166,
            2202, 2214, 2226, 2250, 2262, 2274, 2286, 2298, 2322, 2334, 2358, 2382, 2406, 2442, 2454, 2490, 2502,
            2514, 2538, 2550, 2586, 2634, 2646, 2682, 2706, 2742, 2754, 2790, 2826, 2850, 2874, 2886, 2898, 2946,
            2970, 2982, 3006, 3018, 3030, 3042, 3066, 3078, 3090, 3102, 3114, 3150, 3186, 3258, 3270, 3282, 3294,
            3318, 3342, 3354, 3378, 3426, 3486, 3498, 3522, 3546, 3558, 3630, 3642, 3690, 3714, 3738, 3750, 3762,
            3774, 3786, 3798, 3822, 3834, 3846, 3882, 3894, 3906, 3930, 3942, 3966, 3978, 4002, 4014, 4026, 4038,
            4050, 4098, 4110, 4122, 4158, 4182, 4218, 4230, 4254, 4278, 4290, 4374, 4386, 4398, 4458, 4494, 4542,
            4554, 4566, 4602, 4614, 4650, 4662, 4674, 4686, 4710, 4722, 4746, 4758, 4794, 4818,
        ),
        "points.jsonl": (
            2629, 2665, 2667, 2675, 2697, 2709, 2717, 2764, 2769, 2771, 2813, 2821, 2847, 2858, 2859, 2886, 2895,
            2908, 2909, 2924, 2935, 2937, 2946, 2950, 2954, 2965, 2983, 3015, 3016, 3017, 3036, 3046, 3063, 3069,
            3071, 3072, 3080, 3087, 3110,
        ),
    },
    NAN_ARGUMENT: {
        "aggregate.jsonl": (
            1758, 1806, 1842, 1902, 1926, 1986, 2094, 2106, 2142, 2346, 2418, 2430, 2466, 2526, 2598, 2658, 2766,
            2802, 2838, 2934, 3054, 3210, 3222, 3306, 3414, 3510, 3582, 3594, 3654, 3666, 3702, 3810, 3870, 3918,
            4062, 4170, 4206, 4302, 4446, 4470, 4518, 4626, 4806,
        ),
        "points.jsonl": (
            555, 2082, 2108, 2287, 3516, 3565, 3589, 3590, 3615, 15009, 15033, 15069, 15082, 15084, 15096, 15102,
            15141, 15142, 15153, 15162, 15170, 15194, 15197, 15227, 15255, 15263, 15265, 15272, 15284, 15303, 15326,
            15332, 15336, 15346, 15354, 15364, 15370, 15380, 15391, 15404, 15410, 15411, 15416, 15461, 15467, 15502,
            15522, 15529, 15544, 15560, 15566, 15578, 15588, 15620, 15651, 15664, 15692, 15702, 15706, 15707, 15719,
            15720, 15732, 15753, 15766, 15779, 15780, 15785, 15789, 15800, 15817, 15846, 15850, 15856, 15858, 15865,
            18522, 18527, 18550, 18576, 18585, 18593, 18598, 18640, 18693, 18699, 18717, 18733, 18795, 18796, 18800,
            18812, 18827, 18836, 18849, 18892, 18894, 18911, 18949, 18954, 19063, 19100, 19118, 19124, 19130, 19137,
            19146, 19167, 19194, 19201, 19215, 19229, 19235, 19241, 19248, 19254, 19263, 19270, 19279, 19293, 19301,
            19310, 19319, 19325, 19340, 19344, 19351, 19359, 19379, 19383, 19397, 19451, 19465, 19471, 19479, 19486,
            19494, 19506, 19513, 19534, 19541, 19549, 19552, 19559, 19571, 19580, 19588, 19595, 19601, 19607, 19616,
            19625, 19633, 19642, 19650, 19681, 19692, 19705, 19712, 19719, 19726, 19729, 19742, 19749, 19764, 19773,
            19793, 19797, 19806, 19814, 19820, 19837,
        ),
    },
    NO_BOUNDS: {
        "points.jsonl": (
            3481, 3484, 3488, 3489, 3490, 3494, 3497, 3498, 3499, 3501, 3504, 3507, 3510, 3511, 3514, 3518, 3519,
            3520, 3523, 3528, 3531, 3538, 3541, 3542, 3543, 3546, 3548, 3551, 3552, 3554, 3560, 3562, 3564, 3569,
            3571, 3573, 3575, 3576, 3577, 3578, 3583, 3584, 3586, 3587, 3591, 3592, 3593, 3595, 3596, 3597, 3600,
            3609, 3611, 3614, 3620, 3625, 3626,
        ),
    },
    ALL_FAILED: {
        "aggregate.jsonl": (
            13, 200, 220, 272, 328, 405, 486, 491, 554, 592, 619, 696, 726, 802, 844, 850, 887, 1077, 1134, 1135,
            1772, 1976, 2007, 2111, 2163, 2180, 2211, 2240, 2264, 2367, 2403, 2576, 2603, 2720, 2811, 2939, 3027,
            3091, 3099, 3135, 3279, 3416, 3472, 3584, 3699, 3719, 3788, 3800, 3855, 4015, 4023, 4087, 4220, 4355,
            4364, 4379, 4423, 4763,
        ),
    },
}

OUTCOMES: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "points.jsonl": point_outcome,
    "aggregate.jsonl": aggregate_outcome,
    "normalize.jsonl": normalize_outcome,
}


def _listed(table: dict[str, dict[str, tuple[int, ...]]], name: str) -> dict[int, str]:
    return {line: reason for reason, files in table.items() for line in files.get(name, ())}


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_every_vector_matches_the_reference_or_is_listed(name: str) -> None:
    deliberate = _listed(DELIBERATE, name)
    unexpected: list[str] = []
    stale: list[int] = []
    count = 0
    for line, vector in vectors(name):
        count += 1
        difference = OUTCOMES[name](vector)
        if difference is None:
            if line in deliberate:
                stale.append(line)
        elif line not in deliberate:
            unexpected.append(f"{name}:{line} {difference}")
    assert count > 1000, f"{name}: only {count} vectors read"
    assert not unexpected, f"{len(unexpected)} vectors differ from the reference:\n" + "\n".join(unexpected[:40])
    assert not stale, f"{name}: listed as differing but matching the reference now (remove them): {stale}"


def test_the_tables_name_each_vector_once() -> None:
    seen: set[tuple[str, int]] = set()
    for files in DELIBERATE.values():
        for name, lines in files.items():
            assert name in OUTCOMES
            for line in lines:
                assert (name, line) not in seen, (name, line)
                seen.add((name, line))


def test_random_blueprints_parse_as_wevals_parser_does() -> None:
    """Vectors of our own (scripts/weval_parser_vectors.py): random blueprints, and what Weval's
    parseAndNormalizeBlueprint answered; every auto id and prompt form must be its, no refusal unreported."""
    import json

    lines = PARSER_VECTORS.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 400
    differ = [f"{n}: {d}" for n, line in enumerate(lines, 1) if (d := parser_outcome(json.loads(line)))]
    assert not differ, "\n".join(differ[:20])


POINT_VECTORS = PARSER_VECTORS.with_name("point-vectors.jsonl")


def test_point_vectors_of_our_own_match_the_reference() -> None:
    """Cases the shared vectors do not cover, with Weval's answers (points.jsonl's form): each row's
    `reference` is what weval-org/app's evaluateFunctionPoints (51dc4d3, bundled by esbuild, Node 20)
    answered for its fn/args/answer, the name rewritten as its parser does; an error's message included
    (`scripts/weval_reference_answers.py points` makes them)."""
    import json

    from evalspec.registry.weval_functions import resolve_function
    from evalspec.scoring.weval_points import PointContext, evaluate_point

    from .vector_walk import decode

    differ = []
    for n, line in enumerate(POINT_VECTORS.read_text(encoding="utf-8").splitlines(), 1):
        d = json.loads(line)
        difference = point_outcome(d)
        ref = d["reference"]
        if difference is None and isinstance(ref, dict) and ref.get("error"):
            fn = resolve_function(d["fn"])
            got = evaluate_point(fn.name if fn else d["fn"], decode(d["args"]), d["answer"], PointContext())
            if got.error != ref["message"]:
                difference = f"message: reference {ref['message']!r}, evalspec {got.error!r}"
        if difference is not None:
            differ.append(f"{n}: {d['fn']} {json.dumps(d['args'])[:80]} → {difference}")
    assert n >= 40
    assert not differ, "\n".join(differ)


NORMALIZE_VECTORS = PARSER_VECTORS.with_name("normalize-vectors.jsonl")


def test_normalize_vectors_of_our_own_match_the_reference() -> None:
    """Blueprints the shared vectors do not cover, with Weval's answers (normalize.jsonl's form): each row's
    `reference` is what weval-org/app's parseAndNormalizeBlueprint then loadAndValidateConfig (51dc4d3,
    bundled by esbuild, Node 20, no collections folder) answered; a refusal must be an error here, never a crash
    (`scripts/weval_reference_answers.py normalize` makes them)."""
    import json

    lines = NORMALIZE_VECTORS.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 6
    differ = [f"{n}: {d}" for n, line in enumerate(lines, 1) if (d := normalize_outcome(json.loads(line)))]
    assert not differ, "\n".join(differ)
