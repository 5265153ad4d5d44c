"""Every fixture file's findings are exactly the ones annotated in it (see fixture_annotations.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalspec.analysis import analyze_file

from .fixture_annotations import read_annotations

FIXTURES = Path(__file__).parent / "fixtures"
FILES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".yml", ".yaml", ".json") and p.is_file()
               and "external" not in p.parts)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_fixture(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expected = read_annotations(text)
    analysis = analyze_file(path)
    actual = [f for f in analysis.findings if f.path is None or Path(f.path) == path]
    unmatched = list(actual)
    missing = []
    for e in expected:
        hit = next((f for f in unmatched if f.span.start_line == e.line and f.code == e.code
                    and str(f.severity) == e.severity and (e.col is None or f.span.start_col == e.col)
                    and e.text in f.message), None)
        if hit is None:
            missing.append(e.describe())
        else:
            unmatched.remove(hit)
    extra = [f"{f.span.start_line + 1}:{f.span.start_col + 1} {f.severity}[{f.code}]: {f.message}" for f in unmatched]
    assert not missing and not extra, f"\nexpected but not reported: {missing}\nreported but not expected: {extra}"


def test_fixtures_exist() -> None:
    assert len(FILES) >= 6
