"""JavaScript regexes run by a JavaScript engine: `new RegExp(pattern, flags).test(text)` in QuickJS.

Weval's `$matches` family (flags '' or 'i') and AgentV's `regex` (its `flags`) are JavaScript's, so
they run in QuickJS (the `quickjs-ng` package, as `$js` does): JavaScript's own syntax, case folding,
UTF-16 `.` and Annex B, with no translation. In process, not in js_worker's child: no user code runs
here (the pattern and the answer are data handed to a fixed function), the binding releases the GIL
while JavaScript runs, and QuickJS's regex engine polls the interrupt handler, so the time limit stops
a pattern that backtracks without end (`(a+)+$`). The binding counts that limit in the process's CPU
time (`clock()`), from the start of each call. A pattern of the plain subset, which Python's `re` matches
as JavaScript does on every text (js_regex_plain.py: ASCII atoms, no quantified group, a bounded worst
case for the text's length), is matched by `re` instead: a tenth of the CPU of a call into QuickJS.

One QuickJS runtime per thread (a runtime must never be touched by another thread, not even in turn):
made on first use, with the compiled RegExp objects cached inside it; a runtime that timed out or failed
is dropped and the next call makes a fresh one.

Contract: `js_regex_test` returns the match, or raises JsRegexError where the reference's JavaScript
throws (worded as its engine words it: Node 20's V8 for Weval, "Invalid regular expression: /(/:
Unterminated group"; bun's JavaScriptCore for AgentV, "Invalid regular expression: missing )"), or
JsRegexNotEvaluated where the answer could not be checked (past the deadline: JsRegexTimeout; beyond
QuickJS's limits; a pattern longer than MAX_PATTERN_LENGTH): never a pass, never a fail.
`regex_findings` is the checker's lint: js_regex_lint's findings with QuickJS's verdict.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from functools import lru_cache

from .js_regex_lint import NODE20_REJECTS, Dialect, RegexProblem, find_js_regex_problems, first_syntax_error
from .js_regex_plain import plain_regex

# How long one test of a pattern against one answer may take. JavaScript's engines backtrack without
# limit, so `(a+)+$` against 30 "a"s and a "!" would hang a run for hours (Weval's own runner too):
# past this the point is not scored, with the reason.
MATCH_TIME_LIMIT_S = 1.0
# The runtime holds the answer (2 bytes a character) and the backtracking stack.
MEMORY_LIMIT = 256 * 1024 * 1024
# Compiling is linear in the pattern but not interruptible (the worst measured: ~1 ms per `\p{RGI_Emoji}`
# with v, ~70 µs a character; 0.2 s for `[a-z]` × 20,000 with i): a longer pattern is not evaluated
# (compiled once per thread, the worst stays seconds), and the lint compiles patterns up to LINT_COMPILE_MAX.
MAX_PATTERN_LENGTH = 100_000
LINT_COMPILE_MAX = 2_000
_CACHED_REGEXES = 256  # per thread

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# QuickJS's own limits, reported as SyntaxError: valid JavaScript that cannot be evaluated here.
_QUICKJS_LIMITS = ("too many captures", "stack overflow", "out of memory")

# Installed once per runtime; the built-ins it uses are captured, though nothing else ever runs there.
# Answers: "1" / "0" (the match), "E" + message (new RegExp threw), "X" + message (the match threw).
# `enc` bits: 1 and 2, the pattern or the text is JSON text (a lone surrogate cannot cross the binding as
# text); 4, the text is the one of the previous call (a blueprint's points all test the same answer, and
# converting it costs more than most matches).
_HARNESS = r"""
globalThis.__evalspec_regex_test = (function (RegExpCtor, MapCtor, StringCtor, parse) {
  var cache = new MapCtor();
  var text = "";
  return function (p, f, s, enc) {
    if (enc & 1) p = parse(p);
    if (enc & 4) s = text; else text = s = (enc & 2) ? parse(s) : s;
    var key = f + "/" + p;
    var re = cache.get(key);
    if (re === undefined) {
      try { re = new RegExpCtor(p, f); } catch (e) { return "E" + StringCtor(e && e.message); }
      if (cache.size >= CACHED) cache.clear();
      cache.set(key, re);
    }
    re.lastIndex = 0;  // a fresh regex: `g` and `y` start at 0
    try { return re.test(s) ? "1" : "0"; } catch (e) { return "X" + StringCtor(e && e.message); }
  };
})(RegExp, Map, String, JSON.parse);
""".replace("CACHED", str(_CACHED_REGEXES))


class JsRegexError(ValueError):
    """JavaScript would throw on this pattern or these flags (the reference reports an error)."""

    def __init__(self, message: str, offset: int | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.reason = reason or message  # the engine's words without "Invalid regular expression: /…/:"


class JsRegexNotEvaluated(Exception):
    """Valid JavaScript whose match could not be computed here: the check was not made."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class JsRegexTimeout(JsRegexNotEvaluated):
    """The match ran past the time limit (catastrophic backtracking)."""


class _Runtime:
    """One QuickJS runtime and the harness function in it; used only by the thread that made it."""

    def __init__(self) -> None:
        import quickjs

        self.exception = quickjs.JSException
        self.context = quickjs.Context()
        self.context.set_memory_limit(MEMORY_LIMIT)
        self.context.eval(_HARNESS)
        self.test = self.context.get("__evalspec_regex_test")
        self.time_limit = -1.0
        self.text: str | None = None  # the text the harness holds

    def run(self, pattern: str, flags: str, text: str, time_limit_s: float) -> str:
        if time_limit_s != self.time_limit:
            self.context.set_time_limit(time_limit_s)
            self.time_limit = time_limit_s
        enc = 0
        if _LONE_SURROGATE.search(pattern):
            pattern, enc = json.dumps(pattern), enc | 1
        if text is self.text:
            return str(self.test(pattern, flags, "", enc | 4))
        self.text = None  # until the harness has it
        sent = text
        if _LONE_SURROGATE.search(text):
            sent, enc = json.dumps(text), enc | 2
        answer = str(self.test(pattern, flags, sent, enc))
        self.text = text
        return answer


_local = threading.local()


def _runtime() -> _Runtime:
    runtime: _Runtime | None = getattr(_local, "runtime", None)
    if runtime is None:
        runtime = _local.runtime = _Runtime()
    return runtime


def _drop_runtime() -> None:
    _local.runtime = None


# A forked child makes its own: the forking thread's runtime (the one thread a child has) is dropped there
# (asking os.getpid() each call instead was a system call per match).
os.register_at_fork(after_in_child=_drop_runtime)


def _run(pattern: str, flags: str, text: str, time_limit_s: float) -> str:
    runtime = _runtime()
    try:
        return runtime.run(pattern, flags, text, time_limit_s)
    except runtime.exception as exc:
        _drop_runtime()
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "interrupted" in first:
            raise JsRegexTimeout(f"matching took longer than {time_limit_s:g} s on this text (a pattern that "
                                 "backtracks without end, such as '(a+)+$'); not evaluated") from None
        raise JsRegexNotEvaluated(f"QuickJS could not run it ({first}); not evaluated") from None
    except Exception as exc:  # the binding's own failure (a string it cannot convert): not a verdict
        _drop_runtime()
        raise JsRegexNotEvaluated(f"QuickJS could not run it ({type(exc).__name__}); not evaluated") from None


# --------------------------------------------------------------------------------------------------
# Messages as the references word them: Weval runs on Node 20 (V8), AgentV on bun (JavaScriptCore)

_GROUP_CODES = frozenset({"inline-flags", "inline-modifiers", "python-named-group", "python-backreference",
                          "comment-group", "atomic-group", "branch-reset", "conditional-group", "recursion",
                          "invalid-group"})
_V8_REASONS = {
    "unbalanced-open": "Unterminated group",
    "unbalanced-close": "Unmatched ')'",
    "trailing-backslash": "\\ at end of pattern",
    "unterminated-class": "Unterminated character class",
    "nothing-to-repeat": "Nothing to repeat",
    "possessive": "Nothing to repeat",
    "quantifier-order": "numbers out of order in {} quantifier",
    "lone-bracket": "Lone quantifier brackets",
    "bad-group-name": "Invalid capture group name",
    "duplicate-group-name": "Duplicate capture group name",
    "bad-property": "Invalid property name",
    "bad-escape": "Invalid escape",
    **dict.fromkeys(_GROUP_CODES, "Invalid group"),
}
_JSC_REASONS = {
    "unbalanced-open": "missing )",
    "unbalanced-close": "unmatched parentheses",
    "trailing-backslash": "\\ at end of pattern",
    "unterminated-class": "missing terminating ] for character class",
    "nothing-to-repeat": "nothing to repeat",
    "possessive": "nothing to repeat",
    "quantifier-order": "numbers out of order in {} quantifier",
    "bad-group-name": "invalid group specifier name",
    "duplicate-group-name": "duplicate group specifier name",
    "bad-property": "invalid property expression",
    "bad-escape": "invalid escaped character for Unicode pattern",
    **dict.fromkeys(_GROUP_CODES, "unrecognized character after (?"),
}
_FLAG_ORDER = "dgimsuvy"


def _v8_reason(problem: RegexProblem) -> str | None:
    if problem.code == "bad-range":
        return "Range out of order in character class" if "order" in problem.message else "Invalid character class"
    if problem.code == "bad-backreference":
        return ("Invalid named capture referenced" if "no capture group" in problem.message
                else "Invalid named reference" if "\\k" in problem.message else "Invalid escape")
    return _V8_REASONS.get(problem.code)


def _jsc_reason(pattern: str, problem: RegexProblem) -> str | None:
    if problem.code == "bad-range":
        return ("range out of order in character class" if "order" in problem.message
                else "invalid range in character class for Unicode pattern")
    if problem.code == "bad-backreference":
        return "invalid \\k<> named backreference" if "\\k" in problem.message else \
            "invalid backreference for Unicode pattern"
    if problem.code == "bad-escape" and "octal" in problem.message:
        return "invalid octal escape for Unicode pattern"
    if problem.code == "lone-bracket":
        return ("incomplete {} quantifier for Unicode pattern" if pattern[problem.start:problem.start + 1] == "{"
                else "unmatched ] or } bracket for Unicode pattern")
    return _JSC_REASONS.get(problem.code)


def _error_message(pattern: str, flags: str, dialect: Dialect, quickjs_message: str) -> JsRegexError:
    """The error the reference's engine raises for a pattern QuickJS rejected (or Node 20 would)."""
    problem = first_syntax_error(pattern, flags, dialect=dialect)
    offset = problem.start if problem is not None and problem.where == "pattern" else None
    property = "unicode property" in quickjs_message or "unicode script" in quickjs_message
    if dialect == "agentv":
        if problem is not None and problem.where == "flags":
            return JsRegexError("Invalid flags supplied to RegExp constructor.")
        reason = (_jsc_reason(pattern, problem) if problem is not None else None) or \
            ("invalid property expression" if property else quickjs_message)
        return JsRegexError(f"Invalid regular expression: {reason}", offset, reason)
    if problem is not None and problem.where == "flags":
        return JsRegexError(f"Invalid flags supplied to RegExp constructor '{flags}'")
    reason = (_v8_reason(problem) if problem is not None else None) or \
        ("Invalid property name" if property else quickjs_message[:1].upper() + quickjs_message[1:])
    shown = "".join(f for f in _FLAG_ORDER if f in flags)
    return JsRegexError(f"Invalid regular expression: /{pattern}/{shown}: {reason}", offset, reason)


@dataclass(frozen=True)
class _Verdict:
    error: JsRegexError | None = None
    not_evaluated: str | None = None


def _syntax_verdict(pattern: str, flags: str, dialect: Dialect, quickjs_message: str) -> _Verdict:
    """`new RegExp` threw in QuickJS with this message."""
    if any(limit in quickjs_message for limit in _QUICKJS_LIMITS):
        return _Verdict(not_evaluated=f"QuickJS cannot compile it ({quickjs_message})")
    return _Verdict(error=_error_message(pattern, flags, dialect, quickjs_message))


def _node20_verdict(pattern: str, flags: str, dialect: Dialect) -> _Verdict | None:
    """ES2025 syntax that QuickJS-ng (and AgentV's bun) accept and Weval's Node 20 rejects."""
    if dialect != "weval":
        return None
    problem = first_syntax_error(pattern, flags, dialect=dialect)
    if problem is not None and problem.code in NODE20_REJECTS:
        return _Verdict(error=_error_message(pattern, flags, dialect, ""))
    return None


def _v_flag_dashes(pattern: str) -> str:
    """QuickJS-ng rejects a `-` outside any class with the `v` flag ("invalid character in class"), which
    JavaScript allows (it is the character itself): write those as `\\x2d`, which means the same."""
    out: list[str] = []
    depth, i, n = 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]" and depth:
            depth -= 1
        elif c == "(" and depth == 0 and pattern.startswith("(?", i):
            m = _MODIFIERS.match(pattern, i)
            if m:
                out.append(m.group())
                i = m.end()
                continue
        elif c == "-" and depth == 0:
            c = "\\x2d"
        out.append(c)
        i += 1
    return "".join(out)


_MODIFIERS = re.compile(r"\(\?[a-z]*-[a-z]*:")


def _quickjs_pattern(pattern: str, flags: str) -> str:
    return _v_flag_dashes(pattern) if "v" in flags and "-" in pattern else pattern


def js_regex_test(pattern: str, text: str, flags: str = "", *, dialect: Dialect = "weval",
                  time_limit_s: float = MATCH_TIME_LIMIT_S) -> bool:
    """`new RegExp(pattern, flags).test(text)` for a fresh regex, in QuickJS, within `time_limit_s`.

    `dialect` is the reference whose JavaScript this is: "weval" (Node 20: ES2025 inline modifiers and
    repeated group names are errors; V8's error words) or "agentv" (bun: accepted; JavaScriptCore's
    words). Raises JsRegexError where that JavaScript would throw, JsRegexTimeout past the limit and
    JsRegexNotEvaluated where the match cannot be computed here.
    """
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise JsRegexNotEvaluated(f"the pattern has {len(pattern):,} characters, more than evalspec evaluates "
                                  f"({MAX_PATTERN_LENGTH:,}); not evaluated")
    plain = plain_regex(pattern, flags)
    if plain is not None and plain.bounded(len(text)):
        return plain.regex.search(text) is not None  # the same answer as QuickJS's (js_regex_plain.py)
    early = _node20_verdict(pattern, flags, dialect)
    if early is not None and early.error is not None:
        raise early.error
    answer = _run(_quickjs_pattern(pattern, flags), flags, text, time_limit_s)
    if answer == "1":
        return True
    if answer == "0":
        return False
    if answer[:1] == "E":
        verdict = _syntax_verdict(pattern, flags, dialect, answer[1:])
        if verdict.error is not None:
            raise verdict.error
        raise JsRegexNotEvaluated(f"{verdict.not_evaluated}; not evaluated")
    raise JsRegexNotEvaluated(f"QuickJS could not run it ({answer[1:]}); not evaluated")


@lru_cache(maxsize=1024)
def _lint_verdict(pattern: str, flags: str, dialect: Dialect) -> _Verdict:
    if len(pattern) > LINT_COMPILE_MAX:
        return _Verdict()
    early = _node20_verdict(pattern, flags, dialect)
    if early is not None:
        return early
    if plain_regex(pattern, flags) is not None:
        return _Verdict()  # JavaScript accepts every plain pattern (js_regex_plain.py): no QuickJS to start
    try:
        answer = _run(_quickjs_pattern(pattern, flags), flags, "", MATCH_TIME_LIMIT_S)
    except JsRegexNotEvaluated as exc:
        return _Verdict(not_evaluated=exc.message.removesuffix("; not evaluated"))
    return _syntax_verdict(pattern, flags, dialect, answer[1:]) if answer[:1] == "E" else _Verdict()


def regex_findings(pattern: str, flags: str = "", *, dialect: Dialect = "weval") -> list[RegexProblem]:
    """The checker's lint: flag errors, warnings, then the error JavaScript raises (js_regex_lint's
    message and offset where it has one), and a warning where evalspec cannot evaluate the pattern.

    Compiles the pattern in QuickJS (runs nothing from the file) when it has at most LINT_COMPILE_MAX
    characters; a longer one gets the parser's findings alone."""
    problems = find_js_regex_problems(pattern, flags, dialect=dialect)
    if len(pattern) > MAX_PATTERN_LENGTH:
        return [*problems, RegexProblem(
            f"the pattern has {len(pattern):,} characters; evalspec evaluates at most {MAX_PATTERN_LENGTH:,}, so "
            "this check will not be scored", 0, len(pattern), "warning", "not-evaluable")]
    verdict = _lint_verdict(pattern, flags, dialect)
    if len(pattern) > LINT_COMPILE_MAX:
        return problems
    warnings = [p for p in problems if p.severity == "warning"]
    if verdict.not_evaluated is not None:
        return [*warnings, RegexProblem(f"evalspec cannot evaluate this pattern: {verdict.not_evaluated}, so this "
                                        "check will not be scored", 0, len(pattern), "warning", "not-evaluable")]
    if verdict.error is None:
        return warnings  # JavaScript accepts it: an error the parser saw would be the parser's mistake
    parsed = [p for p in problems if p.severity == "error"]
    if parsed:
        return problems
    return [*warnings, RegexProblem(verdict.error.reason, 0, len(pattern), "error", "js-syntax")]


def js_regex_problem(pattern: str, flags: str = "", *, dialect: Dialect = "weval") -> str | None:
    """The lint's first message (errors before warnings), else None."""
    problems = regex_findings(pattern, flags, dialect=dialect)
    errors = [p for p in problems if p.severity == "error"]
    chosen = errors[0] if errors else (problems[0] if problems else None)
    return chosen.message if chosen else None
