"""`assert` items: the type first, then the common fields, then the type's own rules; normalized.

Discriminating on `type` before anything else gives specific messages ("Assertion type 'contains'
requires a 'value' field (string).") instead of schema noise. Messages AgentV itself prints are kept
word for word, so users find them in AgentV's docs and issues.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..findings import Edit, Fix, Span, replace
from ..registry.agentv_assertions import (
    AGGREGATOR_TYPES,
    ASSERTION_SPELLINGS,
    ASSERTION_TYPES,
    TRAJECTORY_MODES,
    AssertionType,
    normalize_assertion_type,
)
from ..registry.stages import resolve_scorer
from ..source import (
    Mapping,
    Node,
    Scalar,
    Sequence,
    findings_within,
    is_number,
    moved_finding,
    moved_span,
    node_type_name,
    spans_within,
)
from ..validation.objects import Entries
from ..validation.suggest import closest
from ..validation.yaml_text import dash_before
from . import edits
from .context import Context, kept_key
from .files import looks_like_prompt_file
from .model import Assertion
from .rubrics import check_criteria

_COMMON = ("type", "name", "weight", "required", "negate")
_CHILDREN = "__children__"
_JS_FLAGS = "dgimsuyv"
# Judge prompt variables that carry the answer or the reference; a template needs one of them.
_PROMPT_NEEDS = ("answer", "expected_output")  # AgentV v2.19.0 (validateTemplateVariables): no legacy names
_PROMPT_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def check_assert_list(ctx: Context, node: Node | None, *, field: str = "assert") -> list[Assertion]:
    """An `assert` list, each item checked; the usable ones normalized, in order."""
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return []
    if not isinstance(node, Sequence):
        ctx.out.error("wrong-type", node.span,
                      f"'{field}' must be a list of assertions ({{type: …}}); found {node_type_name(node)}.")
        return []
    result: list[Assertion] = []
    for item in node.items:
        a = _kept_or_checked(ctx, item)
        if a is not None:
            result.append(a)
    return result


SAME_ITEMS = 256  # distinct assertion texts kept, the last ones checked


def _kept_or_checked(ctx: Context, item: Node) -> Assertion | None:
    """`check_assertion(ctx, item)`, or for an item whose text was checked before in the same file, that
    check's assertion and findings moved to its place: what checking it again would give. A suite's
    tests mostly repeat their deterministic assertions (`{type: latency, max_ms: 60000}` in every test).

    Only a check that depends on nothing but the item's text (and its file, the same for the context) is
    kept, as testcase.RepeatedTests keeps a test's: an assertion of a type whose rule reads no file (the
    fields alone, a `value`, a regex), without children, no alias, block scalar or `${{ VAR }}`, no read
    of the file's lines nor of a file, and every place of it and of its findings within the item."""
    if type(item) is not Mapping:
        return check_assertion(ctx, item)
    span = item.span
    sl, sc, el, _ = span
    if el - sl > 8:
        return check_assertion(ctx, item)
    key = kept_key(ctx.lines, span)
    kept = ctx.kept_assertions
    hit = kept.get(key)
    if hit is not None:
        first, assertion, found = hit
        line, dl, dc = first[0], sl - first[0], sc - first[1]
        if found:
            ctx.out.extend([moved_finding(f, line, dl, dc) for f in found])
        config = assertion.config
        moved: Assertion = assertion.evolve(span=moved_span(assertion.span, line, dl, dc),
                                            config=config.copy() if _flat(config) else _copied(config))
        return moved
    template = _value_template(item, key, sc) if key is not None else None
    if template is not None:
        hit = kept.get(template[0])
        if hit is not None:  # the same item but for its value: what its check gave, with this value
            text = template[1]  # (the assertion's span is its item's: kept so only then)
            return hit[1].evolve(span=span, config={"value": text}, name=auto_name(hit[1].type, text))
    mark, budget, read_before = len(ctx.out), ctx.budget_state(), ctx.lines_read
    ctx.lines_read = False
    a = check_assertion(ctx, item)
    read = ctx.lines_read
    ctx.lines_read = read_before or read  # (the test's check around this one is told too)
    if key is None or a is None or a.children or read or budget != ctx.budget_state():
        return a
    kind = ASSERTION_TYPES.get(a.type)
    if kind is None or _rule_of(kind)[1] not in _TEXT_ONLY_RULES:
        return a
    found = ctx.out[mark:]
    if SAME_ITEMS > 0 and spans_within(span, [a.span]) and findings_within(span, found):
        if len(kept) >= SAME_ITEMS:
            del kept[next(iter(kept))]  # the oldest
        kept[key] = (span, a, found)
        if (template is not None and not found and kind.value == "string" and _rule_of(kind)[1] is VALUE
                and not a.custom and a.span == span and a.config == {"value": template[1]}
                and a.name == auto_name(a.type, template[1])):
            if len(kept) >= SAME_ITEMS:
                del kept[next(iter(kept))]
            kept[template[0]] = (span, a, found)
    return a


# The keys of an item whose check is kept by its text but its value (`_value_template`): none names it
_TEMPLATE_KEYS = frozenset(("type", "value", "required", "weight", "negate"))


def _value_template(item: Mapping, key: object, sc: int) -> tuple[tuple[str, str, str | None, str], str] | None:
    """For a one-line item of no other keys than _TEMPLATE_KEYS and a non-empty text `value`
    (`{type: contains, value: "17", required: true}`, a value in each test): (its kept_key with the value
    left out, the value). A check of such an item of a `value: string` type (VALUE) that found nothing
    gives the assertion every other such item of that text gives, but for its `config` ({value}) and its
    name (auto_name: no `name` key). The value's text has no `$` (no `${{ VAR }}`: `kept_key`)."""
    if type(key) is not str:  # (a one-line item's key is its text)
        return None
    value: Node | None = None
    for k, v in item.pairs:
        name = k.value if type(k) is Scalar else None
        if type(name) is not str or name not in _TEMPLATE_KEYS:
            return None
        if name == "value":
            if value is not None:
                return None
            value = v
    if type(value) is not Scalar or type(value.value) is not str or not value.value or \
            value.style not in (None, '"', "'"):
        return None
    vsl, vsc, vel, vec = value.span
    if vsl != vel or vsc < sc or vec - sc > len(key):
        return None
    return ("value", key[:vsc - sc], value.style, key[vec - sc:]), value.value


_ATOMS = frozenset((str, int, float, bool, type(None)))


def _flat(config: dict[str, Any]) -> bool:
    """Does the config hold no list or dict (`{value: "[a-z]+"}`): a shallow copy is a copy."""
    return _ATOMS.issuperset(map(type, config.values()))


def _copied(value: Any) -> Any:
    """A copy of an assertion's config (plain data), so that no two assertions share one."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


def check_assertion(ctx: Context, item: Node) -> Assertion | None:
    if not isinstance(item, Mapping):
        ctx.out.error("invalid-assertion", item.span,
                      f"Assertion item must be an object with a type field; found {node_type_name(item)}.")
        return None
    type_node = item.get("type")
    raw = ctx.str_of(type_node)
    if type_node is None or raw is None:
        span = type_node.span if type_node is not None else (item.pairs[0][0].span if item.pairs else item.span)
        ctx.out.error("missing-type", span, "Assertion item is missing a 'type' field.")
        ctx.object(item, "assertion", handled=_COMMON)
        return None
    canonical = ASSERTION_SPELLINGS.get(raw)
    if canonical is None and raw == "rubric" and item.has("rubrics"):
        return _legacy_rubric(ctx, item, type_node)
    if canonical is None:
        return _custom(ctx, item, type_node, raw)
    kind = ASSERTION_TYPES[canonical]
    _, rule, spec_name, handled = _rule_of(kind)
    entries = ctx.object(item, spec_name, handled=handled,
                         missing=_missing_messages(kind), fixes=rule.fixes(item) if rule.fixes else {})
    if entries is None:
        return None
    ok = _common(ctx, entries, canonical)
    config = rule.check(ctx, kind, entries)
    if config is None:
        return None
    _needs_one_of(ctx, kind, entries, item)
    return _build(ctx, kind.name, entries, config, item, ok)


@dataclass(frozen=True)
class TypeRule:
    """What the checker checks of an assertion type beyond its fields' declarations (their types, enums,
    ranges: the argument shape every type gets from its entry): `check(ctx, kind, entries)` gives the
    assertion's config (None: not built), `handles` the fields it checks itself, `fixes(item)` quick fixes
    for deprecated spellings. An entry names its rule (`AssertionType.check`); without one, a `value`
    type gets VALUE, any other PLAIN."""

    check: Callable[[Context, AssertionType, Entries], dict[str, Any] | None]
    handles: tuple[str, ...] = ()
    fixes: Callable[[Mapping], dict[str, object]] | None = None


def type_rule(kind: AssertionType) -> TypeRule:
    if kind.check is not None:
        got = resolve_scorer(kind.check)
        assert isinstance(got, TypeRule), f"{kind.name}: its check is a TypeRule"
        return got
    return VALUE if kind.value else PLAIN


# A type's (entry, rule, spec's name, fields it handles), by the entry's id: once per type, not per
# assertion (an entry is frozen; the entry itself is kept, so its id is not reused while it is here)
_RULE_OF: dict[int, tuple[AssertionType, TypeRule, str, tuple[str, ...]]] = {}


def _rule_of(kind: AssertionType) -> tuple[AssertionType, TypeRule, str, tuple[str, ...]]:
    got = _RULE_OF.get(id(kind))
    if got is None or got[0] is not kind:
        rule = type_rule(kind)
        got = _RULE_OF[id(kind)] = (kind, rule, kind.spec.name, (*_COMMON, *rule.handles))
    return got


def _missing_messages(kind: AssertionType) -> dict[str, tuple[str, str] | None]:
    """What a missing required field of `kind` is reported as (read only: one dict per type's name and
    `value` kind, made once)."""
    return _missing_for(kind.name, kind.value)


@functools.cache
def _missing_for(name: str, value: str | None) -> dict[str, tuple[str, str] | None]:
    missing: dict[str, tuple[str, str] | None] = {}
    if value == "string":
        missing["value"] = ("missing-value", f"Assertion type '{name}' requires a 'value' field (string).")
    elif value == "strings":
        missing["value"] = ("missing-value",
                            f"Assertion type '{name}' requires a 'value' field (non-empty string array).")
    missing["criteria"] = ("missing-criteria", "Assertion type 'rubrics' requires a non-empty 'criteria' list.")
    missing["assert"] = ("missing-assert", "A composite needs 'assert': the list of assertions it combines.")
    missing["aggregator"] = ("missing-aggregator", "A composite needs an 'aggregator': {type: weighted_average}, "
                             "{type: threshold, threshold: 0.5}, {type: code-judge, path} or {type: llm-judge}.")
    missing["mode"] = ("invalid-mode", "tool-trajectory needs a 'mode': one of " + ", ".join(TRAJECTORY_MODES) + ".")
    missing["fields"] = ("missing-field", "Assertion type 'field-accuracy' requires a non-empty 'fields' list.")
    return missing


def script_fixes(node: Mapping) -> dict[str, object]:
    """Deprecated `script` → `command` (an argv list when it was a string), unless `command` is set too."""
    key, value = node.key_node("script"), node.get("script")
    if key is None or node.has("command"):
        return {}
    if isinstance(value, Scalar) and isinstance(value.value, str):
        argv = edits.flow_list(edits.split_command(value.value))
        return {"script": replace(f"Replace with 'command: {argv}'", edits.pair_span(key, value), f"command: {argv}")}
    return {"script": replace("Rename 'script' to 'command'", key.span, "command")}


# --- common fields ------------------------------------------------------------------------------------

def _common(ctx: Context, entries: Entries, type_name: str) -> bool:
    """`name`, `weight`, `required`, `negate`; False when the assertion is invalid (bad weight)."""
    name = ctx.str_of(entries.get("name")) or type_name
    ok = True
    weight = entries.get("weight")
    if weight is not None:
        v: Any = weight.value if isinstance(weight, Scalar) else None  # a number once is_number(weight) holds
        if not is_number(weight):
            ctx.out.error("invalid-weight", weight.span,
                          f"Invalid weight for assertion '{name}': must be a number "
                          f"(found {node_type_name(weight)}).")
            ok = False
        elif not math.isfinite(v):
            ctx.out.error("invalid-weight", weight.span,
                          f"Invalid weight for assertion '{name}': must be finite (got {_js_number(v)}).")
            ok = False
        elif v < 0:
            ctx.out.error("invalid-weight", weight.span,
                          f"Invalid weight for assertion '{name}': must be non-negative (got {_js_number(v)}).",
                          fix=Fix(f"Change to {_js_number(-v)}", (Edit(weight.span, _js_number(-v)),), preferred=False))
            ok = False
    required = entries.get("required")
    if required is not None:
        v = required.value if isinstance(required, Scalar) else None
        if isinstance(v, bool):
            pass
        elif is_number(required):
            if not (math.isfinite(v) and 0 < v <= 1):
                ctx.out.warning("invalid-required", required.span,
                                f"Invalid 'required' value {_js_number(v)}. When a number, it must be between 0 "
                                "(exclusive) and 1 (inclusive).")
        else:
            ctx.out.warning("invalid-required", required.span,
                            "Invalid 'required' value. Must be a boolean or a number between 0 (exclusive) "
                            "and 1 (inclusive).")
    negate = entries.get("negate")
    if negate is not None and not (isinstance(negate, Scalar) and isinstance(negate.value, bool)):
        # AgentV negates only on `negate: true` and ignores anything else: so does a run (a warning)
        ctx.out.warning("wrong-type", negate.span, f"'negate' must be true or false, found "
                        f"{node_type_name(negate)}. AgentV ignores it: the assertion is not negated.")
    return ok


def _js_number(v: float) -> str:
    """A number as JavaScript prints it (AgentV's messages): 1, 0.5, Infinity, NaN."""
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        if v.is_integer():
            return str(int(v))
    return str(v)


# AgentV's generateAssertionName: the types an unnamed assertion is named after its value.
_NAMED_BY_VALUE = ("contains", "icontains", "starts-with", "ends-with", "equals")
_NAMED_BY_COUNT = ("contains-any", "contains-all", "icontains-any", "icontains-all")


def auto_name(type_name: str, value: Any) -> str:
    """The name AgentV gives an unnamed assertion: `contains-<value>`, `regex-<first 30 UTF-16 units>`,
    `contains-any-<n>` …, else its type. (AgentV skips an unnamed assertion of another built-in type, with
    a warning; evalspec scores it under its type's name: a check left out could lift the test's score.)"""
    if type_name in _NAMED_BY_VALUE:
        return f"{type_name}-{value}" if isinstance(value, str) and value else type_name
    if type_name in _NAMED_BY_COUNT:
        return f"{type_name}-{len(value)}" if isinstance(value, list) else type_name
    if type_name == "regex" and isinstance(value, str) and value:
        units = value.encode("utf-16-le", "surrogatepass")
        head = units[:60].decode("utf-16-le", "surrogatepass") if len(units) > 60 else value
        return f"regex-{head}"
    return type_name


def _build(ctx: Context, type_name: str, entries: Entries, config: dict[str, Any], item: Mapping, ok: bool,
           *, custom: bool = False) -> Assertion | None:
    if not ok:
        return None
    weight = entries.get("weight")
    required = ctx.values.value(entries.get("required"))
    if not (isinstance(required, bool) or (isinstance(required, (int, float)) and 0 < required <= 1)):
        required = False
    negate = ctx.values.value(entries.get("negate"))
    return Assertion.build(
        # named after the value as written (AgentV counts a list's items before dropping any)
        type=type_name, name=ctx.str_of(entries.get("name")) or auto_name(type_name, _written_value(ctx, entries, config)),
        weight=float(weight.value) if is_number(weight) else 1.0,
        required=required, negate=negate is True, config=config,
        children=config.pop(_CHILDREN, []),  # a composite's rule hands its checked children over here
        custom=custom, span=item.span, source_path=ctx.path)


def _written_value(ctx: Context, entries: Entries, config: dict[str, Any]) -> Any:
    value = entries.get("value")
    return ctx.values.plain(value) if isinstance(value, Sequence) else config.get("value")


def _custom(ctx: Context, item: Mapping, type_node: Node, raw: str) -> Assertion | None:
    """An unknown type: a custom assertion when `.agentv/assertions/<type>.ts` exists, else a warning."""
    name = normalize_assertion_type(raw)
    if ctx.folder is not None and name not in ctx.custom_types:
        ctx.custom_types[name] = ctx.fs.find_custom_assertion(name, ctx.folder) or (
            ctx.fs.find_custom_assertion(raw, ctx.folder) if raw != name else None)
    found = ctx.custom_types.get(name)
    if found is None:
        best = closest(raw, ASSERTION_SPELLINGS)
        best = ASSERTION_SPELLINGS[best] if best else None
        where = f"no .agentv/assertions/{name}.ts was found next to the eval file or in a parent folder"
        if best:
            ctx.out.warning("unknown-assertion-type", type_node.span,
                            f"Unknown assertion type '{raw}'; did you mean '{best}'? ({where})",
                            fix=replace(f"Change to '{best}'", type_node.span, best))
        else:
            ctx.out.warning("unknown-assertion-type", type_node.span,
                            f"Unknown assertion type '{raw}': not a built-in type, and {where}.")
    entries = ctx.object(item, "assertion", handled=_COMMON)
    if entries is None:
        return None
    ok = _common(ctx, entries, name)
    config = {str(k.value): ctx.values.plain(v) for k, v in item.items() if k.value not in _COMMON}
    return _build(ctx, name, entries, config, item, ok, custom=True)


def _legacy_rubric(ctx: Context, item: Mapping, type_node: Node) -> Assertion | None:
    """`{type: rubric, rubrics: [...], model?}`, the older explicit rubric evaluator
    (AgentV's YAML schema still requires it): the `type: rubrics` assertion with those `criteria`."""
    ctx.out.warning("deprecated-alias", type_node.span,
                    "'type: rubric' with 'rubrics' is the older form of 'type: rubrics' with 'criteria'; it runs "
                    "as that.")
    entries = ctx.object(item, "assertion", handled=(*_COMMON, "rubrics", "model"))
    if entries is None:
        return None
    ok = _common(ctx, entries, "rubrics")
    node, key = item.get("rubrics"), item.key_node("rubrics")
    if node is None or key is None:
        return None
    if isinstance(node, Sequence) and not node.items:
        ctx.out.error("missing-criteria", node.span, "A rubric evaluator requires a non-empty 'rubrics' list.")
        return None
    criteria = check_criteria(ctx, node, key, owner="rubrics", strings=False)
    if not criteria:
        return None
    config: dict[str, Any] = {"criteria": criteria}
    model = ctx.str_of(item.get("model"))
    if model:
        config["model"] = model
    built = _build(ctx, "rubrics", entries, config, item, ok)
    if built is not None and ctx.str_of(entries.get("name")) is None:
        built.name = "rubric"
    return built


def _needs_one_of(ctx: Context, kind: AssertionType, entries: Entries, item: Mapping) -> None:
    if not kind.needs_one_of or any(n in entries for n in kind.needs_one_of):
        return
    names = kind.needs_one_of
    what = f"'{names[0]}'" if len(names) == 1 else "at least one of " + ", ".join(f"'{n}'" for n in names)
    type_node = item.get("type")
    ctx.out.error("missing-field", type_node.span if type_node else item.span,
                  f"Assertion type '{kind.name}' requires {what}.")


def _plain_config(ctx: Context, kind: AssertionType, entries: Entries) -> dict[str, Any]:
    """The type's own fields by canonical name (aliases and camelCase resolved)."""
    return {name: ctx.values.plain(value) for name, (_, value) in entries.found.items() if name not in _COMMON}


# --- type rules -----------------------------------------------------------------------------------------

def _value_rule(ctx: Context, kind: AssertionType, entries: Entries) -> dict[str, Any] | None:
    value = entries.get("value")
    if value is None:
        return None  # reported as missing-value
    if kind.value == "string":
        text = ctx.str_of(value)
        if text is None:
            ctx.out.error("missing-value", value.span,
                          f"Assertion type '{kind.name}' requires a 'value' field (string); found "
                          f"{node_type_name(value)}.", fix=_quote_fix(value))
            return None
        if not text:  # AgentV skips it ("missing value"); a check left out could lift the test: refused
            ctx.out.error("missing-value", value.span,
                          f"Assertion type '{kind.name}' requires a non-empty 'value' (AgentV skips this "
                          "assertion: \"missing value\").")
            return None
        return {"value": text}
    items = value.items if isinstance(value, Sequence) else None
    texts = [text for i in items or () if (text := ctx.str_of(i)) is not None]
    if not texts:  # AgentV skips the assertion ("value must be a non-empty string array")
        bad = next((i for i in items or () if ctx.str_of(i) is None), value)
        none = "; none of its items is a string, so AgentV skips this assertion" if items else ""
        ctx.out.error("missing-value", bad.span,
                      f"Assertion type '{kind.name}' requires a 'value' field (non-empty string array){none}.",
                      fix=_quote_fix(bad) if items else None)
        return None
    # AgentV's loader keeps the list's strings (asStringArrayStrict) and drops the rest. For an `-any`
    # that makes the check stricter (fewer alternatives), and it runs as AgentV runs it; for an `-all` the
    # dropped items are checks left out, which could lift the score: refused.
    shown = ", ".join(repr(t) for t in texts)
    for item in items or ():
        if ctx.str_of(item) is not None:
            continue
        found = f"Items of 'value' must be strings; found {node_type_name(item)}."
        if kind.name.endswith("-any"):
            ctx.out.warning("wrong-type", item.span, f"{found} AgentV drops it: this assertion looks for {shown} "
                            "only.", fix=_quote_fix(item))
        else:
            ctx.out.error("wrong-type", item.span, f"{found} AgentV drops it and checks the rest, leaving this "
                          "check out.", fix=_quote_fix(item))
    return {"value": texts}


def _quote_fix(value: Node) -> Fix | None:
    """`value: 4` → `value: "4"`: a number or boolean written where text is meant."""
    if isinstance(value, Scalar) and value.value is not None and not isinstance(value.value, str):
        return replace(f'Quote it: "{value.raw}"', value.span, f'"{value.raw}"')
    return None


def _regex_rule(ctx: Context, kind: AssertionType, entries: Entries) -> dict[str, Any] | None:
    config = _value_rule(ctx, kind, entries)
    flags_node = entries.get("flags")
    flags = ""
    bad_flags: str | None = None
    if flags_node is not None:
        text = ctx.str_of(flags_node)
        if text is None:  # AgentV's loader reads only a string (asString): the regex runs without flags
            ctx.out.warning("wrong-type", flags_node.span, f"'flags' must be a string such as \"i\"; found "
                            f"{node_type_name(flags_node)}. AgentV ignores it, and so does evalspec's run.")
        else:
            bad = [c for c in text if c not in _JS_FLAGS]
            dup = sorted({c for c in text if text.count(c) > 1})
            if bad or dup or ("u" in text and "v" in text):
                detail = (f"unknown flag '{bad[0]}'" if bad else f"flag '{dup[0]}' repeated" if dup
                          else "'u' and 'v' cannot be combined")
                kept = "".join(dict.fromkeys(c for c in text if c in _JS_FLAGS))
                if "u" in kept and "v" in kept:
                    kept = kept.replace("v", "")
                # AgentV runs it: `new RegExp(value, flags)` throws and the assertion scores 0 (its
                # evaluator's failure, "Invalid flags supplied to RegExp constructor."), as evalspec's run.
                bad_flags = text
                ctx.out.warning("invalid-regex-flags", flags_node.span,
                                f"Invalid regex flags '{text}': {detail} (JavaScript flags: d g i m s u v y); "
                                "AgentV runs the file and scores this assertion 0.",
                                fix=replace(f"Change to '{kept}'", flags_node.span, edits.scalar(kept, flow=True))
                                if kept else None)
            else:
                flags = text
    if config is None:
        return None
    value = entries.get("value")
    assert value is not None
    from ..scoring.js_regex import regex_findings  # JavaScript's rules (QuickJS's verdict), not Python's

    problems = [p for p in regex_findings(config["value"], flags, dialect="agentv") if p.where == "pattern"]
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        # AgentV's validator only warns and its run scores the assertion as its evaluator's failure (score
        # 0, "Evaluator '…' failed: Invalid regular expression: …"); a negated one stays that failure.
        ctx.out.warning("invalid-regex", value.span,
                        f"Invalid regex pattern '{config['value']}': {errors[0].message} (AgentV runs the file "
                        "and scores this assertion 0, as its evaluator's failure).",
                        fix=_inline_flag_fix(ctx, entries, config["value"]) if errors[0].code == "inline-flags"
                        else None)
    elif problems:
        ctx.out.warning("regex-warning", value.span, f"Regex pattern '{config['value']}': {problems[0].message}")
    if flags or bad_flags:
        config["flags"] = bad_flags or flags
    return config


def _inline_flag_fix(ctx: Context, entries: Entries, pattern: str) -> Fix | None:
    """`value: "(?i)abc"` → `value: "abc"` plus `flags: i` (JavaScript has no inline flags)."""
    from ..scoring.js_regex_lint import strip_leading_inline_i

    rest = strip_leading_inline_i(pattern)
    key, value = entries.key("value"), entries.get("value")
    if rest is None or key is None or value is None or "flags" in entries or value.span.start_line != value.span.end_line:
        return None
    line = ctx.line(key.span.start_line)
    if not dash_before(line, key.span.start_col):
        return None  # a flow mapping: no line of its own to add
    indent = " " * key.span.start_col
    return Fix("Move '(?i)' to 'flags: i'", (
        Edit(value.span, json.dumps(rest, ensure_ascii=False)),
        Edit(Span.point(key.span.start_line + 1, 0), f"{indent}flags: i\n")))


def _rubrics_rule(ctx: Context, kind: AssertionType, entries: Entries) -> dict[str, Any] | None:
    node = entries.get("criteria")
    if node is None:
        return None
    criteria = check_criteria(ctx, node, entries.key("criteria"), owner="criteria")
    if isinstance(node, Sequence) and not node.items:
        ctx.out.error("missing-criteria", node.span, "Assertion type 'rubrics' requires a non-empty 'criteria' list.")
        return None
    if not criteria:
        return None
    config = _plain_config(ctx, kind, entries)
    config["criteria"] = criteria
    return config


def _judge_rule(ctx: Context, kind: AssertionType, entries: Entries) -> dict[str, Any]:
    config = _plain_config(ctx, kind, entries)
    rubrics = entries.get("rubrics")
    if rubrics is not None:
        config["rubrics"] = check_criteria(ctx, rubrics, entries.key("rubrics"), owner="rubrics", strings=False)
    prompt = entries.get("prompt")
    if prompt is not None:
        config.update(_prompt(ctx, prompt))
    return config


def _prompt(ctx: Context, node: Node) -> dict[str, Any]:
    text = ctx.str_of(node)
    if text is not None:
        if ctx.folder is None or not looks_like_prompt_file(text):
            return {"prompt": text}
        path = ctx.fs.resolve(text, ctx.roots)
        if path is None:
            ctx.out.warning("missing-prompt-file", node.span,
                            f"Prompt file '{text}' not found next to the eval file or in a parent folder; "
                            "AgentV would send this text itself as an inline prompt.")
            return {"prompt": text}
        if ctx.outside_project(node, text, path):
            return {"prompt": text}
        if path.suffix.lower() in (".md", ".markdown", ".txt", ".prompt"):
            content = ctx.fs.read_text(path, folder=ctx.folder)
            if content is not None and not any(m.group(1) in _PROMPT_NEEDS for m in _PROMPT_VAR.finditer(content)):
                ctx.out.error("judge-prompt-variables", node.span,
                              f"Judge prompt '{text}' uses neither {{{{ answer }}}} nor {{{{ expected_output }}}}; "
                              "AgentV rejects a template that does not show the judge the answer.")
        return {"prompt": text, "prompt_path": str(path)}
    if isinstance(node, Mapping):
        entries = ctx.object(node, "prompt_script", handled=("command", "script"),
                             fixes=script_fixes(node))
        if entries is None:
            return {}
        argv_node = entries.get("command") if "command" in entries else entries.get("script")
        field = "command" if "command" in entries else "script"
        if argv_node is None:
            ctx.out.error("missing-command", node.span, "A prompt script needs 'command': the script to run, "
                          "as an argv list.")
            return {}
        if ctx.str_of(argv_node) is not None:  # asStringArray: AgentV's loader throws and skips the test
            ctx.out.error("invalid-command", argv_node.span,
                          f"A prompt script's '{field}' must be an argv list; AgentV skips a test whose prompt "
                          f"'{field}' is a string.")
            return {}
        argv = _argv(ctx, argv_node, field, warn_string=False)
        if argv and ctx.folder is not None and isinstance(argv_node, Sequence):
            # AgentV resolves the last word as a file next to the eval file or in a parent folder, and
            # skips the test when there is none ("prompt command file not found")
            last = argv_node.items[-1]
            path = ctx.fs.resolve(argv[-1], ctx.roots)
            if path is None:
                ctx.out.error("missing-prompt-script", last.span,
                              f"Prompt script '{argv[-1]}' not found next to the eval file or in a parent folder; "
                              "AgentV skips this test (\"prompt command file not found\").")
            else:
                ctx.outside_project(last, argv[-1], path, "run it")
        return {"prompt": {"command": argv, "config": ctx.values.plain(entries.get("config")) or {}}}
    return {}


def _code_judge_rule(ctx: Context, kind: AssertionType, entries: Entries) -> dict[str, Any] | None:
    command_node = entries.get("command")
    field = "command"
    if command_node is None:
        command_node, field = entries.get("script"), "script"
    if command_node is None:
        type_node = entries.node.get("type")
        ctx.out.error("missing-command", type_node.span if type_node else entries.node.span,
                      "Assertion type 'code-judge' requires 'command': the script to run, as an argv list "
                      "(e.g. [bun, run, ./judges/check.ts]).")
        return None
    argv = _argv(ctx, command_node, field, warn_string=field == "command")
    if argv is None:
        return None
    cwd = ctx.folder
    cwd_node = entries.get("cwd")
    cwd_text = ctx.str_of(cwd_node)
    if cwd_text is not None and ctx.folder is not None:
        # normpath, not resolve(): following symlinks would turn `cwd: .` into another spelling of
        # the eval file's folder, and messages would name a path the user never wrote.
        cwd = Path(os.path.normpath(ctx.folder / cwd_text)) if not cwd_text.startswith("/") else ctx.fs.resolve(
            cwd_text, ctx.roots)
        if cwd is None or not ctx.fs.is_dir(cwd):
            ctx.out.warning("missing-cwd", cwd_node.span,  # type: ignore[union-attr]
                            f"Working directory '{cwd_text}' not found (relative to the eval file's folder).")
            cwd = None
        elif ctx.outside_project(cwd_node, cwd_text, cwd, "run the judge in it"):  # type: ignore[arg-type]
            cwd = None
    if cwd is not None:
        _scripts_exist(ctx, command_node, cwd)
    config: dict[str, Any] = {"command": argv}
    shell_text = ctx.str_of(command_node)
    if shell_text is not None:
        # A string runs through the platform's shell when the judge runs (AgentV's rule), not as `argv`.
        config["shell"] = shell_text
    if cwd is not None:
        config["cwd"] = str(cwd)
    target = ctx.values.plain(entries.get("target")) if entries.get("target") is not None else None
    if target is True or isinstance(target, dict):  # else AgentV: "Invalid target config …", ignored
        config["target"] = target
    # Extra keys are passed through to the script as `config`, next to an explicit `config`.
    spec = kind.spec
    passed = {str(k.value): ctx.values.plain(v) for k, v in entries.node.items() if spec.lookup(str(k.value)) is None}
    explicit = ctx.values.plain(entries.get("config"))
    if isinstance(explicit, dict):
        passed.update(explicit)
    config["config"] = passed
    return config


def _argv(ctx: Context, node: Node, field: str, *, warn_string: bool) -> list[str] | None:
    """A command as argv: a non-empty list of strings (a string is split, with a warning for `command`)."""
    text = ctx.str_of(node)
    if text is not None:
        words = edits.split_command(text)
        if not words:
            ctx.out.error("invalid-command", node.span, f"'{field}' cannot be empty.")
            return None
        if warn_string:
            ctx.out.warning("command-string", node.span,
                            f"'{field}' is a string, which AgentV splits with the platform's shell; write it "
                            f"as an argv list: {edits.flow_list(words)}.",
                            fix=replace(f"Write as {edits.flow_list(words)}", node.span, edits.flow_list(words)))
        return words
    if not isinstance(node, Sequence):
        ctx.out.error("invalid-command", node.span,
                      f"'{field}' must be an argv list of strings; found {node_type_name(node)}.")
        return None
    if not node.items:
        ctx.out.error("invalid-command", node.span, f"'{field}' cannot be empty.")
        return None
    argv: list[str] = []
    for i, item in enumerate(node.items):
        s = ctx.str_of(item)
        if s is None:
            ctx.out.error("invalid-command", item.span, f"{field}[{i}] must be a string.",
                          fix=_quote_fix(item))
            return None
        argv.append(s)
    return argv


def _scripts_exist(ctx: Context, node: Node, cwd: Any) -> None:
    """Report argv tokens that name a local script which does not exist in `cwd`."""
    if cwd is None:
        return
    for item, token in ctx.script_tokens(node):
        path = cwd / token
        if not ctx.fs.exists(path):
            where = "the eval file's folder" if cwd == ctx.folder else f"'{ctx.display(cwd)}'"
            ctx.out.warning("missing-script", item.span,
                            f"Script '{token}' not found (relative to {where}); the judge would fail when run.")
        else:
            ctx.outside_project(item, token, path, "run it")


# AgentV's EVALUATOR_KIND_VALUES: a composite member's type must be one of these exactly (isEvaluatorKind;
# a top-level type is normalized from snake_case first, a member's is not)
MEMBER_TYPES = frozenset((
    "code-judge", "llm-judge", "rubric", "composite", "tool-trajectory", "field-accuracy", "latency", "cost",
    "token-usage", "execution-metrics", "agent-judge", "contains", "contains-any", "contains-all", "icontains",
    "icontains-any", "icontains-all", "starts-with", "ends-with", "regex", "is-json", "equals", "rubrics"))


def _members_agentv_skips(ctx: Context, children_node: Node) -> None:
    """A member whose type AgentV does not take as written ("Skipping member evaluator with invalid
    name/type"): a check it leaves out, so an error (an unnamed member is scored under its type's name)."""
    if not isinstance(children_node, Sequence):
        return
    for item in children_node.items:
        type_node = item.get("type") if isinstance(item, Mapping) else None
        raw = ctx.str_of(type_node)
        if type_node is None or raw is None or raw in MEMBER_TYPES:
            continue
        fixed = normalize_assertion_type(raw)
        fixable = fixed in MEMBER_TYPES
        ctx.out.error("invalid-member-type", type_node.span,
                      f"AgentV skips a composite member of type '{raw}': inside a composite the type must be a "
                      "built-in type as written" + (f" ('{fixed}')." if fixable else "."),
                      fix=replace(f"Change to '{fixed}'", type_node.span, fixed) if fixable else None)


def _composite_rule(ctx: Context, kind: AssertionType, entries: Entries) -> dict[str, Any] | None:
    children_node = entries.get("assert")
    children = check_assert_list(ctx, children_node, field="assert") if children_node is not None else []
    if children_node is not None:
        _members_agentv_skips(ctx, children_node)
    aggregator_node = entries.get("aggregator")
    if aggregator_node is None:
        return None
    agg = ctx.object(aggregator_node, "aggregator", handled=("type",),
                     missing={"type": ("missing-aggregator", "An aggregator needs a 'type': weighted_average, "
                                       "threshold, code-judge or llm-judge.")})
    if agg is None:
        return None
    type_node = agg.get("type")
    agg_type = ctx.str_of(type_node)
    if type_node is not None and agg_type not in AGGREGATOR_TYPES:
        shown = agg_type if agg_type is not None else node_type_name(type_node)
        best = closest(agg_type, AGGREGATOR_TYPES, cutoff=0.6) if agg_type else None
        message = (f"Invalid aggregator type '{shown}'; use weighted_average, threshold, code-judge or "
                   "llm-judge")
        ctx.out.error("invalid-aggregator", type_node.span, f"{message}. Did you mean '{best}'?" if best
                      else message + ".", fix=replace(f"Change to '{best}'", type_node.span, best) if best else None)
        return None
    agg_type = (agg_type or "").replace("_", "-") if agg_type not in ("weighted_average",) else agg_type
    if agg_type == "threshold" and "threshold" not in agg:
        ctx.out.error("missing-field", type_node.span,  # type: ignore[union-attr]
                      "A threshold aggregator needs 'threshold': the share of children that must pass (0–1).")
    if agg_type == "code-judge" and "path" not in agg:
        ctx.out.error("missing-field", type_node.span,  # type: ignore[union-attr]
                      "A code-judge aggregator needs 'path': the script that combines the children's results.")
    elif agg_type == "code-judge" and ctx.folder is not None:
        # The script (`path`, a command line) runs in `cwd`: neither may leave the project.
        cwd: Path | None = ctx.folder
        cwd_node = agg.get("cwd")
        cwd_text = ctx.str_of(cwd_node)
        if cwd_text:
            cwd = ctx.fs.resolve(cwd_text, [ctx.folder])
            if cwd is not None and ctx.outside_project(cwd_node, cwd_text, cwd, "run the aggregator in it"):  # type: ignore[arg-type]
                cwd = None
        path_node = agg.get("path")
        if cwd is not None and path_node is not None:
            _scripts_exist(ctx, path_node, cwd)
    weights = agg.get("weights")
    names = {c.name for c in children}
    if isinstance(weights, Mapping) and children:
        for k, _ in weights.pairs:
            if isinstance(k, Scalar) and str(k.value) not in names:
                best = closest(str(k.value), names)
                ctx.out.warning("unknown-weight-name", k.span,
                                f"No child assertion is named '{k.value}'"
                                + (f"; did you mean '{best}'?" if best else f" (children: {', '.join(sorted(names))})."),
                                fix=replace(f"Rename to '{best}'", k.span, best) if best else None)
    if children_node is not None and isinstance(children_node, Sequence) and not children_node.items:
        ctx.out.error("missing-assert", children_node.span, "A composite needs at least one child assertion.")
    aggregator = ctx.values.plain(aggregator_node)
    if isinstance(aggregator, dict):
        aggregator["type"] = agg_type
    return {"aggregator": aggregator, _CHILDREN: children}


def _trajectory_rule(ctx: Context, kind: AssertionType, entries: Entries) -> dict[str, Any] | None:
    mode_node = entries.get("mode")
    if mode_node is None:
        return None
    mode = ctx.str_of(mode_node)
    if mode not in TRAJECTORY_MODES:
        shown = mode if mode is not None else getattr(mode_node, "raw", node_type_name(mode_node))
        best = closest(mode, TRAJECTORY_MODES, cutoff=0.6) if mode else None
        message = (f"Invalid tool_trajectory mode '{shown}' (must be any_order, in_order, exact, subset or "
                   "superset)")
        ctx.out.error("invalid-mode", mode_node.span, f"{message}; did you mean '{best}'?" if best else message + ".",
                      fix=replace(f"Change to '{best}'", mode_node.span, best) if best else None)
        return None
    minimums, expected = entries.get("minimums"), entries.get("expected")
    if mode == "any_order":
        if minimums is None:
            ctx.out.error("missing-minimums", mode_node.span,
                          "tool-trajectory mode any_order requires 'minimums' (e.g. {search: 1}).")
            return None
        if not isinstance(minimums, Mapping):
            ctx.out.error("wrong-type", minimums.span,
                          f"'minimums' must map tool names to counts; found {node_type_name(minimums)}.")
            return None
        for k, v in minimums.pairs:
            # AgentV keeps any number ≥ 0 (`count >= minimum`: 0.5 needs one call) and drops the rest
            if not (is_number(v) and v.value >= 0):
                shown = v.raw if isinstance(v, Scalar) else node_type_name(v)
                ctx.out.error("invalid-value", v.span if v is not None else k.span,
                              f"The minimum for '{getattr(k, 'value', k)}' must be a number ≥ 0; found {shown}.")
            elif not float(v.value).is_integer():
                met = (f"{math.ceil(v.value)} call(s) or more meet it" if math.isfinite(v.value)
                       else "no count meets it")
                ctx.out.warning("invalid-value", v.span,
                                f"The minimum for '{getattr(k, 'value', k)}' is not a whole number ({v.raw}): {met}.")
    else:
        if expected is None:
            ctx.out.error("missing-expected", mode_node.span,
                          f"tool-trajectory mode {mode} requires 'expected' (a list of {{tool: name}}).")
            return None
        if not isinstance(expected, Sequence):
            ctx.out.error("wrong-type", expected.span,
                          f"'expected' must be a list of {{tool, args?}}; found {node_type_name(expected)}.")
            return None
        for item in expected.items:
            ctx.object(item, "tool_expectation")
    return _plain_config(ctx, kind, entries)


def _accuracy_rule(ctx: Context, kind: AssertionType, entries: Entries) -> dict[str, Any] | None:
    fields = entries.get("fields")
    if fields is not None and not isinstance(fields, Sequence):
        ctx.out.error("wrong-type", fields.span, f"'fields' must be an array, found {node_type_name(fields)}.")
    if isinstance(fields, Sequence):
        if not fields.items:
            ctx.out.error("missing-field", fields.span,
                          "Assertion type 'field-accuracy' requires a non-empty 'fields' list.")
            return None
        for item in fields.items:
            found = ctx.object(item, "accuracy_field", handled=("tolerance",))
            tolerance = found.get("tolerance") if found is not None else None
            if tolerance is not None:
                _check_tolerance(ctx, tolerance)
    return _plain_config(ctx, kind, entries)


def _check_tolerance(ctx: Context, node: Node) -> None:
    """AgentV's loader keeps a `tolerance` only when it is a number (a string "0.5" is dropped: the values
    must then be equal), and compares `diff <= tolerance`: a negative or NaN one never matches. Those run
    in AgentV and are warnings; an infinite one matches any two numbers, a check that compares nothing."""
    if is_number(node):
        value = float(node.value)
        if math.isinf(value) and value > 0:
            ctx.out.error("out-of-range", node.span, f"'tolerance' must be a finite number, found {node.raw}: "
                          "every two numbers would match, so the field checks nothing.")
        elif math.isnan(value) or value < 0:
            ctx.out.warning("out-of-range", node.span, f"'tolerance' must be at least 0, found {node.raw}: no "
                            "difference is within it, so this field never matches.")
        return
    fix = None
    if isinstance(node, Scalar) and isinstance(node.value, str):
        text = node.value.strip()
        if text.isascii() and text.replace(".", "", 1).isdigit():  # "0.5" → 0.5
            fix = replace(f"Write it as a number: {text}", node.span, text)
    ctx.out.warning("wrong-type", node.span,
                    f"'tolerance' must be a number, found {node_type_name(node)}. AgentV ignores it: the values "
                    "must then be equal (tolerance 0).", fix=fix)


# The rules the registry's entries name (`check="evalspec.agentv.assertions:REGEX"`, …).
PLAIN = TypeRule(_plain_config)
VALUE = TypeRule(_value_rule, ("value",))
REGEX = TypeRule(_regex_rule, ("value", "flags"))
RUBRICS = TypeRule(_rubrics_rule, ("criteria",))
JUDGE = TypeRule(_judge_rule, ("prompt", "rubrics"))
CODE_JUDGE = TypeRule(_code_judge_rule, ("command", "script", "cwd"), fixes=script_fixes)
COMPOSITE = TypeRule(_composite_rule, ("assert", "aggregator"))
TRAJECTORY = TypeRule(_trajectory_rule, ("mode", "minimums", "expected"))
ACCURACY = TypeRule(_accuracy_rule, ("fields",))
_TEXT_ONLY_RULES = (PLAIN, VALUE, REGEX)  # the rules that read nothing but the item (_kept_or_checked)


def rubrics_entry(ctx: Context, key: Scalar, node: Node) -> Assertion | None:
    """A deprecated test-level `rubrics:` list as the `type: rubrics` assertion it means."""
    criteria = check_criteria(ctx, node, key, owner="rubrics")
    if not criteria:
        return None
    # AgentV's parseInlineRubrics names it `rubric`
    return Assertion.build(type="rubrics", name="rubric", weight=1.0, required=False, negate=False,
                                     config={"criteria": criteria}, children=[], custom=False, span=node.span,
                                     source_path=ctx.path)

