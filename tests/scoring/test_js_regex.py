"""JavaScript regex checks and the Python translation, with a real JavaScript engine as the oracle."""

from __future__ import annotations

import pytest
import quickjs

from evalspec.scoring.js_regex import (
    JsRegexError,
    compile_js_regex,
    find_js_regex_problems,
    js_regex_problem,
    js_regex_test,
    strip_leading_inline_i,
)


def _js(expression: str, **values: str) -> object:
    ctx = quickjs.Context()
    ctx.set_time_limit(1.0)
    for name, value in values.items():
        ctx.set(name, value)
    return ctx.eval(expression)


def js_compiles(pattern: str, flags: str) -> bool:
    return bool(_js("(() => { try { new RegExp(p, f); return true } catch (e) { return false } })()",
                    p=pattern, f=flags))


def js_test(pattern: str, flags: str, text: str) -> bool:
    return bool(_js("new RegExp(p, f).test(s)", p=pattern, f=flags, s=text))


# (pattern, flags, code of the reported problem, severity) — None: no problem at all.
PROBLEMS = [
    ("(?i)hello", "", "inline-flags", "error"),
    ("(?s)a.b", "", "inline-flags", "error"),
    ("(?im)^a", "", "inline-flags", "error"),
    ("(?x) a b", "", "inline-flags", "error"),
    ("(?i:abc)", "", "inline-modifiers", "error"),
    ("a*+", "", "possessive", "error"),
    ("a++", "", "possessive", "error"),
    ("a{2}+", "", "possessive", "error"),
    ("(?P<year>\\d+)", "", "python-named-group", "error"),
    ("(?<y>a)(?P=y)", "", "python-backreference", "error"),
    ("(?#note)a", "", "comment-group", "error"),
    ("(?>a+)b", "", "atomic-group", "error"),
    ("(?(1)a|b)", "", "conditional-group", "error"),
    ("(?R)", "", "recursion", "error"),
    ("(?%a)", "", "invalid-group", "error"),
    ("(abc", "", "unbalanced-open", "error"),
    ("abc)", "", "unbalanced-close", "error"),
    ("[abc", "", "unterminated-class", "error"),
    ("abc\\", "", "trailing-backslash", "error"),
    ("*a", "", "nothing-to-repeat", "error"),
    ("a**", "", "nothing-to-repeat", "error"),
    ("^*", "", "nothing-to-repeat", "error"),
    ("\\b+", "", "nothing-to-repeat", "error"),
    ("{2}", "", "nothing-to-repeat", "error"),
    ("(?<=a)+", "", "nothing-to-repeat", "error"),
    ("(?=a)+", "u", "nothing-to-repeat", "error"),
    ("a{3,2}", "", "quantifier-order", "error"),
    ("[z-a]", "", "bad-range", "error"),
    ("[\\d-z]", "u", "bad-range", "error"),
    ("\\q", "u", "bad-escape", "error"),
    ("\\-", "u", "bad-escape", "error"),
    ("\\c1", "u", "bad-escape", "error"),
    ("\\u{110000}", "u", "bad-escape", "error"),
    ("\\2(a)", "u", "bad-backreference", "error"),
    ("(?<a>x)\\k<b>", "", "bad-backreference", "error"),
    ("(?<a>x)\\k", "", "bad-backreference", "error"),
    ("(?<1a>x)", "", "bad-group-name", "error"),
    ("(?<>x)", "", "bad-group-name", "error"),
    ("(?<a>x)(?<a>y)", "", "duplicate-group-name", "error"),
    ("\\p{Letterz}", "u", "bad-property", "error"),
    ("\\p", "u", "bad-property", "error"),
    ("{", "u", "lone-bracket", "error"),
    ("]", "u", "lone-bracket", "error"),
    ("abc", "x", "bad-flag", "error"),
    ("abc", "ii", "bad-flag", "error"),
    ("abc", "uv", "bad-flag", "error"),
    # Valid JavaScript that does not mean what a Python/PCRE author expects.
    ("\\Aabc", "", "anchor-escape", "warning"),
    ("abc\\Z", "", "anchor-escape", "warning"),
    ("abc\\z", "", "anchor-escape", "warning"),
    ("\\p{L}+", "", "property-without-u", "warning"),
    ("\\1", "", "octal-escape", "warning"),
    ("a{,5}", "", "not-a-quantifier", "warning"),
    ("/hello/i", "", "regex-literal", "warning"),
    ("\\h+", "", "python-escape", "warning"),
    # Valid and meaning what it says.
    ("^The ruling states", "", None, None),
    ("(?<year>\\d{4})-\\k<year>", "", None, None),
    ("(?<=\\$)\\d+(?!\\.)", "", None, None),
    ("[^]", "", None, None),
    ("[]", "", None, None),
    ("a{", "", None, None),
    ("x{2,}?", "", None, None),
    ("(?=a)*", "", None, None),
    ("\\p{Script=Greek}", "u", None, None),
    ("\\u{1F600}", "u", None, None),
    ("[\\w-z]", "", None, None),
    ("\\/path\\/", "", None, None),
    ("", "", None, None),
    ("a", "dgimsuy", None, None),
]


@pytest.mark.parametrize(("pattern", "flags", "code", "severity"), PROBLEMS)
def test_problem_codes(pattern: str, flags: str, code: str | None, severity: str | None) -> None:
    problems = find_js_regex_problems(pattern, flags)
    if code is None:
        assert problems == []
        assert js_regex_problem(pattern, flags) is None
    else:
        [problem] = [p for p in problems if p.code == code]
        assert problem.severity == severity
        assert js_regex_problem(pattern, flags) == problem.message


@pytest.mark.parametrize(("pattern", "flags", "code", "severity"), [p for p in PROBLEMS if p[2] not in (
    # deliberately stricter than the newest engines: ES2025 modifiers and duplicate names fail on the
    # Node versions evaluations run on, so they are reported even though QuickJS-ng accepts them
    "inline-modifiers", "duplicate-group-name")])
def test_errors_agree_with_javascript(pattern: str, flags: str, code: str | None, severity: str | None) -> None:
    assert js_compiles(pattern, flags) == (severity != "error")


def test_messages_are_specific() -> None:
    assert js_regex_problem("(?i)hello") == (
        "inline flag group '(?i)' is not valid in JavaScript; use the case-insensitive function ($imatches) instead")
    assert "set `flags: i`" in js_regex_problem("(?i)hello", dialect="agentv")  # type: ignore[operator]
    assert "'\\A' is not an anchor" in js_regex_problem("\\Afoo")  # type: ignore[operator]
    assert "possessive" in js_regex_problem("a*+")  # type: ignore[operator]
    assert "position 3" in js_regex_problem("abc)")  # type: ignore[operator]
    assert "$imatches" not in js_regex_problem("(?-i)abc")  # type: ignore[operator]
    assert js_regex_problem("(?<a>x)\\k<b>") == "invalid named backreference '\\k<b>': no capture group is named 'b'"


def test_problem_offsets_point_at_the_construct() -> None:
    [problem] = find_js_regex_problems("abc(?i)def")
    assert (problem.start, problem.end) == (3, 7)
    [flag] = find_js_regex_problems("a", "gz")
    assert (flag.where, flag.start, flag.end) == ("flags", 1, 2)


def test_errors_come_before_warnings() -> None:
    assert js_regex_problem("\\A(abc") == "unterminated group: the '(' at position 2 is never closed"


def test_strip_leading_inline_i() -> None:
    assert strip_leading_inline_i("(?i)^yes") == "^yes"
    assert strip_leading_inline_i("^yes") is None


# Patterns whose matches Python's `re` would get wrong if the pattern were used untranslated,
# plus ordinary ones. Every (pattern, flags) is checked against every input below.
MATCH_PATTERNS = [
    ("^abc$", ""), ("^abc$", "m"), ("abc$", ""), ("^b", "m"), ("a.c", ""), ("a.c", "s"),
    ("\\d+", ""), ("\\w+", ""), ("\\W", ""), ("\\s", ""), ("\\S+", ""), ("\\bcat\\b", ""), ("\\Bat", ""),
    ("[^]", ""), ("[]", ""), ("[^\\d]", ""), ("[\\W\\d]", ""), ("[^\\W_]", ""), ("[\\s\\S]", ""),
    ("(a)?\\1b", ""), ("\\1(a)", ""), ("(a\\1)", ""), ("(?<n>x)\\k<n>", ""), ("(?<n>x)?\\k<n>y", ""),
    ("\\k", ""), ("\\1", ""), ("\\8", ""), ("\\101", ""), ("[\\101]", ""), ("\\0", ""),
    ("a{,2}", ""), ("a{", ""), ("x{2}", ""), ("x{1,2}?y", ""), ("\\Aabc", ""), ("\\p{L}", ""),
    ("CAT", "i"), ("é", "i"), ("[a-z]+", "i"), ("\\u00e9", ""), ("\\x41", ""), ("\\cJ", ""), ("\\c1", ""),
    ("[\\c1]", ""), ("\\p{Lu}", "u"), ("\\P{L}", "u"), ("\\p{N}+", "u"), ("[\\p{L}\\d]+$", "u"),
    ("\\u{1F600}", "u"), ("\\uD83D\\uDE00", ""), ("cat", "y"), ("^cat", "ym"), ("a|b|", ""),
    ("(?=c)cat", ""), ("(?!c)\\w", ""), ("(?<=\\$)\\d", ""), ("(?<!\\$)\\d", ""), ("(?=a)*b", ""),
    ("[\\w-]+", ""), ("[\\b]", ""), ("[-a]", ""), ("[a-]", ""), ("\\/", ""), ("\\p{ASCII}+", "u"),
    ("\\p{Any}", "u"), ("\\p{White_Space}", "u"), ("\\p{gc=Nd}", "u"), ("[^\\p{L}]", "u"),
]
MATCH_INPUTS = [
    "abc", "abc\n", "x\nabc\nx", "a\rb", "a\u2028b", "a\nc", "abc def", "٣٤", "é", "É", "Ünïcödé", "\ufeff",
    "\x1c", "\u00a0", "cat", "concat", "a cat!", "éfooé", "b", "ab", "aab", "xx", "y", "xy", "k", "\x01",
    "8", "A", "\x00", "a{,2}", "a{", "xxx", "xxy", "Aabc", "p{L}", "CAT", "\n", "\x11", "😀", "$5", "5",
    "a-b_c", "\x08", "-", "/", "", "   ", "\u2000", "CaT",
]


@pytest.mark.parametrize(("pattern", "flags"), MATCH_PATTERNS)
def test_matches_agree_with_javascript(pattern: str, flags: str) -> None:
    assert js_compiles(pattern, flags)
    disagreements = [text for text in MATCH_INPUTS
                     if js_regex_test(pattern, text, flags) != js_test(pattern, flags, text)]
    assert disagreements == []


def test_compile_raises_on_javascript_errors() -> None:
    with pytest.raises(JsRegexError, match=r"\(\?i\)"):
        compile_js_regex("(?i)abc")
    with pytest.raises(JsRegexError, match="flag"):
        compile_js_regex("abc", "q")


def test_compile_reports_valid_javascript_it_cannot_evaluate() -> None:
    assert js_compiles("(?<=a|bc)x", "")
    with pytest.raises(JsRegexError, match="cannot evaluate") as info:
        compile_js_regex("(?<=a|bc)x")
    assert info.value.unsupported
    with pytest.raises(JsRegexError, match="script") as info:
        compile_js_regex("\\p{Script=Greek}", "u")
    assert info.value.unsupported


@pytest.mark.parametrize(("pattern", "flags", "text"), [
    ("(?<=a|bc)x", "", "bcx"), ("(?<=a|bc)x", "", "cx"), ("(?<=a+)x", "", "aaax"),
    ("\\p{Script=Greek}", "u", "αβγ"), ("\\p{Script=Greek}", "u", "abc"), ("\\p{Emoji}", "u", "😀"),
])
def test_unevaluable_patterns_fall_back_to_javascript(pattern: str, flags: str, text: str) -> None:
    assert js_regex_test(pattern, text, flags) == js_test(pattern, flags, text)


def test_test_raises_for_invalid_patterns() -> None:
    with pytest.raises(JsRegexError):
        js_regex_test("(?i)x", "x")


def test_dollar_is_end_of_input_not_before_final_newline() -> None:
    import re

    assert re.search("abc$", "abc\n")  # what a naive translation would do
    assert not js_regex_test("abc$", "abc\n")


_FUZZ_PIECES = [
    *"ab()[]{}^$.*+?|\\-,0123dDwWsSbBkpPuxc<>=!:", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?<n>", "\\k<n>", "{1,2}", "{2}", "[^", "\\u0041", "\\x41", "\\p{L}"]
_FUZZ_INPUTS = ["", "a", "ab", "aab", "b", "A", "1", "-", "ba\n", "{1}", "\\", "(", "a b"]


@pytest.mark.parametrize("seed", range(4))
def test_random_patterns_agree_with_javascript(seed: int) -> None:
    """Random token soups: same verdict on validity, and the same matches, as a JavaScript engine."""
    import random

    rnd = random.Random(seed)
    disagreements = []
    for _ in range(400):
        pattern = "".join(rnd.choice(_FUZZ_PIECES) for _ in range(rnd.randint(1, 7)))
        flags = rnd.choice(["", "", "i", "u", "m", "s", "iu"])
        errors = [p for p in find_js_regex_problems(pattern, flags) if p.severity == "error"]
        if any(p.code in ("inline-modifiers", "duplicate-group-name") for p in errors):
            continue  # deliberately stricter than QuickJS-ng (see test_errors_agree_with_javascript)
        if (not errors) != js_compiles(pattern, flags):
            disagreements.append((pattern, flags, "validity"))
            continue
        if not errors:
            disagreements += [(pattern, flags, text) for text in _FUZZ_INPUTS
                              if js_regex_test(pattern, text, flags) != js_test(pattern, flags, text)]
    assert disagreements == []
