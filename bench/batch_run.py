#!/usr/bin/env python3
"""Batch mode at size: `evalspec run --batch` on a 10,000-prompt blueprint against the fake batch server.

Starts tests/fakebatch.py's server (OpenAI Files + Batch API, Anthropic Message Batches and the Gemini
Batch API, plus the three chat endpoints) on a loopback port in this process, runs the real CLI as a
subprocess with the providers pointed at it, and prints the wall seconds, the requests the server received (batch items, chat calls,
creations, polls) and the run's own peak RSS (wait4 in bench/peak_rss.py, which says why a launcher).

`--kill-resume` kills the run (SIGKILL) while it polls (the server holds every batch in progress until
then), resumes it with `--resume`, and checks that no request was submitted twice. `--compare` also runs
the blueprint interactively and checks that the result files (the comparison file and every artefact)
are identical byte for byte with the timestamps masked, and prints what each run paid (the cost file
beside the results, the one file that differs: a batch answer costs the batch price).

`--agentv` runs an AgentV suite instead: N tests on an OpenAI target whose judge target is Anthropic, each
with a `rubrics` and an `llm-judge` assertion, and `--trials K` (pass_at_k; odd tests miss a rubric item,
so they are asked K times): the answers batch first, then the judges and the later trials in rounds
(run/generate/batch_rounds.py). `--kill-resume` then kills the run while it polls the first round of judges.
A request sent twice is then one the server got more often than the interactive run sent it (trials
send the same request again by design).

`--blueprint FILE` runs that Weval blueprint instead of a generated one (bench/judged_blueprint.py makes
one with judged prose points and key points to extract: the issue's judged scenario), and
`--kill-at-batch N` kills the run while the N-th batch it created polls (the batches before it end; 1,
the default, is the first phase's; a later one the judges' phase).

`--lose-journal header|tail|all` (with `--kill-resume`) then damages the killed run's journal as a full disk
or a copy of the folder taken mid-run does: its first line lost, every line after its first batch line
lost, or the whole file; the resumed run finds the batches the journal lost at the provider by their
keys (`--batch-size N` splits each phase into parts of N, so there are several to find). The server line
counts the list GETs (`lists`): a fresh run makes none.

`--phases PREFIX` runs each run through bench/phase_rss.py: its RSS at each phase of the run, in
PREFIX.killed.log, PREFIX.resumed.log (or PREFIX.batch.log) and PREFIX.interactive.log (the peak printed
is then the larger of the log's and the one wait4 reports, which starts again at each of its lines).

usage: batch_run.py [--prompts N] [--models openai|anthropic|google|both|all] [--kill-resume] [--compare] [--polls K]
       [--output-dir DIR] [--agentv [--trials K]] [--blueprint FILE] [--kill-at-batch N] [--phases PREFIX]
       [--lose-journal header|tail|all] [--batch-size N]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakebatch import FakeBatchServer  # noqa: E402

STAMP = re.compile(rb"\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}(?:[.-]\d{1,6})?Z")
MODELS = {"openai": ["openai:gpt-4o-mini"], "anthropic": ["anthropic:claude-3-5-haiku-latest"],
          "google": ["google:gemini-2.5-flash"]}


def write_blueprint(path: Path, n: int, models: list[str]) -> None:
    lines = ["title: Batch run", "system: Answer in one sentence.", f"models: [{', '.join(models)}]", "---"]
    for i in range(n):
        lines += [f"- id: p{i}", f"  prompt: \"Question {i}: what is the answer number {i}?\"",
                  "  should:", f"    - $contains: \"answer number {i}\"", "    - $word_count_between: [3, 60]"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


DURATION = re.compile(rb'"duration_ms":[0-9.e-]+')
AGENTV_TARGETS = """targets:
  - name: oa
    provider: openai
    model: gpt-4o-mini
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
    judge_target: judge
  - name: judge
    provider: anthropic
    model: claude-3-5-haiku-latest
    api_key: ${{ ANTHROPIC_API_KEY }}
"""


def write_suite(folder: Path, n: int, trials: int) -> Path:
    """An AgentV suite whose judges and later trials batch (see the module's docstring)."""
    (folder / ".agentv").mkdir(parents=True, exist_ok=True)
    (folder / ".agentv" / "targets.yaml").write_text(AGENTV_TARGETS, encoding="utf-8")
    tests = []
    for i in range(n):
        criteria = f'["says {i}"' + (', "mentions banana"]' if i % 2 else "]")
        tests.append(f"  - id: t{i}\n    input: question {i}\n    criteria: answers question {i}\n    assert:\n"
                     f"      - {{type: rubrics, criteria: {criteria}}}\n      - {{type: llm-judge}}\n")
    path = folder / "evals" / "bench.eval.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"name: bench\ndescription: d\nexecution:\n  targets: [oa]\n  trials: {{count: {trials}}}\n"
                    "tests:\n" + "".join(tests), encoding="utf-8")
    return path


def kind_of(body: dict[str, Any]) -> str:
    """What a batch request asks: an answer, a Weval key-point extraction or a judgement."""
    import json

    text = json.dumps(body)
    if "<IDEAL>" in text:
        return "key-point extractions"
    if "<CRITERION>" in text or "You must respond with a single JSON object" in text or "You are an expert evaluator." in text:
        return "judges"
    return "answers"


def result_files(out: Path) -> dict[str, bytes]:
    """Every results file, timestamps (and AgentV durations) masked (not the journal, lock, report, or the
    cost file)."""
    files = {}
    for f in sorted(out.rglob("*")):
        if (f.is_file() and ".journal" not in f.name and ".run." not in f.name
                and not f.name.endswith((".lock", ".html", ".prev.jsonl"))
                and not f.name.endswith("_cost.json")):
            data = STAMP.sub(b"<ts>", f.read_bytes())
            files[STAMP.sub(b"<ts>", str(f.relative_to(out)).encode()).decode()] = DURATION.sub(b"<ms>", data)
    return files


def paid(out: Path) -> str:
    """What a run paid, from its cost file: the total and the calls per way of sending."""
    import json

    cost = json.loads(next(out.rglob("*_cost.json")).read_bytes())
    via: dict[str, int] = {}
    for line in cost["lines"]:
        via[line["via"]] = via.get(line["via"], 0) + line["calls"]
    sent = ", ".join(f"{n:,} {k}" for k, n in sorted(via.items()))
    return f"${cost['usd']:.6f} ({sent} call(s); {cost['input_tokens']:,} + {cost['output_tokens']:,} tokens)"


PHASES: list[Path] = []  # --phases PREFIX: the runs go through bench/phase_rss.py


def command(bp: Path, out: Path, *extra: str, which: str = "") -> list[str]:
    cli = [sys.executable, "-m", "evalspec.cli"]
    if PHASES and which:
        cli = [sys.executable, str(ROOT / "bench" / "phase_rss.py"), f"{PHASES[0]}.{which}.log"]
    return [*cli, "run", str(bp), "-o", str(out), "--no-report", *extra]


CPU: list[float] = []  # the CPU seconds (user + system) of each command `measured` ran, in order


def measured(cmd: list[str], env: dict[str, str], *, kill_when: Any = None) -> tuple[int, float, float]:
    """Run `cmd`; (exit status, wall seconds, the child's own peak RSS in MB), and its CPU seconds in
    CPU (the children's rusage: the launcher waits for the run, this process for the launcher). The run goes through
    bench/peak_rss.py: a child spawned from this process would report this process's peak (the fake
    server's, which holds every batch) as its own. `kill_when()` true: the run is sent SIGKILL."""
    t0 = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.NamedTemporaryFile(prefix="evalspec-peak-", suffix=".txt", delete=False) as f:
        peak_file = Path(f.name)
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "peak_rss.py"), str(peak_file), *cmd], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr_tail: list[bytes] = []

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            stderr_tail.append(line)
            del stderr_tail[:-40]

    import threading

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    if kill_when is not None:
        while not kill_when():
            if proc.poll() is not None:
                raise SystemExit("the run ended before it was killed")
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)  # the launcher SIGKILLs the run and writes its peak
    proc.wait()
    reader.join(5)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    code, peak_kib = (int(v) for v in peak_file.read_text(encoding="utf-8").split())
    peak_file.unlink()
    if cmd[1].endswith("phase_rss.py"):  # its resets leave wait4 the peak since its last line: the log has the rest
        peak_kib = max(peak_kib, int(_logged_peak(Path(cmd[2])) * 1024))
    if kill_when is None and code != 0:
        sys.stderr.write(b"".join(stderr_tail).decode("utf-8", "replace"))
        raise SystemExit(f"{' '.join(cmd[:6])} failed ({code})")
    return code, wall, peak_kib / 1024


def lose_journal(out: Path, how: str) -> None:
    """The killed run's database as a full disk or a copy taken mid-run leaves it: its run row lost, every
    row after its first batch's plan lost, or the whole file."""
    import contextlib
    import sqlite3

    path = next(out.rglob("*.run.db"))
    if how == "all":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    else:
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
            if how == "header":
                db.execute("DELETE FROM run")
            else:
                (first,) = db.execute("SELECT min(seq) FROM batches").fetchone()
                db.execute("DELETE FROM batch_items WHERE key NOT IN (SELECT key FROM batches WHERE seq = ?)", (first,))
                db.execute("DELETE FROM batches WHERE seq != ?", (first,))
                db.execute("UPDATE batches SET file_id = NULL, batch_id = NULL, status = NULL")
                for table in ("answers", "failures", "judgements", "key_points", "scores", "usage"):
                    db.execute(f"DELETE FROM {table}")
    print(f"run database damaged ({how})")


def _logged_peak(log: Path) -> float:
    """The highest 'peak so far' (MB) bench/phase_rss.py logged."""
    found = [float(m) for m in re.findall(r"peak so far +([0-9.]+) MB", log.read_text(encoding="utf-8"))]
    return max(found, default=0.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=10_000)
    ap.add_argument("--models", choices=("openai", "anthropic", "google", "both", "all"), default="openai",
                    help="both: OpenAI + Anthropic; all: the three")
    ap.add_argument("--polls", type=int, default=2, help="polls the fake server takes per batch state")
    ap.add_argument("--kill-resume", action="store_true", help="SIGKILL the run while it polls, then --resume")
    ap.add_argument("--compare", action="store_true", help="also run interactively and compare the result files")
    ap.add_argument("--agentv", action="store_true", help="an AgentV suite with judges and trials (--prompts tests)")
    ap.add_argument("--trials", type=int, default=2, help="--agentv: execution.trials.count")
    ap.add_argument("--blueprint", type=Path, help="run this Weval blueprint (its own models) instead")
    ap.add_argument("--kill-at-batch", type=int, default=1, help="--kill-resume: kill while the N-th batch polls")
    ap.add_argument("--lose-journal", choices=("header", "tail", "all"),
                    help="--kill-resume: lose the journal's first line, every line after its first batch line, or all")
    ap.add_argument("--batch-size", type=int, help="requests per batch at most (--batch-size of the run)")
    ap.add_argument("--phases", type=Path, metavar="PREFIX",
                    help="run through bench/phase_rss.py: each run's RSS at each phase in PREFIX.<run>.log")
    # Results on tmpfs when there is one, as bench/run_throughput.py does: on this VM creating the ~30,000
    # artefact files of a 10,000-prompt run under /tmp costs ~10x what it costs in memory.
    shm = Path("/dev/shm")
    ap.add_argument("--output-dir", type=Path, default=shm if shm.is_dir() else None,
                    help="where the runs write (default /dev/shm, else a temporary folder)")
    args = ap.parse_args()
    if args.phases is not None:
        PHASES.append(args.phases.resolve())
    if args.models in ("both", "all"):
        models = MODELS["openai"] + MODELS["anthropic"] + (MODELS["google"] if args.models == "all" else [])
    else:
        models = MODELS[args.models]

    work = Path(tempfile.mkdtemp(prefix="evalspec-batch-bench-", dir=args.output_dir))
    if args.agentv:
        bp = write_suite(work, args.prompts, args.trials)
        models = ["oa", "judge"]
    elif args.blueprint is not None:
        bp = work / args.blueprint.name
        shutil.copyfile(args.blueprint, bp)
        models = []
    else:
        bp = work / "batch.weval.yml"
        write_blueprint(bp, args.prompts, models)
    with FakeBatchServer(polls_per_state=args.polls) as fake:
        env = {**os.environ, **fake.env()}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        flags = ["--batch", "--batch-poll", "0.2"]
        if args.batch_size:
            flags += ["--batch-size", str(args.batch_size)]
        out = work / "batch"
        if args.kill_resume:
            if args.agentv:  # the answers' batch ends; the first round of judges stays in progress
                fake.hold_from = 2
                seen: dict[str, int] = {}

                def kill_when() -> bool:  # a few polls of the judges' batch after its creation
                    if fake.creations < 2:
                        return False
                    return fake.polls >= seen.setdefault("polls", fake.polls) + 3
            elif args.blueprint is not None or args.kill_at_batch > 1:
                fake.hold_from = args.kill_at_batch  # the batches before it end; it and later ones stay
                seen = {}

                def kill_when() -> bool:  # a few polls after the N-th batch was created
                    if fake.creations < args.kill_at_batch:
                        return False
                    return fake.polls >= seen.setdefault("polls", fake.polls) + 3
            else:
                fake.hold = True

                def kill_when() -> bool:
                    return fake.polls >= 2 * len(models)
            _, killed_wall, killed_rss = measured(command(bp, out, *flags, which="killed"), env,
                                                    kill_when=kill_when)
            fake.hold = False
            fake.hold_from = None
            print(f"killed (SIGKILL) while polling after {killed_wall:.2f} s: {fake.creations} batch(es) created, "
                  f"peak RSS {killed_rss:.0f} MB")
            if args.lose_journal:
                lose_journal(out, args.lose_journal)
            flags.append("--resume")
        _, wall, rss = measured(command(bp, out, *flags, which="resumed" if args.kill_resume else "batch"), env)
        items = sum(len(b.items) for b in fake.batches.values())
        what = f"{args.prompts:,} tests x 1 target, trials {args.trials}" if args.agentv else \
            f"{bp.name}" if args.blueprint is not None else f"{args.prompts:,} prompts x {len(models)} model(s)"
        print(f"batch run{' (resumed)' if args.kill_resume else ''}: {what} in {wall:.2f} s wall, {CPU[-1]:.2f} s CPU, "
              f"peak RSS {rss:.0f} MB")
        batch_sent = Counter(fake.sent)
        twice = "" if args.agentv else f"; requests sent twice: {len(fake.duplicates())}"
        print(f"server: {fake.creations} batch(es), {items:,} batch request(s), {fake.uploads} upload(s), "
              f"{fake.polls} poll(s), {fake.lists} list(s), {fake.chat_calls} chat call(s){twice}")
        kinds = Counter(kind_of(body) for b in fake.batches.values() for _, body in b.items)
        print("batch requests by kind: " + ", ".join(f"{k} {n:,}" for k, n in sorted(kinds.items())))
        ok = args.agentv or not fake.duplicates()
        if args.compare:
            fake.sent.clear()
            _, inter_wall, inter_rss = measured(command(bp, work / "interactive", "--concurrency", "32",
                                                                  which="interactive"), env)
            if args.agentv:
                extra = batch_sent - fake.sent
                print(f"requests the batch run sent more often than the interactive run: {sum(extra.values())}")
                ok = not extra
            batch_files, inter_files = result_files(out), result_files(work / "interactive")
            same = batch_files == inter_files
            print(f"interactive run: {inter_wall:.2f} s wall, peak RSS {inter_rss:.0f} MB; {len(batch_files):,} result "
                  f"file(s), identical byte for byte (timestamps masked): {same}")
            if not same:
                differ = sorted(k for k in batch_files.keys() | inter_files.keys()
                                if batch_files.get(k) != inter_files.get(k))
                print(f"  differ: {', '.join(differ[:5])}{' …' if len(differ) > 5 else ''}")
            print(f"paid: batch run {paid(out)}; interactive run {paid(work / 'interactive')}")
            ok = ok and same
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
