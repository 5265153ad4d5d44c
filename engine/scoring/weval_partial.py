"""`$tool_args_match`'s object `where`: the reference's `matchesPartial`, with JavaScript's semantics.

Contract: `matches_partial(actual, partial, normalize_ws)` answers as weval-org/app's
src/point-functions/tool_args_match.ts does for JSON-like values (dict, list, str, number, bool, None):
- the keys of `partial` are `Object.keys` (an array's indices; integer-like keys first);
- a key is present when JavaScript's `key in actual` says so: own keys, an array's `length`, and the
  members every object or array inherits (`constructor`, `toString`, `__proto__`, `map`, …), whose values
  are builtins (`Builtin`), never equal to a value from YAML;
- `key in` a string, number, boolean or null throws, and so does reading a builtin's `caller` or
  `arguments`: `JsTypeError`, with V8's message (the reference's evaluator reports the point as an error);
- strings compare after removing `\\s` runs when `normalize_ws`, anything else with `===`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..weval.ids import js_number
from .js_text import is_js_number, js_remove_whitespace, js_strict_equal

# Object.prototype's and Array.prototype's members in Node 20, with their `length`
_OBJECT_MEMBERS = {"constructor": 1, "__defineGetter__": 2, "__defineSetter__": 2, "hasOwnProperty": 1,
                   "__lookupGetter__": 1, "__lookupSetter__": 1, "isPrototypeOf": 1, "propertyIsEnumerable": 1,
                   "toString": 0, "valueOf": 0, "toLocaleString": 0}
_ARRAY_MEMBERS = {"constructor": 1, "at": 1, "concat": 1, "copyWithin": 2, "fill": 1, "find": 1, "findIndex": 1,
                  "findLast": 1, "findLastIndex": 1, "lastIndexOf": 1, "pop": 0, "push": 1, "reverse": 0, "shift": 0,
                  "unshift": 1, "slice": 2, "sort": 1, "splice": 2, "includes": 1, "indexOf": 1, "join": 1,
                  "keys": 0, "entries": 0, "values": 0, "forEach": 1, "filter": 1, "flat": 0, "flatMap": 1,
                  "map": 1, "every": 1, "some": 1, "reduce": 1, "reduceRight": 1, "toLocaleString": 0,
                  "toString": 0, "toReversed": 0, "toSorted": 1, "toSpliced": 2, "with": 2}
_FUNCTION_MEMBERS = {"apply": 2, "bind": 1, "call": 1, "toString": 0, "constructor": 1}
_CONSTRUCTOR_STATICS = {
    "Object": ("assign", "getOwnPropertyDescriptor", "getOwnPropertyDescriptors", "getOwnPropertyNames",
               "getOwnPropertySymbols", "hasOwn", "is", "preventExtensions", "seal", "create", "defineProperties",
               "defineProperty", "freeze", "getPrototypeOf", "setPrototypeOf", "isExtensible", "isFrozen",
               "isSealed", "keys", "entries", "fromEntries", "values"),
    "Array": ("isArray", "from", "of"),
}


@dataclass(frozen=True)
class Builtin:
    """A value JavaScript finds on a prototype: a function (`length` its arity) or a prototype object."""

    name: str
    length: int = 0
    prototype_of: str | None = None  # "Object" / "Array" for Object.prototype / Array.prototype


class JsTypeError(Exception):
    """What `key in value` throws for a value that is not an object."""


def _index(key: str) -> int | None:
    if key.isascii() and key.isdigit() and (key == "0" or not key.startswith("0")) and int(key) < 2**32 - 1:
        return int(key)
    return None


def js_object_keys(value: dict[Any, Any] | list[Any]) -> list[str]:
    """`Object.keys(value)` (keys as JavaScript's strings: YAML's `1:` is `"1"`)."""
    if isinstance(value, list):
        return [str(i) for i in range(len(value))]
    keys = [_key(k) for k in value]
    ints = sorted((k for k in keys if _index(k) is not None), key=int)
    return ints + [k for k in keys if _index(k) is None]


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    if k is None:
        return "null"
    return js_number(k) if is_js_number(k) else str(k)


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_js_number(value):
        return js_number(value)
    return str(value)


_MISSING = object()


def _own(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        for k, v in value.items():  # keys are strings from JSON; YAML's are compared as JavaScript's
            if k == key or (not isinstance(k, str) and _key(k) == key):
                return v
        return _MISSING
    if isinstance(value, list):
        i = _index(key)
        if i is not None and i < len(value):
            return value[i]
        return len(value) if key == "length" else _MISSING
    if isinstance(value, Builtin):
        if value.prototype_of is not None:  # Object.prototype / Array.prototype: its members
            members = _ARRAY_MEMBERS if value.prototype_of == "Array" else _OBJECT_MEMBERS
            if key == "length" and value.prototype_of == "Array":
                return 0
            return _builtin(key, members[key]) if key in members else _MISSING
        if key == "name":
            return value.name
        if key == "length":
            return value.length
        statics = _CONSTRUCTOR_STATICS.get(value.name)
        if statics is not None:
            if key == "prototype":
                return Builtin(value.name + ".prototype", 0, value.name)
            if key in statics:
                return Builtin(key, 1)
        if key in ("arguments", "caller"):  # Function.prototype's accessors throw for a builtin
            raise JsTypeError("'caller', 'callee', and 'arguments' properties may not be accessed on strict mode "
                              "functions or the arguments objects for calls to them")
        if key in _FUNCTION_MEMBERS:
            return _builtin(key, _FUNCTION_MEMBERS[key], function=True)
        return _MISSING
    return _MISSING


def _builtin(key: str, length: int, function: bool = False) -> Builtin:
    if key == "constructor":
        return Builtin("Function" if function else "Object", 1)
    return Builtin(key, length)


def _get(value: Any, key: str) -> Any:
    """`value[key]` when `key in value`; _MISSING when not; JsTypeError when `in` cannot be asked."""
    if not isinstance(value, dict | list | Builtin):
        raise JsTypeError(f"Cannot use 'in' operator to search for '{key}' in {_shown(value)}")
    got = _own(value, key)
    if got is not _MISSING:
        return got
    if isinstance(value, Builtin) and value.prototype_of is not None:
        if key == "__proto__":  # Array.prototype's is Object.prototype, whose own is null
            return Builtin("Object.prototype", 0, "Object") if value.prototype_of == "Array" else None
        value = {}  # the prototypes inherit Object.prototype
    elif isinstance(value, Builtin) and key == "__proto__":
        return Builtin("Function.prototype")
    if key == "__proto__":
        return Builtin("Array.prototype" if isinstance(value, list) else "Object.prototype", 0,
                       "Array" if isinstance(value, list) else "Object")
    if isinstance(value, list) and key in _ARRAY_MEMBERS:
        return Builtin("Array", 1) if key == "constructor" else Builtin(key, _ARRAY_MEMBERS[key])
    if key in _OBJECT_MEMBERS:
        return _builtin(key, _OBJECT_MEMBERS[key], function=isinstance(value, Builtin))
    return _MISSING


def matches_partial(actual: Any, partial: Any, normalize_ws: bool) -> bool:
    """The reference's `matchesPartial(obj, partial)`; raises JsTypeError where it throws."""
    if not isinstance(partial, dict | list):
        return False
    for key in js_object_keys(partial):
        value = _get(actual, key)
        if value is _MISSING:
            return False
        expected = _own(partial, key)
        if isinstance(expected, dict | list):
            if not matches_partial(value, expected, normalize_ws):
                return False
        elif isinstance(expected, str) and isinstance(value, str):
            if normalize_ws:
                expected, value = js_remove_whitespace(expected), js_remove_whitespace(value)
            if expected != value:
                return False
        elif isinstance(value, Builtin) or not js_strict_equal(value, expected):
            return False
    return True
