"""Hover: what a key, point function, assertion type, enum value or model id means.

Keys show their field's documentation (type, default, the canonical name of an alias, deprecation);
`$function` keys their argument shape, graded or binary, and an example; an AgentV `type:` value its
assertion type's fields and scoring; a model id its provider and the variable that holds the API
key (a collection, its models). A Weval prompt without an `id` shows the id that will be generated
for it, when hovering its `- ` or its first key.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from ..detect import FileKind
from ..findings import Span
from ..registry.agentv_assertions import ASSERTION_SPELLINGS, ASSERTION_TYPES
from ..registry.weval_functions import resolve_function
from ..source import Node
from ..validation.yaml_text import flow
from . import docs, model_ids, paths
from . import schema as sc
from .context import KEY, VALUE, cursor_context
from .layout import layout
from .lines import scalar_text, shape
from .markdown_text import md_code, md_fence, md_text


@dataclass(frozen=True, slots=True)
class HoverInfo:
    markdown: str
    span: Span  # what the hover is about (a key, a value, a `- `)


def hover(analysis: Any, line: int, col: int) -> HoverInfo | None:
    """Documentation for what is at (line, col): 0-based line, col in code points."""
    if analysis.kind is FileKind.NONE or analysis.parsed.too_large:
        return None
    lines: list[str] = analysis.parsed.lines
    if not 0 <= line < len(lines):
        return None
    text = lines[line].rstrip("\r")
    sh = shape(text)
    if sh.blank or sh.doc_marker:
        return None
    if analysis.kind is FileKind.WEVAL and sh.dashes and sh.dashes[0] <= col < sh.content_col:
        gen = _generated_id(analysis, line)
        if gen is not None:
            d = sh.dashes[0]
            return HoverInfo(gen, Span(line, d, line, d + 1))
        return None
    # Hover the word under the cursor: step inside it so the context reads the key or value.
    ctx = cursor_context(analysis, line, min(col + 1, len(text)) if col < len(text) else col)
    if ctx.position == KEY and ctx.key_span is not None and ctx.key_span.start_col <= col <= ctx.key_span.end_col:
        return _key_hover(analysis, ctx, sh.key or "", line)
    if ctx.position == VALUE and ctx.value_span is not None and \
            ctx.value_span.start_col <= col <= ctx.value_span.end_col:
        return _value_hover(analysis, ctx)
    return None


def _key_hover(analysis: Any, ctx: Any, key: str, line: int) -> HoverInfo | None:
    span = ctx.key_span
    text: str | None = None
    slot = ctx.slot
    if slot.kind == sc.POINT and key.startswith("$"):
        if key == "$ref":
            text = ("**$ref** — a named point from the header's `point_defs`: the definition is used in "
                    "place of this point, with this point's `weight`.")
        else:
            fn = resolve_function(key)
            text = docs.function_markdown(fn, key) if fn is not None else None
    elif slot.kind == sc.MESSAGE and key in sc.W_SHORTHAND_FIELD:
        text = docs.field_markdown(sc.W_SHORTHAND_FIELD[key], sc.wv.MESSAGE)
    elif ctx.spec is not None:
        hit = ctx.spec.lookup(key)
        if hit is not None:
            f, how = hit
            text = docs.field_markdown(f, ctx.spec, key if how != "canonical" else None)
    if analysis.kind is FileKind.WEVAL and ctx.section == "prompt" and len(ctx.path) == 2:
        gen = _generated_id(analysis, line)
        if gen is not None:
            text = gen + ("\n\n---\n\n" + text if text else "")
    return HoverInfo(text, span) if text else None


# No assertion type, model id, point name or enum value is longer. A longer value (a prompt on a 4 MB
# line) has no hover, and is not unquoted for nothing: two str.replace over it held the interpreter
# lock for 30 ms, and a request on another document waited for them.
_LONGEST_NAME = 1_000


def _value_hover(analysis: Any, ctx: Any) -> HoverInfo | None:
    span = ctx.value_span
    line = analysis.parsed.lines[span.start_line]
    if min(span.end_col, len(line)) - span.start_col > _LONGEST_NAME:
        return None
    raw = line[span.start_col:span.end_col]
    value = scalar_text(raw)
    slot = ctx.slot
    f = ctx.field
    text: str | None = None
    if slot.value == sc.V_ASSERTION_TYPE:
        t = ASSERTION_TYPES.get(ASSERTION_SPELLINGS.get(value, value.replace("_", "-")))
        if t is not None:
            text = docs.assertion_markdown(t, value)
        else:
            custom = paths.custom_assertions(analysis)
            found = custom.get(value) or custom.get(value.replace("_", "-"))
            # The file's own words, escaped: a hover renders Markdown (markdown_text.py).
            text = (f"**{md_text(value)}** — custom assertion, from {md_code(str(found))}" if found is not None else
                    f"**{md_text(value)}** — not a built-in assertion type: AgentV loads it from "
                    f"{md_code('.agentv/assertions/' + value.replace('_', '-') + '.ts')}, which was not found.")
    elif slot.value == sc.V_MODEL or slot.kind == sc.MODEL:
        text = model_ids.model_markdown(value, analysis)
    elif slot.value == sc.V_REF:
        text = _ref_markdown(analysis, value)
    elif slot.value == sc.V_FUNCTION:
        fn = resolve_function(value)
        text = docs.function_markdown(fn, value) if fn is not None else None
    elif f is not None and f.enum and value in f.enum:
        text = docs.enum_markdown(f, value)
    return HoverInfo(text, span) if text else None


def _ref_markdown(analysis: Any, name: str) -> str | None:
    bp = analysis.blueprint
    if bp is None or name not in bp.point_defs:
        return None
    definition = bp.point_defs[name]
    if isinstance(definition, str):
        body = f"JavaScript, run as `$js`:\n\n{md_fence(definition, 'js')}"
    else:
        body = md_fence(flow(definition), "yaml")
    return f"**{md_text(name)}** — from `point_defs`\n\n{body}"


def _generated_id(analysis: Any, line: int) -> str | None:
    """'Generated id: `hash-…`' when `line` starts a prompt that has no `id`."""
    bp = analysis.blueprint
    if bp is None:
        return None
    lay = layout(analysis)
    i = bisect_right(lay.prompt_starts, line) - 1
    if i < 0 or lay.prompt_starts[i] != line or i >= len(bp.prompts):
        return None
    node: Node = lay.prompt_nodes[i]
    prompt = bp.prompts[i]
    if prompt.span != node.span or not prompt.id_generated:
        return None
    return (f"Generated id: `{prompt.id}`\n\nThis prompt has no `id`, so its id is a hash of its content and "
            "changes whenever the prompt does. Add `id:` to keep results comparable across edits.")
