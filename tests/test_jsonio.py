"""JSON in and out: orjson's output, and the standard library for what orjson refuses."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalspec.jsonio import dumps, dumps_bytes, dumps_indented, loads


def test_compact_utf8_and_nan_as_null() -> None:
    assert dumps_bytes({"a": "é", "n": math.nan, "i": math.inf, 1: [1.5, None]}) == (
        '{"a":"é","n":null,"i":null,"1":[1.5,null]}'.encode()
    )


def test_lone_surrogate_answer_is_written_escaped() -> None:
    # JSON.parse accepts "\ud800"; an answer holding one must still reach the journal and results.
    answer = loads(b'{"text": "bad \\ud800 half"}')["text"]
    assert answer == "bad \ud800 half"
    out = dumps_bytes({"text": answer})
    assert out == b'{"text":"bad \\ud800 half"}'
    assert json.loads(out) == {"text": answer}


def test_integers_beyond_64_bits() -> None:
    assert dumps(2**70) == str(2**70)
    assert dumps({"n": [2**70, math.nan]}) == f'{{"n":[{2**70},null]}}'


def test_unserializable_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        dumps_bytes({"x": object()})


def test_invalid_json_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        loads(b'{"a": ')


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text() | st.integers() | st.floats() | st.booleans() | st.none(), inner, max_size=4),
    max_leaves=20)


@given(_JSONISH)
def test_dumps_indented_writes_what_the_standard_library_writes(value: object) -> None:
    assert dumps_indented(value) == json.dumps(value, ensure_ascii=False, indent=2)


def test_dumps_indented_leaves_no_reference_cycle() -> None:
    """The standard encoder's indented path leaves a cycle of closures per call; this one none (the
    evalspec process runs with the cyclic collector off, so a cycle is memory for the whole run)."""
    import gc

    value = [{"role": "user", "content": "hé"}, {"n": [1, 2.5, None, True, {}]}]
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        for _ in range(50):
            dumps_indented(value)
        after = len(gc.get_objects())
        for _ in range(50):
            json.dumps(value, ensure_ascii=False, indent=2)
        leaked = len(gc.get_objects())
    finally:
        gc.enable()
    assert after - before < 10 and leaked - after >= 50  # the comparison shows the test can fail
