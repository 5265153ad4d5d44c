"""The batch tests' fake batch server, its address in the environment the run reads (a test file may
define its own `fake`, as test_batch_streaming does with one poll per state)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakebatch import FakeBatchServer


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBatchServer]:
    with FakeBatchServer() as server:
        for k, v in server.env().items():
            monkeypatch.setenv(k, v)
        yield server
