"""AgentV's target proxy: how a code judge with `target` makes LLM calls of its own.

While such a judge runs, a small HTTP server listens on 127.0.0.1 (a free port), and the script finds
it in `AGENTV_TARGET_PROXY_URL` with a fresh bearer token in `AGENTV_TARGET_PROXY_TOKEN`. AgentV's
endpoints: `GET /info` → `{targetName, maxCalls, callCount, availableTargets}`; `POST /invoke`
`{question, systemPrompt?, target?}` → `{output: [{role: assistant, content}], rawText, tokenUsage}`;
`POST /invokeBatch` `{requests: [...]}` → `{responses: [...]}`. Calls go to the judge target through
the run's own limits; past `max_calls` (default 50) a call is refused with 429. The server is served
by aiohttp (already the providers' HTTP stack) and is closed as soon as the script ends.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_MAX_CALLS = 50

# (question, system prompt, target name or None) -> (answer text, input tokens, output tokens)
Invoke = Callable[[str, str | None, str | None], Awaitable[tuple[str, int, int]]]


@dataclass
class TargetProxy:
    invoke: Invoke
    target_name: str
    available: list[str]
    max_calls: int = DEFAULT_MAX_CALLS
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    token: str = field(default_factory=lambda: secrets.token_hex(32))
    url: str = ""
    _runner: Any = None

    async def start(self) -> dict[str, str]:
        """Start serving; the environment variables the script needs."""
        from aiohttp import web

        app = web.Application(middlewares=[self._auth], client_max_size=4 * 1024 * 1024)
        app.router.add_get("/info", self._info)
        app.router.add_post("/invoke", self._invoke)
        app.router.add_post("/invokeBatch", self._batch)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return {"AGENTV_TARGET_PROXY_URL": self.url, "AGENTV_TARGET_PROXY_TOKEN": self.token}

    async def close(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    def usage(self) -> dict[str, Any]:
        return {"call_count": self.calls, "max_calls": self.max_calls,
                "token_usage": {"input": self.input_tokens, "output": self.output_tokens}}

    # --- handlers ---------------------------------------------------------------------------------
    @property
    def _auth(self) -> Any:
        from aiohttp import web

        @web.middleware
        async def auth(request: Any, handler: Any) -> Any:
            if request.headers.get("Authorization") != f"Bearer {self.token}":
                return web.json_response({"error": "Unauthorized"}, status=401)
            return await handler(request)

        return auth

    async def _info(self, request: Any) -> Any:
        from aiohttp import web

        return web.json_response({"targetName": self.target_name, "maxCalls": self.max_calls,
                                  "callCount": self.calls, "availableTargets": self.available})

    async def _one(self, body: Any) -> tuple[int, dict[str, Any]]:
        from ...providers.base import ProviderError

        if not isinstance(body, dict) or not isinstance(body.get("question"), str) or not body["question"]:
            return 400, {"error": "Missing required field: question"}
        target = body.get("target")
        if target is not None and target not in self.available:
            return 400, {"error": f"Unknown target '{target}'. Available: {', '.join(self.available)}"}
        if self.calls >= self.max_calls:
            return 429, {"error": f"Max calls exceeded (limit: {self.max_calls})"}
        self.calls += 1
        system = body.get("systemPrompt") if isinstance(body.get("systemPrompt"), str) else None
        try:
            text, tokens_in, tokens_out = await self.invoke(body["question"], system,
                                                            target if isinstance(target, str) else None)
        except ProviderError as err:
            return 500, {"error": err.message}
        self.input_tokens += tokens_in
        self.output_tokens += tokens_out
        return 200, {"output": [{"role": "assistant", "content": text}], "rawText": text,
                     "tokenUsage": {"input": tokens_in, "output": tokens_out}}

    async def _read(self, request: Any) -> Any:
        try:
            return await request.json()
        except ValueError:
            return None

    async def _invoke(self, request: Any) -> Any:
        from aiohttp import web

        status, out = await self._one(await self._read(request))
        return web.json_response(out, status=status)

    async def _batch(self, request: Any) -> Any:
        from aiohttp import web

        body = await self._read(request)
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list):
            return web.json_response({"error": "Missing required field: requests (array)"}, status=400)
        if self.calls + len(requests) > self.max_calls:
            return web.json_response({"error": f"Batch would exceed max calls (current: {self.calls}, batch: "
                                               f"{len(requests)}, limit: {self.max_calls})"}, status=429)
        responses = []
        for item in requests:
            status, out = await self._one(item)
            responses.append(out if status == 200 else {"output": [], "rawText": f"Error: {out.get('error')}"})
        return web.json_response({"responses": responses})


def max_calls_of(target: Any) -> int:
    """`target: true` → the default; `target: {max_calls: n}` → n."""
    if isinstance(target, dict):
        n = target.get("max_calls")
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            return n
    return DEFAULT_MAX_CALLS
