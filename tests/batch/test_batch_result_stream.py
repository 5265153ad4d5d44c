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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.fakebatch import FakeBatchServer


class EndlessResults(FakeBatchServer):
    """OpenAI's output files served as `mode` says: "surplus" (every answer, then lines of unknown ids for
    ever) or "drip" (the first half of the answers, then a space every 0.2 s for ever)."""

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
            await resp.write(b"".join(lines[: len(lines) // 2]))
            while True:
                await resp.write(b" ")
                await asyncio.sleep(0.2)
        except (ConnectionError, RuntimeError):  # the client hung up: what the fix does
            return resp


@pytest.fixture(params=["surplus", "drip"])
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
    assert endless.chat_calls == (0 if endless.mode == "surplus" else n - n // 2)
    assert not endless.duplicates() or endless.mode == "drip"
    assert "mean 1.000" in ran.stdout
    if endless.mode == "drip":
        assert "no new answer" in ran.stderr + ran.stdout
