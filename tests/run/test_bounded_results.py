"""A run's results are held in bounded memory: past `cell_store.DEFAULT_BOUND` cells they wait on disk
for the write stage, which writes the comparison file, core.json and the artefacts a prompt at a time.
The files must be byte for byte those of a run that held everything (answers, conversations, coverage,
errors, key order), and the store must never hold more cells than its bound."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from evalspec.run import weval_stages
from evalspec.run.write import cell_store
from evalspec.run.write import weval as write_weval
from tests.fakeprovider import Reply

from .conftest import SmartFake, classify, criterion_of, env_for, options, run_events, write

PROMPTS = "\n".join(
    f"- id: p{i}\n  prompt: \"Question {i}\"\n  should:\n    - $contains: \"answer {i}\"\n    - is polite {i}\n"
    + ("  ideal: The ideal answer.\n" if i % 3 == 0 else "")
    + ("  system: Be brief.\n" if i % 4 == 0 else "")
    for i in range(14))
BLUEPRINT = f"""title: Bounded results
models: [openai:candidate, openai:other]
evaluationConfig:
  llm-coverage:
    judges:
      - {{model: "openai:judge", approach: holistic}}
---
{PROMPTS}
- id: chat
  messages:
    - user: Hello
    - assistant: null
    - user: And now?
  should: [$contains: "now"]
- id: "odd/id ü"
  prompt: "A 😀 smile"
  should: [$icontains: "smile"]
"""


def _decide(req: dict[str, Any]) -> Any:
    criterion = criterion_of(req)
    if criterion is not None:
        return classify("CLASS_EXACT" if "1" in criterion else "CLASS_UNMET", f"about {criterion}")
    text = str(req.get("messages"))
    return f"answer {text[-40:]} smile now"


def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """One time for every run of a test: the comparison file's stamp (named once a run, weval_stages.stamp)
    and what the writer dates, so two runs' files compare by name and bytes."""
    fixed = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    monkeypatch.setattr(write_weval, "now_utc", lambda: fixed)
    monkeypatch.setattr(weval_stages, "now_utc", lambda: fixed)


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.name.endswith((".run.db", ".lock")) and "report" not in p.name}


def _run(tmp_path: Path, smart: SmartFake, name: str) -> dict[str, bytes]:
    bp = write(tmp_path / "b.weval.yml", BLUEPRINT)
    smart.then(Reply.error(400, "this model refuses"), Reply.error(400, "this model refuses"))  # p0's cells
    run_events(bp, options(tmp_path, env_for(smart), output=tmp_path / name, concurrency=1, artefacts=True))
    return _files(tmp_path / name)


def test_a_run_that_spills_its_cells_writes_the_same_bytes(tmp_path: Path, smart: SmartFake,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    smart.decide = _decide
    _fixed_clock(monkeypatch)
    stores: list[cell_store.CellStore] = []
    real = cell_store.CellStore

    class Recording(real):  # type: ignore[misc, valid-type]
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            stores.append(self)

    monkeypatch.setattr(write_weval, "CellStore", Recording)
    held = _run(tmp_path, smart, "held")
    assert stores[-1].spilled_cells == 0
    for bound in (1, 3):
        monkeypatch.setattr(cell_store, "DEFAULT_BOUND", bound)
        spilled = _run(tmp_path, smart, f"bound{bound}")
        store = stores[-1]
        assert store.bound == bound and store.most_held <= bound
        assert store.spilled_cells >= 32  # every cell went to disk at least once
        assert spilled.keys() == held.keys()
        for name, data in held.items():
            assert spilled[name] == data, name
    # a run of more cells than DEFAULT_BOUND spills anyway, so it holds SPILLING_BOUND at a time
    monkeypatch.setattr(cell_store, "DEFAULT_BOUND", 20)
    monkeypatch.setattr(cell_store, "SPILLING_BOUND", 2)
    spilled = _run(tmp_path, smart, "spilling")
    assert stores[-1].bound == 2 and stores[-1].most_held <= 2 and stores[-1].spilled_cells >= 32
    assert spilled == held
    assert cell_store.bound_for(20) == 20 and cell_store.bound_for(21) == 2
    comparison = next(v for k, v in held.items() if k.endswith("_comparison.json"))
    assert b"this model refuses" in comparison and b"<<error>>" in comparison and b"about is polite 1" in comparison
    assert len([k for k in held if "/coverage/" in k]) >= 30
    stores.clear()  # each holds its run's plan (through the cells' index): not left to the next test's count


def _set(store: cell_store.CellStore, item: str, fields: dict[str, Any]) -> None:
    for name, value in fields.items():
        store.set(item, "m", cell_store.FIELDS.index(name), cell_store.piece(value))


def _get(store: cell_store.CellStore, item: str) -> dict[str, Any] | None:
    from evalspec.run.write.weval_results import decoded

    found = store.get((item, "m"))
    if found is None:
        return None
    return {name: decoded(p) for name, p in zip(cell_store.FIELDS, found[:3], strict=True) if p is not None}


def test_a_resumed_finished_run_that_spills_writes_the_same_bytes(tmp_path: Path, smart: SmartFake,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`--resume` of a finished run exports again from the database (each cell restored: its answer, then its
    result), its cells going to disk a block at a time: the files are those of the run that held them."""
    smart.decide = _decide
    _fixed_clock(monkeypatch)
    held = _run(tmp_path, smart, "held")
    asked = len(smart.requests)
    monkeypatch.setattr(cell_store, "DEFAULT_BOUND", 2)
    spills = []
    real = cell_store.CellStore._spill
    monkeypatch.setattr(cell_store.CellStore, "_spill", lambda self: (spills.append(len(self._held)), real(self)))
    run_events(tmp_path / "b.weval.yml", options(tmp_path, env_for(smart), output=tmp_path / "held", concurrency=1,
                                                 artefacts=True, resume=True))
    assert len(smart.requests) == asked  # nothing asked again: every cell from the database
    assert len(spills) >= 16 and set(spills) == {2}
    assert _files(tmp_path / "held") == held


def test_the_store_keeps_the_last_value_of_each_field(tmp_path: Path) -> None:
    store = cell_store.CellStore(tmp_path, bound=2)
    _set(store, "a", {"response": "first", "history": [1]})
    _set(store, "b", {"response": "b"})  # the bound: both go to disk
    assert store.most_held == 2 and store.spilled_cells == 2
    _set(store, "a", {"coverage": {"x": 1.5}, "response": "second"})  # read back, changed
    assert _get(store, "a") == {"response": "second", "history": [1], "coverage": {"x": 1.5}}
    assert _get(store, "b") == {"response": "b"} and _get(store, "c") is None
    assert sorted(store.recorded()) == [("a", "m"), ("b", "m")]
    assert list(tmp_path.iterdir()) == []  # the file on disk has no name
    store.close()


def test_only_a_cell_spilled_before_its_last_field_is_looked_for_on_disk(tmp_path: Path) -> None:
    """The writer says which record is a cell's last (its coverage result, or its answer when none
    follows): a cell spilled before it is read back whole when the rest comes; the others are not looked
    for on disk, and the store remembers nothing of them beyond their place."""
    store = cell_store.CellStore(tmp_path, bound=2)
    store.set("a", "m", cell_store.RESPONSE, cell_store.piece("answer a"))
    store.set("b", "m", cell_store.RESPONSE, cell_store.piece("answer b"), last=True)  # the bound: both spilled
    assert store.spilled_cells == 2 and store._unfinished == {("a", "m")}
    store.set("a", "m", cell_store.COVERAGE, cell_store.piece({"x": 1}), last=True)  # read back whole
    assert store._unfinished == set() and _get(store, "a") == {"response": "answer a", "coverage": {"x": 1}}
    assert _get(store, "b") == {"response": "answer b"}
    store.close()


def test_the_store_reads_its_cells_back_in_any_order(tmp_path: Path) -> None:
    """Cells go to disk a block at a time, each field's pieces a section of it, the last few sections read
    kept (cell_store._section): every cell reads back as it was set, in the order spilled, backwards, at
    random, and after more cells were spilled behind the ones kept (some still in the file's buffer), a
    field it has none of included."""
    import random

    store = cell_store.CellStore(tmp_path, bound=7)
    expected = {}
    for i in range(3000):
        fields = {"response": f"answer {i} " + "x" * (i % 97), "history": [{"role": "user", "content": str(i)}]}
        _set(store, f"p{i}", fields)
        expected[f"p{i}"] = fields
    keys = list(expected)
    shuffled = random.Random(7).sample(keys, len(keys))
    for order in (keys, keys[::-1], shuffled):
        assert all(_get(store, key) == expected[key] for key in order)
    for i in range(3000, 3100):  # appended after the window was read: read past its end
        _set(store, f"p{i}", {"response": str(i)})
        expected[f"p{i}"] = {"response": str(i)}
        assert _get(store, f"p{i - 50}") == expected[f"p{i - 50}"]
    assert all(_get(store, key) == value for key, value in expected.items())
    assert store.spilled_cells >= 3000
    store.close()


def _finished(events: list[Any]) -> Any:
    (done,) = [e for e in events if e.type == "run_finished"]
    return done.summary


def test_the_summary_reads_spilled_cells(tmp_path: Path, smart: SmartFake, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's summary counts the points not scored (as its cells are scored) the same whether its cells
    spilled or not."""
    def decide(req: dict[str, Any]) -> Any:
        criterion = criterion_of(req)
        if criterion is not None:
            return "no classification here" if "7" in criterion else classify("CLASS_EXACT")
        return "answer smile now"

    smart.decide = decide
    bp = write(tmp_path / "b.weval.yml", BLUEPRINT)
    summaries = []
    for bound in (cell_store.DEFAULT_BOUND, 1):
        monkeypatch.setattr(cell_store, "DEFAULT_BOUND", bound)
        events = run_events(bp, options(tmp_path, env_for(smart), output=tmp_path / f"o{bound}", concurrency=2))
        summaries.append(_finished(events))
    assert summaries[0].points_not_scored == summaries[1].points_not_scored > 0
    assert summaries[0].notes == summaries[1].notes


VOLATILE = ("timestamp", "duration_ms", "latency_ms")


def _agentv_rows(out: Path) -> list[dict[str, Any]]:
    import json

    (f,) = [p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl")]
    return [{k: v for k, v in json.loads(line).items() if k not in VOLATILE} for line in f.read_text().splitlines()]


# AgentV's rows no longer go through the cell store: tests/run/test_agentv_compact_run.py compares its
# results file with the journal's rows, byte for byte.


def _live_prompts() -> int:
    import gc

    from evalspec.weval.model import Prompt

    return sum(1 for o in gc.get_objects() if type(o) is Prompt)


def test_a_run_whose_prompts_are_on_disk_writes_the_same_bytes(tmp_path: Path, smart: SmartFake,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `prompt_store.DEFAULT_BOUND` prompts a blueprint's model is on disk and each prompt is decoded
    when it is read: the run writes the same files, and while it writes them it holds a few prompts, not
    the blueprint (a stage that kept every prompt again fails here)."""
    from evalspec.weval import prompt_store

    smart.decide = _decide
    _fixed_clock(monkeypatch)
    live: list[int] = []
    real_write = write_weval.WevalWriter.write

    def counting(self: Any, **kw: Any) -> Any:
        live.append(_live_prompts())
        return real_write(self, **kw)

    monkeypatch.setattr(write_weval.WevalWriter, "write", counting)
    held = _run(tmp_path, smart, "held")
    assert live[-1] >= 16  # every prompt, as objects
    monkeypatch.setattr(prompt_store, "DEFAULT_BOUND", 1)
    monkeypatch.setattr(prompt_store, "RECENT", 2)
    spilled = _run(tmp_path, smart, "spilled")
    assert live[-1] <= 3
    assert spilled.keys() == held.keys()
    for name, data in held.items():
        assert spilled[name] == data, name


def test_a_run_s_cells_read_no_prompt_s_reference_form(tmp_path: Path, smart: SmartFake,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound a prompt's record keeps its reference form (what the comparison file writes of it, ~60 %
    of the record) apart: a cell's stages read the prompt without it, only the export decodes it, and the
    files are the same bytes as a run whose prompts were held."""
    import traceback

    from evalspec.weval import prompt_store

    smart.decide = _decide
    _fixed_clock(monkeypatch)
    held = _run(tmp_path, smart, "held")
    readers: list[str] = []
    real = prompt_store._export_part

    def recording(data: bytes) -> Any:
        readers.append("export" if any(f.filename.endswith("weval_results.py") for f in traceback.extract_stack())
                       else "".join(traceback.format_stack(limit=6)))
        return real(data)

    monkeypatch.setattr(prompt_store, "_export_part", recording)
    monkeypatch.setattr(prompt_store, "DEFAULT_BOUND", 1)
    monkeypatch.setattr(prompt_store, "RECENT", 2)
    spilled = _run(tmp_path, smart, "spilled")
    assert spilled == held
    assert readers and set(readers) == {"export"}, [r for r in readers if r != "export"][:1]


def test_the_prompts_ideals_learnt_from_the_cells_write_the_same_bytes(tmp_path: Path, smart: SmartFake,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A finished run's writer learns from its cells which prompts have an ideal, so the results read no
    prompt without one for its answers' row (nor every prompt to learn whether any has one): the same
    bytes as reading each prompt (what a stopped run's partial results do), with prompts held or on disk."""
    from evalspec.weval import prompt_store

    smart.decide = _decide
    _fixed_clock(monkeypatch)
    told: list[bool] = []
    real = write_weval.WevalWriter._told_all

    def recording(self: Any, finished: bool) -> bool:
        told.append(real(self, finished))
        return told[-1]

    monkeypatch.setattr(write_weval.WevalWriter, "_told_all", recording)
    learnt = _run(tmp_path, smart, "learnt")
    assert told == [True]
    monkeypatch.setattr(prompt_store, "DEFAULT_BOUND", 1)
    learnt_spilled = _run(tmp_path, smart, "learnt-spilled")
    monkeypatch.setattr(write_weval.WevalWriter, "_told_all", lambda self, finished: False)
    read = _run(tmp_path, smart, "read")
    assert learnt_spilled == learnt == read
    comparison = next(v for k, v in read.items() if k.endswith("_comparison.json"))
    assert comparison.count(b'"IDEAL_BENCHMARK":"The ideal answer."') == 5  # p0, p3, p6, p9, p12


def test_a_streamed_analysis_keeps_a_big_blueprint_s_prompts_on_disk(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from evalspec.analysis import analyze, analyze_file
    from evalspec.weval import prompt_store

    bp = write(tmp_path / "b.weval.yml", BLUEPRINT)
    full = analyze(bp.read_text(encoding="utf-8"), bp)
    monkeypatch.setattr(prompt_store, "DEFAULT_BOUND", 2)
    monkeypatch.setattr(prompt_store, "RECENT", 1)
    streamed = analyze_file(bp)
    assert streamed.blueprint is not None and full.blueprint is not None
    prompts = streamed.blueprint.prompts
    assert isinstance(prompts, prompt_store.PromptStore) and len(prompts) == 16
    assert _live_prompts() <= len(full.blueprint.prompts) + 2  # the full analysis's, and one decoded
    assert prompts == full.blueprint.prompts and prompts[-1] == full.blueprint.prompts[-1]
    assert prompts[3:5] == full.blueprint.prompts[3:5] and prompts.ids() == [p.id for p in full.blueprint.prompts]
    kept = prompts.subset(lambda n, pid: pid.startswith("p1"))
    assert [p.id for p in kept] == kept.ids() == [f"p{i}" for i in (1, 10, 11, 12, 13)]
    assert kept[1] == full.blueprint.prompts[10] and list(tmp_path.iterdir()) == [bp]  # no file left with a name


JUDGED_SUITE = ("name: judged\ndescription: Tests on disk.\nexecution:\n  target: default\ntests:\n" + "".join(
    f"  - id: t{i}\n    input: hello {i}\n    criteria: says {i}\n    assert:\n"
    f"      - {{type: contains, value: \"{i}\", required: true}}\n      - {{type: llm-judge, prompt: Is it {i}?}}\n"
    for i in range(5)) + "  - file://cases.jsonl\n  - file://more.yaml\n  - id: default-judged\n    input: bye\n"
    "    criteria: says bye\n")


def _live_tests() -> int:
    import gc

    from evalspec.agentv.model import AgentvTest

    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is AgentvTest)


def test_an_agentv_run_whose_tests_are_on_disk_writes_the_same_rows(tmp_path: Path, smart: SmartFake,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `test_store.DEFAULT_BOUND` tests a suite's model is on disk (inline tests, a JSONL and a YAML
    tests file, judged ones): the run writes the same rows, and holds a few tests while it writes them."""
    import json

    from evalspec.agentv import test_store
    from evalspec.run.write import agentv as write_agentv

    from .conftest import AGENTV_TARGETS

    def decide(req: dict[str, Any]) -> Any:
        text = json.dumps(req.get("messages"))
        if "score" in text or "grader" in str(req.get("model")):
            return json.dumps({"score": 0.75, "hits": ["h"], "misses": [], "reasoning": f"saw {text[-30:]}"})
        return f"answer to {text[-40:]}"

    smart.decide = decide
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    write(tmp_path / "evals" / "cases.jsonl", "".join(
        f'{{"id": "j{i}", "input": "json {i}", "criteria": "says {i}"}}\n' for i in range(4)))
    write(tmp_path / "evals" / "more.yaml", "".join(
        f"- id: y{i}\n  input: yaml {i}\n  assert:\n    - {{type: regex, value: \"[0-9]\"}}\n" for i in range(3)))
    suite = write(tmp_path / "evals" / "s.eval.yaml", JUDGED_SUITE)
    live: list[int] = []
    real_write = write_agentv.AgentvWriter.write

    def counting(self: Any, *a: Any, **kw: Any) -> Any:
        live.append(_live_tests())
        return real_write(self, *a, **kw)

    monkeypatch.setattr(write_agentv.AgentvWriter, "write", counting)
    rows = []
    before = _live_tests()  # what earlier tests left (a cache's)
    for bound in (test_store.DEFAULT_BOUND, 1):
        monkeypatch.setattr(test_store, "DEFAULT_BOUND", bound)
        monkeypatch.setattr(test_store, "RECENT", 2 if bound == 1 else test_store.RECENT)
        run_events(suite, options(tmp_path, env_for(smart), output=tmp_path / f"o{bound}", concurrency=2))
        rows.append(_agentv_rows(tmp_path / f"o{bound}"))
    assert live[0] - before >= 13 and live[1] - before <= 3  # every test as objects; then a few decoded
    assert [r["test_id"] for r in rows[0]] == [*(f"t{i}" for i in range(5)), *(f"j{i}" for i in range(4)),
                                              *(f"y{i}" for i in range(3)), "default-judged"]
    assert rows[1] == rows[0]
    judged = {r["test_id"]: r for r in rows[0]}
    assert judged["t1"]["score"] is not None and any(s["type"] == "llm-judge" for s in judged["t1"]["scores"])


def test_the_held_pieces_take_their_own_size(tmp_path: Path) -> None:
    """orjson's result holds a 4 KB allocation however short its JSON: the store keeps copies of its own
    size (1,000 held cells of three short pieces were ~12 MB as orjson left them)."""
    import tracemalloc

    store = cell_store.CellStore(tmp_path, bound=4096)
    tracemalloc.start()
    try:
        for i in range(1000):
            store.set(f"p{i}", "m", cell_store.RESPONSE, cell_store.piece(f"answer {i}"), None,
                      cell_store.HISTORY, cell_store.piece([{"role": "user", "content": str(i)}]))
            store.set(f"p{i}", "m", cell_store.COVERAGE, cell_store.piece({"avgCoverageExtent": 1}))
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert store.spilled_cells == 0 and held < 1 << 20, held
    assert _get(store, "p7") == {"response": "answer 7", "history": [{"role": "user", "content": "7"}],
                                 "coverage": {"avgCoverageExtent": 1}}
    store.close()
