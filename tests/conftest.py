"""Shared test settings: where the shared specification material lives."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"

# The response cache's secret (providers/cache_secret.py) for the tests and every process they start: runs
# under test never make or read the user's ~/.cache/evalspec/cache-key (tests/providers/test_cache_secret.py
# makes its own in a temporary folder).
os.environ.setdefault("EVALSPEC_CACHE_KEY", "evalspec tests: not a secret")
# Every run under test, in this process or one it starts, makes its provider calls through the HTTP process
# (providers/http_process.py), as `evalspec run` does: the run tests hold it to what the calls did without it.
os.environ.setdefault("EVALSPEC_HTTP_PROCESS", "1")
# The finding-code pages diagnostics link to (finding_docs.doc_url) go to a temporary folder, not ~/.cache.
os.environ.setdefault("EVALSPEC_DOCS_DIR", tempfile.mkdtemp(prefix="evalspec-test-docs-"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    assert CORPUS.is_dir(), f"the shared corpus must sit beside the repository: {CORPUS}"
    return CORPUS
