"""Checking one mapping against its ObjectSpec: keys, aliases, deprecations, types, enums, ranges.

Format rules (a Weval point's forms, an assertion's `type`) live with their formats; this module only
knows what the registry declares, so every format gets the same messages for the same mistakes.
Keys are reported on the key, bad values on the value.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Container
from dataclasses import dataclass, field

from ..findings import Findings, Related, Span, Tag, replace
from ..registry.fields import FieldSpec, ObjectSpec, Registry
from ..source import Mapping, Node, Scalar, Sequence, node_type_name
from .suggest import closest


@dataclass
class Entries:
    """The keys of a checked mapping, by canonical field name: the winning (key, value) pair."""

    node: Mapping
    found: dict[str, tuple[Scalar, Node]] = field(default_factory=dict)
    unknown: list[tuple[Scalar, Node]] = field(default_factory=list)

    def get(self, name: str) -> Node | None:
        pair = self.found.get(name)
        return pair[1] if pair else None

    def key(self, name: str) -> Scalar | None:
        pair = self.found.get(name)
        return pair[0] if pair else None

    def __contains__(self, name: str) -> bool:
        return name in self.found


def first_line_span(node: Node) -> Span:
    """Where to report something about a whole mapping: its first key, or its opening."""
    if isinstance(node, Mapping) and node.pairs:
        return node.pairs[0][0].span
    sl, sc = node.span[:2]
    return _new_tuple(Span, (sl, sc, sl, sc + 1))  # Span(…) without its Python-level __new__


_new_tuple = tuple.__new__


def check_type(value: Node | None, types: Collection[str]) -> bool:
    """Does a node's JSON type fit one of `types`?"""
    if value is None:
        return "null" in types
    if isinstance(value, Mapping):
        return "object" in types
    if isinstance(value, Sequence):
        return "array" in types
    v = value.value  # type: ignore[attr-defined]
    if v is None:
        return "null" in types
    if isinstance(v, bool):
        return "boolean" in types
    if isinstance(v, int):
        return "integer" in types or "number" in types
    if isinstance(v, float):
        return "number" in types or ("integer" in types and v.is_integer())
    return "string" in types


_TYPE_WORDS = {"string": "a string", "number": "a number", "integer": "an integer", "boolean": "true or false",
               "array": "a list", "object": "a mapping", "null": "null"}


def describe_types(types: Collection[str]) -> str:
    words = [_TYPE_WORDS[t] for t in types]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def check_object(node: Node | None, spec: ObjectSpec, out: Findings, registry: Registry | None = None, *,
                 handled: Collection[str] = (), unknown_severity: str = "warning",
                 where: str | None = None, unreported: Container[str] = ()) -> Entries | None:
    """Check `node` as a `spec` object; return its entries, or None when it is not a mapping.

    Fields named in `handled` are the caller's to check beyond their key (including what to say when
    the field is deprecated); the others are checked here by type, enum and range, and recursively when
    they declare an object (given a `registry`). A required field named in `unreported` that is missing is
    the caller's to report.
    """
    what = where or spec.title
    if not isinstance(node, Mapping):
        if node is not None:
            out.error("wrong-type", node.span, f"Expected {what} (a mapping), found {node_type_name(node)}.")
        return None
    entries = Entries(node)
    found = entries.found
    lookup = spec._index.get  # spec.lookup, without a call per key
    seen: dict[str, Scalar] = {}  # canonical name -> first key that set it
    for key, value in node.pairs:
        if type(key) is Scalar and type(key.value) is str:  # a text key, the common one (tested once)
            name: str = key.value
        else:
            if not isinstance(key, Scalar) or not isinstance(key.value, (str, int, float)) or isinstance(key.value, bool):
                out.error("invalid-key", key.span, f"Keys of {what} must be plain names.")
                continue
            name = str(key.value)
        hit = lookup(name)
        if hit is None:
            if spec.open:
                continue
            entries.unknown.append((key, value))
            _unknown_key(key, name, spec, what, out, unknown_severity)
            continue
        f, how = hit
        prior = seen.get(f.name)
        if prior is not None:
            if prior.value == name:
                out.error("duplicate-key", key.span, f"Duplicate key '{name}'; the first one is ignored.",
                          related=(Related(prior.span, f"'{name}' first set here"),))
                entries.found[f.name] = (key, value)
            else:
                # Precedence follows the declaration: the canonical name, then aliases in order. This is
                # both AgentV's rule (canonical wins) and Weval's (`ideal || idealResponse`, …).
                order = f.all_names
                winner = key if order.index(name) < order.index(str(prior.value)) else prior
                loser = prior if winner is key else key
                out.warning("alias-conflict", loser.span,
                            f"'{loser.value}' is ignored because '{winner.value}' sets the same field"
                            f" ('{f.name}').", tags=(Tag.UNNECESSARY,),
                            related=(Related(winner.span, f"'{winner.value}' set here"),))
                if winner is key:
                    entries.found[f.name] = (key, value)
                    seen[f.name] = key
            continue
        seen[f.name] = key
        found[f.name] = (key, value)
        if how == "deprecated-alias":
            out.warning("deprecated-alias", key.span,
                        f"'{name}' is deprecated; use '{f.name}'.", tags=(Tag.DEPRECATED,),
                        fix=replace(f"Rename '{name}' to '{f.name}'", key.span, f.name))
        elif f.deprecated and f.name not in handled:  # a handled field gets its caller's own message
            out.warning("deprecated-field", key.span, f"'{name}' is deprecated: {f.deprecated}",
                        tags=(Tag.DEPRECATED,))
    for f in spec.required:
        if f.name not in found and f.name not in unreported:
            out.error("missing-field", first_line_span(node), f"{what[0].upper()}{what[1:]} needs '{f.name}'.",
                      extra={"field": f.name})
    index = spec._index
    for name, (key, value) in found.items():
        if name in handled:
            continue
        check_value(value, index[name][0], out, registry, key=key)
    return entries


def _unknown_key(key: Scalar, name: str, spec: ObjectSpec, what: str, out: Findings, severity: str) -> None:
    best = closest(name, spec.hint_names)
    message = f"Unknown key '{name}' in {what}"
    if best:
        out_fn = out.error if severity == "error" else out.warning
        out_fn("unknown-key", key.span, f"{message}; did you mean '{best}'?",
               fix=replace(f"Rename '{name}' to '{best}'", key.span, best), extra={"suggestion": best})
    else:
        out_fn = out.error if severity == "error" else out.warning
        out_fn("unknown-key", key.span, f"{message}. Known keys: {spec.known_names}.")


def check_value(value: Node | None, f: FieldSpec, out: Findings, registry: Registry | None = None, *,
                key: Scalar | None = None) -> bool:
    """Type, enum and range of one field's value; recurse into declared objects. True when it fits."""
    # A lenient field's bad value is ignored by AgentV (with a warning), and by a run: a warning here.
    report = out.warning if f.lenient else out.error
    tail = " AgentV ignores it." if f.lenient else ""
    if not check_type(value, f.types):
        where = value.span if value is not None else (key.span if key else Span(0, 0, 0, 0))
        report("wrong-type", where, f"'{f.name}' must be {describe_types(f.types)}, found {node_type_name(value)}.{tail}")
        return False
    if isinstance(value, Scalar):
        v = value.value
        if type(v) is str and not f.enum:  # text where text fits, nothing more to check (the common case)
            return True
        if f.enum and isinstance(v, str) and v not in f.enum:
            best = closest(v, f.enum, cutoff=0.6)
            msg = f"'{f.name}' must be one of {', '.join(f.enum)}; found '{v}'"
            if best:
                report("invalid-value", value.span, f"{msg}. Did you mean '{best}'?{tail}",
                       fix=replace(f"Change to '{best}'", value.span, best))
            else:
                report("invalid-value", value.span, msg + "." + tail)
            return False
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if not math.isfinite(v):
                report("out-of-range", value.span, f"'{f.name}' must be a finite number, found {value.raw}.{tail}")
                return False
            if (f.minimum is not None and v < f.minimum) or (f.maximum is not None and v > f.maximum):
                report("out-of-range", value.span, f"'{f.name}' must be {_range_text(f)}, found {value.raw}.{tail}")
                return False
            if f.exclusive_minimum is not None and v <= f.exclusive_minimum:
                report("out-of-range", value.span,
                       f"'{f.name}' must be greater than {_num(f.exclusive_minimum)}, found {value.raw}.{tail}")
                return False
    if isinstance(value, Sequence) and f.items:
        for item in value.items:
            if not check_type(item, (f.items,)):
                out.error("wrong-type", item.span,
                          f"Items of '{f.name}' must be {describe_types((f.items,))}, found {node_type_name(item)}.")
    if registry is not None:
        if f.object and isinstance(value, Mapping):
            check_object(value, registry[f.object], out, registry)
        if f.items_object and isinstance(value, Sequence):
            for item in value.items:
                check_object(item, registry[f.items_object], out, registry)
    return True


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _range_text(f: FieldSpec) -> str:
    if f.minimum is not None and f.maximum is not None:
        return f"between {_num(f.minimum)} and {_num(f.maximum)}"
    if f.minimum is not None:
        return f"at least {_num(f.minimum)}"
    return f"at most {_num(f.maximum)}"  # type: ignore[arg-type]
