"""What the OpenAI and Anthropic batch clients share: the chat provider's headers and timeout, reading
and cancelling one batch, and paging through the list of batches (newest first) to find one whose id
the journal never got. Each client says how its batches read (`_status`) and when one was created.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any

import httpx

from .api import BatchStatus
from .wire import request_json, segment

LIST_PAGES = 20  # pages of 100 listed when looking for a batch whose id was never journaled


class HttpBatches:
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

    async def _listed(self, created_after: float) -> AsyncGenerator[dict[str, Any], None]:
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
            if not data.get("has_more") or (oldest is not None and oldest < created_after - 60):
                return
            after = str(data.get("last_id") or last.get("id") or "")
