"""How the registry declares objects and their fields.

Every object of both formats (a Weval prompt, an AgentV test, an assertion of a given type…) is an
`ObjectSpec`: its fields with types, aliases, deprecations, enums, defaults and documentation. The
checker, the JSON Schemas, completion and hover all read these declarations; none of them keeps a
second list of field names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# JSON types a field accepts: "string", "number", "integer", "boolean", "array", "object", "null".
JsonType = str


@dataclass(frozen=True)
class FieldSpec:
    name: str
    doc: str
    types: tuple[JsonType, ...] = ("string",)
    aliases: tuple[str, ...] = ()  # other spellings that mean exactly this field, without a warning
    deprecated_aliases: tuple[str, ...] = ()  # older spellings: accepted, with a warning and a quick fix
    deprecated: str | None = None  # the field itself is deprecated: what to use instead
    enum: tuple[str, ...] = ()
    required: bool = False
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    items: JsonType | None = None  # the item type when the field is a plain list ("string", "number")
    object: str | None = None  # the ObjectSpec of a mapping value
    items_object: str | None = None  # the ObjectSpec of each item when the value is a list of mappings
    file_ref: bool = False  # a path relative to the eval file (completion offers paths)
    folder: bool = False  # a file_ref naming a folder (completion offers folders only)
    example: str | None = None
    schema: dict[str, Any] | None = None  # a hand-written JSON Schema when the types above cannot say it
    lenient: bool = False  # a value of the wrong type or range is a warning: AgentV ignores it (and so does a run)

    @property
    def all_names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases, *self.deprecated_aliases)


@dataclass(frozen=True)
class ObjectSpec:
    name: str
    title: str
    doc: str
    fields: tuple[FieldSpec, ...]
    open: bool = False  # free-form (metadata): any key is fine
    _index: dict[str, tuple[FieldSpec, str]] = field(default_factory=dict, compare=False, repr=False)
    # The required fields, once (checking a mapping looks for them on every object of a big file).
    required: tuple[FieldSpec, ...] = field(default=(), init=False, compare=False, repr=False)
    # What an unknown key is compared with for a did-you-mean (current names, then every alias), and the
    # list of known keys a message gives when none is close: once, not per unknown key (a 4 MB file has
    # 400,000).
    hint_names: tuple[str, ...] = field(default=(), init=False, compare=False, repr=False)
    known_names: str = field(default="", init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "required", tuple(f for f in self.fields if f.required))
        object.__setattr__(self, "hint_names", tuple(
            [f.name for f in self.fields if not f.deprecated] + [a for f in self.fields for a in f.aliases]))
        object.__setattr__(self, "known_names", ", ".join(f.name for f in self.fields if not f.deprecated))
        for f in self.fields:
            self._index[f.name] = (f, "canonical")
            for a in f.aliases:
                self._index[a] = (f, "alias")
            for a in f.deprecated_aliases:
                self._index[a] = (f, "deprecated-alias")

    def lookup(self, key: str) -> tuple[FieldSpec, str] | None:
        """The field a key names, and how: 'canonical', 'alias' or 'deprecated-alias'."""
        return self._index.get(key)

    def field(self, name: str) -> FieldSpec:
        return self._index[name][0]

    @property
    def names(self) -> list[str]:
        return list(self._index)


class Registry:
    """All object specs of one format, by name."""

    def __init__(self, *specs: ObjectSpec) -> None:
        self.objects: dict[str, ObjectSpec] = {}
        for s in specs:
            self.add(s)

    def add(self, spec: ObjectSpec) -> ObjectSpec:
        if spec.name in self.objects:
            raise ValueError(f"object spec {spec.name!r} declared twice")
        self.objects[spec.name] = spec
        return spec

    def remove(self, name: str) -> None:
        """Drop a spec `add` added (registry.extend.registered, for a test registry)."""
        self.objects.pop(name, None)

    def __getitem__(self, name: str) -> ObjectSpec:
        return self.objects[name]


def F(name: str, doc: str, *types: JsonType, **kw: Any) -> FieldSpec:
    """A field declaration; types default to string."""
    return FieldSpec(name, doc, types or ("string",), **kw)
