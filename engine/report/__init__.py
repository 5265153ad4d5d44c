"""Results reports: one self-contained HTML file (or Markdown) from a run's results, and the diff of two runs.

    from evalspec.report import write_report
    path = write_report(["results/…_comparison.json"], Path("report.html"))   # one run
    path = write_report([old, new], Path("diff.html"))                        # two runs compared
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .build import build_report, write_report
    from .sources import ResultsError, load_results

__all__ = ["ResultsError", "build_report", "load_results", "write_report"]


def __getattr__(name: str) -> Any:
    """Loaded when first used: `evalspec --version` and the command line's parser (report/cli.py) import
    this package and must not pay for the report's reading and writing."""
    if name in ("build_report", "write_report"):
        from . import build

        return getattr(build, name)
    if name in ("ResultsError", "load_results"):
        from . import sources

        return getattr(sources, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
