"""The `$js` sandbox against the attack run's second round of probes (issue 15): text QuickJS can hold
but UTF-8 cannot (lone surrogates in a result, a thrown value, a model's answer, the script itself)
crashed the worker twice per call, or raised UnicodeEncodeError in the run; getters, traps, sort
comparators, async functions and recursion that catches its own overflow must all end in their limits."""

from __future__ import annotations

import pytest

from evalspec.scoring.js_sandbox import JsSandboxError, evaluate, evaluate_script_or_body


def test_a_lone_surrogate_result_comes_back_as_text() -> None:
    value = evaluate("'a\\ud800b'")
    assert (value.type, value.value) == ("string", "a\ud800b")


def test_a_lone_surrogate_thrown_is_the_error_text() -> None:
    with pytest.raises(JsSandboxError) as err:
        evaluate("throw '\\udc00 went wrong'")
    assert err.value.kind == "runtime" and err.value.message == "\udc00 went wrong"


def test_a_model_answer_with_a_lone_surrogate_is_a_binding_like_any_other() -> None:
    value, _ = evaluate_script_or_body("r.length + r.charCodeAt(1)", {"r": "a\ud800b"})
    assert value.value == 3 + 0xD800


def test_a_script_holding_a_lone_surrogate_runs() -> None:
    assert evaluate("'x\ud800'.length").value == 2


@pytest.mark.parametrize(("script", "kind"), [
    ("({get score(){ for(;;){} }})", "timeout"),
    ("({score: 1, get explain(){ for(;;){} }})", "timeout"),
    ("new Proxy({}, {has(){ for(;;){} }})", "timeout"),
    ("throw {[Symbol.toPrimitive](){ for(;;){} }}", "timeout"),
    ("[3, 2, 1].sort(() => { for(;;){} })", "timeout"),
    ("(async () => { for(;;){} })()", "timeout"),
    ("function f(){ try { return f() } catch (e) { return f() } } f()", "timeout"),
    ("function* g(){ for(;;) yield 1 } [...g()]", "timeout"),
    ("let s = 'a'; for(;;) s += s", "runtime"),
    ("new Array(2 ** 31).fill(0)", "memory"),
    ("JSON.parse('['.repeat(100000) + ']'.repeat(100000))", "stack"),
])
def test_escape_probes_end_in_their_limits(script: str, kind: str) -> None:
    with pytest.raises(JsSandboxError) as err:
        evaluate(script)
    assert err.value.kind == kind
