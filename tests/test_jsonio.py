"""JSON in and out: orjson's output, and the standard library for what orjson refuses."""

from __future__ import annotations

import json
import math

import pytest

from evalspec.jsonio import dumps, dumps_bytes, loads


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
