"""The ninth attack round on the run side (issue 15, ninth look): what the wire, a batch service, a code
judge and a second `--resume` can still do that eight rounds did not throw.

Run through `bench/attack.py` (`python bench/attack.py wire9 secrets9 spell9 scripts9`); this module
holds the probes, `attack.py` the harness they share.

  wire9     keep-alive connections after a bad answer: a second, unrequested answer written after the
            first (the next prompt's call read it), `Connection: close` ignored, a longer body than its
            Content-Length; answers that drip a byte a second for ever (a total deadline, not a read
            timeout), headers that never end, a server that never reads a 6 MB request; IPv6 loopback
            base URLs; batch result files that never end (surplus lines, a drip) on OpenAI, Anthropic and
            Gemini; Weval `$call` services that drip, send blanks without end or headers for ever.
            Broken: a traceback, a run past its bound, no run_finished, an answer in the results that was
            the answer to another prompt, a run over 1 GB.
  secrets9  the key echoed in part (its first or last 20 characters, its middle), split by a newline or a
            zero-width space, split over two content parts or two event-stream chunks, at 64 KB and 1 MB
            boundaries of a 2 MB answer, in a 401 body cut as real providers cut it, in a reason phrase,
            in tool-call arguments and a judge's reason; the key only in `OPENAI_BASE_URL` (its path, its
            query, as a password). Broken: 12+ characters of the key in any file written or printed.
  spell9    a killed run, then `--resume`s at the same instant naming one output folder and one file in
            different ways (`out`, `./out/`, absolute, `out/../out`, `//`-doubled, through a symlink to
            the folder and to its parent; the file as `./b.yml`, absolute, through a linked folder).
            Broken: a prompt asked twice by the followers, a prompt never asked, a traceback or hang.
  scripts9  code judges and `cli` targets that leave a grandchild holding stdout (in their group and out
            of it with setsid), stop themselves (SIGSTOP), ignore SIGTERM and SIGHUP, write 1 GB to
            stderr, close stdout and keep running, fork 200 children, print a verdict and then hang,
            change their process group; cli targets whose {OUTPUT_FILE} is a FIFO, a folder, 100 MB. Broken: a traceback, a run past its bound, no result row for
            the test, a process of ours left running (not counting those that left the group with setsid or
            setpgid, which SECURITY.md puts beyond reach, reported separately).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attack as A
from fakeprovider import FakeProvider, Reply

# ------------------------------------------------------------------------------------------------
# wire9: connections, deadlines and result files


def _answer_bytes(text: str, *extra_headers: str) -> bytes:
    body = json.dumps({"choices": [{"message": {"content": text}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()
    head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" + "".join(h + "\r\n" for h in extra_headers)
    return (head + f"content-length: {len(body)}\r\n\r\n").encode() + body


class PromptServer(A.LoopbackServer):
    """A loopback OpenAI-shaped server that answers every request with the text of its own prompt
    (`answer to <prompt>`), then does what `mode` adds: bytes after the answer, a drip, no reading."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        on_conn = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if self.mode == "never-read-the-body":
                    await asyncio.sleep(3600)
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length)
                self.requests += 1
                on_conn += 1
                try:
                    msgs = json.loads(body).get("messages") or []
                    prompt = str(msgs[-1].get("content"))
                except (ValueError, AttributeError, IndexError):
                    prompt = "?"
                own = _answer_bytes("answer to " + prompt)
                if self.mode == "answer-then-another":
                    writer.write(own)
                    await writer.drain()
                    if on_conn == 1:
                        await asyncio.sleep(0.05)
                        writer.write(_answer_bytes("STRAY answer Q0Q Q1Q Q2Q Q3Q Q4Q Q5Q"))
                        await writer.drain()
                elif self.mode == "answer-twice-then-a-pause":
                    # The rate-limit headers make the client wait before its next call, so the second copy
                    # arrives while the connection is idle in the pool: the next call read it as its own.
                    writer.write(_answer_bytes("answer to " + prompt, "x-ratelimit-remaining-requests: 0",
                                               "x-ratelimit-limit-requests: 1", "x-ratelimit-reset-requests: 400ms"))
                    await writer.drain()
                    await asyncio.sleep(0.05)
                    writer.write(_answer_bytes("answer to " + prompt))
                    await writer.drain()
                elif self.mode == "longer-than-its-length":
                    writer.write(own + b"STRAY TAIL " * 10)
                    await writer.drain()
                elif self.mode == "connection-close-ignored":
                    writer.write(_answer_bytes("answer to " + prompt, "connection: close"))
                    await writer.drain()
                elif self.mode == "drip-body":
                    data = _answer_bytes("answer to " + prompt)
                    for i in range(len(data)):
                        writer.write(data[i:i + 1])
                        await writer.drain()
                        await asyncio.sleep(1.0)
                elif self.mode == "drip-headers":
                    writer.write(b"HTTP/1.1 200 OK\r\n")
                    while True:
                        writer.write(b"x-a: b\r\n")
                        await writer.drain()
                        await asyncio.sleep(1.0)
                else:
                    writer.write(own)
                    await writer.drain()
        except Exception:
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()


def _own_answers(out: Path, n: int) -> str | None:
    """None when no prompt's recorded answer is the answer the server gave to another prompt (a
    desynchronised connection). The stray text itself is the server's word for whatever request its
    bytes raced with, as any answer is: HTTP/1.1 cannot tell it from a slow answer."""
    wrong = []
    for f in out.rglob("histories/p*/*.json"):
        i = f.parent.name.removeprefix("p")
        for j in re.findall(r"answer to tell Q(\d+)Q", f.read_text(errors="replace")):
            if j != i:
                wrong.append(f"p{i} holds p{j}'s")
    return f"answers of other prompts: {sorted(set(wrong))[:4]}" if wrong else None


def _wire_blueprint(root: Path, n: int, model: str = "openai:candidate", prompt_extra: str = "") -> Path:
    bp = root / "b.yml"
    bp.write_text(f"title: t\nmodels: [{model}]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: tell Q{i}Q{prompt_extra}\n  should: [$contains: Q{i}Q]\n" for i in range(n)))
    return bp


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def attack_wire9(tally: A.Tally) -> None:
    print("connections, deadlines and result files (ninth round)", flush=True)
    n = 6
    for mode, jobs, bound in (("answer-then-another", 1, 60), ("answer-then-another", 3, 60),
                              ("answer-twice-then-a-pause", 1, 60), ("answer-twice-then-a-pause", 2, 60),
                              ("longer-than-its-length", 1, 60), ("connection-close-ignored", 1, 60),
                              ("drip-body", 2, 60), ("drip-headers", 2, 60), ("never-read-the-body", 2, 60)):
        name = f"wire9/{mode}/-j{jobs}"
        if A.ONLY and A.ONLY not in name:
            continue
        root = Path(tempfile.mkdtemp(prefix="attack-wire9-"))
        try:
            with PromptServer(mode) as server:
                # a 12 MB prompt for the server that never reads: the request cannot be written at all.
                extra = " " + "y" * 12_000_000 if mode == "never-read-the-body" else ""
                bp = _wire_blueprint(root, 1 if extra else n, prompt_extra=extra)
                env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root), "OPENAI_API_KEY": A.KEY,
                       "OPENAI_BASE_URL": f"http://127.0.0.1:{server.port}/v1", "NO_COLOR": "1",
                       "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
                ran = A.run_cli(["run", str(bp), "-o", str(root / "out"), "-j", str(jobs), "--timeout", "3",
                                 "--retries", "1", "--max-wait", "5", "--no-report", "--json"], env=env, cwd=root,
                                timeout=bound)
                problems = [p for p in [A.crashed(ran)] if p]
                if not problems and '"type":"run_finished"' not in ran.out:
                    problems.append(f"no run_finished event (exit {ran.code})")
                if not problems and mode.startswith(("answer-", "longer-", "connection-")):
                    problems += [p for p in [_own_answers(root / "out", n)] if p]
                tally.note(f"{name} ({ran.seconds:.1f} s, exit {ran.code}, {server.requests} requests)",
                           "; ".join(problems) or None)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    _wire9_ipv6(tally)
    _wire9_batch(tally)
    _wire9_call(tally)


def _wire9_ipv6(tally: A.Tally) -> None:
    name = "wire9/ipv6-loopback-base-url"
    if A.ONLY and A.ONLY not in name:
        return
    if not _ipv6_loopback():
        tally.note(name + " (no ::1 on this machine: not tried)", None)
        return
    root = Path(tempfile.mkdtemp(prefix="attack-wire9-"))
    try:
        with FakeProvider() as fake:
            bp = _wire_blueprint(root, 2)
            # the fake listens on 127.0.0.1 only: [::1] refuses, which must be a clean error cell
            for url in (f"http://[::1]:{fake.port}/v1", f"http://[::ffff:127.0.0.1]:{fake.port}/v1",
                        f"http://[::1%25lo]:{fake.port}/v1", "http://[::1]:0/v1", "http://[fe80::1%25eth0]:1/v1"):
                env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root), "OPENAI_API_KEY": A.KEY,
                       "OPENAI_BASE_URL": url, "NO_COLOR": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
                ran = A.run_cli(["run", str(bp), "-o", str(root / "out"), "--timeout", "3", "--retries", "0",
                                 "--no-report", "--json"], env=env, cwd=root, timeout=60)
                problems = [p for p in [A.crashed(ran)] if p]
                if not problems and '"type":"run_finished"' not in ran.out and ran.code != 2:
                    problems.append(f"no run_finished event (exit {ran.code}: {ran.err.strip().splitlines()[-1:]})")
                tally.note(f"{name}/{url.split('//')[1].split(']')[0]}] (exit {ran.code}, {ran.seconds:.1f} s)",
                           "; ".join(problems) or None)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _endless_batch_server(mode: str) -> Any:
    """tests/fakebatch.py's server whose result files never end: "surplus" (every answer, then lines
    of unknown ids for ever), "drip" (half the answers, then a byte every 0.5 s), "blank" (every answer
    after a million blank lines a second, for ever)."""
    from aiohttp import web
    from fakebatch import FakeBatchServer

    class Endless(FakeBatchServer):  # type: ignore[misc]
        served = 0

        async def _stream(self, request: web.Request, data: bytes) -> web.StreamResponse:
            self.served += 1
            lines = data.splitlines(keepends=True)
            resp = web.StreamResponse(headers={"content-type": "application/jsonl"})
            await resp.prepare(request)
            try:
                if mode == "surplus":
                    await resp.write(b"".join(lines))
                    k = 0
                    while True:
                        k += 1
                        await resp.write(json.dumps({"custom_id": f"zz-{k}", "result": {"type": "succeeded"},
                                                     "response": {"status_code": 200, "body": {}}}).encode() + b"\n")
                        await asyncio.sleep(0.001)
                if mode == "blank":
                    while True:
                        await resp.write(b"\n" * 65536)
                        await asyncio.sleep(0.01)
                await resp.write(b"".join(lines[: len(lines) // 2]))
                while True:
                    await resp.write(b" ")
                    await asyncio.sleep(0.5)
            except (ConnectionError, RuntimeError):
                return resp

        async def _handle(self, request: web.Request) -> web.StreamResponse:
            p = request.path
            if request.method == "GET" and p.startswith("/v1/files/") and p.endswith("/content"):
                data = self.files.get(p.split("/")[3])
                batch = next((b for b in self.batches.values() if b.output_file == p.split("/")[3]), None)
                if data is not None and batch is not None:
                    return await self._stream(request, data)
            if request.method == "GET" and p.startswith("/v1/messages/batches/") and p.endswith("/results"):
                batch = self.batches.get(p.split("/")[4])
                if batch is not None:
                    data = b"".join(json.dumps(r).encode() + b"\n" for r in batch.results)
                    return await self._stream(request, data)
            if request.method == "GET" and p.startswith("/download/v1beta/files/"):
                got = await super()._handle(request)
                if isinstance(got, web.Response) and got.status == 200 and got.body:
                    return await self._stream(request, bytes(got.body))  # type: ignore[arg-type]
                return got
            return await super()._handle(request)

    return Endless(polls_per_state=1)


def _wire9_batch(tally: A.Tally) -> None:
    for mode in ("surplus", "drip", "blank"):
        for model in ("openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest", "google:gemini-2.0-flash"):
            name = f"wire9/batch-results-{mode}/{model.split(':')[0]}"
            if A.ONLY and A.ONLY not in name:
                continue
            root = Path(tempfile.mkdtemp(prefix="attack-wire9b-"))
            try:
                server = _endless_batch_server(mode)
                with server:
                    bp = root / "b.yml"
                    bp.write_text(f"title: t\nmodels: [{model}]\n---\n" + "".join(
                        f"- id: p{i}\n  prompt: question number {i}\n  should: [{{$contains: question}}]\n"
                        for i in range(6)))
                    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root), "NO_COLOR": "1",
                           "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **server.env()}
                    ran = A.run_cli(["run", "b.yml", "-o", "out", "--no-report", "--batch", "--batch-poll", "0.05",
                                     "--retries", "0", "--timeout", "5", "--json"], env=env, cwd=root, timeout=120)
                    problems = [p for p in [A.crashed(ran)] if p]
                    if not problems and '"type":"run_finished"' not in ran.out:
                        problems.append(f"no run_finished event (exit {ran.code})")
                    if not problems and server.duplicates() and mode == "surplus":
                        problems.append("requests sent twice though the batch answered them all")
                    tally.note(f"{name} ({ran.seconds:.1f} s, exit {ran.code}, {server.served} files, "
                               f"{server.chat_calls} chat calls)", "; ".join(problems) or None)
            finally:
                shutil.rmtree(root, ignore_errors=True)


class CallService(A.LoopbackServer):
    """A `$call` service on loopback whose answer never ends: "drip" (a byte of a 100,000-byte body a
    second), "endless" (1 MB blanks without a length, until the client hangs up), "headers" (a header line
    a second, never a body)."""

    def __init__(self, mode: str) -> None:
        self.mode, self.sent = mode, 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            await reader.readuntil(b"\r\n\r\n")
            if self.mode == "headers":
                writer.write(b"HTTP/1.1 200 OK\r\n")
                while True:
                    writer.write(b"x-a: b\r\n")
                    await writer.drain()
                    await asyncio.sleep(1.0)
            if self.mode == "drip":
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n")
                chunk, pause = b" ", 1.0
            else:
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
                chunk, pause = b" " * 1048576, 0.0
            while self.sent < 2 * 1024 ** 3:  # 2 GB at most: the probe itself stays bounded
                writer.write(chunk)
                await writer.drain()
                self.sent += len(chunk)
                await asyncio.sleep(pause)
        with contextlib.suppress(Exception):
            writer.close()


def _wire9_call(tally: A.Tally) -> None:
    """Weval `$call` points on services that never finish their answer. Broken: a traceback, a run past
    60 s, no run_finished, the run over 1 GB of memory."""
    for mode in ("drip", "endless", "headers"):
        name = f"wire9/call-service-{mode}"
        if A.ONLY and A.ONLY not in name:
            continue
        root = Path(tempfile.mkdtemp(prefix="attack-wire9c-"))
        try:
            with CallService(mode) as service:
                bp = root / "b.yml"
                bp.write_text("title: t\nmodels: [echo]\n---\n- id: p\n  prompt: hello\n  should:\n"
                              f"    - $call: {{url: 'http://127.0.0.1:{service.port}/s', timeout_ms: 3000, max_retries: 1}}\n")
                env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root), "NO_COLOR": "1",
                       "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
                ran = A.run_cli(["run", str(bp), "-o", str(root / "out"), "--no-report", "--json"], env=env, cwd=root,
                                timeout=60)
                problems = [p for p in [A.crashed(ran)] if p]
                if not problems and '"type":"run_finished"' not in ran.out:
                    problems.append(f"no run_finished event (exit {ran.code})")
                if ran.peak_kb > 1024 * 1024:
                    problems.append(f"{ran.peak_kb // 1024} MB of memory")
                tally.note(f"{name} ({ran.seconds:.1f} s, exit {ran.code}, {ran.peak_kb // 1024} MB, "
                           f"{service.sent // 1048576} MB sent)", "; ".join(problems) or None)
        finally:
            shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# secrets9: the key in part, split, and where only a URL holds it


def _secret9_cases(key: str) -> Iterator[tuple[str, list[Reply], dict[str, str]]]:
    """(name, scripted replies, env changes) for a one-prompt Weval run on openai:candidate."""
    mid = len(key) // 2
    yield "answer-first-20", [Reply.ok(f"your key starts {key[:20]}…")] * 4, {}
    yield "answer-last-20", [Reply.ok(f"your key ends …{key[-20:]}")] * 4, {}
    yield "answer-middle", [Reply.ok(f"part of it: {key[4:-4]}")] * 4, {}
    yield "answer-split-newline", [Reply.ok(f"{key[:mid]}\n{key[mid:]}")] * 4, {}
    yield "answer-split-zero-width", [Reply.ok(f"{key[:mid]}\u200b{key[mid:]}")] * 4, {}
    yield "answer-two-halves-far-apart", [Reply.ok(f"{key[:mid]} and later {'z' * 500} {key[mid:]}")] * 4, {}
    for at in (65536 - 10, 1024 * 1024 - 12, 2 * 1024 * 1024 - 30):
        yield f"answer-2mb-key-at-{at}", [Reply.ok("a" * at + key + "b" * (2 * 1024 * 1024 - at))] * 4, {}
    parts = {"choices": [{"message": {"content": [{"type": "text", "text": key[:mid]},
                                                  {"type": "text", "text": key[mid:]}]}}]}
    yield "answer-two-content-parts", [Reply.raw(200, parts)] * 4, {}
    sse = (f'data: {{"choices": [{{"delta": {{"content": "{key[:mid]}"}}}}]}}\n\n'
           f'data: {{"choices": [{{"delta": {{"content": "{key[mid:]}"}}}}]}}\n\ndata: [DONE]\n\n')
    yield "sse-chunks-split", [Reply.raw(200, sse, **{"content-type": "text/event-stream"})] * 4, {}
    masked = key[:19] + "*" * 8 + key[-4:]  # "Incorrect API key provided: sk-attack-key-012********cdef"
    yield "401-partly-masked", [Reply.raw(401, {"error": {"message": f"Incorrect API key provided: {masked}"}})] * 4, {}
    yield "400-key-cut-at-40", [Reply.raw(400, {"error": {"message": ("bad " + key * 3)[:40]}})] * 4, {}
    yield "500-key-split-by-newline", [Reply.raw(500, f"oops {key[:mid]}\n{key[mid:]}")] * 8, {}
    yield "429-key-in-header-and-body", [Reply.raw(429, key[:-3], **{"retry-after": "0", "x-key": key})] * 8, {}
    tool = Reply.ok("done", tool_calls=[("lookup", {"q": key[:22], "r": key[-18:]})])
    yield "tool-call-arguments", [tool] * 4, {}
    yield "base-url-path", [], {"OPENAI_API_KEY": "sk-other-but-long-enough", "OPENAI_BASE_URL": "{base}/" + key + "/v1"}
    yield "base-url-query", [], {"OPENAI_API_KEY": "sk-other-but-long-enough", "OPENAI_BASE_URL": "{base}/v1?key=" + key}
    yield "base-url-password", [], {"OPENAI_API_KEY": "sk-other-but-long-enough",
                                    "OPENAI_BASE_URL": "http://u:" + key + "@" + "{hostport}/v1"}
    yield "base-url-query-unreachable", [], {"OPENAI_API_KEY": "sk-other-but-long-enough",
                                             "OPENAI_BASE_URL": "http://127.0.0.1:1/v1?key=" + key}


def _leaks9(text: str, key: str) -> str | None:
    """attack._leaks, and the key base64-encoded (the probe reports it; SECURITY.md does not promise it)."""
    return A._leaks(text, key)


def attack_secrets9(tally: A.Tally) -> None:
    print("secrets in part (ninth round)", flush=True)
    with FakeProvider() as fake:
        for name, replies, extra in _secret9_cases(A.KEY):
            if A.ONLY and A.ONLY not in f"secrets9/{name}":
                continue
            root = Path(tempfile.mkdtemp(prefix="attack-sec9-"))
            try:
                bp = root / "b.yml"
                bp.write_text("title: t\nmodels: [openai:candidate]\n---\n- id: p\n  prompt: hello\n  should: [be polite]\n")
                env = A.base_env(fake, root)
                env.update({k: v.replace("{base}", fake.url("")).replace("{hostport}", f"127.0.0.1:{fake.port}")
                            for k, v in extra.items()})
                fake.reset()
                fake.then(*replies)
                problems = []
                for args in (["run", str(bp), "-o", str(root / "results"), "--timeout", "3", "--retries", "1",
                              "--max-wait", "2", "--judge", "openai:grader", "--json"],
                             ["run", str(bp), "-o", str(root / "results"), "--resume", "--retry-errors", "--timeout", "3",
                              "--retries", "0", "--judge", "openai:grader"],
                             ["report", str(root / "results"), "--format", "markdown", "-o", str(root / "results" / "r.md")]):
                    ran = A.run_cli(args, env=env, cwd=root, timeout=120)
                    if A.crashed(ran):
                        problems.append(f"{args[0]}: {A.crashed(ran)}")
                    for where, t in (("stdout", ran.out), ("stderr", ran.err)):
                        leak = _leaks9(t, A.KEY)
                        if leak:
                            problems.append(f"{args[0]} {where}: {leak}")
                for f in sorted((root / "results").rglob("*")) if (root / "results").exists() else []:
                    if f.is_file():
                        leak = _leaks9(f.read_text(errors="replace"), A.KEY)
                        if leak:
                            problems.append(f"{f.relative_to(root)}: {leak}")
                        if A.KEY[:12] in f.name or A.KEY[-12:] in f.name:
                            problems.append(f"the key in a file name: {f.name[:60]}")
                tally.note(f"secrets9/{name}", "; ".join(problems[:4]) or None)
            finally:
                shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# spell9: one output folder and one file, named in different ways by concurrent --resumes

GO9 = ("import os, sys, time\n"
       "go = sys.argv[1]\n"
       "os.chdir(sys.argv[2])\n"
       "while not os.path.exists(go):\n"
       "    time.sleep(0.0005)\n"
       "os.execv(sys.executable, [sys.executable, '-m', 'evalspec.cli', *sys.argv[3:]])\n")


def _spellings(root: Path) -> list[tuple[str, str, str]]:
    """(cwd, file, output folder) for each follower; all name root/b.yml (or s.eval.yaml) and root/out."""
    return [("{root}", "{src}", "out"), ("{root}", "./{src}", "./out/"), ("{root}", "{root}/{src}", "{root}/out"),
            ("{root}", "{src}", "out/../out"), ("{root}", "{src}", "{root}//out//"), ("{root}", "{src}", "outlink"),
            ("{root}/sub", "../{src}", "../out"), ("{root}", "rootlink/{src}", "rootlink/out")]
# (A Weval blueprint named through a link with another file name is another blueprint: its id, and so
# its results folder and journal, come from the file's name, as the reference's do.)


def attack_spell9(tally: A.Tally) -> None:
    print("resumes naming one folder in different ways (ninth round)", flush=True)
    n = 60
    with FakeProvider() as fake:
        fake.latency = 0.02
        for fmt in ("weval", "agentv"):
            for kill_after in (None, 1.0):
                for label in ("same", None):
                    name = f"spell9/{fmt}/first={'killed' if kill_after else 'none'}/label={label}"
                    if A.ONLY and A.ONLY not in name:
                        continue
                    root = Path(tempfile.mkdtemp(prefix="attack-spell9-"))
                    try:
                        if fmt == "weval":
                            src = "b.yml"
                            (root / src).write_text(A._blueprint(n))
                        else:
                            (root / ".git").mkdir()
                            (root / ".agentv").mkdir()
                            (root / ".agentv" / "targets.yaml").write_text(A.TARGETS)
                            src = "s.eval.yaml"
                            (root / src).write_text(__import__("attack_round7")._suite7(n))
                        (root / "sub").mkdir()
                        (root / "out").mkdir()
                        (root / "outlink").symlink_to(root / "out")
                        (root / "rootlink").symlink_to(root)
                        (root / "go.py").write_text(GO9)
                        env = A.base_env(fake, root)
                        fake.reset()
                        lab = ["--label", label] if label else []
                        common = ["-j", "4", "--no-report", "--retries", "0", *lab]
                        before: list[str] = []
                        if kill_after is not None:
                            first = A._start(["run", str(root / src), "-o", str(root / "out"), *common], env, root)
                            time.sleep(kill_after)
                            os.killpg(first.pid, signal.SIGKILL)
                            first.communicate(timeout=60)
                            before = A._asked(fake)
                        go = root / "go"
                        procs = []
                        for cwd, f, o in _spellings(root):
                            fill = {"root": str(root), "src": src}
                            args = ["run", f.format(**fill), "-o", o.format(**fill), "--resume", *common]
                            procs.append(subprocess.Popen([sys.executable, str(root / "go.py"), str(go),
                                                           cwd.format(**fill), *args], env=env, cwd=root,
                                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                                          errors="replace", start_new_session=True))
                        time.sleep(1.5)
                        codes, after, problems = A.release_followers(go, procs, fake, before)
                        missing = {str(i) for i in range(n)} - set(before) - set(after)
                        if missing:
                            problems.append(f"{len(missing)} prompt(s) never asked")
                        journals = sorted({str(p.relative_to(root)) for p in (root / "out").rglob("*.journal.jsonl")})
                        tally.note(f"{name} exits {codes}, {len(journals)} journal(s)", "; ".join(dict.fromkeys(problems)) or None)
                    finally:
                        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# scripts9: code judges and cli targets that misbehave around their exit

SCRIPTS9 = {
    # A grandchild in the judge's own group holding stdout after the verdict: killed with the group.
    "grandchild-holds-stdout": "sleep 3600 {marker} & echo '{{\"score\": 1}}'",
    # The same out of the group (setsid): beyond reach by the group (SECURITY.md), but the run must end.
    "setsid-grandchild-holds-stdout": "setsid sleep 3600 {marker} & echo '{{\"score\": 1}}'",
    "setsid-grandchild-holds-stderr": "setsid sh -c 'exec sleep 3600 {marker}' 1>/dev/null & echo '{{\"score\": 1}}'",
    "stops-itself": "echo '{{\"score\": 1}}'; kill -STOP $$",
    "stops-its-group": "kill -STOP 0",
    "ignores-term-and-hup": "trap '' TERM HUP INT; sleep 3600 {marker}",
    "gigabyte-to-stderr": "head -c 1000000000 /dev/zero >&2; echo '{{\"score\": 1}}'",
    "stderr-lines-flood": "yes 'an error line' | head -n 20000000 >&2; echo '{{\"score\": 1}}'",
    "closes-stdout-keeps-running": "exec 1>&-; sleep 3600 {marker}",
    "verdict-then-hang": "echo '{{\"score\": 1}}'; sleep 3600 {marker}",
    "forks-200": "for i in $(seq 200); do sleep 3600 {marker} & done; echo '{{\"score\": 1}}'",
    "new-process-group": "python3 -c 'import os,time; os.setpgid(0,0); print(\"{{\\\"score\\\": 1}}\", flush=True); time.sleep(3600)' {marker}",
    "double-fork-daemon": "( ( sleep 3600 {marker} & ) & ); echo '{{\"score\": 1}}'",
    "reads-stdin-forever": "cat > /dev/null; cat /dev/zero > /dev/null",
    "exec-into-sleep": "echo '{{\"score\": 1}}'; exec sleep 3600 {marker}",
}


# cli targets only: what an agent leaves where its answer is read ({OUTPUT_FILE}).
CLI9 = {
    "output-file-a-fifo": 'mkfifo "$0"',
    "output-file-100-mb-sparse": 'truncate -s 100M "$0"',
    "output-file-a-folder": 'mkdir "$0"',
}


def attack_scripts9(tally: A.Tally) -> None:
    print("code judges and cli targets around their exit (ninth round)", flush=True)
    marker = f"attack9-orphan-{os.getpid()}"
    root = Path(tempfile.mkdtemp(prefix="attack-scripts9-"))
    try:
        with FakeProvider() as fake:
            project = root / "proj"
            (project / ".git").mkdir(parents=True)
            (project / ".agentv").mkdir()
            chosen = {k: v for k, v in SCRIPTS9.items() if not A.ONLY or A.ONLY in f"scripts9/{k}"}
            targets = A.TARGETS + "".join(
                f"  - name: t-{k}\n    provider: cli\n    command: {json.dumps('sh -c ' + _sh_quote(v.format(marker=marker)))}\n"
                "    timeout_seconds: 4\n" for k, v in chosen.items()) + "".join(
                f"  - name: t-{k}\n    provider: cli\n    command: {json.dumps('sh -c ' + _sh_quote(v) + ' {OUTPUT_FILE}')}\n"
                "    timeout_seconds: 4\n" for k, v in CLI9.items() if not A.ONLY or A.ONLY in f"scripts9/{k}")
            (project / ".agentv" / "targets.yaml").write_text(targets)
            tests = "".join(
                f"  - id: {k}\n    criteria: c\n    input: hi\n    assert:\n      - type: code-judge\n"
                f"        command: [sh, -c, {json.dumps(v.format(marker=marker))}]\n        timeout_ms: 4000\n"
                for k, v in chosen.items())
            suite = project / "s.eval.yaml"
            suite.write_text("name: s\ndescription: d\ntests:\n" + tests)
            env = A.base_env(fake, root)
            ran = A.run_cli(["run", str(suite), "-o", str(root / "out"), "--no-report", "-j", "4"], env=env,
                            cwd=project, timeout=180)
            rows = {}
            for f in (root / "out").rglob("*.jsonl"):
                if not f.name.endswith(".journal.jsonl"):
                    with contextlib.suppress(ValueError):
                        rows = {r["test_id"]: r for r in map(json.loads, f.read_text().splitlines())}
            for k in chosen:
                problem = A.crashed(ran) or (None if k in rows else "no result row")
                tally.note(f"scripts9/code-judge/{k} ({ran.seconds:.0f} s for all, exit {ran.code})", problem)
            for k in [*chosen, *(k for k in CLI9 if not A.ONLY or A.ONLY in f"scripts9/{k}")]:
                suite2 = project / f"t-{k}.eval.yaml"
                suite2.write_text(f"name: t-{k}\ndescription: d\nexecution:\n  target: t-{k}\ntests:\n"
                                  "  - id: a\n    criteria: c\n    input: hi\n    assert: [{type: contains, value: score}]\n")
                ran2 = A.run_cli(["run", str(suite2), "-o", str(root / "out2"), "--no-report"], env=env, cwd=project,
                                 timeout=60)
                problem = A.crashed(ran2)
                if problem is None and ran2.code not in (0, 1, 3):
                    problem = f"exit {ran2.code}: {ran2.err.strip().splitlines()[-1:]}"
                tally.note(f"scripts9/cli-target/{k} ({ran2.seconds:.1f} s, exit {ran2.code})", problem)
            time.sleep(0.5)
            left = _marked(marker)
            ours = [p for p in left if not _own_session(p)]
            tally.note("scripts9/no-orphans-in-reach",
                       f"{len(ours)} process(es) of a judge's group left running" if ours else None)
            if left:
                print(f"  note   {len(left)} process(es) that left the group left running (beyond reach, SECURITY.md); "
                      "ending them", flush=True)
            for pid in left:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _marked(marker: str) -> list[str]:
    return subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()


def _own_session(pid: str) -> bool:
    """Whether `pid` leads a session or a process group of its own (setsid, setpgid): SECURITY.md's
    'beyond reach' of the group kill."""
    try:
        return os.getsid(int(pid)) == int(pid) or os.getpgid(int(pid)) == int(pid)
    except (ProcessLookupError, ValueError, PermissionError):
        return False


AREAS9R: dict[str, Callable[[A.Tally], None]] = {
    "wire9": attack_wire9,
    "secrets9": attack_secrets9,
    "spell9": attack_spell9,
    "scripts9": attack_scripts9,
}
