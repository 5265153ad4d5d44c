"""A batch service whose result file never ends (atk9r): lines it keeps sending after the batch's answers,
or a file that stops bringing answers and drips a byte at a time. Each read came within its deadline, so
the run read for ever; it now stops reading once every request is answered, and gives up a file that
brings no new answer for the call timeout (those requests are sent one by one).

The run is a process with a generous bound: before the fix it never ended.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.fakebatch import FakeBatchServer


class EndlessResults(FakeBatchServer):
    """OpenAI's output files served as `mode` says: "surplus" (every answer, then lines of unknown ids for
    ever), "drip" (the first half of the answers, then a space every 0.2 s for ever) or "blank" (64 KB of
    blank lines every 10 ms for ever, before any answer)."""

    def __init__(self, mode: str) -> None:
        super().__init__(polls_per_state=1)
        self.mode = mode
        self.outputs: set[str] = set()
        self.endless = 0  # result files served without end

    def _finish_openai(self, b: Any, *, expired: bool, cancelled: bool) -> None:
        super()._finish_openai(b, expired=expired, cancelled=cancelled)
        if b.output_file:
            self.outputs.add(b.output_file)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        file_id = request.path.split("/")[3] if request.path.startswith("/v1/files/") else ""
        if request.method != "GET" or file_id not in self.outputs or not request.path.endswith("/content"):
            return await super()._handle(request)
        self.endless += 1
        lines = self.files[file_id].splitlines(keepends=True)
        resp = web.StreamResponse(headers={"content-type": "application/jsonl"})
        await resp.prepare(request)
        try:
            if self.mode == "surplus":
                await resp.write(b"".join(lines))
                n = 0
                while True:
                    n += 1
                    await resp.write(json.dumps({"custom_id": f"zz-{n}", "response": {"status_code": 200, "body": {}}})
                                     .encode() + b"\n")
                    await asyncio.sleep(0.001)
            if self.mode == "blank":
                while True:
                    await resp.write(b"\n" * 65536)
                    await asyncio.sleep(0.01)
            await resp.write(b"".join(lines[: len(lines) // 2]))
            while True:
                await resp.write(b" ")
                await asyncio.sleep(0.2)
        except (ConnectionError, RuntimeError):  # the client hung up: what the fix does
            return resp


@pytest.fixture(params=["surplus", "drip", "blank"])
def endless(request: pytest.FixtureRequest) -> Iterator[EndlessResults]:
    with EndlessResults(request.param) as server:
        yield server


def test_a_result_file_that_never_ends_does_not_hold_the_run(tmp_path: Path, endless: EndlessResults) -> None:
    n = 6
    bp = tmp_path / "b.weval.yml"
    bp.write_text("title: t\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: question {i}\n  should: [$contains: question]\n" for i in range(n)))
    env = {**os.environ, **endless.env(), "PYTHONPATH": os.pathsep.join(sys.path)}
    ran = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", str(tmp_path / "out"),
                          "--no-report", "--batch", "--batch-poll", "0.02", "--retries", "0", "--timeout", "2"],
                         env=env, capture_output=True, text=True, timeout=90)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert endless.endless == 1
    # Every prompt answered once: by the batch, or (the drip's second half) by a chat call.
    assert endless.chat_calls == {"surplus": 0, "drip": n - n // 2, "blank": n}[endless.mode]
    assert not endless.duplicates() or endless.mode != "surplus"
    assert "mean 1.000" in ran.stdout
    if endless.mode != "surplus":
        assert "no new answer" in ran.stderr + ran.stdout


def test_a_deadline_around_a_result_file_streaming_fast_is_kept() -> None:
    """The caller's deadline (batch_stage: no new answer within the call timeout) cancels the read of a
    result file. jsonl_lines waited for each chunk with asyncio.wait_for, which in Python 3.11 loses a
    cancellation that arrives as its read completes: against a service streaming blank lines as fast as
    it can, the cancellation was lost nearly every time and the run read for good. The read runs in its
    own thread and loop here, so a lost deadline fails the test instead of holding it."""
    from evalspec.batch.wire import jsonl_lines
    from evalspec.providers.http import make_client

    async def main() -> str:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/jsonl\r\n\r\n")
            try:
                while True:
                    writer.write(b"\n" * 65536)
                    await writer.drain()
            except ConnectionError:
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        client = make_client(2, timeout=5.0)
        try:
            async with asyncio.timeout(0.5):
                async for _ in jsonl_lines(client, "openai", f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/f",
                                           {}, 5.0):
                    pass
            return "the file ended"
        except TimeoutError:
            return "the deadline was kept"
        finally:
            await client.aclose()
            server.close()

    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(asyncio.run(main())), daemon=True)
    reader.start()
    reader.join(30)
    assert got == ["the deadline was kept"]
