"""A JavaScript sandbox for `$js` points and `tool_args_match` expressions: QuickJS, in process.

Why QuickJS (the `quickjs-ng` package) rather than Node: it is a library with no file, network,
process or module access at all (only the ECMAScript built-ins exist, like Node's `vm` context the
reference uses), so there is nothing to lock down; a fresh runtime costs ~0.1 ms, so every call gets
its own (no state leaks between points, and a runaway script cannot poison the next one); the
runtime enforces a wall-clock limit (infinite loops and catastrophic regex backtracking are both
interrupted) and a memory limit; and it releases the GIL while running.

The older `quickjs` package was rejected: its regex engine ignores the time limit, so
`/(a+)+$/.test('a'.repeat(40) + '!')` hangs the process.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import quickjs

DEFAULT_TIME_LIMIT_S = 0.1  # the reference's vm timeout (100 ms)
DEFAULT_MEMORY_LIMIT = 64 * 1024 * 1024
DEFAULT_STACK_LIMIT = 512 * 1024

# Installed before any user code runs, with the built-ins it needs captured in a closure, so a script
# that reassigns JSON or String cannot change how its own result is reported.
_HARNESS = r"""
globalThis.__evalspec_describe = (function (stringify, StringCtor, isArray) {
  function one(v) {
    if (v === undefined) return {t: "undefined"};
    if (v === null) return {t: "null"};
    var t = typeof v;
    if (t === "boolean") return {t: t, v: v};
    if (t === "number") return {t: t, v: StringCtor(v)};  // keeps NaN, Infinity and -0
    if (t === "string") return {t: t, v: v};
    if (t === "object") {
      var d = {t: isArray(v) ? "array" : "object", hasScore: ("score" in v)};
      if (d.hasScore) {
        d.score = one(v.score);
        if (typeof v.explain === "string") d.explain = v.explain;
      }
      return d;
    }
    return {t: t};
  }
  return function (v) { return stringify(one(v)); };
})(JSON.stringify, String, Array.isArray);
"""


class JsSandboxError(Exception):
    """The script threw, did not parse, ran out of time or memory. `kind` says which."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "syntax" | "runtime" | "timeout" | "memory" | "stack"
        self.message = message
        self.on_retry = False  # raised by the function-body retry of evaluate_script_or_body


@dataclass(frozen=True)
class JsValue:
    """What a script returned, described JavaScript-side (Python never sees a live JS object).

    `type` is `typeof`, except "null" and "array" are told apart. `value` holds booleans, numbers
    (as float, including nan/inf) and strings. For an object with a `score` member, `score` describes
    that member and `explain` is its `explain` when that is a string.
    """

    type: str
    value: bool | float | str | None = None
    has_score: bool = False
    score: JsValue | None = None
    explain: str | None = None


def _decode(d: Mapping[str, Any]) -> JsValue:
    t = d["t"]
    if t == "number":
        return JsValue("number", float(d["v"]))  # float() accepts "NaN", "Infinity", "-Infinity"
    if t in ("boolean", "string"):
        return JsValue(t, d["v"])
    if t in ("object", "array"):
        has_score = bool(d.get("hasScore"))
        return JsValue(t, None, has_score, _decode(d["score"]) if has_score else None, d.get("explain"))
    return JsValue(t)


def _error(exc: Exception) -> JsSandboxError:
    text = str(exc)
    first = text.splitlines()[0] if text else type(exc).__name__
    if isinstance(exc, quickjs.StackOverflow) or "stack size exceeded" in first or "stack overflow" in first:
        return JsSandboxError("stack", "Maximum call stack size exceeded")
    if first.startswith("InternalError: interrupted"):
        return JsSandboxError("timeout", "Script execution timed out.")
    if "out of memory" in first:
        return JsSandboxError("memory", "Script ran out of memory.")
    if first.startswith("SyntaxError"):
        return JsSandboxError("syntax", first)
    # A thrown non-Error value (`throw 5`) comes back as "5\nundefined": keep the value only.
    return JsSandboxError("runtime", first)


class _Runtime:
    """One fresh QuickJS runtime + context, limits set, harness installed."""

    def __init__(self, time_limit_s: float, memory_limit: int) -> None:
        self.ctx = quickjs.Context()
        self.ctx.set_memory_limit(memory_limit)
        self.ctx.set_max_stack_size(DEFAULT_STACK_LIMIT)
        self.ctx.eval(_HARNESS)
        self.ctx.set_time_limit(time_limit_s)  # counted per eval call

    def bind(self, bindings: Mapping[str, Any]) -> None:
        # Values travel as JSON text: the binding layer only converts primitives, and JSON.parse
        # builds plain objects and arrays with no link back to Python.
        for name, value in bindings.items():
            self.ctx.set("__evalspec_json", json.dumps(value, ensure_ascii=False, allow_nan=False))
            self.ctx.eval(f"globalThis[{json.dumps(name)}] = JSON.parse(__evalspec_json);")
        self.ctx.eval("delete globalThis.__evalspec_json;")

    def run(self, source: str) -> JsValue:
        self.ctx.set("__evalspec_src", source)
        try:
            # Indirect eval runs the source as a global script, as vm.runInContext does.
            described = self.ctx.eval("__evalspec_describe((0, eval)(__evalspec_src))")
        except quickjs.JSException as exc:
            raise _error(exc) from None
        except quickjs.StackOverflow as exc:
            raise _error(exc) from None
        return _decode(json.loads(described))


def evaluate(source: str, bindings: Mapping[str, Any] | None = None, *,
             time_limit_s: float = DEFAULT_TIME_LIMIT_S, memory_limit: int = DEFAULT_MEMORY_LIMIT) -> JsValue:
    """Run `source` as a script with JSON-able `bindings` as globals; return its completion value."""
    runtime = _Runtime(time_limit_s, memory_limit)
    if bindings:
        runtime.bind(bindings)
    return runtime.run(source)


def evaluate_script_or_body(source: str, bindings: Mapping[str, Any] | None = None, *,
                            time_limit_s: float = DEFAULT_TIME_LIMIT_S,
                            memory_limit: int = DEFAULT_MEMORY_LIMIT) -> tuple[JsValue, bool]:
    """The reference's `$js` rule: run as a script; if it has a top-level `return`, run it as a
    function body instead. Returns (value, whether it was retried as a body).

    A parse error is raised before anything runs, so the retry never repeats side effects.
    """
    runtime = _Runtime(time_limit_s, memory_limit)
    if bindings:
        runtime.bind(bindings)
    try:
        return runtime.run(source), False
    except JsSandboxError as exc:
        if exc.kind != "syntax" or "return" not in exc.message:
            raise
    try:
        return runtime.run(f"(() => {{\n{source}\n}})();"), True
    except JsSandboxError as exc:
        exc.on_retry = True
        raise
