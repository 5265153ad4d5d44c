#!/usr/bin/env python3
"""What a regex check costs: QuickJS (evalspec.scoring.js_regex) beside the Python translation it replaced.

    python bench/regex_engine.py [--n 20000] [--no-translation]

Prints microseconds per `test` for: realistic patterns on a ~1.5 KB answer (the compiled RegExp cached in
the thread's runtime; the answer the same as the previous call's, as for a blueprint's points on one
answer, or a new one each call), a new pattern every call (compiled each time), a 1 MB answer, the same
work on 4 threads at once, and the cost of a thread's first call (its runtime made). Beside each, the
translation into Python's `regex` that scored regexes until issue 25 (`engine/scoring/js_regex.py` at
92f0b7c, loaded from git; skipped when git or the `regex` package is missing). Asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

from evalspec.scoring import js_regex

ROOT = Path(__file__).resolve().parents[1]
PATTERNS = [("^The ruling states", ""), ("\\bfiduciary duty\\b", "i"), ("\\d{4}-\\d{2}-\\d{2}", ""),
            ("(?:yes|no)\\.?$", "i"), ("[A-Z][a-z]+ v\\. [A-Z][a-z]+", ""), ("^\\s*\\{[\\s\\S]*\\}\\s*$", ""),
            ("(?<=\\$)\\d+(?:\\.\\d{2})?", ""), ("I (?:cannot|can't|won't)", "i")]
ANSWER = ("The ruling states that the trustee owed a fiduciary duty to the beneficiaries, and that on "
          "2021-03-04 the duty was breached when the assets ($12,500.00) were moved. " * 10)


def translation() -> ModuleType | None:
    """The removed translator, from git history, as evalspec.scoring._js_regex_translation."""
    try:
        import regex  # noqa: F401
        source = subprocess.run(["git", "-C", str(ROOT), "show", "92f0b7c:engine/scoring/js_regex.py"],
                                capture_output=True, text=True, check=True).stdout
    except (ImportError, OSError, subprocess.CalledProcessError):
        return None
    name = "evalspec.scoring._js_regex_translation"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "evalspec.scoring"
    sys.modules[name] = module
    exec(compile(source, "js_regex@92f0b7c", "exec"), module.__dict__)
    return module


def per_call_us(fn: Callable[[int], object], n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - start) / n * 1e6


def threaded_us(fn: Callable[[int], object], n: int, threads: int = 4) -> float:
    """Wall time per call with `threads` threads each making n // threads calls."""
    def work(_: int) -> None:
        for i in range(n // threads):
            fn(i)
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda _: None, range(threads)))  # threads (and, for QuickJS, nothing else) made first
        start = time.perf_counter()
        list(pool.map(work, range(threads)))
    return (time.perf_counter() - start) / n * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--no-translation", action="store_true")
    args = parser.parse_args()
    n = args.n
    old = None if args.no_translation else translation()
    big = "x " * 500_000 + "The ruling states"

    answers = [ANSWER[:-1] + str(i % 1000) for i in range(1000)]  # distinct string objects

    def quickjs(text: str | None, fresh: bool = False) -> Callable[[int], object]:
        def call(i: int) -> object:
            pattern, flags = PATTERNS[i % len(PATTERNS)]
            return js_regex.js_regex_test(pattern + (f"|z{i}q" if fresh else ""),
                                          answers[i % 1000] if text is None else text, flags)
        return call

    def translated(text: str | None, fresh: bool = False) -> Callable[[int], object]:
        assert old is not None

        def call(i: int) -> object:
            pattern, flags = PATTERNS[i % len(PATTERNS)]
            return old.js_regex_search(pattern + (f"|z{i}q" if fresh else ""),
                                       answers[i % 1000] if text is None else text, flags)
        return call

    rows: list[tuple[str, Callable[[], float], Callable[[], float] | None]] = [
        ("cached pattern, same 1.5 KB answer", lambda: per_call_us(quickjs(ANSWER), n),
         (lambda: per_call_us(translated(ANSWER), n)) if old else None),
        ("cached pattern, new answer each call", lambda: per_call_us(quickjs(None), n),
         (lambda: per_call_us(translated(None), n)) if old else None),
        ("new pattern every call", lambda: per_call_us(quickjs(ANSWER, True), n // 4),
         (lambda: per_call_us(translated(ANSWER, True), n // 4)) if old else None),
        ("1 MB answer", lambda: per_call_us(quickjs(big), 200),
         (lambda: per_call_us(translated(big), 200)) if old else None),
        ("4 threads, cached pattern", lambda: threaded_us(quickjs(ANSWER), n),
         (lambda: threaded_us(translated(ANSWER), n)) if old else None),
    ]
    load = os.getloadavg()[0]
    print(f"{'µs per test':34} {'QuickJS':>10} {'translation':>12}   (load {load:.1f}, n={n})")
    for label, ours, theirs in rows:
        mine = ours()
        other = f"{theirs():12.1f}" if theirs else f"{'-':>12}"
        print(f"{label:34} {mine:10.1f} {other}")

    def first_call() -> float:
        start = time.perf_counter()
        js_regex.js_regex_test("a", "a")
        return (time.perf_counter() - start) * 1e6
    firsts: list[float] = []
    for _ in range(20):
        t = threading.Thread(target=lambda: firsts.append(first_call()))
        t.start()
        t.join()
    print(f"{'a thread’s first call (new runtime)':34} {sorted(firsts)[len(firsts) // 2]:10.1f}")

    start = time.perf_counter()
    with contextlib.suppress(js_regex.JsRegexTimeout):
        js_regex.js_regex_test("(a+)+$", "a" * 5_000 + "!")
    print(f"{'(a+)+$ on 5,000 a + !: stopped after':34} {time.perf_counter() - start:10.2f} s "
          f"(limit {js_regex.MATCH_TIME_LIMIT_S:g} s of the process's CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
