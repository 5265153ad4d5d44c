"""Signature help (engine/ide/signature.py): point functions' and assertions' arguments, the current one marked."""

from __future__ import annotations

import pytest

from evalspec.ide.signature import signature_help
from evalspec.registry.weval_functions import POINT_FUNCTIONS, SHAPES, Arg

from .helpers import cursor

W = "title: t\nmodels: [echo]\n---\n- id: p\n  prompt: hi\n  should:\n"
A = "tests:\n  - id: a\n    input: hi\n    criteria: c\n    assert:\n"


def _active(text: str, fmt: str) -> tuple[str, str | None] | None:
    sig = signature_help(*cursor(text, fmt))
    if sig is None:
        return None
    return sig.label, sig.parameters[sig.active].label if sig.active is not None else None


@pytest.mark.parametrize("line,expected", [
    ('    - $contains_at_least_n_of: ‸', ("$contains_at_least_n_of: [n, [text, …]]", "n")),
    ('    - $contains_at_least_n_of: [‸', ("$contains_at_least_n_of: [n, [text, …]]", "n")),
    ('    - $contains_at_least_n_of: [2, ["a", ‸', ("$contains_at_least_n_of: [n, [text, …]]", "[text, …]")),
    ('    - $contain_at_least_n_of: [2, [‸', ("$contain_at_least_n_of: [n, [text, …]]", "[text, …]")),  # an alias
    ('    - $word_count_between: [1‸0, 20]', ("$word_count_between: [min, max]", "min")),
    ('    - $word_count_between: [10, ‸', ("$word_count_between: [min, max]", "max")),
    ('    - $word_count_between: [10, 20, ‸', ("$word_count_between: [min, max]", None)),  # one too many
    ('    - $imatches: "^a‸', ("$imatches: pattern", "pattern")),
    ('    - text: x\n      weight: 2\n    - $icontains_at_least_n_of: [1, [‸', ("$icontains_at_least_n_of: [n, [text, …]]", "[text, …]")),
    ('    - - $word_count_between: [5, ‸', ("$word_count_between: [min, max]", "max")),  # in a path
])
def test_point_function_arguments(line: str, expected: tuple[str, str | None]) -> None:
    assert _active(W + line + "\n", "weval") == expected


def test_no_signature_outside_a_functions_arguments() -> None:
    assert _active(W + "    - $conta‸\n", "weval") is None  # the name itself: completion's business
    assert _active(W + "    - is po‸lite\n", "weval") is None
    assert _active("title: t‸\n", "weval") is None


def test_every_argument_shape_has_parameters_that_are_in_its_label() -> None:
    assert set(SHAPES) == set(Arg)
    for fn in POINT_FUNCTIONS.values():
        from evalspec.ide.signature import function_signature

        sig = function_signature(fn, fn.name, 0)
        for (start, end), p in zip(sig.offsets(), sig.parameters, strict=True):
            assert sig.label[start:end] == p.label


@pytest.mark.parametrize("lines,expected", [
    ("      - type: field-accuracy\n        aggregation: ‸", ("type: field-accuracy — fields, aggregation?", "aggregation?")),
    ("      - type: field_accuracy\n        fie‸", ("type: field_accuracy — fields, aggregation?", "fields")),
    ("      - type: field-accuracy\n        fields:\n          - {path: a.b, match: ‸",
     ("a field-accuracy field — path, match, weight?, required?, tolerance?, relative?, formats?", "match")),
    ("      - type: field-accuracy\n        fields:\n          - path: a.b\n            toler‸",
     ("a field-accuracy field — path, match, weight?, required?, tolerance?, relative?, formats?", "tolerance?")),
    ("      - type: contains\n        value: ‸", ("type: contains — value", "value")),
])
def test_assertion_fields(lines: str, expected: tuple[str, str | None]) -> None:
    assert _active(A + lines + "\n", "agentv") == expected
