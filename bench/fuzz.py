#!/usr/bin/env python3
"""The long fuzz run: mutated documents through `analyze()` and every editor feature, for a number of
documents or of seconds, reporting documents/s, exceptions, impossible ranges and the slowest cases.

Seeds are the corpus (../shared/corpus) and the attack run's reproducers; mutations are the attack
run's (bare CR, CRLF, U+2028, NEL, lone surrogates, BOM, NUL, tabs, aliases, merges, deep nesting, long
lines, invalid UTF-8, YAML noise, cuts) and the judged round's (tags, anchors on keys, complex keys,
merges of lists and scalars, duplicate keys at depth, markers in block scalars, %TAG, long anchor names,
invisible and bidi characters, mixed tab indentation, odd numbers and timestamps, item look-alikes,
encoded surrogates) and the eighth round's (fuzzing.EIGHTH: Weval and AgentV keys mixed, foreign headers,
markers in flow collections, odd and YAML 1.1 keys, merge chains, duplicate top-level keys, Windows-1252,
trivia-only files, 1 MB scalars, thousands of models or documents, references leaving the project, absurd
point functions and assertion shapes, weights, gates, escapes, interpolation, cycles, self-references,
JSON lines; see tests/fuzzing.py). A document whose check opens a file or lists a folder outside its
project, or starts a process, fails too (an audit hook, tests/fuzzing.py). Each failing document is written to
--out (default bench/out/fuzz/) so it can be replayed; a document over --limit is timed twice and the
faster run counts. Durations are the worker's CPU time (what the document costs; on a shared machine
the wall clock mostly measures the other processes); the longest wall-clock time is printed too. A range
the engine's last guard had to pull back inside the text (analysis._inside_the_text) is counted as a
problem too: users never see it, but it is a bug in the check that made it.

--jobs N runs N worker processes, each with its own seed stream (seed * 1000 + worker) and its share of
the documents; their reports are merged. Nearly all of a document's time is the code under test
(profiled: mutation and the range checks are ~4%), so more documents per second can only come from
more cores.

A share of the documents (--every-way, 0.2) is also analysed as `check` does (streamed) and as the
editor does (its item cache): both must say exactly what the full analysis says (a CPU time counts the
full analysis only).

usage: python bench/fuzz.py [--documents N] [--seconds S] [--seed K] [--jobs J] [--positions P] [--out DIR]
                            [--every-way F] [--mutations eighth|NAME,NAME…]
Exit status 1 when any document failed (an exception, an impossible range, or over --limit seconds).
Ctrl-C (SIGINT to the parent or its process group) stops the workers after their current document and
still prints the report, marked `"stopped_early": true`.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import random
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import evalspec.analysis as analysis_module  # noqa: E402
from tests import fuzzing  # noqa: E402


@dataclass(frozen=True)
class Job:
    worker: int
    seed: int
    documents: int
    deadline: float  # time.time() after which the worker stops, whatever its count
    positions: int
    limit: float
    out: Path
    every_way: float  # the share of documents also analysed streamed and as the editor, and compared


# Documents done so far, one slot per worker (read by the parent for its progress lines).
_done: Any = None


def _share(counts: Any) -> None:
    global _done
    _done = counts


def work(job: Job) -> dict[str, Any]:
    """One worker's run: its own seed stream, counted as it goes; a partial report to merge."""
    repaired = [0]
    pulled_in = analysis_module._pulled_in

    def counting(span, lines):  # type: ignore[no-untyped-def]
        repaired[0] += 1
        return pulled_in(span, lines)

    analysis_module._pulled_in = counting  # type: ignore[assignment]

    stop = [False]  # SIGINT: finish this document, then report what was done
    signal.signal(signal.SIGINT, lambda *_: stop.__setitem__(0, True))
    rng = random.Random(job.seed)
    docs = fuzzing.documents(rng, fuzzing.seeds())
    kinds = collections.Counter[str]()
    problems = collections.Counter[str]()
    slowest: list[tuple[float, str, int]] = []
    failed = exceptions = over_limit = 0
    wall_max = 0.0
    n = 0
    while n < job.documents and time.time() < job.deadline and not stop[0]:
        path, text = next(docs)
        kind = rng.choice(fuzzing.KINDS)
        before = repaired[0]
        outcome = fuzzing.check(path, text, rng, kind=kind, at=job.positions,
                                every_way=rng.random() < job.every_way)
        n += 1
        kinds[str(kind)] += 1
        if repaired[0] > before:
            outcome.problems.append("a finding's range had to be pulled inside the text")
        if outcome.cpu > job.limit:
            # Once more before calling the document slow (a collection or a page fault is not the
            # document's doing); the faster of the two runs counts.
            again = fuzzing.check(path, text, random.Random(n), kind=kind, at=job.positions)
            outcome.cpu = min(outcome.cpu, again.cpu)
        if outcome.cpu > job.limit:
            outcome.problems.append(f"slow: {outcome.cpu:.2f} s of CPU")
            over_limit += 1
        wall_max = max(wall_max, outcome.seconds)
        slowest.append((outcome.cpu, path, len(text)))
        if len(slowest) > 200:
            slowest = sorted(slowest, reverse=True)[:10]
        if outcome.problems:
            failed += 1
            exceptions += any(p.startswith("exception") for p in outcome.problems)
            for p in outcome.problems:
                problems[p.splitlines()[-1][:160] if p.startswith("exception") else p.split(" at ")[0][:160]] += 1
            job.out.mkdir(parents=True, exist_ok=True)
            (job.out / f"case-{job.seed}-{n}.json").write_text(json.dumps(
                {"path": path, "kind": str(kind), "seed": job.seed, "problems": outcome.problems, "text": text},
                ensure_ascii=True))
        if _done is not None and n % 50 == 0:
            _done[job.worker] = n
    if _done is not None:
        _done[job.worker] = n
    return {"documents": n, "failed": failed, "exceptions": exceptions, "over_limit": over_limit,
            "problems": dict(problems), "kinds": dict(kinds), "slowest": sorted(slowest, reverse=True)[:10],
            "wall_max": wall_max}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=500_000)
    parser.add_argument("--seconds", type=float, default=None, help="stop after this long, whatever the count")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes, each its own seed stream")
    parser.add_argument("--positions", type=int, default=3, help="cursor positions per document")
    parser.add_argument("--limit", type=float, default=1.0, help="a document slower than this fails")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "fuzz")
    parser.add_argument("--mutations", default="",
                        help="only these mutations (comma-separated names of tests/fuzzing.py), or 'eighth' for "
                             "the eighth round's; all by default")
    parser.add_argument("--every-way", type=float, default=0.2,
                        help="share of documents also analysed as check (streamed) and the editor do, and compared")
    args = parser.parse_args(argv)

    if args.mutations:  # the workers are forked: they mutate with the module's tuple as set here
        named = {m.__name__: m for m in fuzzing.MUTATIONS}
        wanted = fuzzing.EIGHTH if args.mutations == "eighth" else tuple(named[n] for n in args.mutations.split(","))
        fuzzing.MUTATIONS = wanted
    started = time.perf_counter()
    deadline = time.time() + (args.seconds if args.seconds is not None else 10**9)
    jobs = max(1, args.jobs)
    share, extra = divmod(args.documents, jobs)
    plan = [Job(w, args.seed if jobs == 1 else args.seed * 1000 + w, share + (w < extra), deadline,
                args.positions, args.limit, args.out, args.every_way) for w in range(jobs)]
    # Workers are processes even for one job, so the parent is free to print progress every minute.
    ctx = multiprocessing.get_context("fork")
    counts = ctx.Array("q", jobs, lock=False)
    stopped = [False]
    with ctx.Pool(jobs, initializer=_share, initargs=(counts,)) as pool:
        pending = pool.map_async(work, plan, chunksize=1)

        def stop_early(*_: object) -> None:  # the workers finish their document and return their reports
            stopped[0] = True
            for proc in getattr(pool, "_pool", []):
                if proc.pid is not None:
                    os.kill(proc.pid, signal.SIGINT)
        signal.signal(signal.SIGINT, stop_early)
        while not pending.ready():
            pending.wait(60)
            n, now = sum(counts), time.perf_counter()
            if not pending.ready():
                print(f"… {n:,} documents, {n / (now - started):.0f}/s", file=sys.stderr, flush=True)
        parts = pending.get()
    elapsed = time.perf_counter() - started
    n = sum(p["documents"] for p in parts)
    problems = collections.Counter[str]()
    kinds = collections.Counter[str]()
    for p in parts:
        problems.update(p["problems"])
        kinds.update(p["kinds"])
    slowest = sorted((s for p in parts for s in p["slowest"]), reverse=True)[:5]
    failed = sum(p["failed"] for p in parts)
    report = {
        "documents": n,
        "seconds": round(elapsed, 1),
        "documents_per_s": round(n / elapsed, 1) if elapsed else None,
        "jobs": jobs,
        "seeds": [j.seed for j in plan],
        "failed_documents": failed,
        "exceptions": sum(p["exceptions"] for p in parts),
        "over_limit": sum(p["over_limit"] for p in parts),
        "problems": dict(problems.most_common(20)),
        "slowest_cpu": [{"cpu_s": round(s, 3), "seed_file": f, "chars": c} for s, f, c in slowest],
        "slowest_wall_s": round(max(p["wall_max"] for p in parts), 3),
        "by_kind": dict(kinds),
        "stopped_early": stopped[0],
    }
    print(json.dumps(report, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
