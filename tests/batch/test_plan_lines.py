"""A resumed run reads each batch plan line of its journal an item at a time (run/generate/batch_journal.py:
a part's 100,000 items parsed at once were the resumed run's peak). What it reads must be what parsing
the whole line gives: the same parts, ids and slot keys, for ids holding quotes, backslashes, brackets,
commas and the very text that starts the items; and a line not as the journal writes it (edited by hand,
cut short) is parsed whole or skipped, never half read."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalspec.run.events import Cell
from evalspec.run.generate import batch_journal
from evalspec.run.generate.batch_journal import JournaledBatches, PartItems, load_parts, slot_key
from evalspec.run.journal.journal_file import _line
from evalspec.run.journal.records import BatchCreated, BatchPlanned

HOSTILE = ['p"1', "p\\2", "p]3", "p[4", 'p,"items":[5', "p\u00e9\u202e6", "p\n7", "", "p}]8"]


def _plan(key: str, items: list[tuple[str, Cell, int | str]]) -> bytes:
    return BatchPlanned(key, "openai:m", 1.5, items).json_line()


def _journal(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(lines))
    return path


def _whole(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(line: bytes) -> None:
        raise batch_journal._NotAsWritten

    monkeypatch.setattr(batch_journal, "_items_of", refuse)


def _read(path: Path) -> tuple[dict[str, tuple[str, str, float, list[str], str | None]], dict[str, list[list[int]]]]:
    keys: dict[str, batch_journal.Keys] = {}
    parts = load_parts(path, keys)
    return ({k: (p.key, p.model, p.planned_at, list(p.items), p.batch_id) for k, p in parts.items()},
            {k: [list(a) for a in v] for k, v in keys.items()})


def test_items_read_one_at_a_time_are_those_of_the_whole_line(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    items: list[tuple[str, Cell, int | str]] = []
    for n, item in enumerate(HOSTILE * 3):
        items.append((f"r{n}", Cell(f"{item}{n // 9}", f"openai:m[temp:{n % 2}]"), n % 3 if n % 2 else f"judge:{n}:a\"]"))
    other = [(cid, cell, turn) for cid, cell, turn in items[:5]]
    path = _journal(tmp_path / "j.journal.jsonl", [
        _plan("k1", items), _line(BatchCreated("k1", "batch_1")),
        _plan("k2", [(f"x{n}", c, t) for n, (_, c, t) in enumerate(other)]),  # ids not r<n>: kept as a list
        _plan("k3", []),
    ])
    streamed = _read(path)
    _whole(monkeypatch)
    assert _read(path) == streamed
    parts, keys = streamed
    assert list(parts) == ["k1", "k2", "k3"] and parts["k1"][4] == "batch_1"
    assert parts["k1"][3] == [cid for cid, _, _ in items] and parts["k2"][3] == [f"x{n}" for n in range(5)]
    assert keys["k3"] == [[], [], []]
    journaled = JournaledBatches(path)
    for n, (_, cell, turn) in enumerate(items):
        found = journaled.find((cell, turn))
        assert found is not None and found[0].key == "k1" and found[1] == n
    assert journaled.find((Cell("p9", "openai:m[temp:0]"), 0)) is None


@pytest.mark.parametrize("edit", [
    lambda line: line.replace(b'"items":[', b'"items": [', 1),  # spaced: parsed whole
    lambda line: line.replace(b'"k":"k1",', b"", 1).replace(b"]}\n", b'],"k":"k1"}\n'),  # key order
    lambda line: line.replace(b'"r1",', b'"r1" ,', 1),  # a blank inside an item
    lambda line: line.replace(b"]]}", b"],]}", 1),  # a trailing comma: not JSON, skipped
    lambda line: line.replace(b'],["r1"', b'],[["r1"', 1),  # a nested list: not an item, skipped
    lambda line: line[:-20] + b"\n",  # cut short by a kill
    lambda line: line.replace(b'"at":1.5,', b'"at":1.5,"items":7,', 1),  # "items" twice
], ids=["spaced", "key-order", "blank", "trailing-comma", "nested", "cut", "twice"])
def test_a_line_not_as_written_reads_as_the_whole_line_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            edit: object) -> None:
    items = [(f"r{n}", Cell(f"p{n}", "openai:m"), 0) for n in range(4)]
    path = _journal(tmp_path / "j.journal.jsonl", [edit(_plan("k1", items))])  # type: ignore[operator]
    streamed = _read(path)
    _whole(monkeypatch)
    assert _read(path) == streamed
    parts, keys = streamed
    if parts:  # read as a part: every item, never some
        assert parts["k1"][3] == [f"r{n}" for n in range(4)] and len(keys["k1"][0]) == 4


def test_keys_are_sorted_by_their_high_half_with_places() -> None:
    part_items = PartItems(0)
    for n in range(50):
        part_items.add(f"r{n}", Cell(f"p{n}", "m"), 0)
    keys: dict[str, batch_journal.Keys] = {}
    head = {"k": "k", "m": "m", "at": 0}
    batch_journal._part(head, iter([[f"r{n}", f"p{n}", "m", 0] for n in range(50)]), keys)
    highs, lows, places = keys["k"]
    assert list(highs) == sorted(highs)
    for high, low, place in zip(highs, lows, places, strict=True):
        assert slot_key(Cell(f"p{place}", "m"), 0) == (high, low)


def test_a_header_s_fingerprints_read_back_compact_are_the_same_mapping() -> None:
    """A resumed run reads its journal's header: 100,000 fingerprints kept as 8 bytes each (plan/items.py's
    Fingerprints), the same mapping as the dict of strings; values not as the runners write them (other
    lengths, upper case, not text) stay a dict, as they were read."""
    from evalspec.run.journal.records import RunHeader
    from evalspec.run.plan.items import Fingerprints

    fp = {f"p{n}": f"{n * 2654435761 % 2**64:016x}" for n in range(1000)}
    fp['odd "id" \u00e9'] = "00ff00ff00ff00ff"
    header = RunHeader.from_json({"t": "run", "kind": "weval", "file": "b.yml", "run_label": "x", "started": "",
                                  "fp": fp})
    assert isinstance(header.fp, Fingerprints)
    assert dict(header.fp) == fp and list(header.fp) == list(fp) and header.fp["p7"] == fp["p7"]
    assert RunHeader.from_json(header.to_json()).fp == fp
    for odd in ("00FF00FF00FF00FF", "00ff", 17, "00ff00ff00ff00 f"):
        other = RunHeader.from_json({"t": "run", "kind": "weval", "file": "b.yml", "run_label": "x", "started": "",
                                     "fp": {**fp, "p1": odd}})
        assert type(other.fp) is dict and other.fp["p1"] == str(odd) and other.fp["p2"] == fp["p2"]
