"""Regression rows found by a differential run against AgentV v2.19.0 (8d0f735f): each row of
data/differential.jsonl is a minimal case and AgentV's own answer, in the vectors' format
(../shared/vectors/README.md, `agentv/tests.jsonl`), walked through the same code paths
(reference_vectors.compare_scoring). A `note` says what the row pins.

How the rows were made: AgentV's `loadTestSuite` and `runEvaluation` run under bun 1.3.3 with `TZ=UTC` and
no environment variables, the target and judge replaced by providers answering the row's `response` and
`judge_reply` (a harness outside this repository, as scripts/weval_parser_vectors.py describes for Weval);
its answers are copied as they came.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .reference_vectors import compare_scoring

ROWS = [json.loads(line) for line in (Path(__file__).parent / "data" / "differential.jsonl").open(encoding="utf-8")]


@pytest.mark.parametrize("row", ROWS, ids=[f"{n}:{r['note'][:40]}" for n, r in enumerate(ROWS)])
def test_scores_as_agentv_does(row: dict) -> None:
    assert compare_scoring(row) == []
