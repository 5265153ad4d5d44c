"""Completion: keys, values, point functions, assertion types, enum values, models, `$ref` names, paths.

Works from the `Analysis` the server already has and the lines around the cursor (`context.py`);
the whole file is never parsed or checked again here. Everything derived from the registry alone
(field items, function items, assertion-type items) is built once and reused.

Multi-line `insert_text` is indented absolutely: every line after the first carries its full
indentation (the server sends it with InsertTextMode.asIs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..detect import DATASET_SUFFIXES, FileKind
from ..findings import Span
from ..registry.agentv import KNOWN_PROVIDERS as AGENTV_PROVIDERS
from ..registry.agentv_assertions import ASSERTION_TYPES, AssertionType
from ..registry.fields import FieldSpec, ObjectSpec
from ..registry.stages import generation
from ..registry.weval_functions import POINT_FUNCTIONS, PointFunction
from ..source import Mapping
from . import docs, model_ids, paths
from . import schema as sc
from .context import KEY, NONE, CursorContext, cursor_context, mapping_keys
from .layout import layout
from .lines import shape

KINDS = ("field", "value", "function", "assertion-type", "enum", "model", "reference", "file", "snippet")


@dataclass(frozen=True, slots=True)
class CompletionItem:
    label: str
    kind: str  # one of KINDS
    detail: str = ""
    documentation: str = ""  # markdown
    insert_text: str = ""
    is_snippet: bool = False  # insert_text uses LSP snippet syntax ($1, ${1:x}, ${1|a,b|}, \$ for a dollar)
    replace_span: Span | None = None  # the text the insertion replaces (on the cursor's line)
    filter_text: str | None = None
    sort_text: str | None = None
    deprecated: bool = False
    alias_of: str | None = None  # the canonical name, for an alias


@dataclass(slots=True)
class CompletionList:
    items: list[CompletionItem] = field(default_factory=list)
    is_incomplete: bool = False  # ask again as the user types (file paths, model ids)


def complete(analysis: Any, line: int, col: int, *, snippets: bool) -> CompletionList:
    """What may be typed at (line, col): 0-based line, col in code points."""
    if analysis.kind is FileKind.NONE or analysis.parsed.too_large:
        return CompletionList()
    if analysis.path is not None and analysis.path.suffix.lower() in DATASET_SUFFIXES:
        return CompletionList()  # an AgentV tests file (JSON lines, CSV): the YAML keys do not belong there
    ctx = cursor_context(analysis, line, col)
    if ctx.position == NONE:
        return CompletionList()
    if ctx.position == KEY:
        items, incomplete = _key_items(ctx, analysis, snippets), False
    else:
        items, incomplete = _value_items(ctx, analysis, snippets)
    return CompletionList(_finish(items, ctx, snippets), incomplete)


# --- templates built once from the registry ---------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Tmpl:
    label: str
    kind: str
    detail: str
    documentation: str
    plain: str  # insert text without snippets
    snippet: str  # with snippets; "{indent}" stands for the child indentation
    names: tuple[str, ...]  # every spelling of the field (to drop it when one is present)
    sort: str
    deprecated: bool = False
    alias_of: str | None = None
    is_snippet: bool = True


_FIELD_TMPLS: dict[int, list[_Tmpl]] = {}


def _snippet_name(name: str) -> str:
    return name.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


def _key_snippet(name: str, f: FieldSpec, slot: sc.Slot | None) -> str:
    n = _snippet_name(name)
    if f.enum:
        return f"{n}: ${{1|{','.join(f.enum)}|}}"
    if f.types == ("boolean",):
        return f"{n}: ${{1|true,false|}}"
    kind = slot.kind if slot is not None else sc.SCALAR
    if "string" in f.types or "number" in f.types or "integer" in f.types:
        return f"{n}: $0"  # a scalar is the usual form (`input: text`, `tests: ./cases.yaml`)
    if kind == sc.LIST and slot is not None and slot.item is not None and slot.item.kind != sc.SCALAR:
        return f"{n}:\n{{indent}}- $0"
    if kind == sc.LIST:
        return f"{n}: [$1]$0" if f.items else f"{n}:\n{{indent}}- $0"
    if kind in (sc.OBJECT, sc.MAP) and "string" not in f.types:
        return f"{n}:\n{{indent}}$0"
    return f"{n}: $0"


def _field_templates(fmt: str, spec: ObjectSpec, owner: sc.Slot) -> list[_Tmpl]:
    cached = _FIELD_TMPLS.get(id(spec))
    if cached is not None:
        return cached
    out: list[_Tmpl] = []
    for order, f in enumerate(spec.fields):
        child = sc.child(fmt, owner, f.name) if owner.kind != sc.ANY else None
        names = f.all_names
        group = "0" if f.required or f.name == "type" else "1"
        if f.deprecated:
            group = "9"
        doc = docs.field_markdown(f, spec)
        detail = docs.field_detail(f)
        out.append(_Tmpl(f.name, "field", detail, doc, f"{f.name}: ", _key_snippet(f.name, f, child), names,
                         f"{group}{order:03d}", deprecated=bool(f.deprecated)))
        for alias in f.aliases:
            out.append(_Tmpl(alias, "field", f"alias of {f.name}", docs.field_markdown(f, spec, alias),
                             f"{alias}: ", _key_snippet(alias, f, child), names, f"5{order:03d}",
                             deprecated=bool(f.deprecated), alias_of=f.name))
        for alias in f.deprecated_aliases:
            out.append(_Tmpl(alias, "field", f"deprecated: use {f.name}", docs.field_markdown(f, spec, alias),
                             f"{alias}: ", _key_snippet(alias, f, child), names, f"9{order:03d}",
                             deprecated=True, alias_of=f.name))
    _FIELD_TMPLS[id(spec)] = out
    return out


def _function_templates() -> list[_Tmpl]:
    out: list[_Tmpl] = []
    for order, fn in enumerate(POINT_FUNCTIONS.values()):
        group = "1" if fn.negates is None else "3"
        out.append(_fn_tmpl(fn, fn.name, f"{group}{order:03d}", None))
        for alias in fn.aliases:
            out.append(_fn_tmpl(fn, alias, f"6{order:03d}", fn.name))
    return out


def _fn_tmpl(fn: PointFunction, name: str, sort: str, alias_of: str | None) -> _Tmpl:
    detail = docs.function_detail(fn) if alias_of is None else f"alias of ${alias_of}"
    return _Tmpl(f"${name}", "function", detail, docs.function_markdown(fn, name), f"${name}: ",
                 f"\\${name}: {fn.snippet}", (), sort, alias_of=f"${alias_of}" if alias_of else None)


def _assertion_templates() -> list[_Tmpl]:
    out: list[_Tmpl] = []
    for order, t in enumerate(ASSERTION_TYPES.values()):
        out.append(_type_tmpl(t, t.name, f"1{order:03d}", None))
        if t.snake != t.name:
            out.append(_type_tmpl(t, t.snake, f"6{order:03d}", t.name))
    return out


def _type_tmpl(t: AssertionType, name: str, sort: str, alias_of: str | None) -> _Tmpl:
    detail = f"{t.kind}" + ("" if t.runnable else " · checked, not scored yet")
    if alias_of:
        detail = f"same as {alias_of}"
    return _Tmpl(name, "assertion-type", detail, docs.assertion_markdown(t, name), name, name, (), sort,
                 alias_of=alias_of, is_snippet=False)


def _example_tmpl(t: AssertionType) -> _Tmpl:
    """An assertion's registry example as a whole new `assert` item (after its `- `)."""
    lines = t.example.split("\n")
    body = "\n".join([lines[0][2:], *("{here}" + line[2:] for line in lines[1:])])
    escaped = body.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}").replace("{here\\}", "{here}")
    return _Tmpl(f"{t.name} (example)", "snippet", "assertion example", docs.assertion_markdown(t), body,
                 escaped + "$0", (), f"8{t.name}")


_ITEM_SNIPPETS: dict[str, list[_Tmpl]] = {
    "prompt": [_Tmpl("prompt with rubric", "snippet", "a new prompt", "A prompt, its text and a first rubric point.",
                     "prompt: \n{here}should:\n{here}  - ",
                     "prompt: ${1:What is …?}\n{here}should:\n{here}  - ${2:mentions …}$0", (), "8prompt")],
    "test": [_Tmpl("test", "snippet", "a new test", "A test: its id, what a good answer does, and its input.",
                   "id: \n{here}criteria: \n{here}input: ",
                   "id: ${1:test-id}\n{here}criteria: ${2:What a good answer does}\n{here}input: ${3:The user message}$0",
                   (), "8test")],
}
_FROM_REGISTRY: dict[str, tuple[int, list[Any]]] = {}


def _from_registry(name: str, make: Callable[[], list[Any]]) -> list[Any]:
    """Templates made from the registry's entries, made again when entries are added or removed
    (registry/extend.py)."""
    now = generation()
    got = _FROM_REGISTRY.get(name)
    if got is None or got[0] != now:
        got = _FROM_REGISTRY[name] = (now, make())
    return got[1]


def _function_names() -> list[tuple[str, PointFunction]]:
    return _from_registry("names", lambda: [(fn.name, fn) for fn in POINT_FUNCTIONS.values()])


def _item_snippets(name: str) -> list[_Tmpl]:
    if name == "assertion":
        return _from_registry("examples", lambda: [_example_tmpl(t) for t in ASSERTION_TYPES.values()])
    return _ITEM_SNIPPETS.get(name, [])


_from_registry("functions", _function_templates)  # made at import, as the other templates
_from_registry("types", _assertion_templates)
_SHORTHAND = [
    _Tmpl(r, "field", "shorthand message", sc.W_SHORTHAND_FIELD[r].doc, f"{r}: ", f"{r}: $0", (), f"2{i}",
          alias_of="assistant" if r == "ai" else None)
    for i, r in enumerate(sc.W_MESSAGE_SHORTHAND)]


# --- keys -------------------------------------------------------------------------------------------

def _key_items(ctx: CursorContext, analysis: Any, snippets: bool) -> list[_Tmpl | CompletionItem]:
    slot = ctx.slot
    spec = ctx.spec
    present = set(ctx.present)
    out: list[_Tmpl | CompletionItem] = []
    if slot.kind == sc.POINT and not any(k.startswith("$") for k in present) and not present & {"text", "point", "fn"}:
        out += _from_registry("functions", _function_templates)
        out.append(_ref_key_tmpl(analysis))
    if slot.kind == sc.MESSAGE and not present:
        out += _SHORTHAND
    if slot.kind == sc.MESSAGE and present & set(sc.W_MESSAGE_SHORTHAND):
        return out
    if spec is None:
        return out
    if ctx.in_list_item and not present and not ctx.prefix.startswith("$") and not ctx.in_flow:
        out += _item_snippets(spec.name)
    owner = slot if slot.kind != sc.POINT or spec is slot.spec else sc.Slot(sc.POINT, spec)
    if slot.kind == sc.ASSERTION and spec is not slot.spec:
        owner = sc.Slot(sc.ASSERTION, spec, assertion=_assertion_of(spec))
    for t in _field_templates(ctx.format, spec, owner):
        if present.intersection(t.names):
            continue
        if slot.kind == sc.POINT and not present and t.label in _POINT_OPTIONS:
            continue  # options of a point, never its first key
        out.append(t)
    return out


_POINT_OPTIONS = frozenset(("weight", "multiplier", "citation", "fnArgs", "arg"))


def _assertion_of(spec: ObjectSpec) -> AssertionType | None:
    name = spec.name.partition(":")[2]
    return ASSERTION_TYPES.get(name)


def _ref_key_tmpl(analysis: Any) -> _Tmpl:
    names = ref_names(analysis)
    choice = f"${{1|{','.join(n.replace(',', '') for n in names)}|}}" if names else "$1"
    doc = "Use a named point from the header's `point_defs`." + (
        "\n\nDefined here: " + ", ".join(f"`{n}`" for n in names) if names else "")
    return _Tmpl("$ref", "reference", "a point from point_defs", doc, "$ref: ", f"\\$ref: {choice}", (), "2000")


# --- values -----------------------------------------------------------------------------------------

def _value_items(ctx: CursorContext, analysis: Any, snippets: bool) -> tuple[list[_Tmpl | CompletionItem], bool]:
    slot = ctx.slot
    f = ctx.field
    v = slot.value
    if v == sc.V_ASSERTION_TYPE:
        custom = [_plain("assertion-type", name, f"custom · {p.name}",
                         f"**{name}** — a custom assertion: `{p}`", sort=f"2{name}")
                  for name, p in paths.custom_assertions(analysis).items()]
        return [*_from_registry("types", _assertion_templates), *custom], False
    if v == sc.V_PROVIDER:
        return [_plain("enum", p, "provider", "", sort=f"{i:03d}") for i, p in enumerate(AGENTV_PROVIDERS)], False
    if v == sc.V_REF:
        return [_plain("reference", n, "point_defs entry", "") for n in ref_names(analysis)], False
    if v == sc.V_FUNCTION:
        return [_plain("function", name, docs.function_detail(fn), docs.function_markdown(fn, name))
                for name, fn in _function_names()], False
    if v == sc.V_MODEL or slot.kind == sc.MODEL:
        return _model_items(ctx, analysis), True
    if v in (sc.V_FILE, sc.V_DIR, sc.V_TESTS) or (v == sc.V_ARGV and paths.looks_like_path(ctx.prefix)):
        return _file_items(ctx, analysis, v), True
    items: list[_Tmpl | CompletionItem] = []
    if f is not None and f.enum:
        items += [_plain("enum", e, f.name, docs.enum_markdown(f, e), sort=f"1{i:03d}") for i, e in enumerate(f.enum)]
    elif f is not None and "boolean" in f.types:
        items += [_plain("value", "true", f.name, ""), _plain("value", "false", f.name, "")]
    return items, False




def _plain(kind: str, label: str, detail: str, doc: str, *, sort: str | None = None, insert: str | None = None,
           filter_text: str | None = None) -> CompletionItem:
    return CompletionItem(label, kind, detail, doc, insert if insert is not None else label, False, None,
                          filter_text, sort)


USED_IDS_OFFERED = 1000


def _model_items(ctx: CursorContext, analysis: Any) -> list[_Tmpl | CompletionItem]:
    out: list[_Tmpl | CompletionItem] = []
    colls = model_ids.collections(analysis)
    for name, members in colls.items():
        out.append(_plain("model", name, f"collection · {len(members)} models",
                          model_ids.model_markdown(name, analysis) or "", sort=f"1{name}"))
    # The first thousand: a blueprint of a million distinct ids made a million items, each with its
    # markdown, on every completion of a model id.
    for m in model_ids.used_ids(analysis)[:USED_IDS_OFFERED]:
        out.append(_plain("model", m, "used in this blueprint", model_ids.model_markdown(m, analysis) or "",
                          sort=f"2{m}"))
    for name, label, doc in model_ids.providers():
        text = name if name in ("echo",) else f"{name}:"
        out.append(_plain("model", text, label, doc, sort=f"3{name}"))
    if ctx.format == "weval" and not colls:
        out.append(_plain("model", "CORE", "collection (from models/CORE.json)", "The default collection.", sort="1CORE"))
    return out


def _file_items(ctx: CursorContext, analysis: Any, v: str | None) -> list[_Tmpl | CompletionItem]:
    folder = paths.base_folder(analysis)
    if folder is None:
        return []
    typed = ctx.prefix
    scheme = ""
    if typed.startswith(paths.FILE_SCHEME):
        scheme, typed = paths.FILE_SCHEME, typed[len(paths.FILE_SCHEME):]
    elif v == sc.V_TESTS and ctx.in_list_item:
        scheme = paths.FILE_SCHEME  # a string item of `tests` is a file reference
    exts: tuple[str, ...] = ()
    if v == sc.V_TESTS:
        exts = (".yaml", ".yml", ".jsonl", ".csv")
    if ctx.key == "workspace":
        exts = (".yaml", ".yml")
    out: list[_Tmpl | CompletionItem] = []
    for rel, is_dir in paths.entries(folder, typed, dirs_only=v == sc.V_DIR, extensions=exts,
                                     project=paths.project(analysis)):
        text = scheme + rel + ("/" if is_dir else "")
        # Labelled with the whole inserted path: clients that filter on the label (or on the text from
        # the edit's start, as Neovim 0.7 does) then match what was typed, folders included.
        out.append(_plain("file", text, "folder" if is_dir else "file", "",
                          sort=("0" if is_dir else "1") + rel.lower(), insert=text))
    return out


def ref_names(analysis: Any) -> list[str]:
    """The names defined in the header's `point_defs` (from the tree, or the text while it is broken)."""
    bp = analysis.blueprint
    if bp is not None and bp.point_defs:
        return list(bp.point_defs)
    lay = layout(analysis)
    if lay.header_doc is None:
        return []
    header = analysis.weval.header_node if analysis.weval is not None else None
    if isinstance(header, Mapping):
        node = header.get("point_defs") or header.get("defs")
        return node.keys() if isinstance(node, Mapping) else []
    # The header does not parse: read `point_defs:` from its top-level lines.
    lines: list[str] = analysis.parsed.lines
    start, end = lay.doc_range(lay.header_doc, len(lines))
    for i in range(start, end):
        s = lines[i]
        if not s.startswith(("point_defs:", "defs:")):
            continue
        j = i + 1
        while j < end and shape(lines[j]).blank:
            j += 1
        col = shape(lines[j]).first_col if j < end else 0
        return list(mapping_keys(lines, j, col, end)) if col > 0 else []
    return []


# --- finishing: replace range, leading "- " or space, indentation -----------------------------------

def _finish(items: list[_Tmpl | CompletionItem], ctx: CursorContext, snippets: bool) -> list[CompletionItem]:
    span = ctx.replace_span
    lead = ("- " if ctx.needs_dash else "") + (" " if ctx.needs_space else "")
    indent = " " * (ctx.indent + 2)  # a child of the object's keys
    here = " " * ctx.indent  # the object's own keys
    out: list[CompletionItem] = []
    for it in items:
        if isinstance(it, CompletionItem):
            text = it.insert_text
            if ctx.quote and it.kind != "file":
                text = text.replace(ctx.quote, "\\" + ctx.quote) if ctx.quote == '"' else text.replace("'", "''")
            out.append(CompletionItem(it.label, it.kind, it.detail, it.documentation, lead + text, False, span,
                                      it.filter_text, it.sort_text, it.deprecated, it.alias_of))
            continue
        if ctx.has_colon:
            if it.kind == "snippet":
                continue
            text, is_snip = it.label, False  # renaming a key: keep its ':' and value
        elif snippets and it.is_snippet and not (ctx.in_flow and "{indent}" in it.snippet):
            text, is_snip = it.snippet.replace("{indent}", indent).replace("{here}", here), True
        else:
            text, is_snip = it.plain.replace("{here}", here), False
        if ctx.quote and ctx.has_colon:
            text = it.label
        out.append(CompletionItem(it.label, it.kind, it.detail, it.documentation, lead + text, is_snip, span,
                                  it.label, it.sort, it.deprecated, it.alias_of))
    return out
