"""The normalized Weval blueprint: every alias and shorthand resolved, every object with its span.

This is what the runner, code lenses and hover read. It is built by `check.py` from the located tree
with `Located.build`: the checker has already validated every value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, TypeVar

from ..findings import Span
from ..located import Located
from .ids import UNDEFINED

T = TypeVar("T")


@dataclass(kw_only=True)
class Point(Located):
    """One rubric point. `fn` is the canonical function name for function points."""

    kind: Literal["text", "fn"]
    text: str | None = None
    fn: str | None = None
    fn_written: str | None = None  # the spelling in the file (`contain`), as the reference keeps it
    fn_args: Any = None
    weight: float = 1.0
    citation: Any = None  # as written: text, mostly
    path_id: str | None = None  # "path_<k>" for points of alternative path k
    inverted: bool = False  # from should_not
    span: Span

    def reference_form(self) -> dict[str, Any]:
        """The point as the reference's parser leaves it, in its key order (JSON.stringify keeps it):
        the input of prompt-id hashes, run labels and the `config` of results."""
        citation = self.citation if self.citation is not None else UNDEFINED
        if self.kind == "text":
            return {"text": self.text, "multiplier": self.weight, "citation": citation}
        return {"fn": reference_fn_name(self.fn_written or self.fn or ""),
                "fnArgs": self.fn_args if self.fn_args is not None else UNDEFINED,
                "multiplier": self.weight, "citation": citation}


@lru_cache(maxsize=1024)  # a few names a file, read for each function point of each cell (twice: its text, its reflection)
def reference_fn_name(written: str) -> str:
    """The reference normalizes function names at the front only: `contain…` → `contains…`,
    `match…` → `matches…` (so `imatch` stays as written)."""
    if written.startswith("contain") and not written.startswith("contains"):
        return "contains" + written[len("contain"):]
    if written.startswith("match") and not written.startswith("matches"):
        return "matches" + written[len("match"):]
    return written


def reference_points(points: list[Point]) -> list[Any]:
    """Points in the reference's form, alternative paths regrouped into nested lists, in written order."""
    return grouped_by_path(points, Point.reference_form)


def grouped_by_path(points: list[Point], form: Callable[[Point], T]) -> list[T | list[T]]:
    """Each point's `form`, those of one alternative path (`path_id`) regrouped into a nested list where
    its first point stood: the reference's shape (`reference_points`; check.py's JSON writes it directly)."""
    out: list[T | list[T]] = []
    paths: dict[str, list[T]] = {}
    for pt in points:
        done = form(pt)
        if pt.path_id is None:
            out.append(done)
        elif pt.path_id in paths:
            paths[pt.path_id].append(done)
        else:
            paths[pt.path_id] = [done]
            out.append(paths[pt.path_id])
    return out


@dataclass(kw_only=True)
class Message(Located):
    role: Literal["user", "assistant", "system"]
    content: str | None  # None: an assistant turn the model generates
    span: Span


@dataclass(kw_only=True)
class Prompt(Located):
    id: str
    id_generated: bool = False
    id_span: Span | None = None
    span: Span
    messages: list[Message]
    ideal: str | None = None
    system: str | None = None
    system_set: bool = False  # `system: null` (no system prompt) differs from no key at all
    citation: Any = None  # text, or {title, url}
    description: str | None = None
    weight: float = 1.0
    render_as: str = "markdown"
    temperature: float | None = None
    no_cache: bool | None = None
    tags: list[str] = field(default_factory=list)
    should: list[Point] = field(default_factory=list)
    should_not: list[Point] = field(default_factory=list)
    document: int = 0
    # The prompt as the reference's parser leaves it, as JSON writes it (a results file's config.prompts);
    # None when the reference refuses it (reference_form.py)
    reference: dict[str, Any] | None = None

    @property
    def points(self) -> list[Point]:
        """`should` then `should_not`, a new list each time it is read (`has_points` makes none)."""
        return [*self.should, *self.should_not]

    @property
    def has_points(self) -> bool:
        return bool(self.should or self.should_not)

    @property
    def first_words(self) -> str:
        for m in self.messages:
            if m.role == "user" and m.content:
                # Nine words split off, the rest left in one piece: a whole 4 MB prompt split into words
                # was 70 ms in one C call holding the interpreter lock (per outline, per lens).
                words = m.content.split(None, 9)
                return " ".join(words[:8]) + (" …" if len(words) > 8 else "")
        return ""


@dataclass(kw_only=True)
class ModelRef(Located):
    id: str  # provider:model, or a collection name before resolution
    span: Span
    collection: str | None = None
    custom: dict[str, Any] | None = None


@dataclass(kw_only=True)
class Judge(Located):
    id: str | None = None
    model: str
    approach: str = "standard"


@dataclass(kw_only=True)
class Blueprint(Located):
    id: str
    path: str | None = None
    title: str
    description: str | None = None
    tags: list[str] = field(default_factory=list)
    author: Any = None
    references: list[dict[str, str]] = field(default_factory=list)
    render_as: str = "markdown"
    models: list[ModelRef] = field(default_factory=list)
    models_resolved: list[str] = field(default_factory=list)  # collections expanded, duplicates removed
    system: str | None = None
    systems: list[str | None] | None = None
    temperature: float | None = None
    temperatures: list[float] = field(default_factory=list)
    concurrency: int = 30
    embedding_model: str = "openai:text-embedding-3-small"
    judges: list[Judge] = field(default_factory=list)
    judge_models: list[str] = field(default_factory=list)
    point_defs: dict[str, Any] = field(default_factory=dict)
    no_cache: bool = False
    set_keys: frozenset[str] = frozenset()  # header keys the file writes (the results' `config` keeps them)
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_use: dict[str, Any] | None = None
    external_services: dict[str, Any] = field(default_factory=dict)
    prompts: list[Prompt] = field(default_factory=list)
    # The header as the reference persists it in a results file's `config` (models not yet resolved,
    # no prompts); None when the reference refuses it (reference_form.reference_config)
    reference: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        # a big blueprint's prompts may be a store (prompt_store.py): as plain data, the list it stands for
        return dataclasses.asdict(self.evolve(prompts=list(self.prompts)))

    def prompt(self, prompt_id: str) -> Prompt | None:
        return next((p for p in self.prompts if p.id == prompt_id), None)

    def temperatures_to_run(self) -> list[float | None]:
        """`temperatures` if non-empty, else `[temperature]`, as the reference runs them."""
        return list(self.temperatures) if self.temperatures else [self.temperature]


