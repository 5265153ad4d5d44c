"""The scheduling rules of `Documents`, with an analyzer the test holds back at will.

Debounce, stale versions and cancellation decided by ordering, not by clocks: the analyzer blocks
until the test releases it, and bursts are sent without yielding to the event loop.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from evalspec.incremental import DocumentAnalyzer
from evalspec_lsp.documents import Documents, DocumentState

URI = "file:///tmp/scheduling.weval.yml"


def blueprint(version: int) -> str:
    return f"title: v{version}\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  should: [ok]\n"


class HeldAnalyzer(DocumentAnalyzer):
    """Records what it analyses; blocks on the versions in `hold` until `release()`; raises on `fail`."""

    def __init__(self, path, hold: set[int] = frozenset(), fail: set[int] = frozenset()) -> None:
        super().__init__(path)
        self.hold, self.fail = hold, fail
        self.seen: list[int] = []
        self.started = threading.Event()
        self.gate = threading.Event()

    def analyze(self, text: str):
        version = int(text.split("\n", 1)[0].removeprefix("title: v"))
        self.seen.append(version)
        if version in self.hold:
            self.started.set()
            if not self.gate.wait(20):
                raise TimeoutError("the test never released the analyzer")
        if version in self.fail:
            raise RuntimeError(f"version {version} fails")
        return super().analyze(text)


class Recorder:
    def __init__(self, **analyzer_options) -> None:
        self.fresh: list[int] = []
        self.errors: list[str] = []
        self.analyzer: HeldAnalyzer | None = None
        self.options = analyzer_options

    def make(self, path) -> HeldAnalyzer:
        self.analyzer = HeldAnalyzer(path, **self.options)
        return self.analyzer

    def on_fresh(self, state: DocumentState) -> None:
        self.fresh.append(state.analysis_version)

    def on_error(self, state: DocumentState, exc: Exception) -> None:
        self.errors.append(str(exc))

    def documents(self, debounce_s: float) -> Documents:
        return Documents(self.on_fresh, self.on_error, debounce_s=debounce_s, analyzer=self.make)


async def started(analyzer: HeldAnalyzer) -> None:
    assert await asyncio.to_thread(analyzer.started.wait, 20)


async def settled(docs: Documents) -> None:
    await asyncio.wait_for(docs.settled(URI), 20)


async def test_a_burst_of_changes_is_analysed_once():
    rec = Recorder()
    docs = rec.documents(debounce_s=0.05)
    docs.open(URI, 1, blueprint(1))
    await settled(docs)
    for version in range(2, 7):  # no await in between: the debounce timer cannot fire mid-burst
        docs.change(URI, version, blueprint(version))
    await settled(docs)
    assert rec.analyzer.seen == [1, 6]
    assert rec.fresh == [1, 6]


async def test_an_analysis_that_finishes_after_a_newer_change_is_not_announced():
    rec = Recorder(hold={2})
    docs = rec.documents(debounce_s=0)
    docs.open(URI, 1, blueprint(1))
    await settled(docs)
    docs.change(URI, 2, blueprint(2))
    await started(rec.analyzer)  # version 2 is being analysed…
    docs.change(URI, 3, blueprint(3))  # …when version 3 arrives
    rec.analyzer.gate.set()
    await settled(docs)
    assert rec.analyzer.seen == [1, 2, 3]
    assert rec.fresh == [1, 3]  # version 2 was never announced (no diagnostics for it)
    assert docs.get(URI).analysis_version == 3


async def test_a_superseded_analysis_nobody_asked_for_is_skipped():
    rec = Recorder(hold={2})
    docs = rec.documents(debounce_s=0)
    docs.open(URI, 1, blueprint(1))
    await settled(docs)
    docs.change(URI, 2, blueprint(2))
    await started(rec.analyzer)
    docs.change(URI, 3, blueprint(3))  # queued behind version 2…
    docs.change(URI, 4, blueprint(4))  # …and out of date before its turn
    rec.analyzer.gate.set()
    await settled(docs)
    assert rec.analyzer.seen == [1, 2, 4]
    assert rec.fresh == [1, 4]


async def test_a_request_does_not_wait_for_the_debounce():
    rec = Recorder()
    docs = rec.documents(debounce_s=3600)  # the debounce would never run out within the test
    docs.open(URI, 1, blueprint(1))
    await settled(docs)
    docs.change(URI, 2, blueprint(2))
    version, analysis = await asyncio.wait_for(docs.current(URI), 20)
    assert version == 2
    assert analysis.text == blueprint(2)


async def test_a_request_gets_the_version_it_asked_about():
    rec = Recorder(hold={2})
    docs = rec.documents(debounce_s=3600)
    docs.open(URI, 1, blueprint(1))
    await settled(docs)
    docs.change(URI, 2, blueprint(2))
    request = asyncio.ensure_future(docs.current(URI))
    await started(rec.analyzer)
    docs.change(URI, 3, blueprint(3))  # the user typed on while the request waited
    rec.analyzer.gate.set()
    version, analysis = await asyncio.wait_for(request, 20)
    assert (version, analysis.text) == (2, blueprint(2))  # positions in the request refer to version 2
    assert 2 not in rec.fresh


async def test_cancelling_a_request_leaves_the_analysis_running():
    rec = Recorder(hold={2})
    docs = rec.documents(debounce_s=3600)
    docs.open(URI, 1, blueprint(1))
    await settled(docs)
    docs.change(URI, 2, blueprint(2))
    request = asyncio.ensure_future(docs.current(URI))
    await started(rec.analyzer)
    request.cancel()  # what pygls does on $/cancelRequest
    with pytest.raises(asyncio.CancelledError):
        await request
    rec.analyzer.gate.set()
    await settled(docs)
    assert rec.fresh == [1, 2]  # the shared analysis finished and was announced


async def test_a_failing_analysis_is_reported_and_the_next_version_works():
    rec = Recorder(fail={2})
    docs = rec.documents(debounce_s=0)
    docs.open(URI, 1, blueprint(1))
    await settled(docs)
    docs.change(URI, 2, blueprint(2))
    with pytest.raises(RuntimeError, match="version 2 fails"):
        await asyncio.wait_for(docs.current(URI), 20)
    assert rec.errors == ["version 2 fails"]
    docs.change(URI, 3, blueprint(3))
    await settled(docs)
    assert rec.fresh == [1, 3]


async def test_a_message_costs_the_same_with_thousands_of_documents_open(tmp_path):
    """The third attack run opened 10,000 documents: every edit scanned every open document, and every
    file an analysis read scanned them again (abspath each), so opening them took minutes. The cost of
    one change and one lookup by path must not grow with the number of documents open."""
    import os
    import time
    from pathlib import Path

    def cost(n: int) -> float:
        rec = Recorder()
        docs = rec.documents(debounce_s=3600)  # nothing analysed: only the bookkeeping is timed
        paths = [tmp_path / f"d{i}.weval.yml" for i in range(n)]
        for i, p in enumerate(paths):
            docs.open(p.as_uri(), 1, blueprint(i))
        probe = paths[n // 2]
        best = float("inf")
        for _ in range(3):
            start = time.thread_time()
            for _ in range(200):
                docs.files_changed([probe], besides=probe.as_uri())
                assert docs.files.read_text(Path(os.path.abspath(probe))) is not None
                assert docs.by_path(probe) is not None
            best = min(best, time.thread_time() - start)
        for p in paths:
            docs.close(p.as_uri())
        return best

    small, large = cost(100), cost(3_200)
    assert large / small < 6, f"32x the documents cost {large / small:.0f}x the time"  # a scan: ~32x
