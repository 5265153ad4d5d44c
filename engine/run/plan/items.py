"""The items of an eval file that a run can select, and a stable fingerprint of each one's text.

A fingerprint is a short hash of the lines an item covers. The runner writes them into its journal's
header, and the editor compares them with the open text: a result is "older than the text" when the
item's lines changed since the run, in this editor session or in a later one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ...detect import FileKind
from ...findings import Span
from ...text_lines import Lines

CHARS_PER_TOKEN = 4  # an item's text in tokens, roughly: good enough for a plan's counts (both formats')


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
    tests = analysis.suite.tests
    outline = getattr(tests, "outline", None)  # a big suite's store: each test's id, span and file, none decoded
    for test_id, span, source_path in outline() if outline is not None else (
            (t.id, t.span, t.source_path) for t in tests):
        if source_path is None or here is None or source_path == here:
            yield "test", test_id, span


def fingerprint(lines: list[str], span: Span) -> str:
    """The lines the item covers, whole: an edit anywhere in them changes the item's meaning or id.
    blake2b, not hash(): the value must be the same in the next process (the journal keeps it)."""
    return _digest(lines, span).hex()


def _digest(lines: list[str], span: Span) -> bytes:
    if type(lines) is Lines:  # a big file's: one slice of its text
        text = lines.joined(span.start_line, min(span.end_line + 1, len(lines)))
    else:
        text = "\n".join(lines[span.start_line:span.end_line + 1])
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=_SIZE).digest()


_SIZE = 8


def fingerprints(analysis: Any) -> dict[str, str]:
    """Item id → fingerprint, for every item written in the file."""
    lines: list[str] = analysis.parsed.lines
    return {item_id: fingerprint(lines, span) for _, item_id, span in entries(analysis)}


def planned_fingerprints(analysis: Any, keep: Container[str]) -> Fingerprints:
    """`{k: v for k, v in fingerprints(analysis).items() if k in keep}`, as a Fingerprints."""
    lines: list[str] = analysis.parsed.lines
    return Fingerprints((item_id, _digest(lines, span)) for _, item_id, span in entries(analysis) if item_id in keep)


def prompt_fingerprints(analysis: Any, ids: list[str], lines: Sequence[int], keep: Container[str]) -> Fingerprints:
    """`planned_fingerprints` from the ids of a blueprint's prompts and their first and last lines (two
    numbers a prompt, in `lines`), its prompts not read again."""
    text_lines: list[str] = analysis.parsed.lines
    return Fingerprints((item_id, _digest(text_lines, Span(lines[2 * k], 0, lines[2 * k + 1], 0)))
                        for k, item_id in enumerate(ids) if item_id in keep)


class Fingerprints(Mapping[str, str]):
    """Item id → fingerprint, read as the dict of them (the same keys, order and values), kept in 8 bytes
    an item beside the id (the run keeps them for its journal's header; as a dict of hexadecimal strings
    they were ~110 bytes an item, 11 MB at 100,000 prompts)."""

    __slots__ = ("_digests", "_ids", "_index")

    def __init__(self, pairs: Iterable[tuple[str, bytes]]) -> None:
        ids: list[str] = []
        digests = bytearray()
        # While they are read: a repeated id keeps its place, the later value. A set, not a dict of places:
        # no int object an item, left behind in the heap of a resumed run that read a journal's header.
        seen: set[str] = set()
        for item_id, digest in pairs:
            if item_id not in seen:
                seen.add(item_id)
                ids.append(item_id)
                digests += digest
            else:
                k = ids.index(item_id)
                digests[k * _SIZE:(k + 1) * _SIZE] = digest
        self._ids = ids
        self._digests = bytes(digests)
        self._index: dict[str, int] | None = None  # made on the first lookup by id (a resumed run's)

    def __getitem__(self, item_id: str) -> str:
        if self._index is None:
            self._index = {i: k for k, i in enumerate(self._ids)}
        k = self._index[item_id]
        return self._digests[k * _SIZE:(k + 1) * _SIZE].hex()

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def same(self, other: Fingerprints) -> bool:
        """The same ids in the same order, with the same fingerprints."""
        return self._digests == other._digests and self._ids == other._ids

    def changed(self, since: Mapping[str, str]) -> set[str]:
        """The ids of both whose fingerprints differ: `{i for i, fp in self.items() if i in since and
        since[i] != fp}`; two runs of the same items compare without an index of either (a dict by id was
        ~6 MB kept to the end of a resumed 100,000-prompt run)."""
        if isinstance(since, Fingerprints) and since._ids == self._ids:
            a, b = self._digests, since._digests
            if a == b:
                return set()
            return {i for k, i in enumerate(self._ids) if a[k * _SIZE:(k + 1) * _SIZE] != b[k * _SIZE:(k + 1) * _SIZE]}
        return {i for i, fp in self.items() if i in since and since[i] != fp}

    def items(self) -> Iterator[tuple[str, str]]:  # type: ignore[override]  # one pass, no lookups by id
        digests = self._digests
        for k, item_id in enumerate(self._ids):
            yield item_id, digests[k * _SIZE:(k + 1) * _SIZE].hex()
