"""A whole `evalspec` command with Python's allocations traced, and the streaming bounds lowered so a
run of a few hundred items is a big run in miniature (tests/run/test_memory_growth.py,
tests/batch/test_batch_memory.py). Each test lowers the bounds of the stages its run goes through."""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import pytest

from evalspec import json_stream, source, spill_file
from evalspec.agentv import test_store
from evalspec.cli import main
from evalspec.report import html, json_pieces, sources
from evalspec.run.score.functions import AssessmentBases
from evalspec.run.write import cell_store, files
from evalspec.run.write.weval_results import ArtefactWriter
from evalspec.weval import prompt_store

Bound = tuple[Any, str, int]  # (module or class, name, the lowered value)

# Both formats: cells held before they spill, a results file read whole, the file's lines as strings,
# the report's values encoded together, buffers.
COMMON: tuple[Bound, ...] = (
    (cell_store, "DEFAULT_BOUND", 16), (sources, "STREAM_FROM_BYTES", 0), (source, "LINES_AS_OFFSETS_FROM", 0),
    (json_pieces, "ENCODE_EVERY", 32), (html, "CHUNK", 32), (html._Blocks, "HELD_BYTES", 0),
    (files, "WRITE_BUFFER", 4096), (spill_file, "FLUSH_AT", 4096))
WEVAL: tuple[Bound, ...] = (
    *COMMON, (prompt_store, "DEFAULT_BOUND", 16), (prompt_store, "RECENT", 4), (AssessmentBases, "BOUND", 32),
    (ArtefactWriter, "MADE", 16), (json_stream, "_CHUNK", 4096))
AGENTV: tuple[Bound, ...] = (*COMMON, (test_store, "DEFAULT_BOUND", 16), (test_store, "RECENT", 4))


def lower(monkeypatch: pytest.MonkeyPatch, bounds: tuple[Bound, ...]) -> None:
    for owner, name, bound in bounds:
        monkeypatch.setattr(owner, name, bound)


def traced_peak(argv: list[str]) -> int:
    """The traced peak of `evalspec <argv>`, which must exit 0."""
    gc.collect()
    tracemalloc.start()
    try:
        code = main(argv)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0
    return peak
