"""How a finding is printed: a `path:line:col: severity[code]: message` line, a GitHub Actions
annotation, or a JSON object. `evalspec check` prints all findings this way; `evalspec run` prints the
errors that stop a run the same way."""

from __future__ import annotations

from pathlib import Path

from .analysis import Analysis
from .findings import Finding


def display_path(a: Analysis, f: Finding) -> str:
    """The finding's file (an external tests file, else the analysed one), relative to the working folder
    when it is inside it."""
    path = Path(f.path) if f.path else a.path
    if path is None:
        return "<stdin>"
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def format_finding(a: Analysis, f: Finding, *, github: bool = False) -> str:
    path = display_path(a, f)
    line, col = f.span.start_line + 1, f.span.start_col + 1
    if github:
        level = {"error": "error", "warning": "warning"}.get(str(f.severity), "notice")
        message = f"[{f.code}] {f.message}".replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return (f"::{level} file={path},line={line},col={col},endLine={f.span.end_line + 1},"
                f"endColumn={f.span.end_col + 1},title=evalspec {f.code}::{message}")
    return f"{path}:{line}:{col}: {f.severity}[{f.code}]: {f.message}"


def finding_json(a: Analysis, f: Finding) -> dict[str, object]:
    return {"path": display_path(a, f), "line": f.span.start_line + 1, "column": f.span.start_col + 1,
            "end_line": f.span.end_line + 1, "end_column": f.span.end_col + 1, "severity": str(f.severity),
            "code": f.code, "message": f.message}
