"""Weval run labels: the content hash of a blueprint run, as the reference (weval-org/app) computes it.

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
from ..weval.model import Blueprint, Prompt, reference_points
from .jsjson import js_sort_key, js_stringify, locale_compare_key, utf16_key


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
