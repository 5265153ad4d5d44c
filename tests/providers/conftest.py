"""Fixtures for provider tests: a fake provider on 127.0.0.1 and the real shared client pointed at it."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

# tests/ holds fakeprovider.py, shared with other test folders.
_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from fakeprovider import FakeProvider  # noqa: E402

from evalspec.providers.http import make_client  # noqa: E402

KEY = "sk-test-0123456789abcdef"  # a fake key; tests assert it never leaks


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


@pytest.fixture
async def client() -> AsyncIterator:
    c = make_client(8, timeout=5.0)
    try:
        yield c
    finally:
        await c.aclose()


@pytest.fixture
def env(fake: FakeProvider) -> dict[str, str]:
    """An environment with every catalog key set and every base URL pointed at the fake server."""
    e: dict[str, str] = {}
    for name in ("openai", "mistral", "together", "xai", "openrouter"):
        e[f"{name.upper()}_BASE_URL"] = fake.url(f"/{name}/v1")
        e[f"{name.upper()}_API_KEY"] = f"{KEY}-{name}"
    e["ANTHROPIC_BASE_URL"] = fake.url("/anthropic")
    e["ANTHROPIC_API_KEY"] = f"{KEY}-anthropic"
    e["GOOGLE_BASE_URL"] = fake.url("/google")
    e["GOOGLE_API_KEY"] = f"{KEY}-google"
    return e
