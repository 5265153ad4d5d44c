"""No regex of the engine or the server is super-linear on any input (issue 15).

Every compiled pattern of the modules that read eval files and editor text is listed here with the
way the code uses it (`match`, `search`, `sub`, …); a new pattern fails the first test until it is
added. Each is then run, that way, on adversarial strings of 100,000 characters (long runs of the
characters regexes trip on: blanks, quotes, colons, `#`, `${1:`, CRLF comment lines…, each ended by a
character that makes the match fail) and timed against a linear scan of the same string. The bound is
a ratio, not a duration: a linear pattern costs a bounded multiple of the scan; a quadratic one on
100,000 characters costs thousands of times more, an exponential one never ends.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
import time
from collections.abc import Callable

import pytest

import evalspec
import evalspec_lsp

N = 100_000
# A linear pattern with a heavy step (16 case-insensitive alternatives tried at every '.') costs up to
# ~130x the scan; a quadratic one on 100,000 characters 2,000x and more (60,000 trailing spaces before
# the fix: seconds), an exponential one never returns.
RATIO_LIMIT = 500
# The linear scan: one alternation per character, nothing to backtrack into.
_SCAN = re.compile(r"(?:[^\n]|\n)*+")

# Every module of both packages: the engine reads file text, editor input and model, judge and provider
# answers almost everywhere (the third attack run found judges' answers parsed by quadratic lazy regexes,
# and the CLI's terminal escaping reads them too), so no module is assumed safe.
SCOPE = ("evalspec", "evalspec_lsp")

# module.NAME -> how the code uses it
USES: dict[str, str] = {
    "evalspec.detect._INPUT_KEY": "search",
    "evalspec.weval.ids._LONE_SURROGATE": "sub",
    "evalspec.weval.js_values._DATE": "match",
    "evalspec.weval.js_values._TIMESTAMP": "match",
    "evalspec.weval.js_values._UNDERSCORED_FLOAT": "match",
    "evalspec.weval.js_values._UNDERSCORED_INT": "match",
    "evalspec.weval.reference_form._TAG_DROP": "sub",
    "evalspec.weval.reference_form._TAG_SPACES": "sub",
    "evalspec.weval.reference_form._URL_SCHEME": "match",
    "evalspec.agentv.assertions._PROMPT_VAR": "finditer",
    "evalspec.agentv.edits._BLOCK_SAFE": "match",
    "evalspec.agentv.edits._FLOW_SAFE": "match",
    "evalspec.agentv.files._PROMPT_FILE": "match",
    "evalspec.agentv.files._SCRIPT_FILE": "search",
    "evalspec.agentv.interpolate.PATTERN": "sub",
    "evalspec.agentv.interpolate._SECRET_NAME": "search",
    "evalspec.agentv.interpolate._CREDENTIAL_KEY": "search",
    "evalspec.agentv.suite.NAME_PATTERN": "match",
    "evalspec.agentv.targets._KEY_LOOKING": "match",
    "evalspec.agentv.targets._PLACEHOLDER": "finditer",
    "evalspec.agentv.targets._SECRET_KEY": "search",
    "evalspec.detect._MARKER": "search",
    "evalspec.json_stream._WS": "match",
    "evalspec.pricing._DOTTED": "sub",
    "evalspec.providers.command._PLACEHOLDER": "findall",
    "evalspec.providers.envvars._REF": "findall",
    "evalspec.providers.http._SENDABLE_HEADER": "fullmatch",
    "evalspec.providers.rate_limits._GO_DURATION": "match",
    "evalspec.run.score.agentv_judge._VAR": "sub",
    "evalspec.run.score.agentv_judge._FENCE": "sub",
    "evalspec.scoring.field_accuracy._FENCE": "sub",
    "evalspec.scoring.field_accuracy._FLOAT": "match",
    "evalspec.run.write.git_source._SHA": "match",
    "evalspec.run.plan.replay._SUFFIX_START": "search",
    "evalspec.run.plan.shard._SPEC": "fullmatch",
    "evalspec.run.weval_stages._STAMP": "fullmatch",
    "evalspec.scoring.field_accuracy._DAY_MON_YEAR": "fullmatch",
    "evalspec.scoring.field_accuracy._NUMERIC_DATE": "fullmatch",
    "evalspec.scoring.js_regex._LONE_SURROGATE": "search",
    "evalspec.scoring.js_regex._MODIFIERS": "match",
    "evalspec.scoring.js_regex_lint._BRACED": "match",
    "evalspec.scoring.js_regex_plain._COUNT": "match",
    "evalspec.scoring.js_regex_lint._DIGITS": "match",
    "evalspec.scoring.js_regex_lint._INLINE_FLAGS": "match",
    "evalspec.scoring.js_regex_lint._NOT_A_QUANTIFIER": "match",
    "evalspec.scoring.js_regex_lint._RECURSION": "match",
    "evalspec.scoring.js_regex_lint._REGEX_LITERAL": "fullmatch",
    "evalspec.scoring.js_text._SPACE_RUNS": "sub",
    "evalspec.scoring.js_text._WORDS": "findall",
    "evalspec.scoring.js_worker._LONE_SURROGATE": "sub",
    "evalspec.terminal_text._CONTROL": "search",
    "evalspec.terminal_text._CONTROL_OR_NEWLINE": "sub",
    "evalspec.terminal_text._OURS": "sub",
    "evalspec.ide.context._PLAIN_END": "search",
    "evalspec.ide.context._WORD_END": "match",
    "evalspec.ide.context._FLOW_ITEM_END": "search",
    "evalspec.ide.layout._LINES_BEFORE_CONTENT": "match",
    "evalspec.ide.layout._ROOT_KEY": "match",
    "evalspec.ide.markdown_text._ACTIVE": "sub",
    "evalspec.ide.lines._BLOCK_SCALAR": "match",
    "evalspec.ide.lines._DOC_MARKER": "match",
    "evalspec.ide.lines._FLOW_STOP": "search",
    "evalspec.ide.lines._KEY": "match",
    "evalspec.markdown_code._BACKTICKS": "finditer",
    "evalspec.report.markdown._MARKDOWN_PUNCTUATION": "sub",
    "evalspec.report.markdown._MENTION": "sub",
    "evalspec.report.sources._WRITTEN": "search",
    "evalspec.run.journal.records._FP_VALUE": "fullmatch",
    "evalspec.source._ANCHOR": "search",
    "evalspec.yaml_nodes._FLOAT": "match",
    "evalspec.yaml_nodes._HEX": "match",
    "evalspec.yaml_nodes._INF": "match",
    "evalspec.yaml_nodes._INT": "match",
    "evalspec.yaml_nodes._NAN": "match",
    "evalspec.yaml_nodes._OCT": "match",
    "evalspec.simple_items._LINE": "match",
    "evalspec.yaml_feed._SURROGATE_ESCAPE": "sub",
    "evalspec.yaml_feed._SWAP_CLASH": "search",
    "evalspec.yaml_feed._SWAPPED_ESCAPE": "sub",
    "evalspec.yaml_feed._SWAPPED_CHAR": "sub",
    "evalspec.yaml_feed._BLANK_LINE": "finditer",
    "evalspec.simple_items._FLOW_ITEM": "finditer",
    "evalspec.simple_items._FLOW_PAIRS": "findall",
    "evalspec.simple_items._REFUSED": "search",
    "evalspec.scoring.weval_points._JSON_NUMBER": "match",
    "evalspec.source._DOC_MARKER": "match",
    "evalspec.source._ITEM": "match",
    "evalspec.source._KEYED_LIST": "match",
    "evalspec.source._ODD_BREAK": "search",
    "evalspec.source._SURROGATE": "sub",
    "evalspec.validation.suggest._CAMEL": "sub",
    "evalspec.validation.yaml_text._PLAIN_SAFE": "match",
    "evalspec.validation.yaml_text._SPACES": "match",
    "evalspec.validation.yaml_text._SPACES_OR_DASH": "match",
    "evalspec.weval.check._QUOTED_FN": "match",
    "evalspec.weval.check._SPACES": "match",
    "evalspec.weval.ids._SAFE_FILE": "sub",
    "evalspec.weval.models.COLLECTION_NAME": "match",
    "evalspec.line_breaks.BARE_CR": "sub",
    "evalspec_lsp.features.completion._PLACEHOLDER": "sub",
    "evalspec_lsp.documents._BREAK": "finditer",
    "evalspec_lsp.documents._CONTENT": "match",
    "evalspec_lsp.documents._LF": "finditer",
}
# Patterns compiled where they are used (re.sub / re.search with a literal), checked the same way.
INLINE = {
    "evalspec.agentv.edits (slug)": (r"[^a-z0-9]+", "sub"),
    "evalspec.agentv.targets (env name)": (r"[^A-Z0-9]+", "sub"),
    "evalspec.weval.models (blank)": (r"\s", "search"),
}

UNITS = (" ", "\t", "a", "A", "0", "#", ":", "-", "'", '"', "\\", "{", "[", "$", "&", ".", "\r", "\n", "|", "_",
         "é", ": ", "a:", "a ", "# ", "- ", "${1:", "${{", "{{ a", "\r\n", "# c\r\n", "$a", '\\"', "''", "1.",
         "-+", " #", "sk-", "_token", "{A", "@`",
         # what answers hold: fences, judges' tags, model-id suffixes, durations, placeholders
         "```", "```json ", "<key_point>", "<classification>", "<reflection>", "[a:]", "[a:", "1.", "1h",
         "{{ a ", "{A_", "/a", "1/",
         # what the terminal escaping reads: escape sequences, cut short
         "\x1b[", "\x1b[1;3", "\r\x1b[",
         # what Markdown escaping reads: links, images, code spans, mentions
         "](", "![a](", "`` ", "@a")
PREFIXES = ("", "a", "- ", '"', "|", "${{ a")


@functools.cache
def discovered() -> dict[str, re.Pattern[str]]:
    found: dict[str, re.Pattern[str]] = {}
    names: list[str] = []
    for root in (evalspec, evalspec_lsp):
        names.append(root.__name__)
        names += [m.name for m in pkgutil.walk_packages(root.__path__, root.__name__ + ".")]
    for name in names:
        if not any(name == s or name.startswith(s + ".") for s in SCOPE) or name.endswith(".__main__"):
            continue
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str) and _defined_in(module, attr):
                found[f"{name}.{attr}"] = value
    return found


def _defined_in(module: object, attr: str) -> bool:
    """Is `attr` compiled in this module's source (not imported from another module)?"""
    source = getattr(module, "__file__", "") or ""
    try:
        with open(source, encoding="utf-8") as f:
            return re.search(rf"^{re.escape(attr)}\s*(?::[^=]*)?=", f.read(), re.M) is not None
    except OSError:
        return False


def run(pattern: re.Pattern[str], use: str) -> Callable[[str], object]:
    if use == "sub":
        return lambda s: pattern.sub("", s)
    if use == "finditer":
        return lambda s: sum(1 for _ in pattern.finditer(s))
    return getattr(pattern, use)  # type: ignore[no-any-return]


def adversarial() -> list[str]:
    out = []
    for prefix in PREFIXES:
        for unit in UNITS:
            body = (unit * (N // len(unit) + 1))[: N - len(prefix) - 2]
            out.append(prefix + body + "\x00!")  # a last character no pattern accepts
    return out


def seconds(fn: Callable[[str], object], s: str, repeat: int = 1) -> float:
    # The thread's CPU time: other processes' load stretches the wall, not this.
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        fn(s)
        best = min(best, time.thread_time() - start)
    return best


def test_every_pattern_in_scope_is_declared() -> None:
    assert sorted(set(discovered()) - set(USES)) == []
    assert sorted(set(USES) - set(discovered())) == []  # and none is stale


@pytest.fixture(scope="module")
def strings() -> list[tuple[str, float]]:
    """The adversarial strings with the time of the linear scan of each (the best of 3)."""
    return [(s, seconds(_SCAN.match, s, 3)) for s in adversarial()]


CASES = [(name, None, use) for name, use in USES.items()] + [
    (name, pattern, use) for name, (pattern, use) in INLINE.items()]


@pytest.mark.parametrize(("name", "inline", "use"), CASES, ids=[c[0] for c in CASES])
def test_pattern_is_linear(name: str, inline: str | None, use: str, strings: list[tuple[str, float]]) -> None:
    pattern = re.compile(inline) if inline is not None else discovered()[name]
    fn = run(pattern, use)
    worst = (0.0, "")
    for s, scan in strings:
        ratio = seconds(fn, s) / scan
        if ratio > RATIO_LIMIT:  # measure again before blaming the pattern for a busy machine
            ratio = seconds(fn, s, 3) / seconds(_SCAN.match, s, 3)
        worst = max(worst, (ratio, s[:12]))
    assert worst[0] < RATIO_LIMIT, f"{name}.{use} costs {worst[0]:.0f}x a linear scan on {worst[1]!r}…"


@pytest.mark.parametrize(("text", "name"), [
    ("# c\r\n" * 26 + "title: x\r\n", "evalspec.ide.layout._LINES_BEFORE_CONTENT"),
    ("a" + " " * 60_000, "evalspec.ide.lines._KEY"),
    ("a" + " " * 60_000, "evalspec.ide.layout._ROOT_KEY"),
    ("${1:" * 25_000, "evalspec_lsp.features.completion._PLACEHOLDER"),
], ids=["crlf-comments", "key-trailing-spaces", "root-key-trailing-spaces", "unclosed-placeholders"])
def test_the_attack_run_reproducers(text: str, name: str) -> None:
    fn = run(discovered()[name], USES[name])
    assert seconds(fn, text) / seconds(_SCAN.match, text, 3) < RATIO_LIMIT
