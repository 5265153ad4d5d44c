"""`to_fixed` (engine/scoring/js_text.py), the one `Number.prototype.toFixed` every message and export
writes with, against what Node 20 answered for `x.toFixed(0)`, `x.toFixed(2)` and `x.toFixed(4)`."""

from __future__ import annotations

import math

import pytest

from evalspec.scoring.js_text import to_fixed

# (x, x.toFixed(0), x.toFixed(2), x.toFixed(4)) as Node 20 wrote them
NODE = [
    (0.0, '0', '0.00', '0.0000'),
    (-0.0, '0', '0.00', '0.0000'),
    (-0.001, '-0', '-0.00', '-0.0010'),
    (0.001, '0', '0.00', '0.0010'),
    (-0.004, '-0', '-0.00', '-0.0040'),
    (-0.005, '-0', '-0.01', '-0.0050'),
    (-0.0049, '-0', '-0.00', '-0.0049'),
    (0.005, '0', '0.01', '0.0050'),
    (0.015, '0', '0.01', '0.0150'),
    (1.005, '1', '1.00', '1.0050'),
    (-1.005, '-1', '-1.00', '-1.0050'),
    (0.125, '0', '0.13', '0.1250'),
    (-0.125, '-0', '-0.13', '-0.1250'),
    (2.5, '3', '2.50', '2.5000'),
    (-2.5, '-3', '-2.50', '-2.5000'),
    (123.456, '123', '123.46', '123.4560'),
    (math.nan, 'NaN', 'NaN', 'NaN'),
    (math.inf, 'Infinity', 'Infinity', 'Infinity'),
    (-math.inf, '-Infinity', '-Infinity', '-Infinity'),
    (1e+21, '1e+21', '1e+21', '1e+21'),
    (-1e+21, '-1e+21', '-1e+21', '-1e+21'),
    (1.5e+21, '1.5e+21', '1.5e+21', '1.5e+21'),
    (9.99e+20, '999000000000000000000', '999000000000000000000.00', '999000000000000000000.0000'),
    (1e+20, '100000000000000000000', '100000000000000000000.00', '100000000000000000000.0000'),
    (-1e+20, '-100000000000000000000', '-100000000000000000000.00', '-100000000000000000000.0000'),
    (5e-324, '0', '0.00', '0.0000'),
    (-5e-324, '-0', '-0.00', '-0.0000'),
    (1e-07, '0', '0.00', '0.0000'),
    (-1e-07, '-0', '-0.00', '-0.0000'),
    (0.045, '0', '0.04', '0.0450'),
    (1000000000000000.5, '1000000000000001', '1000000000000000.50', '1000000000000000.5000'),
    (5e-05, '0', '0.00', '0.0001'),
    (-5e-05, '-0', '-0.00', '-0.0001'),
    (0.00015, '0', '0.00', '0.0001'),
    (12.34565, '12', '12.35', '12.3456'),
]


@pytest.mark.parametrize(("x", "d0", "d2", "d4"), NODE, ids=[repr(r[0]) for r in NODE])
def test_to_fixed_writes_what_javascript_writes(x: float, d0: str, d2: str, d4: str) -> None:
    assert (to_fixed(x, 0), to_fixed(x, 2), to_fixed(x, 4)) == (d0, d2, d4)


def test_the_copies_are_gone() -> None:
    """The writers and field-accuracy use this one (they wrote "-0.00" for -0, "nan" for NaN)."""
    from evalspec.run.write import jsjson
    from evalspec.scoring import field_accuracy

    assert not hasattr(jsjson, "js_to_fixed") and not hasattr(field_accuracy, "_fixed2")
