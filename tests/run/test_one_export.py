"""One run, one set of files: every export of a run (the first, a `--resume`'s, a shard's, a merge's) is
the same files, and the cost file counts every call the run answered from the cache, whichever process
made it.

Weval names its comparison file by the time it is written (`<label>_<stamp>_comparison.json`, the
stamp repeated in its `timestamp`): the stamp is chosen once, kept in the run database's `run.results`
before the first export is written, and reused by every later export of the run. AgentV's results file
is named by the run's start, kept there from the start. The `usage` table's `cached` column keeps each
call the response cache answered (bench/kill_trials.py found both: a `--resume` after a kill once the
export was written added a second comparison file, and its cost file said 0 cached calls)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from evalspec.cli import main

from .conftest import AGENTV_TARGETS, SmartFake, classify, criterion_of, serving, write

BLUEPRINT = """title: One export
models: [openai:model-a, openai:model-b]
evaluationConfig:
  llm-coverage:
    judges:
      - {model: "openai:judge", approach: holistic}
---
- id: a
  prompt: question a
  should: [$contains: a, answers the question]
- id: b
  prompt: question b
  should: [$contains: b, answers the question]
"""

SUITE = """name: one
description: d
tests:
  - id: t1
    input: question 1
    criteria: answers
    assert: [{type: contains, value: "1"}, {type: llm-judge, prompt: "Is {{ answer }} right?"}]
  - id: t2
    input: question 2
    criteria: answers
    assert: [{type: contains, value: "2"}, {type: llm-judge, prompt: "Is {{ answer }} right?"}]
"""


def _decide(req: dict[str, Any]) -> str:
    if criterion_of(req) is not None:
        return classify("CLASS_EXACT")
    if req.get("model") == "grader-model":
        return json.dumps({"score": 1, "hits": ["ok"], "misses": [], "reasoning": "fine"})
    return "answers " + str(req["messages"][-1]["content"])


@pytest.fixture
def fake(smart: SmartFake, monkeypatch: pytest.MonkeyPatch) -> SmartFake:
    return serving(smart, monkeypatch, _decide)


def _files(folder: Path) -> dict[str, bytes]:
    """The exports in a results folder (not the run database, the cache or the report), by name."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())
            if p.is_file() and ".run." not in p.name and p.name != "report.html"}


def _weval_folder(out: Path) -> Path:
    (folder,) = list(out.glob("live/blueprints/*"))
    return folder


def _run(path: Path, out: Path, *extra: str) -> None:
    assert main(["run", str(path), "-o", str(out), "--no-report", "--retries", "0", *extra]) == 0


def _results_column(folder: Path) -> str | None:
    (db,) = [p for p in folder.glob("*.run.db") if ".prev." not in p.name]
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT results FROM run").fetchone()[0]


def test_a_resumed_weval_export_is_the_first_one_byte_for_byte(tmp_path: Path, fake: SmartFake) -> None:
    """A finished run resumed (as after a kill once its export was written) writes its comparison file
    again under the same name with the same bytes, `timestamp` included: one comparison file, not two."""
    bp = write(tmp_path / "one.weval.yml", BLUEPRINT)
    out = tmp_path / "out"
    _run(bp, out)
    folder = _weval_folder(out)
    first = _files(folder)
    (name,) = [n for n in first if n.endswith("_comparison.json")]
    assert _results_column(folder) == name  # kept in the run database
    stamp = json.loads(first[name])["timestamp"]
    assert name.endswith(f"_{stamp}_comparison.json")
    fake.reset()
    _run(bp, out, "--resume")
    assert fake.count == 0
    assert _files(folder) == first  # the same names, the same bytes
    assert len(list(folder.glob("*_comparison.json"))) == 1


def test_a_fresh_run_of_the_label_still_writes_a_new_comparison_file(tmp_path: Path, fake: SmartFake) -> None:
    """The stamp belongs to one run: a fresh run (not --resume) of the same label is another run, with its
    own time, as the reference names each run's file by when it was written."""
    bp = write(tmp_path / "one.weval.yml", BLUEPRINT)
    out = tmp_path / "out"
    _run(bp, out)
    folder = _weval_folder(out)
    (first,) = list(folder.glob("*_comparison.json"))
    _run(bp, out)
    names = sorted(p.name for p in folder.glob("*_comparison.json"))
    assert len(names) == 2 and first.name in names
    newer = next(n for n in names if n != first.name)
    assert _results_column(folder) == newer


def test_the_stamp_is_in_the_database_before_the_export_is_written(tmp_path: Path, fake: SmartFake,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A kill while the comparison file is written must not leave the next export another name: the name
    is committed before the file is begun."""
    from evalspec.run.write import weval as weval_writer

    bp = write(tmp_path / "one.weval.yml", BLUEPRINT)
    out = tmp_path / "out"
    seen: list[str | None] = []
    real = weval_writer.write_comparison

    def looking(folder: Path, base: str, stamp: str, *args: Any, **kwargs: Any) -> list[Path]:
        seen.append(_results_column(folder))  # read by another connection: committed
        assert seen[-1] == f"{base}_{stamp}_comparison.json"
        raise KeyboardInterrupt  # as a kill would stop it here

    monkeypatch.setattr(weval_writer, "write_comparison", looking)
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--retries", "0"]) == 130
    assert seen and seen[0] is not None
    assert not list(_weval_folder(out).glob("*_comparison.json"))
    monkeypatch.setattr(weval_writer, "write_comparison", real)
    fake.reset()
    _run(bp, out, "--resume")
    assert fake.count == 0
    assert [p.name for p in _weval_folder(out).glob("*_comparison.json")] == [seen[0]]


def test_a_resumed_shard_keeps_its_name_manifest_and_merge(tmp_path: Path, fake: SmartFake) -> None:
    """A shard's export and manifest are the same files when resumed, so its merge is too."""
    bp = write(tmp_path / "one.weval.yml", BLUEPRINT)
    out = tmp_path / "out"
    _run(bp, out, "--shard", "1/2")
    _run(bp, out, "--shard", "2/2")
    folder = _weval_folder(out)
    shards = _files(folder)
    manifests = sorted(str(p) for p in folder.glob("*.shard.json"))
    assert len(manifests) == 2
    assert main(["merge", *manifests, "-o", str(out), "--no-report"]) == 0
    merged = _files(folder)
    _run(bp, out, "--shard", "1/2", "--resume")
    _run(bp, out, "--shard", "2/2", "--resume")
    assert _files(folder) == merged
    assert main(["merge", *manifests, "-o", str(out), "--no-report"]) == 0
    assert _files(folder) == merged
    assert set(shards) < set(merged)
    assert len([n for n in merged if n.endswith("_comparison.json")]) == 3  # two shards and their merge


def _cost(folder: Path) -> dict[str, Any]:
    (path,) = list(folder.glob("*_cost.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def _cached(cost: dict[str, Any]) -> dict[tuple[str, str], int]:
    return {(line["role"], line["model"]): line["cached"] for line in cost["lines"]}


def test_a_weval_re_export_counts_the_cache_hits_of_every_session(tmp_path: Path, fake: SmartFake) -> None:
    """With --cache, the cost file's `cached` counts every call the run's cache answered, whichever
    process made it: a `--resume` re-exporting said 0 (it counted its own session's hits)."""
    bp = write(tmp_path / "one.weval.yml", BLUEPRINT)
    out = tmp_path / "out"
    _run(bp, out, "--cache")  # fills the cache
    _run(bp, out, "--cache")  # a fresh run of the label: every call from the cache
    folder = _weval_folder(out)
    (newest,) = [p for p in folder.glob("*_comparison.json") if p.name == _results_column(folder)]
    cost_name = newest.name.removesuffix("_comparison.json") + "_cost.json"
    first = json.loads((folder / cost_name).read_text(encoding="utf-8"))
    hits = _cached(first)
    assert hits[("answers", "openai:model-a")] == 2 and hits[("judge", "holistic(openai:judge)")] == 4
    fake.reset()
    _run(bp, out, "--cache", "--resume")
    assert fake.count == 0
    assert json.loads((folder / cost_name).read_text(encoding="utf-8")) == first  # (was: every `cached` 0)
    db = next(p for p in folder.glob("*.run.db") if ".prev." not in p.name)
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT role, cached, input_tokens, output_tokens, usd FROM usage").fetchall()
    assert rows and all(cached == 1 and inp == out_ == 0 and usd == 0 for _, cached, inp, out_, usd in rows)
    assert sum(hits.values()) == len(rows)


def test_an_agentv_re_export_counts_the_cache_hits_of_every_session(tmp_path: Path, fake: SmartFake) -> None:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    suite = write(tmp_path / "evals" / "one.eval.yaml", SUITE)
    out = tmp_path / "out"
    _run(suite, out, "--cache")
    _run(suite, out, "--cache")
    (folder,) = list((out / "agentv").iterdir())
    name = _results_column(folder)
    assert name is not None
    first = _files(folder)
    cost_name = name.removesuffix(".jsonl") + "_cost.json"
    assert sum(_cached(json.loads(first[cost_name])).values()) == 4  # two answers, two judge calls
    fake.reset()
    _run(suite, out, "--cache", "--resume")
    assert fake.count == 0
    again = _files(folder)
    assert again[name] == first[name] and again[cost_name] == first[cost_name]
    assert len([n for n in again if n.endswith(".jsonl")]) == 2  # the two fresh runs', one each


def test_a_schema_3_database_is_read_as_it_is_and_given_the_column_when_resumed(tmp_path: Path,
                                                                               fake: SmartFake) -> None:
    """A database written before `usage.cached` (schema 3): its usage rows read as paid calls, and a
    `--resume` adds the column (and schema 4) and counts its own cache hits from then on."""
    from evalspec.run.journal import database, run_store

    bp = write(tmp_path / "one.weval.yml", BLUEPRINT)
    out = tmp_path / "out"
    _run(bp, out)
    folder = _weval_folder(out)
    db = next(p for p in folder.glob("*.run.db") if ".prev." not in p.name)
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE usage DROP COLUMN cached")
        conn.execute("PRAGMA user_version = 3")
    paid = list(run_store.load(db).usage)
    assert len(paid) == 8 and not any(u.cached for u in paid)
    _run(bp, out, "--resume", "--cache")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == database.SCHEMA_VERSION == 4
        assert conn.execute("SELECT count(*), sum(cached) FROM usage").fetchone() == (8, 0)


def test_retry_errors_rewrites_the_one_comparison_file(tmp_path: Path, fake: SmartFake) -> None:
    """`--retry-errors` finishes the same run: its comparison file, rewritten with the retried cells."""
    from fakeprovider import Reply

    bp = write(tmp_path / "one.weval.yml", "models: [openai:model-a]\n---\n- id: a\n  prompt: hi\n"
               "  should: [$contains: hi]\n")
    out = tmp_path / "out"
    fake.then(Reply.error(400, "bad request"))
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--retries", "0"]) == 3  # every cell failed
    folder = _weval_folder(out)
    (first,) = list(folder.glob("*_comparison.json"))
    assert "errors" in json.loads(first.read_bytes())
    _run(bp, out, "--retry-errors")
    (again,) = list(folder.glob("*_comparison.json"))
    assert again.name == first.name and "errors" not in json.loads(again.read_bytes())


def test_a_merge_after_a_killed_merge_leaves_no_lock_database(tmp_path: Path, fake: SmartFake) -> None:
    """`evalspec merge` takes the run's lock in a database of the label it makes for the merge alone and
    removes when done; a merge killed meanwhile left it (bench/kill_trials.py, merging), and every later merge
    kept it, as not its own: an empty `<label>.run.db` beside the results for good."""
    from evalspec.run.journal import database

    bp = write(tmp_path / "one.weval.yml", BLUEPRINT)
    out = tmp_path / "out"
    _run(bp, out, "--shard", "1/2")
    _run(bp, out, "--shard", "2/2")
    folder = _weval_folder(out)
    manifests = sorted(str(p) for p in folder.glob("*.shard.json"))
    label = json.loads(Path(manifests[0]).read_text(encoding="utf-8"))["run_label"]
    left = database.db_path(folder, label)
    database.connect(left, create=True).close()  # what a merge killed before its end leaves
    assert main(["merge", *manifests, "-o", str(out), "--no-report"]) == 0
    assert not left.exists()
    assert sorted(p.name for p in folder.glob("*.run.db")) == sorted(
        f"{label}.shard-{i}-of-2.run.db" for i in (1, 2))


def test_a_merge_keeps_the_database_of_a_run_of_the_label(tmp_path: Path, fake: SmartFake) -> None:
    """…but a database that holds a run (the label run whole in the same folder) is never removed."""
    bp = write(tmp_path / "one.weval.yml", BLUEPRINT)
    out = tmp_path / "out"
    _run(bp, out, "--shard", "1/2")
    _run(bp, out, "--shard", "2/2")
    _run(bp, out)
    folder = _weval_folder(out)
    whole = [p for p in folder.glob("*.run.db") if ".shard-" not in p.name]
    assert len(whole) == 1
    manifests = sorted(str(p) for p in folder.glob("*.shard.json"))
    assert main(["merge", *manifests, "-o", str(out), "--no-report"]) == 0
    assert whole[0].exists()
    with sqlite3.connect(whole[0]) as conn:
        assert conn.execute("SELECT results FROM run").fetchone()[0].endswith("_comparison.json")
