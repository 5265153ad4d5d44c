"""A scriptable fake model provider on a real loopback socket, for tests that must not reach the internet.

It speaks just enough HTTP/1.1 (keep-alive, Content-Length bodies) to answer the real clients:

    POST …/chat/completions          OpenAI (and Azure, OpenRouter, Ollama…) chat completion
    POST …/messages                  Anthropic message
    POST …/models/<m>:generateContent Google Gemini
    POST …/embeddings                OpenAI embeddings (8 deterministic floats per input)

By default it answers "ECHO: <last user message>" (or `answer` when set). `Reply.ok(text, tool_calls=[(name,
args), …])` answers with tool calls too, in each API's own shape (OpenAI `message.tool_calls` with JSON
`arguments`, Anthropic `tool_use` blocks, Gemini `functionCall` parts). Tests script the next requests
with `then(...)`, in order: a 429 with Retry-After, a 500, a hang longer than the client's timeout,
malformed JSON, any raw reply. Every request is recorded (method, path, query, headers, body, time).

It runs its own event loop in a daemon thread, so it works the same under sync and async tests:

    with FakeProvider() as fake:
        fake.then(Reply.rate_limited(0.2), Reply.ok())
        ... point a client at fake.url("/v1") ...
        assert fake.requests[0].headers["authorization"] == "Bearer sk-test"
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import email.utils
import gzip
import hashlib
import json
import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Recorded:
    method: str
    path: str  # without the query string
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: bytes
    at: float  # time.monotonic() when the request was complete

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Reply:
    """What to do with one request. Build with the class methods."""

    action: str = "answer"  # answer | raw | hang | close
    status: int = 200
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    text: str | None = None  # for "answer": overrides the answer text
    seconds: float = 0.0  # for "hang", and a delay before any other reply
    gzip: bool = False
    tool_calls: list[tuple[str, Any]] | None = None  # for "answer": (tool name, arguments) in order

    @classmethod
    def ok(cls, text: str | None = None, *, gzip: bool = False, delay: float = 0.0,
           tool_calls: list[tuple[str, Any]] | None = None) -> Reply:
        return cls("answer", text=text, gzip=gzip, seconds=delay, tool_calls=tool_calls)

    @classmethod
    def raw(cls, status: int, body: bytes | str | dict[str, Any] | list[Any] = b"", **headers: str) -> Reply:
        if isinstance(body, dict | list):
            body = json.dumps(body).encode()
            headers.setdefault("content-type", "application/json")
        elif isinstance(body, str):
            body = body.encode()
        return cls("raw", status=status, body=body, headers=headers)

    @classmethod
    def rate_limited(cls, retry_after: float | str | None = None, *, retry_after_ms: float | None = None) -> Reply:
        headers: dict[str, str] = {"content-type": "application/json"}
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        if retry_after_ms is not None:
            headers["retry-after-ms"] = str(retry_after_ms)
        body = json.dumps({"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}).encode()
        return cls("raw", status=429, body=body, headers=headers)

    @classmethod
    def server_error(cls, status: int = 500, message: str = "internal error") -> Reply:
        return cls.raw(status, {"error": {"message": message, "type": "server_error"}})

    @classmethod
    def error(cls, status: int, message: str) -> Reply:
        return cls.raw(status, {"error": {"message": message, "type": "invalid_request_error"}})

    @classmethod
    def malformed(cls, body: bytes = b'{"choices": [{"message": {"content": "cut sh') -> Reply:
        return cls("raw", status=200, body=body, headers={"content-type": "application/json"})

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Reply:
        """Read the request, then answer nothing for `seconds` (then close the connection)."""
        return cls("hang", seconds=seconds)

    @classmethod
    def close(cls) -> Reply:
        """Close the connection without answering."""
        return cls("close")


def last_user_text(req: dict[str, Any]) -> str:
    for m in reversed(req.get("messages") or []):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else json.dumps(c)
    for c in reversed(req.get("contents") or []):  # Google
        if c.get("role") == "user":
            return "".join(p.get("text", "") for p in c.get("parts") or [])
    return ""


class FakeProvider:
    def __init__(self, answer: str | None = None) -> None:
        self.answer = answer  # None: "ECHO: <last user message>"
        self.latency = 0.0  # seconds before every unscripted answer
        self.requests: list[Recorded] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> FakeProvider:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            self._server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="fakeprovider", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake provider did not start")
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return

        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for t in list(self._tasks):
                t.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            loop.stop()

        asyncio.run_coroutine_threadsafe(shutdown(), loop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop = None

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting and inspection ------------------------------------------------------------------
    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "") -> str:
        return self.base + path

    def then(self, *replies: Reply) -> FakeProvider:
        """Queue replies for the next requests, in order; once used up, requests get normal answers."""
        with self._lock:
            self._script.extend(replies)
        return self

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()

    def idle(self, timeout: float = 10.0) -> bool:
        """Whether every connection has ended within `timeout`: what a killed client sent before it died
        has been read (and recorded) by then, so a `reset()` after this does not see it arrive late."""
        end = time.monotonic() + timeout
        while self._tasks:
            if time.monotonic() > end:
                return False
            time.sleep(0.01)
        return True

    @property
    def count(self) -> int:
        return len(self.requests)

    # -- serving -----------------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                n = int(headers.get("content-length") or 0)
                body = await reader.readexactly(n) if n else b""
                parts = urlsplit(target)
                rec = Recorded(method, parts.path, parse_qs(parts.query), headers, body, time.monotonic())
                with self._lock:
                    self.requests.append(rec)
                    reply = self._script.popleft() if self._script else Reply(seconds=self.latency)
                if reply.action == "close":
                    return
                if reply.action == "hang":
                    await asyncio.sleep(reply.seconds)
                    return
                if reply.seconds:
                    await asyncio.sleep(reply.seconds)
                status, payload, extra = self._respond(rec, reply)
                out_headers = {"content-type": "application/json", **extra}
                if reply.gzip:
                    payload = gzip.compress(payload)
                    out_headers["content-encoding"] = "gzip"
                head_out = f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}\r\n"
                head_out += "".join(f"{k}: {v}\r\n" for k, v in out_headers.items())
                head_out += f"content-length: {len(payload)}\r\n\r\n"
                writer.write(head_out.encode("latin-1") + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError, ValueError):
            pass
        finally:
            self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    def _respond(self, rec: Recorded, reply: Reply) -> tuple[int, bytes, dict[str, str]]:
        if reply.action == "raw":
            return reply.status, reply.body or b"", dict(reply.headers)
        try:
            req = json.loads(rec.body or b"{}")
        except ValueError:
            return 400, b'{"error":{"message":"body is not JSON"}}', {}
        text = reply.text if reply.text is not None else self.answer
        if text is None:
            text = "ECHO: " + last_user_text(req)
        model = req.get("model", "fake-model")
        path = rec.path
        if path.endswith("/embeddings"):
            inp = req.get("input")
            items = inp if isinstance(inp, list) else [inp]
            data = [
                {"object": "embedding", "index": i,
                 "embedding": [b / 255 for b in hashlib.sha256(str(s).encode()).digest()[:8]]}
                for i, s in enumerate(items)
            ]
            # Reversed on purpose: clients must order by `index`, not by position.
            tokens = sum(len(str(s).split()) for s in items)  # a word a token: checkable by hand
            out = {"object": "list", "data": data[::-1], "model": model,
                   "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
        elif path.endswith("/chat/completions"):
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if reply.tool_calls:
                message["content"] = text or None  # OpenAI sends null content beside tool calls
                message["tool_calls"] = [
                    {"id": f"call_{i}", "type": "function",
                     "function": {"name": name, "arguments": json.dumps(args)}}
                    for i, (name, args) in enumerate(reply.tool_calls)]
            out = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
                   "choices": [{"index": 0, "message": message,
                                "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
                   "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}
        elif path.endswith("/messages"):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text or not reply.tool_calls else []
            blocks += [{"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}
                       for i, (name, args) in enumerate(reply.tool_calls or [])]
            out = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                   "content": blocks, "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
                   "usage": {"input_tokens": 12, "output_tokens": 8}}
        elif path.endswith(":generateContent"):
            model = path.rsplit("/", 1)[-1].removesuffix(":generateContent")
            parts: list[dict[str, Any]] = [{"text": text}]
            parts += [{"functionCall": {"name": name, "args": args}} for name, args in reply.tool_calls or []]
            out = {"candidates": [{"content": {"role": "model", "parts": parts},
                                   "finishReason": "STOP", "index": 0}],
                   "usageMetadata": {"promptTokenCount": 13, "candidatesTokenCount": 9, "totalTokenCount": 22},
                   "modelVersion": model}
        else:
            return 404, json.dumps({"error": {"message": f"no route {path}"}}).encode(), {}
        return 200, json.dumps(out).encode(), {}


class RateLimitedFake(FakeProvider):
    """A provider with a quota, as OpenAI and Anthropic keep it: a bucket of `limit` requests that refills
    continuously, `limit` per `window` seconds. Each answer carries rate-limit headers in `style`
    "openai" (x-ratelimit-{limit,remaining,reset}-requests, reset as a Go duration: time until full) or
    "anthropic" (anthropic-ratelimit-requests-{limit,remaining,reset}, reset as an RFC 3339 time); a
    request finding the bucket empty gets `status` (429; 529 for Anthropic's overloaded) with a
    Retry-After (time until one request is free) in the form `retry`: "seconds" (whole seconds, rounded
    up), "ms" (retry-after-ms too), "date" (an HTTP date) or "none". `always`: every request is refused.
    Records when each request was being answered, to measure the concurrency the server saw."""

    def __init__(self, limit: int, window: float = 1.0, *, style: str = "openai", status: int = 429,
                 retry: str = "ms", always: bool = False, latency: float = 0.0) -> None:
        super().__init__()
        self.limit, self.window, self.style, self.status = limit, window, style, status
        self.retry, self.always, self.latency = retry, always, latency
        self.spans: list[tuple[float, float, int]] = []  # (received, answered, status)
        self._tokens = float(limit)
        self._last: float | None = None

    @property
    def rate(self) -> float:
        return self.limit / self.window

    @property
    def refused(self) -> int:
        return sum(1 for *_, status in self.spans if status != 200)

    def max_in_flight(self, after: float = 0.0) -> int:
        """The most requests being answered at once, among those received at `after` or later."""
        spans = [sp for sp in self.spans if sp[0] >= after]
        edges = sorted([(a, 1) for a, _, _ in spans] + [(b, -1) for _, b, _ in spans])
        level = best = 0
        for _, step in edges:
            level += step
            best = max(best, level)
        return best

    def _respond(self, rec: Recorded, reply: Reply) -> tuple[int, bytes, dict[str, str]]:
        if reply.action != "answer":
            return super()._respond(rec, reply)
        now = time.monotonic()
        with self._lock:
            if self._last is not None:
                self._tokens = min(float(self.limit), self._tokens + (now - self._last) * self.rate)
            self._last = now
            ok = not self.always and self._tokens >= 1.0
            if ok:
                self._tokens -= 1.0
            tokens = self._tokens
            self.spans.append((rec.at, now, 200 if ok else self.status))
        headers = self._quota_headers(int(tokens), (self.limit - tokens) / self.rate)
        if not ok:
            headers.update(self._retry_headers(max(0.001, (1.0 - tokens) / self.rate)))
            body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limit reached"}}
            return self.status, json.dumps(body).encode(), headers
        status, payload, extra = super()._respond(rec, reply)
        return status, payload, {**extra, **headers}

    def _quota_headers(self, remaining: int, reset: float) -> dict[str, str]:
        if self.style == "anthropic":
            when = datetime.datetime.fromtimestamp(time.time() + reset, datetime.UTC)
            return {"anthropic-ratelimit-requests-limit": str(self.limit),
                    "anthropic-ratelimit-requests-remaining": str(remaining),
                    "anthropic-ratelimit-requests-reset": when.isoformat(timespec="milliseconds")
                    .replace("+00:00", "Z")}
        return {"x-ratelimit-limit-requests": str(self.limit), "x-ratelimit-remaining-requests": str(remaining),
                "x-ratelimit-reset-requests": f"{max(1, round(reset * 1000))}ms"}

    def _retry_headers(self, wait: float) -> dict[str, str]:
        if self.retry == "seconds":
            return {"retry-after": str(max(1, math.ceil(wait)))}
        if self.retry == "ms":
            return {"retry-after": str(max(1, math.ceil(wait))), "retry-after-ms": str(max(1, round(wait * 1000)))}
        if self.retry == "date":
            return {"retry-after": email.utils.formatdate(time.time() + wait + 1, usegmt=True)}
        return {}


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
            503: "Service Unavailable", 529: "Overloaded"}
