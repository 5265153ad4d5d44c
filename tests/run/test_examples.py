"""The examples run offline with `-m echo`: no key, no network, a table, exit 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # A bare environment: no API key, no base URL; proxies pointed nowhere so any network use would fail.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "PYTHONPATH": os.pathsep.join(sys.path), "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    return subprocess.run([sys.executable, "-m", "evalspec.cli", "run", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def test_hello_weval(tmp_path: Path) -> None:
    proc = _run(tmp_path, str(EXAMPLES / "hello.weval.yml"), "-m", "echo")
    assert proc.returncode == 0, proc.stderr
    assert "echo[temp:0]" in proc.stdout and "mean" in proc.stdout
    assert "not be scored" in proc.stderr and "OPENROUTER_API_KEY" in proc.stderr
    data = json.loads(next(tmp_path.glob("evalspec-results/live/blueprints/hello/*_comparison.json")).read_text())
    cov = data["evaluationResults"]["llmCoverageScores"]
    scores = {pid: row["echo[temp:0]"].get("avgCoverageExtent") for pid, row in cov.items()}
    assert scores["capital"] == 1 and scores["json-answer"] == 0.5
    explain = cov["explain"]["echo[temp:0]"]["pointAssessments"]
    assert explain[1]["error"].startswith("Not scored: no judge can be called")


def test_hello_agentv(tmp_path: Path) -> None:
    proc = _run(tmp_path, str(EXAMPLES / "hello.eval.yaml"), "-m", "echo")
    assert proc.returncode == 0, proc.stderr
    assert "echo" in proc.stdout and "mean" in proc.stdout
    rows = [json.loads(line) for f in tmp_path.glob("evalspec-results/agentv/hello-evalspec/*.jsonl")
            if not f.name.endswith(".journal.jsonl") for line in f.read_text().splitlines()]
    verdicts = {r["test_id"]: r["verdict"] for r in rows}
    assert verdicts == {"greeting": "pass", "arithmetic": "fail", "json-status": "fail", "polite": "pass"}


def test_examples_check_clean() -> None:
    from evalspec.analysis import analyze_file

    for name in ("hello.weval.yml", "hello.eval.yaml"):
        analysis = analyze_file(EXAMPLES / name)
        assert not analysis.findings, [f.message for f in analysis.findings]
