"""Model ids for completion and hover: collections, providers, and the ids a blueprint already uses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..weval.models import KNOWN_PROVIDERS, OFFLINE_MODELS, parse_model_id
from .markdown_text import md_code, md_text

if TYPE_CHECKING:
    from ..analysis import Analysis

try:  # the provider table, when the runner's providers are installed
    from ..providers import catalog as _catalog
except Exception:  # pragma: no cover - the catalog is part of the distribution; be safe in partial installs
    _catalog = None  # type: ignore[assignment]


def collections(analysis: Analysis) -> dict[str, list[str]]:
    """Collections (CORE, …) from the models/ folder nearest the file, as the analysis read them through
    its source (the editor's open documents first): completion and hover offer what the diagnostics
    accept, and nothing is read here."""
    return analysis.weval.collections if analysis.weval is not None else {}


def providers() -> list[tuple[str, str, str]]:
    """(name, label, one line about it) for each provider a model id can name."""
    out: list[tuple[str, str, str]] = []
    if _catalog is not None:
        for spec in _catalog.PROVIDERS.values():
            out.append((spec.name, spec.label, f"{spec.doc}"))
        for name, doc in _catalog.OFFLINE_PROVIDERS.items():
            out.append((name, name, doc))
        return out
    return [(p, p, f"key in {p.upper()}_API_KEY") for p in KNOWN_PROVIDERS] + [(m, m, "offline") for m in OFFLINE_MODELS]


def used_ids(analysis: Any) -> list[str]:
    """Model ids written elsewhere in the blueprint (its models, judges and collections' members), once
    per analysis: a million-model list took 50 ms to go through on every completion of a model id."""
    return analysis.memoised("ide.used_ids", _used_ids)


def _used_ids(analysis: Any) -> list[str]:
    bp = analysis.blueprint
    out: dict[str, None] = {}
    if bp is not None:
        for m in bp.models:
            if m.collection is None:
                out[m.id] = None
        for j in bp.judges:
            out[j.model] = None
        for m in bp.judge_models:
            out[m] = None
    for members in collections(analysis).values():
        for m in members:
            out[m] = None
    return list(out)


def model_markdown(model_id: str, analysis: Any) -> str | None:
    """What a model id means: its provider and the environment variable of the API key, or a
    collection's members."""
    parsed = parse_model_id(model_id)
    if parsed.collection:
        members = collections(analysis).get(parsed.collection)
        if members is None:
            return (f"**{md_text(parsed.collection)}** — a model collection, resolved from "
                    f"{md_code('models/' + parsed.collection + '.json')} "
                    "in a models folder next to the blueprints; none was found for this file.")
        shown = "\n".join(f"- {md_code(m)}" for m in members[:40])
        more = f"\n- … and {len(members) - 40} more" if len(members) > 40 else ""
        return f"**{md_text(parsed.collection)}** — model collection ({len(members)} models)\n\n{shown}{more}"
    # Below, the id is the file's (someone else's) text: escaped, since a hover renders Markdown.
    if parsed.problem:
        return f"{md_code(model_id)}\n\n{md_text(parsed.problem)}"
    provider = parsed.provider or ""
    if _catalog is not None:
        spec = _catalog.find(provider)
        if spec is not None:
            return (f"**{spec.label}** model {md_code(parsed.name or '')}\n\n{spec.doc}.\n\n"
                    f"API key: `${spec.key_env}` · base URL: {spec.base_url} (override with `${spec.base_url_env}`)")
        if provider in _catalog.OFFLINE_PROVIDERS:
            return f"**{md_text(provider)}** — {_catalog.OFFLINE_PROVIDERS[provider]}"
    if provider in KNOWN_PROVIDERS:
        return f"**{md_text(provider)}** model {md_code(parsed.name or '')}\n\nAPI key: `${provider.upper()}_API_KEY`"
    if provider in OFFLINE_MODELS:
        return f"**{md_text(provider)}** — offline model, no network."
    return (f"{md_code(model_id)}: provider {md_code(provider)} is not one evalspec can call "
            f"({', '.join(KNOWN_PROVIDERS)}); use a custom model object for other endpoints.")
