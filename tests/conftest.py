"""Shared test settings: where the shared specification material lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"

# The response cache's secret (providers/cache_secret.py) for the tests and every process they start: runs
# under test never make or read the user's ~/.cache/evalspec/cache-key (tests/providers/test_cache_secret.py
# makes its own in a temporary folder).
os.environ.setdefault("EVALSPEC_CACHE_KEY", "evalspec tests: not a secret")


@pytest.fixture(scope="session")
def corpus() -> Path:
    assert CORPUS.is_dir(), f"the shared corpus must sit beside the repository: {CORPUS}"
    return CORPUS
