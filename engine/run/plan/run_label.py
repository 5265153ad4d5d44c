"""Weval run labels: the content hash of a blueprint run, as the reference (weval-org/app) computes it.

The reference hashes `JSON.stringify({models, system, systems, prompts, temperatureSettings})` where
`models` and `systems` are sorted with JavaScript's default sort (string comparison), prompts are
`{id, promptText, idealResponse, system, points, weight}` sorted by `id.localeCompare`, and
`temperatureSettings` is the single temperature, the sorted list, or the header `temperature`.
`promptText` is never set by the YAML parser, and `should_not` is not part of the hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

from ...line_breaks import as_read
from ...weval.ids import UNDEFINED
from ...weval.model import Blueprint, Point, Prompt, grouped_by_path, reference_fn_name, reference_points
from ...weval.prompt_store import prompt_ids
from ..write.jsjson import js_sort_key, js_stringify, locale_compare_key, utf16_key


def _prompt_entry(p: Prompt) -> dict[str, Any]:
    return {
        "id": p.id,
        "promptText": UNDEFINED,
        "idealResponse": p.ideal if p.ideal else UNDEFINED,
        "system": p.system if p.system_set else UNDEFINED,
        "points": reference_points(p.should) if p.should else UNDEFINED,
        # The model keeps 1.0 for "not written"; an explicit `weight: 1` is indistinguishable.
        "weight": p.weight if p.weight != 1.0 else UNDEFINED,
    }


def prompt_entry_json(p: Prompt) -> str:
    """The prompt's part of the hashed text: `js_stringify(_prompt_entry(p))`, written member by member
    (JSON.stringify's text of an object is its members' texts joined; the generic walk of each prompt's
    entry was a quarter of planning a big blueprint)."""
    pid = p.id
    text = '{"id":' + (encode_basestring(pid) if type(pid) is str else _js_text(pid))
    if p.ideal:
        text += ',"idealResponse":' + _js_text(p.ideal)
    if p.system_set:
        text += ',"system":' + _js_text(p.system)
    should = p.should
    if should:
        for pt in should:
            if pt.path_id is not None:  # alternative paths: regrouped (grouped_by_path)
                out = grouped_by_path(should, _point_json)
                text += ',"points":[' + ",".join([x if type(x) is str else "[" + ",".join(x) + "]" for x in out]) + "]"
                break
        else:  # (most often: no path, each point's text in turn)
            text += ',"points":[' + ",".join([_point_json(pt) for pt in should]) + "]"
    if p.weight != 1.0:
        text += ',"weight":' + js_stringify(p.weight)
    return text + "}"


def _js_text(value: Any) -> str:
    """js_stringify(value), a string's directly (what the C encoder writes for it), and a list of strings and
    integers likewise (a point's arguments, most often: `[3, 60]`)."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is list:
        for v in value:
            if type(v) is not int and type(v) is not str:
                return js_stringify(value)
        return "[" + ",".join([encode_basestring(v) if type(v) is str else str(v) for v in value]) + "]"
    return js_stringify(value)


# A function point's name as written (or its canonical one) → `{"fn":` and its reference name's text, for the
# last names read (a file uses a few; emptied when full: a file of a million made-up names stays bounded)
_FN_HEADS: dict[str, str] = {}
_KEPT_FN_HEADS = 1024


def _fn_head(name: str) -> str:
    head = '{"fn":' + _js_text(reference_fn_name(name))
    if len(_FN_HEADS) >= _KEPT_FN_HEADS:
        _FN_HEADS.clear()
    _FN_HEADS[name] = head
    return head


def _point_json(pt: Point) -> str:
    """js_stringify(pt.reference_form()): its members' texts, in its order."""
    w = pt.weight
    multiplier = ',"multiplier":' + ("1" if w == 1 and (type(w) is float or type(w) is int) else js_stringify(w))
    citation = ',"citation":' + _js_text(pt.citation) if pt.citation is not None else ""
    if pt.kind == "text":
        text = pt.text
        return '{"text":' + (encode_basestring(text) if type(text) is str else _js_text(text)) + multiplier \
            + citation + "}"
    name = pt.fn_written or pt.fn or ""
    head = _FN_HEADS.get(name)
    if head is None:
        head = _fn_head(name)
    args = pt.fn_args
    if args is None:
        return head + multiplier + citation + "}"
    return head + ',"fnArgs":' + (encode_basestring(args) if type(args) is str else _js_text(args)) + multiplier \
        + citation + "}"


def content_hash_input(bp: Blueprint, models: Sequence[str], prompts: Sequence[Prompt] | None = None) -> str:
    """The exact string the reference hashes."""
    return "".join(_content_chunks(bp, models, prompts))


def _content_chunks(bp: Blueprint, models: Sequence[str], prompts: Sequence[Prompt] | None,
                    entry_json: Callable[[int], str] | None = None) -> Iterator[str]:
    """`content_hash_input` in pieces, a prompt at a time: at 100,000 prompts the entries and the whole
    string were ~100 MB at once. `entry_json(k)`: the k-th prompt's `prompt_entry_json`, made already
    (the plan's one pass over a big blueprint's prompts, which are on disk)."""
    temps = list(bp.temperatures)
    if temps:
        temperature_settings: Any = temps[0] if len(temps) == 1 else sorted(temps, key=js_sort_key)
    else:
        temperature_settings = bp.temperature if bp.temperature is not None else UNDEFINED
    listed = bp.prompts if prompts is None else prompts
    ids = prompt_ids(listed)
    order = sorted(range(len(ids)), key=lambda i: locale_compare_key(ids[i]))
    data = {
        "models": sorted(models, key=utf16_key),
        "system": bp.system if bp.system else UNDEFINED,
        "systems": sorted(bp.systems, key=lambda s: (s is None, js_sort_key(s))) if bp.systems else UNDEFINED,
        "prompts": None,  # written below, entry by entry
        "temperatureSettings": temperature_settings,
    }
    # JSON.stringify of `data`: members in order, undefined ones left out (js_stringify's own rule)
    first = True
    for key, value in data.items():
        if value is UNDEFINED:
            continue
        yield ("{" if first else ",") + js_stringify(key) + ":"
        first = False
        if key == "prompts":
            yield "["
            for n, i in enumerate(order):
                yield ("," if n else "") + (entry_json(i) if entry_json is not None else prompt_entry_json(listed[i]))
            yield "]"
        else:
            yield js_stringify(value)
    yield "}"


def content_hash(bp: Blueprint, models: Sequence[str], prompts: Sequence[Prompt] | None = None,
                 entry_json: Callable[[int], str] | None = None) -> str:
    digest = hashlib.sha256()
    for chunk in _content_chunks(bp, models, prompts, entry_json):
        digest.update(chunk.encode("utf-8"))
    return digest.hexdigest()[:16]


def run_label(content_hash_value: str, user_label: str | None = None) -> str:
    """`<label>_<hash>` when the user gave a label, else the hash (the reference's rule)."""
    label = (user_label or "").strip()
    return f"{label}_{content_hash_value}" if label else content_hash_value


def unsaved_label(text: str, path: Path, user_label: str | None = None) -> str | None:
    """The label option for an editor's run of `text` at `path`: None when it is the file's saved text
    (the terminal's run label, so `--resume` continues either), else `unsaved-<hash of the text>` (after
    the user's label): an AgentV run label names the file, not its content, and a Weval one leaves out
    what the hash does not cover, so an unsaved text would otherwise take over the saved file's journal."""
    try:
        saved: str | None = as_read(path.read_bytes().decode("utf-8", errors="replace"), path)
    except OSError:
        saved = None
    if saved == text:
        return None
    tag = "unsaved-" + hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:8]
    label = (user_label or "").strip()
    return f"{label}_{tag}" if label else tag
