"""Journals of evalspec before the run database (`<run label>.journal.jsonl`): read, never written.

They are read for one release, so that a run interrupted before the upgrade still resumes and its
results still show: `--resume` of a run that has such a journal and no database copies its records into
a new database (journal/run_store.py, `open_journal`) and renames the journal `….journal.jsonl.imported`;
a report, an editor's run history and `--replay` read one as it is (`load`, `read_header`, `records`).
The JSONL form of each record is in journal/records.py (`to_json` / `decode`). To be removed in the
release after next.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...appendlog import read_lines, read_records
from ...jsonio import loads
from ...own_files import open_own
from .records import Record, RunHeader, decode

SUFFIX = ".journal.jsonl"


def records(path: Path, *kinds: type[Record]) -> Iterator[Record]:
    """The journal's records in order; only those of `kinds` when given (the others are not decoded).
    A line cut short by a kill, a line that does not read as its record, and a record type this
    evalspec does not know are skipped."""
    tags = {kind.TAG for kind in kinds}
    keep = None
    if tags:
        # The writer puts a record's tag first: a line of another kind is not even parsed (a report reading
        # the answers' usage skipped the header only after parsing its fingerprints, ~16 MB at 100,000 prompts)
        wanted = tuple(b'{"t":"' + tag.encode() + b'"' for tag in tags)
        keep = lambda line: line.startswith(wanted) or not line.startswith(b'{"t":"')  # noqa: E731
    for rec in read_records(path, keep):
        try:
            if tags and rec.get("t") not in tags:
                continue
            record = decode(rec)
        except (KeyError, TypeError, ValueError):
            continue
        if record is not None:
            yield record


def load_into(path: Path, state: Any) -> None:
    """The journal's records taken into `state` (a run_store.JournalState), a record at a time."""
    # Batch mode's records are read by run/generate/batch_journal.py, not kept in the state: a batch plan's
    # line holds up to 100,000 items (a million in a 100,000-prompt judged run), not even parsed here.
    batch = b'{"t":"batch'
    header = b'{"t":"' + RunHeader.TAG.encode() + b'"'
    for line in read_lines(path, lambda line: not line.startswith(batch)):
        try:
            if line.startswith(header):  # its fingerprints read one at a time (RunHeader.from_line)
                record: Record | None = RunHeader.from_line(line)
            else:
                rec = loads(line)
                record = decode(rec) if isinstance(rec, dict) else None
        except (KeyError, TypeError, ValueError):
            continue  # cut short by a kill, or a line that does not read as its record
        if record is not None:
            state.add(record)


# A header's line grows with the items run (their fingerprints: ~3.5 MB at 100,000 prompts); a first line
# longer than this is not a journal's.
HEADER_MAX_BYTES = 64 << 20


def read_header(path: Path, *, fingerprints: bool = True) -> RunHeader | None:
    """A journal's header, reading only its first line (an editor looks at every journal of a folder);
    None for a file that is not a journal. `fingerprints=False`: the header without them (`fp` empty),
    read without making them (a report wants the file's path, not 100,000 fingerprints)."""
    try:
        with os.fdopen(open_own(path, os.O_RDONLY), "rb") as f:  # not through a link, never a FIFO
            if not fingerprints:
                rec = _header_without_fingerprints(f)
            else:
                first = f.readline(HEADER_MAX_BYTES)
                if not first.endswith(b"\n") and len(first) >= HEADER_MAX_BYTES:
                    return None
                return RunHeader.from_line(first)  # its fingerprints read one at a time
    except (OSError, KeyError, TypeError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(rec, dict) or rec.get("t") != RunHeader.TAG:
        return None
    try:
        return RunHeader.from_json(rec)
    except (KeyError, TypeError, ValueError):
        return None


def _header_without_fingerprints(f: Any) -> dict[str, Any] | None:
    """The first line's object as `read_header` parses it, its "fp" entries read one at a time and dropped."""
    from ...json_stream import JsonReader

    reader = JsonReader(f)
    if reader.peek() != "{":
        return None
    rec: dict[str, Any] = {}
    for key in reader.entries():
        if key == "fp" and reader.peek() == "{":
            for _ in reader.entries():
                reader.value()
            rec[key] = {}
        else:
            rec[key] = reader.value()
    return rec


