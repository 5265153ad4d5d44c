"""The base of the normalized models: pydantic classes whose objects keep their source span.

Both formats' checkers build thousands of these per file from values they have already validated,
so `build` fills them directly instead of going through pydantic's validation or `model_construct`
(~12 µs an object; a 50,000-line blueprint has 30,000 of them).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict


class Located(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    @classmethod
    def build(cls, **values: Any) -> Any:
        """Declared defaults, fresh default factories, then the values given; no re-validation."""
        defaults, factories = _defaults(cls)
        data = {**defaults, **values}
        for name, factory in factories:
            if name not in values:
                data[name] = factory()
        obj = cls.__new__(cls)
        object.__setattr__(obj, "__dict__", data)
        object.__setattr__(obj, "__pydantic_fields_set__", set(values))
        object.__setattr__(obj, "__pydantic_extra__", None)
        object.__setattr__(obj, "__pydantic_private__", None)
        return obj


@cache
def _defaults(cls: type[BaseModel]) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]]:
    fields = cls.model_fields
    defaults = {n: f.default for n, f in fields.items() if f.default_factory is None}
    factories = tuple((n, f.default_factory) for n, f in fields.items() if f.default_factory is not None)
    return defaults, factories
