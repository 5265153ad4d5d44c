"""The collector's state is switched only around measured hot paths, and always restored."""

from __future__ import annotations

import asyncio
import gc
import threading
from pathlib import Path

import pytest

from evalspec.cli import main
from evalspec.source import gc_paused
from evalspec_lsp.documents import Documents


@pytest.fixture(autouse=True)
def _collector_on():
    gc.enable()
    yield
    gc.enable()


def test_gc_paused_restores_the_collector_also_after_an_error() -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still holds it
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError
    assert gc.isenabled()


def test_gc_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_blocks_in_two_threads() -> None:
    """The server's worker analyses while its event loop answers a request: whichever ends first must
    not turn the collector on under the other, and the last one turns it back on."""
    entered, leave_first, first_left = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with gc_paused():
            entered.set()
            leave_first.wait(5)
        first_left.set()

    worker = threading.Thread(target=first)
    worker.start()
    assert entered.wait(5)
    with gc_paused():
        leave_first.set()
        assert first_left.wait(5)
        assert not gc.isenabled()  # the first block ended; this one still runs
    worker.join(5)
    assert gc.isenabled()


def test_the_cli_restores_the_collector(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.weval.yml"
    path.write_text("title: t\nmodels: [openai:gpt-4o-mini]\n---\n- prompt: hi\n  should: [greets]\n")
    assert main(["check", str(path)]) == 0
    assert gc.isenabled()


def test_the_evalspec_process_leaves_the_collector_off_until_it_exits(tmp_path: Path) -> None:
    # Its entry point passes no argv: turned back on as the command returns, the collector would pass over
    # everything still alive once more just before the process ends.
    import subprocess
    import sys

    path = tmp_path / "x.weval.yml"
    path.write_text("title: t\nmodels: [openai:gpt-4o-mini]\n---\n- prompt: hi\n  should: [greets]\n")
    script = ("import gc, sys\nfrom evalspec.cli import main\nsys.argv = ['evalspec', 'check', sys.argv[1]]\n"
              "code = main()\nprint(code, gc.isenabled())")
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["0", "False"], done.stderr


def test_the_server_thaws_what_it_froze_when_documents_close() -> None:
    async def scenario() -> tuple[int, int]:
        docs = Documents(lambda state: None, lambda state, exc: None, debounce_s=0.0)
        docs.open("file:///tmp/x.weval.yml", 1, "title: t\n---\n- prompt: hi\n")
        await docs.settled("file:///tmp/x.weval.yml")
        frozen = gc.get_freeze_count()
        docs.close("file:///tmp/x.weval.yml")
        docs.shutdown()
        return frozen, gc.get_freeze_count()

    frozen, after = asyncio.run(scenario())
    assert frozen > 0  # the analysed tree is kept out of collection passes while the file is open
    assert after == 0
