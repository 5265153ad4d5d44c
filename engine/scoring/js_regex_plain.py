"""JavaScript regexes that Python's `re` matches exactly as JavaScript does: the plain subset.

`plain_regex(pattern, flags)` translates a pattern built only of parts whose meaning is the same in both
engines for every text, and returns None for anything else (which QuickJS then runs, js_regex.py):

- flags: none, `g` (a fresh regex's `test()` starts at 0 either way) and `i`;
- printable ASCII characters, `\\d`, `\\w` and escaped syntax characters (`\\.`, `\\(`, `\\/` …), `\\n`
  `\\r` `\\t`; classes `[…]` of those and ranges between them (not negated, not empty): each atom
  matches one ASCII character, so no text (however many UTF-16 units its characters take in
  JavaScript) can tell the engines apart; with `i`, letters fold only within ASCII in both (JavaScript's
  non-unicode canonicalisation never maps a character above U+007F to one below, Python's under
  re.ASCII neither), and a class's ranges keep to one of a-z, A-Z, 0-9;
- `^`, `$` (JavaScript's end of input: Python's `\\Z`, its `$` also matches before a final newline),
  `\\b` (ASCII word characters in both);
- groups `(…)` and `(?:…)` (at most MAX_CAPTURES captures, MAX_DEPTH deep: QuickJS's limits are its
  verdict), alternatives `|`, and quantifiers `*` `+` `?` `{n}` `{n,}` `{n,m}` (lazy too) on a single
  atom only: no quantified group, so no pattern backtracks without end.

Anything else (`.`, `\\s`, negations, lookarounds, backreferences, `u`/`v`/`m`/`s`/`y`, a pattern
JavaScript rejects) is not plain. `bounded(text_length)` says whether the match's worst case stays under
MAX_STEPS (the text's length to the power of one plus the unbounded quantifiers, times the alternatives'
and bounded quantifiers' choices and the pattern's length): past it QuickJS runs it, under its time limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# A match's worst case in re's steps past which QuickJS runs it instead, under its time limit (`[a-z]+X`
# on 3,700 `a`s, at the bound, takes re ~10 ms here; QuickJS ~70 ms).
MAX_STEPS = 100_000_000
# Groups a plain pattern may hold: QuickJS refuses more than 255 captures (a check not made), and what
# it cannot compile stays its verdict.
MAX_CAPTURES = 100
MAX_DEPTH = 20
_SYNTAX = "^$\\.*+?()[]{}|/-"
_SINGLE = {"n": "\n", "r": "\r", "t": "\t"}
_CLASS_SETS = {"d": "0-9", "w": "0-9A-Za-z_"}
_COUNT = re.compile(r"\{([0-9]{1,4})(?:(,)([0-9]{0,4}))?\}")
_FOLDING_RANGES = (("a", "z"), ("A", "Z"), ("0", "9"))  # with `i`, a range keeps to one of these


@dataclass(frozen=True)
class PlainRegex:
    regex: re.Pattern[str]
    unbounded: int  # quantifiers without an upper bound (`*`, `+`, `{n,}`)
    choices: int  # the product of the alternatives' counts, the bounded quantifiers' spans, the length

    def bounded(self, text_length: int) -> bool:
        """Whether matching a text of this length stays under MAX_STEPS in the worst case."""
        return (text_length + 1) ** (self.unbounded + 1) * self.choices <= MAX_STEPS


@lru_cache(maxsize=512)
def plain_regex(pattern: str, flags: str) -> PlainRegex | None:
    """The pattern as a Python regex that answers `test()` as JavaScript does, or None (not plain)."""
    if len(flags) != len(set(flags)) or not set(flags) <= {"g", "i"} or len(pattern) > 1000:
        return None
    fold = "i" in flags
    translated = _translate(pattern, fold)
    if translated is None:
        return None
    text, unbounded, choices = translated
    choices *= len(pattern) + 1
    return PlainRegex(re.compile(text, re.ASCII | (re.IGNORECASE if fold else 0)), unbounded, choices)


def _translate(pattern: str, fold: bool) -> tuple[str, int, int] | None:
    out: list[str] = []
    alternatives = [1]  # per open group, the top level first
    choices, unbounded, captures = 1, 0, 0
    last = ""  # what came before: "atom" (may be quantified), "quantifier", "anchor", "group" or "" (a start)
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            atom = _escape(pattern, i, in_class=False)
            if atom is None:
                return None
            piece, i = atom
            out.append(piece)
            last = "anchor" if piece == r"\b" else "atom"
        elif c == "[":
            parsed = _class(pattern, i + 1, fold)
            if parsed is None:
                return None
            piece, i = parsed
            out.append(piece)
            last = "atom"
        elif c == "(":
            if pattern.startswith("(?:", i):
                out.append("(?:")
                i += 3
            elif pattern.startswith("(?", i):
                return None  # lookarounds, named groups, modifiers
            else:
                captures += 1
                out.append("(")
                i += 1
            alternatives.append(1)
            if captures > MAX_CAPTURES or len(alternatives) > MAX_DEPTH:
                return None  # far inside QuickJS's own limits (255 captures), whose verdict stays its own
            last = ""
        elif c == ")":
            if len(alternatives) == 1:
                return None
            choices *= alternatives.pop()
            out.append(")")
            i += 1
            last = "group"
        elif c == "|":
            alternatives[-1] += 1
            out.append("|")
            i += 1
            last = ""
        elif c == "^" or c == "$":
            out.append("^" if c == "^" else r"\Z")
            i += 1
            last = "anchor"
        elif c in "*+?{":
            if last != "atom":
                return None  # a quantified group, anchor or quantifier; nothing to repeat; a literal `{`
            if c == "{":
                m = _COUNT.match(pattern, i)
                if m is None:
                    return None
                low = int(m.group(1))
                high = low if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
                if high is not None and high < low:
                    return None
                piece, i = m.group(), m.end()
            else:
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
                piece, i = c, i + 1
            if i < n and pattern[i] == "?":
                piece, i = piece + "?", i + 1
            if high is None:
                unbounded += 1
            else:
                choices *= high - low + 1
            out.append(piece)
            last = "quantifier"
        elif c in ".]}" or not (" " <= c <= "~"):
            return None
        else:
            out.append(re.escape(c))
            i += 1
            last = "atom"
    if len(alternatives) != 1:
        return None
    return "".join(out), unbounded, choices * alternatives[0]


def _escape(pattern: str, i: int, *, in_class: bool) -> tuple[str, int] | None:
    """The escape at `i` as Python text (a class's items inside one), and where it ends; None if not plain."""
    if i + 1 >= len(pattern):
        return None
    e = pattern[i + 1]
    if e in _CLASS_SETS:
        return (_CLASS_SETS[e] if in_class else f"[{_CLASS_SETS[e]}]"), i + 2
    if e == "b" and not in_class:
        return r"\b", i + 2
    if e in _SINGLE:
        return f"\\x{ord(_SINGLE[e]):02x}", i + 2
    if e in _SYNTAX:
        return f"\\x{ord(e):02x}", i + 2
    return None


def _class(pattern: str, i: int, fold: bool) -> tuple[str, int] | None:
    """The class whose items start at `i` (after its `[`) as Python text, and where it ends."""
    n = len(pattern)
    if i < n and pattern[i] == "^":
        return None
    items: list[str] = []
    while True:
        if i >= n:
            return None
        c = pattern[i]
        if c == "]":
            break
        if c == "\\":
            escaped = _escape(pattern, i, in_class=True)
            if escaped is None:
                return None
            piece, end = escaped
            if pattern[i + 1] in _CLASS_SETS:
                items.append(piece)
                i = end
                continue
            char = _SINGLE.get(pattern[i + 1], pattern[i + 1])
        elif c == "[" or not (" " <= c <= "~"):
            return None
        else:
            char, end = c, i + 1
        if end + 1 < n and pattern[end] == "-" and pattern[end + 1] != "]":
            top = pattern[end + 1]
            if top in "\\[" or not (" " <= top <= "~") or top < char:
                return None
            if fold and not any(a <= char and top <= b for a, b in _FOLDING_RANGES):
                return None
            items.append(f"\\x{ord(char):02x}-\\x{ord(top):02x}")
            i = end + 2
        else:
            items.append(f"\\x{ord(char):02x}")
            i = end
    if not items:
        return None  # `[]` matches nothing in JavaScript and is an error in Python
    return "[" + "".join(items) + "]", i + 1
