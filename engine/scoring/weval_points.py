"""Weval point functions (`$contains`, `$matches`, `$js`, …): the deterministic half of a rubric.

Each scorer takes the response text, the point's argument and a PointContext, and returns a
PointScore. Semantics and error texts follow the reference implementation (weval-org/app,
src/point-functions), with the differences the compatibility notes call for:
- regexes are JavaScript regexes run in QuickJS (evalspec.scoring.js_regex), never Python's; a match
  past its deadline is an error (the point is not scored), never a score;
- a bad argument is an error (the aggregator excludes the point), not a score of 0;
- `$call` needs HTTP and `$factcheck` a service: they are reported, and the runner does `$call`
  with `call_request_body` / `call_result`;
- `$js` runs in QuickJS (evalspec.scoring.js_sandbox) with the reference's 100 ms limit.
Each scorer is named by its entry in the registry (evalspec.registry.weval_functions), which also maps
aliases such as `contain`, `match`, `imatch_all_of` to canonical names; `scorer_for` looks it up.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..registry.stages import on_change, resolve_scorer
from ..registry.weval_functions import POINT_FUNCTIONS
from ..weval.js_values import truthy
from . import js_sandbox
from .js_regex import JsRegexError, JsRegexNotEvaluated, js_regex_test
from .js_text import (
    NestedTooDeeply,
    is_js_number,
    js_json_parse,
    js_trim,
    js_words,
)
from .weval_partial import JsTypeError, matches_partial


@dataclass
class PointContext:
    """What a point function may see besides the response."""

    messages: list[dict] = field(default_factory=list)  # the conversation, generated turns included
    model_id: str = ""
    prompt_id: str = ""
    # Structured tool calls from the provider ({name, arguments}); when None, tool functions read
    # `TOOL_CALL {json}` lines from the response, as the reference does.
    tool_calls: list[dict] | None = None


@dataclass(frozen=True)
class PointScore:
    """A scored point (`score` in [0, 1]) or an excluded one (`score` None, `error` set)."""

    score: float | None
    explain: str | None = None
    error: str | None = None

    @property
    def excluded(self) -> bool:
        return self.score is None


Scorer = Callable[[str, Any, PointContext], PointScore]


def _ok(value: bool | float, explain: str | None = None) -> PointScore:
    if isinstance(value, bool):
        return PointScore(1.0 if value else 0.0, explain)
    if math.isnan(value):
        return PointScore(None, None, "Point function returned NaN.")
    return PointScore(min(1.0, max(0.0, float(value))), explain)


def _err(message: str) -> PointScore:
    return PointScore(None, None, message)


def _is_str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


# Capital letters Unicode 16-17 added, which Node 20's ICU (78) lowercases and Python 3.11's Unicode 14 does
# not know: Latin (U+A7CB …), Cyrillic U+1C89, Garay (U+10D50-65), Kirat Rai (U+16EA0-B8).
_NEWER_LOWER = {0x1C89: 0x1C8A, 0xA7CB: 0x0264, 0xA7CC: 0xA7CD, 0xA7CE: 0xA7CF, 0xA7D2: 0xA7D3, 0xA7D4: 0xA7D5,
                0xA7DA: 0xA7DB, 0xA7DC: 0x019B, **{cp: cp + 0x20 for cp in range(0x10D50, 0x10D66)},
                **{cp: cp + 0x1B for cp in range(0x16EA0, 0x16EB9)}}


def _lower(text: str) -> str:
    # JavaScript's toLowerCase and Python's lower() agree (full mappings, final sigma included), but for the
    # letters Python's Unicode does not know yet.
    return text.lower() if text.isascii() else text.lower().translate(_NEWER_LOWER)


# ---------------------------------------------------------------------------------------------
# Substring functions


def _has_lone_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _code_units(text: str) -> str:
    """The text as JavaScript's UTF-16 code units, one character each (a character past U+FFFF as its pair)."""
    if max(text, default="") <= "\uffff":
        return text
    out = []
    for ch in text:
        cp = ord(ch)
        if cp <= 0xFFFF:
            out.append(ch)
        else:
            cp -= 0x10000
            out.append(chr(0xD800 + (cp >> 10)) + chr(0xDC00 + (cp & 0x3FF)))
    return "".join(out)


def _texts(response: str, items: list[str], insensitive: bool) -> tuple[str, list[str]]:
    """The response and the strings to look for, as the reference compares them: lowercased for the
    `i…` functions, then, when one holds a lone surrogate, as UTF-16 code units (JavaScript finds
    "\ud83d" in "😀"; Python's code points do not)."""
    if insensitive:
        response, items = _lower(response), [_lower(s) for s in items]
    if _has_lone_surrogate(response) or any(_has_lone_surrogate(s) for s in items):
        response, items = _code_units(response), [_code_units(s) for s in items]
    return response, items


def _substring(name: str, test: Callable[[str, str], bool], insensitive: bool, what: str = "a string") -> Scorer:
    def scorer(response: str, arg: Any, ctx: PointContext) -> PointScore:
        if not isinstance(arg, str):
            return _err(f"Invalid arguments for '{name}'. Expected {what}.")
        text, (part,) = _texts(response, [arg], insensitive)
        return _ok(test(text, part))

    return scorer


def _any_of(name: str, insensitive: bool) -> Scorer:
    def scorer(response: str, arg: Any, ctx: PointContext) -> PointScore:
        if not _is_str_list(arg):
            return _err(f"Invalid arguments for '{name}'. Expected an array of strings.")
        text, items = _texts(response, arg, insensitive)
        return _ok(any(s in text for s in items))

    return scorer


def _all_of(name: str, insensitive: bool) -> Scorer:
    def scorer(response: str, arg: Any, ctx: PointContext) -> PointScore:
        if not _is_str_list(arg):
            return _err(f"Invalid arguments for '{name}'. Expected an array of strings.")
        if not arg:
            return _ok(1.0)  # vacuously true
        text, items = _texts(response, arg, insensitive)
        found = sum(1 for s in items if s in text)
        return _ok(found / len(arg))

    return scorer


def _n_of_arg(name: str, arg: Any, items: str) -> tuple[float, list[str]] | PointScore:
    if not (isinstance(arg, list) and len(arg) == 2 and is_js_number(arg[0]) and _is_str_list(arg[1])):
        return _err(f"Invalid arguments for '{name}'. Expected an array of the format [n, "
                    f"['{items}1', '{items}2', ...]].")
    if math.isnan(arg[0]):
        return _err(f"Invalid arguments for '{name}'. n must be a number, not NaN.")
    return float(arg[0]), arg[1]


def _at_least_n_of(name: str, insensitive: bool) -> Scorer:
    def scorer(response: str, arg: Any, ctx: PointContext) -> PointScore:
        parsed = _n_of_arg(name, arg, "substring")
        if isinstance(parsed, PointScore):
            return parsed
        n, items = parsed
        if n <= 0:
            return _ok(1.0)  # a requirement of 0 or fewer is always met
        if not items:
            return _ok(0.0)
        text, items = _texts(response, items, insensitive)
        found = sum(1 for s in items if s in text)
        return _ok(min(1.0, found / n))

    return scorer


# ---------------------------------------------------------------------------------------------
# Regex functions (JavaScript semantics)


def _regex_scorer(name: str, flags: str) -> Scorer:
    def scorer(response: str, arg: Any, ctx: PointContext) -> PointScore:
        if not isinstance(arg, str):
            return _err(f"Invalid arguments for '{name}'. Expected a regex string.")
        try:
            return _ok(js_regex_test(arg, response, flags))
        except JsRegexNotEvaluated as exc:
            return _err(f"'{name}': {exc.message}")
        except JsRegexError as exc:
            return _err(f"Invalid regex pattern for '{name}': {exc.message}")

    return scorer


def _count_matches(name: str, patterns: list[str], flags: str, response: str) -> int | PointScore:
    found = 0
    for pattern in patterns:
        try:
            found += js_regex_test(pattern, response, flags)
        except JsRegexNotEvaluated as exc:
            return _err(f"'{name}': {exc.message}")
        except JsRegexError as exc:
            return _err(f"Invalid regex pattern in '{name}': {exc.message}")
    return found


def _matches_all_of(name: str, flags: str) -> Scorer:
    def scorer(response: str, arg: Any, ctx: PointContext) -> PointScore:
        if not _is_str_list(arg):
            return _err(f"Invalid arguments for '{name}'. Expected an array of regex strings.")
        if not arg:
            return _ok(1.0)
        found = _count_matches(name, arg, flags, response)
        return found if isinstance(found, PointScore) else _ok(found / len(arg))

    return scorer


def _matches_at_least_n_of(name: str, flags: str) -> Scorer:
    def scorer(response: str, arg: Any, ctx: PointContext) -> PointScore:
        parsed = _n_of_arg(name, arg, "pattern")
        if isinstance(parsed, PointScore):
            return parsed
        n, patterns = parsed
        if n <= 0:
            return _ok(1.0)
        if not patterns:
            return _ok(0.0)
        found = _count_matches(name, patterns, flags, response)
        return found if isinstance(found, PointScore) else _ok(min(1.0, found / n))

    return scorer


# ---------------------------------------------------------------------------------------------
# Other deterministic functions


def word_count_between(response: str, arg: Any, ctx: PointContext) -> PointScore:
    if not (isinstance(arg, list) and len(arg) == 2 and all(is_js_number(x) and not math.isnan(x) for x in arg)
            and arg[0] >= 0 and arg[1] >= arg[0]):
        return _err("Invalid arguments for 'word_count_between'. Expected an array with two numbers [min, max] "
                    "where 0 <= min <= max.")
    low, high = arg
    count = len(js_words(response))
    if count < low:
        return _ok(1.0 if low == 0 else count / low)  # linear from 0 words up to min
    if count > high:
        return _ok(0.0 if high == 0 else high / count)
    return _ok(1.0)


def is_json(response: str, arg: Any, ctx: PointContext) -> PointScore:
    try:
        parsed = js_json_parse(response)
    except NestedTooDeeply:  # JavaScript parses any depth: scanned without recursion instead
        return _ok(_deep_json_container(response))
    except ValueError:
        return _ok(False)
    return _ok(isinstance(parsed, dict | list))  # a bare string or number is not "JSON" here


_JSON_SPACE = " \t\n\r"
# A JSON number (ASCII digits only: `\d` would take other scripts' digits)
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def _deep_json_container(text: str) -> bool:
    """Whether `JSON.parse(text)` gives an object or an array, for a text nested deeper than Python's json
    module recurses (JavaScript's parser has no such limit): one pass with a stack of open brackets."""
    from json.decoder import scanstring  # type: ignore[attr-defined]  # (public, C-accelerated; not in the stubs)

    n = len(text)

    def skip(i: int) -> int:
        while i < n and text[i] in _JSON_SPACE:
            i += 1
        return i

    i = skip(0)
    if i >= n or text[i] not in "[{":
        return False  # valid or not, it is no object or array
    closers: list[str] = []
    expect = "value"
    try:
        while True:
            i = skip(i)
            if expect == "after" and not closers:
                return i == n
            if i >= n:
                return False
            ch = text[i]
            if expect == "value":
                if ch in "[{":
                    closers.append("]" if ch == "[" else "}")
                    i = skip(i + 1)
                    if i < n and text[i] == closers[-1]:
                        closers.pop()
                        i += 1
                        expect = "after"
                    else:
                        expect = "value" if ch == "[" else "key"
                    continue
                if ch == '"':
                    i = scanstring(text, i + 1, True)[1]
                elif (number := _JSON_NUMBER.match(text, i)) is not None:
                    i = number.end()  # (a '.' or an exponent without digits stops it: then no ',' or closer follows)
                elif text.startswith(("true", "null"), i):
                    i += 4
                elif text.startswith("false", i):
                    i += 5
                else:
                    return False
                expect = "after"
            elif expect == "key":
                if ch != '"':
                    return False
                i = skip(scanstring(text, i + 1, True)[1])
                if i >= n or text[i] != ":":
                    return False
                i += 1
                expect = "value"
            elif ch == ",":
                i += 1
                expect = "key" if closers[-1] == "}" else "value"
            elif ch == closers[-1]:
                closers.pop()
                i += 1
            else:
                return False
    except ValueError:  # scanstring: an unterminated string, a bad escape, a control character
        return False


def _is_word_char(ch: str) -> bool:
    # [\p{L}\p{N}_], as the reference's lookarounds (with the u flag) define a word character.
    return ch == "_" or unicodedata.category(ch)[0] in "LN"


# `word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')`: the reference escapes these before building its regex
_JS_ESCAPES = str.maketrans({c: "\\" + c for c in ".*+?^${}()|[]\\"})


def _word_scorer(name: str, insensitive: bool) -> Scorer:
    def scorer(response: str, arg: Any, ctx: PointContext) -> PointScore:
        if not isinstance(arg, str):
            return _err(f"Invalid arguments for '{name}'. Expected a string.")
        if not arg:
            return _ok(True)  # the empty string is vacuously present
        if not (arg.isascii() and response.isascii()):
            # The reference's own regex, run by JavaScript: with 'iu' it folds case by Unicode's simple case
            # folding, where `ı` and `İ` fold only to themselves (Python's re.IGNORECASE matches them with I, i).
            source = f"(?<![\\p{{L}}\\p{{N}}_]){arg.translate(_JS_ESCAPES)}(?![\\p{{L}}\\p{{N}}_])"
            try:
                return _ok(js_regex_test(source, response, "iu" if insensitive else "u"))
            except JsRegexNotEvaluated as exc:
                return _err(f"'{name}': {exc.message}")
            except JsRegexError as exc:
                return _err(f"Error in '{name}': {exc.message}")
        # ASCII only: Python's re answers as JavaScript's. The reference's regex (with 'u', plus 'i' for
        # icontains_word) folds case per character; boundaries are judged on the original characters around
        # each (possibly overlapping) match.
        pattern = re.compile(re.escape(arg), re.IGNORECASE if insensitive else 0)
        match = pattern.search(response)
        while match is not None:
            start, end = match.span()
            if (start == 0 or not _is_word_char(response[start - 1])) and \
                    (end >= len(response) or not _is_word_char(response[end])):
                return _ok(True)
            match = pattern.search(response, start + 1)
        return _ok(False)

    return scorer


# ---------------------------------------------------------------------------------------------
# $js


def js(response: str, arg: Any, ctx: PointContext) -> PointScore:
    if not isinstance(arg, str):
        return _err("Argument for js must be a string expression.")
    bindings = {"r": response, "response": response,
                "context": {"messages": ctx.messages or [], "modelId": ctx.model_id}}
    try:
        value, _ = js_sandbox.evaluate_script_or_body(arg, bindings)
    except js_sandbox.JsSandboxError as exc:
        return _err(f"Expression evaluation failed{' on retry' if exc.on_retry else ''}: {exc.message}")
    except (TypeError, ValueError) as exc:  # bindings that are not JSON (a caller bug, not the script's)
        return _err(f"Expression evaluation failed: could not pass the context to JavaScript ({exc}).")
    return js_result(value)


def js_result(value: js_sandbox.JsValue) -> PointScore:
    """The reference's processResult: boolean, number (clamped), {score, explain}, or undefined."""
    if value.type in ("object", "array") and value.has_score and value.score is not None:
        score = value.score
        if score.type == "boolean":
            return _ok(bool(score.value), value.explain)
        if score.type == "number":
            return _ok(float(score.value), value.explain)  # type: ignore[arg-type]
        return _err(f"Invalid score type: {score.type}")
    if value.type == "boolean":
        return _ok(bool(value.value))
    if value.type == "number":
        return _ok(float(value.value))  # type: ignore[arg-type]
    if value.type == "undefined":
        return _ok(False)  # ran, returned nothing: a non-match
    shown = "object" if value.type in ("null", "array") else value.type
    return _err(f"Script returned an invalid type: {shown}. Must return a boolean or a number.")


# ---------------------------------------------------------------------------------------------
# $call and $factcheck: the runner does the HTTP; these are the pure halves.

CALL_CONFIG_KEYS = ("service", "url", "method", "headers", "timeout_ms", "cache", "max_retries", "retry_backoff_ms")


class CallRequest(NamedTuple):
    """Where to POST and what: `target` is the service name or the URL (see call_uses_service)."""

    target: str
    body: dict[str, Any]


class CallArgError(ValueError):
    pass


def _substitute(value: Any, data: Mapping[str, str]) -> Any:
    """Replace {response}, {modelId}, {promptId} in every string, recursively.

    One pass, literal replacement: the reference's chained String.replace calls would also rewrite a
    `{modelId}` that appears inside the response, and would expand `$&` in it.
    """
    if isinstance(value, str):
        return re.sub(r"\{(response|modelId|promptId)\}", lambda m: data[m.group(1)], value)
    if isinstance(value, list):
        return [_substitute(item, data) for item in value]
    if isinstance(value, dict):
        return {key: _substitute(item, data) for key, item in value.items()}
    return value


def call_request_body(arg: Any, response: str, ctx: PointContext) -> CallRequest:
    """The service (or URL) and JSON body of a `$call` point. Raises CallArgError on a bad argument."""
    if not isinstance(arg, dict):
        raise CallArgError("Argument for 'call' must be an object")
    service, url = arg.get("service"), arg.get("url")
    if not service and not url:
        raise CallArgError("Must provide either 'service' (named service) or 'url' (inline service)")
    target = service if service else url
    if not isinstance(target, str):
        raise CallArgError(f"'{'service' if service else 'url'}' must be a string")
    data = {"response": response, "modelId": ctx.model_id, "promptId": ctx.prompt_id}
    params = {k: v for k, v in arg.items() if k not in CALL_CONFIG_KEYS}
    body = {"response": response, "modelId": ctx.model_id, "promptId": ctx.prompt_id, **_substitute(params, data)}
    return CallRequest(target, body)


def call_uses_service(arg: Mapping[str, Any]) -> bool:
    """True when the `$call` names a service from `externalServices`, False for an inline url."""
    return bool(arg.get("service"))


def call_inline_config(arg: Mapping[str, Any]) -> dict[str, Any]:
    """For an inline-url `$call`: the request settings, with the reference's defaults."""
    return {"url": arg.get("url"), "method": arg.get("method") or "POST", "headers": arg.get("headers"),
            "timeout_ms": arg.get("timeout_ms") or 30000, "cache": arg.get("cache", True),
            "max_retries": 2 if arg.get("max_retries") is None else arg.get("max_retries"),
            "retry_backoff_ms": arg.get("retry_backoff_ms") or 1000}


def call_result(payload: Any) -> PointScore:
    """Score a service's JSON answer: `{score: 0..1, explain?}` or `{error}`."""
    if not isinstance(payload, dict):
        return _err("External service call failed: Invalid service response: Response must be an object")
    if payload.get("error"):
        return _err(f"External service error: {payload['error']}")
    score = payload.get("score")
    if not is_js_number(score):
        kind = "boolean" if isinstance(score, bool) else "undefined" if score is None else type(score).__name__
        return _err(f"External service call failed: Invalid service response: score must be a number, got {kind}")
    if math.isnan(score) or score < 0 or score > 1:
        return _err("External service call failed: Invalid service response: score must be between 0 and 1, "
                    f"got {score}")
    explain = payload.get("explain")
    return _ok(float(score), explain if isinstance(explain, str) else None)


def _call(response: str, arg: Any, ctx: PointContext) -> PointScore:
    try:
        call_request_body(arg, response, ctx)
    except CallArgError as exc:
        return _err(str(exc))
    return _err("$call is evaluated by the runner (it needs an HTTP request); use call_request_body/call_result.")


def _factcheck(response: str, arg: Any, ctx: PointContext) -> PointScore:
    return _err("factcheck service is not configured")


# ---------------------------------------------------------------------------------------------
# Tool-use functions over `TOOL_CALL {json}` lines


def extract_tool_calls(text: str) -> list[dict[str, Any]]:
    """Trace-only tool calls: each line `TOOL_CALL {"name": …, "arguments": {…}}`; bad lines are skipped."""
    calls: list[dict[str, Any]] = []
    for raw in re.split(r"\r?\n", text or ""):
        line = js_trim(raw)
        if not line.startswith("TOOL_CALL "):
            continue
        try:
            parsed = js_json_parse(js_trim(line[len("TOOL_CALL "):]))
        except ValueError:
            continue
        if isinstance(parsed, dict) and isinstance(parsed.get("name"), str):
            calls.append({"name": parsed["name"], "arguments": parsed.get("arguments")})
    return calls


def _calls(response: str, ctx: PointContext) -> list[dict[str, Any]]:
    if isinstance(ctx.tool_calls, list):
        return [c for c in ctx.tool_calls if isinstance(c, dict)]
    return extract_tool_calls(response)


def tool_called(response: str, arg: Any, ctx: PointContext) -> PointScore:
    if not isinstance(arg, str) or not arg:
        return _err("tool_called expects a string tool name")
    return _ok(any(c.get("name") == arg for c in _calls(response, ctx)))


def _where_expression(where: str, arguments: Any) -> bool:
    # `new Function('args', 'return (' + where + ');')`, run in the sandbox; any failure is "no match".
    try:
        value = js_sandbox.evaluate(f"(function (args) {{ return ({where}); }})(__args)", {"__args": arguments})
    except (js_sandbox.JsSandboxError, TypeError, ValueError):
        return False
    if value.type == "boolean":
        return bool(value.value)
    if value.type == "number":
        return bool(value.value) and not math.isnan(value.value)  # type: ignore[arg-type]
    if value.type == "string":
        return bool(value.value)
    return value.type in ("object", "array", "function", "symbol", "bigint")


def tool_args_match(response: str, arg: Any, ctx: PointContext) -> PointScore:
    spec = arg if isinstance(arg, dict) else {}
    name = spec.get("name")
    if not name or not isinstance(name, str):
        return _err("tool_args_match expects { name, where }")
    where = spec.get("where")
    normalize_ws = truthy(spec.get("normalizeWhitespace"))  # Boolean(): `[]` and `{}` are true, NaN false
    for call in _calls(response, ctx):
        if call.get("name") != name or call.get("arguments") is None:
            continue
        if isinstance(where, str):
            if _where_expression(where, call["arguments"]):
                return _ok(True)
        elif isinstance(where, dict | list):
            try:
                if matches_partial(call["arguments"], where, normalize_ws):
                    return _ok(True)
            except JsTypeError as exc:  # `key in "text"`: the reference's evaluator reports the throw
                return _err(f"Error executing point function 'tool_args_match': {exc}")
    return _ok(False)


def tool_call_count_between(response: str, arg: Any, ctx: PointContext) -> PointScore:
    """As the reference: `min <= count <= max`, counting the calls of `name` when it is a string (any other
    third item counts every call), no max meaning none. Ours: a bound that is not a number (or NaN, or no
    min at all) is not scored: the reference reads it as 0 or Infinity and scores a check not made."""
    if not isinstance(arg, list) or not arg:
        return _err("tool_call_count_between expects [min, max, name?]")
    low = arg[0]
    high = arg[1] if len(arg) > 1 else math.inf
    name = arg[2] if len(arg) > 2 and isinstance(arg[2], str) else None
    if not (is_js_number(low) and is_js_number(high)) or math.isnan(low) or math.isnan(high):
        return _err("tool_call_count_between expects [min, max, name?] with numbers min and max")
    count = sum(1 for c in _calls(response, ctx) if not name or c.get("name") == name)
    return _ok(low <= count <= high)


def tool_call_order(response: str, arg: Any, ctx: PointContext) -> PointScore:
    expected = [x for x in arg if isinstance(x, str)] if isinstance(arg, list) else []
    if not expected:
        return _err("tool_call_order expects an array of tool names")
    position = 0
    for call in _calls(response, ctx):  # a subsequence: other calls may come between
        if call.get("name") == expected[position]:
            position += 1
            if position == len(expected):
                return _ok(True)
    return _ok(False)


# ---------------------------------------------------------------------------------------------
# The table


def _negate(scorer: Scorer) -> Scorer:
    def negated(response: str, arg: Any, ctx: PointContext) -> PointScore:
        result = scorer(response, arg, ctx)
        if result.score is None:
            return result  # errors pass through
        return PointScore(1.0 - result.score, result.explain)  # boolean → not, number → 1 − x

    return negated


# The scorers the registry names (registry/weval_functions.py: `scorer="evalspec.scoring.weval_points:<name>"`);
# the functions defined above under their own names (`is_json`, `js`, …) are scorers too.
contains = _substring("contains", lambda r, a: a in r, False)
icontains = _substring("icontains", lambda r, a: a in r, True)
starts_with = _substring("starts_with", lambda r, a: r.startswith(a), False, "a string prefix")
ends_with = _substring("ends_with", lambda r, a: r.endswith(a), False, "a string suffix")
istarts_with = _substring("istarts_with", lambda r, a: r.startswith(a), True, "a string prefix")
iends_with = _substring("iends_with", lambda r, a: r.endswith(a), True, "a string suffix")
contains_any_of = _any_of("contains_any_of", False)
icontains_any_of = _any_of("icontains_any_of", True)
contains_all_of = _all_of("contains_all_of", False)
icontains_all_of = _all_of("icontains_all_of", True)
contains_at_least_n_of = _at_least_n_of("contains_at_least_n_of", False)
icontains_at_least_n_of = _at_least_n_of("icontains_at_least_n_of", True)
matches = _regex_scorer("matches", "")
imatches = _regex_scorer("imatches", "i")
matches_all_of = _matches_all_of("matches_all_of", "")
imatch_all_of = _matches_all_of("imatch_all_of", "i")
matches_at_least_n_of = _matches_at_least_n_of("matches_at_least_n_of", "")
imatch_at_least_n_of = _matches_at_least_n_of("imatch_at_least_n_of", "i")
contains_word = _word_scorer("contains_word", False)
icontains_word = _word_scorer("icontains_word", True)
call = _call
factcheck = _factcheck

_SCORERS: dict[str, Scorer] = {}  # canonical name -> its entry's scorer, resolved once (the hot path)
on_change(_SCORERS.clear)


def scorer_for(fn: str) -> Scorer | None:
    """The scorer of the canonical name `fn`: its registry entry's `scorer`, negated for a `not_` form."""
    got = _SCORERS.get(fn)
    if got is None:
        entry = POINT_FUNCTIONS.get(fn)
        if entry is None:
            return None
        base: Scorer = resolve_scorer(entry.scorer)
        got = _SCORERS[fn] = _negate(base) if entry.negates else base
    return got


def evaluate_point(fn: str, arg: object, response: str, ctx: PointContext) -> PointScore:
    """Score one function point. Never raises: problems come back as `error` with `score` None."""
    scorer = scorer_for(fn)
    if scorer is None:
        if fn == "isPrototypeOf":
            # The reference looks names up on a plain object: Object.prototype.isPrototypeOf is found, and
            # called with the answer (not an object) it returns false. (The checker reports the name.)
            return _ok(False)
        return _err(f"Unknown point function: '{fn}'")
    try:
        return scorer(response if isinstance(response, str) else "", arg, ctx)
    except Exception as exc:  # a scorer bug must not sink the whole run; report it on the point
        return _err(f"Error executing point function '{fn}': {exc}")
