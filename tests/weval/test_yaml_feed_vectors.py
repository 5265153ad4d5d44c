"""Blueprints with surrogate-pair escapes (Python's json.dumps of an emoji) and blank lines holding a tab,
with Weval's own answers (weval-org/app 51dc4d3: parseAndNormalizeBlueprint, then loadAndValidateConfig),
made by dw17's scripts/weval_reference_answers.py normalize, in normalize.jsonl's form: each is checked as
`check` does and its prompts (ids included: a lone surrogate's hash too) must read as the reference's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .vector_walk import normalize_outcome

VECTORS = Path(__file__).parent / "data" / "yaml-feed-vectors.jsonl"
ROWS = [json.loads(line) for line in VECTORS.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize("row", ROWS, ids=[r["path"].rsplit("/", 1)[-1] for r in ROWS])
def test_read_as_the_reference_reads_it(row: dict) -> None:
    assert normalize_outcome(row) is None
