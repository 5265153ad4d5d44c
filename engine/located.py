"""The base of the normalized models: dataclasses whose objects keep their source span.

Both formats' checkers build thousands of these per file from values they have already validated, so
`build` fills an object's fields directly instead of calling the generated `__init__`. Plain
dataclasses, not pydantic models: nothing here is validated again.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(kw_only=True)
class Located:
    @classmethod
    def build(cls, **values: Any) -> Any:
        """Declared defaults, fresh default factories, then the values given; no checks."""
        defaults, factories = _defaults(cls)
        data = {**defaults, **values}
        for name, factory in factories:
            if name not in values:
                data[name] = factory()
        obj = cls.__new__(cls)
        obj.__dict__.update(data)
        return obj

    def evolve(self, **changes: Any) -> Any:
        """A shallow copy with `changes` applied (like `build`, no checks): the way to a changed model,
        since a model handed out with an analysis is never changed."""
        obj = type(self).__new__(type(self))
        obj.__dict__.update(self.__dict__, **changes)
        return obj

    def to_dict(self) -> dict[str, Any]:
        """The object as plain data, recursively (for tests and debugging)."""
        return dataclasses.asdict(self)


_DEFAULTS: dict[type, tuple[dict[str, Any], tuple[tuple[str, Any], ...]]] = {}


def _defaults(cls: type) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]]:
    """A model class's declared defaults and default factories, computed once per class."""
    found = _DEFAULTS.get(cls)
    if found is None:
        fields = dataclasses.fields(cls)
        defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
        factories = tuple((f.name, f.default_factory) for f in fields
                          if f.default_factory is not dataclasses.MISSING)
        found = _DEFAULTS[cls] = (defaults, factories)
    return found
