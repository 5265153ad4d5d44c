"""Every point function argument shape is declared once (registry/weval_functions.SHAPES): completion's
snippet, the JSON Schema and signature help read it, so a shape without its declaration, or a function
whose own example its shape's schema refuses, fails here."""

from __future__ import annotations

import jsonschema
import pytest
import yaml

from evalspec.registry.weval_functions import POINT_FUNCTIONS, SHAPES, Arg


def test_every_shape_is_declared() -> None:
    assert set(SHAPES) == set(Arg)
    for arg, shape in SHAPES.items():
        jsonschema.Draft7Validator.check_schema(shape.schema)
        assert shape.params and shape.written, arg


@pytest.mark.parametrize("name", sorted(POINT_FUNCTIONS))
def test_each_function_example_fits_its_shape(name: str) -> None:
    fn = POINT_FUNCTIONS[name]
    [(key, arg)] = yaml.safe_load(fn.example).items()
    assert key.lstrip("$") in (fn.name, *fn.aliases)
    jsonschema.Draft7Validator(SHAPES[fn.arg].schema).validate(arg)  # the schemas are draft 7
