"""Go to definition (`$ref: name` → its `point_defs` entry; a file path → the file) and document links.

Links are found by walking the located tree with the same registry slots completion uses, so every
field the registry marks as a path (AgentV `tests`, judge `prompt`, `command` words, `type: file`
content blocks, `workspace`…) links to its file when that file exists. A Weval collection name
(`CORE`) links to its `models/CORE.json`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..detect import FileKind
from ..findings import Span
from ..source import Mapping, Node, Scalar, Sequence
from . import model_ids, paths
from . import schema as sc
from .context import KEY, VALUE, cursor_context
from .lines import scalar_text, shape

MAX_LINKS = 5000


@dataclass(frozen=True, slots=True)
class Location:
    path: Path | None  # None: the analysed file itself
    span: Span


@dataclass(frozen=True, slots=True)
class Link:
    span: Span
    target: Path


def definition(analysis: Any, line: int, col: int) -> list[Location]:
    if analysis.kind is FileKind.NONE or analysis.parsed.too_large:
        return []
    lines: list[str] = analysis.parsed.lines
    if not 0 <= line < len(lines):
        return []
    text = lines[line].rstrip("\r")
    ctx = cursor_context(analysis, line, min(col + 1, len(text)) if col < len(text) else col)
    sh = shape(text)
    if analysis.kind is FileKind.WEVAL and ctx.position == KEY and sh.key == "$ref" and sh.value:
        return _ref(analysis, scalar_text(sh.value))
    if ctx.position != VALUE or ctx.value_span is None:
        return []
    span = ctx.value_span
    value = scalar_text(text[span.start_col:span.end_col])
    slot = ctx.slot
    if slot.value == sc.V_REF:
        return _ref(analysis, value)
    target = _file_target(analysis, slot, value, ctx.present)
    if target is not None:
        return [Location(target, Span(0, 0, 0, 0))]
    return []


def _ref(analysis: Any, name: str) -> list[Location]:
    result = analysis.weval
    header = result.header_node if result is not None else None
    if not isinstance(header, Mapping):
        return []
    defs = header.get("point_defs") or header.get("defs")
    if not isinstance(defs, Mapping):
        return []
    key = defs.key_node(name)
    return [Location(analysis.path, key.span)] if key is not None else []


def _file_target(analysis: Any, slot: sc.Slot, value: str, owner_keys: dict[str, str]) -> Path | None:
    folder = paths.base_folder(analysis)
    if folder is None:
        return None
    v = slot.value
    if v == sc.V_FILE:
        return paths.resolve_searched(analysis, value)
    if v == sc.V_TESTS:
        return paths.resolve(folder, value)
    if v == sc.V_ARGV and paths.looks_like_path(value):
        cwd = owner_keys.get("cwd")
        base = (folder / scalar_text(cwd)) if cwd else folder
        return paths.resolve(base, value) or paths.resolve(folder, value)
    if v == sc.V_MODEL or slot.kind == sc.MODEL:
        return _collection_file(analysis, value)
    if slot.kind == sc.LIST and slot.value == sc.V_TESTS:
        return paths.resolve(folder, value)
    return None


def _collection_file(analysis: Any, value: str) -> Path | None:
    """The file a collection was read from, as the check found it (through its source: nothing is read
    here)."""
    from ..weval.models import COLLECTION_NAME

    if not COLLECTION_NAME.match(value) or value not in model_ids.collections(analysis):
        return None
    models_dir = analysis.weval.models_dir if analysis.weval is not None else None
    return models_dir / f"{value}.json" if models_dir is not None else None


# --- links ------------------------------------------------------------------------------------------

def document_links(analysis: Any) -> list[Link]:
    """Every path in the file that names an existing file."""
    if analysis.kind not in (FileKind.WEVAL, FileKind.AGENTV) or analysis.path is None:
        return []
    out: list[Link] = []
    if analysis.kind is FileKind.WEVAL:
        _weval_links(analysis, out)
    else:
        docs = analysis.parsed.documents
        if docs and docs[0].root is not None:
            _walk(analysis, docs[0].root, sc.agentv_root(), {}, out)
    return out


def _weval_links(analysis: Any, out: list[Link]) -> None:
    bp = analysis.blueprint
    if bp is None:
        return
    for m in bp.models:
        if m.collection:
            target = _collection_file(analysis, m.collection)
            if target is not None:
                out.append(Link(m.span, target))


def _walk(analysis: Any, root: Node, root_slot: sc.Slot, _keys: dict[str, str], out: list[Link]) -> None:
    folder = paths.base_folder(analysis)
    stack: list[tuple[Node, sc.Slot, Mapping | None]] = [(root, root_slot, None)]
    seen: set[int] = set()
    while stack and len(out) < MAX_LINKS:
        node, slot, owner = stack.pop()
        if slot.kind == sc.ANY:
            continue  # nothing the schema knows lies below: no path to link (most of a large suite)
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Mapping):
            keys = _lazy_keys(node)
            for k, v in node.pairs:
                if isinstance(k, Scalar) and isinstance(k.value, str):
                    stack.append((v, sc.child("agentv", slot, k.value, keys), node))
        elif isinstance(node, Sequence):
            for i, it in enumerate(node.items):
                if isinstance(it, Scalar) and slot.value == sc.V_TESTS:
                    stack.append((it, sc.TESTS_ITEM, owner))
                    continue
                item_keys = _lazy_keys(it) if isinstance(it, Mapping) else _no_keys
                stack.append((it, sc.child("agentv", slot, i, item_keys), owner))
        elif isinstance(node, Scalar) and isinstance(node.value, str) and folder is not None:
            target = _scalar_target(analysis, folder, slot, node.value, owner)
            if target is not None:
                out.append(Link(node.span, target))


def _no_keys() -> dict[str, str]:
    return {}


def _lazy_keys(node: Mapping) -> Callable[[], dict[str, str]]:
    """The keys of one object, as the schema's `keys` callback: read only when a step needs them (an
    assertion's `type`), not for every mapping of the file."""
    found: list[dict[str, str]] = []

    def keys() -> dict[str, str]:
        if not found:
            found.append(_keys_of(node))
        return found[0]

    return keys


def _keys_of(node: Mapping) -> dict[str, str]:
    return {str(k.value): (str(v.value) if isinstance(v, Scalar) and v.value is not None else "")
            for k, v in node.pairs if isinstance(k, Scalar)}


def _scalar_target(analysis: Any, folder: Path, slot: sc.Slot, value: str, owner: Mapping | None) -> Path | None:
    v = slot.value
    if v == sc.V_FILE:
        return paths.resolve_searched(analysis, value)
    if v == sc.V_TESTS:
        return paths.resolve(folder, value)
    if slot.kind == sc.LIST and v == sc.V_TESTS:
        return paths.resolve(folder, value)
    if v == sc.V_ARGV and paths.looks_like_path(value):
        cwd = owner.get("cwd") if owner is not None else None
        if isinstance(cwd, Scalar) and isinstance(cwd.value, str):
            hit = paths.resolve(folder / cwd.value, value)
            if hit is not None:
                return hit
        return paths.resolve(folder, value)
    return None
