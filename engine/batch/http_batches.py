"""What the OpenAI and Anthropic batch clients share: the chat provider's headers and timeout, reading
and cancelling one batch, and paging through the list of batches (newest first) to find one whose id
the journal never got. Each client says how its batches read (`_status`) and when one was created.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

import httpx

from ..providers.base import ProviderError
from .api import BatchStatus
from .wire import request_json, segment

LIST_PAGES = 20  # pages of 100 listed when looking for a batch whose id was never journaled


async def statuses_listed(listed: AsyncGenerator[dict[str, Any], None],
                          status_of: Callable[[dict[str, Any]], BatchStatus],
                          created_after: float | None) -> list[BatchStatus]:
    """The listed items that read as batches, created after `created_after` (a minute's leeway for clock
    skew; None, or a batch without a time: kept). Every provider's `listed` ends here."""
    out: list[BatchStatus] = []
    async with contextlib.aclosing(listed) as items:
        async for item in items:
            try:
                status = status_of(item)
            except ProviderError:
                continue
            if created_after is None or status.created_at is None or status.created_at >= created_after - 60:
                out.append(status)
    return out


class HttpBatches:
    tagged = False  # whether the custom ids carry the part's tag (api.BatchAPI.tagged)
    provider: Any  # the chat provider whose client, key and base URL the batches use
    name: str
    batches_url: str
    list_cursor = "after"  # the list's paging parameter

    @property
    def _headers(self) -> Mapping[str, str]:
        return self.provider.request_headers

    @property
    def _timeout(self) -> float:
        return float(self.provider.timeout)

    def _status(self, data: dict[str, Any]) -> BatchStatus:
        raise NotImplementedError

    def _created(self, item: dict[str, Any]) -> float | None:
        """When a listed batch was created, in Unix seconds."""
        raise NotImplementedError

    async def get(self, batch_id: str) -> BatchStatus:
        data = await request_json(self.provider.client, self.name, "GET", f"{self.batches_url}/{segment(batch_id)}",
                                  self._headers, self._timeout)
        return self._status(data)

    async def cancel(self, batch_id: str) -> BatchStatus:
        data = await request_json(self.provider.client, self.name, "POST",
                                  f"{self.batches_url}/{segment(batch_id)}/cancel", self._headers, self._timeout)
        return self._status(data)

    async def listed(self, created_after: float | None) -> list[BatchStatus]:
        """The batches the key can see, newest first, created after `created_after` (None: as far as
        LIST_PAGES pages go). A listed item that does not read as a batch is left out."""
        return await statuses_listed(self._listed(created_after), self._status, created_after)

    async def _listed(self, created_after: float | None) -> AsyncGenerator[dict[str, Any], None]:
        """The listed batches, newest first, up to the first page older than the plan (a batch made
        for it cannot be on a later page) or LIST_PAGES pages."""
        after: str | None = None
        for _ in range(LIST_PAGES):
            params = {"limit": "100", **({self.list_cursor: after} if after else {})}
            data = await request_json(self.provider.client, self.name, "GET",
                                      httpx.URL(self.batches_url, params=params), self._headers, self._timeout)
            items = data.get("data")
            if not isinstance(items, list) or not items:
                return
            for item in items:
                if isinstance(item, dict):
                    yield item
            last = items[-1] if isinstance(items[-1], dict) else {}
            oldest = self._created(last)
            if not data.get("has_more") or (oldest is not None and created_after is not None
                                            and oldest < created_after - 60):
                return
            after = str(data.get("last_id") or last.get("id") or "")
