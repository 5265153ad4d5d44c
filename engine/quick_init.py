"""`quick_init`: a frozen, slotted dataclass's `__init__` remade to set its slots through their descriptors.

The `__init__` that `@dataclass(frozen=True, slots=True)` writes sets each field by
`object.__setattr__(self, name, value)`, ~250 ns a field (the slot wrapper, then the generic attribute
lookup); the member descriptor's own `__set__`, bound once per class, does the same store in a third of
that. A record made per cell of a run (answers, scores, events, requests: ~15 a cell) paid ~2 µs for eight
fields. Nothing else changes: the same parameters and defaults (`inspect.signature` is the same), the same
object, still frozen (`__setattr__` still raises), `__post_init__` still called.

Use it above the dataclass decorator:

    @quick_init
    @dataclass(frozen=True, slots=True)
    class Record: ...

The class must be a frozen dataclass with slots (a class with `__dict__` has no slot descriptors) and no
`InitVar`; the dataclass's own `__init__` stays as `__dataclass_init__` (tests/test_quick_init.py compares
the two on every class in `QUICK`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")

QUICK: list[type] = []  # every class given a quick __init__ (the test compares each with its dataclass's)


class _Factory:
    """The default of a field with a default factory, as dataclasses shows it (`<factory>`)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def quick_init(cls: type[T]) -> type[T]:
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: quick_init needs a frozen dataclass with slots")
    fields = [f for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    if any(f._field_type is not dataclasses._FIELD for f in fields):  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__name__}: quick_init does not take InitVar or ClassVar fields")
    env: dict[str, Any] = {"_FACTORY": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for n, f in enumerate(fields):
        descriptor = next((c.__dict__[f.name] for c in cls.__mro__ if f.name in c.__dict__), None)
        if descriptor is None or not hasattr(descriptor, "__set__"):
            raise TypeError(f"{cls.__name__}.{f.name}: no slot descriptor")
        env[f"_set{n}"] = descriptor.__set__
        value = f.name
        if not f.init:
            if f.default is not dataclasses.MISSING:
                env[f"_default{n}"] = f.default
                value = f"_default{n}"
            elif f.default_factory is not dataclasses.MISSING:
                env[f"_factory{n}"] = f.default_factory
                value = f"_factory{n}()"
            else:
                continue  # (dataclasses leaves such a field unset too)
            body.append(f"    _set{n}(self, {value})")
            continue
        param = f.name
        if f.default is not dataclasses.MISSING:
            env[f"_default{n}"] = f.default
            param += f"=_default{n}"
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_factory{n}"] = f.default_factory
            param += "=_FACTORY"
            value = f"_factory{n}() if {f.name} is _FACTORY else {f.name}"
        (keyword if f.kw_only else positional).append(param)
        body.append(f"    _set{n}(self, {value})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({signature}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(source, env)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)  # (typing.get_type_hints reads the same)
    cls.__dataclass_init__ = cls.__init__  # type: ignore[attr-defined]
    cls.__init__ = init  # type: ignore[method-assign]
    QUICK.append(cls)
    return cls
