"""The Weval write stage's pieces: core.json made a prompt at a time is the light copy of the comparison
object, and the artefact writer writes every file it is handed (in batches) and reports a failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalspec.analysis import analyze
from evalspec.jsonio import dumps_bytes
from evalspec.run.write.files import LazyList, LazyMap, compact_chunks, pretty_chunks
from evalspec.run.write.weval_results import (
    PARTIAL_PREFIX,
    ArtefactWriter,
    WevalResults,
    comparison_object,
    core_chunks,
    core_object,
    write_comparison,
)

BLUEPRINT = """title: Writing
models: [openai:gpt-4o-mini]
---
- id: plain
  prompt: one
  should: [says one]
- id: heavy
  prompt: two
  weight: 2.5
  should:
    - $contains: two
- id: light
  prompt: three
  weight: 0.5
  ideal: three
"""


def _plain(value: Any) -> Any:
    """The value with its lazy maps and lists made whole (what the files must hold)."""
    if isinstance(value, LazyList):
        return [_plain(v) for v in value.elements()]
    if isinstance(value, LazyMap | dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _full(tmp_path: Path) -> dict[str, Any]:
    a = analyze(BLUEPRINT, tmp_path / "blueprints" / "w.yml", env={})
    bp = a.blueprint
    assert bp is not None and not a.errors, [f.message for f in a.errors]
    results = WevalResults()
    model = "openai:gpt-4o-mini"
    for p in bp.prompts:
        results.record(p.id, model, response=f"answer to {p.id}",
                       history=[{"role": "user", "content": p.id}, {"role": "assistant", "content": "a"}],
                       coverage={"avgCoverageExtent": 0.5, "keyPointsCount": 1,
                                 "pointAssessments": [{"coverageExtent": 0.5, "multiplier": 1, "isInverted": False,
                                                       "keyPointText": "long text core.json drops"}]})
    return comparison_object(bp=bp, models=[model], prompts=bp.prompts, run_label="r", timestamp="t",
                             eval_methods=["llm-coverage"], effective_models=[model], results=results)


def test_core_json_is_the_light_copy_of_the_comparison(tmp_path: Path) -> None:
    full = _full(tmp_path)
    whole = _plain(full)
    streamed = json.loads(b"".join(core_chunks(full)))
    assert streamed == json.loads(dumps_bytes(core_object(whole)))
    # each prompt's id, and its weight where the comparison file's config has one
    assert streamed["config"]["prompts"] == [{"id": "plain"}, {"id": "heavy", "weight": 2.5},
                                             {"id": "light", "weight": 0.5}]
    assert [p.get("weight") for p in whole["config"]["prompts"]] == [None, 2.5, 0.5]


def test_the_chunked_writers_give_the_bytes_of_the_whole_value(tmp_path: Path) -> None:
    full = _full(tmp_path)
    whole = _plain(full)
    assert json.loads(b"".join(compact_chunks(full))) == whole
    assert json.loads(b"".join(pretty_chunks(full))) == whole
    assert b"".join(compact_chunks(full["config"])) == dumps_bytes(whole["config"])


@pytest.mark.parametrize("bound", [1, 4096])
@pytest.mark.parametrize("models", [["openai:a", "openai:b"], ["openai:b"]])
def test_a_row_holding_a_value_orjson_refuses_is_written_whole(tmp_path: Path, bound: int, models: list[str]) -> None:
    """Each cell's fields are kept as the JSON pieces the file joins (cell_store.py); a value orjson refuses
    (a lone surrogate, an integer past 64 bits) makes its prompt's row be written whole by the standard
    encoder, every string of it ASCII-escaped, as `dumps_bytes` of the row: the same bytes as the file of
    the plain values, whether the cells were held or went to disk."""
    from evalspec.run.write.cell_store import CellStore
    from evalspec.run.write.files import dumps_pretty

    a = analyze(BLUEPRINT, tmp_path / "blueprints" / "w.yml", env={})
    bp = a.blueprint
    assert bp is not None
    results = WevalResults(CellStore(tmp_path, bound=bound))
    for p in bp.prompts:
        for model in models:
            odd = p.id == "plain" and model == "openai:b"
            results.record(p.id, model, response=f"half a pair: \ud800 {p.id}" if odd else f"é {p.id} {model}",
                           history=[{"role": "assistant", "content": "é"}],
                           coverage={"avgCoverageExtent": 1, "big": 2 ** 70 if p.id == "heavy" else 1})
    full = comparison_object(bp=bp, models=models, prompts=bp.prompts, run_label="r", timestamp="t",
                             eval_methods=["llm-coverage"], effective_models=models, results=results)
    whole = _plain(full)
    assert whole["allFinalAssistantResponses"]["plain"]["openai:b"] == "half a pair: \ud800 plain"
    assert whole["evaluationResults"]["llmCoverageScores"]["heavy"]["openai:b"]["big"] == 2 ** 70
    written = b"".join(pretty_chunks(full))
    assert written == dumps_pretty(whole)
    if len(models) == 2:
        assert b'"plain": {"openai:a":"\\u00e9 plain openai:a","openai:b":"half a pair: \\ud800 plain"}' in written
        assert b'"heavy": {"openai:a":"\xc3\xa9 heavy openai:a"' in written  # the other rows as orjson writes them
    else:
        assert b'"plain": {"openai:b":"half a pair: \\ud800 plain"}' in written
        assert b'"heavy": {"openai:b":"\xc3\xa9 heavy openai:b"}' in written
    assert str(2 ** 70).encode() in written
    results.cells.close()


def test_the_prompt_contexts_kept_from_the_config_write_the_same_bytes(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Each prompt's promptContexts entry is kept as the config's prompts are written (weval_results.py's
    _HeldContexts), up to a budget, and read again from the prompt past it: the same bytes either way, and
    the same as the prompts' own messages."""
    from evalspec.run.write import weval_results

    whole = b"".join(pretty_chunks(_full(tmp_path)))
    for budget in (0, 60, 1 << 20):  # none kept, the first kept, every one kept
        monkeypatch.setattr(weval_results._HeldContexts, "BUDGET", budget)
        assert b"".join(pretty_chunks(_full(tmp_path))) == whole
    contexts = json.loads(whole)["promptContexts"]
    assert contexts == {"plain": [{"role": "user", "content": "one"}], "heavy": [{"role": "user", "content": "two"}],
                        "light": [{"role": "user", "content": "three"}]}
    full = _full(tmp_path)  # written twice (a shard's head walks it again): the same values the second time
    assert b"".join(pretty_chunks(full)) == whole == b"".join(pretty_chunks(full))


def test_the_artefact_writer_writes_every_file_it_is_handed(tmp_path: Path) -> None:
    n = ArtefactWriter.BATCH * (ArtefactWriter.BATCHES + 3) + 7  # several full queues and a last partial batch
    writer = ArtefactWriter(tmp_path)
    for i in range(n):
        writer.file(f"responses/d{i % 5}/p{i}.json", {"i": i})
    writer.close()
    written = sorted(tmp_path.rglob("*.json"))
    assert len(written) == n
    assert {json.loads(p.read_text())["i"] for p in written} == set(range(n))


def test_the_artefact_writer_reports_a_failure_at_close(tmp_path: Path) -> None:
    (tmp_path / "responses").write_text("a file where a folder must go")
    writer = ArtefactWriter(tmp_path)
    writer.file("fine.json", 1)
    writer.file("responses/p.json", 2)  # its folder cannot be made
    with pytest.raises(OSError):
        writer.close()
    assert (tmp_path / "fine.json").read_text() == "1"


def _all_parse(folder: Path) -> list[str]:
    bad = []
    for f in folder.rglob("*.json"):
        try:
            json.loads(f.read_bytes())
        except ValueError:
            bad.append(f.name)
    return bad


def test_a_write_killed_halfway_leaves_no_artefact_folder_and_the_next_write_clears_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    real = ArtefactWriter._write

    def dies_on_the_second_file(self: ArtefactWriter, path: str, value: Any) -> None:
        if path.endswith("heavy.json"):  # as a SIGKILL would leave it: a file cut short, then nothing
            Path(path).write_text('{"openai:gpt-4o-mini": "answ')
            raise SystemExit("killed")
        real(self, path, value)

    monkeypatch.setattr(ArtefactWriter, "_write", dies_on_the_second_file)
    with pytest.raises(SystemExit):
        write_comparison(out, "r", "t1", _full(tmp_path))
    assert not (out / "r_t1").exists()  # no artefact folder under its real name holds the cut file
    assert [p.name for p in out.iterdir() if p.name.startswith(PARTIAL_PREFIX)] == [f"{PARTIAL_PREFIX}r_t1"]

    monkeypatch.setattr(ArtefactWriter, "_write", real)
    _, run_dir = write_comparison(out, "r", "t2", _full(tmp_path))  # the resumed run's write
    assert run_dir == out / "r_t2" and (run_dir / "responses" / "heavy.json").is_file()
    assert not [p for p in out.iterdir() if p.name.startswith(PARTIAL_PREFIX)]
    assert _all_parse(out) == []


def test_a_write_replaces_a_link_planted_in_place_of_its_partial_folder(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / "keep.json").write_text("{}")
    (out / f"{PARTIAL_PREFIX}r_t0").symlink_to(elsewhere)
    _, run_dir = write_comparison(out, "r", "t1", _full(tmp_path))
    assert (elsewhere / "keep.json").read_text() == "{}" and list(elsewhere.iterdir()) == [elsewhere / "keep.json"]
    assert not (out / f"{PARTIAL_PREFIX}r_t0").exists() and (run_dir / "core.json").is_file()


def test_core_json_s_placeholder_maps_come_a_few_hundred_prompts_at_a_time(tmp_path: Path) -> None:
    """The two maps of a null per model (a line of 100,000 prompts each) are written in pieces, not one
    piece joined from 100,000 (that list, its join and its redacted copy peaked ~20 MB in a big run's
    write), and the pieces are the bytes of the whole."""
    import evalspec.run.write.weval_results as weval_results

    full = _full(tmp_path)
    n = 3 * weval_results._ENTRIES_PER_CHUNK + 5
    full["promptIds"] = [f"p{i}" for i in range(n)]
    pieces = list(core_chunks(full))
    whole = b"".join(pieces)
    row = {"IDEAL_BENCHMARK": None, "openai:gpt-4o-mini": None}  # the effective models (the ideal's too)
    assert json.loads(whole)["allFinalAssistantResponses"] == {f"p{i}": row for i in range(n)}
    assert json.loads(whole)["fullConversationHistories"] == {f"p{i}": row for i in range(n)}
    assert max(p.count(b'"openai:gpt-4o-mini":null}') for p in pieces) == weval_results._ENTRIES_PER_CHUNK


@pytest.mark.parametrize("n", [0, 1, 127, 128, 129, 300])
def test_plain_lazy_values_are_written_in_chunks_with_the_same_bytes(n: int):
    """A plain LazyMap / LazyList is written a chunk of entries at a time: the bytes are those of the
    plain dict / list, at every count around a chunk's size."""
    from evalspec.run.write.files import dumps_pretty

    keys = [f"p{i}" for i in range(n)]
    values = {k: {"score": i / 7, "text": f"é\n{i}"} for i, k in enumerate(keys)}
    as_map = LazyMap(keys, values.__getitem__, plain=True)
    as_list = LazyList(lambda: list(values.values()), plain=True)
    assert b"".join(compact_chunks({"m": as_list})) == dumps_bytes({"m": list(values.values())})
    assert b"".join(pretty_chunks({"m": as_map, "l": as_list})) == dumps_pretty(
        {"m": values, "l": list(values.values())})


_KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from evalspec.run.write.files import write_stream

def chunks():
    yield b'{"a": 1'
    os.kill(os.getpid(), signal.SIGKILL)  # killed halfway through an export, as a SIGKILL would
    yield b'}'

write_stream(Path(sys.argv[1]), chunks(), buffer=1)
"""


def test_an_export_clears_what_a_killed_writer_left_and_keeps_a_live_one_s(tmp_path: Path) -> None:
    """A SIGKILL while an export is written leaves its `.<name>.<pid>.tmp`; the next export into that
    folder (a resume's, whose file name has another time stamp) removes it, not a live writer's."""
    import subprocess
    import sys

    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(out / "r_comparison_t1.json")])
    assert proc.returncode == -9
    [left] = [p.name for p in out.iterdir()]
    assert left.startswith(".r_comparison_t1.json.") and left.endswith(".tmp")
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as live:
        try:
            (out / f".r_comparison_t0.json.{live.pid}.tmp").write_bytes(b"{")  # another run writing now
            write_comparison(out, "r", "t2", _full(tmp_path))
            names = sorted(p.name for p in out.iterdir())
            assert left not in names and f".r_comparison_t0.json.{live.pid}.tmp" in names
            assert not [n for n in names if n.endswith(".tmp") and n != f".r_comparison_t0.json.{live.pid}.tmp"]
        finally:
            live.kill()


_ROWS16_KEY = "sk-rows16-0123456789abcdefghij"


@pytest.mark.parametrize("result", [
    {"keyPointsCount": 1, "avgCoverageExtent": 0.5, "pointAssessments": [{"keyPoint": "é", "coverageExtent": 0.5}]},
    {"keyPointsCount": 1, "pointAssessments": [{"keyPoint": "a lone \ud800 surrogate", "coverageExtent": 1.0}]},
    {"keyPointsCount": 1, "pointAssessments": [{"keyPoint": "big", "coverageExtent": 2 ** 70}]},
    {"keyPointsCount": 1, "pointAssessments": [{"reflection": f"the key {_ROWS16_KEY} echoed"}]},
    {},
])
def test_a_coverage_result_encoded_once_is_what_each_side_encoded_alone(result: dict[str, Any]) -> None:
    """Weval.scored encodes a cell's coverage result once (write/weval.stored_result): the results' piece
    must be `piece`'s and the database's text `database._json`'s (masked there, not in the piece)."""
    from evalspec.providers.redact import register_secret
    from evalspec.run.journal.database import _json
    from evalspec.run.write.cell_store import piece
    from evalspec.run.write.weval import stored_result

    register_secret(_ROWS16_KEY)
    encoded, stored = stored_result(result)
    assert encoded == piece(result)
    assert isinstance(stored, str) and stored == _json(result)
    if "reflection" in str(result):
        assert _ROWS16_KEY in encoded.decode() and _ROWS16_KEY not in stored
