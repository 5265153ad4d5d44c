"""Argument checks for point functions, driven by each function's declared argument shape."""

from __future__ import annotations

from typing import Protocol

from ..findings import Edit, Findings, Fix, Span, replace
from ..registry.weval_functions import Arg, PointFunction, resolve_function
from ..source import Mapping, Node, Scalar, Sequence, is_number, is_str, node_type_name, to_python
from ..validation.yaml_text import flow, quote


class _Services(Protocol):
    external_services: set[str]


def check_function_arg(fn: PointFunction, arg: Node | None, key: Scalar, out: Findings, ctx: _Services) -> None:
    """Report an argument that does not fit `fn`'s shape, on the argument itself."""
    shape = fn.arg
    if _fits(shape, arg):
        return
    name = f"${key.value.lstrip('$')}" if isinstance(key.value, str) else f"${fn.name}"
    where = arg.span if arg is not None else key.span

    def bad(message: str, fix: Fix | None = None) -> None:
        out.error("invalid-argument", where, f"{name} {message}", fixes=(fix,) if fix else ())

    if shape is Arg.NONE or shape is Arg.OPTIONAL_STRING:
        return
    if shape in (Arg.STRING, Arg.TOOL_NAME, Arg.JS):
        if not is_str(arg):
            fix = None
            if isinstance(arg, Scalar) and arg.value is not None:
                fix = replace(f"Quote it: \"{arg.raw}\"", arg.span, quote(arg.raw, '"'))
            bad(f"expects a string argument; found {node_type_name(arg)}.", fix)
        elif shape is Arg.STRING and arg.value == "":
            bad("expects non-empty text.")
        return
    if shape is Arg.REGEX:
        if not is_str(arg):
            bad(f"expects a regular expression (a string); found {node_type_name(arg)}.")
            return
        _check_regex(fn, arg, key, out)
        return
    if shape in (Arg.STRINGS, Arg.REGEXES, Arg.TOOL_ORDER):
        if not isinstance(arg, Sequence):
            fix = None
            if is_str(arg):
                fix = replace("Wrap it in a list", arg.span, "[" + quote(arg.value, arg.style) + "]")
            bad(f"expects a list of strings, e.g. {fn.example.split(': ', 1)[1]}; found {node_type_name(arg)}.", fix)
            return
        for item in arg.items:
            if not is_str(item):
                out.error("invalid-argument", item.span, f"Items of {name} must be strings; found {node_type_name(item)}.")
            elif shape is Arg.REGEXES:
                _check_regex(fn, item, key, out)
        return
    if shape in (Arg.N_OF_STRINGS, Arg.N_OF_REGEXES):
        _check_n_of(fn, arg, key, out, name)
        return
    if shape is Arg.RANGE:
        _check_range(arg, out, name, where)
        return
    if shape is Arg.TOOL_COUNT:
        if not isinstance(arg, Sequence) or not (2 <= len(arg.items) <= 3) or not all(
                is_number(i) for i in arg.items[:2]):
            bad("expects [min, max] or [min, max, tool name].")
        return
    if shape is Arg.TOOL_ARGS:
        if not isinstance(arg, Mapping) or not is_str(arg.get("name")):
            bad("expects {name: tool, where: {argument: value}}.")
        return
    if shape is Arg.CALL:
        if not isinstance(arg, Mapping):
            bad("expects a mapping with 'service' (from externalServices) or 'url'.")
            return
        service = arg.get("service")
        if service is None and arg.get("url") is None:
            bad("needs 'service' (a name from externalServices) or 'url'.")
        elif is_str(service) and service.value not in ctx.external_services:
            out.error("unknown-service", service.span,
                      f"Service '{service.value}' is not defined in the header's externalServices.")


_TEXT_ARGS = (Arg.STRING, Arg.TOOL_NAME, Arg.JS)


def _fits(shape: Arg, arg: Node | None) -> bool:
    """The common arguments that need no finding, told at a glance (the checks below say the same of them):
    none expected, text where text is expected, a range [min, max] of 0 ≤ min ≤ max."""
    if shape is Arg.NONE or shape is Arg.OPTIONAL_STRING:
        return True
    if shape in _TEXT_ARGS:
        return type(arg) is Scalar and type(arg.value) is str and (arg.value != "" or shape is not Arg.STRING)
    if shape is Arg.RANGE and type(arg) is Sequence and len(arg.items) == 2:
        lo, hi = arg.items
        if type(lo) is Scalar and type(hi) is Scalar:
            lo_value, hi_value = lo.value, hi.value
            return type(lo_value) in _NUMBERS and type(hi_value) in _NUMBERS and 0 <= lo_value <= hi_value
    return False


_NUMBERS = (int, float)


def _check_n_of(fn: PointFunction, arg: Node | None, key: Scalar, out: Findings, name: str) -> None:
    where = arg.span if arg is not None else key.span
    items = arg.items if isinstance(arg, Sequence) else None
    if items and len(items) >= 2 and is_number(items[0]) and not isinstance(items[1], Sequence) and all(
            isinstance(i, Scalar) for i in items[1:]):
        # `[2, "a", "b"]`: the texts were written inline instead of in their own list.
        values = [to_python(i) for i in items[1:]]
        fixed = f"[{flow(to_python(items[0]))}, {flow(values)}]"
        out.error("invalid-argument", where,
                  f"{name} expects [n, [texts…]]: the texts go in their own list, e.g. {fixed}.",
                  fix=replace("Put the texts in their own list", where, fixed))
        return
    if items is None or len(items) != 2 or not isinstance(items[1], Sequence):
        out.error("invalid-argument", where,
                  f"{name} expects [n, [texts…]], e.g. {fn.example.split(': ', 1)[1]}; found {node_type_name(arg)}.")
        return
    n, listed = items
    assert isinstance(listed, Sequence)  # checked above
    if not is_number(n) or (isinstance(n.value, float) and not n.value.is_integer()):
        out.error("invalid-argument", n.span, f"The first item of {name} is n, a whole number; found {node_type_name(n)}.")
    elif n.value > len(listed.items) and listed.items:
        out.warning("unreachable-n", n.span,
                    f"n is {n.raw} but only {len(listed.items)} items are listed, so the point can never "
                    "score 1.")
    for item in listed.items:
        if not is_str(item):
            out.error("invalid-argument", item.span, f"Items of {name} must be strings; found {node_type_name(item)}.")
        elif fn.arg is Arg.N_OF_REGEXES:
            _check_regex(fn, item, key, out)


def _check_range(arg: Node | None, out: Findings, name: str, where: Span) -> None:
    if not isinstance(arg, Sequence) or len(arg.items) != 2 or not (is_number(arg.items[0]) and is_number(arg.items[1])):
        out.error("invalid-argument", where,
                  f"{name} expects [min, max], two numbers, e.g. [10, 200]; found "
                  f"{node_type_name(arg) if not isinstance(arg, Sequence) else f'a list of {len(arg.items)}'}.")
        return
    lo, hi = (i.value for i in arg.items)  # type: ignore[attr-defined]
    if lo < 0:
        out.error("invalid-argument", arg.items[0].span, f"{name}: min must be 0 or more.")
    if lo > hi:
        out.error("invalid-argument", where, f"{name}: min ({lo}) is greater than max ({hi}).",
                  fix=replace("Swap min and max", where, f"[{arg.items[1].raw}, {arg.items[0].raw}]"))



def _check_regex(fn: PointFunction, node: Scalar, key: Scalar, out: Findings) -> None:
    """Errors where JavaScript would throw; warnings where it would silently mean something else."""
    from ..scoring.js_regex import regex_findings  # here: a blueprint without a regex point needs none of it

    pattern = node.value
    problems = regex_findings(pattern)
    for p in problems:
        if p.severity != "error":
            out.warning("regex-warning", node.span, f"Regular expression: {p.message}")
    errors = [p for p in problems if p.severity == "error"]
    if not errors:
        return
    fixes: tuple[Fix, ...] = ()
    base = fn.negates or fn.name
    if pattern.startswith("(?i)") and not base.startswith("i"):
        insensitive = resolve_function(("not_" if fn.negates else "") + "i" + base)
        if insensitive is not None and isinstance(key.value, str) and key.value.startswith("$"):
            new_key = f"${insensitive.name}"
            fixes = (Fix(f"Use {new_key} instead of (?i)", (
                Edit(key.span, new_key),
                Edit(node.span, quote(pattern[4:], node.style)))),)
        elif insensitive is not None:
            fixes = (Fix(f"Use {insensitive.name} instead of (?i)", (
                Edit(key.span, quote(insensitive.name, key.style)),
                Edit(node.span, quote(pattern[4:], node.style)))),)
    elif pattern.startswith("(?i)") and base.startswith("i"):
        fixes = (replace("Remove (?i): the function already ignores case", node.span, quote(pattern[4:], node.style)),)
    message = errors[0].message
    if pattern.startswith("(?i)") and base.startswith("i"):
        message = f"inline flag group '(?i)' is not valid in JavaScript, and ${base} already ignores case"
    out.error("invalid-regex", node.span, f"Invalid regular expression for JavaScript: {message}", fixes=fixes)
