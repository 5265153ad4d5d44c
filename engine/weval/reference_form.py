"""A blueprint's prompts as the reference's parser leaves them (weval-org/app, blueprint-parser.ts), on plain data.

`js_plain(node)` is the value js-yaml gives a located node (merge keys `<<` expanded, YAML timestamps as
dates); `reference_prompt(raw, header)` is the reference's normalization of one prompt, step for step
(its aliases, JavaScript truthiness, `$ref` expansion, the order of its keys), and `reference_hash_id`
the `hash-…` id it gives a prompt without one (json-stable-stringify of that object, sha256). Problems
the reference throws on come back as `ReferenceRejects` with its message. What evalspec writes as a
results file's `config.prompts` and the auto ids both come from here, so they are Weval's own.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..scoring.js_text import JS_WHITESPACE_CLASS
from ..source import Mapping, Node, Scalar, Sequence
from .ids import UNDEFINED, hash_id, js_number, stable_json

ALLOWED_RENDER_AS = ("markdown", "html", "plaintext")


class ReferenceRejects(ValueError):
    """The reference's parser throws on this prompt (the message is its own)."""


class JsDate(str):
    """A YAML timestamp as js-yaml reads it: a Date, written as its ISO text (toJSON)."""


# --- js-yaml's values ----------------------------------------------------------------------------

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_TIMESTAMP = re.compile(r"([0-9]{4})-([0-9][0-9]?)-([0-9][0-9]?)(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9]{2}):([0-9]{2})"
                        r"(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9]{2}))?))?\Z")


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def _utc_ms(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0, ms: int = 0) -> int:
    """Date.UTC, months and days rolling over as JavaScript's do."""
    y += (mo - 1) // 12
    mo = (mo - 1) % 12 + 1
    days = _days_from_civil(y, mo, 1) + d - 1
    return ((days * 24 + h) * 60 + mi) * 60000 + s * 1000 + ms


def _iso(ms: int) -> str:
    days, rest = divmod(ms, 86400000)
    y, m, d = _civil_from_days(days)
    h, rest = divmod(rest, 3600000)
    mi, rest = divmod(rest, 60000)
    s, milli = divmod(rest, 1000)
    year = f"{y:04d}" if 0 <= y <= 9999 else f"{'+' if y > 0 else '-'}{abs(y):06d}"
    return f"{year}-{m:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.{milli:03d}Z"


def js_timestamp(text: str) -> JsDate | None:
    """js-yaml's timestamp type (a plain scalar that looks like a date or a date and time)."""
    m = _DATE.match(text)
    if m:
        return JsDate(_iso(_utc_ms(int(m[1]), int(m[2]), int(m[3]))))
    m = _TIMESTAMP.match(text)
    if not m:
        return None
    frac = (m[7] or "")[:3].ljust(3, "0") if m[7] is not None else "000"
    ms = _utc_ms(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]), int(frac))
    if m[9]:
        delta = (int(m[10]) * 60 + int(m[11] or 0)) * 60000
        ms -= -delta if m[9] == "-" else delta
    return JsDate(_iso(ms))


_UNDERSCORED_INT = re.compile(r"[-+]?[0-9][0-9_]*\Z")
_UNDERSCORED_FLOAT = re.compile(r"[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?\Z")
_CORE = "tag:yaml.org,2002:"


def _scalar(node: Scalar) -> Any:
    """js-yaml's value of a scalar where it differs from the YAML 1.2 core schema's (source.py's)."""
    value, tag = node.value, node.tag
    if tag is not None and tag.startswith(_CORE):
        short = tag[len(_CORE):]
        if short == "binary" and isinstance(node.raw, str):
            import base64
            import binascii

            try:
                data = base64.b64decode("".join(node.raw.split()), validate=False)
            except (binascii.Error, ValueError):
                raise ReferenceRejects(f"cannot resolve a node with !<{tag}> explicit tag") from None
            return {str(i): b for i, b in enumerate(data)}  # a Uint8Array, as JSON writes it
        if short == "timestamp":
            date = js_timestamp(node.raw)
            if date is None:
                raise ReferenceRejects(f"cannot resolve a node with !<{tag}> explicit tag")
            return date
        if short == "null" and node.raw not in ("~", "null", "Null", "NULL") and not (node.raw == "" and node.style is None):
            raise ReferenceRejects(f"Failed to parse YAML blueprint: cannot resolve a node with !<{tag}> explicit tag")
        if short in ("bool", "null", "int", "float") and isinstance(value, str):
            raise ReferenceRejects(f"Failed to parse YAML blueprint: cannot resolve a node with !<{tag}> explicit tag")
        return value
    if node.style is None and tag is None and isinstance(value, str) and value[:1] in "0123456789+-":
        date = js_timestamp(value)
        if date is not None:
            return date
        if "_" in value:
            if _UNDERSCORED_INT.match(value):
                return int(value.replace("_", ""))
            if _UNDERSCORED_FLOAT.match(value):
                return float(value.replace("_", ""))
    return value


def js_plain(node: Node | None) -> Any:
    """The value js-yaml gives the node: merge keys expanded, timestamps as dates, `1_000` a number,
    `!!binary` bytes (aliases share values). A tag js-yaml cannot resolve raises ReferenceRejects."""
    if node is None:
        return None
    if isinstance(node, Scalar):
        return _scalar(node)
    if isinstance(node, Sequence):
        return [js_plain(i) for i in node.items]
    if isinstance(node, Mapping):
        out: dict[str, Any] = {}
        overridable: set[str] = set()
        for k, v in node.pairs:
            if isinstance(k, Scalar) and k.value == "<<" and k.style is None:
                sources = v.items if isinstance(v, Sequence) else [v]
                for src in sources:
                    merged = js_plain(src)
                    if isinstance(merged, dict):
                        for mk, mv in merged.items():
                            if mk not in out:
                                out[mk] = mv
                                overridable.add(mk)
                continue
            key = js_plain(k) if not isinstance(k, Scalar) else k.value
            text = key if isinstance(key, str) else _key_text(key)
            out[text] = js_plain(v)
        return out
    return None


def _key_text(key: Any) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, (int, float)):
        return js_number(key)
    return str(key)


def has_merge_key(node: Node | None) -> bool:
    return isinstance(node, Mapping) and any(isinstance(k, Scalar) and k.value == "<<" and k.style is None
                                             for k, _ in node.pairs)


def merged_mapping(node: Mapping) -> Mapping:
    """The mapping with its `<<` merge keys expanded into pairs, as js-yaml reads it (own keys win)."""
    own: list[tuple[Node, Node]] = []
    merged: list[tuple[Node, Node]] = []
    for k, v in node.pairs:
        if isinstance(k, Scalar) and k.value == "<<" and k.style is None:
            for src in (v.items if isinstance(v, Sequence) else [v]):
                if isinstance(src, Mapping):
                    merged.extend(merged_mapping(src).pairs)
        else:
            own.append((k, v))
    names = {k.value for k, _ in own if isinstance(k, Scalar)}
    pairs = list(own)
    seen: set[Any] = set()
    for k, v in merged:
        key = k.value if isinstance(k, Scalar) else None
        if key in names or key in seen:
            continue
        seen.add(key)
        pairs.append((k, v))
    return Mapping(node.span, pairs, node.flow, node.tag, node.anchor)


# --- JavaScript semantics -------------------------------------------------------------------------

def truthy(v: Any) -> bool:
    if v is None or v is UNDEFINED or v is False:
        return False
    if isinstance(v, JsDate):
        return True
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v != 0 and not (isinstance(v, float) and math.isnan(v))
    if isinstance(v, str):
        return v != ""
    return True


def _or(*values: Any) -> Any:
    """`a || b || c`."""
    for v in values[:-1]:
        if truthy(v):
            return v
    return values[-1]


def _nullish(*values: Any) -> Any:
    """`a ?? b ?? c`."""
    for v in values[:-1]:
        if v is not None and v is not UNDEFINED:
            return v
    return values[-1]


def _get(obj: Any, key: str) -> Any:
    return obj.get(key, UNDEFINED) if isinstance(obj, dict) else UNDEFINED


def _is_str(v: Any) -> bool:
    return isinstance(v, str) and not isinstance(v, JsDate)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_object(v: Any) -> bool:
    """typeof v === 'object' && v !== null (arrays and dates too)."""
    return isinstance(v, (dict, list, JsDate))


def js_keys(obj: dict[str, Any]) -> list[str]:
    """Object.keys order: integer-like keys ascending first, then the others as inserted."""
    if not any(k[:1].isdigit() for k in obj):
        return list(obj)
    ints = sorted((k for k in obj if _array_index(k)), key=int)
    return ints + [k for k in obj if not _array_index(k)]


def _array_index(k: str) -> bool:
    return k.isascii() and k.isdigit() and (k == "0" or not k.startswith("0")) and int(k) < 2**32 - 1


def js_json(v: Any) -> str:
    """JSON.stringify of a value, for the reference's messages."""
    if v is UNDEFINED:
        return "undefined"
    if isinstance(v, dict):
        return "{" + ",".join(_json_quote(k) + ":" + js_json(v[k]) for k in js_keys(v) if v[k] is not UNDEFINED) + "}"
    if isinstance(v, list):
        return "[" + ",".join("null" if x is UNDEFINED else js_json(x) for x in v) + "]"
    return stable_json(v)


def _json_quote(s: str) -> str:
    return stable_json(s)


def _type_name(v: Any) -> str:
    if v is UNDEFINED:
        return "undefined"
    if isinstance(v, bool):
        return "boolean"
    if _is_number(v):
        return "number"
    if _is_str(v):
        return "string"
    return "object"


def _str_of(v: Any) -> str:
    """String(v) / template interpolation."""
    if v is UNDEFINED:
        return "undefined"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if _is_number(v):
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        if isinstance(v, float) and math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return js_number(v)
    if isinstance(v, list):
        return ",".join("" if x is None or x is UNDEFINED else _str_of(x) for x in v)
    if isinstance(v, dict):
        return "[object Object]"
    return str(v)


def js_prompt_id(value: Any) -> str:
    """The id as the reference's results key it (String(id))."""
    return _str_of(value)


# --- points -----------------------------------------------------------------------------------------

def _normalize_fn(fn: Any) -> Any:
    if not _is_str(fn):
        raise ReferenceRejects(f"fn.startsWith is not a function (fn is {_str_of(fn)})")
    if fn.startswith("contain") and not fn.startswith("contains"):
        fn = "contains" + fn[len("contain"):]
    if fn.startswith("match") and not fn.startswith("matches"):
        fn = "matches" + fn[len("match"):]
    return fn


def _pid(prompt_id: Any) -> str:
    return _str_of(prompt_id)


def normalize_points(points: Any, prompt_id: Any) -> list[Any]:
    """`_normalizePointArray`."""
    if not isinstance(points, list):
        return []
    out: list[Any] = []
    for exp in points:
        got = _normalize_point(exp, prompt_id)
        if isinstance(got, list) and not got:
            continue
        out.append(got)
    return out


def _normalize_point(exp: Any, prompt_id: Any) -> Any:
    if _is_str(exp):
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
            if _is_str(nested):
                path.append({"text": nested, "multiplier": 1})
            elif _is_object(nested):
                path.append(_normalize_point(nested, prompt_id))
            else:
                raise ReferenceRejects(f"Invalid point format in alternative path in prompt '{_pid(prompt_id)}'. Point "
                                       f"must be a string or object. Found: {js_json(nested)}")
        return path
    if not _is_object(exp):
        raise ReferenceRejects(f"Invalid point format in prompt '{_pid(prompt_id)}': Point must be a string, array, or "
                               f"object. Found: {js_json(exp)}")
    new: dict[str, Any] = {}
    obj = exp if isinstance(exp, dict) else {}
    keys = js_keys(obj)
    fn_key = next((k for k in keys if k.startswith("$")), None)
    if fn_key is not None:
        new["fn"] = fn_key[1:]
        new["fnArgs"] = obj[fn_key]
        new["multiplier"] = _nullish(_get(obj, "weight"), _get(obj, "multiplier"))
        new["citation"] = _get(obj, "citation")
    elif truthy(_get(obj, "text")) or truthy(_get(obj, "point")) or truthy(_get(obj, "fn")):
        new["text"] = _or(_get(obj, "text"), _get(obj, "point"))
        new["fn"] = _get(obj, "fn")
        new["fnArgs"] = _or(_get(obj, "fnArgs"), _get(obj, "arg"))
        new["multiplier"] = _nullish(_get(obj, "weight"), _get(obj, "multiplier"))
        new["citation"] = _get(obj, "citation")
    elif len(keys) == 1 and _is_str(obj[keys[0]]):
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
        new["fn"] = _normalize_fn(fn)
    multiplier = _nullish(new.get("multiplier", UNDEFINED), 1)
    new["multiplier"] = multiplier
    if not _is_number(multiplier) or multiplier < 0.1 or multiplier > 10:
        raise ReferenceRejects(f"Point multiplier must be a number between 0.1 and 10. Found {_str_of(multiplier)}. "
                               f"Prompt ID: '{_pid(_or(prompt_id, 'unknown'))}'")
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
    if _is_str(ref):
        name = ref
    elif truthy(ref) and _is_object(ref):
        name = _or(_get(ref, "name"), ref)
    where = _pid(_or(prompt_id, "unknown"))
    if not truthy(name) or not _is_str(name):
        raise ReferenceRejects(f"Invalid $ref usage in prompt '{where}'. Expected a string name.")
    if name not in defs:
        raise ReferenceRejects(f"Undefined definition '{name}' referenced in prompt '{where}'.")
    value = defs[name]
    if _is_str(value):
        return {"fn": "js", "fnArgs": value, "multiplier": _nullish(pt.get("multiplier", UNDEFINED), 1),
                "citation": pt.get("citation", UNDEFINED)}
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return {str(i): v for i, v in enumerate(value)}
    if isinstance(value, JsDate):
        return {}
    raise ReferenceRejects(f"Definition '{name}' is of unsupported type.")


# --- prompts ----------------------------------------------------------------------------------------

def reference_header(header: Any) -> dict[str, Any]:
    """What the prompts' normalization reads from the header: defs, global render_as and noCache."""
    h = header if isinstance(header, dict) else {}
    defs = _or(_get(h, "point_defs"), _get(h, "defs"))
    return {"defs": dict(defs) if isinstance(defs, dict) else {},
            "render_as": _get(h, "render_as"), "noCache": _get(h, "noCache")}


def reference_prompt(p: Any, header: dict[str, Any]) -> dict[str, Any]:
    """The prompt as `parseAndNormalizeBlueprint` leaves it, with its `hash-…` id when it has none."""
    if not isinstance(p, dict):
        # the reference reads fields of whatever the item is: a string or number has none
        p = {} if p is not None else None
        if p is None:
            raise ReferenceRejects("Cannot read properties of null (reading 'prompt')")
    out: dict[str, Any] = {}
    pid = _get(p, "id")
    source = _or(_get(p, "prompt"), _get(p, "promptText"))
    messages = _get(p, "messages")
    if truthy(messages):
        if not isinstance(messages, list):
            raise ReferenceRejects("p.messages.map is not a function")
        out["messages"] = [_message(m, i, pid) for i, m in enumerate(messages)]
    elif truthy(source):
        out["messages"] = [{"role": "user", "content": source}]
    out["id"] = pid
    out["description"] = _get(p, "description")
    out["idealResponse"] = _or(_get(p, "ideal"), _get(p, "idealResponse"))
    system = _get(p, "system")
    if system is not UNDEFINED:
        if isinstance(system, list):
            raise ReferenceRejects(f"Invalid 'system' field in prompt '{_pid(_or(pid, 'unknown'))}': Per-prompt 'system' "
                                   "must be a string or null, not an array. Did you mean to use 'systems' (plural) "
                                   "at the global config level instead?")
        if system is not None and not _is_str(system):
            raise ReferenceRejects(f"Invalid 'system' field in prompt '{_pid(_or(pid, 'unknown'))}': Must be a string "
                                   f"or null. Found: {_type_name(system)}")
        out["system"] = system
    no_cache = _get(p, "noCache")
    if no_cache is not UNDEFINED:
        out["noCache"] = truthy(no_cache)
    elif header["noCache"] is not UNDEFINED:
        out["noCache"] = truthy(header["noCache"])
    citation = _or(_get(p, "citation"), _get(p, "reference"))
    if citation is not UNDEFINED:
        if _is_str(citation):
            out["citation"] = citation
        elif truthy(citation) and _is_object(citation):
            title = _or(_get(citation, "title"), _get(citation, "name"))
            if not _is_str(title) or not title.strip(JS_WHITESPACE_CHARS):
                raise ReferenceRejects(f"Invalid 'citation'/'reference' object in prompt '{_pid(pid)}': missing 'title' "
                                       "or 'name' string.")
            out["citation"] = citation
        else:
            raise ReferenceRejects(f"Invalid 'citation'/'reference' field in prompt '{_pid(pid)}': must be a string or "
                                   "an object with 'title'/'name'.")
    weight = _nullish(_get(p, "weight"), _get(p, "importance"), _get(p, "multiplier"))
    if weight is not UNDEFINED:
        if not _is_number(weight) or weight < 0.1 or weight > 10:
            raise ReferenceRejects(f"Prompt weight must be a number between 0.1 and 10. Found {_str_of(weight)}. "
                                   f"Prompt ID: '{_pid(_or(pid, 'unknown'))}'")
        out["weight"] = weight
    render_as = _get(p, "render_as")
    if truthy(render_as):
        if not _is_str(render_as) or render_as not in ALLOWED_RENDER_AS:
            raise ReferenceRejects(f"Invalid 'render_as' value on prompt '{_pid(_or(pid, 'unknown'))}'. Must be one of: "
                                   f"{', '.join(ALLOWED_RENDER_AS)}.")
        out["render_as"] = render_as
    else:
        out["render_as"] = _or(header["render_as"], "markdown")
    temperature = _get(p, "temperature")
    if temperature is not UNDEFINED:
        if not _is_number(temperature):
            raise ReferenceRejects(f"Prompt temperature must be a number. Found {_type_name(temperature)}. Prompt ID: "
                                   f"'{_pid(_or(pid, 'unknown'))}'")
        out["temperature"] = temperature
    for name in ("requiredTools", "prohibitedTools"):
        tools = _get(p, name)
        if tools is not UNDEFINED:
            if not isinstance(tools, list):
                raise ReferenceRejects(f"Prompt '{name}' must be an array. Prompt ID: '{_pid(_or(pid, 'unknown'))}'")
            out[name] = tools
    max_calls = _get(p, "maxCalls")
    if max_calls is not UNDEFINED:
        if not _is_number(max_calls) or max_calls < 0:
            raise ReferenceRejects(f"Prompt 'maxCalls' must be a non-negative number. Found {_str_of(max_calls)}. "
                                   f"Prompt ID: '{_pid(_or(pid, 'unknown'))}'")
        out["maxCalls"] = max_calls
    should = _or(_get(p, "should"), _get(p, "points"), _get(p, "expect"), _get(p, "expects"), _get(p, "expectations"))
    if truthy(should):
        out["points"] = expand_refs(normalize_points(should, pid), header["defs"], pid)
    should_not = _get(p, "should_not")
    if truthy(should_not):
        out["should_not"] = expand_refs(normalize_points(should_not, pid), header["defs"], pid)
    if not truthy(out["id"]):
        out["id"] = reference_hash_id(out)
    return out


def validate_prompt(prompt: dict[str, Any]) -> None:
    """run-config's validatePrompts on the normalized prompt (its load stage)."""
    pid = _str_of(prompt["id"])
    messages = prompt.get("messages", UNDEFINED)
    if not isinstance(messages, list) or not messages:
        raise ReferenceRejects(f"Prompt ID '{pid}' must have either a valid 'promptText' or a non-empty 'messages' array.")

    def role(m: Any) -> Any:
        return _get(m, "role") if isinstance(m, dict) else UNDEFINED

    if role(messages[0]) == "assistant":
        raise ReferenceRejects(f"Prompt ID '{pid}': First message role cannot be 'assistant'. Must be 'user' or 'system'.")
    if role(messages[-1]) != "user":
        raise ReferenceRejects(f"Prompt ID '{pid}': Last message role in the input sequence must be 'user'. "
                               f"Found '{_str_of(role(messages[-1]))}'.")
    for i, m in enumerate(messages):
        r = role(m)
        if not truthy(r) or r not in ("user", "assistant", "system"):
            raise ReferenceRejects(f"Prompt ID '{pid}', message {i}: Invalid role '{_str_of(r)}'. Must be 'user', "
                                   "'assistant', or 'system'.")
        content = _get(m, "content")
        if r == "assistant" and content is None:
            continue
        if not truthy(content) or not _is_str(content) or not content.strip(JS_WHITESPACE_CHARS):
            raise ReferenceRejects(f"Prompt ID '{pid}', message {i} (role '{r}'): Content cannot be empty.")
    last = None
    for i, m in enumerate(messages):
        r = role(m)
        if r in ("user", "assistant"):
            if last == r:
                raise ReferenceRejects(f"Prompt ID '{pid}', message {i}: Invalid sequence. Two '{r}' messages in a row.")
            last = r


JS_WHITESPACE_CHARS = "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
                      "\u2028\u2029\u202f\u205f\u3000\ufeff"


def _message(msg: Any, index: int, pid: Any) -> Any:
    if isinstance(msg, dict) and not truthy(_get(msg, "role")) and not truthy(_get(msg, "content")):
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
    if _is_str(model):
        return
    if not isinstance(model, dict):
        raise ReferenceRejects("Invalid model definition: must be a string or an object.")
    mid = model.get("id")
    if not truthy(mid) or not _is_str(mid):
        raise ReferenceRejects("Invalid custom model definition: 'id' is required and must be a string. Found: "
                               + js_json(model))
    for key in ("url", "modelName", "inherit"):
        if not truthy(model.get(key)) or not _is_str(model.get(key)):
            raise ReferenceRejects(f"Invalid custom model definition for '{mid}': '{key}' is required and must be a "
                                   "string.")
    fmt = model.get("format")
    if truthy(fmt) and (not _is_str(fmt) or fmt not in ("chat", "completions")):
        raise ReferenceRejects(f"Invalid custom model definition for '{mid}': 'format' must be either 'chat' or "
                               f"'completions'. Found: '{_str_of(fmt)}'")
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
            raise ReferenceRejects(f"External service '{name}' has invalid URL: {_str_of(url)}")
        method = svc.get("method")
        if truthy(method) and method not in ("GET", "POST", "PUT"):
            raise ReferenceRejects(f"External service '{name}' has invalid method: {_str_of(method)}. Must be GET, "
                                   "POST, or PUT")
        timeout = svc.get("timeout_ms", UNDEFINED)
        if timeout is not UNDEFINED and (not _is_number(timeout) or not timeout > 0):
            raise ReferenceRejects(f"External service '{name}' has invalid timeout_ms: {_str_of(timeout)}. Must be a "
                                   "positive number")


def reference_config(h: Any, blueprint_id: str) -> dict[str, Any]:
    """The header as the reference persists it in a results file's `config` (without prompts and before
    its models are resolved): parseAndNormalizeBlueprint's header half, then loadAndValidateConfig's."""
    cfg: dict[str, Any] = dict(h) if isinstance(h, dict) else {}
    cfg.pop("prompts", None)
    if truthy(cfg.get("defs")):
        del cfg["defs"]
    cfg["id"] = _or(cfg.get("id", UNDEFINED), cfg.get("configId", UNDEFINED))
    cfg["title"] = _or(cfg.get("title", UNDEFINED), cfg.get("configTitle", UNDEFINED))
    cfg["system"] = _or(cfg.get("system", UNDEFINED), cfg.get("systemPrompt", UNDEFINED))
    author = cfg.get("author", UNDEFINED)
    if author is not UNDEFINED and not _is_str(author):
        if truthy(author) and isinstance(author, dict):
            name = author.get("name")
            if not isinstance(name, str) or isinstance(name, JsDate) or not name.strip(JS_WHITESPACE_CHARS):
                raise ReferenceRejects("Invalid 'author' object: missing 'name' string.")
        else:
            raise ReferenceRejects("Invalid 'author' field: must be a string or an object with 'name'.")
    refs = _or(cfg.get("reference", UNDEFINED), cfg.get("citation", UNDEFINED), cfg.get("references", UNDEFINED),
               cfg.get("citations", UNDEFINED))
    if refs is not UNDEFINED:
        normalized = []
        for ref in refs if isinstance(refs, list) else [refs]:
            if _is_str(ref):
                normalized.append({"title": ref})
            elif truthy(ref) and isinstance(ref, dict):
                title = _or(ref.get("title", UNDEFINED), ref.get("name", UNDEFINED))
                if not _is_str(title) or not title.strip(JS_WHITESPACE_CHARS):
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
    if truthy(render_as) and (not _is_str(render_as) or render_as not in ALLOWED_RENDER_AS):
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
            if not isinstance(tool, dict) or not truthy(tool.get("name")) or not _is_str(tool.get("name")):
                raise ReferenceRejects(f"Invalid tool definition at index {i}: each tool must have a 'name' string.")
    tool_use = cfg.get("toolUse")
    if truthy(tool_use):
        if not _is_object(tool_use):
            raise ReferenceRejects("The 'toolUse' field must be an object.")
        tu = tool_use if isinstance(tool_use, dict) else {}
        if truthy(tu.get("mode")) and tu.get("mode") != "trace-only":
            raise ReferenceRejects("The 'toolUse.mode' field, if provided, must be 'trace-only'.")
        if truthy(tu.get("outputFormat")) and tu.get("outputFormat") != "json-line":
            raise ReferenceRejects("The 'toolUse.outputFormat' field, if provided, must be 'json-line'.")
        steps = tu.get("maxSteps", UNDEFINED)
        if steps is not UNDEFINED and (not _is_number(steps) or steps < 1):
            raise ReferenceRejects("The 'toolUse.maxSteps' field, if provided, must be a positive number.")
    _check_services(cfg.get("externalServices"))
    # loadAndValidateConfig
    cfg["id"] = blueprint_id
    if not truthy(cfg["title"]):
        cfg["title"] = blueprint_id
    if not _is_str(cfg["title"]) or not cfg["title"].strip(JS_WHITESPACE_CHARS):
        raise ReferenceRejects("Failed to determine a valid 'title' for the blueprint from file content or 'id'.")
    if not isinstance(cfg.get("models"), list) or not cfg["models"]:
        cfg["models"] = ["CORE"]
    if not truthy(cfg.get("embeddingModel")):
        cfg["embeddingModel"] = "openai:text-embedding-3-small"
    if truthy(cfg.get("description")) and not _is_str(cfg["description"]):
        raise ReferenceRejects("configJson.description.substring is not a function")
    if cfg.get("temperature", UNDEFINED) is not UNDEFINED and not _is_number(cfg["temperature"]):
        raise ReferenceRejects("Config file has invalid 'temperature'")
    temps = cfg.get("temperatures", UNDEFINED)
    if temps is not UNDEFINED and (not isinstance(temps, list) or not all(_is_number(t) for t in temps)):
        raise ReferenceRejects("Config file has invalid 'temperatures'")
    tags = cfg.get("tags", UNDEFINED)
    if tags is not UNDEFINED:
        if not isinstance(tags, list) or not all(_is_str(t) for t in tags):
            raise ReferenceRejects("Config file has an invalid 'tags' field (must be an array of strings if provided).")
        cfg["tags"] = normalize_tags(tags)
    if isinstance(cfg.get("system"), list):
        systems = cfg.get("systems")
        if not (truthy(systems) and isinstance(systems, list) and systems):
            cfg["systems"] = cfg["system"]
        cfg["system"] = UNDEFINED
    systems = cfg.get("systems", UNDEFINED)
    if systems is not UNDEFINED:
        if not isinstance(systems, list) or not all(_is_str(x) or x is None for x in systems):
            raise ReferenceRejects("Config file has invalid 'systems' (must be an array of strings or nulls).")
        if sum(1 for x in systems if x is None) > 1:
            raise ReferenceRejects("Config file validation error: The 'systems' array can contain at most one "
                                   "'null' entry.")
    return cfg


def header_problem(h: Any, blueprint_id: str = "untitled") -> str | None:
    """What the reference's parser or loader throws on in a header (the checker reports it where none of
    its own findings does)."""
    try:
        reference_config(h, blueprint_id)
    except ReferenceRejects as exc:
        return str(exc)
    return None
