"""An AgentV run keeps each cell's row in its database packed (journal/packed_rows.py) and exports the
results file once, from those rows: the file's lines are the rows stored, unpacked, in the plan's order,
whatever order the cells finished in; the database holds a fraction of the file's bytes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fakeprovider import Reply

from evalspec.run.journal import database
from evalspec.run.journal.packed_rows import DICTIONARY, pack, unpacker

from .conftest import AGENTV_TARGETS, SmartFake, env_for, options, run_events, write

SUITE = "name: packed\ndescription: Packed rows.\nexecution:\n  target: default\ntests:\n" + "".join(
    f"  - id: t{i}\n    input: \"question {i}\"\n    criteria: says {i}\n    assert:\n"
    f"      - {{type: contains, value: \"{i}\", required: true}}\n"
    "      - {type: regex, value: \"[a-z]+\"}\n      - {type: latency, max_ms: 60000}\n" for i in range(40))


def _run(tmp_path: Path, smart: SmartFake, **kw: Any) -> tuple[Path, Path]:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    suite = write(tmp_path / "evals" / "s.eval.yaml", SUITE)
    run_events(suite, options(tmp_path, env_for(smart), **{"concurrency": 8, **kw}))
    [results] = (tmp_path / "out").glob("agentv/*/*_*Z.jsonl")
    [db] = (tmp_path / "out").glob("agentv/*/*.run.db")
    return results, db


def _stored(db: Path) -> list[tuple[str, Any]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT item, result FROM scores").fetchall()
    finally:
        conn.close()


def test_the_rows_are_packed_in_the_database_and_exported_as_stored(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = lambda req: f"answer to {json.dumps(req.get('messages'))[-30:]}"
    results, db = _run(tmp_path, smart)
    lines = results.read_bytes().splitlines()
    assert [json.loads(line)["test_id"] for line in lines] == [f"t{i}" for i in range(40)]  # the plan's order
    stored = _stored(db)
    assert len(stored) == 40 and all(isinstance(value, bytes) for _, value in stored)  # packed, every one
    # a fraction of the file's bytes (the rows share their keys, names and messages)
    assert sum(len(value) for _, value in stored) * 4 < len(results.read_bytes())
    with database.reading(db) as conn:
        by_item = {item: row for item, _, row in database.score_rows(conn)}
        dictionary = database.export_head(conn, DICTIONARY)
    assert [by_item[f"t{i}"] for i in range(40)] == lines  # the file is the rows stored, byte for byte
    assert dictionary is not None and dictionary in lines  # the run's first row without an error


def test_rows_stored_before_the_dictionary_stay_json_text(tmp_path: Path, smart: SmartFake) -> None:
    """Rows with an error are never the dictionary: those stored before it are JSON text (sqlite3's
    json_extract reads them), those after it packed; the file is the same either way."""
    def decide(req: dict[str, Any]) -> Any:
        text = json.dumps(req.get("messages"))
        return Reply.server_error(400, "refused") if 'question 1"' not in text else f"answer {text[-20:]}"

    smart.decide = decide
    results, db = _run(tmp_path, smart, concurrency=1)
    rows = [json.loads(line) for line in results.read_bytes().splitlines()]
    assert [r["test_id"] for r in rows] == [f"t{i}" for i in range(40)]
    assert [r["test_id"] for r in rows if not r["error"]] == ["t1"]
    kinds = dict((item, type(value)) for item, value in _stored(db))
    assert kinds["t0"] is str and kinds["t1"] is bytes and kinds["t39"] is bytes
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT json_extract(result, '$.error') FROM scores WHERE item = 't0'").fetchone()[0]
    conn.close()


def test_a_stopped_run_resumed_exports_every_row_once(tmp_path: Path, smart: SmartFake,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A run stopped part-way leaves its rows in the database (no results file: it is an export);
    --resume exports one file with every row, the resumed ones as they were stored."""
    import asyncio
    import time

    from evalspec.analysis import analyze_file
    from evalspec.run.journal import run_store
    from evalspec.run.runner import plan_for, run

    monkeypatch.setattr(run_store, "COMMIT_EVERY", 0.01)  # a cell is reported soon after it is done

    def decide(req: dict[str, Any]) -> str:
        time.sleep(0.02)  # the fake answers one call at a time: the run is stopped part-way
        return f"answer to {json.dumps(req.get('messages'))[-30:]}"

    smart.decide = decide
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    suite = write(tmp_path / "evals" / "s.eval.yaml", SUITE)
    opts = options(tmp_path, env_for(smart), concurrency=2)

    async def stop_after(n: int) -> None:
        stream = run(plan_for(analyze_file(suite), opts), opts)
        seen = 0
        async for event in stream:
            seen += event.type == "scored"
            if seen == n:
                await stream.aclose()
                return

    asyncio.run(stop_after(5))
    [db] = (tmp_path / "out").glob("agentv/*/*.run.db")
    before = dict(_stored(db))
    assert 5 <= len(before) < 40 and not list((tmp_path / "out").glob("agentv/*/*_*Z.jsonl"))
    run_events(suite, options(tmp_path, env_for(smart), concurrency=2, resume=True))
    [results] = (tmp_path / "out").glob("agentv/*/*_*Z.jsonl")
    lines = results.read_bytes().splitlines()
    assert [json.loads(line)["test_id"] for line in lines] == [f"t{i}" for i in range(40)]
    with database.reading(db) as conn:
        unpack = database.rows_unpacker(conn)
        for item, value in before.items():  # the resumed cells' rows, as the first run stored them
            assert unpack(value) == lines[int(item[1:])]


def test_a_packed_row_reads_back_or_says_why_not() -> None:
    row = b'{"test_id":"t1","answer":"hello","hits":["Output contains \\"1\\""]}'
    dictionary = b'{"test_id":"t0","answer":"hello","hits":["Output contains \\"0\\""]}'
    packed = pack(row, dictionary)
    assert len(packed) < len(row) / 2
    assert unpacker(dictionary)(packed) == row
    assert unpacker(None)(row.decode()) == row  # JSON text, as stored before the dictionary
    with pytest.raises(ValueError, match="no dictionary"):
        unpacker(None)(packed)
    with pytest.raises(ValueError, match="packed results row"):
        unpacker(dictionary)(packed[:-3])
    with pytest.raises(ValueError, match="packed results row"):
        unpacker(b"another dictionary")(packed)


def test_rows_pack_at_the_fast_level_and_any_level_reads_back() -> None:
    # Level 1 (deflate_fast: ~20 k instructions a row less than 6's lazy matching), still ~15x smaller than
    # the row against the run's dictionary; a row an earlier run packed at level 6 reads back the same.
    import zlib

    def row(i: int) -> bytes:
        return json.dumps({"test_id": f"t{i}", "score": 0.6666666666666666, "hits": [f"Output contains \"{i}\"",
                           "Output matches pattern /[a-z]+/"], "answer": f"ECHO: Question {i}: what is the answer "
                           f"number {i}?", "scores": [{"name": f"contains-{i}", "type": "contains", "score": 1.0,
                           "weight": 1.0, "verdict": "pass"}, {"name": "latency", "type": "latency"}]}).encode()

    dictionary, data = row(0), row(12345)
    packed = pack(data, dictionary)
    fast = zlib.compressobj(1, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, dictionary)
    assert packed[1:] == fast.compress(data) + fast.flush()
    assert len(packed) < len(data) / 4 and unpacker(dictionary)(packed) == data
    old = zlib.compressobj(6, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, dictionary)
    assert unpacker(dictionary)(packed[:1] + old.compress(data) + old.flush()) == data


VOLATILE = ("timestamp", "duration_ms")  # when a cell ran and how long its call took


def _question(req: dict[str, Any]) -> str:
    import re

    found = re.search(r"question (\d+)", json.dumps(req.get("messages")))
    assert found is not None
    return found.group(1)


def test_sigkill_then_resume_repeats_no_call_and_exports_the_uninterrupted_run_s_rows(
        tmp_path: Path, smart: SmartFake, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real `evalspec run` of the suite killed with SIGKILL mid-way: its finished cells are in the
    database (packed), there is no results file; `--resume` calls only the rest and exports the rows an
    uninterrupted run exports, in the plan's order."""
    import os
    import subprocess
    import sys
    import time

    from run_records import kill_once, run_records

    from evalspec.cli import main

    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    suite = write(tmp_path / "evals" / "s.eval.yaml", SUITE)
    out = tmp_path / "out"
    env = {**env_for(smart), "PYTHONPATH": os.pathsep.join(sys.path)}
    pace = [0.03]  # the killed run's calls take a while; later runs' are instant

    def decide(req: dict[str, Any]) -> str:
        time.sleep(pace[0])
        return f"answer {_question(req)} [a-z]"

    smart.decide = decide
    proc = subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(suite), "--output", str(out),
                             "--concurrency", "2", "--no-report"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    kill_once(proc, lambda: sum(1 for r in run_records(out / "agentv") if r.get("t") == "score") >= 8)
    records = run_records(out / "agentv")
    answered = {r["c"][0] for r in records if r.get("t") == "gen"}
    assert len({r["c"][0] for r in records if r.get("t") == "score"}) >= 8 and len(answered) < 40
    assert not list(out.glob("agentv/*/*_*Z.jsonl"))  # killed before the end: the rows are in the database

    assert smart.idle()
    smart.reset()
    pace[0] = 0.0
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    assert main(["run", str(suite), "--output", str(out), "--resume", "--no-report"]) in (0, 1)
    asked = {f"t{_question(r)}" for r in smart.chat_requests()}
    assert asked.isdisjoint(answered)  # no finished call is made again
    assert len(smart.chat_requests()) == 40 - len(answered)
    [results] = out.glob("agentv/*/*_*Z.jsonl")
    got = [{k: v for k, v in json.loads(line).items() if k not in VOLATILE} for line in results.read_bytes().splitlines()]
    assert [r["test_id"] for r in got] == [f"t{i}" for i in range(40)]

    again = tmp_path / "again"
    assert main(["run", str(suite), "--output", str(again), "--no-report"]) in (0, 1)
    [whole] = again.glob("agentv/*/*_*Z.jsonl")
    assert got == [{k: v for k, v in json.loads(line).items() if k not in VOLATILE}
                   for line in whole.read_bytes().splitlines()]


def test_a_resume_holds_each_cells_row_as_stored_and_reads_it_when_replayed(tmp_path: Path,
                                                                           smart: SmartFake) -> None:
    """A resumed AgentV run held every finished cell's row parsed (several KB each: a 100,000-test run
    resumed at 23,324 cells done peaked at 213 MB, the fresh run at 95 MB); it holds what the database
    stores and reads a row back when the cell is replayed, the same row."""
    from evalspec.run.journal.run_store import open_journal

    smart.decide = lambda req: f"answer to {json.dumps(req.get('messages'))[-30:]}"
    results, db = _run(tmp_path, smart)
    rows = {json.loads(line)["test_id"]: json.loads(line) for line in results.read_bytes().splitlines()}
    with database.reading(db) as conn:
        header = database.header(conn)
    assert header is not None and header.kind == "agentv"
    journal, state = open_journal(db, resume=True, header=header)
    try:
        assert len(state.scores) == 40
        assert all(done.result == {} and done.packed for done in state.scores.values())  # nothing parsed
        assert {cell.item: state.result(done) for cell, done in state.scores.items()} == rows
    finally:
        journal.close()
    # and a resume replays them: the same file, no call made
    smart.reset()
    again, _ = _run(tmp_path, smart, resume=True)
    assert smart.chat_requests() == []
    assert [json.loads(line) for line in again.read_bytes().splitlines()] == list(rows.values())


def test_a_cell_process_s_row_is_encoded_there_and_packed_by_the_run_s_process_without_encoding_it_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run/split.py: a cell process sends its row with its JSON bytes (CellScore.packed, as `record` encodes
    rows); the run's process packs those bytes (AgentvWriter.adopt) into the records one process makes."""
    from types import SimpleNamespace

    from evalspec.run.events import Cell
    from evalspec.run.write import agentv

    conn = database.connect(tmp_path / "r.run.db", create=True)
    try:
        cells = [SimpleNamespace(cell=Cell(f"t{i}", "default")) for i in range(3)]
        journal: Any = SimpleNamespace(conn=conn, path=tmp_path / "r.run.db")
        rows = [{"test_id": f"t{i}", "answer": f"answer \u00e9 {i}", "score": 1.0} for i in range(3)]
        one, child, run = (agentv.AgentvWriter(tmp_path / "x.jsonl", cells, journal) for _ in range(3))
        child.packs = False
        expected = [one.record(i, cells[i].cell, rows[i], score=1.0, verdict="pass") for i in range(3)]
        sent = [child.record(i, cells[i].cell, rows[i], score=1.0, verdict="pass") for i in range(3)]
        assert [s[0].packed for s in sent] == [json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode()
                                               for r in rows]

        def encoded_again(value: Any) -> bytes:
            raise AssertionError("the run's process encoded a row a cell process had encoded")

        monkeypatch.setattr(agentv, "dumps_bytes", encoded_again)
        adopted = [run.adopt(i, s[0]) for i, s in enumerate(sent)]
    finally:
        conn.close()
    assert [[(type(r), getattr(r, "packed", None), getattr(r, "body", None)) for r in rs] for rs in adopted] == \
        [[(type(r), getattr(r, "packed", None), getattr(r, "body", None)) for r in rs] for rs in expected]
