"""Blueprints with surrogate-pair escapes (Python's json.dumps of an emoji) and blank lines holding a tab,
with Weval's own answers (weval-org/app 51dc4d3: parseAndNormalizeBlueprint, then loadAndValidateConfig),
made by dw17's scripts/weval_reference_answers.py normalize, in normalize.jsonl's form: each is checked as
`check` does and its prompts (ids included) must read as the reference's, but for LONE_SURROGATE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.analysis import analyze
from evalspec.detect import FileKind

from .vector_walk import normalize_outcome

VECTORS = Path(__file__).parent / "data" / "yaml-feed-vectors.jsonl"
ROWS = [json.loads(line) for line in VECTORS.read_text(encoding="utf-8").splitlines() if line]


# A lone surrogate's escape is read as U+FFFD, with a warning (docs/reference-differences.md, Weval): the prompt's
# text, and so its hash id, differ from the reference's.
LONE_SURROGATE = {"blueprints/s17/e3.yml", "blueprints/s17/e4.json"}


@pytest.mark.parametrize("row", ROWS, ids=[r["path"].rsplit("/", 1)[-1] for r in ROWS])
def test_read_as_the_reference_reads_it(row: dict) -> None:
    if row["path"] not in LONE_SURROGATE:
        assert normalize_outcome(row) is None
        return
    assert (normalize_outcome(row) or "").startswith("ids:")
    analysis = analyze(row["blueprint"], row["path"], kind=FileKind.WEVAL)
    assert [f.code for f in analysis.findings] == ["invalid-character"]
    assert analysis.weval is not None and analysis.weval.blueprint is not None
    theirs = row["reference"]["prompts"][0]["messages"][0]["content"]
    assert analysis.weval.blueprint.prompts[0].messages[0].content == theirs.replace("\ud83d", "\ufffd") != theirs
