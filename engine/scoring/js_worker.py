"""The child process that runs `$js` in QuickJS: `python -m evalspec.scoring.js_worker PARENT_PID`.

Protocol: one JSON request per line on stdin, one JSON answer per line on stdout (see js_sandbox.py,
the parent side, for why the sandbox lives in its own process).

Everything that touches a value the script made runs INSIDE one `eval`, while QuickJS's interrupt
handler enforces the time limit: the script's completion value and anything it throws are described
by the harness below as JSON text (a primitive string, which the binding copies in C without running
any JavaScript). A thrown object's `toString`, a `stack` or `message` getter, a Proxy's traps: all run
under the limit. What can still leave the `eval` is QuickJS's own uncatchable "interrupted" error, and
the binding converts that outside the limit (it calls `toString` and reads `stack`, both of which a
script can redefine); if that ever hangs, the parent kills this process.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from typing import Any

DEFAULT_STACK_LIMIT = 512 * 1024
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# Installed before any user code runs, with the built-ins it needs captured in a closure, so a script
# that reassigns JSON or String cannot change how its own result is reported. Descriptions are
# null-prototype objects so that JSON.stringify finds no `toJSON` a script could plant.
_HARNESS = r"""
globalThis.__evalspec_run = (function (stringify, StringCtor, isArray, create, globalEval) {
  function rec() { return create(null); }
  function one(v) {
    var d = rec();
    if (v === undefined) { d.t = "undefined"; return d; }
    if (v === null) { d.t = "null"; return d; }
    var t = typeof v;
    d.t = t;
    if (t === "boolean") { d.v = v; return d; }
    if (t === "number") { d.v = StringCtor(v); return d; }  // keeps NaN, Infinity and -0
    if (t === "string") { d.v = v; return d; }
    if (t === "object") {
      d.t = isArray(v) ? "array" : "object";
      d.hasScore = ("score" in v);
      if (d.hasScore) {
        d.score = one(v.score);
        var explain = v.explain;
        if (typeof explain === "string") d.explain = explain;
      }
    }
    return d;
  }
  function thrown(e) {
    // The first line of String(e), as Node prints an uncaught value; converting can itself throw
    // (a null-prototype object, a throwing toString) or run out of time (then nothing here returns).
    var text;
    try { text = StringCtor(e); } catch (e2) { text = "a thrown value that cannot be converted to text"; }
    var out = rec();
    out.error = text;  // Python keeps the first line
    return stringify(out);
  }
  return function (src) {
    var value;
    try { value = globalEval(src); } catch (e) { return thrown(e); }
    try {
      var out = rec();
      out.ok = one(value);
      return stringify(out);
    } catch (e) { return thrown(e); }
  };
})(JSON.stringify, String, Array.isArray, Object.create, eval);
"""


def _die_with_parent(parent_pid: int) -> None:
    """A parent killed with SIGKILL runs no cleanup: ask the kernel to kill us with it (Linux)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if parent_pid and os.getppid() != parent_pid:  # the parent died before prctl took effect
        sys.exit(0)


def _classify(first: str) -> tuple[str, str]:
    if "stack size exceeded" in first or "stack overflow" in first:
        return "stack", "Maximum call stack size exceeded"
    if first.startswith("InternalError: interrupted"):
        return "timeout", "Script execution timed out."
    if "out of memory" in first:
        return "memory", "Script ran out of memory."
    if first.startswith("SyntaxError"):
        return "syntax", first
    return "runtime", first


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def _run(run: Any, quickjs: Any, source: str) -> dict[str, Any]:
    try:
        # The harness function itself (not a global the script could replace) runs the source with
        # an indirect eval, as a global script, as vm.runInContext does. The time limit covers the call.
        text = run(source)
    except (quickjs.JSException, quickjs.StackOverflow) as exc:
        kind, message = _classify(_first_line(str(exc)) or type(exc).__name__)
        return {"error": kind, "message": message}
    answer = json.loads(text)
    if "ok" in answer:
        return {"ok": answer["ok"]}
    kind, message = _classify(_first_line(answer["error"]))
    return {"error": kind, "message": message}


# The reference runs `$js` in a Node 20 vm context. quickjs-ng has built-ins Node 20 does not (ES2024-26:
# Object.groupBy, Set methods, iterator helpers, Float16Array …, and `performance`, `atob` …): a script
# that tests for them (`Object.groupBy ? … : …`) must see what the reference sees. A vm context has a
# `console` whose output goes nowhere: a script's console.log must not throw.
_NODE20 = r"""
(function () {
  var drop = function (o, names) { if (o) for (var i = 0; i < names.length; i++) delete o[names[i]]; };
  drop(Array, ["fromAsync"]);
  drop(ArrayBuffer.prototype, ["detached", "immutable", "sliceToImmutable", "transfer", "transferToFixedLength",
                               "transferToImmutable"]);
  drop(globalThis.Atomics, ["pause"]);
  drop(DataView.prototype, ["getFloat16", "setFloat16"]);
  drop(Error, ["isError", "prepareStackTrace"]);
  drop(Function.prototype, ["columnNumber", "fileName", "lineNumber"]);
  drop(JSON, ["isRawJSON", "rawJSON"]);
  drop(Map, ["groupBy"]);
  drop(Map.prototype, ["getOrInsert", "getOrInsertComputed"]);
  drop(WeakMap.prototype, ["getOrInsert", "getOrInsertComputed"]);
  drop(Math, ["f16round", "sumPrecise"]);
  drop(Object, ["groupBy"]);
  drop(Promise, ["try", "withResolvers"]);
  drop(RegExp, ["escape"]);
  drop(Set.prototype, ["difference", "intersection", "isDisjointFrom", "isSubsetOf", "isSupersetOf",
                       "symmetricDifference", "union"]);
  drop(Symbol, ["asyncDispose", "dispose"]);
  drop(Uint8Array, ["fromBase64", "fromHex"]);
  drop(Uint8Array.prototype, ["setFromBase64", "setFromHex", "toBase64", "toHex"]);
  if (globalThis.Iterator) drop(globalThis.Iterator.prototype, ["chunks", "constructor", "drop", "every", "filter",
      "find", "flatMap", "forEach", "includes", "join", "map", "reduce", "some", "take", "toArray", "windows"]);
  drop(globalThis, ["AsyncDisposableStack", "DisposableStack", "DOMException", "Float16Array", "InternalError",
                    "Iterator", "SuppressedError", "atob", "btoa", "performance", "queueMicrotask"]);
  var quiet = function () {};
  var names = ["log", "info", "warn", "error", "debug", "trace", "dir", "dirxml", "table", "group", "groupCollapsed",
               "groupEnd", "clear", "count", "countReset", "assert", "time", "timeEnd", "timeLog", "profile",
               "profileEnd", "timeStamp", "context"];
  var console = {};
  for (var i = 0; i < names.length; i++) console[names[i]] = quiet;
  Object.defineProperty(globalThis, "console", {value: console, writable: true, configurable: true, enumerable: false});
})();
"""


def handle(request: Mapping[str, Any]) -> dict[str, Any]:
    """One request: {source, bindings: {name: json text}, time_limit, memory_limit, body_retry}."""
    import quickjs

    ctx = quickjs.Context()  # a fresh runtime per call: nothing leaks from one script to the next
    ctx.set_memory_limit(int(request["memory_limit"]))
    ctx.set_max_stack_size(DEFAULT_STACK_LIMIT)
    ctx.eval(_HARNESS)
    # Values travel as JSON text: the binding layer only converts primitives, and JSON.parse builds
    # plain objects and arrays with no link back to Python.
    for name, text in request.get("bindings", {}).items():
        ctx.set("__evalspec_json", text)
        # `void`: the assignment's value would come back to Python, and a string holding a lone
        # surrogate cannot (UnicodeDecodeError).
        ctx.eval(f"void (globalThis[{json.dumps(name)}] = JSON.parse(__evalspec_json));")
    run = ctx.get("__evalspec_run")
    ctx.eval("delete globalThis.__evalspec_json; delete globalThis.__evalspec_run;")
    ctx.eval(_NODE20)
    ctx.set_time_limit(float(request["time_limit"]))  # counted per call into JavaScript
    # A lone surrogate cannot cross into QuickJS as text (the binding encodes UTF-8); as its escape it
    # means the same inside a string or regex literal, and is the same syntax error elsewhere.
    source = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", request["source"])
    answer = _run(run, quickjs, source)
    # The reference's `$js` rule: a script with a top-level `return` does not parse; run it as a
    # function body instead. A parse error is raised before anything runs, so nothing is repeated.
    if request.get("body_retry") and answer.get("error") == "syntax" and "return" in answer["message"]:
        answer = _run(run, quickjs, f"(() => {{\n{source}\n}})();")
        answer["retried"] = True
    return answer


def main(argv: list[str]) -> int:
    _die_with_parent(int(argv[1]) if len(argv) > 1 else 0)
    import quickjs  # noqa: F401  (imported before the first request, so it is not timed)

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        try:
            answer = handle(json.loads(line))
        except Exception as exc:  # a bug of ours, not the script's: report it, keep serving
            answer = {"error": "internal", "message": f"{type(exc).__name__}: {exc}"}
        # ASCII escapes: a script's string may hold a lone surrogate ('\ud800'), which UTF-8 cannot
        # encode (the worker died on it, twice, and the point was a "crash").
        stdout.write(json.dumps(answer, ensure_ascii=True).encode("ascii") + b"\n")
        stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
