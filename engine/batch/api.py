"""What every provider batch API client offers the run, as plain data and one protocol.

A batch client is made from the run's chat provider (`batch_api_for`), so it sends the same key to the
same base URL with the same headers, and a batch line holds exactly the body the chat provider would
POST (`provider.body(req)`): the answers are the ones an interactive run gets. A batch's requests reach
`upload` and `create` as a PartFile (batch/part_file.py: encoded on disk, streamed out), or as a sequence
of encoded requests, which the client writes to one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .part_file import Framing, PartFile

# The providers' documented limits per batch. Splitting keeps every batch below both.
OPENAI_MAX_REQUESTS = 50_000
OPENAI_MAX_BYTES = 200 * 1024 * 1024
ANTHROPIC_MAX_REQUESTS = 100_000
ANTHROPIC_MAX_BYTES = 256 * 1024 * 1024
# Gemini: the input file may be 2 GB and no count is documented; evalspec keeps each under OpenAI's 200 MB
# and 50,000 requests (a batch that still ends soon, and a file that is sent again whole if it fails).
GOOGLE_MAX_REQUESTS = 50_000
GOOGLE_MAX_BYTES = 200 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    max_requests: int
    max_bytes: int

    def capped(self, max_requests: int | None = None, max_bytes: int | None = None) -> Limits:
        """These limits, lowered (never raised) by the run's settings."""
        return Limits(min(self.max_requests, max_requests or self.max_requests),
                      min(self.max_bytes, max_bytes or self.max_bytes))


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """A batch as the provider last described it."""

    id: str
    state: str  # the provider's own word: validating, in_progress, ended, …
    ended: bool  # nothing will change any more: results (if any) can be read
    counts: dict[str, int] = field(default_factory=dict)  # the provider's request_counts
    key: str | None = None  # the run's key in the batch's metadata (OpenAI keeps it; Anthropic has none)
    created_at: float | None = None  # Unix seconds
    output_file: str | None = None  # OpenAI
    error_file: str | None = None  # OpenAI
    results_url: str | None = None  # Anthropic
    # (Google: `output_file` is the batch's responses file, `key` its displayName.)
    detail: str | None = None  # why a batch failed as a whole (OpenAI `errors`)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "state": self.state, "ended": self.ended, "counts": self.counts}
        for name in ("output_file", "error_file", "results_url", "detail"):
            if (value := getattr(self, name)) is not None:
                out[name] = value
        return out

    def progress(self) -> str:
        """`in_progress 120/500 (3 failed)`: the state and how far it is."""
        c = self.counts
        total = c.get("total")
        if total is None:  # Anthropic counts by outcome
            total = sum(c.values())
            done = total - c.get("processing", 0)
            failed = c.get("errored", 0) + c.get("expired", 0) + c.get("canceled", 0)
        else:
            done = c.get("completed", 0) + c.get("failed", 0)
            failed = c.get("failed", 0)
        text = f"{self.state} {done}/{total}"
        return f"{text} ({failed} failed)" if failed else text


@dataclass(frozen=True, slots=True)
class ItemResult:
    """One request's outcome: the answer body exactly as the chat endpoint returns it, or why not."""

    custom_id: str
    body: dict[str, Any] | None
    error: str | None = None


class BatchAPI(Protocol):
    name: str  # the provider's name, for messages
    api: str  # "openai" | "anthropic" | "google"
    limits: Limits
    framing: Framing  # how the encoded requests are joined in the body sent (a JSONL file, a JSON array)
    # Whether a batch keeps no key of the run's (Anthropic: no metadata, no name), so each custom id
    # carries its part's tag instead, read back from an ended batch's results (`first_custom_id`).
    tagged: bool

    def encode(self, custom_id: str, body: dict[str, Any]) -> bytes:
        """One request as it is sent (a JSONL line, a `requests` item): what the limits count."""
        ...

    async def upload(self, key: str, requests: PartFile | Iterable[bytes]) -> str | None:
        """Send the requests' file, if the API takes one (OpenAI: the input file's id); None if not."""
        ...

    async def create(self, key: str, requests: PartFile | Iterable[bytes], file_id: str | None) -> BatchStatus: ...

    async def get(self, batch_id: str) -> BatchStatus: ...

    async def find(self, key: str, *, created_after: float, total: int,
                   taken: frozenset[str] = frozenset()) -> BatchStatus | None:
        """A batch this run created under `key` whose id it never learnt (killed while creating it)."""
        ...

    async def listed(self, created_after: float | None) -> list[BatchStatus]:
        """The batches the key can see, newest first, created after `created_after` (None: as many
        pages back as the client lists), each with the run's key where the API keeps one."""
        ...

    async def first_custom_id(self, status: BatchStatus) -> str | None:
        """The custom id of an ended batch's first result (None: it has none): which part it was."""
        ...

    def results(self, status: BatchStatus) -> AsyncIterator[ItemResult]: ...

    async def cancel(self, batch_id: str) -> BatchStatus: ...


def full(limits: Limits, count: int, size: int, n: int) -> bool:
    """Whether a batch of `count` requests and `size` bytes must end before a request of `n` bytes. A
    request bigger than the byte limit on its own gets a batch of its own (the provider then rejects that
    one, and it goes back to the interactive path)."""
    return count > 0 and (count >= limits.max_requests or size + n > limits.max_bytes)


def split(sizes: Sequence[int], limits: Limits, overhead: int = 0) -> list[tuple[int, int]]:
    """[start, end) ranges of consecutive requests, each within the request and byte limits (`full`;
    the batch stage applies the same rule as it encodes)."""
    parts: list[tuple[int, int]] = []
    start = 0
    size = overhead
    for i, n in enumerate(sizes):
        if full(limits, i - start, size, n):
            parts.append((start, i))
            start, size = i, overhead
        size += n
    if start < len(sizes):
        parts.append((start, len(sizes)))
    return parts
