"""Append-only JSONL files survive a kill mid-write: readers skip the torn line, writers finish it."""

from __future__ import annotations

from pathlib import Path

from evalspec.appendlog import AppendLog, read_records


def test_torn_last_line_is_skipped_and_finished(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": ')  # a kill cut the last record short
    assert list(read_records(path)) == [{"a": 1}, {"b": 2}]
    with AppendLog(path) as log:
        log.write(b'{"d": 4}\n')
    assert list(read_records(path)) == [{"a": 1}, {"b": 2}, {"d": 4}]


def test_fresh_truncates_once_and_writes_after_close_append(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "log.jsonl"
    path.parent.mkdir()
    path.write_bytes(b'{"old": true}\n')
    log = AppendLog(path, fresh=True)
    log.write(b'{"n": 1}\n')
    log.close()
    log.write(b'{"n": 2}\n')  # reopened for appending: nothing is dropped or truncated again
    log.close()
    assert list(read_records(path)) == [{"n": 1}, {"n": 2}]


def test_missing_file_reads_as_empty(tmp_path: Path) -> None:
    assert list(read_records(tmp_path / "none.jsonl")) == []
