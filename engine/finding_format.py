"""How a finding is printed: a `path:line:col: severity[code]: message` line, a GitHub Actions
annotation, or a JSON object. `evalspec check` prints all findings this way; `evalspec run` prints the
errors that stop a run the same way."""

from __future__ import annotations

from pathlib import Path

from .analysis import Analysis
from .findings import Finding
from .terminal_text import shown


def display_path(a: Analysis, f: Finding) -> str:
    """The finding's file (an external tests file, else the analysed one), relative to the working folder
    when it is inside it."""
    path = Path(f.path) if f.path else a.path
    if path is None:
        return "<stdin>"
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except (ValueError, OSError):  # OSError: the working folder was deleted under the command (getcwd fails)
        return str(path)


def format_finding(a: Analysis, f: Finding, *, github: bool = False) -> str:
    path = display_path(a, f)
    line, col = f.span.start_line + 1, f.span.start_col + 1
    if github:
        level = {"error": "error", "warning": "warning"}.get(str(f.severity), "notice")
        message = _github_data(f"[{f.code}] {f.message}")
        # A property's value escapes ',' and ':' too: a file named `x,title=…` must not add properties.
        return (f"::{level} file={_github_data(path).replace(':', '%3A').replace(',', '%2C')},line={line},col={col},"
                f"endLine={f.span.end_line + 1},endColumn={f.span.end_col + 1},title=evalspec {f.code}::{message}")
    # Keys, ids and paths quoted in a message come from the file: never a raw control character.
    return f"{shown(path)}:{line}:{col}: {f.severity}[{f.code}]: {shown(f.message)}"


def _github_data(text: str) -> str:
    """A workflow command's data (GitHub's escaping), with other control characters made visible."""
    return shown(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def finding_json(a: Analysis, f: Finding) -> dict[str, object]:
    return {"path": display_path(a, f), "line": f.span.start_line + 1, "column": f.span.start_col + 1,
            "end_line": f.span.end_line + 1, "end_column": f.span.end_col + 1, "severity": str(f.severity),
            "code": f.code, "message": f.message}
