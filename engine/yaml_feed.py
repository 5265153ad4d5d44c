"""The text libyaml reads for a YAML text: of the same length, character for character (and byte for byte
in UTF-8), so every mark and position stays where it was, with two things js-yaml 4.1.0 (Weval's parser)
accepts and libyaml refuses made readable. source.py feeds libyaml through `fed_text`.

- A UTF-16 surrogate escape (`"\\ud83d\\ude00"`, what Python's json.dumps writes for an emoji). Each
  `\\uD800`-`\\uDFFF` escape (and `\\U0000D800`-`\\U0000DFFF`) is swapped for the escape of a private-use
  character, of the same length and spelling its case (`swap_surrogate_escapes`); `unswapped` gives a
  scalar's text back: the escape as written where it was read as text (plain, single-quoted, `\\\\ud83d`), the
  surrogates where it was decoded, each high one followed by a low one joined into its character, as
  JavaScript's strings join them; a lone one is left as it is (source.py reads a double-quoted scalar's as
  U+FFFD, with a warning). A text that already holds
  one of those private-use characters, or an escape of one, is not swapped (libyaml refuses it, as before).
- A blank line holding a tab (`- a: 1\\n\\t\\n- b: 2`), which js-yaml reads as a blank line and libyaml
  refuses. `blank_tab_lines` turns the tabs of such lines (blanks, then maybe a comment) into spaces, but
  not where js-yaml reads no blank line either: in a block scalar at or past its indentation (content), or
  before its last line of content (an error in both). After a keep-chomped (`|+`, `>+`) block scalar's
  content, js-yaml ends the scalar at the first such line, keeping the blank lines before it and none
  after: that line's first character becomes `#`, a comment line libyaml ends the scalar at too (so too a
  tab line holding a comment after any block scalar, whose blanks made spaces could reach its column). Those
  are found from the scalars of the blanked text. Inside a multi-line plain scalar the line is a blank
  line (folded) in both; the indentation errors there are js-yaml's with or without it.

AgentV's parser (the `yaml` package) refuses some of those lines js-yaml reads: source.py's
tab_lines_agentv_refuses finds them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable

# A surrogate's escape: its `u` (or `U0000`), first digit, second digit (8-F), last two
_SURROGATE_ESCAPE = re.compile(r"\\(u|U0000)([dD])([89a-fA-F])([0-9a-fA-F]{2})")
# What a swapped text could not be told from: a character of the two private-use blocks used, or its escape
_SWAP_CLASH = re.compile(r"\\(?:u|U0000)[eEfF][0-7]|[\ue000-\ue7ff\uf000-\uf7ff]")
_SWAPPED_ESCAPE = re.compile(r"\\(u|U0000)([eEfF])([0-7])([0-9a-fA-F]{2})")
_SWAPPED_CHAR = re.compile("[\ue000-\ue7ff\uf000-\uf7ff]")
# A line of blanks, maybe then a comment: its blanks (a tab among them is what libyaml refuses)
_BLANK_LINE = re.compile(r"^([ \t]*+)(?:#[^\n]*+)?\r?$", re.MULTILINE)


def swap_surrogate_escapes(text: str) -> str | None:
    """`text` with each surrogate escape swapped for a private-use character's, or None: none to swap, or
    one that could not be told back."""
    if ("\\u" not in text and "\\U0000" not in text) or _SURROGATE_ESCAPE.search(text) is None:
        return None
    if _SWAP_CLASH.search(text) is not None:
        return None
    return _SURROGATE_ESCAPE.sub(_swap, text)


def _swap(m: re.Match[str]) -> str:
    # U+D800 + n -> U+E000 + n or U+F000 + n: `e`/`f` says the second digit's case, the first's its own
    u, d, h2, rest = m.groups()
    upper2 = h2 in "ABCDEF"
    first = ("F" if upper2 else "E") if d == "D" else ("f" if upper2 else "e")
    return f"\\{u}{first}{int(h2, 16) - 8}{rest}"


def _unswap(m: re.Match[str]) -> str:
    u, first, digit, rest = m.groups()
    h2 = "89abcdef"[int(digit)]
    return f"\\{u}{'D' if first.isupper() else 'd'}{h2.upper() if first in 'fF' else h2}{rest}"


def _surrogate(m: re.Match[str]) -> str:
    return chr(0xD800 + (ord(m.group()) & 0x7FF))


def unswapped(value: str) -> str:
    """A scalar's text (or an anchor's name) read from a swapped text, as the text before the swap reads."""
    if "\\" in value:
        value = _SWAPPED_ESCAPE.sub(_unswap, value)
    if _SWAPPED_CHAR.search(value) is not None:
        value = _SWAPPED_CHAR.sub(_surrogate, value)
        # a high surrogate then a low one: one character, as in a JavaScript string (lone ones stay)
        value = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return value


# (start line, start column, end line, end column, style) of a multi-line scalar of a text, as libyaml's
# events give them (a block scalar's end is the start of the line after its last one); as far as libyaml
# reads the text
ScalarLines = Callable[[str], list[tuple[int, int, int, int, str | None]]]


def _tab_lines(text: str) -> list[tuple[int, int, int]]:
    """(line, start, end of its blanks) of the blank lines (maybe then a comment) holding a tab."""
    found: list[tuple[int, int, int]] = []
    line, at = 0, 0
    for m in _BLANK_LINE.finditer(text):
        if "\t" in m.group(1):
            line += text.count("\n", at, m.start())
            at = m.start()
            found.append((line, m.start(1), m.end(1)))
    return found


def blank_tab_lines(text: str, scalar_lines: ScalarLines) -> str | None:
    """`text` with the tabs of its blank lines made spaces where js-yaml reads those lines as blank (the
    first after a keep-chomped block scalar's content a comment line), or None when there are none."""
    if "\t" not in text:
        return None
    found = _tab_lines(text)
    if not found:
        return None
    blanked = _blanked(text, found, set())
    keep, ends = _not_blank(text, blanked, found, scalar_lines(blanked))
    if keep or ends:
        found = [f for f in found if f[0] not in keep]
        if not found:
            return None
        blanked = _blanked(text, found, ends)
    return blanked


def all_tab_lines_blank(text: str) -> tuple[str, list[int]]:
    """`text` (surrogate escapes swapped) with every blank line holding a tab made blank, and those lines:
    what AgentV's YAML parser is asked about (source.tab_lines_agentv_refuses)."""
    text = swap_surrogate_escapes(text) or text
    found = _tab_lines(text)
    return (_blanked(text, found, set()) if found else text), [f[0] for f in found]


def _blanked(text: str, found: list[tuple[int, int, int]], ends: set[int]) -> str:
    pieces: list[str] = []
    at = 0
    for line, start, end in found:
        blanks = text[start:end].replace("\t", " ")
        pieces += (text[at:start], "#" + blanks[1:] if line in ends else blanks)
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def _not_blank(text: str, blanked: str, found: list[tuple[int, int, int]],
               scalars: list[tuple[int, int, int, int, str | None]]) -> tuple[set[int], set[int]]:
    """The lines of `found` js-yaml does not read as blank lines (inside a block scalar), and those that
    end one (made comments): the first after a keep-chomped one's content, one holding a comment."""
    tab_lines = {f[0]: text[f[1]:f[2]] for f in found}
    ends_at = {f[0]: f[2] for f in found}
    numbers = [f[0] for f in found]  # in order
    keep: set[int] = set()
    ends: set[int] = set()
    lines: list[str] | None = None
    for sl, sc, el, ec, style in scalars:
        inside = numbers[bisect_right(numbers, sl):bisect_right(numbers, el)]
        if not inside or style is None or style not in "|>":
            continue  # plain, quoted: js-yaml folds the line as libyaml folds a blank one
        if lines is None:
            lines = blanked.split("\n")
        last = el if ec else el - 1  # the block scalar's last line (then maybe the line of what follows)
        content = [i for i in range(sl + 1, last + 1) if i < len(lines) and lines[i].strip()]
        indent = len(lines[content[0]]) - len(lines[content[0]].lstrip(" ")) if content else None
        keep_chomping = "+" in lines[sl][sc:sc + 3]
        ended = False
        for i in inside:
            if i > last or ended:
                continue
            spaces = len(tab_lines[i]) - len(tab_lines[i].lstrip(" "))
            if (indent is not None and spaces >= indent) or (content and i < content[-1]):
                keep.add(i)
            elif keep_chomping and content and indent:  # js-yaml ends it here: a comment line ends it
                ends.add(i)
                ended = True
            elif keep_chomping:
                keep.add(i)
            elif content and indent and text[ends_at[i]:ends_at[i] + 1] == "#":
                ends.add(i)  # a comment, less indented: its blanks made spaces could reach the content's column
    return keep, ends


def fed_text(text: str, scalar_lines: ScalarLines) -> tuple[str, bool]:
    """What libyaml reads for `text`, and whether its surrogate escapes were swapped (read its scalars
    through `unswapped`)."""
    swapped = swap_surrogate_escapes(text)
    fed = swapped if swapped is not None else text
    blanked = blank_tab_lines(fed, scalar_lines)
    return (blanked if blanked is not None else fed), swapped is not None
