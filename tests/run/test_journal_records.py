"""The journal's typed records write the very lines the runners wrote as dicts (old journals resume, old
readers read new ones), and the one reader turns such lines back into the same records."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalspec.run.events import Cell
from evalspec.run.journal.journal_file import Journal, load, read_header, records
from evalspec.run.journal.records import (
    CellScore,
    Done,
    Embedding,
    Failed,
    Generated,
    Judged,
    JudgeReply,
    KeyPoints,
    RunHeader,
    Stopped,
    Usage,
)

CELL = Cell("p1", "openai:gpt-4o")

# Each record and the line the runners wrote for it before the records were typed.
CASES = [
    (RunHeader(kind="weval", file="bp.yml", config_id="bp", run_label="abc", started="2026-01-01T00:00:00.000Z",
               systems={"openai:gpt-4o": None}, path="/w/bp.yml", select=("p1",), fp={"p1": "f00"}),
     b'{"t":"run","v":1,"kind":"weval","file":"bp.yml","config_id":"bp","run_label":"abc",'
     b'"started":"2026-01-01T00:00:00.000Z","systems":{"openai:gpt-4o":null},"path":"/w/bp.yml",'
     b'"select":["p1"],"fp":{"p1":"f00"}}'),
    (RunHeader(kind="agentv", file="s.yaml", run_label="x", started="t", results="x_t.jsonl", path="/w/s.yaml"),
     b'{"t":"run","v":1,"kind":"agentv","file":"s.yaml","run_label":"x","started":"t","results":"x_t.jsonl",'
     b'"path":"/w/s.yaml","select":[],"fp":{}}'),
    (Generated(CELL, 0, "hi", (3, 4), 12.5, False),
     b'{"t":"gen","c":["p1","openai:gpt-4o"],"n":0,"text":"hi","u":[3,4],"ms":12.5,"cached":false}'),
    (Generated(CELL, 1, "a", (1, 2), 0.0, True, None, names_model=True),
     b'{"t":"gen","c":["p1","openai:gpt-4o"],"n":1,"text":"a","u":[1,2],"ms":0.0,"cached":true,"m":null}'),
    (Generated(CELL, 0, "a", (1, 2), 3.0, False, "m1", ({"name": "f", "arguments": {}},), names_model=True),
     b'{"t":"gen","c":["p1","openai:gpt-4o"],"n":0,"text":"a","u":[1,2],"ms":3.0,"cached":false,"m":"m1",'
     b'"tc":[{"name":"f","arguments":{}}]}'),
    (Failed(CELL, "boom", "http"), b'{"t":"fail","c":["p1","openai:gpt-4o"],"error":"boom","kind":"http"}'),
    (Judged(CELL, 2, "j1", 0.75, "ok", None),
     b'{"t":"judge","c":["p1","openai:gpt-4o"],"p":2,"j":"j1","s":0.75,"r":"ok","e":null}'),
    (Judged(CELL, 0, "j1", None, None, "bad"),
     b'{"t":"judge","c":["p1","openai:gpt-4o"],"p":0,"j":"j1","s":null,"r":null,"e":"bad"}'),
    (JudgeReply(CELL, 10001, "judge", '{"score": 1}', None),
     b'{"t":"judge","c":["p1","openai:gpt-4o"],"p":10001,"j":"judge","text":"{\\"score\\": 1}","e":null}'),
    (JudgeReply(CELL, 3, "judge", None, "timeout"),
     b'{"t":"judge","c":["p1","openai:gpt-4o"],"p":3,"j":"judge","text":null,"e":"timeout"}'),
    (KeyPoints("p1", "openai:gpt-4o-mini", ("a", "b")), b'{"t":"kp","i":"p1","m":"openai:gpt-4o-mini","points":["a","b"]}'),
    (Embedding("p1\x1fIDEAL", [0.5, 1.0]), b'{"t":"emb","k":"p1\\u001fIDEAL","v":[0.5,1.0]}'),
    (CellScore(CELL, 0.5, "fail", {"keyPointsCount": 1}),
     b'{"t":"score","c":["p1","openai:gpt-4o"],"s":0.5,"v":"fail","r":{"keyPointsCount":1}}'),
    (CellScore(CELL, None, None, {}), b'{"t":"score","c":["p1","openai:gpt-4o"],"s":null,"v":null,"r":{}}'),
    (Usage(CELL, "judge", "j1", "gpt-4o", (3, 4), 0.25),
     b'{"t":"usage","c":["p1","openai:gpt-4o"],"r":"judge","m":"j1","pm":"gpt-4o","u":[3,4],"usd":0.25}'),
    (Usage(CELL, "answers", "t", None, (1, 2), None),
     b'{"t":"usage","c":["p1","openai:gpt-4o"],"r":"answers","m":"t","pm":null,"u":[1,2],"usd":null}'),
    (Done(), b'{"t":"done"}'),
    (Stopped("cancelled"), b'{"t":"stop","why":"cancelled"}'),
    (Stopped("cancelled", (CELL,)), b'{"t":"stop","why":"cancelled","cells":[["p1","openai:gpt-4o"]]}'),
]


@pytest.mark.parametrize(("record", "line"), CASES, ids=[type(r).__name__ for r, _ in CASES])
def test_a_record_is_written_as_the_line_it_always_was_and_reads_back(tmp_path: Path, record: object,
                                                                      line: bytes) -> None:
    path = tmp_path / "j.journal.jsonl"
    with Journal(path, fresh=True) as journal:
        journal.write(record)  # type: ignore[arg-type]
    assert path.read_bytes() == line + b"\n"
    assert list(records(path)) == [record]


def test_several_records_go_out_together_in_order(tmp_path: Path) -> None:
    path = tmp_path / "j.journal.jsonl"
    with Journal(path, fresh=True) as journal:
        journal.write(*(r for r, _ in CASES))
        assert journal.records == len(CASES)
    assert path.read_bytes() == b"".join(line + b"\n" for _, line in CASES)


def test_an_old_journal_loads_into_the_state_resume_reads(tmp_path: Path) -> None:
    """Lines as an older evalspec wrote them, a line cut short by a kill, junk and a tag from a newer
    version: the state holds the newest record of each key and skips the rest."""
    path = tmp_path / "old.journal.jsonl"
    path.write_text("\n".join([
        '{"t":"run","v":1,"kind":"weval","file":"bp.yml","config_id":"bp","run_label":"abc","started":"s",'
        '"systems":{},"path":"/w/bp.yml","select":[],"fp":{},"shard":"1/2"}',
        '{"t":"fail","c":["p1","m"],"error":"first try failed","kind":"http"}',
        '{"t":"gen","c":["p1","m"],"n":0,"text":"answer","u":[1,2],"ms":5,"cached":false}',
        '{"t":"judge","c":["p1","m"],"p":0,"j":"j","s":1,"r":"fine","e":null}',
        '{"t":"kp","i":"p2","m":"m","points":["x"]}',
        '{"t":"emb","k":"p1\\u001fm","v":[1,0]}',
        '{"t":"score","c":["p1","m"],"s":1,"v":"pass","r":{"avgCoverageExtent":1}}',
        '{"t":"batch","id":"b1"}',
        '{"t":"gen","c":"not a cell"}',
        '{"t":["unhashable"]}',
        '{"t":"score","c":["p2","m"],"s":0.',
    ]) + "\n", encoding="utf-8")
    state = load(path)
    cell = Cell("p1", "m")
    assert state.header is not None and state.header.config_id == "bp"
    assert state.header.extra == {"shard": "1/2"}  # a key this version does not know is kept
    assert state.failures == {}  # answered on the retry
    assert state.turns[cell][0].text == "answer" and state.turns[cell][0].usage == (1, 2)
    judged = state.judgements[(cell, 0, "j")]
    assert isinstance(judged, Judged) and judged.score == 1 and judged.reflection == "fine"
    assert state.key_points["p2"].points == ("x",)
    assert state.embeddings == {"p1\x1fm": [1.0, 0.0]}
    assert state.scores[cell].score == 1 and state.scores[cell].verdict == "pass"
    assert set(state.scores) == {cell}
    assert not state.done and state.stopped is None
    header = read_header(path)
    assert header == state.header
    assert [type(r) for r in records(path, Generated, Judged)] == [Generated, Judged]  # only those decoded
    assert read_header(tmp_path / "missing.jsonl") is None


HOSTILE_IDS = ["p0", 'quo"te', "back\\slash", "ü-ñ", "tab\there", "\u2028", "x" * 300, "}", ',"fp":{']


@pytest.mark.parametrize("extra", [{}, {"shard": "1/2", "deep": {"fp": {"a": 1}}}])
def test_a_header_s_fingerprints_are_written_and_read_one_at_a_time_as_the_dict_would_be(tmp_path: Path,
                                                                                        extra: dict) -> None:
    """RunHeader.json_line / from_line (no dict of 100,000 strings made) write and read the very bytes and
    header that the whole-line dict does, whatever the ids hold."""
    import orjson

    from evalspec.jsonio import dumps_bytes
    from evalspec.run.plan.items import Fingerprints

    fp = Fingerprints((pid, bytes([n] * 8)) for n, pid in enumerate(HOSTILE_IDS))
    header = RunHeader(kind="weval", file="bp.yml", config_id="bp", run_label="abc", started="s",
                       systems={"m": "sys"}, path="/w/bp.yml", select=(',"fp":{',), fp=fp, extra=extra)
    path = tmp_path / "j.journal.jsonl"
    with Journal(path, fresh=True) as journal:
        journal.write(header)
    line = path.read_bytes()
    assert line == dumps_bytes(header.to_json()) + b"\n"
    whole = RunHeader.from_json(orjson.loads(line))
    state = load(path)
    assert state.header == whole == read_header(path)
    assert isinstance(state.header.fp, Fingerprints)  # 8 bytes an item, not a dict of strings
    assert list(state.header.fp.items()) == list(whole.fp.items()) == list(fp.items())


@pytest.mark.parametrize("line", [
    b'{"t": "run", "kind": "weval", "file": "f", "run_label": "r", "started": "s", "fp": {"a": "0123456789abcdef"}}',
    b'{"t":"run","kind":"weval","file":"f","run_label":"r","started":"s","fp":{"a":"not hex","b":"0123456789abcdef"}}',
    b'{"t":"run","kind":"weval","file":"f","run_label":"r","started":"s","fp":{"a":"0123456789abcdef"},"fp2":[1]}',
    b'{"t":"run","kind":"weval","file":"f","run_label":"r","started":"s","fp":{"a":"0123456789abcdef" }}',
])
def test_a_header_line_in_another_form_reads_as_the_whole_line_does(tmp_path: Path, line: bytes) -> None:
    import orjson

    path = tmp_path / "j.journal.jsonl"
    path.write_bytes(line + b"\n")
    assert load(path).header == RunHeader.from_json(orjson.loads(line)) == read_header(path)
