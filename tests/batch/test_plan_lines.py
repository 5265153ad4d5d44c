"""A resumed run reads each batch part from the run database (run/generate/batch_journal.py): the same
parts, ids and slot keys as were planned, for ids holding quotes, backslashes, brackets, commas and the
very text that started the items of an earlier evalspec's JSONL line; and a journal of an earlier
evalspec reads to the same parts."""

from __future__ import annotations

from pathlib import Path

from evalspec.jsonio import dumps_bytes
from evalspec.run.events import Cell
from evalspec.run.generate import batch_journal
from evalspec.run.generate.batch_journal import JournaledBatches, PartItems, load_parts, slot_key
from evalspec.run.journal.records import BatchCreated, BatchPlanned
from tests.run_records import journal_at

HOSTILE = ['p"1', "p\\2", "p]3", "p[4", 'p,"items":[5', "p\u00e9\u202e6", "p\n7", "", "p}]8"]


def _read(path: Path) -> tuple[dict[str, tuple[str, str, float, list[str], str | None]], dict[str, list[list[int]]]]:
    keys: dict[str, batch_journal.Keys] = {}
    parts = load_parts(path, keys)
    return ({k: (p.key, p.model, p.planned_at, list(p.items), p.batch_id) for k, p in parts.items()},
            {k: [list(a) for a in v] for k, v in keys.items()})


def test_parts_read_back_are_those_planned_in_the_database_and_in_an_old_journal(tmp_path: Path) -> None:
    items: list[tuple[str, Cell, int | str]] = []
    for n, item in enumerate(HOSTILE * 3):
        items.append((f"r{n}", Cell(f"{item}{n // 9}", f"openai:m[temp:{n % 2}]"), n % 3 if n % 2 else f"judge:{n}:a\"]"))
    other = [(cid, cell, turn) for cid, cell, turn in items[:5]]
    records = [BatchPlanned("k1", "openai:m", 1.5, items), BatchCreated("k1", "batch_1"),
               BatchPlanned("k2", "openai:m", 1.5, [(f"x{n}", c, t) for n, (_, c, t) in enumerate(other)]),
               BatchPlanned("k3", "openai:m", 1.5, [])]
    path = tmp_path / "j.run.db"
    with journal_at(path, fresh=True) as journal:
        journal.write(*records)
    old = tmp_path / "j.journal.jsonl"
    old.write_bytes(b"".join(r.json_line() if isinstance(r, BatchPlanned) else dumps_bytes(r.to_json()) + b"\n"
                             for r in records))
    read = _read(path)
    assert _read(old) == read
    parts, keys = read
    assert list(parts) == ["k1", "k2", "k3"] and parts["k1"][4] == "batch_1"
    assert parts["k1"][3] == [cid for cid, _, _ in items] and parts["k2"][3] == [f"x{n}" for n in range(5)]
    assert keys["k3"] == [[], [], []]
    journaled = JournaledBatches(path)
    for n, (_, cell, turn) in enumerate(items):
        found = journaled.find((cell, turn))
        assert found is not None and found[0].key == "k1" and found[1] == n
    assert journaled.find((Cell("p9", "openai:m[temp:0]"), 0)) is None


def test_keys_are_sorted_by_their_high_half_with_places() -> None:
    part_items = PartItems(0)
    for n in range(50):
        part_items.add(f"r{n}", Cell(f"p{n}", "m"), 0)
    keys: dict[str, batch_journal.Keys] = {}
    batch_journal._part("k", "m", 0.0, iter([(f"r{n}", f"p{n}", "m", 0) for n in range(50)]), keys)
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
