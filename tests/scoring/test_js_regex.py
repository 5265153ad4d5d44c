"""JavaScript regexes: the lint (js_regex_lint's parser, QuickJS's verdict) and matching in QuickJS.

The oracle is a fresh QuickJS context per question; evalspec's matcher keeps one runtime per thread with
its compiled regexes cached, so agreeing with the oracle tests the harness (strings crossing, the cache,
`lastIndex` with `g`/`y`, the `v` flag's dashes), and the lint's parser is held to QuickJS's verdict."""

from __future__ import annotations

import json

import pytest
import quickjs

from evalspec.scoring.js_regex import (
    JsRegexError,
    JsRegexNotEvaluated,
    JsRegexTimeout,
    js_regex_problem,
    js_regex_test,
    regex_findings,
)
from evalspec.scoring.js_regex_lint import find_js_regex_problems, strip_leading_inline_i


def _js(expression: str, **values: str) -> object:
    ctx = quickjs.Context()
    ctx.set_time_limit(1.0)
    for name, value in values.items():  # as JSON text: a lone surrogate does not cross the binding as text
        ctx.set(f"{name}_json", json.dumps(value))
        ctx.eval(f"var {name} = JSON.parse({name}_json);")
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
    problems = regex_findings(pattern, flags)
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
    ("\\u{1F600}", "u"), ("\\uD83D\\uDE00", ""), ("cat", "y"), ("^cat", "ym"), ("a|b|", ""), ("a", "g"),
    ("a", "gy"), ("b", "g"), ("^.$", ""), ("^.$", "u"), ("^..$", ""), ("K", "i"), ("k", "iu"), ("s", "i"),
    ("S", "iu"), ("i", "i"), ("I", "i"), ("\\u0130", "i"),
    ("(?<=a|bc)x", ""), ("(?<=a+)x", ""), ("\\p{Script=Greek}", "u"), ("\\p{Emoji}", "u"), ("[\\p{L}--[a-z]]", "v"),
    ("(?=c)cat", ""), ("(?!c)\\w", ""), ("(?<=\\$)\\d", ""), ("(?<!\\$)\\d", ""), ("(?=a)*b", ""),
    ("[\\w-]+", ""), ("[\\b]", ""), ("[-a]", ""), ("[a-]", ""), ("\\/", ""), ("\\p{ASCII}+", "u"),
    ("\\p{Any}", "u"), ("\\p{White_Space}", "u"), ("\\p{gc=Nd}", "u"), ("[^\\p{L}]", "u"),
]
MATCH_INPUTS = [
    "abc", "abc\n", "x\nabc\nx", "a\rb", "a\u2028b", "a\nc", "abc def", "٣٤", "é", "É", "Ünïcödé", "\ufeff",
    "\x1c", "\u00a0", "cat", "concat", "a cat!", "éfooé", "b", "ab", "aab", "xx", "y", "xy", "k", "\x01",
    "8", "A", "\x00", "a{,2}", "a{", "xxx", "xxy", "Aabc", "p{L}", "CAT", "\n", "\x11", "😀", "$5", "5",
    "a-b_c", "\x08", "-", "/", "", "   ", "\u2000", "CaT", "\u212a", "\u017f", "\u0130", "\u0131", "bcx", "cx",
    "aaax", "αβγ", "a-1", "b-2", "A-", "\ud800", "a\ud83d", "\ude00b", "\u2029",
]


@pytest.mark.parametrize(("pattern", "flags"), MATCH_PATTERNS)
def test_matches_agree_with_javascript(pattern: str, flags: str) -> None:
    assert js_compiles(pattern, flags)
    disagreements = [text for text in MATCH_INPUTS
                     if js_regex_test(pattern, text, flags) != js_test(pattern, flags, text)]
    assert disagreements == []




@pytest.mark.parametrize(("pattern", "flags", "text", "expected"), [
    # With `v`, a `-` outside a class is the character itself; QuickJS-ng rejects it, so the matcher
    # writes it `\x2d` (js_regex._v_flag_dashes). The expectations are JavaScript's (V8, JavaScriptCore).
    ("a-b", "v", "xa-by", True), ("a-b", "v", "ab", False), ("[a-c]-\\d", "v", "b-7", True),
    ("(?-i:a)-", "iv", "a-", True), ("(?-i:a)-", "iv", "A-", False), ("[\\p{L}--[a-z]]-", "v", "É-", True),
    ("\\-", "v", "-", None),  # an escaped '-' outside a class stays an error with v, as in JavaScript
])
def test_the_v_flag_reads_a_dash_outside_a_class_as_itself(pattern: str, flags: str, text: str,
                                                             expected: bool | None) -> None:
    if expected is None:
        with pytest.raises(JsRegexError):
            js_regex_test(pattern, text, flags, dialect="agentv")
    else:
        assert js_regex_test(pattern, text, flags, dialect="agentv") is expected


def test_invalid_patterns_raise_the_references_message() -> None:
    # Weval runs on Node 20: V8's words, with the pattern and (sorted) flags.
    with pytest.raises(JsRegexError, match=r"^Invalid regular expression: /\(\?i\)abc/i: Invalid group$"):
        js_regex_test("(?i)abc", "abc", "i")
    with pytest.raises(JsRegexError, match=r"^Invalid regular expression: /\(/: Unterminated group$"):
        js_regex_test("(", "x")
    # AgentV runs on bun: JavaScriptCore's words, no pattern.
    with pytest.raises(JsRegexError, match=r"^Invalid regular expression: nothing to repeat$"):
        js_regex_test("a++", "x", dialect="agentv")
    with pytest.raises(JsRegexError, match="flags"):
        js_regex_test("abc", "x", "q", dialect="agentv")


def test_es2025_syntax_is_an_error_for_weval_only() -> None:
    # Node 20 (Weval) rejects inline modifiers and a group name used twice; bun (AgentV) and QuickJS-ng
    # accept both (the AgentV vectors score `(?i:abc)` on "xabc" as a match).
    for pattern in ("(?i:abc)", "(?<a>x)|(?<a>y)"):
        with pytest.raises(JsRegexError):
            js_regex_test(pattern, "xabc")
        assert regex_findings(pattern, dialect="agentv") == []
    assert js_regex_test("(?i:abc)", "xABC", dialect="agentv") is True
    assert js_regex_test("(?<a>x)|(?<a>y)", "y", dialect="agentv") is True


@pytest.mark.parametrize(("pattern", "flags", "text"), [
    ("(?<=a|bc)x", "", "bcx"), ("(?<=a+)x", "", "aaax"), ("\\p{Script=Greek}", "u", "αβγ"),
    ("\\p{Emoji}", "u", "😀"), ("\\p{RGI_Emoji}", "v", "👍🏽"),
])
def test_what_the_python_translation_could_not_evaluate_now_runs(pattern: str, flags: str, text: str) -> None:
    assert js_regex_test(pattern, text, flags) is True


def test_dollar_is_end_of_input_not_before_final_newline() -> None:
    import re

    assert re.search("abc$", "abc\n")  # what Python's engine does
    assert not js_regex_test("abc$", "abc\n")


# --- the minimal cases: JavaScript's case folding and UTF-16 units without `u` -----------------

@pytest.mark.parametrize(("pattern", "text", "flags", "expected"), [
    ("s", "\u017f", "i", False), ("S", "\u017f", "i", False), ("\u017f", "s", "i", False),  # ſ
    ("k", "\u212a", "i", False), ("K", "\u212a", "i", False),  # Kelvin sign
    ("i", "\u0130", "i", False), ("I", "\u0130", "i", False),  # İ
    ("i", "\u0131", "i", False), ("I", "\u0131", "i", False),  # ı
    ("s", "\u017f", "iu", True), ("k", "\u212a", "iu", True),  # with `u`: simple case folding
    ("^.$", "😀", "", False), ("^..$", "😀", "", True), ("^.$", "😀", "u", True),  # one UTF-16 unit
    ("^[😀]$", "😀", "", False), ("^[😀]$", "😀", "u", True),
])
def test_javascript_folding_and_code_units(pattern: str, text: str, flags: str, expected: bool) -> None:
    assert js_regex_test(pattern, text, flags) is expected


# --- strings cross into JavaScript intact ------------------------------------------------------------

@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("^\\ud800$", "\ud800", True),  # a lone surrogate in the answer (the binding turns it into undefined)
    ("\ud800", "x\ud800y", True),  # and in the pattern (the binding raises SystemError)
    ("^\\udc00", "\udc00\ud800", True),
    ("^a\\u0000b$", "a\x00b", True), ("^a.b$", "a\x00b", True),  # NUL inside the text
    ("^.$", "\u2028", False), ("^\\u2028$", "\u2028", True), ("^\\s$", "\u2029", True),
    ("^\\uD83D\\uDE00$", "😀", True),
])
def test_strings_cross_intact(pattern: str, text: str, expected: bool) -> None:
    assert js_regex_test(pattern, text) is expected


def test_a_long_answer_crosses_whole() -> None:
    text = "x" * 5_000_000 + "\ud800" + "END"
    assert js_regex_test("\\ud800END$", text) is True
    assert js_regex_test("^x{5000000}\\ud800", text) is True
    assert js_regex_test("^x{5000001}", text) is False


# --- the deadline ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("pattern", "after"), [("(a+)+$", True), ("^(a|a)*$", True), ("(\\w+\\s?)+$", True),
                                              ("(a|aa)+b", False)])
def test_a_catastrophic_pattern_stops_at_the_deadline(pattern: str, after: bool) -> None:
    with pytest.raises(JsRegexTimeout, match=r"longer than 0\.2 s"):
        js_regex_test(pattern, "a" * 5_000 + "!", time_limit_s=0.2)
    assert js_regex_test(pattern, "aa") is after  # the thread's next runtime works


def test_quickjs_limits_are_not_scored_not_errors() -> None:
    # Valid JavaScript that QuickJS cannot compile (more than 255 groups) is a check not made.
    with pytest.raises(JsRegexNotEvaluated, match="too many captures"):
        js_regex_test("(a)" * 300, "a")
    [problem] = regex_findings("(a)" * 300)
    assert (problem.severity, problem.code) == ("warning", "not-evaluable")
    with pytest.raises(JsRegexNotEvaluated, match="more than evalspec evaluates"):
        js_regex_test("a" * 100_001, "a")


# --- threads ---------------------------------------------------------------------------------------

def test_threads_each_get_their_own_runtime_and_the_same_answers() -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from evalspec.scoring import js_regex

    cases = [(p, f, t) for p, f in MATCH_PATTERNS for t in MATCH_INPUTS[:20]]
    expected = [js_regex_test(p, t, f) for p, f, t in cases]
    runtimes: dict[int, int] = {}

    def run(shift: int) -> list[bool]:
        runtimes[threading.get_ident()] = id(js_regex._runtime())
        order = cases[shift:] + cases[:shift]
        answers = [js_regex_test(p, t, f) for p, f, t in order]
        return answers[len(cases) - shift:] + answers[:len(cases) - shift]

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(run, range(0, 600, 100)))
    assert all(r == expected for r in results)
    assert len(set(runtimes.values())) == len(runtimes) >= 2


def test_a_forked_child_makes_its_own_runtime() -> None:
    import os

    from evalspec.scoring import js_regex

    assert js_regex_test("b+", "abc") is True
    parent = js_regex._runtime()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's runtime is not used (a QuickJS runtime is never shared)
        try:
            inherited = getattr(js_regex._local, "runtime", None)
            answers = [js_regex_test("b+", "abc"), js_regex_test("^x", "abc")]
            os.write(write, repr((inherited is None, js_regex._runtime() is not parent, answers)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as got:
        child = got.read()
    os.waitpid(pid, 0)
    assert child == "(True, True, [True, False])"
    assert js_regex._runtime() is parent and js_regex_test("c$", "abc") is True


# --- the lint ----------------------------------------------------------------------------------------

def test_the_lint_adds_quickjs_verdict_to_the_parser() -> None:
    # An unknown script name: the parser accepts any name; QuickJS knows the list.
    [problem] = regex_findings("\\p{Script=Klingon}", "u")
    assert (problem.severity, problem.code) == ("error", "js-syntax")
    assert problem.message == "Invalid property name"  # as Node 20 words it
    # `v`'s set operations are QuickJS's to judge (the parser reads `v` like `u`).
    assert regex_findings("[\\p{L}--[a-z]]", "v") == []
    assert regex_findings("[\\p{L}--[a-z]", "v")[0].severity == "error"


def test_deeply_nested_groups_are_left_to_quickjs() -> None:
    # The parser stops past 100 levels (5,000 was a RecursionError); the verdict is QuickJS's.
    assert regex_findings("(?:" * 200 + "a" + ")" * 200) == []
    assert js_regex_test("(?:" * 200 + "a" + ")" * 200, "xa") is True


_FUZZ_PIECES = [
    *"ab()[]{}^$.*+?|\\-,0123dDwWsSbBkpPuxc<>=!:", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?<n>", "\\k<n>", "{1,2}",
    "{2}", "[^", "\\u0041", "\\x41", "\\p{L}"]
_FUZZ_INPUTS = ["", "a", "ab", "aab", "b", "A", "1", "-", "ba\n", "{1}", "\\", "(", "a b"]


@pytest.mark.parametrize("seed", range(4))
def test_random_patterns_agree_with_javascript(seed: int) -> None:
    """Random token soups: the parser's verdict on validity is QuickJS's, and the matcher's answers are a
    fresh context's."""
    import random

    rnd = random.Random(seed)
    disagreements = []
    for _ in range(400):
        pattern = "".join(rnd.choice(_FUZZ_PIECES) for _ in range(rnd.randint(1, 7)))
        flags = rnd.choice(["", "", "i", "u", "m", "s", "iu", "g", "y"])
        errors = [p for p in find_js_regex_problems(pattern, flags) if p.severity == "error"]
        if any(p.code in ("inline-modifiers", "duplicate-group-name") for p in errors):
            continue  # Node 20's rejections, which QuickJS-ng does not share
        if (not errors) != js_compiles(pattern, flags):
            disagreements.append((pattern, flags, "validity"))
            continue
        if not errors:
            disagreements += [(pattern, flags, text) for text in _FUZZ_INPUTS
                              if js_regex_test(pattern, text, flags, dialect="agentv")
                              != js_test(pattern, flags, text)]
    assert disagreements == []


def test_the_minimal_cases_through_the_scorers() -> None:
    # Issue 25's reproducers as a user meets them: a Weval point and an AgentV assertion.
    from evalspec.scoring.agentv_assertions import NotScored, evaluate_assertion
    from evalspec.scoring.weval_points import PointContext, evaluate_point

    ctx = PointContext(messages=[], model_id="m", prompt_id="p")
    assert evaluate_point("imatches", "k", "\u212a", ctx).score == 0.0  # Kelvin sign, no `u`
    assert evaluate_point("imatches", "s", "\u017f", ctx).score == 0.0  # ſ
    assert evaluate_point("not_imatches", "i", "\u0130", ctx).score == 1.0  # İ
    assert evaluate_point("imatch_all_of", ["I", "x"], "\u0131x", ctx).score == 0.5  # ı
    assert evaluate_point("matches", "^.$", "😀", ctx).score == 0.0
    assert evaluate_assertion({"type": "regex", "value": "^.$"}, "😀").score == 0.0  # type: ignore[union-attr]
    assert evaluate_assertion({"type": "regex", "value": "^.$", "flags": "u"}, "😀").score == 1.0  # type: ignore[union-attr]
    assert evaluate_assertion({"type": "regex", "value": "k", "flags": "iu"}, "\u212a").score == 1.0  # type: ignore[union-attr]
    # A catastrophic pattern: not scored, and `should_not` / `negate` do not turn it into a pass.
    slow = "a" * 5_000 + "!"
    for fn in ("matches", "not_matches", "imatch_at_least_n_of"):
        arg = [1, ["(a+)+$"]] if fn.endswith("_of") else "(a+)+$"
        result = evaluate_point(fn, arg, slow, ctx)
        assert result.score is None and "not evaluated" in (result.error or "")
    for negate in (False, True):
        got = evaluate_assertion({"type": "regex", "value": "(a+)+$", "negate": negate}, slow)
        assert isinstance(got, NotScored) and "longer than" in got.reason
