"""What a results file holds, told from its first line: the report, `evalspec merge` and replay all ask.

A run database (`….run.db`) is told by SQLite's header and its run row. Results files and an earlier
evalspec's journals can be large, so only the first non-blank line is read; a compact Weval
comparison file is one long line, so callers that know a `.json` file is a comparison need not ask.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .jsonio import loads
from .run.journal.records import RunHeader

WEVAL_JOURNAL = "weval-journal"
AGENTV_JOURNAL = "agentv-journal"
AGENTV_RESULTS = "agentv-results"
COMPARISON = "comparison"
FIRST_LINE_MAX_BYTES = 64 << 20  # a journal's header holds every item's fingerprint: ~3.5 MB at 100,000


SQLITE_MAGIC = b"SQLite format 3\x00"


def _database_kind(path: Path) -> str:
    from .run.journal.run_store import read_header

    header = read_header(path, fingerprints=False)
    return {"agentv": AGENTV_JOURNAL, "weval": WEVAL_JOURNAL}.get(header.kind, "") if header is not None else ""


def sniff(path: Path) -> str:
    """One of the kinds above, or "" when the first line does not say (a pretty-printed comparison
    file, foreign data, an empty file, a first line past FIRST_LINE_MAX_BYTES). Raises OSError when the
    file cannot be read or is not a regular file (a FIFO is refused without waiting for a writer)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, f"{path} is not a regular file")
        if f.read(16) == SQLITE_MAGIC:  # a run database (run/journal/database.py): its run row says which
            return _database_kind(path)
        f.seek(0)
        first = b""
        seen = 0
        # Bounded: results from elsewhere may hold 3 GB of zeros without a newline (a few MB in a git
        # clone), which `for line in f` read whole into memory before anything looked at it.
        while line := f.readline(FIRST_LINE_MAX_BYTES + 1):
            seen += len(line)
            if seen > FIRST_LINE_MAX_BYTES:
                return ""
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
