"""Adaptive concurrency for one provider and API key: fewer calls at once when the provider pushes back.

One `AdaptiveLimit` per (endpoint, key) of a run, shared by every model and judge on that key. It holds a
concurrency `limit` between 1 and the user's `ceiling`, and a pause (`paused_until`, from Retry-After or
rate-limit headers). The limit halves when throttled answers (429; 529; 503 with Retry-After) come as a
storm — at least two, and at least STORM_SHARE, of the last `max(20, 2 × ceiling)` answers, once per wave
of calls — while an isolated 429 is only retried (529 and 503 halve at once). Under 10 % of a request
quota left (`x-ratelimit-remaining-requests`, `anthropic-ratelimit-requests-remaining`) calls start no
faster than the quota refills; a token quota under 10 % halves the limit, at 0 pauses the lane. After
`limit` successes in a row with room left the limit grows by one. A lane with nothing but throttled
answers for `max_wait` seconds gives up: its calls fail at once with the reason.

Calls take a slot per attempt (`acquire` / `release`, providers/retry.py). Every change is reported to
`on_change` as a `LimitChange` (the runner's `RateLimit` event for the progress line).
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from evalspec.providers.base import RATE_LIMIT, ProviderError

LOW_HEADROOM = 0.10  # remaining under this share of the limit: slow down before the wall
PACE_MARGIN = 1.1  # pacing starts calls this much slower than the quota refills
MAX_PAUSE = 60.0  # the longest a reset header may pause a lane (a Retry-After is capped by the RetryPolicy)
DEFAULT_MAX_WAIT = 300.0  # seconds of nothing but throttled answers before a lane gives up
STORM_SHARE = 0.10  # throttled answers among the recent ones that make a storm (and halve the limit)


def is_throttle(status: int | None, retry_after: float | None = None) -> bool:
    """An answer that means "too many calls": 429, 529 (Anthropic overloaded), 503 with Retry-After."""
    return status == 429 or status == 529 or (status == 503 and retry_after is not None)


# --- reading the headers -------------------------------------------------------------------------------

_GO_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|h|m|s)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str | None) -> float | None:
    """OpenAI's reset headers are Go durations ("1s", "6m0s", "120ms", "1h2m3.5s"); a bare number is
    seconds. None when unreadable."""
    if not text:
        return None
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        # One match at each place the last one ended (`finditer` tried every start in a run of digits
        # against the rest of it: quadratic in a provider's header).
        pos, total = 0, 0.0
        while pos < len(text):
            m = _GO_DURATION.match(text, pos)
            if m is None:
                return None
            total += float(m.group(1)) * _UNIT[m.group(2)]
            pos = m.end()
        if pos == 0:
            return None
        return total if math.isfinite(total) else None
    return value if math.isfinite(value) and value >= 0 else None


def parse_reset_time(text: str | None, now: float | None = None) -> float | None:
    """Anthropic's reset headers are RFC 3339 times; seconds from now (≥ 0), None when unreadable."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True, slots=True)
class Headroom:
    """What one pair of rate-limit headers says: `remaining` of `limit` (None: not sent) for a
    `quota` ("requests", "tokens", "input tokens", "output tokens"), full again in `reset` seconds."""

    quota: str
    remaining: int
    limit: int | None
    reset: float | None
    header: str  # the remaining-header's name, for messages

    @property
    def exhausted(self) -> bool:
        return self.remaining <= 0

    def low(self, concurrency: int) -> bool:
        if self.limit:
            return self.remaining < self.limit * LOW_HEADROOM
        # No limit sent: fewer requests left than calls about to be made is low; tokens cannot be judged.
        return self.quota == "requests" and self.remaining < concurrency

    def describe(self) -> str:
        of = f" of {self.limit:,}" if self.limit else ""
        return f"{self.quota} remaining {self.remaining:,}{of}"


# (quota, remaining header, limit header, reset header, reset parser)
_OPENAI = tuple(
    (quota.replace("-", " "), f"x-ratelimit-remaining-{quota}", f"x-ratelimit-limit-{quota}",
     f"x-ratelimit-reset-{quota}", parse_duration)
    for quota in ("requests", "tokens"))
_ANTHROPIC = tuple(
    (quota.replace("-", " "), f"anthropic-ratelimit-{quota}-remaining", f"anthropic-ratelimit-{quota}-limit",
     f"anthropic-ratelimit-{quota}-reset", parse_reset_time)
    for quota in ("requests", "tokens", "input-tokens", "output-tokens"))
_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")
# Every quota these headers report has a remaining-header: an answer without any has none of them.
_REMAINING = tuple(rem for _, rem, _, _, _ in (*_OPENAI, *_ANTHROPIC))


def rate_limit_headers(headers: Any) -> dict[str, str] | None:
    """The rate-limit headers of an answer (names lower-cased), None when it has none. This runs on
    every answer and most have none: case-insensitive header maps (aiohttp's, httpx's) are probed for
    the six remaining-headers first (~0.2 µs), and read in full only when one is there."""
    if not isinstance(headers, dict):
        for name in _REMAINING:
            if name in headers:
                break
        else:
            return None
    found: dict[str, str] | None = None
    for k, v in headers.items():
        k = str(k).lower()
        if k.startswith(_PREFIXES):
            if found is None:
                found = {}
            found[k] = str(v)
    return found


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(float(text.strip()))
    except ValueError:
        return None


def read_headroom(headers: Mapping[str, str]) -> list[Headroom]:
    """Every quota the (lower-cased) rate-limit headers report."""
    out: list[Headroom] = []
    for quota, rem_h, lim_h, reset_h, parse in (*_OPENAI, *_ANTHROPIC):
        remaining = _int(headers.get(rem_h))
        if remaining is None:
            continue
        limit = _int(headers.get(lim_h))
        out.append(Headroom(quota, max(0, remaining), limit if limit and limit > 0 else None,
                            parse(headers.get(reset_h)), rem_h))
    return out


# --- the limit ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LimitChange:
    """One change of a lane: its concurrency went `before` → `after` (of `ceiling`), and/or it pauses
    `wait` seconds, and/or it paces its calls to `pace` requests a second (0: no pacing), because of
    `reason` ("429", "529", "503", "requests remaining 3 of 500", "recovering", "gave up").
    `throttled` counts the lane's throttled answers so far."""

    lane: str
    reason: str
    before: int
    after: int
    ceiling: int
    wait: float = 0.0
    throttled: int = 0
    gave_up: bool = False
    pace: float = 0.0


OnChange = Callable[[LimitChange], Any]


class AdaptiveLimit:
    """The concurrency of one provider and key; see the module's docstring."""

    def __init__(self, label: str, ceiling: int, *, on_change: OnChange | None = None,
                 shared: asyncio.Semaphore | None = None, max_wait: float = DEFAULT_MAX_WAIT,
                 max_pause: float = MAX_PAUSE) -> None:
        self.label = label
        self.ceiling = max(1, int(ceiling))
        self.limit = self.ceiling
        self.on_change = on_change
        self.shared = shared  # the run's global --concurrency, taken after a slot of this lane
        self.max_wait = max_wait
        # No pause outlasts the give-up bound: a reset header of "99999h" under --max-wait 10 paused
        # the lane for max_pause (60 s) before it noticed it had given up.
        self.max_pause = min(max_pause, max(max_wait, 0.0))
        self.in_flight = 0
        self.paused_until = 0.0  # loop time: no call starts before it
        self.interval = 0.0  # pacing: seconds between two starts (0: none)
        self.generation = 0  # bumped by each decrease; a call's answer names the one it started in
        self.throttled = 0  # throttled answers seen
        self.lowest = self.ceiling
        self.failure: ProviderError | None = None
        self._successes = 0
        self._throttled_since: float | None = None  # first throttle since the last success
        self._last_throttle = ""  # its status, for the message when the lane gives up
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._recent: deque[bool] = deque(maxlen=max(20, 2 * self.ceiling))  # the last answers: throttled?
        self._recent_throttled = 0

    # --- slots ---------------------------------------------------------------------------------------
    async def acquire(self, *, retry: bool = False) -> int:
        """Wait for a slot (a retry goes ahead of first attempts); return the generation. Raises the
        lane's ProviderError once it has given up."""
        if self.failure is not None:
            raise self.failure
        loop = asyncio.get_running_loop()
        now = loop.time()
        if not self._waiters and self.in_flight < self.limit and now >= self.paused_until:
            self._start(now)
        else:
            fut: asyncio.Future[None] = loop.create_future()
            if retry:
                self._waiters.appendleft(fut)
            else:
                self._waiters.append(fut)
            if self.in_flight < self.limit:  # else there is no slot to grant: the next release wakes them
                self._wake()
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():  # granted, then cancelled: hand the slot on
                    self.in_flight -= 1
                    self._wake()
                raise
        if self.shared is not None:
            try:
                await self.shared.acquire()
            except BaseException:
                self.in_flight -= 1
                self._wake()
                raise
        return self.generation

    def _start(self, now: float) -> None:
        self.in_flight += 1
        if self.interval:
            self.paused_until = now + self.interval  # the next call starts one interval later

    def release(self) -> None:
        if self.shared is not None:
            self.shared.release()
        self.in_flight -= 1
        if self._waiters:
            self._wake()

    def _wake(self) -> None:
        """Grant slots to waiters while the limit allows and the lane is not paused; else arm a timer
        for the end of the pause."""
        waiters = self._waiters
        if self.failure is not None:
            while waiters:
                fut = waiters.popleft()
                if not fut.done():
                    fut.set_exception(self.failure)
            return
        loop = asyncio.get_running_loop()
        while waiters and self.in_flight < self.limit:
            now = loop.time()
            if now < self.paused_until:
                if self._timer is None or self._timer.when() != self.paused_until:
                    if self._timer is not None:
                        self._timer.cancel()
                    self._timer = loop.call_at(self.paused_until, self._on_timer)
                return
            fut = waiters.popleft()
            if fut.done():  # cancelled while waiting
                continue
            self._start(now)
            fut.set_result(None)

    def _on_timer(self) -> None:
        self._timer = None
        if self.failure is None and self._throttled_since is not None:
            self._check_give_up(asyncio.get_running_loop().time())
        self._wake()

    # --- what the server said ------------------------------------------------------------------------
    def observe(self, status: int, headers: Any, generation: int, retry_after: float | None = None) -> None:
        """Adapt to one answer: `status`, its headers (httpx.Headers or a mapping), the generation its
        call started in (`self.generation` when it was sent), the Retry-After it carried (seconds)."""
        if 200 <= status < 300:  # most answers (never a throttle)
            self._remember(False)
            self._success(generation, rate_limit_headers(headers))
        elif is_throttle(status, retry_after):
            self._remember(True)
            self._throttle(str(status), generation, retry_after, rate_limit_headers(headers))

    def _remember(self, throttled: bool) -> None:
        recent = self._recent
        if len(recent) == recent.maxlen and recent[0]:
            self._recent_throttled -= 1
        recent.append(throttled)
        self._recent_throttled += throttled

    @property
    def storm(self) -> bool:
        """Throttled answers come in numbers, not one by one (see the module's docstring)."""
        n = self._recent_throttled
        return n >= 2 and n >= STORM_SHARE * len(self._recent)

    def _success(self, generation: int, rate: dict[str, str] | None) -> None:
        self._throttled_since = None
        if not rate:  # most answers: no rate-limit headers, nothing to read
            if self.limit < self.ceiling:
                self._recover()
            return
        quotas = read_headroom(rate)
        requests = next((q for q in quotas if q.quota == "requests"), None)
        if requests is not None and self._pace(requests):
            return
        for q in quotas:
            if q.quota == "requests":
                continue
            if q.exhausted:  # a token quota used up: wait for its reset
                self._decrease(q.describe(), generation, min(q.reset or 1.0, self.max_pause))
                return
            if q.low(self.limit):
                self._decrease(q.describe(), generation, 0.0)
                return
        if self.limit < self.ceiling:
            self._recover()

    def _recover(self) -> None:
        """One more success with room left: after `limit` in a row the limit grows by one."""
        self._successes += 1
        if self._successes >= self.limit:
            self._set(self.limit + 1, "recovering", 0.0)

    def _pace(self, q: Headroom) -> bool:
        """Requests running low: start calls no faster than the quota refills, i.e. `limit - remaining`
        requests per `reset` (OpenAI's and Anthropic's buckets refill continuously), until an answer
        shows room again. True while pacing (the concurrency then neither grows nor shrinks: the pace
        holds the calls under the wall, and a lower concurrency would only waste it)."""
        # Low: under 10 % of the limit, or fewer left than calls about to start; pacing ends only
        # with twice that left, so that it does not flap on every answer.
        threshold = max((q.limit or 0) * LOW_HEADROOM, self.limit) * (2 if self.interval else 1)
        if q.remaining >= threshold:
            if self.interval:
                self.interval = 0.0
                self._notify("requests left again: pacing ended", self.limit, self.limit, 0.0)
            return False
        if q.limit and q.reset and q.limit > q.remaining:
            # 10 % under the refill rate: at the exact rate, jitter would still meet the wall.
            interval = PACE_MARGIN * q.reset / (q.limit - q.remaining)
        elif q.exhausted:
            interval = min(q.reset or 1.0, self.max_pause)  # no refill rate known: wait for the reset
        else:
            return False
        interval = min(interval, self.max_pause)
        was = self.interval
        self.interval = interval
        if q.exhausted:
            loop_now = asyncio.get_running_loop().time()
            self.paused_until = max(self.paused_until, loop_now + interval)
        if not was or abs(interval - was) > 0.25 * was:  # a new pace, not every small change
            self._notify(q.describe(), self.limit, self.limit, 0.0, pace=1.0 / interval)
        self._successes = 0
        return True

    def _throttle(self, reason: str, generation: int, retry_after: float | None,
                  rate: dict[str, str] | None) -> None:
        self.throttled += 1
        self._last_throttle = reason
        self._successes = 0
        now = asyncio.get_running_loop().time()
        if self._throttled_since is None:
            self._throttled_since = now
        wait = retry_after
        if wait is None and rate:  # no Retry-After: the reset of an exhausted quota says when
            resets = [q.reset for q in read_headroom(rate) if q.exhausted and q.reset is not None]
            wait = max(resets) if resets else None
        wait = min(wait, self.max_pause) if wait is not None else 0.0
        if self._check_give_up(now):
            return
        # An overloaded server (529, 503) is a capacity signal: fewer calls at once right away.
        if not self._decrease(reason, generation, wait, halve=self.storm or reason != "429"):
            self._notify(reason, self.limit, self.limit, 0.0)  # counted (`throttled`), nothing changed

    def _check_give_up(self, now: float) -> bool:
        since = self._throttled_since
        if since is None or now - since < self.max_wait:
            return False
        self.failure = ProviderError(
            RATE_LIMIT,
            f"{self.label}: gave up after {now - since:.0f} s of nothing but rate-limit answers "
            f"({self.throttled} throttled, the last HTTP {self._last_throttle}); the calls still waiting for it "
            "were not made "
            "(run them later with --retry-errors)",
            429, False, provider=self.label)
        self._notify("gave up", self.limit, self.limit, 0.0, gave_up=True)
        self._wake()
        return True

    def _decrease(self, reason: str, generation: int, wait: float, *, halve: bool = True) -> bool:
        """Halve the limit (once per generation, when `halve`) and/or pause `wait` seconds; report what
        changed (True when something was reported)."""
        now = asyncio.get_running_loop().time()
        before = self.limit
        after = max(1, before // 2) if halve and generation == self.generation else before
        was_paused = now < self.paused_until
        longer = wait > 0 and now + wait > self.paused_until + 0.05  # a pause ending later than the current
        if longer:
            self.paused_until = now + wait
        reported = True
        if after != before:
            self.generation += 1
            # The pause still running is part of the change (a storm's first 429 started it).
            self._set(after, reason, wait if longer else max(0.0, self.paused_until - now))
        elif longer and not was_paused:
            self._notify(reason, before, before, wait)
        else:
            reported = False
        self._successes = 0
        if longer:
            self._wake()  # arms the timer that ends the pause
        return reported

    def _set(self, limit: int, reason: str, wait: float) -> None:
        before, self.limit = self.limit, limit
        self.lowest = min(self.lowest, limit)
        self._successes = 0
        self._notify(reason, before, limit, wait)
        if limit > before and self._waiters:
            self._wake()

    def _notify(self, reason: str, before: int, after: int, wait: float, *, gave_up: bool = False,
                pace: float = 0.0) -> None:
        if self.on_change is not None:
            self.on_change(LimitChange(self.label, reason, before, after, self.ceiling, round(wait, 3),
                                       self.throttled, gave_up, round(pace, 2)))

    def __repr__(self) -> str:
        return f"AdaptiveLimit({self.label!r}, {self.limit}/{self.ceiling}, in flight {self.in_flight})"
