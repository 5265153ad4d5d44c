"""The function stage of scoring Weval: its function points, the checks that need no judge (LLM judges are
score/judges.py; AgentV's deterministic assertions score/agentv_entries.py, so neither format's run loads
the other's scorers).

Weval: turns model Points into the reference's PointAssessment objects (keyPointText, coverageExtent,
reflection, error, multiplier, citation, isInverted, pathId; judges add their fields), runs `$call`
over HTTP and `$js` off the event loop, and leaves the arithmetic (classification scale, consensus,
the two-halves aggregation, rounding) to scoring/weval_aggregate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from ...jsonio import loads
from ...registry.stages import Stage, on_change
from ...registry.weval_functions import POINT_FUNCTIONS
from ...scoring.js_text import to_fixed
from ...scoring.weval_points import (
    CallArgError,
    PointContext,
    PointScore,
    call_inline_config,
    call_request_body,
    call_result,
    call_uses_service,
    evaluate_point,
)
from ...weval.model import Point, reference_fn_name
from ..write.jsjson import js_stringify

_STAGES: dict[str, Stage] = {}  # a function's stage, by name (the hot path: every point of every cell)
on_change(_STAGES.clear)


def stage_of(fn: str) -> Stage:
    """The stage its registry entry declares for a function (an unknown name: FUNCTION, which reports it)."""
    got = _STAGES.get(fn)
    if got is None:
        entry = POINT_FUNCTIONS.get(fn)
        got = _STAGES[fn] = entry.stage if entry is not None else Stage.FUNCTION
    return got


# --- Weval ----------------------------------------------------------------------------------------

def display_text(point: Point) -> str:
    """The reference's keyPointText: the criterion, or `Function: name(<JSON of the argument>)`."""
    if point.kind == "text":
        return point.text or ""
    arg = "undefined" if point.fn_args is None else js_stringify(point.fn_args)
    return f"Function: {reference_fn_name(point.fn_written or point.fn or '')}({arg})"


def base_assessment(point: Point) -> dict[str, Any]:
    out: dict[str, Any] = {"keyPointText": display_text(point), "multiplier": point.weight}
    if point.citation is not None:
        out["citation"] = point.citation
    out["isInverted"] = point.inverted
    if point.path_id is not None:
        out["pathId"] = point.path_id
    return out


class AssessmentBases:
    """Each point's fixed assessment fields (text, weight, path…), computed once for all models; a
    fresh copy per cell. `shared=False` (a plan with one cell a prompt): each point is assessed once, so
    its fields are made for it and nothing is remembered."""

    BOUND = 2048  # points remembered (with their prompts' other fields: 8,192 were ~5 MB)

    def __init__(self, *, shared: bool = True) -> None:
        self._bases: dict[int, tuple[Point, dict[str, Any]]] = {}
        self.shared = shared

    def __call__(self, point: Point) -> dict[str, Any]:
        if not self.shared:
            return base_assessment(point)
        # Keyed by id() with the point kept beside its base: key points extracted from an ideal are new
        # Point objects, and an id freed by one of them and reused by the next would hand the second
        # point the first one's text.
        key = id(point)
        cached = self._bases.get(key)
        if cached is None or cached[0] is not point:
            if len(self._bases) >= self.BOUND:  # bounded (a prompt's cells run close together): not a run's worth
                self._bases.clear()
            cached = self._bases[key] = (point, base_assessment(point))
        return dict(cached[1])


def scored_at_once(point: Point) -> bool:
    """Most points are plain string checks: scored right away, no task, no await."""
    return point.kind == "fn" and (_STAGES.get(point.fn or "") or stage_of(point.fn or "")) is Stage.FUNCTION


def function_point(point: Point, subject: str, ctx: PointContext, base: dict[str, Any]) -> dict[str, Any]:
    """The assessment of a point that is `scored_at_once`."""
    return function_assessment(point, evaluate_point(point.fn or "", point.fn_args, subject, ctx), base)


def function_assessment(point: Point, result: PointScore, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """As the reference's createAssessmentFromResult: inverted for should_not, a default reflection."""
    out = base if base is not None else base_assessment(point)
    if result.score is None:
        error = result.error or "Point function returned no score."
        out["coverageExtent"] = None
        out["reflection"] = f"Error: {error}"
        out["error"] = error
        return out
    score = 1.0 - result.score if point.inverted else result.score
    out["coverageExtent"] = score
    name = reference_fn_name(point.fn_written or point.fn or "")
    out["reflection"] = result.explain or f"Function '{name}' evaluated to {to_fixed(score, 2)}."
    return out


async def score_function_point(point: Point, subject: str, ctx: PointContext, *,
                               services: Mapping[str, Any], client: Any, env: Mapping[str, str]) -> dict[str, Any]:
    fn = point.fn or ""
    stage = stage_of(fn)
    if stage is Stage.SERVICE:  # `$call`: over HTTP, with the run's client
        result = await call_point(point.fn_args, subject, ctx, services=services, client=client, env=env)
    elif stage is Stage.SANDBOX:  # `$js`: QuickJS for up to 100 ms, off the event loop so the calls go on
        result = await asyncio.to_thread(evaluate_point, fn, point.fn_args, subject, ctx)
    else:
        result = evaluate_point(fn, point.fn_args, subject, ctx)
    return function_assessment(point, result)


async def call_point(arg: Any, subject: str, ctx: PointContext, *, services: Mapping[str, Any], client: Any,
                     env: Mapping[str, str]) -> PointScore:
    """`$call`: POST {response, modelId, promptId, …params} to a service from `externalServices` or an
    inline url, with its retries and timeout; score its `{score, explain}` answer."""
    try:
        request = call_request_body(arg, subject, ctx)
    except CallArgError as exc:
        return PointScore(None, None, str(exc))
    if call_uses_service(arg):
        service = services.get(request.target)
        if not isinstance(service, Mapping) or not service.get("url"):
            known = ", ".join(sorted(services)) or "none"
            return PointScore(None, None, f"External service '{request.target}' is not defined in "
                              f"externalServices (defined: {known})")
        config = {"method": "POST", "timeout_ms": 30000, "max_retries": 2, "retry_backoff_ms": 1000, **service}
    else:
        config = call_inline_config(arg)
    try:
        headers = _headers(config.get("headers"), env)
    except Exception as exc:  # a missing ${VAR}: a ProviderError with the variable's name
        return PointScore(None, None, f"External service call failed: {exc}")
    retries = max(0, int(config.get("max_retries") or 0))
    backoff = max(0.0, float(config.get("retry_backoff_ms") or 0) / 1000.0)
    timeout = max(0.001, float(config.get("timeout_ms") or 30000) / 1000.0)
    last = "no attempt"
    from ...providers.http import request_capped, too_large

    for attempt in range(retries + 1):
        if attempt:
            await asyncio.sleep(backoff * (2 ** (attempt - 1)))
        try:  # one deadline for the whole exchange, the answer read to the run's size cap
            status, content = await request_capped(client, str(config.get("method") or "POST").upper(),
                                                   str(config["url"]), json=request.body, headers=headers,
                                                   timeout=timeout)
        except TimeoutError:
            last = f"no answer within {timeout:g} s"
            continue
        except Exception as exc:  # httpx.TransportError, TimeoutException: retried; an answer too large is not
            refused = too_large(exc)
            if refused is not None:
                return PointScore(None, None, f"External service call failed: {refused}")
            last = type(exc).__name__ if not str(exc) else f"{type(exc).__name__}: {exc}"
            continue
        if status >= 500 or status == 429:
            last = f"HTTP {status}"
            continue
        if status >= 300:
            return PointScore(None, None, f"External service call failed: HTTP {status}")
        try:
            payload = loads(content)  # nested too deeply is a ValueError too (jsonio)
        except ValueError:
            return PointScore(None, None, "External service call failed: the answer is not JSON")
        return call_result(payload)
    from ...providers.redact import redact

    return PointScore(None, None, redact(f"External service call failed: {last}"))


def _headers(raw: Any, env: Mapping[str, str]) -> dict[str, str]:
    from ...providers.envvars import expand, references
    from ...providers.redact import is_sensitive_header, register_secret

    out = {"content-type": "application/json"}
    for k, v in (raw or {}).items() if isinstance(raw, Mapping) else ():
        value = str(v)
        sensitive = is_sensitive_header(str(k))
        if references(value):
            value = expand(value, env, f"service header {k}", secret=sensitive)
        if sensitive:
            register_secret(value)
            register_secret(value.partition(" ")[2])
        out[str(k)] = value
    return out
