#!/usr/bin/env python3
"""The long fuzz run: mutated documents through `analyze()` and every editor feature, for a number of
documents or of seconds, reporting documents/s, exceptions, impossible ranges and the slowest cases.

Seeds are the corpus (../shared/corpus) and the attack run's reproducers; mutations are the attack
run's (bare CR, CRLF, U+2028, NEL, lone surrogates, BOM, NUL, tabs, aliases, merges, deep nesting, long
lines, invalid UTF-8, YAML noise, cuts; see tests/fuzzing.py). Each failing document is written to
--out (default bench/out/fuzz/) so it can be replayed; a document over --limit is timed twice and the
faster run counts. Durations are this process's CPU time (what the document costs; on a shared machine
the wall clock mostly measures the other processes); the longest wall-clock time is printed too. A range the engine's last guard had to pull back
inside the text (analysis._inside_the_text) is counted as a problem too: users never see it, but it is
a bug in the check that made it.

usage: python bench/fuzz.py [--documents N] [--seconds S] [--seed K] [--positions P] [--out DIR]
Exit status 1 when any document failed (an exception, an impossible range, or over --limit seconds).
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import evalspec.analysis as analysis_module  # noqa: E402
from tests import fuzzing  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=500_000)
    parser.add_argument("--seconds", type=float, default=None, help="stop after this long, whatever the count")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--positions", type=int, default=3, help="cursor positions per document")
    parser.add_argument("--limit", type=float, default=1.0, help="a document slower than this fails")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "fuzz")
    args = parser.parse_args(argv)

    repaired = [0]
    pulled_in = analysis_module._pulled_in

    def counting(span, lines):  # type: ignore[no-untyped-def]
        repaired[0] += 1
        return pulled_in(span, lines)

    analysis_module._pulled_in = counting  # type: ignore[assignment]

    rng = random.Random(args.seed)
    corpus = fuzzing.seeds()
    docs = fuzzing.documents(rng, corpus)
    kinds = collections.Counter[str]()
    problems = collections.Counter[str]()
    slowest: list[tuple[float, str, int]] = []
    failed = 0
    wall_max = 0.0
    n = 0
    started = time.perf_counter()
    last_report = started
    while n < args.documents and (args.seconds is None or time.perf_counter() - started < args.seconds):
        path, text = next(docs)
        kind = rng.choice(fuzzing.KINDS)
        before = repaired[0]
        outcome = fuzzing.check(path, text, rng, kind=kind, at=args.positions)
        n += 1
        kinds[str(kind)] += 1
        if repaired[0] > before:
            outcome.problems.append("a finding's range had to be pulled inside the text")
        if outcome.cpu > args.limit:
            # Once more before calling the document slow (a collection or a page fault is not the
            # document's doing); the faster of the two runs counts.
            again = fuzzing.check(path, text, random.Random(n), kind=kind, at=args.positions)
            outcome.cpu = min(outcome.cpu, again.cpu)
        if outcome.cpu > args.limit:
            outcome.problems.append(f"slow: {outcome.cpu:.2f} s of CPU")
        wall_max = max(wall_max, outcome.seconds)
        slowest.append((outcome.cpu, path, len(text)))
        if len(slowest) > 200:
            slowest = sorted(slowest, reverse=True)[:10]
        if outcome.problems:
            failed += 1
            for p in outcome.problems:
                problems[p.splitlines()[-1][:160] if p.startswith("exception") else p.split(" at ")[0][:160]] += 1
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"case-{args.seed}-{n}.json").write_text(json.dumps(
                {"path": path, "kind": str(kind), "problems": outcome.problems, "text": text},
                ensure_ascii=True))
        now = time.perf_counter()
        if now - last_report > 60:
            last_report = now
            print(f"… {n:,} documents, {n / (now - started):.0f}/s, {failed} failed", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started
    slowest = sorted(slowest, reverse=True)[:5]
    report = {
        "documents": n,
        "seconds": round(elapsed, 1),
        "documents_per_s": round(n / elapsed, 1) if elapsed else None,
        "failed_documents": failed,
        "exceptions": sum(v for k, v in problems.items() if "Error" in k or "Exception" in k),
        "over_limit": sum(1 for s, _, _ in slowest if s > args.limit),
        "problems": dict(problems.most_common(20)),
        "slowest_cpu": [{"cpu_s": round(s, 3), "seed_file": p, "chars": c} for s, p, c in slowest],
        "slowest_wall_s": round(wall_max, 3),
        "by_kind": dict(kinds),
    }
    print(json.dumps(report, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
