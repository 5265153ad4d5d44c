"""js_stringify's short flat lists (orjson's text) are the text the standard encoder wrote for them."""

from __future__ import annotations

import pytest

from evalspec.run.write.jsjson import _encode_sliced, _js_stringify, _NotPlain, _plain, js_stringify


def _standard(value: object) -> str:
    """js_stringify as it was before the lists' orjson path: the standard encoder, else the exact walk."""
    try:
        return _encode_sliced(_plain(value))
    except (_NotPlain, ValueError):
        return _js_stringify(value)


@pytest.mark.parametrize("value", [
    [3, 60],
    [],
    ["a\"b\\c", "\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f", "é\u2028\u2029\ufeff😀", ""],
    [True, False, None, 0, -1, 2**63 - 1, -(2**63)],
    [0.5, 0.1, 123456789.125, 1.0, -0.0, 1e15 + 0.5],
    [2**64, 1],  # past 64 bits: orjson refuses, the standard encoder writes it
    ["\ud800x", 1],  # a lone surrogate: orjson refuses, the standard encoder writes it
    [1e21, 1e-7],  # exponents: the exact walk (JavaScript's 1e+21, 1e-7)
    list(range(300)),  # past a slice: the sliced encoder
])
def test_short_lists_as_before(value: list[object]) -> None:
    assert js_stringify(value) == _standard(value)


def test_javascript_text() -> None:
    assert js_stringify([3, 60.0, "a\n", None, True]) == '[3,60,"a\\n",null,true]'
    assert js_stringify([0.5, 1e21]) == "[0.5,1e+21]"
