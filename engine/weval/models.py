"""Model ids: `provider:model` normalization, collections (CORE, …) and effective ids.

Collections are JSON lists of model ids in a `models/` folder (weval-org/configs keeps them beside
`blueprints/`). They are found by walking up from the blueprint inside its project, or given explicitly
(`--models-dir`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..file_source import DiskSource, FileSource
from ..jsonio import loads
from .ids import js_number

# Providers the reference routes to, plus the offline ones evalspec adds.
KNOWN_PROVIDERS = ("openai", "anthropic", "google", "mistral", "together", "xai", "openrouter")
OFFLINE_MODELS = ("echo",)
COLLECTION_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")


@dataclass(frozen=True)
class ModelIdParse:
    normalized: str
    provider: str | None
    name: str | None
    collection: str | None = None
    problem: str | None = None  # an error message
    trimmed: bool = False  # whitespace around the first ':' was removed


@lru_cache(maxsize=4096)  # a list of a million models names a few ids many times
def parse_model_id(raw: str) -> ModelIdParse:
    text = raw.strip()
    if text in OFFLINE_MODELS or text.startswith("replay:"):
        return ModelIdParse(text, text.split(":")[0], text.partition(":")[2] or None)
    if ":" not in text:
        if COLLECTION_NAME.match(text):
            return ModelIdParse(text, None, None, collection=text)
        return ModelIdParse(text, None, text, problem=(
            f"Model id '{text}' needs a provider prefix, as provider:model (e.g. openai:{text})."))
    provider, _, name = text.partition(":")
    trimmed = provider != provider.strip() or name != name.strip()
    provider, name = provider.strip(), name.strip()
    normalized = f"{provider}:{name}"
    if not provider or not name:
        return ModelIdParse(normalized, provider or None, name or None,
                            problem=f"Model id '{text}' must be provider:model with both parts.")
    if re.search(r"\s", normalized):
        return ModelIdParse(normalized, provider, name, problem=f"Model id '{text}' may not contain spaces.")
    return ModelIdParse(normalized, provider, name, trimmed=trimmed)


def find_models_dir(path: Path | None, source: FileSource | None = None) -> Path | None:
    """The nearest `models/` folder with collection files, walking up from a blueprint, never past its
    project (SECURITY.md): its repository (the nearest folder holding .git) or, in none, the folder that
    holds the nearest `blueprints/` folder above it (Weval's configs layout: `models/` beside
    `blueprints/`), else the blueprint's own folder. It walked up to `/` outside a repository, so any
    parent folder's `models/*.json` chose the models a blueprint from elsewhere would call."""
    if path is None:
        return None
    files = source if source is not None else DiskSource()
    parents = files.resolve(Path(path)).parents
    for parent in parents[:_project_depth(parents, files) + 1]:
        candidate = parent / "models"
        if files.is_dir(candidate) and any(n.endswith(".json") for n in files.glob(candidate, "*.json")):
            return candidate
    return None


def _project_depth(parents: Sequence[Path], files: FileSource) -> int:
    """How many folders above the blueprint's its project's top is (0: its own folder)."""
    for i, parent in enumerate(parents):
        if files.exists(parent / ".git"):
            return i
    for i, parent in enumerate(parents[:-1]):
        if parent.name == "blueprints":
            return i + 1
    return 0


class Collections(dict[str, list[str]]):
    """The usable collections, name → ids; `invalid`: the files that are not a JSON array of strings
    (Weval refuses them: "Invalid format for local model collection …"), name → what they are."""

    def __init__(self) -> None:
        super().__init__()
        self.invalid: dict[str, str] = {}


def load_collections(models_dir: Path | None, source: FileSource | None = None) -> Collections:
    """The collections of a models/ folder (`CORE.json` → "CORE"), read through `source` on every call.

    Not cached across analyses: a collection file edited in place leaves its folder's mtime as it was,
    and the language server's source answers an open collection file from its unsaved text, so a cache
    keyed by the folder would hand out stale ids; and a read through the source is what records the
    files as the analysis's dependencies. A few small JSON lists, read once per analysis."""
    found = Collections()
    if models_dir is None:
        return found
    files = source if source is not None else DiskSource()
    for name in files.glob(models_dir, "*.json"):
        text = files.read_text(models_dir / name)
        try:
            data = loads(text) if text is not None else None  # nested too deeply: ValueError too
        except ValueError as exc:
            found.invalid[Path(name).stem] = f"not readable as JSON ({exc})"
            continue
        if isinstance(data, list) and all(isinstance(m, str) for m in data):
            found[Path(name).stem] = data
        elif data is not None:
            found.invalid[Path(name).stem] = ("an array holding a value that is not a string" if isinstance(data, list)
                                              else f"a JSON {_json_type(data)}, not an array of model ids")
    return found


def _json_type(value: object) -> str:
    return {dict: "object", str: "string", bool: "boolean", int: "number", float: "number"}.get(type(value), "value")


def effective_model_id(model_id: str, temperature: float | None, sp_index: int | None = None) -> str:
    """`model[temp:T]` always (default 0), plus `[sp_idx:i]` when there are several system prompts."""
    out = f"{model_id}[temp:{js_number(temperature if temperature is not None else 0)}]"
    if sp_index is not None:
        out += f"[sp_idx:{sp_index}]"
    return out
