"""A blueprint as Weval's parser and loader leave it (weval-org/app: blueprint-parser.ts, run-config.ts).

On the values js-yaml gives (js_values.js_plain): `reference_prompt(raw, header)` is the parser's
normalization of one prompt, step for step (its aliases, JavaScript truthiness, `$ref` expansion, its key
order) with the `hash-…` id it gives a prompt without one (`reference_hash_id`: json-stable-stringify,
sha256); `validate_prompt` the loader's checks; `reference_config` the header as a results file's `config`
holds it. What they throw on comes back as `ReferenceRejects` with Weval's message. The auto ids and what
evalspec writes as `config` come from here, so they are Weval's own.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..scoring.js_text import JS_WHITESPACE_CLASS
from .ids import UNDEFINED, hash_id, stable_json
from .js_values import (
    JS_WHITESPACE_CHARS,
    JsDate,
    ReferenceRejects,
    is_number,
    is_object,
    is_text,
    js_json,
    js_keys,
    js_nullish,
    js_or,
    js_string,
    js_typeof,
    member,
    truthy,
)

ALLOWED_RENDER_AS = ("markdown", "html", "plaintext")


# --- points -----------------------------------------------------------------------------------------

def normalize_fn(fn: Any) -> Any:
    if not is_text(fn):
        raise ReferenceRejects(f"fn.startsWith is not a function (fn is {js_string(fn)})")
    if fn.startswith("contain") and not fn.startswith("contains"):
        fn = "contains" + fn[len("contain"):]
    if fn.startswith("match") and not fn.startswith("matches"):
        fn = "matches" + fn[len("match"):]
    return fn


def _pid(prompt_id: Any) -> str:
    return js_string(prompt_id)


def normalize_points(points: Any, prompt_id: Any) -> list[Any]:
    """`_normalizePointArray`."""
    if not isinstance(points, list):
        return []
    out: list[Any] = []
    for exp in points:
        if type(exp) is str and exp[:1] != "$":  # the common point: plain text
            out.append({"text": exp, "multiplier": 1})
            continue
        got = _normalize_point(exp, prompt_id)
        if isinstance(got, list) and not got:
            continue
        out.append(got)
    return out


def _has_ref(points: list[Any]) -> bool:
    """Is there a `$ref` point (the only thing expandRefsInPoints changes; its copies change nothing else)?"""
    return any(p.get("fn") == "ref" if isinstance(p, dict) else isinstance(p, list) and _has_ref(p) for p in points)


def _normalize_point(exp: Any, prompt_id: Any) -> Any:
    if is_text(exp):
        if exp.startswith("$") and len(exp) > 1:
            return {"fn": exp[1:], "fnArgs": UNDEFINED, "multiplier": 1}
        return {"text": exp, "multiplier": 1}
    if isinstance(exp, list):
        if exp and isinstance(exp[0], list):
            raise ReferenceRejects(f"Nested arrays within nested arrays are not supported in prompt '{_pid(prompt_id)}'. "
                                   f"Found: {js_json(exp)}")
        kept = [i for i in exp if (len(i) > 0 if isinstance(i, list) else i is not None)]
        path: list[Any] = []
        for nested in kept:
            if isinstance(nested, list):
                raise ReferenceRejects(f"Nested arrays within alternative paths are not supported in prompt "
                                       f"'{_pid(prompt_id)}'. Found: {js_json(nested)}")
            if is_text(nested):
                path.append({"text": nested, "multiplier": 1})
            elif is_object(nested):
                path.append(_normalize_point(nested, prompt_id))
            else:
                raise ReferenceRejects(f"Invalid point format in alternative path in prompt '{_pid(prompt_id)}'. Point "
                                       f"must be a string or object. Found: {js_json(nested)}")
        return path
    if not is_object(exp):
        raise ReferenceRejects(f"Invalid point format in prompt '{_pid(prompt_id)}': Point must be a string, array, or "
                               f"object. Found: {js_json(exp)}")
    new: dict[str, Any] = {}
    obj = exp if isinstance(exp, dict) else {}
    keys = js_keys(obj)
    fn_key = None
    for k in keys:  # the first `$` key (a loop: a generator per point cost more than its test)
        if k.startswith("$"):
            fn_key = k
            break
    if fn_key is not None and len(fn_key) > 1:
        # the common function point (`$contains: text`), as the general steps below leave it: the function's
        # name rewritten at the front, the multiplier `weight ?? multiplier ?? 1`, checked
        multiplier = obj.get("weight")
        if multiplier is None:
            multiplier = obj.get("multiplier")
            if multiplier is None:
                multiplier = 1
        kind = type(multiplier)
        if (kind is int or kind is float) and 0.1 <= multiplier <= 10:
            return {"fn": normalize_fn(fn_key[1:]), "fnArgs": obj[fn_key], "multiplier": multiplier,
                    "citation": obj.get("citation", UNDEFINED)}
    if fn_key is not None:
        new["fn"] = fn_key[1:]
        new["fnArgs"] = obj[fn_key]
        new["multiplier"] = js_nullish(obj.get("weight", UNDEFINED), obj.get("multiplier", UNDEFINED))
        new["citation"] = obj.get("citation", UNDEFINED)
    elif truthy(obj.get("text", UNDEFINED)) or truthy(obj.get("point", UNDEFINED)) or truthy(obj.get("fn", UNDEFINED)):
        new["text"] = js_or(obj.get("text", UNDEFINED), obj.get("point", UNDEFINED))
        new["fn"] = obj.get("fn", UNDEFINED)
        new["fnArgs"] = js_or(obj.get("fnArgs", UNDEFINED), obj.get("arg", UNDEFINED))
        new["multiplier"] = js_nullish(obj.get("weight", UNDEFINED), obj.get("multiplier", UNDEFINED))
        new["citation"] = obj.get("citation", UNDEFINED)
    elif len(keys) == 1 and is_text(obj[keys[0]]):
        new["text"] = keys[0]
        new["citation"] = obj[keys[0]]
    fn, text = new.get("fn", UNDEFINED), new.get("text", UNDEFINED)
    if truthy(fn) and truthy(text):
        raise ReferenceRejects(f"Invalid point in prompt '{_pid(prompt_id)}': Point cannot have both 'text' and 'fn' "
                               f"defined. Found: {js_json(exp)}")
    if not truthy(fn) and not truthy(text):
        raise ReferenceRejects(f"Invalid point object in prompt '{_pid(prompt_id)}': Point must define 'text', a "
                               "function ('fn' or '$...'), or a 'Point: Citation' pair. Found: " + js_json(exp))
    if truthy(fn):
        new["fn"] = normalize_fn(fn)
    multiplier = js_nullish(new.get("multiplier", UNDEFINED), 1)
    new["multiplier"] = multiplier
    if not is_number(multiplier) or multiplier < 0.1 or multiplier > 10:
        raise ReferenceRejects(f"Point multiplier must be a number between 0.1 and 10. Found {js_string(multiplier)}. "
                               f"Prompt ID: '{_pid(js_or(prompt_id, 'unknown'))}'")
    return new


def expand_refs(points: Any, defs: dict[str, Any], prompt_id: Any) -> Any:
    """`expandRefsInPoints`: `$ref` to a string definition becomes a `$js` point; to an object, a copy of it."""
    if isinstance(points, list):
        return [expand_refs(p, defs, prompt_id) for p in points]
    if not isinstance(points, dict):
        return points
    pt = dict(points)
    if pt.get("fn") != "ref":
        return pt
    ref = pt.get("fnArgs", UNDEFINED)
    name: Any = None
    if is_text(ref):
        name = ref
    elif truthy(ref) and is_object(ref):
        name = js_or(member(ref, "name"), ref)
    where = _pid(js_or(prompt_id, "unknown"))
    if not truthy(name) or not is_text(name):
        raise ReferenceRejects(f"Invalid $ref usage in prompt '{where}'. Expected a string name.")
    if name not in defs:
        raise ReferenceRejects(f"Undefined definition '{name}' referenced in prompt '{where}'.")
    value = defs[name]
    if is_text(value):
        return {"fn": "js", "fnArgs": value, "multiplier": js_nullish(pt.get("multiplier", UNDEFINED), 1),
                "citation": pt.get("citation", UNDEFINED)}
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return {str(i): v for i, v in enumerate(value)}
    if isinstance(value, JsDate):
        return {}
    raise ReferenceRejects(f"Definition '{name}' is of unsupported type.")


# --- the evaluator's reading of the points ------------------------------------------------------------

def evaluator_points(points: Any, prompt_id: Any, inverted: bool) -> list[dict[str, Any]]:
    """llm-coverage-evaluator's normalizePoints on the parser's points: what is scored, in order. Each is
    {kind: "text"|"fn", text, fn, args, weight, citation, path_id}; what it throws on is ReferenceRejects."""
    out: list[dict[str, Any]] = []
    pid = js_string(prompt_id)
    if not isinstance(points, list):
        return out
    for index, pt in enumerate(points):
        if type(pt) is dict and len(pt) == 2 and type(pt.get("text")) is str and pt["text"] and \
                pt.get("multiplier") == 1:  # the parser's plain text point
            out.append({"kind": "text", "text": pt["text"], "fn": None, "args": None, "weight": 1,
                        "citation": None, "path_id": None})
        elif type(pt) is dict and type(pt.get("fn")) is str and pt["fn"] and pt.keys() <= _FN_POINT_KEYS \
                and _plain_multiplier(pt.get("multiplier", UNDEFINED)):
            # the parser's function point ({fn, fnArgs, multiplier, citation}): what _evaluated_object reads
            args, citation = pt.get("fnArgs"), pt.get("citation")
            multiplier = pt.get("multiplier", 1)
            out.append({"kind": "fn", "text": None, "fn": pt["fn"], "args": None if args is UNDEFINED else args,
                        "weight": multiplier,
                        "citation": None if citation is UNDEFINED else citation, "path_id": None})
        elif is_text(pt):
            out.append(_evaluated(pt, None, None, 1, None, None))
        elif isinstance(pt, list):
            for nested in pt:
                if is_text(nested):
                    out.append(_evaluated(nested, None, None, 1, None, f"path_{index}"))
                elif isinstance(nested, dict):
                    out.append(_evaluated_object(nested, pid, f"path_{index}"))
                else:
                    raise ReferenceRejects(f"Invalid nested point definition found in prompt '{pid}': {js_json(nested)}")
        elif isinstance(pt, dict):
            out.append(_evaluated_object(pt, pid, None))
        else:
            raise ReferenceRejects(f"Invalid point definition found in prompt '{pid}': {js_json(pt)}")
    for point in out:
        point["inverted"] = inverted
    return out


_FN_POINT_KEYS = frozenset(("fn", "fnArgs", "multiplier", "citation"))


def _plain_multiplier(multiplier: Any) -> bool:
    """A point's multiplier the evaluator takes as it is: none (undefined), or a number from 0.1 to 10."""
    kind = type(multiplier)
    return multiplier is UNDEFINED or ((kind is int or kind is float) and 0.1 <= multiplier <= 10)


def _evaluated(text: Any, fn: Any, args: Any, weight: Any, citation: Any, path_id: str | None) -> dict[str, Any]:
    return {"kind": "fn" if fn is not None else "text", "text": None if fn is not None else text, "fn": fn,
            "args": None if args is UNDEFINED else args, "weight": weight,
            "citation": None if citation is UNDEFINED else citation, "path_id": path_id}


def _evaluated_object(pt: dict[str, Any], pid: str, path_id: str | None) -> dict[str, Any]:
    standard = ("text", "fn", "fnArgs", "arg", "multiplier", "citation")
    text, fn, multiplier = pt.get("text", UNDEFINED), pt.get("fn", UNDEFINED), pt.get("multiplier", UNDEFINED)
    if multiplier is not UNDEFINED and (not is_number(multiplier) or multiplier < 0.1 or multiplier > 10):
        raise ReferenceRejects(f"Point multiplier must be a number between 0.1 and 10. Found {js_string(multiplier)}. "
                               f"Prompt ID: '{pid}'")
    dollar = None
    for k in js_keys(pt):
        if k not in standard and k.startswith("$"):
            dollar = k
            break
    if truthy(text) and (truthy(fn) or dollar is not None):
        raise ReferenceRejects(f"Point object cannot have both 'text' and a function ('fn' or idiomatic). Prompt ID: "
                               f"'{pid}'")
    weight = js_nullish(multiplier, 1)
    citation = pt.get("citation", UNDEFINED)
    if truthy(text):
        return _evaluated(text if is_text(text) else js_string(text), None, None, weight, citation, path_id)
    name = fn if truthy(fn) else (dollar[1:] if dollar is not None else UNDEFINED)
    if not truthy(name):
        raise ReferenceRejects("Point object must have 'text', 'fn', or an idiomatic function name (starting with $). "
                               f"Found: {js_json(pt)}")
    args = js_nullish(pt.get("fnArgs", UNDEFINED), pt.get("arg", UNDEFINED), pt[dollar] if dollar is not None else UNDEFINED)
    return _evaluated(None, js_string(name), args, weight, citation, path_id)


# --- prompts ----------------------------------------------------------------------------------------

def reference_header(header: Any) -> dict[str, Any]:
    """What the prompts' normalization reads from the header: defs, global render_as and noCache."""
    h = header if isinstance(header, dict) else {}
    defs = js_or(member(h, "point_defs"), member(h, "defs"))
    return {"defs": dict(defs) if isinstance(defs, dict) else {},
            "render_as": member(h, "render_as"), "noCache": member(h, "noCache")}


def reference_prompt(p: Any, header: dict[str, Any]) -> dict[str, Any]:
    """The prompt as `parseAndNormalizeBlueprint` leaves it, with its `hash-…` id when it has none."""
    if not isinstance(p, dict):
        # the reference reads fields of whatever the item is: a string or number has none
        p = {} if p is not None else None
        if p is None:
            raise ReferenceRejects("Cannot read properties of null (reading 'prompt')")
    out: dict[str, Any] = {}
    get = p.get  # member(p, …): p is a plain object here
    pid = get("id", UNDEFINED)
    source = js_or(get("prompt", UNDEFINED), get("promptText", UNDEFINED))
    messages = get("messages", UNDEFINED)
    if truthy(messages):
        if not isinstance(messages, list):
            raise ReferenceRejects("p.messages.map is not a function")
        out["messages"] = [_message(m, i, pid) for i, m in enumerate(messages)]
    elif truthy(source):
        out["messages"] = [{"role": "user", "content": source}]
    out["id"] = pid
    if p.keys() <= _PLAIN_PROMPT_KEYS:
        # none of the other fields is written: what _reference_fields leaves then (the members it would set
        # to undefined left out: JSON leaves them out, and so do the id's hash and every reader here)
        if header["noCache"] is not UNDEFINED:
            out["noCache"] = truthy(header["noCache"])
        out["render_as"] = js_or(header["render_as"], "markdown")
        should = get("should", UNDEFINED)
    else:
        should = _reference_fields(p, out, header)
    if truthy(should):
        read = normalize_points(should, pid)
        out["points"] = expand_refs(read, header["defs"], pid) if _has_ref(read) else read
    should_not = get("should_not", UNDEFINED)
    if truthy(should_not):
        read = normalize_points(should_not, pid)
        out["should_not"] = expand_refs(read, header["defs"], pid) if _has_ref(read) else read
    if not truthy(out["id"]):
        out["id"] = reference_hash_id(out)
    return out


def _reference_fields(p: dict[str, Any], out: dict[str, Any], header: dict[str, Any]) -> Any:
    """The parser's steps for a prompt's fields past its messages and id, into `out`; its rubric (the first
    truthy of should, points, expect, expects, expectations)."""
    get = p.get
    pid = out["id"]
    out["description"] = get("description", UNDEFINED)
    out["idealResponse"] = js_or(get("ideal", UNDEFINED), get("idealResponse", UNDEFINED))
    system = get("system", UNDEFINED)
    if system is not UNDEFINED:
        if isinstance(system, list):
            raise ReferenceRejects(f"Invalid 'system' field in prompt '{_pid(js_or(pid, 'unknown'))}': Per-prompt 'system' "
                                   "must be a string or null, not an array. Did you mean to use 'systems' (plural) "
                                   "at the global config level instead?")
        if system is not None and not is_text(system):
            raise ReferenceRejects(f"Invalid 'system' field in prompt '{_pid(js_or(pid, 'unknown'))}': Must be a string "
                                   f"or null. Found: {js_typeof(system)}")
        out["system"] = system
    no_cache = get("noCache", UNDEFINED)
    if no_cache is not UNDEFINED:
        out["noCache"] = truthy(no_cache)
    elif header["noCache"] is not UNDEFINED:
        out["noCache"] = truthy(header["noCache"])
    citation = js_or(get("citation", UNDEFINED), get("reference", UNDEFINED))
    if citation is not UNDEFINED:
        if is_text(citation):
            out["citation"] = citation
        elif truthy(citation) and is_object(citation):
            title = js_or(member(citation, "title"), member(citation, "name"))
            if not is_text(title) or not title.strip(JS_WHITESPACE_CHARS):
                raise ReferenceRejects(f"Invalid 'citation'/'reference' object in prompt '{_pid(pid)}': missing 'title' "
                                       "or 'name' string.")
            out["citation"] = citation
        else:
            raise ReferenceRejects(f"Invalid 'citation'/'reference' field in prompt '{_pid(pid)}': must be a string or "
                                   "an object with 'title'/'name'.")
    weight = js_nullish(get("weight", UNDEFINED), get("importance", UNDEFINED), get("multiplier", UNDEFINED))
    if weight is not UNDEFINED:
        if not is_number(weight) or weight < 0.1 or weight > 10:
            raise ReferenceRejects(f"Prompt weight must be a number between 0.1 and 10. Found {js_string(weight)}. "
                                   f"Prompt ID: '{_pid(js_or(pid, 'unknown'))}'")
        out["weight"] = weight
    render_as = get("render_as", UNDEFINED)
    if truthy(render_as):
        if not is_text(render_as) or render_as not in ALLOWED_RENDER_AS:
            raise ReferenceRejects(f"Invalid 'render_as' value on prompt '{_pid(js_or(pid, 'unknown'))}'. Must be one of: "
                                   f"{', '.join(ALLOWED_RENDER_AS)}.")
        out["render_as"] = render_as
    else:
        out["render_as"] = js_or(header["render_as"], "markdown")
    temperature = get("temperature", UNDEFINED)
    if temperature is not UNDEFINED:
        if not is_number(temperature):
            raise ReferenceRejects(f"Prompt temperature must be a number. Found {js_typeof(temperature)}. Prompt ID: "
                                   f"'{_pid(js_or(pid, 'unknown'))}'")
        out["temperature"] = temperature
    for name in ("requiredTools", "prohibitedTools"):
        tools = get(name, UNDEFINED)
        if tools is not UNDEFINED:
            if not isinstance(tools, list):
                raise ReferenceRejects(f"Prompt '{name}' must be an array. Prompt ID: '{_pid(js_or(pid, 'unknown'))}'")
            out[name] = tools
    max_calls = get("maxCalls", UNDEFINED)
    if max_calls is not UNDEFINED:
        if not is_number(max_calls) or max_calls < 0:
            raise ReferenceRejects(f"Prompt 'maxCalls' must be a non-negative number. Found {js_string(max_calls)}. "
                                   f"Prompt ID: '{_pid(js_or(pid, 'unknown'))}'")
        out["maxCalls"] = max_calls
    should = js_or(get("should", UNDEFINED), get("points", UNDEFINED), get("expect", UNDEFINED),
                   get("expects", UNDEFINED), get("expectations", UNDEFINED))
    return should


_PLAIN_PROMPT_KEYS = frozenset(("id", "prompt", "messages", "should", "should_not"))


def validate_prompt(prompt: dict[str, Any]) -> None:
    """run-config's validatePrompts on the normalized prompt (its load stage)."""
    pid = js_string(prompt["id"])
    messages = prompt.get("messages", UNDEFINED)
    if not isinstance(messages, list) or not messages:
        raise ReferenceRejects(f"Prompt ID '{pid}' must have either a valid 'promptText' or a non-empty 'messages' array.")

    def role(m: Any) -> Any:
        return member(m, "role") if isinstance(m, dict) else UNDEFINED

    if role(messages[0]) == "assistant":
        raise ReferenceRejects(f"Prompt ID '{pid}': First message role cannot be 'assistant'. Must be 'user' or 'system'.")
    if role(messages[-1]) != "user":
        raise ReferenceRejects(f"Prompt ID '{pid}': Last message role in the input sequence must be 'user'. "
                               f"Found '{js_string(role(messages[-1]))}'.")
    for i, m in enumerate(messages):
        r = role(m)
        if not truthy(r) or r not in ("user", "assistant", "system"):
            raise ReferenceRejects(f"Prompt ID '{pid}', message {i}: Invalid role '{js_string(r)}'. Must be 'user', "
                                   "'assistant', or 'system'.")
        content = member(m, "content")
        if r == "assistant" and content is None:
            continue
        if not truthy(content) or not is_text(content) or not content.strip(JS_WHITESPACE_CHARS):
            raise ReferenceRejects(f"Prompt ID '{pid}', message {i} (role '{r}'): Content cannot be empty.")
    last = None
    for i, m in enumerate(messages):
        r = role(m)
        if r in ("user", "assistant"):
            if last == r:
                raise ReferenceRejects(f"Prompt ID '{pid}', message {i}: Invalid sequence. Two '{r}' messages in a row.")
            last = r




def _message(msg: Any, index: int, pid: Any) -> Any:
    if isinstance(msg, dict) and not truthy(member(msg, "role")) and not truthy(member(msg, "content")):
        keys = js_keys(msg)
        if len(keys) != 1:
            raise ReferenceRejects("Each message in the shorthand format must have exactly one key (e.g., 'user', "
                                   f"'assistant', 'ai', 'system'). Invalid message at index {index} in prompt "
                                   f"'{_pid(pid)}'. Found: {js_json(msg)}")
        role = keys[0]
        if role not in ("user", "assistant", "system", "ai"):
            raise ReferenceRejects(f"Invalid role '{role}' in message at index {index} in prompt '{_pid(pid)}'.")
        return {"role": "assistant" if role == "ai" else role, "content": msg[role]}
    return msg


def reference_hash_id(prompt: dict[str, Any]) -> str:
    """`hash-` + sha256 of json-stable-stringify of the normalized prompt without its id."""
    body = {k: v for k, v in prompt.items() if k != "id"}
    return hash_id(stable_json(body))


def persisted(value: Any) -> Any:
    """The value as JSON.stringify writes it: undefined members dropped (undefined in a list is null),
    NaN and infinities null, dates as ISO text."""
    kind = type(value)
    if kind is str or kind is int or kind is bool:  # the common values first (the rest as below)
        return value
    if kind is dict:
        out = {}
        for k in value:  # Object.keys order: js_keys, when a key starts with a digit (a call less otherwise)
            if k[:1].isdigit():
                keys: Any = js_keys(value)
                break
        else:
            keys = value
        for k in keys:
            v = value[k]
            vkind = type(v)
            if vkind is str or vkind is int or vkind is bool or v is None:  # (each a call less)
                out[k] = v
            elif v is not UNDEFINED:
                out[k] = persisted(v)
        return out
    if kind is list:
        return [v if (vkind := type(v)) is str or vkind is int or vkind is bool or v is None else persisted(v)
                for v in value]
    if value is UNDEFINED:
        return None
    if isinstance(value, dict):
        return {k: persisted(value[k]) for k in js_keys(value) if value[k] is not UNDEFINED}
    if type(value) is str:
        return value
    if isinstance(value, list):
        return [persisted(v) for v in value]
    if isinstance(value, JsDate):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# --- header tags ----------------------------------------------------------------------------------

_TAG_SPACES = re.compile(f"[{JS_WHITESPACE_CLASS}_]+")
_TAG_DROP = re.compile(r"[^a-z0-9-]")


def normalize_tag(tag: str) -> str:
    """The reference's normalizeTag: `Mental Health` → `mental-health`; `_internal` tags kept as written."""
    if not tag:
        return ""
    text = tag.strip(JS_WHITESPACE_CHARS)
    if text.startswith("_"):
        return text
    return _TAG_DROP.sub("", _TAG_SPACES.sub("-", text.lower()))


def normalize_tags(tags: list[str]) -> list[str]:
    """`[...new Set(tags.map(normalizeTag).filter(Boolean))]`."""
    return list(dict.fromkeys(t for t in (normalize_tag(x) for x in tags) if t))


# --- the header -----------------------------------------------------------------------------------

_URL_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
_SPECIAL = ("http", "https", "ws", "wss", "ftp", "file")


def _js_url_ok(url: str) -> bool:
    """Roughly `new URL(url)` (WHATWG): a scheme, and for http(s), ws(s), ftp a host."""
    text = url.strip(JS_WHITESPACE_CHARS)
    m = _URL_SCHEME.match(text)
    if not m:
        return False
    scheme, rest = m.group(0)[:-1].lower(), text[m.end():]
    if scheme in _SPECIAL and scheme != "file":
        host = rest.lstrip("/\\").split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        return bool(host.rsplit("@", 1)[-1].split(":", 1)[0])
    return True


def _check_model(model: Any) -> None:
    """The parser's _validateModelDefinition."""
    if is_text(model):
        return
    if not isinstance(model, dict):
        raise ReferenceRejects("Invalid model definition: must be a string or an object.")
    mid = model.get("id")
    if not truthy(mid) or not is_text(mid):
        raise ReferenceRejects("Invalid custom model definition: 'id' is required and must be a string. Found: "
                               + js_json(model))
    for key in ("url", "modelName", "inherit"):
        if not truthy(model.get(key)) or not is_text(model.get(key)):
            raise ReferenceRejects(f"Invalid custom model definition for '{mid}': '{key}' is required and must be a "
                                   "string.")
    fmt = model.get("format")
    if truthy(fmt) and (not is_text(fmt) or fmt not in ("chat", "completions")):
        raise ReferenceRejects(f"Invalid custom model definition for '{mid}': 'format' must be either 'chat' or "
                               f"'completions'. Found: '{js_string(fmt)}'")
    headers = model.get("headers")
    if truthy(headers) and not isinstance(headers, dict):
        raise ReferenceRejects(f"Invalid custom model definition for '{mid}': 'headers', if provided, must be an object.")


def _check_services(services: Any) -> None:
    if not truthy(services) or not isinstance(services, dict):
        return
    for name, svc in services.items():
        svc = svc if isinstance(svc, dict) else {}
        url = svc.get("url")
        if not truthy(url):
            raise ReferenceRejects(f"External service '{name}' must have a 'url' field")
        if not isinstance(url, str) or isinstance(url, JsDate) or not _js_url_ok(url):
            raise ReferenceRejects(f"External service '{name}' has invalid URL: {js_string(url)}")
        method = svc.get("method")
        if truthy(method) and method not in ("GET", "POST", "PUT"):
            raise ReferenceRejects(f"External service '{name}' has invalid method: {js_string(method)}. Must be GET, "
                                   "POST, or PUT")
        timeout = svc.get("timeout_ms", UNDEFINED)
        if timeout is not UNDEFINED and (not is_number(timeout) or not timeout > 0):
            raise ReferenceRejects(f"External service '{name}' has invalid timeout_ms: {js_string(timeout)}. Must be a "
                                   "positive number")


def reference_config(h: Any, blueprint_id: str) -> dict[str, Any]:
    """The header as the reference persists it in a results file's `config` (without prompts and before
    its models are resolved): parseAndNormalizeBlueprint's header half, then loadAndValidateConfig's."""
    cfg: dict[str, Any] = dict(h) if isinstance(h, dict) else {}
    cfg.pop("prompts", None)
    if truthy(cfg.get("defs")):
        del cfg["defs"]
    cfg["id"] = js_or(cfg.get("id", UNDEFINED), cfg.get("configId", UNDEFINED))
    cfg["title"] = js_or(cfg.get("title", UNDEFINED), cfg.get("configTitle", UNDEFINED))
    cfg["system"] = js_or(cfg.get("system", UNDEFINED), cfg.get("systemPrompt", UNDEFINED))
    author = cfg.get("author", UNDEFINED)
    if author is not UNDEFINED and not is_text(author):
        if truthy(author) and isinstance(author, dict):
            name = author.get("name")
            if not isinstance(name, str) or isinstance(name, JsDate) or not name.strip(JS_WHITESPACE_CHARS):
                raise ReferenceRejects("Invalid 'author' object: missing 'name' string.")
        else:
            raise ReferenceRejects("Invalid 'author' field: must be a string or an object with 'name'.")
    refs = js_or(cfg.get("reference", UNDEFINED), cfg.get("citation", UNDEFINED), cfg.get("references", UNDEFINED),
               cfg.get("citations", UNDEFINED))
    if refs is not UNDEFINED:
        normalized = []
        for ref in refs if isinstance(refs, list) else [refs]:
            if is_text(ref):
                normalized.append({"title": ref})
            elif truthy(ref) and isinstance(ref, dict):
                title = js_or(ref.get("title", UNDEFINED), ref.get("name", UNDEFINED))
                if not is_text(title) or not title.strip(JS_WHITESPACE_CHARS):
                    raise ReferenceRejects("Invalid 'reference'/'citation' object: missing 'title' or 'name' string.")
                normalized.append({"title": title, "url": ref.get("url", UNDEFINED)})
            else:
                raise ReferenceRejects("Invalid 'reference'/'citation' field: must be a string, an object with "
                                       "'title'/'name', or an array of these.")
        cfg["references"] = normalized
        for key in ("citation", "citations", "reference"):
            cfg.pop(key, None)
    for key in ("configId", "configTitle", "systemPrompt"):
        cfg.pop(key, None)
    render_as = cfg.get("render_as")
    if truthy(render_as) and (not is_text(render_as) or render_as not in ALLOWED_RENDER_AS):
        raise ReferenceRejects("Invalid global 'render_as' value. Must be one of: markdown, html, plaintext.")
    models = cfg.get("models", UNDEFINED)
    if truthy(models):
        if not isinstance(models, list):
            raise ReferenceRejects("The 'models' field must be an array of strings or custom model objects.")
        for model in models:
            _check_model(model)
    tools = cfg.get("tools")
    if truthy(tools):
        if not isinstance(tools, list):
            raise ReferenceRejects("The 'tools' field must be an array of tool definitions.")
        for i, tool in enumerate(tools):
            if not isinstance(tool, dict) or not truthy(tool.get("name")) or not is_text(tool.get("name")):
                raise ReferenceRejects(f"Invalid tool definition at index {i}: each tool must have a 'name' string.")
    tool_use = cfg.get("toolUse")
    if truthy(tool_use):
        if not is_object(tool_use):
            raise ReferenceRejects("The 'toolUse' field must be an object.")
        tu = tool_use if isinstance(tool_use, dict) else {}
        if truthy(tu.get("mode")) and tu.get("mode") != "trace-only":
            raise ReferenceRejects("The 'toolUse.mode' field, if provided, must be 'trace-only'.")
        if truthy(tu.get("outputFormat")) and tu.get("outputFormat") != "json-line":
            raise ReferenceRejects("The 'toolUse.outputFormat' field, if provided, must be 'json-line'.")
        steps = tu.get("maxSteps", UNDEFINED)
        if steps is not UNDEFINED and (not is_number(steps) or steps < 1):
            raise ReferenceRejects("The 'toolUse.maxSteps' field, if provided, must be a positive number.")
    _check_services(cfg.get("externalServices"))
    # loadAndValidateConfig
    cfg["id"] = blueprint_id
    if not truthy(cfg["title"]):
        cfg["title"] = blueprint_id
    if not is_text(cfg["title"]) or not cfg["title"].strip(JS_WHITESPACE_CHARS):
        raise ReferenceRejects("Failed to determine a valid 'title' for the blueprint from file content or 'id'.")
    if not isinstance(cfg.get("models"), list) or not cfg["models"]:
        cfg["models"] = ["CORE"]
    # resolveModelCollections without a collections folder: `' openai : gpt-4o '` → `openai:gpt-4o`,
    # custom models (with an id) kept, anything else dropped
    cfg["models"] = [_corrected_model(m) if is_text(m) else m for m in cfg["models"]
                     if is_text(m) or (isinstance(m, dict) and truthy(m.get("id")))]
    if not truthy(cfg.get("embeddingModel")):
        cfg["embeddingModel"] = "openai:text-embedding-3-small"
    if truthy(cfg.get("description")) and not is_text(cfg["description"]):
        raise ReferenceRejects("configJson.description.substring is not a function")
    if cfg.get("temperature", UNDEFINED) is not UNDEFINED and not is_number(cfg["temperature"]):
        raise ReferenceRejects("Config file has invalid 'temperature'")
    temps = cfg.get("temperatures", UNDEFINED)
    if temps is not UNDEFINED and (not isinstance(temps, list) or not all(is_number(t) for t in temps)):
        raise ReferenceRejects("Config file has invalid 'temperatures'")
    tags = cfg.get("tags", UNDEFINED)
    if tags is not UNDEFINED:
        if not isinstance(tags, list) or not all(is_text(t) for t in tags):
            raise ReferenceRejects("Config file has an invalid 'tags' field (must be an array of strings if provided).")
        cfg["tags"] = normalize_tags(tags)
    if isinstance(cfg.get("system"), list):
        systems = cfg.get("systems")
        if not (truthy(systems) and isinstance(systems, list) and systems):
            cfg["systems"] = cfg["system"]
        cfg["system"] = UNDEFINED
    systems = cfg.get("systems", UNDEFINED)
    if systems is not UNDEFINED:
        if not isinstance(systems, list) or not all(is_text(x) or x is None for x in systems):
            raise ReferenceRejects("Config file has invalid 'systems' (must be an array of strings or nulls).")
        if sum(1 for x in systems if x is None) > 1:
            raise ReferenceRejects("Config file validation error: The 'systems' array can contain at most one "
                                   "'null' entry.")
    return cfg


def _corrected_model(entry: str) -> str:
    """`entry.trim().replace(/\\s*:\\s*/, ':')`: the first colon without the whitespace around it."""
    text = entry.strip(JS_WHITESPACE_CHARS)
    colon = text.find(":")
    if colon < 0:
        return text
    start, end = colon, colon + 1
    while start > 0 and text[start - 1] in JS_WHITESPACE_CHARS:
        start -= 1
    while end < len(text) and text[end] in JS_WHITESPACE_CHARS:
        end += 1
    return text[:start] + ":" + text[end:]


def header_problem(h: Any, blueprint_id: str = "untitled") -> str | None:
    """What the reference's parser or loader throws on in a header (the checker reports it where none of
    its own findings does)."""
    try:
        reference_config(h, blueprint_id)
    except ReferenceRejects as exc:
        return str(exc)
    return None
