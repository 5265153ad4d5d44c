"""field-accuracy scoring, case by case, computed by hand (AgentV v2.19 semantics and wording)."""

from __future__ import annotations

import pytest

from evalspec.scoring.field_accuracy import parse_answer_json, parse_date, score_fields
from evalspec.scoring.js_date import iso_date

EXPECTED = [("user", "extract"), ("assistant", {
    "invoice": {"number": "INV-7", "total": 1000.0, "date": "2025-01-15", "items": [{"sku": "A1", "qty": 2}]},
    "vendor": "Acme", "paid": False})]


def _score(fields: list[dict], answer: str, aggregation: str | None = None):
    config = {"fields": fields, **({"aggregation": aggregation} if aggregation else {})}
    return score_fields(config, answer, EXPECTED)


ANSWER = """Here is the data:
```json
{"invoice": {"number": "INV-7", "total": 1004.5, "date": "15-JAN-2025", "items": [{"sku": "A1", "qty": "2"}]},
 "vendor": "ACME", "paid": false}
```"""


def test_each_match_kind() -> None:
    got = _score([{"path": "invoice.number", "match": "exact"},
                  {"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 5},
                  {"path": "invoice.date", "match": "date"},
                  {"path": "invoice.items[0].sku", "match": "exact"},
                  {"path": "invoice.items[0].qty", "match": "exact", "weight": 2},
                  {"path": "vendor", "match": "exact"},
                  {"path": "paid", "match": "exact"}], ANSWER)
    # hits: number, total (|4.5| ≤ 5), date, sku, paid = weight 5; misses: qty ("2" ≠ 2, weight 2), vendor.
    assert got.score == pytest.approx(5 / 8)
    # AgentV keeps the first 4 hits and 4 misses; the reasoning counts them all
    assert got.hits == ("invoice.number", "invoice.total (within tolerance: diff=4.50)", "invoice.date",
                        "invoice.items[0].sku")
    assert got.reasoning == "5/7 fields matched"
    assert got.misses == ("invoice.items[0].qty (type mismatch: got string, expected number)",
                          "vendor (value mismatch)")
    assert _score([{"path": "vendor", "match": "exact"}], ANSWER, "all_or_nothing").score == 0.0
    assert _score([{"path": "paid", "match": "exact"}], ANSWER, "all_or_nothing").score == 1.0


def test_numeric_tolerance_absolute_and_relative() -> None:
    answer = '{"invoice": {"total": 1004.5}}'
    assert _score([{"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 1}], answer).misses == (
        "invoice.total (outside tolerance: diff=4.50, tolerance=1)",)
    assert _score([{"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 0.005, "relative": True}],
                  answer).score == 1.0  # 4.5 / 1000 = 0.0045
    assert _score([{"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 0.004, "relative": True}],
                  answer).score == 0.0
    assert _score([{"path": "invoice.total", "match": "numeric_tolerance"}], '{"invoice": {"total": "n/a"}}'
                  ).misses == ("invoice.total (non-numeric value)",)


def test_dates_with_formats() -> None:
    # `formats` only matters where JavaScript's `new Date(text)` fails: V8's parser reads 03/04 month first
    fmt_eu, fmt_us = ["DD/MM/YYYY"], ["MM/DD/YYYY"]
    assert _day("03/04/2025", fmt_eu) == _day("03/04/2025", fmt_us) == _day("03/04/2025", []) == "2025-03-04"
    assert _day("16/01/2025", fmt_eu) == "2025-01-16"  # month 16: new Date fails, AgentV reads it day first
    assert _day("16/01/2025", fmt_us) is None  # … or month first, and 16 is no month
    assert _day("15/01/2025", []) == "2025-01-15"  # neither: 15 cannot be a month
    assert _day("2025-01-15T23:10:00Z", []) == "2025-01-15"
    assert _day("January 15, 2025", []) == "2025-01-15"
    assert _day("15-Jan-2025", []) == "2025-01-15"
    assert _day("not a date", []) is None
    answer = '{"invoice": {"date": "16/01/2025"}}'
    got = _score([{"path": "invoice.date", "match": "date", "formats": fmt_eu}], answer)
    assert got.misses == ("invoice.date (date mismatch: got 2025-01-16, expected 2025-01-15)",)


def _day(text: str, formats: list[str]) -> str | None:
    value = parse_date(text, formats)
    return None if value is None else iso_date(value)


def test_missing_fields_and_unreadable_answers() -> None:
    answer = '{"vendor": "Acme"}'
    got = _score([{"path": "vendor", "match": "exact"}, {"path": "invoice.number", "match": "exact"},
                  {"path": "invoice.total", "match": "exact", "required": False}], answer)
    # vendor ✓ (1), number required missing ✗ (1), total optional missing (weight 0): 1 / 2
    assert got.score == pytest.approx(1 / 2) and got.not_scored is None
    assert "invoice.number (required, missing)" in got.misses


def test_a_field_with_no_expected_value_is_not_a_match() -> None:
    """AgentV scores a field whose path has no expected value 1 ("no expected value"): never compared.
    evalspec does not score the assertion (docs/reference-differences.md, vectors NO_EXPECTED_VALUE)."""
    fields = [{"path": "vendor", "match": "exact"}, {"path": "not.expected", "match": "exact"}]
    got = _score(fields, '{"vendor": "Acme", "not": {"expected": 1}}')
    assert got.not_scored is not None and "no expected value for not.expected" in got.not_scored
    # all_or_nothing with a compared field that misses: 0 whatever the other field, as AgentV scores it
    got = score_fields({"fields": fields, "aggregation": "all_or_nothing"}, '{"vendor": "Other"}', EXPECTED)
    assert got.not_scored is None and got.score == 0.0 and "not.expected: no expected value" in got.hits
    assert score_fields({"fields": [{"path": "a", "match": "exact"}]}, "no json here", EXPECTED).misses == (
        "Failed to parse candidate answer as JSON",)
    assert score_fields({"fields": [{"path": "a", "match": "exact"}]}, "{}", [("assistant", "plain text")]).misses == (
        "No expected data found in expected_output",)


def test_json_is_found_in_fences_and_prose() -> None:
    assert parse_answer_json('```\n{"a": 1}\n```') == {"a": 1}
    assert parse_answer_json('The result: {"a": {"b": 2}} — done.') == {"a": {"b": 2}}
    with pytest.raises(ValueError):
        parse_answer_json("nothing")
