"""What a results file holds, told from its first line: the report, `evalspec merge` and replay all ask.

Results files and journals can be large, so only the first non-blank line is read; a compact Weval
comparison file is one long line, so callers that know a `.json` file is a comparison need not ask.
"""

from __future__ import annotations

from pathlib import Path

from .jsonio import loads
from .run.journal.records import RunHeader

WEVAL_JOURNAL = "weval-journal"
AGENTV_JOURNAL = "agentv-journal"
AGENTV_RESULTS = "agentv-results"
COMPARISON = "comparison"


def sniff(path: Path) -> str:
    """One of the kinds above, or "" when the first line does not say (a pretty-printed comparison
    file, foreign data, an empty file). Raises OSError when the file cannot be read."""
    with path.open("rb") as f:
        first = b""
        for line in f:
            if line.strip():
                first = line
                break
    try:
        head = loads(first) if first else None
    except ValueError:
        return ""
    if not isinstance(head, dict):
        return ""
    if head.get("t") == RunHeader.TAG:  # the journal's header, read as the journal reads it
        try:
            kind = RunHeader.from_json(head).kind
        except (KeyError, TypeError, ValueError):
            return ""
        return {"agentv": AGENTV_JOURNAL, "weval": WEVAL_JOURNAL}.get(kind, "")
    if "test_id" in head:
        return AGENTV_RESULTS
    if "allFinalAssistantResponses" in head:
        return COMPARISON
    return ""
