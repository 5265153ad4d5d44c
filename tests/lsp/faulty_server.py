"""evalspec-lsp with features monkeypatched to fail, to show that failures do not take it down.

- hover raises on every request, after computing for 40 s (passing the engine's yield points) in a
  text that contains SPIN;
- analysing a text that contains EXPLODE raises;
- analysing a text that contains SLOW takes 1.5 s (to cancel a request that waits for it);
- analysing a text that contains HANG takes 40 s (longer than any test waits: an analysis stuck on
  pathological text);
- analysing a text that contains STALL holds the interpreter lock in one C call for seconds
  (after creating `stall-started` in its working folder);
- analysing a text that contains BUSY computes for 40 s, holding the interpreter lock in long C calls
  and passing the engine's yield points in between, as a real analysis of a huge file does.
"""

from __future__ import annotations

import time
from pathlib import Path

from evalspec.yielding import yield_point
from evalspec_lsp import documents
from evalspec_lsp.features import hover
from evalspec_lsp.main import main


def broken_hover(analysis, line, col):
    if "SPIN" in analysis.text:
        # A hover that computes for 40 s, passing the engine's yield points (a pathological spot)
        end = time.monotonic() + 40
        while time.monotonic() < end:
            yield_point()
            sum(range(300_000))
    raise RuntimeError("hover is broken on purpose")


class FaultyAnalyzer(documents.DocumentAnalyzer):
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
                yield_point()
                sum(range(300_000))  # one C call that keeps the interpreter lock (a few milliseconds)
        return super().analyze(text)


hover.engine_hover = broken_hover
documents.DocumentAnalyzer = FaultyAnalyzer

if __name__ == "__main__":
    raise SystemExit(main())
