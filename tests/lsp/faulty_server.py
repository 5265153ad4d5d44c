"""evalspec-lsp whose engine workers have features monkeypatched to fail, to show that failures do
not take the server down (the LSP process is the real one; its workers run this file with --worker).

- hover raises on every request, after computing for 40 s in a text that contains SPIN;
- analysing a text that contains EXPLODE raises;
- analysing a text that contains SLOW takes 1.5 s (to cancel a request that waits for it);
- analysing a text that contains HANG takes 40 s (longer than any test waits: an analysis stuck on
  pathological text);
- analysing a text that contains STALL holds the interpreter in one C call for seconds (after
  creating `stall-started` in its working folder);
- analysing a text that contains BUSY computes for 40 s;
- analysing a text that contains CRASH ends the worker process at once (as a segfault would).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from evalspec.incremental import DocumentAnalyzer


def broken_hover(analysis, line, col):
    if "SPIN" in analysis.text:
        end = time.monotonic() + 40
        while time.monotonic() < end:
            sum(range(300_000))
    raise RuntimeError("hover is broken on purpose")


class FaultyAnalyzer(DocumentAnalyzer):
    def analyze(self, text):
        if "EXPLODE" in text:
            raise RuntimeError("analysis is broken on purpose")
        if "SLOW" in text:
            time.sleep(1.5)
        if "HANG" in text:
            time.sleep(40)
        if "STALL" in text:
            Path("stall-started").touch()  # in the server's folder: the test knows the stall has begun
            sum(range(250_000_000))
        if "BUSY" in text:
            end = time.monotonic() + 40
            while time.monotonic() < end:
                sum(range(300_000))
        if "CRASH" in text:
            os._exit(70)
        return super().analyze(text)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        import evalspec.ide.hover
        import evalspec.ide.worker
        from evalspec_lsp import worker

        evalspec.ide.hover.hover = broken_hover
        evalspec.ide.worker.DocumentAnalyzer = FaultyAnalyzer  # type: ignore[misc]
        raise SystemExit(worker.main(sys.argv[2:]))
    from evalspec_lsp.main import main

    raise SystemExit(main(worker=[sys.executable, __file__, "--worker", "WARNING", ""]))
