"""Results in, a report file out: the one function the CLI, `evalspec run` and the editors call.

    write_report([results], Path("report.html"))          # one run
    write_report([old, new], Path("report.html"))         # two runs: regressions and improvements first
    build_report([results], fmt="markdown")               # the text, for $GITHUB_STEP_SUMMARY
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..providers.redact import register_secret
from .diff import REGRESSION_THRESHOLD, RunDiff, diff_runs
from .model import RunResults
from .sources import Analyses, ResultsError, load_results


def register_env_secrets(env: Mapping[str, str] | None = None) -> None:
    """Values of the environment's key-like variables (`OPENAI_API_KEY`, `*_TOKEN`, …) are masked in every
    report, even when a results file written elsewhere holds one."""
    for name, value in (os.environ if env is None else env).items():
        upper = name.upper()
        if any(word in upper for word in ("KEY", "TOKEN", "SECRET", "PASSWORD")):
            register_secret(value)


def load_runs(paths: Sequence[str | Path], *, analyses: Analyses | None = None) -> list[RunResults]:
    """The runs of the results given. `analyses`: eval files already analysed (a run's own), used
    instead of reading them again."""
    if not paths:
        raise ResultsError("no results given")
    if len(paths) > 2:
        raise ResultsError(f"give one results file, or two to compare (OLD NEW); got {len(paths)}")
    return [load_results(p, analyses=analyses) for p in paths]


def build_report(paths: Sequence[str | Path], *, fmt: str = "html", runs: list[RunResults] | None = None,
                 analyses: Analyses | None = None, threshold: float = REGRESSION_THRESHOLD) -> str:
    """The report's text. Raises ResultsError for a path that is not results evalspec can read."""
    return _build_report(paths, fmt=fmt, runs=runs, analyses=analyses, threshold=threshold)


def _runs(paths: Sequence[str | Path], runs: list[RunResults] | None, analyses: Analyses | None,
          threshold: float = REGRESSION_THRESHOLD) -> tuple[list[RunResults], RunDiff | None]:
    register_env_secrets()
    runs = runs if runs is not None else load_runs(paths, analyses=analyses)
    return runs, diff_runs(runs[0], runs[1], threshold) if len(runs) == 2 else None


def _build_report(paths: Sequence[str | Path], *, fmt: str, runs: list[RunResults] | None,
                  analyses: Analyses | None, threshold: float) -> str:
    runs, diff = _runs(paths, runs, analyses, threshold)
    if fmt in ("markdown", "markdown-text"):  # markdown-text: read as text (an editor), no HTML escapes
        from .markdown import render_markdown

        return render_markdown(runs, diff, html=fmt == "markdown")
    if fmt != "html":
        raise ValueError(f"unknown report format {fmt!r}")
    from .html import render_html

    return render_html(runs, diff)


def default_output(paths: Sequence[str | Path]) -> Path:
    """`report.html` beside the (newest) results."""
    last = Path(paths[-1])
    folder = last if last.is_dir() else last.parent
    return folder / "report.html"


def write_report(paths: Sequence[str | Path], output: Path | None = None, *, fmt: str = "html",
                 runs: list[RunResults] | None = None, analyses: Analyses | None = None,
                 threshold: float = REGRESSION_THRESHOLD) -> Path:
    """Write the report of one run (or the comparison of two) and return its path. `analyses`: eval
    files already analysed, by resolved path (`evalspec run` passes its own, so the file is not read
    and checked again); the rest are read from disk."""
    from ..run.write.files import write_atomic, write_stream

    out = output if output is not None else default_output(paths)
    if out.is_dir():
        out = out / ("report.md" if fmt == "markdown" else "report.html")
    if fmt == "html":  # written a piece at a time (a 100,000-cell page is tens of MB, and its encoded copy)
        from .html import html_pieces

        found, diff = _runs(paths, runs, analyses, threshold)
        write_stream(out, html_pieces(found, diff))
        return out
    text = build_report(paths, fmt=fmt, runs=runs, analyses=analyses, threshold=threshold)
    write_atomic(out, text.encode("utf-8"))
    return out
