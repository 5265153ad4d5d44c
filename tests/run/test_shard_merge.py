"""`evalspec run --shard I/N` and `evalspec merge`: shard 1/3 + 2/3 + 3/3 merged is byte for byte what a
single run writes against the same deterministic fake provider, the run's time aside (the Weval
`timestamp` and file names; AgentV rows' `timestamp` and `duration_ms`), and shards that do not belong
together are refused with a message naming them."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fakeprovider import Reply

from evalspec.cli import main
from evalspec.run.plan.shard import Shard, parse_shard, shard_of

from .conftest import AGENTV_TARGETS, SmartFake, criterion_of, serving, write

STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z")


def _decide(req: dict[str, Any]) -> Any:
    """Deterministic answers: a judge's class and a key point depend on the request's text only; model b
    fails on prompts whose number ends in 3 (an error cell in the results)."""
    text = json.dumps(req, sort_keys=True)
    if "key_point" in text:
        return "<key_point>says hello</key_point>\n<key_point>names the number</key_point>"
    criterion = criterion_of(req)
    if criterion is not None:
        grade = ("CLASS_UNMET", "CLASS_PARTIAL", "CLASS_MAJOR", "CLASS_VERY_NEARLY", "CLASS_SLIGHT")[hashlib.sha256(text.encode()).digest()[0] % 5]
        return f"<reflection>about {criterion}</reflection><classification>{grade}</classification>"
    last = str((req.get("messages") or [{}])[-1].get("content"))
    if req.get("model") == "b" and re.search(r"Question \d*3\b", last):
        return Reply.server_error(500, "b is down")
    return f"{req.get('model')} says: {last} (hello number {len(last)})"


def _blueprint(path: Path, n: int) -> Path:
    lines = ["title: Sharded", "description: A blueprint run in shards.", "models: [openai:a, openai:b]",
             "embeddingModel: openai:text-embedding-3-small", "---"]
    for i in range(n):
        lines += [f"- id: q{i}", f"  prompt: \"Question {i}\""]
        if i % 3 == 0:
            lines += ["  ideal: Hello, the number.", "  should:", f"    - $contains: \"{i}\"", "    - says hello"]
        elif i % 3 == 1:
            lines += ["  ideal: Hello there, number."]  # key points extracted from the ideal
        else:
            lines += ["  should:", "    - $word_count_between: [2, 40]", "    - - names the number", "      - is kind",
                      "  should_not:", "    - is rude"]
    return write(path, "\n".join(lines) + "\n")


@pytest.fixture
def fake(smart: SmartFake, monkeypatch: pytest.MonkeyPatch) -> SmartFake:
    return serving(smart, monkeypatch, _decide)


def _normalised(path: Path) -> bytes:
    return STAMP.sub(b"<time>", path.read_bytes())


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file below a results folder (journals and shard files aside), names and bytes without times."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.name.endswith((".run.db", ".lock", ".html")):
            out[STAMP.sub(b"<time>", str(p.relative_to(folder)).encode()).decode()] = _normalised(p)
    return out


def test_the_rule_is_a_stable_hash_of_the_id() -> None:
    # Fixed values: the same on every machine and in every process (not Python's salted hash()).
    assert [shard_of(f"q{i}", 3) for i in range(8)] == [shard_of(f"q{i}", 3) for i in range(8)]
    digest = hashlib.blake2b(b"q0", digest_size=8).digest()
    assert shard_of("q0", 3) == int.from_bytes(digest, "big") % 3 + 1
    assert shard_of("q0", 1) == 1
    assert Shard(2, 3).holds("x") == (shard_of("x", 3) == 2)
    counts = [sum(1 for i in range(3000) if shard_of(f"p{i}", 3) == k) for k in (1, 2, 3)]
    assert all(900 < c < 1100 for c in counts), counts  # a fair share each
    assert parse_shard(" 2/3 ") == Shard(2, 3)
    for bad in ("0/3", "4/3", "1/0", "a/b", "2", "-1/3"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def test_weval_shards_merged_equal_a_single_run(tmp_path: Path, fake: SmartFake) -> None:
    bp = _blueprint(tmp_path / "s.weval.yml", 14)
    common = ["--judge", "openai:judge", "--eval-method", "all", "-j", "4", "--retries", "0", "--no-report"]
    # The first call (q0 × a) answers late, so q0 × b finishes first: the file keeps the plan's order.
    fake.then(Reply.ok(delay=0.5))
    assert main(["run", str(bp), "-o", str(tmp_path / "single"), *common]) == 0
    ran: list[set[str]] = []
    for i in (1, 2, 3):
        before = len(fake.chat_requests())
        assert main(["run", str(bp), "-o", str(tmp_path / f"shard{i}"), "--shard", f"{i}/3", *common]) == 0
        asked = {m["content"] for r in fake.chat_requests()[before:] for m in r["messages"] if m["role"] == "user"}
        ran.append({q for q in (f"Question {n}" for n in range(14)) if q in asked})
    # Each shard called the models for its own prompts only, and together for all of them, once.
    assert all(ran) and sum(len(r) for r in ran) == 14 and set().union(*ran) == {f"Question {n}" for n in range(14)}

    assert main(["merge", str(tmp_path / "shard1"), str(tmp_path / "shard3"), str(tmp_path / "shard2"),
                 "-o", str(tmp_path / "merged")]) == 0
    single, merged = _tree(tmp_path / "single"), _tree(tmp_path / "merged")
    assert single.keys() == merged.keys()
    for name in single:
        if not name.endswith("_cost.json"):
            assert merged[name] == single[name], name
    # What was paid: the same tokens per role and model; each shard makes its own embeddings request(s),
    # so that line counts more calls than the single run's one request for every text.
    costs = [json.loads(next((tmp_path / d).rglob("*_cost.json")).read_bytes()) for d in ("single", "merged")]
    tokens = [[(x["role"], x["model"], x["via"], x["input_tokens"], x["output_tokens"]) for x in c["lines"]]
              for c in costs]
    assert tokens[0] == tokens[1] and any(t[0] == "embeddings" and t[3] > 0 for t in tokens[0])
    calls = [{(x["role"], x["model"]): x["calls"] for x in c["lines"] if x["role"] != "embeddings"} for c in costs]
    assert calls[0] == calls[1]
    data = json.loads(next((tmp_path / "merged").glob("live/blueprints/*/*_comparison.json")).read_bytes())
    # The parts worth merging really are there: errors, key points, judged points, similarities.
    assert data["errors"] and data["extractedKeyPoints"] and data["evaluationResults"]["similarityMatrix"]
    assert len(data["promptIds"]) == 14
    assert list(data["allFinalAssistantResponses"]["q0"]) == ["IDEAL_BENCHMARK", "openai:a[temp:0]", "openai:b[temp:0]"]
    coverage = data["evaluationResults"]["llmCoverageScores"]
    assert any("avgCoverageExtent" in r for row in coverage.values() for r in row.values())
    # Each extracted key point keeps its own text in every cell (a point's text was once handed to the
    # next key point when Python reused the first one's id).
    for i in range(1, 14, 3):
        for model in ("openai:a[temp:0]", "openai:b[temp:0]"):
            result = coverage[f"q{i}"][model]
            if "pointAssessments" in result:
                assert [pa["keyPointText"] for pa in result["pointAssessments"]] == ["says hello", "names the number"]
    # The merge writes the report of the merged results (the same reader as `evalspec report`).
    assert (next((tmp_path / "merged").glob("live/blueprints/*")) / "report.html").is_file()
    # It read the shards' run databases: without their comparison files it writes the same files.
    for i in (1, 2, 3):
        for p in (tmp_path / f"shard{i}").glob("live/blueprints/*/*_comparison.json"):
            p.unlink()
    assert main(["merge", *(str(tmp_path / f"shard{i}") for i in (1, 2, 3)), "-o", str(tmp_path / "from-db"),
                 "--no-report"]) == 0
    assert _tree(tmp_path / "from-db") == {k: v for k, v in _tree(tmp_path / "merged").items()}


def test_agentv_shards_merged_equal_a_single_run(tmp_path: Path, fake: SmartFake) -> None:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS + """  - name: other
    provider: openai
    model: other-model
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
""")
    tests = "\n".join(f"""  - id: t{i}
    input: "Question {i}"
    criteria: says the number
    assert:
      - {{type: contains, value: "{i}"}}
      - {{type: regex, value: "says"}}""" for i in range(12))
    suite = write(tmp_path / "evals" / "s.eval.yaml",
                  f"name: sharded\nexecution:\n  targets: [default, other]\ntests:\n{tests}\n")
    assert main(["run", str(suite), "-o", str(tmp_path / "single"), "-j", "4", "--no-report"]) == 0
    for i in (1, 2, 3):
        assert main(["run", str(suite), "-o", str(tmp_path / f"s{i}"), "--shard", f"{i}/3", "--no-report"]) == 0
    assert main(["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), str(tmp_path / "s3"),
                 "-o", str(tmp_path / "merged"), "--no-report"]) == 0

    def rows(folder: Path) -> list[dict[str, Any]]:
        files = [p for p in folder.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl")]
        assert len(files) == 1, files
        out = []
        for line in files[0].read_bytes().splitlines():
            row = json.loads(line)
            assert row.pop("timestamp") and "duration_ms" in row
            row.pop("duration_ms")
            out.append(row)
        return out

    single, merged = rows(tmp_path / "single"), rows(tmp_path / "merged")
    assert [(r["test_id"], r["target"]) for r in merged] == [(f"t{i}", t) for i in range(12) for t in ("default", "other")]
    assert merged == single
    # Byte for byte once the two time fields are set aside: the rows are the shards' own lines.
    assert _tree(tmp_path / "single").keys() == _tree(tmp_path / "merged").keys()  # the same file names


def _weval_shards(tmp_path: Path, bp: Path, n: int, *extra: str, out: str = "shard") -> list[Path]:
    folders = []
    for i in range(1, n + 1):
        folder = tmp_path / f"{out}{i}"
        assert main(["run", str(bp), "-o", str(folder), "--shard", f"{i}/{n}", "--eval-method", "none",
                     "--no-report", *extra]) == 0
        folders.append(folder)
    return folders


def test_missing_and_duplicated_shards_are_named(tmp_path: Path, fake: SmartFake,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    bp = _blueprint(tmp_path / "s.weval.yml", 14)
    s1, s2, s3 = _weval_shards(tmp_path, bp, 3)
    capsys.readouterr()
    assert main(["merge", str(s1), str(s3), "-o", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    missing = [f"q{i}" for i in range(14) if shard_of(f"q{i}", 3) == 2]
    assert "shards are missing" in err and "shard 2/3" in err and missing[0] in err
    assert not (tmp_path / "m").exists()  # nothing half-merged

    copy = tmp_path / "copy"
    for f in s2.rglob("*"):
        if f.is_file():
            (copy / f.relative_to(s2)).parent.mkdir(parents=True, exist_ok=True)
            (copy / f.relative_to(s2)).write_bytes(f.read_bytes())
    assert main(["merge", str(s1), str(s2), str(s3), str(copy), "-o", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "shard 2/3 is given twice" in err and str(copy) in err

    # The same shard named twice (its folder and its file) is one shard, not an overlap.
    comparison = next(s2.glob("live/blueprints/*/*_comparison.json"))
    assert main(["merge", str(s1), str(s2), str(comparison), str(s3), "-o", str(tmp_path / "m"), "--no-report"]) == 0


def test_shards_of_other_files_models_or_counts_are_refused(tmp_path: Path, fake: SmartFake,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    bp = _blueprint(tmp_path / "s.weval.yml", 9)
    s1, _ = _weval_shards(tmp_path, bp, 2)
    # Another version of the blueprint (one prompt's text changed).
    other = write(tmp_path / "v2" / "s.weval.yml", bp.read_text().replace("Question 4", "Question four"))
    (o1,) = _weval_shards(tmp_path, other, 1, out="other")
    capsys.readouterr()
    v2_2 = tmp_path / "v2shard"
    assert main(["run", str(other), "-o", str(v2_2), "--shard", "2/2", "--eval-method", "none", "--no-report"]) == 0
    capsys.readouterr()
    assert main(["merge", str(s1), str(v2_2), "-o", str(tmp_path / "m")]) == 2
    assert "different eval files" in capsys.readouterr().err

    m2 = tmp_path / "models"
    assert main(["run", str(bp), "-o", str(m2), "--shard", "2/2", "--eval-method", "none", "--no-report",
                 "-m", "openai:a", "-m", "openai:c"]) == 0
    capsys.readouterr()
    assert main(["merge", str(s1), str(m2), "-o", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "different models" in err and "openai:c" in err

    assert main(["merge", str(s1), str(o1), "-o", str(tmp_path / "m")]) == 2
    assert "different shard counts" in capsys.readouterr().err

    # A results file without its manifest (a run that was not sharded, or a shard that did not finish).
    assert main(["run", str(bp), "-o", str(tmp_path / "plain"), "--eval-method", "none", "--no-report"]) == 0
    plain = next((tmp_path / "plain").glob("live/blueprints/*/*_comparison.json"))
    capsys.readouterr()
    assert main(["merge", str(s1), str(plain), "-o", str(tmp_path / "m")]) == 2
    assert "is not the result of a finished shard run" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_a_shard_with_no_item_still_runs_and_merges(tmp_path: Path, fake: SmartFake) -> None:
    bp = _blueprint(tmp_path / "s.weval.yml", 2)
    n = 5
    empty = [i for i in range(1, n + 1) if all(shard_of(f"q{k}", n) != i for k in range(2))]
    assert empty  # 2 prompts in 5 shards
    folders = _weval_shards(tmp_path, bp, n)
    assert main(["run", str(bp), "-o", str(tmp_path / "single"), "--eval-method", "none", "--no-report"]) == 0
    # Every shard but the empty ones is needed; the empty ones may be given or not.
    needed = [f for i, f in enumerate(folders, 1) if i not in empty]
    assert main(["merge", *map(str, needed), "-o", str(tmp_path / "merged"), "--no-report"]) == 0
    assert _tree(tmp_path / "single") == _tree(tmp_path / "merged")


def test_dry_run_and_resume_of_a_shard(tmp_path: Path, fake: SmartFake, capsys: pytest.CaptureFixture[str]) -> None:
    bp = _blueprint(tmp_path / "s.weval.yml", 14)
    mine = [f"q{i}" for i in range(14) if shard_of(f"q{i}", 4) == 3]
    assert main(["run", str(bp), "--shard", "3/4", "--dry-run", "--json", "--eval-method", "none"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["prompts"] == len(mine) and plan["cells"] == 2 * len(mine) and plan["shard"] == "3/4"
    # Shards of one run keep separate journals, so two shards in one folder neither lock nor resume each other.
    out = tmp_path / "out"
    for i in (3, 4):
        assert main(["run", str(bp), "-o", str(out), "--shard", f"{i}/4", "--eval-method", "none", "--no-report"]) == 0
    journals = sorted(p.name for p in out.rglob("*.run.db"))
    assert len(journals) == 2 and ".shard-3-of-4." in journals[0] and ".shard-4-of-4." in journals[1]
    before = len(fake.requests)
    assert main(["run", str(bp), "-o", str(out), "--shard", "3/4", "--eval-method", "none", "--no-report",
                 "--resume"]) == 0
    assert len(fake.requests) == before  # everything was in the shard's journal
    assert main(["run", str(bp), "--shard", "5/4"]) == 2
    assert "between 1 and N" in capsys.readouterr().err


def test_costs_of_shards_add_up() -> None:
    from evalspec.run.merge import merge_costs

    def cost(*lines: tuple[str, str, int, float | None]) -> dict[str, Any]:
        out = [{"role": r, "model": m, "priced_as": m, "calls": n, "cached": 0, "input_tokens": 10 * n,
                "output_tokens": n, "usd": usd} for r, m, n, usd in lines]
        return {"currency": "USD", "lines": out, "usd": sum(u for *_, u in lines if u is not None)}

    merged = merge_costs([cost(("judge", "j", 2, 0.5), ("answers", "b", 1, 0.25)),
                          cost(("answers", "b", 3, 0.75), ("answers", "a", 1, None))])
    # Lines in cost/spend.py's order (role, then model), whichever shard met them first.
    assert [(x["role"], x["model"], x["calls"], x["usd"]) for x in merged["lines"]] == [
        ("answers", "a", 1, None), ("answers", "b", 4, 1.0), ("judge", "j", 2, 0.5)]
    assert merged["input_tokens"] == 70 and merged["output_tokens"] == 7
    assert merged["usd"] == 1.5 and merged["unpriced"] == ["a"]  # an unknown price stays unknown


def _agentv_capped_shards(tmp_path: Path) -> tuple[list[Path], Path]:
    """Three shards of a suite whose tests t1, t4, t7 … list their targets the other way round, each shard
    stopped by a budget before its last tests (their rows: not run)."""
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS + """  - name: other
    provider: openai
    model: other-model
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
""")
    tests = "\n".join(f"""  - id: t{i}
    input: "Question {i}"
    criteria: says the number{chr(10) + '    execution: {targets: [other, default]}' if i % 3 == 1 else ''}
    assert:
      - {{type: contains, value: "{i}"}}""" for i in range(12))
    suite = write(tmp_path / "evals" / "s.eval.yaml", "name: sharded\nexecution:\n  targets: [default, other]\n"
                  f"  total_budget_usd: 0.012\ntests:\n{tests}\n")
    prices = write(tmp_path / "p.yml", "candidate: {input: 100, output: 1}\nother-model: {input: 100, output: 1}\n")
    folders, codes = [], []
    for i in (1, 2, 3):
        folder = tmp_path / f"s{i}"
        codes.append(main(["run", str(suite), "-o", str(folder), "--shard", f"{i}/3", "-j", "1", "--prices",
                           str(prices), "--no-report"]))
        folders.append(folder)
    assert set(codes) <= {0, 4} and 4 in codes  # 4: cells not run (the budget), the shard finished
    return folders, suite


def _agentv_results(folder: Path) -> Path:
    files = [p for p in folder.glob("agentv/*/*.jsonl")]
    assert len(files) == 1, files
    return files[0]


def test_agentv_shards_merge_from_their_databases(tmp_path: Path, fake: SmartFake) -> None:
    """The merged rows come from the shards' run databases, the rows of cells a budget kept from starting
    and the tests' own order of targets included: with the shards' results files gone, the merge writes
    the bytes the merge of those files writes."""
    folders, _ = _agentv_capped_shards(tmp_path)
    # The merge of the results files (the databases set aside: an earlier evalspec's shards)
    dbs = [p for f in folders for p in f.glob("agentv/*/*.run.db")]
    assert len(dbs) == 3
    for p in dbs:
        p.rename(p.with_name(p.name + ".away"))
    assert main(["merge", *map(str, folders), "-o", str(tmp_path / "from-files"), "--no-report"]) == 0
    for p in dbs:
        p.with_name(p.name + ".away").rename(p)
    for f in folders:
        _agentv_results(f).unlink()
    assert main(["merge", *map(str, folders), "-o", str(tmp_path / "from-db"), "--no-report"]) == 0
    from_files, from_db = _agentv_results(tmp_path / "from-files"), _agentv_results(tmp_path / "from-db")
    assert from_db.name == from_files.name and from_db.read_bytes() == from_files.read_bytes()
    rows = [json.loads(line) for line in from_db.read_bytes().splitlines()]
    assert [(r["test_id"], r["target"]) for r in rows] == [
        (f"t{i}", t) for i in range(12) for t in (("other", "default") if i % 3 == 1 else ("default", "other"))]
    not_run = [r for r in rows if str(r["error"] or "").startswith("not run: execution.total_budget_usd")]
    assert not_run and all((r["score"], r["verdict"]) == (None, "not scored") for r in not_run)
    assert _tree(tmp_path / "from-files") == _tree(tmp_path / "from-db")


def test_agentv_shards_of_an_earlier_database_merge_from_their_files(tmp_path: Path, fake: SmartFake,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A shard database of schema 1 (no `not_run` table: its not-run rows are only in the results file) is
    not read; the shard's results file is, and without it the merge says what is missing."""
    import sqlite3

    folders, _ = _agentv_capped_shards(tmp_path)
    assert main(["merge", *map(str, folders), "-o", str(tmp_path / "now"), "--no-report"]) == 0
    for p in (p for f in folders for p in f.glob("agentv/*/*.run.db")):
        with sqlite3.connect(p) as conn:
            conn.execute("DROP TABLE not_run")
            conn.execute("PRAGMA user_version = 1")
    assert main(["merge", *map(str, folders), "-o", str(tmp_path / "earlier"), "--no-report"]) == 0
    assert _tree(tmp_path / "now") == _tree(tmp_path / "earlier")
    _agentv_results(folders[0]).unlink()
    capsys.readouterr()
    assert main(["merge", *map(str, folders), "-o", str(tmp_path / "lost"), "--no-report"]) != 0
    assert "cannot read" in capsys.readouterr().err


def test_a_capped_weval_shards_database_holds_its_comparison(tmp_path: Path, fake: SmartFake) -> None:
    """Each shard's comparison object rebuilt from its run database (what `evalspec merge` reads) equals its
    comparison file, for shards capped by `--max-cost` (cells not run), whose prompts have a generated turn
    inside the conversation and some their own system prompt."""
    from evalspec.run.merge import find_shards, shard_database
    from evalspec.run.write.weval_rebuild import weval_comparison

    lines = ["title: Capped", "models: [openai:a, openai:b]", "system: Be brief.", "---"]
    for i in range(9):
        lines += [f"- id: q{i}", "  messages:", f"    - user: \"Question {i}\"", "    - assistant: null",
                  "    - user: And then?", f"  should: [{{$contains: \"{i}\"}}]"]
        if i % 2:
            lines += [f"  system: Answer {i} plainly."]
    bp = write(tmp_path / "cap.weval.yml", "\n".join(lines) + "\n")
    prices = write(tmp_path / "p.yml", "models:\n  a: {input: 0, output: 1000}\n  b: {input: 0, output: 1000}\n")
    codes = []
    for i in (1, 2, 3):
        codes.append(main(["run", str(bp), "-o", str(tmp_path / f"shard{i}"), "--shard", f"{i}/3", "--eval-method",
                           "none", "-j", "1", "--prices", str(prices), "--max-cost", "5", "--no-report"]))
    assert set(codes) <= {0, 4} and 4 in codes
    shards = find_shards([tmp_path / f"shard{i}" for i in (1, 2, 3)])
    seen = {"not run": 0, "own system": 0, "answered": 0}
    for s in shards:
        from_file = json.loads(s.results.read_bytes())
        rebuilt = weval_comparison(shard_database(s), s.manifest)
        assert rebuilt == from_file
        for pid, row in from_file["fullConversationHistories"].items():
            for history in row.values():
                seen["own system"] += history[0]["content"] == f"Answer {pid[1:]} plainly."
                seen["answered"] += "<<error>>" not in history[-1]["content"] and len(history) == 5
        seen["not run"] += sum(str(e).startswith("not run:") for row in from_file.get("errors", {}).values()
                               for e in row.values())
    assert all(seen.values()), seen
