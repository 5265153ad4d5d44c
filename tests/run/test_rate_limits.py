"""Runs against providers that push back: 429 storms with Retry-After and rate-limit headers, Anthropic's
529, a provider that always answers 429, one key throttled beside another. The run finishes with
bounded retries, the concurrency adapts per provider and key, and the console and the events say so."""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from fakeprovider import FakeProvider, RateLimitedFake, Recorded, Reply

from evalspec.ide.runs import RunBoard
from evalspec.run.events import RateLimit
from evalspec.run.generate.calls import Calls

from .conftest import KEY, env_for, of_type, options, run_events, write


def blueprint(n: int, models: str = "[openai:m]") -> str:
    return f"models: {models}\n---\n" + "".join(
        f"- id: p{i}\n  prompt: Question {i}\n  should: [$contains: Question {i}]\n" for i in range(n))


def test_a_429_storm_halves_the_concurrency_paces_and_every_cell_is_answered(tmp_path: Path) -> None:
    with RateLimitedFake(8, 0.5, latency=0.03, retry="ms") as fake:
        events = run_events(write(tmp_path / "a.weval.yml", blueprint(40)),
                            options(tmp_path, env_for(fake), concurrency=16, max_retries=0))
        limits = of_type(events, "rate_limit")
        assert len(of_type(events, "scored")) == 40 and of_type(events, "cell_failed") == []
        # The first wave meets the wall: one halving for the whole burst, then calls are paced.
        drops = [e for e in limits if e.concurrency < e.previous]
        assert drops and (drops[0].previous, drops[0].concurrency, drops[0].reason) == (16, 8, "429")
        assert any(e.pace for e in limits)
        assert {e.provider for e in limits} == {"openai"}
        # Bounded: every refused request was retried once, and few were refused once paced.
        assert len(of_type(events, "retrying")) == fake.refused <= 16
        assert fake.count == 40 + fake.refused


def test_retry_after_ms_pauses_every_call_to_that_key(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        fake.then(Reply.rate_limited(5, retry_after_ms=300))
        events = run_events(write(tmp_path / "b.weval.yml", blueprint(8)),
                            options(tmp_path, env_for(fake), concurrency=1))
        assert len(of_type(events, "scored")) == 8
        (change,) = of_type(events, "rate_limit")
        assert (change.reason, change.wait) == ("429", 0.3)
        assert change.text() == "openai: 429: waiting 0.3 s"  # already at concurrency 1: nothing to halve
        refused_at = fake.requests[0].at
        assert all(r.at - refused_at >= 0.28 for r in fake.requests[1:])


def test_retry_after_in_seconds_and_as_an_http_date_are_honoured(tmp_path: Path) -> None:
    for form in ("seconds", "date"):
        value = "1" if form == "seconds" else email.utils.formatdate(time.time() + 2, usegmt=True)
        with FakeProvider() as fake:
            fake.then(Reply.ok(), Reply.rate_limited(value))
            events = run_events(write(tmp_path / form / "c.weval.yml", blueprint(3)),
                                options(tmp_path / form, env_for(fake), concurrency=1, max_wait=30))
            assert len(of_type(events, "scored")) == 3, form
            (retry,) = of_type(events, "retrying")
            assert retry.reason == "429" and 0.5 <= retry.delay <= 2.0, (form, retry)
            (change,) = of_type(events, "rate_limit")
            assert change.wait == round(retry.delay, 3)
            refused_at = fake.requests[1].at
            assert all(r.at - refused_at >= retry.delay - 0.02 for r in fake.requests[2:])


def test_anthropic_headers_pace_and_529_overloaded_halves(tmp_path: Path) -> None:
    with RateLimitedFake(6, 0.5, style="anthropic", latency=0.02, retry="ms") as fake:
        fake.then(Reply.raw(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
        env = env_for(fake, ANTHROPIC_API_KEY="sk-ant-test-0123456789")
        events = run_events(write(tmp_path / "d.weval.yml", blueprint(16, "[anthropic:claude-x]")),
                            options(tmp_path, env, concurrency=4))
        assert len(of_type(events, "scored")) == 16
        limits = of_type(events, "rate_limit")
        assert any(e.reason == "529" and (e.previous, e.concurrency) == (4, 2) for e in limits), limits
        paced = [e for e in limits if e.pace]
        assert paced and paced[0].reason.startswith("requests remaining"), limits
        assert any(r.reason == "529" for r in of_type(events, "retrying"))


class PerKeyFake(FakeProvider):
    """429 (Retry-After 50 ms) for the first four requests made with key A; key B is never refused."""

    def __init__(self) -> None:
        super().__init__()
        self.latency = 0.02
        self._n = 0

    def _respond(self, rec: Recorded, reply: Reply) -> tuple[int, bytes, dict[str, str]]:
        if reply.action == "answer" and rec.headers.get("authorization") == f"Bearer {KEY}":
            with self._lock:
                self._n += 1
                refuse = self._n <= 4
            if refuse:
                return 429, b'{"error": {"message": "slow down"}}', {"retry-after-ms": "50"}
        return super()._respond(rec, reply)


def test_two_models_on_one_key_share_a_lane_and_two_keys_do_not(tmp_path: Path) -> None:
    with PerKeyFake() as fake:
        other = {"id": "other", "url": fake.url("/v1"), "modelName": "m", "inherit": "openai",
                 "headers": {"Authorization": "Bearer sk-other-key-0123456789"}}
        models = f"[openai:a, openai:b, {json.dumps(other)}]"
        events = run_events(write(tmp_path / "e.weval.yml", blueprint(10, models)),
                            options(tmp_path, env_for(fake), concurrency=8, max_wait=30))
        assert len(of_type(events, "scored")) == 30
        lanes = {e.provider for e in of_type(events, "rate_limit")}
        assert lanes == {"openai"}  # a and b share key A's lane; key B was never slowed down

    async def lanes_of() -> tuple[object, ...]:
        calls = Calls(options(tmp_path, env_for(fake), concurrency=8), lambda e: None, concurrency=8)
        try:
            a, b, c = calls.model("openai:a"), calls.model("openai:b"), calls.model(other)
            return tuple(calls.lane(x.provider, "openai") for x in (a, b, c))
        finally:
            await calls.aclose()

    la, lb, lc = asyncio.run(lanes_of())
    assert la is lb and lc is not la
    assert (la.label, lc.label) == ("openai", "openai #2")  # type: ignore[attr-defined]


def test_fixed_concurrency_does_not_adapt(tmp_path: Path) -> None:
    with RateLimitedFake(4, 0.5, latency=0.02, retry="ms") as fake:
        events = run_events(write(tmp_path / "f.weval.yml", blueprint(12)),
                            options(tmp_path, env_for(fake), concurrency=8, adaptive_concurrency=False,
                                    max_rate_limit_retries=20))
        assert of_type(events, "rate_limit") == []
        assert len(of_type(events, "retrying")) == fake.refused > 0


def _cli(tmp_path: Path, fake: FakeProvider, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **env_for(fake), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "evalspec.cli", "run", *args, "-o", str(tmp_path / "out")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_the_console_shows_the_wait_and_the_concurrency(tmp_path: Path) -> None:
    with RateLimitedFake(4, 0.5, latency=0.03, retry="ms") as fake:
        path = write(tmp_path / "g.weval.yml", blueprint(24))
        done = _cli(tmp_path, fake, str(path), "-j", "8", "--no-report")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert any(line.startswith("rate limit: openai: 429: ") and "concurrency 8 → 4" in line for line in lines), \
        done.stderr
    assert any(line.startswith("rate limit: openai: requests remaining") and "calls/s" in line for line in lines)
    summary = next(line for line in lines if line.startswith("rate limits: openai: "))
    assert "rate-limit answer(s), concurrency 8 → lowest" in summary


def test_a_provider_that_always_answers_429_ends_the_run_with_error_cells(tmp_path: Path) -> None:
    with RateLimitedFake(10, 1.0, always=True, latency=0.05, retry="ms") as fake:
        path = write(tmp_path / "h.weval.yml", blueprint(30))
        done = _cli(tmp_path, fake, str(path), "-j", "4", "--rate-limit-retries", "3", "--max-wait", "1",
                    "--no-report", "--json")
        requests = fake.count
    assert done.returncode == 3, done.stderr  # every call failed: the exit code says so
    assert "every call failed (30 of 30 cells" in done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    failed = [e for e in events if e["type"] == "cell_failed"]
    assert len(failed) == 30 and all("429" in e["error"] for e in failed)
    assert any("gave up" in e["error"] for e in failed)
    # Bounded: at most 4 attempts per call, and the lane gave up once 1 s had passed with only 429s.
    assert requests <= 30 * 4
    assert any(e["type"] == "rate_limit" and e["gave_up"] for e in events)


def test_the_editor_progress_names_the_slowed_provider() -> None:
    board = RunBoard()
    board.start([], None)
    board.apply(RateLimit("openai", "429", 16, 32, 32, wait=5.0, throttled=3))
    assert board.progress_text() == "starting; openai 16/32 (429: waiting 5 s, concurrency 32 → 16)"
    board.apply(RateLimit("openai", "recovering", 17, 16, 32))  # why it is below 32 stays in view
    assert board.progress_text() == "starting; openai 17/32 (429: waiting 5 s, concurrency 32 → 16)"
    board.apply(RateLimit("openai", "recovering", 32, 31, 32))
    assert board.progress_text() == "starting"
