"""Results reports: one self-contained HTML file (or Markdown) from a run's results, and the diff of two runs.

    from evalspec.report import write_report
    path = write_report(["results/…_comparison.json"], Path("report.html"))   # one run
    path = write_report([old, new], Path("diff.html"))                        # two runs compared
"""

from .build import build_report, write_report
from .sources import ResultsError, load_results

__all__ = ["ResultsError", "build_report", "load_results", "write_report"]
