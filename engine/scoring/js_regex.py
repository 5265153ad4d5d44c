"""JavaScript regular expressions: what would not compile in JavaScript, and a Python `re` translation.

Weval's `$matches` and AgentV's `regex` run `new RegExp(pattern, flags)` in JavaScript, so a pattern
means what it means there. Python's `re` differs in ways that silently change results: `(?i)` compiles
in Python but throws in JavaScript; `$` also matches before a final newline in Python; `\\d`, `\\w`
and `\\b` are Unicode-aware in Python but ASCII in JavaScript; JavaScript's `\\s` includes U+FEFF;
`.` excludes U+2028/U+2029 in JavaScript; a backreference to a group that has not matched matches
the empty string in JavaScript but fails in Python; `[^]` and `[]` exist only in JavaScript; and
without the `u` flag JavaScript reads `\\A`, `\\Z`, `\\p{L}` or `\\1` (with no group 1) as literal
text or octal escapes ("Annex B" syntax) where Python sees anchors and backreferences.

So this module parses the pattern with JavaScript's grammar (Annex B without `u`, strict with `u`),
reporting the first construct JavaScript rejects, plus constructs that compile but almost certainly
do not mean what the author wanted (warnings), and emits an equivalent Python pattern in which every
JS-specific meaning is spelled out explicitly (no re.ASCII / re.MULTILINE / re.DOTALL needed).

Known residual differences (documented rather than emulated): without `u`, JavaScript sees astral
characters as two UTF-16 units (Python sees one code point); Python's case-insensitive `[a-z]` also
matches 'İ', 'ı', 'ſ' and 'K' (U+212A); captures inside a repeated group are not reset per iteration
in Python; variable-width lookbehind compiles in JavaScript but not in Python (JsRegexError); the `v`
flag is treated like `u` (class set operations are not understood); script properties
(`\\p{Script=Greek}`) are accepted as valid but cannot be evaluated here (JsRegexError).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import regex

from .js_text import JS_LINE_TERMINATORS_CLASS, JS_WHITESPACE_CLASS

Dialect = Literal["weval", "agentv"]
Severity = Literal["error", "warning"]

VALID_FLAGS = "dgimsuvy"
_SYNTAX_CHARS = "^$\\.*+?()[]{}|/"
_WORD_CLASS = "A-Za-z0-9_"
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"
# Deeper nesting than any real pattern needs; the parser recurses per level (5,000 was a RecursionError).
MAX_GROUP_DEPTH = 100
# How long one test of a pattern against one answer may take. JavaScript's engines backtrack without
# limit, so `(a+)+$` against 30 "a"s and a "!" would hang a run for hours (Weval's own runner too):
# past this the point is not scored, with the reason.
MATCH_TIME_LIMIT_S = 1.0


class JsRegexError(ValueError):
    """The pattern is not a valid JavaScript regex, or cannot be evaluated here."""

    def __init__(self, message: str, offset: int | None = None, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.unsupported = unsupported  # valid JavaScript that Python's `re` cannot evaluate


class JsRegexTimeout(JsRegexError):
    """The pattern ran past MATCH_TIME_LIMIT_S on this text (catastrophic backtracking)."""


@dataclass(frozen=True)
class RegexProblem:
    """One finding about a pattern. `start`/`end` are offsets in the pattern (or in the flags)."""

    message: str
    start: int
    end: int
    severity: Severity  # "error": JavaScript throws; "warning": compiles but means something else
    code: str
    where: Literal["pattern", "flags"] = "pattern"


class _Fail(Exception):
    def __init__(self, problem: RegexProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


# --------------------------------------------------------------------------------------------------
# Unicode properties (only needed with the u flag)

_GENERAL_CATEGORIES: dict[str, tuple[str, ...]] = {}
for _names, _cats in (
    (("L", "Letter"), ("Lu", "Ll", "Lt", "Lm", "Lo")),
    (("LC", "Cased_Letter"), ("Lu", "Ll", "Lt")),
    (("Lu", "Uppercase_Letter"), ("Lu",)),
    (("Ll", "Lowercase_Letter"), ("Ll",)),
    (("Lt", "Titlecase_Letter"), ("Lt",)),
    (("Lm", "Modifier_Letter"), ("Lm",)),
    (("Lo", "Other_Letter"), ("Lo",)),
    (("M", "Mark", "Combining_Mark"), ("Mn", "Mc", "Me")),
    (("Mn", "Nonspacing_Mark"), ("Mn",)),
    (("Mc", "Spacing_Mark"), ("Mc",)),
    (("Me", "Enclosing_Mark"), ("Me",)),
    (("N", "Number"), ("Nd", "Nl", "No")),
    (("Nd", "Decimal_Number", "digit"), ("Nd",)),
    (("Nl", "Letter_Number"), ("Nl",)),
    (("No", "Other_Number"), ("No",)),
    (("P", "Punctuation", "punct"), ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po")),
    (("Pc", "Connector_Punctuation"), ("Pc",)),
    (("Pd", "Dash_Punctuation"), ("Pd",)),
    (("Ps", "Open_Punctuation"), ("Ps",)),
    (("Pe", "Close_Punctuation"), ("Pe",)),
    (("Pi", "Initial_Punctuation"), ("Pi",)),
    (("Pf", "Final_Punctuation"), ("Pf",)),
    (("Po", "Other_Punctuation"), ("Po",)),
    (("S", "Symbol"), ("Sm", "Sc", "Sk", "So")),
    (("Sm", "Math_Symbol"), ("Sm",)),
    (("Sc", "Currency_Symbol"), ("Sc",)),
    (("Sk", "Modifier_Symbol"), ("Sk",)),
    (("So", "Other_Symbol"), ("So",)),
    (("Z", "Separator"), ("Zs", "Zl", "Zp")),
    (("Zs", "Space_Separator"), ("Zs",)),
    (("Zl", "Line_Separator"), ("Zl",)),
    (("Zp", "Paragraph_Separator"), ("Zp",)),
    (("C", "Other"), ("Cc", "Cf", "Cs", "Co", "Cn")),
    (("Cc", "Control", "cntrl"), ("Cc",)),
    (("Cf", "Format"), ("Cf",)),
    (("Cs", "Surrogate"), ("Cs",)),
    (("Co", "Private_Use"), ("Co",)),
    (("Cn", "Unassigned"), ("Cn",)),
):
    for _name in _names:
        _GENERAL_CATEGORIES[_name] = _cats

# ECMA-262 table "Binary Unicode property aliases": all valid in JavaScript; only a few evaluable here.
_BINARY_PROPERTIES = frozenset((
    "ASCII", "ASCII_Hex_Digit", "AHex", "Alphabetic", "Alpha", "Any", "Assigned", "Bidi_Control",
    "Bidi_C", "Bidi_Mirrored", "Bidi_M", "Case_Ignorable", "CI", "Cased", "Changes_When_Casefolded",
    "CWCF", "Changes_When_Casemapped", "CWCM", "Changes_When_Lowercased", "CWL",
    "Changes_When_NFKC_Casefolded", "CWKCF", "Changes_When_Titlecased", "CWT",
    "Changes_When_Uppercased", "CWU", "Dash", "Default_Ignorable_Code_Point", "DI", "Deprecated",
    "Dep", "Diacritic", "Dia", "Emoji", "Emoji_Component", "EComp", "Emoji_Modifier", "EMod",
    "Emoji_Modifier_Base", "EBase", "Emoji_Presentation", "EPres", "Extended_Pictographic", "ExtPict",
    "Extender", "Ext", "Grapheme_Base", "Gr_Base", "Grapheme_Extend", "Gr_Ext", "Hex_Digit", "Hex",
    "IDS_Binary_Operator", "IDSB", "IDS_Trinary_Operator", "IDST", "ID_Continue", "IDC", "ID_Start",
    "IDS", "Ideographic", "Ideo", "Join_Control", "Join_C", "Logical_Order_Exception", "LOE",
    "Lowercase", "Lower", "Math", "Noncharacter_Code_Point", "NChar", "Pattern_Syntax", "Pat_Syn",
    "Pattern_White_Space", "Pat_WS", "Quotation_Mark", "QMark", "Radical", "Regional_Indicator", "RI",
    "Sentence_Terminal", "STerm", "Soft_Dotted", "SD", "Terminal_Punctuation", "Term",
    "Unified_Ideograph", "UIdeo", "Uppercase", "Upper", "Variation_Selector", "VS", "White_Space",
    "space", "XID_Continue", "XIDC", "XID_Start", "XIDS",
))

_SIMPLE_BINARY_BODIES = {
    "ASCII": "\\x00-\\x7f",
    "Any": "\\x00-\\U0010ffff",
    "ASCII_Hex_Digit": "0-9A-Fa-f",
    "AHex": "0-9A-Fa-f",
    # White_Space (PropList.txt): JS whitespace minus U+FEFF, plus U+0085.
    "White_Space": "\\t-\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000",
    "space": "\\t-\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000",
}


@lru_cache(maxsize=1)
def _category_ranges() -> dict[str, list[tuple[int, int]]]:
    """Code point ranges of every two-letter general category (one pass over Unicode, cached)."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    category = unicodedata.category
    start, current = 0, category("\x00")
    for cp in range(1, 0x110000):
        cat = category(chr(cp))
        if cat != current:
            ranges.setdefault(current, []).append((start, cp - 1))
            start, current = cp, cat
    ranges.setdefault(current, []).append((start, 0x10FFFF))
    return ranges


def _class_char(cp: int) -> str:
    """A code point written so that it is literal inside or outside a Python character class."""
    ch = chr(cp)
    if ch.isascii() and ch.isalnum():
        return ch
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


@lru_cache(maxsize=64)
def _category_body(cats: tuple[str, ...]) -> str:
    table = _category_ranges()
    merged = sorted(r for cat in cats for r in table.get(cat, ()))
    return "".join(_class_char(lo) if lo == hi else f"{_class_char(lo)}-{_class_char(hi)}" for lo, hi in merged)


def _assigned_body() -> str:
    table = _category_ranges()
    cats = tuple(c for c in table if c != "Cn")
    return _category_body(cats)


# --------------------------------------------------------------------------------------------------
# The parser / translator


def _is_id_start(ch: str) -> bool:
    return ch in "$_" or ch.isidentifier()


def _is_id_continue(ch: str) -> bool:
    return ch in "$\u200c\u200d" or ("a" + ch).isidentifier()


class _Translator:
    def __init__(self, pattern: str, flags: str, dialect: Dialect) -> None:
        self.p = pattern
        self.n = len(pattern)
        self.i = 0
        self.unicode = "u" in flags or "v" in flags
        self.dotall = "s" in flags
        self.multiline = "m" in flags
        self.dialect = dialect
        self.warnings: list[RegexProblem] = []
        self.unsupported: str | None = None  # valid JavaScript that Python `re` cannot evaluate
        self.group_count, self.names = self._prescan()
        self.opened = 0  # capture groups opened so far (their indices are 1..opened)
        self.open_stack: list[int] = []
        self.seen_names: dict[str, int] = {}
        self.depth = 0  # groups open around the cursor

    # -- helpers ------------------------------------------------------------------------------------

    def fail(self, code: str, message: str, start: int, end: int | None = None) -> _Fail:
        return _Fail(RegexProblem(message, start, end if end is not None else start + 1, "error", code))

    def warn(self, code: str, message: str, start: int, end: int) -> None:
        self.warnings.append(RegexProblem(message, start, end, "warning", code))

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < self.n else ""

    def _prescan(self) -> tuple[int, dict[str, int]]:
        """Count capture groups and collect group names (JS allows forward references)."""
        names: dict[str, int] = {}
        count, i, in_class = 0, 0, False
        p, n = self.p, self.n
        while i < n:
            c = p[i]
            if c == "\\":
                i += 2
                continue
            if in_class:
                if c == "]":
                    in_class = False
            elif c == "[":
                in_class = True
            elif c == "(":
                if p.startswith("(?<", i) and not p.startswith(("(?<=", "(?<!"), i):
                    count += 1
                    close = p.find(">", i + 3)
                    if close != -1:
                        names.setdefault(p[i + 3:close], count)
                elif not p.startswith("(?", i):
                    count += 1
            i += 1
        return count, names

    # -- grammar ------------------------------------------------------------------------------------

    def translate(self) -> str:
        out = self.disjunction()
        if self.i < self.n:  # only a ')' stops a top-level disjunction early
            raise self.fail("unbalanced-close",
                            f"unmatched ')' at position {self.i}: there is no '(' for it to close", self.i)
        return out

    def disjunction(self) -> str:
        alternatives = [self.alternative()]
        while self.peek() == "|":
            self.i += 1
            alternatives.append(self.alternative())
        return "|".join(alternatives)

    def alternative(self) -> str:
        parts: list[str] = []
        while self.i < self.n and self.p[self.i] not in "|)":
            parts.append(self.term())
        return "".join(parts)

    def term(self) -> str:
        start = self.i
        c = self.p[self.i]
        quantifiable = True
        if c == "^":
            self.i += 1
            atom = f"(?:\\A|(?<=[{JS_LINE_TERMINATORS_CLASS}]))" if self.multiline else "\\A"
            quantifiable = False
        elif c == "$":
            self.i += 1
            atom = f"(?=[{JS_LINE_TERMINATORS_CLASS}]|\\Z)" if self.multiline else "\\Z"
            quantifiable = False
        elif c == "\\" and self.peek(1) in ("b", "B"):
            self.i += 2
            w = _WORD_CLASS
            if self.p[start + 1] == "b":
                atom = f"(?:(?<=[{w}])(?![{w}])|(?<![{w}])(?=[{w}]))"
            else:
                atom = f"(?:(?<=[{w}])(?=[{w}])|(?<![{w}])(?![{w}]))"
            quantifiable = False
        elif c == "(":
            atom, quantifiable = self.group()
        elif c == "[":
            atom = self.char_class()
        elif c == ".":
            self.i += 1
            atom = "[\\s\\S]" if self.dotall else f"[^{JS_LINE_TERMINATORS_CLASS}]"
        elif c in "*+?":
            raise self.fail("nothing-to-repeat",
                            f"nothing to repeat: the quantifier '{c}' at position {start} has no item before it",
                            start)
        elif c == "{":
            braced = self.braced_quantifier(self.i)
            if braced is not None:
                raise self.fail("nothing-to-repeat",
                                f"nothing to repeat: the quantifier '{self.p[start:braced[2]]}' at position "
                                f"{start} has no item before it", start, braced[2])
            if self.unicode:
                raise self.fail("lone-bracket", "lone '{' is not allowed with the u flag; escape it as '\\{'", start)
            self.literal_brace_warning(start)
            self.i += 1
            atom = "\\{"
        elif c in "}]":
            if self.unicode:
                raise self.fail("lone-bracket",
                                f"lone '{c}' is not allowed with the u flag; escape it as '\\{c}'", start)
            self.i += 1
            atom = re.escape(c)
        elif c == "\\":
            atom = self.atom_escape()
        else:
            self.i += 1
            atom = re.escape(c)
        return atom + self.quantifier(start, quantifiable)

    def literal_brace_warning(self, start: int) -> None:
        m = re.compile(r"\{,(\d+)\}").match(self.p, start)
        if m:
            self.warn("not-a-quantifier",
                      f"'{m.group(0)}' is not a quantifier in JavaScript: it matches the literal text "
                      f"'{m.group(0)}'; write '{{0,{m.group(1)}}}'", start, m.end())

    def braced_quantifier(self, at: int) -> tuple[int, int | None, int] | None:
        """`{n}`, `{n,}` or `{n,m}` at `at`: (min, max, end offset), else None."""
        m = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.p, at)
        if not m:
            return None
        low = int(m.group(1))
        high = low if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
        return low, high, m.end()

    def quantifier(self, atom_start: int, quantifiable: bool) -> str:
        start = self.i
        c = self.peek()
        if c in ("*", "+", "?"):
            self.i += 1
            text = c
        elif c == "{":
            braced = self.braced_quantifier(self.i)
            if braced is None:
                return ""
            low, high, end = braced
            if high is not None and high < low:
                raise self.fail("quantifier-order",
                                f"numbers out of order in the quantifier '{self.p[start:end]}'", start, end)
            self.i = end
            text = self.p[start:end]  # {n}, {n,} and {n,m} mean the same in Python
        else:
            return ""
        if not quantifiable:
            raise self.fail("nothing-to-repeat",
                            f"nothing to repeat: '{self.p[atom_start:start]}' cannot be followed by the "
                            f"quantifier '{self.p[start:self.i]}'", start, self.i)
        if self.peek() == "?":
            self.i += 1
            text += "?"
        elif self.peek() == "+":
            raise self.fail("possessive",
                            f"possessive quantifier '{self.p[start:self.i + 1]}' is not valid in JavaScript "
                            f"(JavaScript has no possessive quantifiers); remove the final '+'", start, self.i + 1)
        nxt = self.peek()
        if nxt in ("*", "+", "?") or (nxt == "{" and self.braced_quantifier(self.i) is not None):
            raise self.fail("nothing-to-repeat",
                            f"nothing to repeat: a quantifier cannot follow the quantifier "
                            f"'{self.p[start:self.i]}' (position {self.i})", self.i)
        return text

    # -- groups -------------------------------------------------------------------------------------

    def group(self) -> tuple[str, bool]:
        start = self.i
        p = self.p
        if not p.startswith("(?", start):
            self.i += 1
            return self.capture(start, None), True
        rest = p[start + 2:start + 4]
        if rest.startswith(":"):
            self.i += 3
            return "(?:" + self.close_group(start) + ")", True
        if rest[:1] in ("=", "!"):
            self.i += 3
            body = self.close_group(start)
            # Annex B lets a lookahead be quantified without u; wrap so Python accepts a quantifier.
            return f"(?:(?{rest[0]}{body}))", not self.unicode
        if rest in ("<=", "<!"):
            self.i += 4
            return f"(?{rest}{self.close_group(start)})", False
        if rest.startswith("<"):
            return self.named_group(start), True
        self.bad_group(start)
        raise AssertionError  # bad_group always raises

    def capture(self, start: int, name: str | None) -> str:
        self.opened += 1
        index = self.opened
        self.open_stack.append(index)
        body = self.close_group(start)
        self.open_stack.pop()
        if name is None:
            return f"({body})"
        py_name = name if name.isidentifier() and name.isascii() else f"_js_group_{index}"
        return f"(?P<{py_name}>{body})"

    def close_group(self, start: int) -> str:
        self.depth += 1
        if self.depth > MAX_GROUP_DEPTH:  # each level is a few Python frames here and in `re`
            raise self.fail("too-deep", f"groups nested deeper than {MAX_GROUP_DEPTH} levels (the '(' at position "
                            f"{start}): evalspec cannot evaluate this pattern", start)
        body = self.disjunction()
        self.depth -= 1
        if self.peek() != ")":
            raise self.fail("unbalanced-open",
                            f"unterminated group: the '(' at position {start} is never closed", start)
        self.i += 1
        return body

    def named_group(self, start: int) -> str:
        name_start = start + 3
        close = self.p.find(">", name_start)
        name = self.p[name_start:close] if close != -1 else ""
        if close == -1 or not name or not _is_id_start(name[0]) or not all(_is_id_continue(ch) for ch in name[1:]):
            raise self.fail("bad-group-name",
                            f"invalid group name '(?<{name if close != -1 else self.p[name_start:name_start + 10]}"
                            f"{'>' if close != -1 else ''}': a name must be an identifier (letters, digits, '_', '$')",
                            start, close + 1 if close != -1 else name_start)
        if name in self.seen_names:
            raise self.fail("duplicate-group-name",
                            f"duplicate capture group name '{name}' (JavaScript engines before 2025 reject "
                            "duplicate names)", start, close + 1)
        self.seen_names[name] = self.opened + 1
        self.i = close + 1
        return self.capture(start, name)

    def bad_group(self, start: int) -> None:
        p = self.p
        after = p[start + 2:]
        flag_m = re.compile(r"([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])").match(after)
        if after.startswith("P<"):
            raise self.fail("python-named-group",
                            "Python-style named group '(?P<name>…)' is not valid in JavaScript; write "
                            "'(?<name>…)'", start, start + 4)
        if after.startswith("P="):
            end = p.find(")", start)
            name = p[start + 4:end] if end != -1 else "name"
            raise self.fail("python-backreference",
                            f"Python-style backreference '(?P={name})' is not valid in JavaScript; write "
                            f"'\\k<{name}>'", start, end + 1 if end != -1 else start + 4)
        if after.startswith("#"):
            raise self.fail("comment-group",
                            "comment groups '(?#…)' are not valid in JavaScript; remove the comment", start, start + 3)
        if after.startswith(">"):
            raise self.fail("atomic-group",
                            "atomic groups '(?>…)' are not valid in JavaScript; use '(?:…)' (JavaScript has no "
                            "atomic groups)", start, start + 3)
        if after.startswith("|"):
            raise self.fail("branch-reset", "branch reset groups '(?|…)' are not valid in JavaScript", start, start + 3)
        if after.startswith("("):
            raise self.fail("conditional-group",
                            "conditional groups '(?(…)…)' are not valid in JavaScript", start, start + 3)
        if re.match(r"(R|[+-]?\d|&)", after):
            raise self.fail("recursion", "recursive patterns like '(?R)' are not valid in JavaScript", start, start + 3)
        letters = (flag_m.group(1) or "") + (flag_m.group(2) or "") if flag_m else ""
        if flag_m and (letters or flag_m.group(2) is not None) and set(letters) <= set("aiLmsux"):
            text = "(?" + flag_m.group(0)  # e.g. "(?i)" or "(?i:"
            end = start + len(text)
            if flag_m.group(3) == ")":
                raise self.fail("inline-flags",
                                f"inline flag group '{text}' is not valid in JavaScript; "
                                f"{self.flag_hint(flag_m.group(1) or '')}",
                                start, end)
            raise self.fail("inline-modifiers",
                            f"inline modifier group '{text}…)' is not valid in the JavaScript engines evaluations "
                            f"run on (it is new in ES2025); {self.flag_hint(flag_m.group(1) or '')}", start, end)
        raise self.fail("invalid-group",
                        f"invalid group '{p[start:start + 3]}' at position {start}: after '(?' JavaScript "
                        "accepts only ':', '=', '!', '<=', '<!' or '<name>'", start, start + 3)

    def flag_hint(self, letters: str) -> str:
        """Advice for the flags an inline group turns on (turning flags off needs nothing in JS)."""
        if not letters:
            return "remove it (without flags, JavaScript regexes are already case-sensitive)"
        if self.dialect == "agentv":
            js = "".join(ch for ch in "ims" if ch in letters)
            if js:
                return f"remove it and set `flags: {js}` on the assertion instead"
            return "remove it (JavaScript has no such flag)"
        if "i" in letters:
            return "use the case-insensitive function ($imatches) instead"
        if "s" in letters:
            return "use '[\\s\\S]' instead of '.' to match across lines"
        if "m" in letters:
            return "write '(?:^|\\n)' and '(?=\\n|$)' for line starts and ends"
        return "remove it (JavaScript has no such flag)"

    # -- escapes ------------------------------------------------------------------------------------

    def atom_escape(self) -> str:
        start = self.i
        if start + 1 >= self.n:
            raise self.fail("trailing-backslash",
                            "the pattern ends with a lone '\\' (write '\\\\' for a literal backslash)", start)
        c = self.p[start + 1]
        if c in "dDwWsS":
            self.i += 2
            return _SET_ATOMS[c]
        if c in "pP":
            return self.property_atom(start)
        if c == "k":
            return self.named_backreference(start)
        if c.isdigit() and c != "0":
            return self.decimal_escape(start)
        if c == "-" and self.unicode:
            raise self.fail("bad-escape", "'\\-' is allowed only inside a character class with the u flag",
                            start, start + 2)
        cp = self.character_escape(start, in_class=False)
        return re.escape(chr(cp)) if cp >= 0 else "\\\\"

    def character_escape(self, start: int, in_class: bool) -> int:
        """Escapes that stand for one character. Returns the code point; -1 for Annex B's lone backslash."""
        p = self.p
        c = p[start + 1]
        simple = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
        if c in simple:
            self.i = start + 2
            return simple[c]
        if c == "c":
            letter = p[start + 2] if start + 2 < self.n else ""
            if letter.isascii() and letter.isalpha():
                self.i = start + 3
                return ord(letter) % 32
            if in_class and not self.unicode and (letter.isdigit() or letter == "_") and letter.isascii():
                self.i = start + 3
                return ord(letter) % 32
            if self.unicode:
                raise self.fail("bad-escape", "'\\c' must be followed by a letter (a control character)",
                                start, start + 2)
            self.i = start + 1  # Annex B: '\' is literal and 'c' is read next
            return -1
        if c == "0" and not (start + 2 < self.n and p[start + 2].isdigit()):
            self.i = start + 2
            return 0
        if c.isdigit():  # \0dd, or (in a class) \1..\9
            if self.unicode:
                raise self.fail("bad-escape",
                                f"'\\{c}' is not allowed here with the u flag (no octal escapes or class "
                                "backreferences)", start, start + 2)
            return self.legacy_octal(start)
        if c == "x":
            digits = p[start + 2:start + 4]
            if len(digits) == 2 and all(d in _HEX for d in digits):
                self.i = start + 4
                return int(digits, 16)
            return self.identity(start, c)
        if c == "u":
            return self.unicode_escape(start)
        if c == "b" and in_class:
            self.i = start + 2
            return 0x08
        if c == "-" and in_class:
            self.i = start + 2
            return ord("-")
        return self.identity(start, c)

    def identity(self, start: int, c: str) -> int:
        """`\\X` that stands for X itself: any syntax character; anything else only without u."""
        if c in _SYNTAX_CHARS:
            self.i = start + 2
            return ord(c)
        if self.unicode:
            raise self.fail("bad-escape",
                            f"invalid escape '\\{c}' with the u flag (only syntax characters may be escaped)",
                            start, start + 2)
        if c == "k" and self.names:
            raise self.fail("bad-backreference",
                            "'\\k' must be followed by '<name>' when the pattern has named groups", start, start + 2)
        if c in "AZz":
            what = "'^'" if c == "A" else "'$'"
            self.warn("anchor-escape",
                      f"'\\{c}' is not an anchor in JavaScript: it matches the letter '{c}'; use {what} instead",
                      start, start + 2)
        elif c in "GKQEhHRXNeaLlU":
            self.warn("python-escape",
                      f"'\\{c}' has no special meaning in a JavaScript regex: it matches the letter '{c}'",
                      start, start + 2)
        self.i = start + 2
        return ord(c)

    def unicode_escape(self, start: int) -> int:
        p = self.p
        if self.unicode and p.startswith("u{", start + 1):
            close = p.find("}", start + 3)
            digits = p[start + 3:close] if close != -1 else ""
            if close == -1 or not digits or not all(d in _HEX for d in digits) or int(digits, 16) > 0x10FFFF:
                raise self.fail("bad-escape", "invalid '\\u{…}' escape: expected 1-6 hex digits up to 10FFFF",
                                start, close + 1 if close != -1 else start + 3)
            self.i = close + 1
            return int(digits, 16)
        digits = p[start + 2:start + 6]
        if len(digits) == 4 and all(d in _HEX for d in digits):
            cp = int(digits, 16)
            self.i = start + 6
            # A surrogate pair written as two escapes is one character in a JavaScript string.
            low = p[start + 8:start + 12]
            if 0xD800 <= cp <= 0xDBFF and p.startswith("\\u", start + 6) and len(low) == 4 and \
                    all(d in _HEX for d in low) and 0xDC00 <= int(low, 16) <= 0xDFFF:
                self.i = start + 12
                return 0x10000 + ((cp - 0xD800) << 10) + (int(low, 16) - 0xDC00)
            return cp
        return self.identity(start, "u")

    def legacy_octal(self, start: int) -> int:
        """Annex B octal escape (\\0dd, \\1-\\377); \\8 and \\9 are the digits themselves."""
        p = self.p
        j = start + 1
        if p[j] in "89":
            self.i = j + 1
            return ord(p[j])
        value = 0
        while j < self.n and p[j] in _OCTAL and j - start <= 3 and value * 8 + int(p[j]) <= 0o377:
            value = value * 8 + int(p[j])
            j += 1
        self.i = j
        return value

    def decimal_escape(self, start: int) -> str:
        m = re.compile(r"\d+").match(self.p, start + 1)
        assert m is not None
        number = int(m.group(0))
        if number <= self.group_count:
            self.i = m.end()
            return self.backreference(number)
        if self.unicode:
            raise self.fail("bad-backreference",
                            f"backreference '\\{number}' refers to group {number}, but the pattern has only "
                            f"{self.group_count} capture group(s)", start, m.end())
        cp = self.legacy_octal(start)
        shown = self.p[start:self.i]
        self.warn("octal-escape",
                  f"'\\{m.group(0)}' is not a backreference (the pattern has {self.group_count} capture "
                  f"group(s)); JavaScript reads '{shown}' as the character U+{cp:04X}", start, self.i)
        return re.escape(chr(cp))

    def named_backreference(self, start: int) -> str:
        p = self.p
        if not self.unicode and not self.names:
            self.i = start + 2
            return "k"  # Annex B: '\k' is the letter k when the pattern has no named groups
        close = p.find(">", start + 3) if p.startswith("<", start + 2) else -1
        if close == -1:
            raise self.fail("bad-backreference", "'\\k' must be followed by '<name>' of a capture group",
                            start, start + 2)
        name = p[start + 3:close]
        if name not in self.names:
            raise self.fail("bad-backreference",
                            f"invalid named backreference '{p[start:close + 1]}': no capture group is named '{name}'",
                            start, close + 1)
        self.i = close + 1
        return self.backreference(self.names[name])

    def backreference(self, index: int) -> str:
        # JavaScript: a group that has not matched (yet) matches the empty string. Python fails the
        # match instead, and rejects references to open or later groups, so spell it out.
        if index in self.open_stack or index > self.opened:
            return "(?:)"
        return f"(?:(?({index})\\{index}))"

    def property_atom(self, start: int) -> str:
        negated = self.p[start + 1] == "P"
        if not self.unicode:
            if self.peek(2) == "{":
                close = self.p.find("}", start)
                shown = self.p[start:close + 1] if close != -1 else self.p[start:start + 3]
                self.warn("property-without-u",
                          f"'{shown}' is a Unicode property escape only with the u flag; without it JavaScript "
                          f"matches the literal text '{shown[1:]}'", start, start + len(shown))
            self.i = start + 2
            return "P" if negated else "p"
        body = self.property_body(start)
        if body is None:
            return "(?!)"  # unsupported: self.unsupported is set, compile will refuse
        return f"[^{body}]" if negated else f"[{body}]"

    def property_body(self, start: int) -> str | None:
        """Parse `\\p{…}` at start (u mode); return a class body, or None when valid but unsupported."""
        p = self.p
        close = p.find("}", start)
        if not p.startswith("{", start + 2) or close == -1:
            raise self.fail("bad-property", "'\\p' must be followed by '{Property}' with the u flag",
                            start, start + 2)
        text = p[start + 3:close]
        self.i = close + 1
        name, _, value = text.partition("=")
        if value:
            if name in ("General_Category", "gc") and value in _GENERAL_CATEGORIES:
                return _category_body(_GENERAL_CATEGORIES[value])
            if name in ("Script", "sc", "Script_Extensions", "scx") and re.fullmatch(r"[A-Za-z_]+", value):
                self.unsupported = f"Unicode script properties such as '\\p{{{text}}}' cannot be evaluated here"
                return None
        elif name in _GENERAL_CATEGORIES:
            return _category_body(_GENERAL_CATEGORIES[name])
        elif name in _SIMPLE_BINARY_BODIES:
            return _SIMPLE_BINARY_BODIES[name]
        elif name == "Assigned":
            return _assigned_body()
        elif name in _BINARY_PROPERTIES:
            self.unsupported = f"the Unicode property '\\p{{{text}}}' cannot be evaluated here"
            return None
        raise self.fail("bad-property", f"unknown Unicode property '\\p{{{text}}}'", start, close + 1)

    # -- character classes --------------------------------------------------------------------------

    def char_class(self) -> str:
        start = self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        positive: list[str] = []
        negative: list[str] = []
        while True:
            if self.i >= self.n:
                raise self.fail("unterminated-class",
                                f"unterminated character class: the '[' at position {start} is never closed", start)
            if self.p[self.i] == "]":
                self.i += 1
                break
            atom_start = self.i
            first = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                second = self.class_atom()
                if isinstance(first, int) and isinstance(second, int):
                    if first > second:
                        raise self.fail("bad-range",
                                        f"range out of order in character class: '{self.p[atom_start:self.i]}'",
                                        atom_start, self.i)
                    positive.append(f"{_class_char(first)}-{_class_char(second)}")
                    continue
                if self.unicode:
                    raise self.fail("bad-range",
                                    f"invalid range '{self.p[atom_start:self.i]}': a class escape such as '\\d' "
                                    "cannot bound a range with the u flag", atom_start, self.i)
                # Annex B: '[\w-z]' is '\w', '-' and 'z'.
                for item in (first, ord("-"), second):
                    self._class_item(item, positive, negative)
                continue
            self._class_item(first, positive, negative)
        body = "".join(positive)
        if not negative:
            if not body:
                return "[\\s\\S]" if negated else "(?!)"  # JS '[^]' is any character, '[]' never matches
            return f"[{'^' if negated else ''}{body}]"
        alternatives = ([f"[{body}]"] if body else []) + [f"[^{b}]" for b in negative]
        joined = "|".join(alternatives)
        return f"(?:(?!{joined})[\\s\\S])" if negated else f"(?:{joined})"

    @staticmethod
    def _class_item(item: int | tuple[bool, str], positive: list[str], negative: list[str]) -> None:
        if isinstance(item, int):
            positive.append(_class_char(item))
        elif item[0]:
            negative.append(item[1])
        else:
            positive.append(item[1])

    def class_atom(self) -> int | tuple[bool, str]:
        """One class member: a code point, or (negated, class body) for \\d, \\W, \\p{…} and the like."""
        start = self.i
        c = self.p[start]
        if c != "\\":
            self.i += 1
            return ord(c)
        if start + 1 >= self.n:
            raise self.fail("unterminated-class", "unterminated character class (the pattern ends with '\\')", start)
        e = self.p[start + 1]
        if e in "dDwWsS":
            self.i = start + 2
            return e.isupper(), _SET_BODIES[e.lower()]
        if e in "pP" and self.unicode:
            body = self.property_body(start)
            return e == "P", body if body is not None else "\\x00-\\U0010ffff"
        if e in "pP" and self.peek(2) == "{":
            self.property_atom(start)  # warns, and consumes '\p'
            return ord(e)
        if e == "k" and (self.unicode or self.names):
            raise self.fail("bad-escape", "'\\k' is not allowed inside a character class here", start, start + 2)
        if e == "B":
            if self.unicode:
                raise self.fail("bad-escape", "'\\B' is not allowed inside a character class with the u flag",
                                start, start + 2)
            self.i = start + 2
            return ord("B")
        cp = self.character_escape(start, in_class=True)
        return cp if cp >= 0 else ord("\\")


_SET_BODIES = {"d": "0-9", "w": _WORD_CLASS, "s": JS_WHITESPACE_CLASS}
_SET_ATOMS = {
    "d": "[0-9]", "D": "[^0-9]",
    "w": f"[{_WORD_CLASS}]", "W": f"[^{_WORD_CLASS}]",
    "s": f"[{JS_WHITESPACE_CLASS}]", "S": f"[^{JS_WHITESPACE_CLASS}]",
}

_REGEX_LITERAL = re.compile(r"/(.+)/([a-z]*)", re.DOTALL)


# --------------------------------------------------------------------------------------------------
# Public API


def _flag_problems(flags: str) -> list[RegexProblem]:
    problems = []
    for k, f in enumerate(flags):
        if f not in VALID_FLAGS:
            problems.append(RegexProblem(
                f"invalid regex flag '{f}': JavaScript flags are {', '.join(VALID_FLAGS)}", k, k + 1, "error",
                "bad-flag", "flags"))
        elif f in flags[:k]:
            problems.append(RegexProblem(f"duplicate regex flag '{f}'", k, k + 1, "error", "bad-flag", "flags"))
    if "u" in flags and "v" in flags:
        problems.append(RegexProblem("the flags 'u' and 'v' cannot be combined", 0, len(flags), "error",
                                     "bad-flag", "flags"))
    return problems


@lru_cache(maxsize=1024)
def _analyse(pattern: str, flags: str, dialect: Dialect) -> tuple[tuple[RegexProblem, ...], str | None, str | None]:
    """(problems, python pattern or None, reason it cannot be evaluated here or None)."""
    problems = _flag_problems(flags)
    literal = _REGEX_LITERAL.fullmatch(pattern)
    if literal and len(pattern) > 2 and set(literal.group(2)) <= set(VALID_FLAGS):
        hint = ("use $imatches for case-insensitive matching" if dialect == "weval"
                else "put the flags in the `flags` field")
        problems.append(RegexProblem(
            f"the pattern is written like a regex literal '{pattern}', but in a string the slashes are matched "
            f"literally; write just '{literal.group(1)}' ({hint})", 0, len(pattern), "warning", "regex-literal"))
    translator = _Translator(pattern, flags, dialect)
    try:
        python = translator.translate()
    except _Fail as failure:
        return tuple(problems + translator.warnings + [failure.problem]), None, None
    return tuple(problems + translator.warnings), python, translator.unsupported


def find_js_regex_problems(pattern: str, flags: str = "", *, dialect: Dialect = "weval") -> list[RegexProblem]:
    """Every finding about `pattern`: flag errors, warnings, then the first syntax error (JS stops there)."""
    return list(_analyse(pattern, flags, dialect)[0])


def js_regex_problem(pattern: str, flags: str = "", *, dialect: Dialect = "weval") -> str | None:
    """A message if the pattern would fail (or silently misbehave) in JavaScript, else None.

    Errors come before warnings. `dialect` only changes the advice: Weval has `$imatches` where AgentV
    has a `flags` field.
    """
    problems = _analyse(pattern, flags, dialect)[0]
    errors = [p for p in problems if p.severity == "error"]
    chosen = errors[0] if errors else (problems[0] if problems else None)
    return chosen.message if chosen else None


def strip_leading_inline_i(pattern: str) -> str | None:
    """For the quick fix "(?i)x → $imatches: x": the pattern without a leading '(?i)', or None."""
    return pattern[4:] if pattern.startswith("(?i)") else None


@lru_cache(maxsize=512)
def compile_js_regex(pattern: str, flags: str = "", *, dialect: Dialect = "weval") -> re.Pattern[str]:
    """A Python pattern that matches what `new RegExp(pattern, flags)` matches (use `.search`).

    Flags: i (case-insensitive), m, s, u/v, y (sticky: anchored at the start, as for a fresh regex),
    g and d (no effect on a single test). Raises JsRegexError when JavaScript would throw, or when the
    pattern is valid JavaScript that Python cannot evaluate (e.g. variable-width lookbehind). `dialect`
    only changes the advice in error messages.
    """
    problems, python, unsupported = _analyse(pattern, flags, dialect)
    for problem in problems:
        if problem.severity == "error":
            raise JsRegexError(problem.message, problem.start if problem.where == "pattern" else None)
    assert python is not None
    if unsupported:
        raise JsRegexError(f"{unsupported} (valid JavaScript, but Python's re cannot evaluate it)",
                           unsupported=True)
    if "y" in flags:
        python = f"\\A(?:{python})"
    try:
        return re.compile(python, re.IGNORECASE if "i" in flags else 0)
    except (re.error, OverflowError, RecursionError) as exc:
        detail = exc.msg if isinstance(exc, re.error) else str(exc)
        raise JsRegexError(f"valid JavaScript, but Python's re cannot evaluate this pattern: {detail}",
                           unsupported=True) from exc


@lru_cache(maxsize=512)
def _timed(python: str, flags: int) -> regex.Pattern[str]:
    # The `regex` package reads `re`'s syntax (its VERSION0) and can stop a match at a deadline, which
    # `re` cannot (and it holds the GIL while it backtracks, so not even a signal gets through).
    return regex.compile(python, regex.VERSION0 | (regex.IGNORECASE if flags & re.IGNORECASE else 0))


def js_regex_search(pattern: str, text: str, flags: str = "", *, dialect: Dialect = "weval",
                    time_limit_s: float = MATCH_TIME_LIMIT_S) -> bool:
    """Whether `compile_js_regex(pattern, flags)` finds a match in `text`, in at most `time_limit_s`.

    Raises JsRegexError as `compile_js_regex` does, and JsRegexTimeout past the limit."""
    compiled = compile_js_regex(pattern, flags, dialect=dialect)
    try:
        return _timed(compiled.pattern, compiled.flags).search(text, timeout=time_limit_s) is not None
    except TimeoutError:
        raise JsRegexTimeout(f"matching took longer than {time_limit_s:g} s on this text (a pattern that "
                             "backtracks without end, such as '(a+)+$'); not evaluated") from None


def js_regex_test(pattern: str, text: str, flags: str = "", *, dialect: Dialect = "weval") -> bool:
    """`new RegExp(pattern, flags).test(text)` for a fresh regex (lastIndex 0).

    Uses the Python translation; a pattern that is valid JavaScript but beyond Python's `re`
    (variable-width lookbehind, script properties) is tested in the QuickJS sandbox instead.
    Raises JsRegexError when JavaScript would throw (or the sandbox times out).
    """
    try:
        return js_regex_search(pattern, text, flags, dialect=dialect)
    except JsRegexError as exc:
        if not exc.unsupported:
            raise
    from . import js_sandbox  # only for the rare patterns Python cannot run

    try:
        value = js_sandbox.evaluate("new RegExp(__p, __f).test(__s)", {"__p": pattern, "__f": flags, "__s": text},
                                    time_limit_s=1.0)
    except js_sandbox.JsSandboxError as exc:
        raise JsRegexError(f"the regex could not be evaluated: {exc.message}") from None
    return value.value is True
