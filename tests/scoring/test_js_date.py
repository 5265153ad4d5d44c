"""JavaScript's `new Date(text)` as bun runs it (V8's date parser, TZ=UTC) and AgentV's `date` matching built
on it: one minimal case per class of ../shared/vectors/agentv/assertions.jsonl that evalspec's earlier
parse_date got wrong (the vector numbers, 0-based, in the comments), plus the parser's edges read from
V8's dateparser code."""

from __future__ import annotations

import pytest

from evalspec.scoring.field_accuracy import parse_date, score_fields
from evalspec.scoring.js_date import days_from_civil, iso_date, make_date, parse, ymd

DEFAULTS = ["YYYY-MM-DDTHH:mm:ssZ", "YYYY-MM-DD", "DD-MMM-YYYY", "MM/DD/YYYY", "DD/MM/YYYY"]


def _js(text: str) -> str | None:
    value = parse(text)
    return None if value is None else iso_date(value)


@pytest.mark.parametrize(("text", "day"), [
    # ISO forms: date-only is UTC, an offset moves the day, 24:00 is the next day (3206, 3341, 3439)
    ("2025-01-15", "2025-01-15"), ("2025-01-15T23:30:00-05:00", "2025-01-16"),
    ("2025-01-15T24:00:00Z", "2025-01-16"), ("2025-01-15T10:00:00", "2025-01-15"),
    ("2025-01-15T10:00:00.000Z", "2025-01-15"), ("2025-01-15T23:30:00+0100", "2025-01-15"),
    # an expanded year (3234, 3342), a year alone (3191, 3434)
    ("+002025-01-15", "2025-01-15"), ("-000001-01-01", "-000001-01-01"), ("2025", "2025-01-01"),
    # V8 accepts any day up to 31 and rolls over (3437, 3467; 02/30 in 3165)
    ("2025-02-30", "2025-03-02"), ("02/30/2025", "2025-03-02"),
    # parts the ISO form refuses go to the legacy parser: one-digit month (3195, 3223), a space before
    # the time, slashes (3152, 3188)
    ("2025-1-15", "2025-01-15"), ("2025-01-15 10:00", "2025-01-15"), ("2025/01/15", "2025-01-15"),
    ("1/5/2025", "2025-01-05"), ("01-15-2025", "2025-01-15"),
    # month names by their first three letters, weekdays and GMT ignored (3212, 3253, 3237)
    ("Wed, 15 Jan 2025 10:00:00 GMT", "2025-01-15"), ("Sept 5, 2025", "2025-09-05"),
    ("Jan. 15, 2025", "2025-01-15"), ("15 January 2025", "2025-01-15"), ("15-JAN-2025", "2025-01-15"),
    ("05-SEPT-2025", "2025-09-05"), ("January 15 2025", "2025-01-15"),
    # no year: 2001; a bare number is a month (3411: `items.length` = 1)
    ("Jan 15", "2001-01-15"), ("1", "2001-01-01"), ("2", "2001-02-01"),
    # two-digit years, am/pm, zone names, hhmm offsets, comments in parentheses
    ("1/5/99", "1999-01-05"), ("1/5/49", "2049-01-05"), ("Jan 15 2025 11:30 pm EST", "2025-01-16"),
    ("Jan 15 2025 10:00 GMT+0530", "2025-01-15"), ("Jan 15 2025 (note) 10:00", "2025-01-15"),
    ("2025-01-15T00:30:00+01:00", "2025-01-14"),
    # not dates (3225, 3229, 3152)
    ("2025-W03", None), ("20250115", None), ("1736899200000", None), ("2025-13-01", None), ("2025-015", None),
    ("tomorrow", None), ("B2", None), ("15.01.2025", None), ("15/01/2025", None), ("", None),
    ("2025-01-15T25:00:00Z", None), ("2025-01-15T24:01:00Z", None), ("Jan 15 2025 13:00 pm", None),
    ("+275760-09-14", None), ("2025-01-15\ud800", None),
])
def test_new_date_text(text: str, day: str | None) -> None:
    assert _js(text) == day


def test_a_nul_ends_the_text_and_a_narrow_space_is_a_space() -> None:
    assert _js("2025-01-15\0garbage") == "2025-01-15"
    assert _js("Jan\u202f15 2025") == "2025-01-15"


def test_new_date_year_month_day_rolls_over() -> None:
    assert iso_date(make_date(2025, 0, 32) or 0) == "2025-02-01"
    assert iso_date(make_date(2025, -1, 15) or 0) == "2024-12-15"
    assert iso_date(make_date(25, 0, 1) or 0) == "1925-01-01"  # 0–99 is 1900 + year
    assert iso_date(make_date(2025, 1, 0) or 0) == "2025-01-31"


def test_calendar_arithmetic_round_trips() -> None:
    assert days_from_civil(1970, 0) == 0
    for year in (-1, 0, 1, 1900, 2000, 2024, 2025, 9999, 10000):
        for month0 in range(12):
            assert ymd(days_from_civil(year, month0) * 86_400_000) == (year, month0 + 1, 1)


@pytest.mark.parametrize(("text", "formats", "day"), [
    # formats decide only where new Date fails: V8 reads 03/04 month first, whatever the formats say
    ("03/04/2025", ["DD/MM/YYYY"], "2025-03-04"),
    ("16/01/2025", ["DD/MM/YYYY"], "2025-01-16"), ("16/01/2025", ["MM/DD/YYYY"], None),
    ("13/01/2025", DEFAULTS, "2025-01-13"),
    # "YYYY-MM-DD" holds "MM-DD": a US format for AgentV (3350)
    ("15/01/2025", ["YYYY-MM-DD"], None), ("15-01-2025", ["MM/DD/YYYY"], None),
    # AgentV's own fallbacks build new Date(year, month, day), which rolls over
    ("32-Jan-2025", DEFAULTS, "2025-02-01"), ("00/15/2025", DEFAULTS, "2024-12-15"),
    ("13/00/2025", DEFAULTS, "2024-12-13"),
])
def test_agentv_parse_date(text: str, formats: list[str], day: str | None) -> None:
    value = parse_date(text, formats)
    assert (None if value is None else iso_date(value)) == day


def _one(answer: str, expected: object, field: dict) -> tuple[float, tuple[str, ...], tuple[str, ...]]:
    got = score_fields({"fields": [field]}, answer, [("assistant", expected)])
    return got.score, got.hits, got.misses


def test_field_accuracy_dates_as_agentv_scores_them() -> None:
    field = {"path": "d", "match": "date"}
    # 3278: an offset moves the expected day
    assert _one('{"d": "January 15 2025"}', {"d": "2025-01-15T23:30:00-05:00"}, field) == (
        0.0, (), ("d (date mismatch: got 2025-01-15, expected 2025-01-16)",))
    # 3437: Feb 30 rolls into March; a year alone is January 1
    assert _one('{"d": "2025-02-30"}', {"d": "2025"}, field) == (
        0.0, (), ("d (date mismatch: got 2025-03-02, expected 2025-01-01)",))
    # 3413: values are read as String(value): 2.0 is "2" (February 1, 2001); so is the expected 2
    assert _one('{"d": 2.0}', {"d": 2}, field)[0] == 1.0
    # an array is joined with commas: [1, 2] is "1,2" (January 2, 2001)
    assert _one('{"d": [1, 2]}', {"d": "2001-01-02"}, field)[0] == 1.0
    # objects are "[object Object]": unparseable
    assert _one('{"d": {"n": 2}}', {"d": "2025-01-15"}, field)[2] == ("d (unparseable candidate date)",)
    # formats that are not strings are dropped by AgentV's loader; no list at all means the defaults
    assert _one('{"d": "16/01/2025"}', {"d": "2025-01-16"}, {**field, "formats": [1, "DD/MM/YYYY"]})[0] == 1.0
    assert _one('{"d": "16/01/2025"}', {"d": "2025-01-16"}, {**field, "formats": "MM/DD/YYYY"})[0] == 1.0
