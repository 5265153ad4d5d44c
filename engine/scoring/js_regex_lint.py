"""The pattern lint: what JavaScript would reject in a regex, and what compiles but means something else.

Weval's `$matches` and AgentV's `regex` run `new RegExp(pattern, flags)` (js_regex.py runs them the same
way, in QuickJS). Authors often bring Python or PCRE habits, so this module parses the pattern with
JavaScript's grammar (Annex B without `u`, strict with `u`; pure Python, linear, nothing executed) and
reports, with offsets and advice, the first construct JavaScript rejects (`(?i)`, `(?P<n>…)`, `a*+`, an
unclosed group…) and constructs that compile but almost certainly do not mean what the author wanted
(warnings: `\\A`, `\\Z`, `\\p{L}` without `u`, `\\1` with no group 1, `a{,5}`, `/abc/i` written as a string).

The verdict on validity is QuickJS's (js_regex.regex_findings); this parser supplies the messages and
the warnings, and, for Weval, the two rejections of ES2025 syntax that QuickJS-ng and AgentV's bun accept
but Weval's Node 20 does not (inline modifiers `(?i:…)`, a group name used twice). With the `v` flag its
errors are not reported (class set operations are not parsed here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Dialect = Literal["weval", "agentv"]
Severity = Literal["error", "warning"]

VALID_FLAGS = "dgimsuvy"
_SYNTAX_CHARS = "^$\\.*+?()[]{}|/"
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"
# The parser recurses per group level; deeper than any real pattern, it stops and leaves the verdict to
# QuickJS (5,000 levels was a RecursionError).
MAX_GROUP_DEPTH = 100
# Errors QuickJS-ng and bun (AgentV) no longer raise but Weval's Node 20 does (ES2025 syntax).
NODE20_REJECTS = frozenset({"inline-modifiers", "duplicate-group-name"})


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


class _TooDeep(Exception):
    pass


# ECMA-262 General_Category values and their aliases, and the table "Binary Unicode property aliases".
_GENERAL_CATEGORIES = frozenset((
    "L", "Letter", "LC", "Cased_Letter", "Lu", "Uppercase_Letter", "Ll", "Lowercase_Letter", "Lt",
    "Titlecase_Letter", "Lm", "Modifier_Letter", "Lo", "Other_Letter", "M", "Mark", "Combining_Mark", "Mn",
    "Nonspacing_Mark", "Mc", "Spacing_Mark", "Me", "Enclosing_Mark", "N", "Number", "Nd", "Decimal_Number",
    "digit", "Nl", "Letter_Number", "No", "Other_Number", "P", "Punctuation", "punct", "Pc",
    "Connector_Punctuation", "Pd", "Dash_Punctuation", "Ps", "Open_Punctuation", "Pe", "Close_Punctuation",
    "Pi", "Initial_Punctuation", "Pf", "Final_Punctuation", "Po", "Other_Punctuation", "S", "Symbol", "Sm",
    "Math_Symbol", "Sc", "Currency_Symbol", "Sk", "Modifier_Symbol", "So", "Other_Symbol", "Z", "Separator",
    "Zs", "Space_Separator", "Zl", "Line_Separator", "Zp", "Paragraph_Separator", "C", "Other", "Cc",
    "Control", "cntrl", "Cf", "Format", "Cs", "Surrogate", "Co", "Private_Use", "Cn", "Unassigned",
))
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


def _is_id_start(ch: str) -> bool:
    return ch in "$_" or ch.isidentifier()


def _is_id_continue(ch: str) -> bool:
    return ch in "$\u200c\u200d" or ("a" + ch).isidentifier()


_BRACED = re.compile(r"\{(\d+)(,(\d*))?\}")
_NOT_A_QUANTIFIER = re.compile(r"\{,(\d+)\}")
_INLINE_FLAGS = re.compile(r"([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")
_RECURSION = re.compile(r"(R|[+-]?\d|&)")
_DIGITS = re.compile(r"\d+")


class _Parser:
    """JavaScript's regex grammar, walked once; raises _Fail at the first error, collects warnings."""

    def __init__(self, pattern: str, flags: str, dialect: Dialect) -> None:
        self.p = pattern
        self.n = len(pattern)
        self.i = 0
        self.unicode = "u" in flags or "v" in flags
        self.dialect = dialect
        self.warnings: list[RegexProblem] = []
        self.group_count, self.names = self._prescan()
        self.seen_names: set[str] = set()
        self.depth = 0  # groups open around the cursor

    # -- helpers ------------------------------------------------------------------------------------

    def fail(self, code: str, message: str, start: int, end: int | None = None) -> _Fail:
        return _Fail(RegexProblem(message, start, end if end is not None else start + 1, "error", code))

    def warn(self, code: str, message: str, start: int, end: int) -> None:
        self.warnings.append(RegexProblem(message, start, end, "warning", code))

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < self.n else ""

    def _prescan(self) -> tuple[int, set[str]]:
        """Count capture groups and collect group names (JS allows forward references)."""
        names: set[str] = set()
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
                        names.add(p[i + 3:close])
                elif not p.startswith("(?", i):
                    count += 1
            i += 1
        return count, names

    # -- grammar ------------------------------------------------------------------------------------

    def parse(self) -> None:
        self.disjunction()
        if self.i < self.n:  # only a ')' stops a top-level disjunction early
            raise self.fail("unbalanced-close",
                            f"unmatched ')' at position {self.i}: there is no '(' for it to close", self.i)

    def disjunction(self) -> None:
        self.alternative()
        while self.peek() == "|":
            self.i += 1
            self.alternative()

    def alternative(self) -> None:
        while self.i < self.n and self.p[self.i] not in "|)":
            self.term()

    def term(self) -> None:
        start = self.i
        c = self.p[self.i]
        quantifiable = True
        if c in "^$":
            self.i += 1
            quantifiable = False
        elif c == "\\" and self.peek(1) in ("b", "B"):
            self.i += 2
            quantifiable = False
        elif c == "(":
            quantifiable = self.group()
        elif c == "[":
            self.char_class()
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
        elif c in "}]":
            if self.unicode:
                raise self.fail("lone-bracket",
                                f"lone '{c}' is not allowed with the u flag; escape it as '\\{c}'", start)
            self.i += 1
        elif c == "\\":
            self.atom_escape()
        else:
            self.i += 1
        self.quantifier(start, quantifiable)

    def literal_brace_warning(self, start: int) -> None:
        m = _NOT_A_QUANTIFIER.match(self.p, start)
        if m:
            self.warn("not-a-quantifier",
                      f"'{m.group(0)}' is not a quantifier in JavaScript: it matches the literal text "
                      f"'{m.group(0)}'; write '{{0,{m.group(1)}}}'", start, m.end())

    def braced_quantifier(self, at: int) -> tuple[int, int | None, int] | None:
        """`{n}`, `{n,}` or `{n,m}` at `at`: (min, max, end offset), else None."""
        m = _BRACED.match(self.p, at)
        if not m:
            return None
        low = int(m.group(1))
        high = low if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
        return low, high, m.end()

    def quantifier(self, atom_start: int, quantifiable: bool) -> None:
        start = self.i
        c = self.peek()
        if c in ("*", "+", "?"):
            self.i += 1
        elif c == "{":
            braced = self.braced_quantifier(self.i)
            if braced is None:
                return
            low, high, end = braced
            if high is not None and high < low:
                raise self.fail("quantifier-order",
                                f"numbers out of order in the quantifier '{self.p[start:end]}'", start, end)
            self.i = end
        else:
            return
        if not quantifiable:
            raise self.fail("nothing-to-repeat",
                            f"nothing to repeat: '{self.p[atom_start:start]}' cannot be followed by the "
                            f"quantifier '{self.p[start:self.i]}'", start, self.i)
        if self.peek() == "?":
            self.i += 1
        elif self.peek() == "+":
            raise self.fail("possessive",
                            f"possessive quantifier '{self.p[start:self.i + 1]}' is not valid in JavaScript "
                            f"(JavaScript has no possessive quantifiers); remove the final '+'", start, self.i + 1)
        nxt = self.peek()
        if nxt in ("*", "+", "?") or (nxt == "{" and self.braced_quantifier(self.i) is not None):
            raise self.fail("nothing-to-repeat",
                            f"nothing to repeat: a quantifier cannot follow the quantifier "
                            f"'{self.p[start:self.i]}' (position {self.i})", self.i)

    # -- groups -------------------------------------------------------------------------------------

    def group(self) -> bool:
        """Parse a group at the cursor; return whether a quantifier may follow it."""
        start = self.i
        p = self.p
        if not p.startswith("(?", start):
            self.i += 1
            self.close_group(start)
            return True
        rest = p[start + 2:start + 4]
        if rest.startswith(":"):
            self.i += 3
            self.close_group(start)
            return True
        if rest[:1] in ("=", "!"):
            self.i += 3
            self.close_group(start)
            return not self.unicode  # Annex B lets a lookahead be quantified without u
        if rest in ("<=", "<!"):
            self.i += 4
            self.close_group(start)
            return False
        if rest.startswith("<"):
            self.named_group(start)
            return True
        self.bad_group(start)
        raise AssertionError  # bad_group always raises

    def close_group(self, start: int) -> None:
        self.depth += 1
        if self.depth > MAX_GROUP_DEPTH:
            raise _TooDeep
        self.disjunction()
        self.depth -= 1
        if self.peek() != ")":
            raise self.fail("unbalanced-open",
                            f"unterminated group: the '(' at position {start} is never closed", start)
        self.i += 1

    def named_group(self, start: int) -> None:
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
        self.seen_names.add(name)
        self.i = close + 1
        self.close_group(start)
    def bad_group(self, start: int) -> None:
        p = self.p
        after = p[start + 2:]
        flag_m = _INLINE_FLAGS.match(after)
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
        if _RECURSION.match(after):
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

    def atom_escape(self) -> None:
        start = self.i
        if start + 1 >= self.n:
            raise self.fail("trailing-backslash",
                            "the pattern ends with a lone '\\' (write '\\\\' for a literal backslash)", start)
        c = self.p[start + 1]
        if c in "dDwWsS":
            self.i += 2
        elif c in "pP":
            self.property_atom(start)
        elif c == "k":
            self.named_backreference(start)
        elif c.isdigit() and c != "0":
            self.decimal_escape(start)
        elif c == "-" and self.unicode:
            raise self.fail("bad-escape", "'\\-' is allowed only inside a character class with the u flag",
                            start, start + 2)
        else:
            self.character_escape(start, in_class=False)

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

    def decimal_escape(self, start: int) -> None:
        m = _DIGITS.match(self.p, start + 1)
        assert m is not None
        number = int(m.group(0))
        if number <= self.group_count:
            self.i = m.end()
            return
        if self.unicode:
            raise self.fail("bad-backreference",
                            f"backreference '\\{number}' refers to group {number}, but the pattern has only "
                            f"{self.group_count} capture group(s)", start, m.end())
        cp = self.legacy_octal(start)
        shown = self.p[start:self.i]
        self.warn("octal-escape",
                  f"'\\{m.group(0)}' is not a backreference (the pattern has {self.group_count} capture "
                  f"group(s)); JavaScript reads '{shown}' as the character U+{cp:04X}", start, self.i)

    def named_backreference(self, start: int) -> None:
        p = self.p
        if not self.unicode and not self.names:
            self.i = start + 2
            return  # Annex B: '\k' is the letter k when the pattern has no named groups
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

    def property_atom(self, start: int) -> None:
        if not self.unicode:
            if self.peek(2) == "{":
                close = self.p.find("}", start)
                shown = self.p[start:close + 1] if close != -1 else self.p[start:start + 3]
                self.warn("property-without-u",
                          f"'{shown}' is a Unicode property escape only with the u flag; without it JavaScript "
                          f"matches the literal text '{shown[1:]}'", start, start + len(shown))
            self.i = start + 2
            return
        self.property_name(start)

    def property_name(self, start: int) -> None:
        """Check `\\p{…}` at start (u mode): a general category, a binary property or a script."""
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
                return
            if name in ("Script", "sc", "Script_Extensions", "scx") and re.fullmatch(r"[A-Za-z_]+", value):
                return  # the script's name itself is QuickJS's to judge
        elif name in _GENERAL_CATEGORIES or name in _BINARY_PROPERTIES:
            return
        raise self.fail("bad-property", f"unknown Unicode property '\\p{{{text}}}'", start, close + 1)

    # -- character classes --------------------------------------------------------------------------

    def char_class(self) -> None:
        start = self.i
        self.i += 1
        if self.peek() == "^":
            self.i += 1
        while True:
            if self.i >= self.n:
                raise self.fail("unterminated-class",
                                f"unterminated character class: the '[' at position {start} is never closed", start)
            if self.p[self.i] == "]":
                self.i += 1
                return
            atom_start = self.i
            first = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                second = self.class_atom()
                if first >= 0 and second >= 0:
                    if first > second:
                        raise self.fail("bad-range",
                                        f"range out of order in character class: '{self.p[atom_start:self.i]}'",
                                        atom_start, self.i)
                elif self.unicode:
                    raise self.fail("bad-range",
                                    f"invalid range '{self.p[atom_start:self.i]}': a class escape such as '\\d' "
                                    "cannot bound a range with the u flag", atom_start, self.i)
                # Annex B: '[\w-z]' is '\w', '-' and 'z'.

    def class_atom(self) -> int:
        """One class member: its code point, or -1 for a set such as \\d, \\W or \\p{…}."""
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
            return -1
        if e in "pP" and self.unicode:
            self.property_name(start)
            return -1
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


_REGEX_LITERAL = re.compile(r"/(.+)/([a-z]*)", re.DOTALL)


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
def _parse(pattern: str, flags: str, dialect: Dialect) -> tuple[tuple[RegexProblem, ...], RegexProblem | None]:
    """(warnings, the first syntax error or None)."""
    parser = _Parser(pattern, flags, dialect)
    try:
        parser.parse()
    except _Fail as failure:
        return tuple(parser.warnings), failure.problem
    except _TooDeep:
        pass  # nested past MAX_GROUP_DEPTH: what was seen so far, and QuickJS's verdict
    return tuple(parser.warnings), None


def first_syntax_error(pattern: str, flags: str = "", *, dialect: Dialect = "weval") -> RegexProblem | None:
    """The first error of the flags or the pattern, as the parser sees it (with `v` read like `u`): what
    words the message once QuickJS has rejected the pattern."""
    flag_errors = _flag_problems(flags)
    return flag_errors[0] if flag_errors else _parse(pattern, flags, dialect)[1]


@lru_cache(maxsize=1024)
def _analyse(pattern: str, flags: str, dialect: Dialect) -> tuple[RegexProblem, ...]:
    problems = _flag_problems(flags)
    literal = _REGEX_LITERAL.fullmatch(pattern)
    if literal and len(pattern) > 2 and set(literal.group(2)) <= set(VALID_FLAGS):
        hint = ("use $imatches for case-insensitive matching" if dialect == "weval"
                else "put the flags in the `flags` field")
        problems.append(RegexProblem(
            f"the pattern is written like a regex literal '{pattern}', but in a string the slashes are matched "
            f"literally; write just '{literal.group(1)}' ({hint})", 0, len(pattern), "warning", "regex-literal"))
    warnings, error = _parse(pattern, flags, dialect)
    if error is not None and "v" not in flags:  # v's class syntax is not parsed here: QuickJS judges it
        return (*problems, *warnings, error)
    return (*problems, *warnings)


def find_js_regex_problems(pattern: str, flags: str = "", *, dialect: Dialect = "weval") -> list[RegexProblem]:
    """What this parser finds: flag errors, warnings, then the first syntax error (JS stops there).

    The checker's lint is js_regex.regex_findings, which adds QuickJS's verdict to these."""
    return list(_analyse(pattern, flags, dialect))


def strip_leading_inline_i(pattern: str) -> str | None:
    """For the quick fix "(?i)x → $imatches: x": the pattern without a leading '(?i)', or None."""
    return pattern[4:] if pattern.startswith("(?i)") else None
