"""The report's tokens and cost, in a real browser: per role and model, judges apart, unknown prices as
unknown (the report fixtures' models have no price)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    assert total.startswith("Total cost: at least $0.000000 + unknown for ") and "judge-a" in total
    assert "$0.0000" not in page.locator("#summary").inner_text().replace("at least", "")


def test_agentv_report_names_the_judge_apart(runs: dict[str, Path], tmp_path: Path, open_page: Any) -> None:
    page = open_page(write_report([runs["agentv"]], tmp_path / "report.html")).page
    roles = [r.split("\t")[:2] for r in page.locator("#costs tbody tr").all_inner_texts()]
    assert ["answers", "default"] in roles and ["judge", "grader"] in roles
    # The summary's cost column: no price, so unknown, never a total of the priced part alone.
    assert "unknown" in page.locator("#summary").inner_text()
