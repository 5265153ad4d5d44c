"""The report's tokens and cost, in a real browser: per role and model, judges apart, unknown prices as
unknown (the report fixtures' models have no price)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalspec.report import write_report


def test_the_report_shows_tokens_and_cost_with_unknown_prices_as_unknown(runs: dict[str, Path], tmp_path: Path,
                                                                          open_page: Any) -> None:
    page = open_page(write_report([runs["weval"]], tmp_path / "report.html")).page
    rows = [r.split("\t") for r in page.locator("#costs tbody tr").all_inner_texts()]
    by = {(r[0], r[1]): r[2:] for r in rows}
    # 3 prompts, 1 call each; the fake reports 11 tokens in and 7 out a call.
    assert by[("answers", "openai:candidate")] == ["3", "33", "21", "unknown"]
    assert by[("answers", "openai:other")][3] == "unknown"
    judge = by[("judge", "holistic(openai:judge-a)")]
    assert int(judge[0]) >= 2 and judge[3] == "unknown"
    total = page.locator("#cost-total").inner_text()
    # nothing priced: unknown, not "at least $0.000000"
    assert total.startswith("Total cost: unknown (no price for ") and "judge-a" in total and "$" not in total
    assert page.locator("#overview-line").inner_text().endswith("total cost unknown")
    assert "$0.0000" not in page.locator("#summary").inner_text().replace("at least", "")


def test_agentv_report_names_the_judge_apart(runs: dict[str, Path], tmp_path: Path, open_page: Any) -> None:
    page = open_page(write_report([runs["agentv"]], tmp_path / "report.html")).page
    roles = [r.split("\t")[:2] for r in page.locator("#costs tbody tr").all_inner_texts()]
    assert ["answers", "default"] in roles and ["judge", "grader"] in roles
    # The summary's cost column: no price, so unknown, never a total of the priced part alone.
    assert "unknown" in page.locator("#summary").inner_text()


def test_a_batch_runs_report_reads_what_it_paid_from_the_cost_file(tmp_path: Path, open_page: Any) -> None:
    """The comparison file of a batch run holds no cost; the report reads the cost file beside it and
    shows batch and interactive calls on their own rows, at their own prices."""
    import json
    import os
    import subprocess
    import sys

    from tests.fakebatch import FakeBatchServer

    bp = tmp_path / "b.weval.yml"
    prompts = "".join(f"- id: p{i}\n  prompt: question {i}\n  should: [{{$contains: question}}]\n" for i in range(4))
    bp.write_text("title: batch report\nmodels: [openai:gpt-4o-mini]\n---\n" + prompts
                  + "- id: convo\n  messages:\n    - user: first\n    - assistant: null\n    - user: second\n"
                  "  should: [{$contains: second}]\n", encoding="utf-8")
    with FakeBatchServer() as fake:
        # In a child process: the browser's event loop runs in this one.
        env = {k: v for k, v in os.environ.items() if k != "EVALSPEC_PRICES"}
        env.update(fake.env(), PYTHONPATH=os.pathsep.join(sys.path))
        run = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", str(tmp_path / "out"),
                              "--batch", "--batch-poll", "0.01", "--no-report"], env=env, capture_output=True,
                             timeout=120)
        assert run.returncode == 0, run.stderr.decode()
    comparison = next((tmp_path / "out").rglob("*_comparison.json"))
    cost = json.loads(comparison.with_name(comparison.name.replace("_comparison", "_cost")).read_bytes())
    page = open_page(write_report([comparison], tmp_path / "report.html")).page
    assert page.locator("#costs thead").inner_text().split("\t")[:4] == ["role", "model", "sent", "calls"]
    rows = {tuple(r.split("\t")[:3]): r.split("\t")[3:] for r in page.locator("#costs tbody tr").all_inner_texts()}
    [batch] = cost["lines"]
    assert batch["via"] == "batch"  # the conversation's two turns too, a phase each
    assert rows == {("answers", "openai:gpt-4o-mini", "batch"): ["6", f"{batch['input_tokens']}",
                                                                 f"{batch['output_tokens']}", f"${batch['usd']:.6f}"]}
    # The batch price is the table's batch discount (half) of gpt-4o-mini's $0.15 / $0.60 a million.
    assert batch["usd"] == pytest.approx((batch["input_tokens"] * 0.15 + batch["output_tokens"] * 0.6) / 1e6 * 0.5)
    assert page.locator("#cost-total").inner_text() == f"Total cost: ${cost['usd']:.6f}"
