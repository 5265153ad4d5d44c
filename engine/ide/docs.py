"""Markdown for fields, point functions, assertion types, enum values and models.

Hover shows these texts and completion puts them in its items' documentation, so both say the
same thing, and both say only what the registry declares.
"""

from __future__ import annotations

from functools import lru_cache

from ..registry.agentv_assertions import COMMON_FIELDS, AssertionType
from ..registry.fields import FieldSpec, ObjectSpec
from ..registry.weval_functions import POINT_FUNCTIONS, PointFunction

_TYPE_WORDS = {"string": "string", "number": "number", "integer": "integer", "boolean": "boolean",
               "array": "list", "object": "mapping", "null": "null"}


def type_text(f: FieldSpec) -> str:
    words = [_TYPE_WORDS.get(t, t) for t in f.types]
    if f.items and "array" in f.types:
        words = [f"list of {_TYPE_WORDS.get(f.items, f.items)}" if w == "list" else w for w in words]
    return " | ".join(words)


def field_detail(f: FieldSpec) -> str:
    """One line: the type, and whether it is required, deprecated or has a default."""
    parts = [type_text(f)]
    if f.enum:
        parts = [" | ".join(f.enum)]
    if f.required:
        parts.append("required")
    if f.default is not None:
        parts.append(f"default {_value_text(f.default)}")
    if f.deprecated:
        parts.append("deprecated")
    return " · ".join(parts)


def _value_text(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


# Registry declarations live as long as the process and hold dicts (so they do not hash): cache by id.
_FIELD_DOCS: dict[tuple[int, int, str | None], str] = {}


def field_markdown(f: FieldSpec, owner: ObjectSpec | None, written: str | None = None) -> str:
    """A field's hover text. `written` is the spelling in the file, when it is an alias."""
    key = (id(f), id(owner), written)
    text = _FIELD_DOCS.get(key)
    if text is None:
        text = _FIELD_DOCS[key] = _field_markdown(f, owner, written)
    return text


def _field_markdown(f: FieldSpec, owner: ObjectSpec | None, written: str | None) -> str:
    name = written or f.name
    lines = [f"**{name}**" + (f" — {owner.title}" if owner is not None else "") + f" · `{type_text(f)}`", ""]
    if written and written != f.name:
        if written in f.deprecated_aliases:
            lines.append(f"*Deprecated* spelling of **`{f.name}`**: write `{f.name}` instead.")
        else:
            lines.append(f"Alias of **`{f.name}`**.")
        lines.append("")
    if f.deprecated:
        lines += [f"*Deprecated:* {f.deprecated}", ""]
    lines.append(f.doc)
    facts = []
    if f.required:
        facts.append("Required.")
    if f.enum:
        facts.append("One of " + ", ".join(f"`{e}`" for e in f.enum) + ".")
    if f.default is not None:
        facts.append(f"Default: `{_value_text(f.default)}`.")
    rng = _range(f)
    if rng:
        facts.append(rng)
    others = [a for a in f.all_names if a != name]
    if others:
        facts.append("Also written: " + ", ".join(f"`{a}`" + (" (deprecated)" if a in f.deprecated_aliases else "")
                                               for a in others) + ".")
    if facts:
        lines += ["", " ".join(facts)]
    if f.example:
        lines += ["", "```yaml", f.example, "```"]
    return "\n".join(lines)


def _range(f: FieldSpec) -> str | None:
    def num(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else str(x)

    if f.minimum is not None and f.maximum is not None:
        return f"Range: {num(f.minimum)} to {num(f.maximum)}."
    if f.minimum is not None:
        return f"At least {num(f.minimum)}."
    if f.exclusive_minimum is not None:
        return f"Greater than {num(f.exclusive_minimum)}."
    if f.maximum is not None:
        return f"At most {num(f.maximum)}."
    return None


def function_detail(fn: PointFunction) -> str:
    return f"{fn.arg.value} → {'graded 0–1' if fn.graded else 'binary 0/1'}"


@lru_cache(maxsize=512)
def function_markdown(fn: PointFunction, written: str | None = None) -> str:
    written = written.lstrip("$") if written else fn.name
    lines = [f"**${written}** — point function · `{fn.arg.value}` → "
             f"{'graded (0 to 1)' if fn.graded else 'binary (1 or 0)'}", ""]
    if written != fn.name:
        lines += [f"Alias of **`${fn.name}`**.", ""]
    lines.append(fn.doc)
    if fn.negates:
        lines += ["", f"Negates `${fn.negates}`."]
    negation = POINT_FUNCTIONS.get(f"not_{fn.name}")
    if negation is not None:
        lines += ["", f"Negation: `${negation.name}`."]
    if fn.aliases:
        lines += ["", "Also written: " + ", ".join(f"`${a}`" for a in fn.aliases) + "."]
    if fn.runs_code:
        lines += ["", "Runs only during an explicit run, never while editing."]
    lines += ["", "```yaml", f"should:\n  - {fn.example}", "```"]
    return "\n".join(lines)


_ASSERTION_DOCS: dict[tuple[int, str | None], str] = {}


def assertion_markdown(t: AssertionType, written: str | None = None) -> str:
    key = (id(t), written)
    text = _ASSERTION_DOCS.get(key)
    if text is None:
        text = _ASSERTION_DOCS[key] = _assertion_markdown(t, written)
    return text


def _assertion_markdown(t: AssertionType, written: str | None) -> str:
    written = written or t.name
    lines = [f"**{written}** — assertion type ({t.kind})", ""]
    if written != t.name:
        lines += [f"Same type as **`{t.name}`** (kebab-case is preferred).", ""]
    lines.append(t.doc)
    lines += ["", f"**Score:** {t.scoring}"]
    own = [f for f in t.fields if not f.deprecated]
    if own:
        lines += ["", "**Fields:**"]
        for f in own:
            lines.append(f"- `{f.name}`{' (required)' if f.required else ''} — {f.doc}")
    if t.needs_one_of:
        lines += ["", "Needs at least one of " + ", ".join(f"`{n}`" for n in t.needs_one_of) + "."]
    lines += ["", "Every assertion also takes " + ", ".join(f"`{f.name}`" for f in COMMON_FIELDS if f.name != "type")
              + "."]
    if not t.runnable:
        lines += ["", "*evalspec checks this type but does not score it yet.*"]
    lines += ["", "```yaml", "assert:", _indent(t.example, 2), "```"]
    return "\n".join(lines)


def _indent(text: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + line for line in text.split("\n"))


def enum_markdown(f: FieldSpec, value: str) -> str:
    others = ", ".join(f"`{e}`" if e != value else f"**`{e}`**" for e in f.enum)
    return f"`{value}` — a value of **{f.name}**: {others}.\n\n{f.doc}"
