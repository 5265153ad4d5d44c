"""The items of an eval file that a run can select, and a stable fingerprint of each one's text.

A fingerprint is a short hash of the lines an item covers. The runner writes them into its journal's
header, and the editor compares them with the open text: a result is "older than the text" when the
item's lines changed since the run, in this editor session or in a later one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from ...detect import FileKind
from ...findings import Span
from ...yielding import yield_point


def runnable(analysis: Any) -> bool:
    return (analysis.kind is FileKind.WEVAL and analysis.blueprint is not None) or (
        analysis.kind is FileKind.AGENTV and analysis.suite is not None)


def entries(analysis: Any) -> Iterator[tuple[str, str, Span]]:
    """(kind, id, whole span) of each prompt or test written in this file. Tests from an external
    tests file run with the suite but are not written here."""
    if not runnable(analysis):
        return
    if analysis.kind is FileKind.WEVAL:
        for prompt in analysis.blueprint.prompts:  # a prompt's span is its item's (its node's)
            yield "prompt", prompt.id, prompt.span
        return
    here = analysis.path
    for test in analysis.suite.tests:
        if test.source_path is None or here is None or test.source_path == here:
            yield "test", test.id, test.span


def fingerprint(lines: list[str], span: Span) -> str:
    """The lines the item covers, whole: an edit anywhere in them changes the item's meaning or id.
    blake2b, not hash(): the value must be the same in the next process (the journal keeps it)."""
    yield_point()  # once per item of a file: planning or its lenses give way to the editor's requests
    text = "\n".join(lines[span.start_line:span.end_line + 1])
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def fingerprints(analysis: Any) -> dict[str, str]:
    """Item id → fingerprint, for every item written in the file."""
    lines: list[str] = analysis.parsed.lines
    return {item_id: fingerprint(lines, span) for _, item_id, span in entries(analysis)}
