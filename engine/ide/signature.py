"""Signature help: the arguments of the point function or assertion being written, the current one marked.

`signature_help(analysis, line, col)` returns a `Signature` (a label, its parameters as label ranges
with their documentation, which one the cursor is on) or None. Read from the registry's declarations:

- a Weval point function (`$contains_at_least_n_of: [n, [text, …]]`, `$word_count_between: [min, max]`):
  the parameters of its argument shape (registry/weval_functions.Arg); the active one is the element of
  the argument list the cursor is in, or the key of an object argument (`$call: {service, …}`);
- an AgentV assertion (`type: field-accuracy`): its own fields, the active one the key being written;
  inside one of its objects (a `fields` item of field-accuracy, a trajectory's expected tool call…)
  that object's fields.

Optional parameters end in `?`. Reads only the analysis (the cursor context of completion).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..detect import FileKind
from ..registry.agentv_assertions import (
    ASSERTION_OBJECTS,
    ASSERTION_TYPES,
    COMMON_FIELDS,
)
from ..registry.fields import FieldSpec, ObjectSpec
from ..registry.weval_functions import SHAPES, Arg, PointFunction, resolve_function
from .context import KEY, VALUE, cursor_context


@dataclass(frozen=True, slots=True)
class Parameter:
    label: str
    doc: str


@dataclass(frozen=True, slots=True)
class Signature:
    label: str
    doc: str
    parameters: tuple[Parameter, ...]
    active: int | None  # index into parameters; None: none of them

    def offsets(self) -> list[tuple[int, int]]:
        """Each parameter's [start, end) in `label`, in code points (in order, so repeated words resolve)."""
        out: list[tuple[int, int]] = []
        at = 0
        for p in self.parameters:
            start = self.label.find(p.label, at)
            if start < 0:
                start = self.label.find(p.label)
            out.append((start, start + len(p.label)))
            at = start + len(p.label)
        return out


_OBJECT_ARGS = {Arg.CALL: {"service": 0, "url": 0}, Arg.TOOL_ARGS: {"name": 0, "where": 1, "normalizeWhitespace": 2}}
_COMMON = {f.name for f in COMMON_FIELDS}
_OBJECTS = {spec.name: spec for spec in ASSERTION_OBJECTS}


def signature_help(analysis: Any, line: int, col: int) -> Signature | None:
    if analysis.kind not in (FileKind.WEVAL, FileKind.AGENTV) or analysis.parsed.too_large:
        return None
    if not 0 <= line < len(analysis.parsed.lines):
        return None
    ctx = cursor_context(analysis, line, col)
    if analysis.kind is FileKind.WEVAL:
        return _point_function(ctx)
    return _assertion(ctx)


def function_signature(fn: PointFunction, written: str, active: int | None) -> Signature:
    shape, params = SHAPES[fn.arg].written, SHAPES[fn.arg].params
    return Signature(f"${written}: {shape}", fn.doc, tuple(Parameter(label, doc) for label, doc in params), active)


def _point_function(ctx: Any) -> Signature | None:
    path = ctx.path
    at = next((k for k in range(len(path) - 1, -1, -1)
               if isinstance(path[k], str) and path[k].startswith("$") and path[k] != "$ref"), None)
    if at is None:
        return None
    written = str(path[at])[1:]
    fn = resolve_function(written)
    if fn is None:
        return None
    after = path[at + 1] if at + 1 < len(path) else None
    count = len(SHAPES[fn.arg].params)
    if fn.arg in _OBJECT_ARGS:
        active = _OBJECT_ARGS[fn.arg].get(str(after)) if isinstance(after, str) else 0
    elif isinstance(after, int) and count > 1:
        active = after if after < count else None
    else:
        active = 0
    if ctx.position == KEY and at == len(path) - 1 and ctx.key_span is not None:
        return None  # on the function's own name: completion and hover, not its arguments
    return function_signature(fn, written, active)


def _assertion(ctx: Any) -> Signature | None:
    spec: ObjectSpec | None = ctx.spec
    if spec is None:
        return None
    written = ctx.present.get("type", "")
    if spec.name.startswith("assertion:"):
        t = ASSERTION_TYPES.get(spec.name.removeprefix("assertion:"))
        if t is None:
            return None
        fields = tuple(f for f in t.fields if f.name not in _COMMON)
        label_name = written or t.name
        title = f"type: {label_name}"
        doc = t.doc + ("\n\n" + t.scoring if t.scoring else "")
    elif spec.name in _OBJECTS and spec.name != "assertion":
        fields = spec.fields
        title = spec.title
        doc = spec.doc
    else:
        return None
    if not fields:
        return None
    params = tuple(Parameter(_param_label(f), f.doc) for f in fields)
    label = f"{title} — {', '.join(p.label for p in params)}"
    key = ctx.key if ctx.position == VALUE else _typed_key(ctx)
    active = next((k for k, f in enumerate(fields) if key is not None and (key == f.name or key in f.aliases
                                                                          or key in f.deprecated_aliases)), None)
    if active is None and key and ctx.position == KEY:  # a key half typed: the one field it begins
        begun = [k for k, f in enumerate(fields) if f.name.startswith(key)]
        active = begun[0] if len(begun) == 1 else None
    return Signature(label, doc, params, active)


def _typed_key(ctx: Any) -> str | None:
    if ctx.position != KEY:
        return None
    field: FieldSpec | None = ctx.field
    if field is not None:
        return field.name
    return ctx.prefix or None


def _param_label(f: FieldSpec) -> str:
    return f.name if f.required else f"{f.name}?"

