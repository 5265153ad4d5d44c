"""Reading results into the report model: every format gives the same cells; journals of unfinished
runs; unknown fields kept; clear errors for what is not results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.report import ResultsError, load_results
from evalspec.report.diff import IMPROVED, REGRESSED, SAME, diff_runs
from evalspec.report.model import ERROR, NOT_SCORED, OK, PENDING

CAND, OTHER = "openai:candidate[temp:0]", "openai:other[temp:0]"


def _cells(run):  # type: ignore[no-untyped-def]
    return {k: (c.status, c.score, c.answer, [(p.text, p.score) for p in c.points]) for k, c in run.cells.items()}


def test_comparison_artefacts_and_journal_agree(runs: dict[str, Path]) -> None:
    comparison = load_results(runs["weval"])
    artefacts = load_results(runs["weval"].with_name(runs["weval"].name.replace("_comparison.json", "")))
    journal = load_results(next(runs["weval"].parent.glob("*.journal.jsonl")))
    assert comparison.kind == "weval" and comparison.complete and journal.complete
    assert [i.id for i in comparison.items] == ["capital", "hostile", "broken"]
    assert comparison.models == [CAND, OTHER]
    assert _cells(comparison) == _cells(artefacts) == _cells(journal)
    capital = comparison.cell("capital", OTHER)
    assert capital is not None and capital.status == OK and capital.score == 0.0 and capital.verdict == "fail"
    first = capital.first_failed_point()
    assert first is not None and first.text == 'Function: contains("Paris")'
    assert "Not friendly: it names <i>London</i>" in (capital.points[1].note or "")
    broken = comparison.cell("broken", OTHER)
    assert broken is not None and broken.status == ERROR and "HTTP 400" in (broken.error or "")
    # tokens and durations come from the journal beside the comparison file
    assert capital.tokens_in and capital.tokens_out and capital.duration_ms is not None
    assert comparison.items[0].messages == [{"role": "user", "content": "What is the capital of France?"}]


def test_agentv_rows_take_inputs_from_the_eval_file_and_keep_unknown_fields(runs: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    run = load_results(runs["agentv"])
    assert run.kind == "agentv" and run.models == ["default", "other"]
    assert run.items[0].messages == [{"role": "user", "content": "Hello, I am Alice"}]
    greeting = run.cell("greeting", "other")
    # the rubric could not be judged (this target has no judge), so the test is not scored, and its
    # failed `contains` is still the first failed point
    assert greeting is not None and greeting.status == NOT_SCORED and greeting.score is None
    assert greeting.first_failed_point() is not None and greeting.first_failed_point().kind == "contains"  # type: ignore[union-attr]
    rubric = greeting.points[1]
    assert rubric.score is None and rubric.not_scored and "no judge" in rubric.not_scored
    # a row from a newer writer: fields this version does not know are kept and shown as they are
    rows = [json.loads(line) for line in runs["agentv"].read_text().split("\n") if line]  # not splitlines: U+2028
    rows[0]["trials"] = [{"attempt": 1, "score": 1.0}]
    rows[0]["tool_trace"] = [{"tool": "search", "args": {"q": "x"}}]
    rows[0]["scores"][0]["details"] = {"matched": 3}
    rows.append({"no": "test id"})
    odd = tmp_path / "rows.jsonl"
    odd.write_text("\n".join(json.dumps(r) for r in rows) + "\n{cut short")
    again = load_results(odd)
    cell = again.cell(rows[0]["test_id"], rows[0]["target"])
    assert cell is not None and cell.extra["tool_trace"] == [{"tool": "search", "args": {"q": "x"}}]
    assert cell.extra["trials"] == [{"attempt": 1, "score": 1.0}]
    assert cell.points[0].extra == {"details": {"matched": 3}}
    assert any("without test_id" in n for n in again.notes)
    assert again.items[0].messages == []  # no journal beside this copy: ids only, and a note says so


def test_a_runs_own_analysis_stands_in_for_its_eval_file(runs: dict[str, Path]) -> None:
    """`evalspec run` hands the report the analysis it ran (a 2,000-test file is not parsed twice): the
    report is the same as one read from the file, and it is that analysis that is read."""
    from evalspec.analysis import analyze, analyze_file

    suite = runs["agentv"].parents[3] / "evals" / "report.eval.yaml"
    from_disk = load_results(runs["agentv"])
    given = load_results(runs["agentv"], analyses={suite.resolve(): analyze_file(suite)})
    assert given.items == from_disk.items and _cells(given) == _cells(from_disk)
    edited = analyze(suite.read_text().replace("Hello, I am Alice", "Hi, I am Alice"), suite)
    run = load_results(runs["agentv"], analyses={suite.resolve(): edited})
    assert run.items[0].messages == [{"role": "user", "content": "Hi, I am Alice"}]
    assert from_disk.items[0].messages == [{"role": "user", "content": "Hello, I am Alice"}]


def test_an_unfinished_run_is_read_from_its_journal(runs: dict[str, Path], tmp_path: Path) -> None:
    journal = next(runs["weval"].parent.glob("*.journal.jsonl"))
    lines = journal.read_text().split("\n")
    # cut the run after its first answer: a killed process, with a torn last line
    keep = [lines[0]] + [line for line in lines[1:] if '"capital"' in line and '"openai:candidate' in line]
    cut = tmp_path / journal.name
    cut.write_text("\n".join(keep) + '\n{"t":"gen","c":["hos')
    run = load_results(cut)
    assert not run.complete
    assert run.notes[0].startswith("unfinished run (read from its journal): 1 of 6 cell(s)")
    assert [i.id for i in run.items] == ["capital", "hostile", "broken"]  # from the blueprint it names
    assert run.cell("capital", CAND) is not None and run.cell("capital", CAND).status == OK  # type: ignore[union-attr]
    assert run.cell("hostile", CAND).status == PENDING  # type: ignore[union-attr]  # still to run (--resume)
    stats = {s.model: s for s in run.summaries()}
    assert stats[CAND].pending == 2 and stats[OTHER].pending == 3


def test_an_answered_but_unscored_cell_is_pending(runs: dict[str, Path], tmp_path: Path) -> None:
    journal = next(runs["agentv"].parent.glob("*.journal.jsonl"))
    lines = [line for line in journal.read_text().split("\n") if '"t":"score"' not in line and '"t":"done"' not in line]
    cut = tmp_path / journal.name
    cut.write_text("\n".join(lines) + "\n")
    run = load_results(cut)
    assert not run.complete and run.cells
    assert all(c.status == PENDING and c.answer is not None for c in run.cells.values())


def test_folders_resolve_to_their_newest_results(runs: dict[str, Path]) -> None:
    out = runs["weval"].parents[3]
    assert load_results(out).source == str(runs["weval"])


@pytest.mark.parametrize(("content", "message"), [
    ('{"some": "json"}', "is not a results file"),
    ("not json at all", "is not a results file"),
])
def test_what_is_not_results_is_named(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "x.json"
    f.write_text(content)
    with pytest.raises(ResultsError, match=message):
        load_results(f)
    with pytest.raises(ResultsError, match="no such file"):
        load_results(tmp_path / "missing.json")
    with pytest.raises(ResultsError, match="holds no results"):
        load_results(tmp_path)


def test_diff_classifies_each_cell(runs: dict[str, Path]) -> None:
    d = diff_runs(load_results(runs["weval"]), load_results(runs["weval2"]))
    assert d.changes[("capital", CAND)] == REGRESSED
    assert d.changes[("capital", OTHER)] == IMPROVED
    assert d.changes[("hostile", CAND)] == SAME and d.changes[("broken", OTHER)] == SAME
    assert (d.count(REGRESSED), d.count(IMPROVED)) == (1, 1)
    per = {m.model: m for m in d.per_model}
    assert per[CAND].regressed == 1 and per[OTHER].improved == 1


def test_not_scored_cells(tmp_path: Path) -> None:
    row = {"test_id": "t", "target": "x", "score": None, "answer": "a", "execution_status": "ok",
           "scores": [{"name": "j", "type": "llm-judge", "score": None, "weight": 1, "verdict": "skip",
                       "reasoning": "not scored: no judge"}]}
    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps(row) + "\n")
    cell = load_results(f).cell("t", "x")
    assert cell is not None and cell.status == NOT_SCORED and cell.points[0].not_scored == "no judge"
