"""`evalspec report` and the report of `evalspec run`: files, formats, exit codes, safety of the output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from run_records import run_records

from evalspec.cli import main
from evalspec.report import write_report

from .conftest import HOSTILE, KEY, run_cli, weval_run


def test_report_writes_one_self_contained_file(runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(runs["weval"]), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {out}"
    html = out.read_text()
    # nothing to fetch: no URL the browser would load, a policy that forbids it anyway
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "connect-src 'none'" in html and "default-src 'none'" in html
    # the data once, in inert JSON blocks that a hostile answer cannot end early
    assert html.count("</script>") == 3 and html.count("<script") == 3
    assert HOSTILE not in html and "window.__pwned" in html
    blocks = re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', html, re.S)
    assert [b[0] for b in blocks] == ["evalspec-data", "evalspec-details-0-0"]
    details = json.loads(blocks[1][1])
    assert any(c and c[0] == HOSTILE for c in details["cells"])  # the answer survives, exactly, as data
    assert html.count("London. ok") == 1  # each answer is stored once (one cell answered this)


def test_run_writes_the_report_beside_the_results_and_lists_the_worst_items(runs: dict[str, Path],
                                                                           tmp_path: Path, capsys) -> None:
    report = runs["weval"].parent / "report.html"
    assert report.is_file() and "evalspec-data" in report.read_text()
    weval_run(tmp_path / "again")
    out = capsys.readouterr().out
    table_end = out.index("mean 0.800")
    worst = out.index("worst items (first failed point):")
    assert table_end < worst < out.index("report: ")
    block = out[worst:out.index("results:")]
    assert "openai:other[temp:0]" in block
    assert re.search(r"broken\s+error\s+error: Failed to get response", block)
    assert re.search(r'capital\s+0\.000\s+Function: contains\("Paris"\) \(0\.000\)', block)
    assert "report: " + str(next((tmp_path / "again" / "out").glob("live/blueprints/*/report.html"))) in out


def test_an_agentv_runs_report_reads_the_eval_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report `evalspec run` writes takes the tests' inputs from the run's own analysis (a 2,000-test
    file parsed and checked twice cost a run ~0.2 s); it holds what `evalspec report` reads from the files."""
    import evalspec.analysis

    from .conftest import agentv_run

    analysed: list[Path] = []
    real = evalspec.analysis.analyze_file

    def counting(path, **kw):  # type: ignore[no-untyped-def]
        analysed.append(Path(path).resolve())
        return real(path, **kw)

    monkeypatch.setattr(evalspec.analysis, "analyze_file", counting)
    results = agentv_run(tmp_path)
    suite = (tmp_path / "evals" / "report.eval.yaml").resolve()
    assert analysed.count(suite) == 1
    by_run = (results.parent / "report.html").read_text()
    assert main(["report", str(results), "-o", str(tmp_path / "again.html")]) == 0
    assert analysed.count(suite) == 2  # `evalspec report` on the files alone reads the eval file

    def data(html: str) -> object:
        found = re.search(r'<script type="application/json" id="evalspec-data">(.*?)</script>', html, re.S)
        assert found is not None
        return json.loads(found.group(1))

    got = data(by_run)
    assert got == data((tmp_path / "again.html").read_text())
    assert "Hello, I am Alice" in json.dumps(got)


def test_no_report_skips_it(tmp_path: Path) -> None:
    from .conftest import BLUEPRINT, ReportFake, env_for, write

    bp = write(tmp_path / "b.weval.yml", BLUEPRINT)
    with ReportFake() as fake:
        assert run_cli(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report"], env_for(fake)) == 0
    assert not list((tmp_path / "out").rglob("report.html"))


def test_markdown_has_the_summary_and_the_failing_items(runs: dict[str, Path], capsys) -> None:
    assert main(["report", "--format", "markdown", str(runs["weval"])]) == 0
    md = capsys.readouterr().out
    assert md.startswith("## evalspec report: Report test &lt;b&gt;title&lt;/b&gt;")
    assert "| openai:other[temp:0] | 3 | 0.500 | 1 | 0 | 1 | 0 | 1 |" in md
    assert "### Failing items (2)" in md
    assert "| broken | openai:other[temp:0] | error | error: Failed to get response" in md
    assert '| capital | openai:other[temp:0] | 0.000 | Function: contains("Paris") (0.000) |' in md


def test_markdown_diff_lists_regressions_first(runs: dict[str, Path], capsys) -> None:
    assert main(["report", "--format", "markdown", str(runs["weval"]), str(runs["weval2"])]) == 0
    md = capsys.readouterr().out
    assert "**1 regressed, 1 improved**" in md
    assert md.index("### Regressions (1)") < md.index("### Improvements (1)") < md.index("### Failing items")
    assert "| capital | openai:candidate[temp:0] | 1.00 → 0.00 |" in md


def test_bad_results_exit_2_with_the_reason(tmp_path: Path, capsys) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text('{"a": 1}')
    assert main(["report", str(junk)]) == 2
    assert "is not a results file" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["report", str(junk), str(junk), str(junk)]) == 2
    assert "two to compare" in capsys.readouterr().err


def test_api_keys_never_reach_a_report(runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = runs["agentv"].read_text().split("\n")
    row = json.loads(rows[0])
    row["answer"] = f"my key is {KEY}, and the other is sk-env-secret-999"
    leaked = tmp_path / "leaky.jsonl"
    leaked.write_text(json.dumps(row) + "\n")
    monkeypatch.setenv("SOME_SERVICE_API_KEY", "sk-env-secret-999")
    from evalspec.providers.redact import register_secret

    register_secret(KEY)  # as a run in this process would have done
    for fmt in ("html", "markdown"):
        text = write_report([leaked], tmp_path / f"r.{fmt}", fmt=fmt).read_text()
        assert "sk-env-secret-999" not in text and KEY not in text
    assert "my key is ***" in (tmp_path / "r.html").read_text()


def test_comparing_two_runs_names_the_changed_cells(runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    assert main(["report", str(runs["weval"]), str(runs["weval2"]), "-o", str(tmp_path / "d.html")]) == 0
    out = capsys.readouterr().out.splitlines()
    # Both runs of one blueprint share its label: the time tells them apart.
    assert out[0].startswith("old: ") and out[1].startswith("new: ") and out[0][5:] != out[1][5:]
    assert " @ " in out[0]
    out = out[2:]
    assert out[0] == "1 regressed, 1 improved, 0 changed otherwise, 0 new, 0 gone (score changes under 0.05 not counted)"
    assert out[1:3] == ["  ▼ capital × openai:candidate[temp:0]: 1.00 → 0.00",
                        "  ▲ capital × openai:other[temp:0]: 0.00 → 1.00"]
    assert out[3] == f"report: {tmp_path / 'd.html'}"


def test_an_interrupted_run_still_writes_its_report_from_the_journal(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.fakeprovider import Reply

    from ..run.conftest import SmartFake, env_for, write

    lines = ["models: [openai:candidate]", "---"]
    for i in range(40):
        lines += [f"- id: p{i:02d}", f"  prompt: question {i}", "  should:", f"    - $contains: question {i}"]
    bp = write(tmp_path / "r.weval.yml", "\n".join(lines) + "\n")
    out = tmp_path / "out"
    with SmartFake() as fake:
        fake.then(*[Reply.ok(delay=0.05) for _ in range(40)])
        env = {**env_for(fake), "PYTHONPATH": os.pathsep.join(sys.path)}
        proc = subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", str(out), "-j", "1"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while sum(1 for r in run_records(out) if r["t"] == "score") < 3:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130
    report = next(out.glob("live/blueprints/*/report.html"))
    assert f"report: {report}" in stdout
    html = report.read_text()
    assert "unfinished run (read from its journal): " in html and " of 40 cell(s) have a result" in html




def _one_cell(folder: Path, label: str, score: float) -> Path:
    """A Weval comparison file of one prompt and one model whose one point scored `score`."""
    pa = {"keyPointText": "is right", "coverageExtent": score, "multiplier": 1.0, "isInverted": False, "reflection": "ok"}
    m = "openai:gpt-4o-mini[temp:0]"
    data = {"configId": "thr", "configTitle": "Threshold", "runLabel": label, "timestamp": f"2026-01-0{label[-1]}T00-00-00-000Z",
            "config": {"id": "thr", "models": [m], "prompts": [{"id": "p", "messages": [{"role": "user", "content": "q"}]}]},
            "evalMethodsUsed": ["llm-coverage"], "effectiveModels": [m], "promptIds": ["p"],
            "promptContexts": {"p": [{"role": "user", "content": "q"}]},
            "allFinalAssistantResponses": {"p": {m: "a"}}, "fullConversationHistories": {}, "errors": {},
            "evaluationResults": {"llmCoverageScores": {"p": {m: {"keyPointsCount": 1, "avgCoverageExtent": score,
                                                                  "pointAssessments": [pa]}}}}}
    path = folder / f"{label}_2026-01-01T00-00-00-000Z_comparison.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_regression_threshold_on_the_command_line(tmp_path: Path, capsys, browser) -> None:
    """0.93 → 0.85 (both pass): a regression at the default 0.05, not with --regression-threshold 0.1; the
    terminal's count and the page's banner say which threshold counted."""
    old, new = _one_cell(tmp_path, "run1", 0.93), _one_cell(tmp_path, "run2", 0.85)
    assert main(["report", str(old), str(new), "-o", str(tmp_path / "a.html")]) == 0
    assert "1 regressed, 0 improved" in capsys.readouterr().out
    assert main(["report", str(old), str(new), "-o", str(tmp_path / "b.html"), "--regression-threshold", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "0 regressed, 0 improved, 0 changed otherwise" in out and "under 0.1 not counted" in out
    page = browser.new_page()
    try:
        page.goto((tmp_path / "b.html").resolve().as_uri())
        page.wait_for_selector("html[data-ready]", timeout=20000)
        banner = page.locator("#diff-banner").inner_text()
        assert "0 regressed" in banner and "score changes under 0.1 not counted" in banner
        assert page.locator(".cell.chg-reg").count() == 0
    finally:
        page.close()
