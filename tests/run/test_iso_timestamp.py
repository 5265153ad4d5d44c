"""write/files.iso_timestamp: JavaScript's toISOString, from a UTC time or any other zone's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from evalspec.run.write.files import iso_timestamp, safe_timestamp


def test_utc_and_other_zones() -> None:
    assert iso_timestamp(datetime(2024, 1, 1, 12, 30, 0, 123456, tzinfo=UTC)) == "2024-01-01T12:30:00.123Z"
    assert iso_timestamp(datetime(2024, 1, 1, 14, 30, 0, 123456, tzinfo=timezone(timedelta(hours=2)))) == \
        "2024-01-01T12:30:00.123Z"
    assert iso_timestamp(datetime(2024, 1, 1, tzinfo=UTC)) == "2024-01-01T00:00:00.000Z"
    assert safe_timestamp(datetime(2024, 1, 1, 12, 30, 0, 5000, tzinfo=UTC)) == "2024-01-01T12-30-00-005Z"
