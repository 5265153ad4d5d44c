"""Weval run labels: the content hash of a blueprint run, as the reference computes it (compat notes §9).

The reference hashes `JSON.stringify({models, system, systems, prompts, temperatureSettings})` where
`models` and `systems` are sorted with JavaScript's default sort (string comparison), prompts are
`{id, promptText, idealResponse, system, points, weight}` sorted by `id.localeCompare`, and
`temperatureSettings` is the single temperature, the sorted list, or the header `temperature`.
`promptText` is never set by the YAML parser, and `should_not` is not part of the hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ..weval.ids import UNDEFINED
from ..weval.model import Blueprint, Point, Prompt
from .jsjson import js_sort_key, js_stringify, locale_compare_key, utf16_key


def reference_fn_name(written: str) -> str:
    """The reference normalizes function names at the front only: `contain…` → `contains…`."""
    if written.startswith("contain") and not written.startswith("contains"):
        return "contains" + written[len("contain"):]
    if written.startswith("match") and not written.startswith("matches"):
        return "matches" + written[len("match"):]
    return written


def reference_point(p: Point) -> dict[str, Any]:
    """A point as the reference's parser leaves it, in its key order (JSON.stringify keeps it)."""
    if p.kind == "text":
        return {"text": p.text, "multiplier": p.weight,
                "citation": p.citation if p.citation is not None else UNDEFINED}
    return {"fn": reference_fn_name(p.fn_written or p.fn or ""), "fnArgs": p.fn_args if p.fn_args is not None
            else UNDEFINED, "multiplier": p.weight, "citation": p.citation if p.citation is not None else UNDEFINED}


def reference_points(points: Sequence[Point]) -> list[Any]:
    """Points with alternative paths regrouped into nested lists, in the order they were written."""
    out: list[Any] = []
    paths: dict[str, list[Any]] = {}
    for pt in points:
        form = reference_point(pt)
        if pt.path_id is None:
            out.append(form)
        elif pt.path_id in paths:
            paths[pt.path_id].append(form)
        else:
            paths[pt.path_id] = [form]
            out.append(paths[pt.path_id])
    return out


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


def content_hash_input(bp: Blueprint, models: Sequence[str], prompts: Sequence[Prompt] | None = None) -> str:
    """The exact string the reference hashes."""
    temps = list(bp.temperatures)
    if temps:
        temperature_settings: Any = temps[0] if len(temps) == 1 else sorted(temps, key=js_sort_key)
    else:
        temperature_settings = bp.temperature if bp.temperature is not None else UNDEFINED
    data = {
        "models": sorted(models, key=utf16_key),
        "system": bp.system if bp.system else UNDEFINED,
        "systems": sorted(bp.systems, key=lambda s: (s is None, js_sort_key(s))) if bp.systems else UNDEFINED,
        "prompts": sorted((_prompt_entry(p) for p in (bp.prompts if prompts is None else prompts)),
                          key=lambda e: locale_compare_key(e["id"])),
        "temperatureSettings": temperature_settings,
    }
    return js_stringify(data)


def content_hash(bp: Blueprint, models: Sequence[str], prompts: Sequence[Prompt] | None = None) -> str:
    return hashlib.sha256(content_hash_input(bp, models, prompts).encode("utf-8")).hexdigest()[:16]


def run_label(content_hash_value: str, user_label: str | None = None) -> str:
    """`<label>_<hash>` when the user gave a label, else the hash (the reference's rule)."""
    label = (user_label or "").strip()
    return f"{label}_{content_hash_value}" if label else content_hash_value
