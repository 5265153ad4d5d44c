"""quick_init (engine/quick_init.py): each class's quick __init__ takes the same parameters as its dataclass's
and makes the same object, still frozen."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field

import pytest

import evalspec.run.agentv_stages  # (imports every class the runs give a quick __init__)
import evalspec.run.weval_stages  # noqa: F401
from evalspec.quick_init import QUICK, quick_init


def _slots(obj: object) -> dict[str, object]:
    return {f.name: getattr(obj, f.name, "<unset>") for f in dataclasses.fields(obj)}  # type: ignore[arg-type]


def _params(sig: inspect.Signature) -> list[tuple[str, object, bool]]:
    return [(p.name, p.kind, p.default is inspect.Parameter.empty) for p in sig.parameters.values()]


@pytest.mark.parametrize("cls", QUICK, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_same_parameters_same_object(cls: type) -> None:
    quick, original = inspect.signature(cls.__init__), inspect.signature(cls.__dataclass_init__)
    assert _params(quick) == _params(original)
    for name, p in quick.parameters.items():  # the same defaults (a factory's shows as <factory> in both)
        assert repr(p.default) == repr(original.parameters[name].default)
    assert cls.__init__.__annotations__ == cls.__dataclass_init__.__annotations__
    required = [p for p in list(quick.parameters.values())[1:] if p.default is inspect.Parameter.empty]
    args = {p.name: object() for p in required}
    made = cls(**args)
    expected = object.__new__(cls)
    cls.__dataclass_init__(expected, **args)
    assert _slots(made) == _slots(expected)
    name = dataclasses.fields(cls)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, name, 1)


def test_defaults_factories_keywords_and_post_init() -> None:
    seen = []

    @quick_init
    @dataclass(frozen=True, slots=True)
    class Example:
        a: int
        b: list[int] = field(default_factory=list)
        c: str = "c"
        d: int = field(default=4, init=False)
        e: int = field(default=5, kw_only=True)

        def __post_init__(self) -> None:
            seen.append(self.a)

    x, y = Example(1), Example(2, [3], "z", e=6)
    assert (x.a, x.b, x.c, x.d, x.e) == (1, [], "c", 4, 5)
    assert (y.a, y.b, y.c, y.d, y.e) == (2, [3], "z", 4, 6)
    assert x.b is not Example(1).b  # a new list each time, as the factory makes it
    assert seen == [1, 2, 1]
    with pytest.raises(TypeError):
        Example(1, [], "c", 5)  # e is keyword-only, d not a parameter


def test_refuses_what_it_cannot_make() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(slots=True)
    class NotFrozen:
        a: int

    for cls in (NoSlots, NotFrozen):
        with pytest.raises(TypeError):
            quick_init(cls)
