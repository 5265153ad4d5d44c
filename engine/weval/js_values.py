"""JavaScript's values and semantics, as Weval's TypeScript sees a blueprint: what js-yaml 4 gives a located
YAML node (`js_plain`: merge keys, timestamps as dates, `1_000`, `!!binary`), truthiness, `||` and `??`,
Object.keys order, String() and JSON.stringify text. reference_form.py ports Weval's parser on these.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..source import Mapping, Node, Scalar, Sequence
from .ids import UNDEFINED, js_number, stable_json

JS_WHITESPACE_CHARS = "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
                      "\u2028\u2029\u202f\u205f\u3000\ufeff"


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


_KINDS = {"str": "scalar", "null": "scalar", "bool": "scalar", "int": "scalar", "float": "scalar",
          "timestamp": "scalar", "binary": "scalar", "merge": "scalar",
          "seq": "sequence", "omap": "sequence", "pairs": "sequence", "map": "mapping", "set": "mapping"}


def _check_tag(tag: str, kind: str) -> None:
    """js-yaml's default schema knows these tags, each for one kind of node: any other tag, or one on a node
    of another kind (`!!str [a]`), it refuses as unknown."""
    if (_KINDS.get(tag[len(_CORE):]) if tag.startswith(_CORE) else None) != kind:
        raise ReferenceRejects(f"Failed to parse YAML blueprint: unknown tag !<{tag}>")


def _tagged_collection(tag: str, value: Any) -> Any:
    """js-yaml's omap, pairs and set: what each accepts, and pairs as [key, value] lists."""
    short = tag[len(_CORE):]
    if short in ("omap", "pairs"):
        seen: set[str] = set()
        for item in value:
            if not isinstance(item, dict) or len(item) != 1 or (short == "omap" and next(iter(item)) in seen):
                raise ReferenceRejects(f"Failed to parse YAML blueprint: cannot resolve a node with !<{tag}> explicit tag")
            seen.add(next(iter(item)))
        if short == "pairs":
            return [[k, v] for item in value for k, v in item.items()]
    elif short == "set" and any(v is not None for v in value.values()):
        raise ReferenceRejects(f"Failed to parse YAML blueprint: cannot resolve a node with !<{tag}> explicit tag")
    return value


def _scalar(node: Scalar) -> Any:
    """js-yaml's value of a scalar where it differs from the YAML 1.2 core schema's (source.py's)."""
    value, tag = node.value, node.tag
    if tag is not None:
        _check_tag(tag, "scalar")
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
        items = [_js_leaf(i) for i in node.items]
        if node.tag is not None:
            _check_tag(node.tag, "sequence")
            return _tagged_collection(node.tag, items)
        return items
    if isinstance(node, Mapping):
        if node.tag is not None:
            _check_tag(node.tag, "mapping")
            return _tagged_collection(node.tag, _mapping(node))
        return _mapping(node)
    return None


def _mapping(node: Mapping) -> dict[str, Any]:
    """js-yaml's object: merge keys expanded (own keys win), keys as String(key), a key written twice refused."""
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
        key = js_plain(k) if not isinstance(k, Scalar) else _scalar(k)
        text = key if type(key) is str else _key_text(key)
        if text in out:
            if text not in overridable:
                raise ReferenceRejects("Failed to parse YAML blueprint: duplicated mapping key")
            overridable.discard(text)
        out[text] = _js_leaf(v)
    return out


def _js_leaf(node: Node) -> Any:
    """`js_plain(node)`, a common scalar's value taken without the calls: untagged, and not a plain text that
    could be a date or an underscored number (what `_scalar` reads differently from the core schema)."""
    if type(node) is Scalar and node.tag is None:
        value = node.value
        if node.style is not None or not isinstance(value, str) or value[:1] not in _NUMERIC_START:
            return value
    return js_plain(node)


_NUMERIC_START = frozenset("0123456789+-")


def _key_text(key: Any) -> str:
    """`String(key)` as js-yaml makes a mapping key of a value: a date as Date's toString (in UTC, the
    reference's time zone here), a mapping `[object Object]`, a list its items joined by commas."""
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, (int, float)):
        if isinstance(key, float) and key != key:
            return "NaN"
        if isinstance(key, float) and key in (float("inf"), float("-inf")):
            return "Infinity" if key > 0 else "-Infinity"
        return js_number(key)
    if isinstance(key, JsDate):
        return js_date_string(key)
    if isinstance(key, dict):
        return "[object Object]"
    if isinstance(key, list):
        return ",".join("" if item is None else "[object Object]" if isinstance(item, dict) else _key_text(item)
                        for item in key)
    return str(key)


_WEEKDAYS = ("Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed")  # 1970-01-01 was a Thursday
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def js_date_string(date: JsDate) -> str:
    """`String(date)` (Date.prototype.toString) in UTC: `Tue Jan 02 2024 00:00:00 GMT+0000 (Coordinated
    Universal Time)`."""
    negative = date.startswith("-")
    year_text, month, rest = date.lstrip("+-").split("-", 2)
    year = -int(year_text) if negative else int(year_text)
    day, clock = rest[:2], rest[3:11]
    weekday = _WEEKDAYS[_days_from_civil(year, int(month), int(day)) % 7]
    shown = f"{year:04d}" if year >= 0 else f"-{-year:06d}"
    return f"{weekday} {_MONTHS[int(month) - 1]} {day} {shown} {clock} GMT+0000 (Coordinated Universal Time)"


def has_merge_key(node: Node | None) -> bool:
    if not isinstance(node, Mapping):
        return False
    for k, _ in node.pairs:  # noqa: SIM110  # a loop: any() over a generator cost more than the test
        if isinstance(k, Scalar) and k.value == "<<" and k.style is None:
            return True
    return False


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
    kind = type(v)
    if kind is str:  # the common cases first (a JsDate is a str subclass: below)
        return v != ""
    if kind is dict or kind is list:
        return True
    if v is None or v is UNDEFINED or v is False:
        return False
    if isinstance(v, JsDate):
        return True
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v != 0 and not (isinstance(v, float) and math.isnan(v))
    if isinstance(v, str):
        return v != ""
    return True


def js_or(*values: Any) -> Any:
    """`a || b || c`."""
    for v in values[:-1]:
        if truthy(v):
            return v
    return values[-1]


def js_nullish(*values: Any) -> Any:
    """`a ?? b ?? c`."""
    for v in values[:-1]:
        if v is not None and v is not UNDEFINED:
            return v
    return values[-1]


def member(obj: Any, key: str) -> Any:
    return obj.get(key, UNDEFINED) if isinstance(obj, dict) else UNDEFINED


def is_text(v: Any) -> bool:
    return isinstance(v, str) and not isinstance(v, JsDate)


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_object(v: Any) -> bool:
    """typeof v === 'object' && v !== null (arrays and dates too)."""
    return isinstance(v, (dict, list, JsDate))


def js_keys(obj: dict[str, Any]) -> list[str]:
    """Object.keys order: integer-like keys ascending first, then the others as inserted."""
    for k in obj:  # (a loop: `any` over a generator cost more than the rest, for a few keys)
        if k[:1].isdigit():
            break
    else:
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


def js_typeof(v: Any) -> str:
    if v is UNDEFINED:
        return "undefined"
    if isinstance(v, bool):
        return "boolean"
    if is_number(v):
        return "number"
    if is_text(v):
        return "string"
    return "object"


def js_string(v: Any) -> str:
    """String(v) / template interpolation."""
    if type(v) is str:  # the common value (a prompt's id: four calls a prompt), what str(v) below gives
        return v
    if v is UNDEFINED:
        return "undefined"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if is_number(v):
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        if isinstance(v, float) and math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return js_number(v)
    if isinstance(v, list):
        return ",".join("" if x is None or x is UNDEFINED else js_string(x) for x in v)
    if isinstance(v, dict):
        return "[object Object]"
    return str(v)


def js_prompt_id(value: Any) -> str:
    """The id as the reference's results key it (String(id))."""
    return js_string(value)
