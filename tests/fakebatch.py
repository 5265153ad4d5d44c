"""A fake OpenAI + Anthropic + Gemini server with the batch APIs, on a real loopback socket (aiohttp's server).

It answers the three chat endpoints (`POST /v1/chat/completions`, `POST /v1/messages`,
`POST /v1beta/models/{model}:generateContent`) and the three batch APIs:

    OpenAI     POST /v1/files (multipart, purpose=batch)   GET /v1/files/{id}/content
               POST /v1/batches   GET /v1/batches[/{id}]   POST /v1/batches/{id}/cancel
    Anthropic  POST /v1/messages/batches   GET /v1/messages/batches[/{id}]   GET …/{id}/results
               POST /v1/messages/batches/{id}/cancel
    Gemini     POST /upload/v1beta/files (resumable: start → X-Goog-Upload-URL; upload, finalize)
               POST /v1beta/models/{model}:batchGenerateContent   GET /v1beta/batches[/{id}]
               POST /v1beta/batches/{id}:cancel   GET /download/v1beta/files/{id}:download?alt=media

The answer to a request is a function of its body alone (`answer_for`), the same whether it comes
through the chat endpoint or a batch, so an interactive and a batch run can be compared byte for byte.
A batch moves one state per poll (`polls_per_state` GETs each): validating → in_progress → finalizing →
completed for OpenAI, in_progress → ended for Anthropic, PENDING → RUNNING → SUCCEEDED for Gemini (an
expired or failed Gemini batch has no responses file); `hold` keeps every batch where it is, `hold_from = n` the n-th created and every later one.
Scripting: `failing_polls = n` answers the next n polls 503; `fail_when(text)` makes the items whose prompt contains `text` fail inside the batch (an
error line; the chat endpoint still answers them), `expire_next` / `fail_next` end the next batch
(`end_as[n]`: the n-th batch created)
expired (half its items done) or failed (none).

Every request body is counted by its content (`sent`): a request submitted twice — in two batches, or
in a batch and again interactively — shows as a count of 2 (`duplicates()`).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

KEY = "sk-batch-test"


def last_user_text(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else json.dumps(c)
    return ""


def request_hash(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


# A checklist item of AgentV's rubric prompt: `- [id] (REQUIRED) (weight: 2): outcome`
RUBRIC_LINE = r"^- \[(\S+?)\](?: \(REQUIRED\))?(?: \(weight: [^)]*\))?: (.+)$"


def is_agentv_judge(system: str) -> bool:
    """An AgentV judge's system prompt (AgentV's own: the output schema), or the agent judge's."""
    return any(s in system for s in ("You must respond with a single JSON object", "You are an expert evaluator.",
                                     "exacting evaluator"))


def agentv_verdict(text: str, rubric: bool) -> str:
    """An AgentV judge's JSON (run/score/agentv_judge.py's prompts): a rubric item is satisfied when the answer
    holds its outcome's last word; a freeform score is 1 when the answer holds "question", else 0.4."""
    answer = re.search(r"\[\[ ## answer ## \]\]\n(.*?)(?:\n\n\[\[ ## |\Z)", text, re.S)
    judged = answer.group(1) if answer is not None else text
    if rubric:
        checks = [{"id": cid, "satisfied": outcome.split()[-1] in judged, "reasoning": f"looked for {outcome.split()[-1]}"}
                  for cid, outcome in re.findall(RUBRIC_LINE, text, re.M)]
        return json.dumps({"checks": checks, "overall_reasoning": "checked each item"})
    score = 1.0 if "question" in judged else 0.4
    return json.dumps({"score": score, "hits": ["read it"], "misses": [] if score == 1 else ["no question"],
                       "reasoning": f"scored {score}"})


def answer_for(body: dict[str, Any]) -> str:
    """A function of the request alone. A judge's request (it holds a <CRITERION>) gets a verdict: met
    when the answer under judgement holds the criterion's last word; an AgentV judge's, its JSON; a
    key-point extraction (it holds an <IDEAL>), a key point per sentence of the ideal and "answers
    concisely" (met by no answer)."""
    text = last_user_text(body)
    system = json.dumps(body.get("system") or [m for m in body.get("messages") or [] if m.get("role") == "system"])
    if is_agentv_judge(system):
        return agentv_verdict(text, rubric="rubric item" in system)
    ideal = re.search(r"<IDEAL>\n(.*?)\n</IDEAL>", text, re.S)
    if ideal is not None:  # a Weval key-point extraction: a point per sentence of the ideal, and one more
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", ideal.group(1)) if s.strip()]
        return "".join(f"<key_point>{s.rstrip('.!?')}</key_point>\n" for s in [*sentences, "answers concisely"])
    criterion = re.search(r"<CRITERION>\n(.*?)\n</CRITERION>", text, re.S)
    if criterion is not None:
        word = criterion.group(1).split()[-1]
        judged = re.search(r"<TEXT>\n(.*?)\n</TEXT>", text, re.S)
        met = judged is not None and word in judged.group(1)
        return (f"<reflection>Looked for {word}.</reflection>\n"
                f"<classification>{'CLASS_EXACT' if met else 'CLASS_UNMET'}</classification>")
    return f"Answer ({body.get('model')}) to: {text}"


def google_as_chat(body: dict[str, Any], model: str) -> dict[str, Any]:
    """A generateContent body as the chat shape answer_for reads (the model is in the URL, not the body)."""
    messages = [{"role": "user" if c.get("role") != "model" else "assistant",
                 "content": "".join(str(p.get("text", "")) for p in c.get("parts") or [])}
                for c in body.get("contents") or []]
    return {"model": model, "messages": messages}


def google_response(body: dict[str, Any], model: str) -> dict[str, Any]:
    chat = google_as_chat(body, model)
    text = answer_for(chat)
    words = sum(len(str(m.get("content", "")).split()) for m in chat["messages"])
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": words + 3, "candidatesTokenCount": len(text.split()),
                              "totalTokenCount": words + 3 + len(text.split())},
            "modelVersion": model}


def openai_completion(body: dict[str, Any]) -> dict[str, Any]:
    text = answer_for(body)
    words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
    return {"id": "chatcmpl-" + request_hash(body), "object": "chat.completion", "created": 1700000000,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": words + 3, "completion_tokens": len(text.split()),
                      "total_tokens": words + 3 + len(text.split())}}


def anthropic_message(body: dict[str, Any]) -> dict[str, Any]:
    text = answer_for(body)
    words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
    return {"id": "msg_" + request_hash(body), "type": "message", "role": "assistant", "model": body.get("model"),
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": words + 3, "output_tokens": len(text.split())}}


@dataclass
class FakeBatch:
    id: str
    api: str  # openai | anthropic | google
    items: list[tuple[str, dict[str, Any]]]  # (custom_id, body)
    metadata: dict[str, Any]
    input_file: str | None
    created_at: float
    state: str
    polls: int = 0
    number: int = 0  # 1 for the first batch created
    output_file: str | None = None
    error_file: str | None = None
    end_as: str | None = None  # "expired" | "failed" | None
    results: list[dict[str, Any]] = field(default_factory=list)


class FakeBatchServer:
    def __init__(self, *, polls_per_state: int = 1) -> None:
        self.polls_per_state = polls_per_state
        self.hold = False
        self.hold_from: int | None = None  # the n-th batch created and every later one stay where they are
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, FakeBatch] = {}
        self.sent: Counter[str] = Counter()  # request hash → times submitted (batch or chat)
        self.chat_calls = 0
        self.creations = 0
        self.uploads = 0
        self.polls = 0
        self.cancels = 0
        self.fail_texts: list[str] = []
        self.chat_fail_texts: list[str] = []
        self.expire_next = 0
        self.fail_next = 0
        self.end_as: dict[int, str] = {}  # the n-th batch created ends "expired" or "failed"
        self.failing_polls = 0  # the next polls of a batch (GET by id) answer 503
        # The most a list page holds whatever `limit` asks (OpenAI: 100, Anthropic: 1,000, Gemini: 1,000):
        # a test lowers it to make the client page.
        self.page_cap = 1000
        self.lists = 0  # GETs of a batch list
        self.uploads_started: dict[str, str] = {}  # Gemini resumable uploads: upload_id → display name
        self.log: list[tuple[str, str]] = []  # (method, path)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # --- scripting --------------------------------------------------------------------------------
    def fail_when(self, text: str) -> None:
        self.fail_texts.append(text)

    def fail_chat_when(self, text: str) -> None:
        """The chat endpoints answer 400 to requests whose prompt holds `text` (batches are unaffected)."""
        self.chat_fail_texts.append(text)

    def forget_calls(self) -> None:
        """Start counting afresh (after the interactive run a batch run is compared with)."""
        self.sent.clear()
        self.chat_calls = 0

    def duplicates(self) -> dict[str, int]:
        return {h: n for h, n in self.sent.items() if n > 1}

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def env(self) -> dict[str, str]:
        """The variables that point evalspec's openai, anthropic and google providers here."""
        return {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY, "OPENAI_BASE_URL": self.url("/v1"),
                "ANTHROPIC_BASE_URL": self.url(), "GOOGLE_API_KEY": KEY, "GOOGLE_BASE_URL": self.url()}

    # --- lifecycle --------------------------------------------------------------------------------
    def start(self) -> FakeBatchServer:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            app = web.Application(client_max_size=300 * 1024 * 1024)
            app.router.add_route("*", "/{tail:.*}", self._handle)
            self._runner = web.AppRunner(app, access_log=None)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=run, name="fakebatch", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> FakeBatchServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- HTTP -------------------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        with self._lock:
            self.log.append((request.method, path))
        if path == "/upload/v1beta/files" and "upload_id" in request.query:
            return await self._google_finalize(request)  # the session URL is the authority, not the key
        if request.headers.get("authorization") != f"Bearer {KEY}" and request.headers.get("x-api-key") != KEY \
                and request.headers.get("x-goog-api-key") != KEY:
            return _error(401, "bad key")
        m = request.method
        if path.startswith(("/v1beta/", "/upload/v1beta/", "/download/v1beta/")):
            return await self._google(request, path)
        if m == "POST" and path == "/v1/chat/completions":
            body = await request.json()
            self._count(body)
            self.chat_calls += 1
            if any(t in last_user_text(body) for t in self.chat_fail_texts):
                return _error(400, "this request is refused")
            return web.json_response(openai_completion(body))
        if m == "POST" and path == "/v1/messages":
            body = await request.json()
            self._count(body)
            self.chat_calls += 1
            if any(t in last_user_text(body) for t in self.chat_fail_texts):
                return _error(400, "this request is refused")
            return web.json_response(anthropic_message(body))
        if m == "POST" and path == "/v1/files":
            return await self._upload(request)
        if m == "GET" and path.startswith("/v1/files/") and path.endswith("/content"):
            data = self.files.get(path.split("/")[3])
            return web.Response(body=data, content_type="application/jsonl") if data is not None \
                else _error(404, "no such file")
        if m == "GET" and self.failing_polls and path.count("/") == 3 and "batch" in path:
            self.failing_polls -= 1
            return _error(503, "the batch service is down")
        if path.startswith("/v1/messages/batches"):
            return await self._anthropic(request, path.removeprefix("/v1/messages/batches").strip("/"))
        if path.startswith("/v1/batches"):
            return await self._openai(request, path.removeprefix("/v1/batches").strip("/"))
        return _error(404, f"no route {m} {path}")

    def _count(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.sent[request_hash(body)] += 1

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        if form.get("purpose") != "batch":
            return _error(400, "purpose must be batch")
        f = form.get("file")
        if not isinstance(f, web.FileField):
            return _error(400, "no file")
        data = f.file.read()
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = data
        self.uploads += 1
        return web.json_response({"id": file_id, "object": "file", "bytes": len(data), "purpose": "batch",
                                  "filename": f.filename, "created_at": int(time.time())})

    # OpenAI ----------------------------------------------------------------------------------------
    async def _openai(self, request: web.Request, rest: str) -> web.Response:
        m = request.method
        if m == "POST" and rest == "":
            body = await request.json()
            if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
                return _error(400, "bad endpoint or completion_window")
            data = self.files.get(str(body.get("input_file_id")))
            if data is None:
                return _error(404, "no such input file")
            items = []
            for line in data.splitlines():
                rec = json.loads(line)
                if rec.get("method") != "POST" or rec.get("url") != "/v1/chat/completions":
                    return _error(400, "bad line")
                items.append((rec["custom_id"], rec["body"]))
            if len({c for c, _ in items}) != len(items):
                return _error(400, "duplicate custom_id")
            batch = self._new("openai", items, body.get("metadata") or {}, str(body.get("input_file_id")),
                              "validating")
            return web.json_response(self._openai_json(batch))
        if m == "GET" and rest == "":
            self.lists += 1
            after = request.query.get("after")
            limit = int(request.query.get("limit", "20"))
            if not 1 <= limit <= 100:
                return _error(400, "limit must be between 1 and 100")
            limit = min(limit, self.page_cap)
            mine = sorted((b for b in self.batches.values() if b.api == "openai"), key=lambda b: (-b.created_at, -b.number))
            if after:
                ids = [b.id for b in mine]
                mine = mine[ids.index(after) + 1:] if after in ids else []
            page = mine[:limit]
            return web.json_response({"object": "list", "data": [self._openai_json(b) for b in page],
                                      "first_id": page[0].id if page else None,
                                      "last_id": page[-1].id if page else None, "has_more": len(mine) > limit})
        batch_id, _, action = rest.partition("/")
        batch = self.batches.get(batch_id)
        if batch is None or batch.api != "openai":
            return _error(404, "no such batch")
        if m == "GET" and not action:
            self._poll(batch)
            return web.json_response(self._openai_json(batch))
        if m == "POST" and action == "cancel":
            self.cancels += 1
            if batch.state not in ("completed", "failed", "expired", "cancelled"):
                batch.state = "cancelling"
            return web.json_response(self._openai_json(batch))
        return _error(404, "no route")

    def _openai_json(self, b: FakeBatch) -> dict[str, Any]:
        done = [r for r in b.results if (r.get("response") or {}).get("status_code") == 200]
        return {"id": b.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
                "input_file_id": b.input_file, "completion_window": "24h", "status": b.state,
                "output_file_id": b.output_file, "error_file_id": b.error_file, "created_at": int(b.created_at),
                "metadata": b.metadata,
                "request_counts": {"total": len(b.items), "completed": len(done),
                                   "failed": len(b.results) - len(done)}}

    # Anthropic -------------------------------------------------------------------------------------
    async def _anthropic(self, request: web.Request, rest: str) -> web.StreamResponse:
        m = request.method
        if m == "POST" and rest == "":
            body = await request.json()
            items = [(r["custom_id"], r["params"]) for r in body.get("requests") or []]
            if not items or len({c for c, _ in items}) != len(items):
                return _error(400, "no requests or duplicate custom_id")
            batch = self._new("anthropic", items, {}, None, "in_progress")
            return web.json_response(self._anthropic_json(batch))
        if m == "GET" and rest == "":
            self.lists += 1
            mine = sorted((b for b in self.batches.values() if b.api == "anthropic"), key=lambda b: (-b.created_at, -b.number))
            after = request.query.get("after_id")
            if after:
                ids = [b.id for b in mine]
                mine = mine[ids.index(after) + 1:] if after in ids else []
            limit = int(request.query.get("limit", "20"))
            if not 1 <= limit <= 1000:
                return _error(400, "limit must be between 1 and 1000")
            limit = min(limit, self.page_cap)
            page = mine[:limit]
            return web.json_response({"data": [self._anthropic_json(b) for b in page],
                                      "has_more": len(mine) > limit,
                                      "first_id": page[0].id if page else None,
                                      "last_id": page[-1].id if page else None})
        batch_id, _, action = rest.partition("/")
        batch = self.batches.get(batch_id)
        if batch is None or batch.api != "anthropic":
            return _error(404, "no such batch")
        if m == "GET" and not action:
            self._poll(batch)
            return web.json_response(self._anthropic_json(batch))
        if m == "POST" and action == "cancel":
            self.cancels += 1
            if batch.state != "ended":
                batch.state = "canceling"
            return web.json_response(self._anthropic_json(batch))
        if m == "GET" and action == "results":
            if batch.state != "ended":
                return _error(400, "not ended")
            data = b"".join(json.dumps(r).encode() + b"\n" for r in batch.results)
            return web.Response(body=data, content_type="application/binary")
        return _error(404, "no route")

    def _anthropic_json(self, b: FakeBatch) -> dict[str, Any]:
        counts = Counter(r["result"]["type"] for r in b.results)
        created = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(b.created_at)) + f".{int(b.created_at % 1 * 1e6):06d}Z"
        return {"id": b.id, "type": "message_batch", "processing_status": b.state, "created_at": created,
                "request_counts": {"processing": len(b.items) - len(b.results), "succeeded": counts["succeeded"],
                                   "errored": counts["errored"], "canceled": counts["canceled"],
                                   "expired": counts["expired"]},
                "results_url": self.url(f"/v1/messages/batches/{b.id}/results") if b.state == "ended" else None}

    # Gemini --------------------------------------------------------------------------------------------
    async def _google(self, request: web.Request, path: str) -> web.StreamResponse:
        m = request.method
        if m == "POST" and path.startswith("/v1beta/models/") and ":" in path:
            model, _, action = path.removeprefix("/v1beta/models/").rpartition(":")
            body = await request.json()
            if action == "generateContent":
                self._count({"model": model, **body})
                self.chat_calls += 1
                return web.json_response(google_response(body, model))
            if action == "batchGenerateContent":
                batch = body.get("batch") or {}
                data = self.files.get(str((batch.get("inputConfig") or {}).get("fileName")))
                if data is None or not batch.get("displayName"):
                    return _google_error(400, "INVALID_ARGUMENT", "displayName and an uploaded inputConfig.fileName")
                items = []
                for line in data.splitlines():
                    rec = json.loads(line)
                    if not isinstance(rec.get("request"), dict) or "key" not in rec:
                        return _google_error(400, "INVALID_ARGUMENT", "a line without key or request")
                    items.append((str(rec["key"]), {"model": model, **rec["request"]}))
                if len({k for k, _ in items}) != len(items):
                    return _google_error(400, "INVALID_ARGUMENT", "duplicate key")
                made = self._new("google", items, {"displayName": batch["displayName"], "model": f"models/{model}"},
                                 str(batch["inputConfig"]["fileName"]), "BATCH_STATE_PENDING")
                return web.json_response(self._google_json(made))
        if m == "POST" and path == "/upload/v1beta/files":
            if request.headers.get("x-goog-upload-protocol") != "resumable" or \
                    request.headers.get("x-goog-upload-command") != "start":
                return _google_error(400, "INVALID_ARGUMENT", "a resumable upload starts with command start")
            meta = await request.json()
            upload_id = f"up{next(self._ids)}"
            self.uploads_started[upload_id] = str((meta.get("file") or {}).get("displayName"))
            return web.Response(headers={"X-Goog-Upload-URL": self.url(f"/upload/v1beta/files?upload_id={upload_id}"),
                                         "X-Goog-Upload-Status": "active"})
        if m == "GET" and path.startswith("/download/v1beta/files/") and path.endswith(":download"):
            data = self.files.get(path.removeprefix("/download/v1beta/").removesuffix(":download"))
            if data is None or request.query.get("alt") != "media":
                return _google_error(404, "NOT_FOUND", "no such file")
            return web.Response(body=data, content_type="application/octet-stream")
        if m == "GET" and path == "/v1beta/batches":
            self.lists += 1
            mine = sorted((b for b in self.batches.values() if b.api == "google"), key=lambda b: (-b.created_at, -b.number))
            start = int(request.query.get("pageToken") or 0)
            size = min(int(request.query.get("pageSize") or 10), self.page_cap)
            page = mine[start:start + size]
            out: dict[str, Any] = {"operations": [self._google_json(b) for b in page]}
            if start + size < len(mine):
                out["nextPageToken"] = str(start + size)
            return web.json_response(out)
        if path.startswith("/v1beta/batches/"):
            name, _, action = path.removeprefix("/v1beta/").partition(":")
            batch = self.batches.get(name)
            if batch is None or batch.api != "google":
                return _google_error(404, "NOT_FOUND", "no such batch")
            if m == "GET" and not action:
                if self.failing_polls:
                    self.failing_polls -= 1
                    return _google_error(503, "UNAVAILABLE", "the batch service is down")
                self._poll(batch)
                return web.json_response(self._google_json(batch))
            if m == "POST" and action == "cancel":
                self.cancels += 1
                if batch.state in ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING"):
                    batch.end_as = "cancelled"
                return web.json_response({})
        return _google_error(404, "NOT_FOUND", f"no route {m} {path}")

    async def _google_finalize(self, request: web.Request) -> web.Response:
        upload_id = request.query.get("upload_id", "")
        if upload_id not in self.uploads_started or request.headers.get("x-goog-upload-offset") != "0" or \
                request.headers.get("x-goog-upload-command") != "upload, finalize":
            return _google_error(400, "INVALID_ARGUMENT", "unknown upload or bad command")
        data = await request.read()
        name = f"files/f{next(self._ids)}"
        self.files[name] = data
        self.uploads += 1
        display = self.uploads_started.pop(upload_id)
        return web.json_response({"file": {"name": name, "displayName": display, "mimeType": "application/jsonl",
                                           "sizeBytes": str(len(data)), "state": "ACTIVE",
                                           "uri": self.url(f"/v1beta/{name}")}})

    def _google_json(self, b: FakeBatch) -> dict[str, Any]:
        ok = sum(1 for r in b.results if "response" in r)
        created = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(b.created_at)) + f".{int(b.created_at % 1 * 1e9):09d}Z"
        meta: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
            "model": b.metadata["model"], "name": b.id, "displayName": b.metadata["displayName"],
            "createTime": created, "updateTime": created, "state": b.state,
            "batchStats": {"requestCount": str(len(b.items)), "successfulRequestCount": str(ok),
                           "failedRequestCount": str(len(b.results) - ok),
                           "pendingRequestCount": str(len(b.items) - len(b.results))}}
        out: dict[str, Any] = {"name": b.id, "metadata": meta}
        ended = b.state in ("BATCH_STATE_SUCCEEDED", "BATCH_STATE_FAILED", "BATCH_STATE_CANCELLED",
                            "BATCH_STATE_EXPIRED")
        out["done"] = ended
        if b.state == "BATCH_STATE_FAILED":
            out["error"] = {"code": 13, "message": "the batch failed", "status": "INTERNAL"}
        elif ended and b.output_file:
            out["response"] = {"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput",
                               "responsesFile": b.output_file}
        return out

    def _finish_google(self, b: FakeBatch, *, cancelled: bool) -> None:
        stop = len(b.items) // 2 if cancelled else len(b.items)
        results = []
        for key, body in b.items[:stop]:
            if self._fails(google_as_chat(body, "")):
                results.append({"key": key, "error": {"code": 500, "message": "Internal error encountered.",
                                                      "status": "INTERNAL"}})
            else:
                request = {k: v for k, v in body.items() if k != "model"}
                results.append({"key": key, "response": google_response(request, str(body["model"]))})
        b.results = results
        b.output_file = f"files/batch-{next(self._ids)}"
        self.files[b.output_file] = b"".join(json.dumps(r).encode() + b"\n" for r in results)

    # the batches' life ----------------------------------------------------------------------------
    def _new(self, api: str, items: list[tuple[str, dict[str, Any]]], metadata: dict[str, Any],
             input_file: str | None, state: str) -> FakeBatch:
        with self._lock:
            for _, body in items:
                self.sent[request_hash(body)] += 1
            self.creations += 1
            number = self.creations
            prefix = {"openai": "batch_", "anthropic": "msgbatch_", "google": "batches/"}[api]
            batch = FakeBatch(f"{prefix}{next(self._ids)}", api, items, dict(metadata), input_file,
                              time.time(), state, number=number)
            if number in self.end_as:
                batch.end_as = self.end_as[number]
            elif self.expire_next:
                self.expire_next -= 1
                batch.end_as = "expired"
            elif self.fail_next:
                self.fail_next -= 1
                batch.end_as = "failed"
            self.batches[batch.id] = batch
        return batch

    def _poll(self, b: FakeBatch) -> None:
        with self._lock:
            self.polls += 1
            if self.hold or (self.hold_from is not None and b.number >= self.hold_from):
                return
            b.polls += 1
            if b.polls < self.polls_per_state:
                return
            b.polls = 0
            if b.api == "google":
                if b.state == "BATCH_STATE_PENDING":
                    b.state = "BATCH_STATE_FAILED" if b.end_as == "failed" else "BATCH_STATE_RUNNING"
                elif b.state == "BATCH_STATE_RUNNING":
                    if b.end_as == "expired":
                        b.state = "BATCH_STATE_EXPIRED"  # no results to retrieve (the Gemini docs)
                    else:
                        self._finish_google(b, cancelled=b.end_as == "cancelled")
                        b.state = "BATCH_STATE_CANCELLED" if b.end_as == "cancelled" else "BATCH_STATE_SUCCEEDED"
                return
            if b.api == "openai":
                nxt = {"validating": "in_progress", "in_progress": "finalizing", "finalizing": "completed",
                       "cancelling": "cancelled"}.get(b.state)
                if nxt is None:
                    return
                if b.state == "validating" and b.end_as == "failed":
                    b.state = "failed"
                    return
                if nxt == "completed" and b.end_as == "expired":
                    nxt = "expired"
                if nxt in ("completed", "expired", "cancelled"):
                    self._finish_openai(b, expired=nxt == "expired", cancelled=nxt == "cancelled")
                b.state = nxt
            else:
                if b.state in ("in_progress", "canceling"):
                    self._finish_anthropic(b, cancelled=b.state == "canceling")
                    b.state = "ended"

    def _fails(self, body: dict[str, Any]) -> bool:
        text = last_user_text(body)
        return any(t in text for t in self.fail_texts)

    def _finish_openai(self, b: FakeBatch, *, expired: bool, cancelled: bool) -> None:
        out, err = [], []
        stop = len(b.items) // 2 if expired or cancelled else len(b.items)
        for n, (cid, body) in enumerate(b.items):
            if n >= stop:
                code = "batch_expired" if expired else "batch_cancelled"
                err.append({"id": f"req_{n}", "custom_id": cid, "response": None,
                            "error": {"code": code, "message": "This request could not be executed before the "
                                      "batch ended."}})
            elif self._fails(body):
                err.append({"id": f"req_{n}", "custom_id": cid,
                            "response": {"status_code": 500, "request_id": f"r{n}",
                                         "body": {"error": {"message": "The server had an error", "type": "server_error"}}},
                            "error": None})
            else:
                out.append({"id": f"req_{n}", "custom_id": cid,
                            "response": {"status_code": 200, "request_id": f"r{n}", "body": openai_completion(body)},
                            "error": None})
        b.results = out + err
        if out:
            b.output_file = f"file-{next(self._ids)}"
            self.files[b.output_file] = b"".join(json.dumps(r).encode() + b"\n" for r in out)
        if err:
            b.error_file = f"file-{next(self._ids)}"
            self.files[b.error_file] = b"".join(json.dumps(r).encode() + b"\n" for r in err)

    def _finish_anthropic(self, b: FakeBatch, *, cancelled: bool) -> None:
        expired = b.end_as == "expired"
        stop = len(b.items) // 2 if expired or cancelled else len(b.items)
        results = []
        for n, (cid, body) in enumerate(b.items):
            if n >= stop:
                results.append({"custom_id": cid, "result": {"type": "expired" if expired else "canceled"}})
            elif self._fails(body):
                results.append({"custom_id": cid, "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": "api_error", "message": "Internal server error"}}}})
            else:
                results.append({"custom_id": cid, "result": {"type": "succeeded", "message": anthropic_message(body)}})
        b.results = results


def _google_error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": status, "message": message, "status": code}}, status=status)


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=status)
