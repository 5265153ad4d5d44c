"""The plain subset (scoring/js_regex_plain.py): patterns Python's `re` matches as JavaScript does.

The oracle is JavaScript itself (QuickJS, a fresh context per pattern): every plain pattern below, and
thousands generated from the subset's grammar and just outside it, are tested on texts chosen to tell the
engines apart (astral characters, lone surrogates, line terminators, non-ASCII letters that fold to
ASCII in Unicode, a final newline), through js_regex_test as a run calls it. What is not plain goes to
QuickJS (the other tests of js_regex), and so does a plain pattern whose worst case on the text is long.
"""

from __future__ import annotations

import json
import random

import quickjs

from evalspec.scoring import js_regex
from evalspec.scoring.js_regex import JsRegexError, JsRegexTimeout, js_regex_test
from evalspec.scoring.js_regex_plain import plain_regex

TEXTS = [
    "", "a", "abc", "ABC", "abc\n", "\nabc", "x\nabc\nx", "a\rb", "a\u2028b", "a\u2029b", "cat", "a cat!", "concat",
    "Question 5: what is the answer number 5?", "ECHO: Question 12: the answer number 12", "123-4567", "12-345",
    "yes", "YES\n", "Yes.", "no", "k", "K", "\u212a", "s", "S", "\u017f", "\u0130", "\u0131", "i", "I", "é", "É",
    "😀", "a😀b", "😀😀", "\ud800", "a\ud83d", "\ude00b", "٣٤", "\u00a0", "\ufeff", "a_b-c", "-", "/", "a/b", "$5",
    "(x)", "[a]", "{2}", "a.b", "a+b", "a|b", "\t", "   ", "aaaa", "aaab", "abab", "xyz", "XYZ", "a1b2", "___",
]
PLAIN = [
    ("[a-z]+", ""), ("^yes$", "i"), ("^yes$", ""), ("\\d{3}-\\d{4}", ""), ("\\d+", "g"), ("\\w+", ""),
    ("\\bcat\\b", ""), ("\\bcat\\b", "i"), ("cat|dog", ""), ("a|b|", ""), ("", ""), ("^$", ""), ("^", ""), ("$", ""),
    ("^\\w*$", ""), ("[A-Z][a-z]*", ""), ("[A-Z]", "i"), ("k", "i"), ("K", "i"), ("s", "i"), ("i", "i"), ("I", "i"),
    ("answer number \\d+", ""), ("\\(x\\)", ""), ("\\[a\\]", ""), ("\\{2\\}", ""), ("a\\.b", ""), ("a\\+b", ""),
    ("a\\|b", ""), ("\\$\\d", ""), ("a\\/b", ""), ("a/b", ""), ("[a-]", ""), ("[-a]", ""), ("[\\d-z]", ""),
    ("[\\w.]+", ""), ("[._-]", ""), ("(?:ab)", ""), ("(a)(b)", ""), ("a{2}", ""), ("a{2,}", ""), ("a{1,3}?b", ""),
    ("a*?b", ""), ("a+?", ""), ("x?y?z?", ""), ("a\\nb", ""), ("\\t", ""), ("\\r", ""), ("c$", ""), ("^\\n", ""),
    ("[0-9]{2}-[0-9]{3}", ""), ("E(CHO|XIT)", ""), ("(yes|no)\\b", "i"), ("Yes\\.", "gi"), ("[a-c]{2}", "i"),
]
NOT_PLAIN = [
    ("a.c", ""), ("\\s", ""), ("\\S", ""), ("\\D", ""), ("\\W", ""), ("\\B", ""), ("[^a]", ""), ("[]", ""),
    ("(ab)+", ""), ("(a|b)*", ""), ("(?=a)", ""), ("(?<n>a)", ""), ("(a)\\1", ""), ("a{,2}", ""), ("a{", ""),
    ("a{2,1}", ""), ("a**", ""), ("*a", ""), ("^*", ""), ("é", ""), ("\\u0041", ""), ("\\x41", ""), ("[\\b]", ""),
    ("a", "m"), ("a", "s"), ("a", "u"), ("a", "y"), ("a", "v"), ("a", "gg"), ("a", "q"), ("[Z-a]", "i"), ("(", ""),
    (")", ""), ("]", ""), ("}", ""), ("a\n", ""), ("[[a]]", ""),
    ("(a)" * 101, ""), ("(" * 21 + ")" * 21, ""),  # QuickJS's limits (255 captures) stay its verdict
]


def _oracle(pattern: str, flags: str, texts: list[str]) -> list[bool]:
    """`new RegExp(pattern, flags).test(text)` for each text, in a fresh QuickJS context."""
    ctx = quickjs.Context()
    ctx.set_time_limit(10.0)
    ctx.set("args_json", json.dumps([pattern, flags, texts]))
    return json.loads(ctx.eval("var a = JSON.parse(args_json); "
                               "JSON.stringify(a[2].map(s => new RegExp(a[0], a[1]).test(s)))"))


def test_the_plain_patterns_are_plain_and_the_others_are_not() -> None:
    assert [p for p in PLAIN if plain_regex(*p) is None] == []
    assert [p for p in NOT_PLAIN if plain_regex(*p) is not None] == []


def test_plain_patterns_answer_as_javascript_on_every_text(monkeypatch) -> None:
    # QuickJS is not reachable: every answer below is re's.
    monkeypatch.setattr(js_regex, "_run", lambda *a: (_ for _ in ()).throw(AssertionError("QuickJS was asked")))
    for pattern, flags in PLAIN:
        got = [js_regex_test(pattern, text, flags, dialect="agentv") for text in TEXTS]
        assert got == _oracle(pattern, flags, TEXTS), (pattern, flags)


_ATOMS = ["a", "b", "k", "K", "s", "A", "1", "-", " ", "\\d", "\\w", "\\.", "\\(", "\\n", "[a-c]", "[A-Z]", "[a-]",
          "[0-9_]", "[\\d.]", "[^a]", ".", "\\s", "\\W", "\\B", "é", "[]"]
_QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,2}", "{0,}", "*?", "+?", "{2,1}", "**"]


def _generated(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(0, 5)):
        roll = rng.random()
        if roll < 0.1:
            out.append(rng.choice(["^", "$", "\\b", "|"]))
        elif roll < 0.2:
            inner = rng.choice(_ATOMS) + rng.choice(_ATOMS)
            out.append(rng.choice(["(", "(?:"]) + inner + rng.choice(["|", ""]) + rng.choice(_ATOMS) + ")"
                       + rng.choice(["", "", "+"]))
        else:
            out.append(rng.choice(_ATOMS) + rng.choice(_QUANTIFIERS))
    return "".join(out)


def test_generated_patterns_answer_as_javascript() -> None:
    rng = random.Random(27)
    plain = 0
    for _ in range(1500):
        pattern, flags = _generated(rng), rng.choice(["", "", "i", "g", "gi", "m"])
        if plain_regex(pattern, flags) is None:
            continue
        plain += 1
        got = [js_regex_test(pattern, text, flags, dialect="agentv") for text in TEXTS]
        assert got == _oracle(pattern, flags, TEXTS), (pattern, flags)
    assert plain >= 300  # the grammar above reaches the subset often, and leaves it often


def test_a_long_worst_case_goes_to_quickjs_under_its_time_limit(monkeypatch) -> None:
    asked: list[str] = []
    real = js_regex._run
    monkeypatch.setattr(js_regex, "_run", lambda p, f, t, limit: asked.append(p) or real(p, f, t, limit))
    plain = plain_regex("\\w+X", "")
    # Just past the shortest text whose worst case is too long for `re` (4,472 characters): QuickJS's
    # quadratic backtracking on it takes ~0.2 s of its 1 s of CPU (10,000 characters took 0.7 s, and timed
    # out when the machine was busy).
    long = 5_000
    assert plain is not None and plain.bounded(100) and not plain.bounded(long)
    assert js_regex_test("\\w+X", "a" * 100 + "X") is True and asked == []
    assert js_regex_test("\\w+X", "a" * long) is False and asked == ["\\w+X"]
    # Not plain (a quantified group): QuickJS, whose time limit still stops it.
    try:
        js_regex_test("(a+)+$", "a" * 5_000 + "!")
        raise AssertionError("expected a timeout")
    except JsRegexTimeout:
        pass


def test_the_lint_of_a_plain_pattern_starts_no_quickjs(monkeypatch) -> None:
    # JavaScript accepts every plain pattern (each compiles in the oracle above), so the check's lint of one
    # asks QuickJS nothing: an AgentV suite's `[a-z]+` starts no runtime (~23 ms of import and start).
    monkeypatch.setattr(js_regex, "_run", lambda *a: (_ for _ in ()).throw(AssertionError("QuickJS was asked")))
    js_regex._lint_verdict.cache_clear()
    for pattern, flags in PLAIN:
        for dialect in ("weval", "agentv"):
            assert js_regex.regex_findings(pattern, flags, dialect=dialect) == [], (pattern, flags, dialect)
    js_regex._lint_verdict.cache_clear()


def test_errors_are_still_javascripts() -> None:
    for pattern in ("a{2,1}", "(", "a**"):
        try:
            js_regex_test(pattern, "aa", dialect="agentv")
            raise AssertionError(pattern)
        except JsRegexError as exc:
            assert exc.message.startswith("Invalid regular expression")
