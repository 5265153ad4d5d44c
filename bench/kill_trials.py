#!/usr/bin/env python3
"""Kill-and-resume trials: many seeded trials, each SIGKILLing a real
`evalspec run` at a random moment and resuming it to the end, against a fake provider that counts every
request it is sent.

The runs: a Weval blueprint (three models, function points, one or two LLM-judged points a prompt, a
multi-turn prompt) and an AgentV suite (two targets; `contains` as a required gate, `regex`, `llm-judge`
and `rubrics`). The fake provider (tests/fakeprovider.py on 127.0.0.1) answers each request as a function
of its body alone, and every answer and judgement carries `#<hash of the request>`: the database's
`answers` and `judgements` rows say which calls were committed, the fake's log which were asked.

A trial is one scenario (seeded): `random` (a kill at a random delay), `calling` / `judging` / `scoring`
(a kill once the database holds a random number of answers, judgements or scores), `exporting` (every cell
scored, not yet finished), `after_end`, `twice` (two kills, resumed between), `concurrent` (two
`--resume`s started at once after a kill, sometimes the survivor killed too), `fresh_beside` (a fresh run
and a `--resume` started beside a running resume), `full_disk` (the output folder a small tmpfs filled to a
random level by a ballast file — as root — or the file-size limit test_full_disk.py uses; the ballast
then deleted and the run resumed), `reporting` (while report.html is written: --report), `reexport` (a
`--resume` of a run that exported, killed as it exports again), `merging` (`--shard=1/2` killed and resumed,
`--shard=2/2`, then `evalspec merge` of the two killed and run again). A `--cache` run's cache is warm now
and then (`+warm`: a random part of the run's answers in it before the trial). Each trial asserts:

- no call whose answer or judgement was committed at a kill is asked again afterwards;
- every call of the uninterrupted run is asked, no other, and each once — bar a call in flight at a kill
  (asked, not committed), which the next process asks once more; no call is asked twice by processes
  running at the same time;
- the exports (the Weval comparison JSON, the AgentV results JSONL, their cost files, shard manifests) are
  byte for byte those of an uninterrupted run of the same file, after masking what differs between any two
  runs: the run's stamp (in the file names, the comparison's `timestamp`, the cost file's `results`), and
  AgentV's per-row `timestamp` and `duration_ms` (with `--cache`, what a cache hit changes: the cost file, whose
  calls paid and cached must still add up to the uninterrupted run's, and the rows' usage fields);
- one run, one set of files: no two exports of one run, and every export a process left is there at the end
  with the same bytes, unmasked (a later export repeats its stamp and its cost file's `cached` counts); no
  temporary file of a killed export is left; with --report, report.html beside the results, whole, newer;
- exit codes: -9 for a killed run, 2 with "already running (PID …" for one refused beside another, 2 with
  "cannot write … full" for a full disk, the uninterrupted run's code for the one that finishes; "cleared
  the lock of an earlier run" when the killed run left its lock; never "Traceback" in any output.

usage: kill_trials.py [--trials N] [--seed S] [--formats weval,agentv] [--scenarios a,b,…] [--keep DIR]
                      [--disk auto|tmpfs|fsize] [--root DIR]
Prints a line per trial and totals by scenario; exits 1 when any trial failed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fakeprovider import FakeProvider, Recorded, Reply  # noqa: E402

SCENARIOS = ("random", "calling", "judging", "scoring", "exporting", "after_end", "twice", "concurrent",
             "fresh_beside", "full_disk", "sigterm", "two_fresh", "reporting", "reexport", "merging")
BATCH_SCENARIOS = ("random", "polling", "scoring", "exporting", "after_end", "twice", "concurrent", "sigterm",
                   "reexport")
MARK = re.compile(r"#([0-9a-f]{12})\b")
STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z")
EXPORTS = ("_comparison.json", "_cost.json", ".jsonl", ".shard.json")  # what the trials compare
AGENTV_TIMES = re.compile(rb'("(?:timestamp|duration_ms)":)("[^"]*"|[0-9.]+)')
KEY = "sk-kill-trials-0123456789"

PROMPTS = 14
TESTS = 12


def blueprint() -> str:
    lines = ["title: Kill trials", "description: three models, function and judged points",
             "models: [openai:model-a, openai:model-b, openai:model-c]", "evaluationConfig:", "  llm-coverage:",
             "    judges:", '      - {model: "openai:judge", approach: holistic}', "---"]
    for i in range(PROMPTS):
        tag = f"[p{i:02d}]"
        if i == 3:
            lines += [f"- id: p{i:02d}", "  messages:", f"    - user: start {tag}", "    - assistant: started",
                      f"    - user: go on with question {i} {tag}"]
        else:
            lines += [f"- id: p{i:02d}", f"  prompt: question {i} {tag}"]
        lines += ["  should:", f"    - $contains: p{i:02d}", "    - $icontains: ANSWERS", f"    - answers question {i}"]
        if i % 3 == 0:
            lines += [f"    - is polite about {i}"]
        if i % 4 == 1:
            lines += ["  should_not:", "    - $contains: wrong"]
    return "\n".join(lines) + "\n"


def suite() -> str:
    lines = ["name: kills", "description: two targets, a required gate, judged assertions",
             "execution:", "  targets: [default, second]", "tests:"]
    for i in range(TESTS):
        lines += [f"  - id: t{i:02d}", f'    input: "question {i} [t{i:02d}]"', f"    criteria: answers question {i}",
                  "    assert:", f"      - {{type: contains, value: t{i:02d}, required: true}}",
                  '      - {type: regex, value: "ans(wer)?s"}', '      - {type: llm-judge, prompt: "Is {{ answer }} right for {{ question }}?"}',
                  f'      - {{type: rubrics, criteria: ["names {i}", "is short"]}}']
    return "\n".join(lines) + "\n"


def batch_blueprint() -> str:
    """A blueprint for --batch: OpenAI and Anthropic models (their batch APIs in tests/fakebatch.py), a judge,
    and a conversation whose middle turn is generated (batched phase by phase)."""
    lines = ["title: Kill trials in batches", "system: Answer briefly.",
             "models: [openai:gpt-4o-mini, anthropic:claude-3-5-haiku-latest]", "evaluationConfig:", "  llm-coverage:",
             "    judges:", '      - {model: "openai:gpt-4o-mini", approach: holistic}', "---"]
    for i in range(PROMPTS):
        lines += [f"- id: p{i:02d}", f"  prompt: question {i}", "  should:", f"    - $contains: question {i}",
                  "    - mentions the question", f"    - names {i}"]
    lines += ["- id: convo", "  messages:", "    - user: first", "    - assistant: null", "    - user: second",
              "  should:", "    - $contains: second", "    - says second"]
    return "\n".join(lines) + "\n"


def batch_suite() -> str:
    """An AgentV suite for --batch: an OpenAI target judged by an Anthropic one (their judges' calls go in
    batches, in rounds), a required rubric, an llm-judge and a deterministic check."""
    lines = ["name: kills", "description: judged in batches", "execution:", "  targets: [oa]", "tests:"]
    for i in range(TESTS):
        criteria = json.dumps([f"says {i}"] + (["mentions banana"] if i % 3 == 0 else []))
        lines += [f"  - id: t{i:02d}", f"    input: question {i}", f"    criteria: answers question {i}", "    assert:",
                  f"      - {{type: rubrics, criteria: {criteria}, required: true}}",
                  '      - {type: llm-judge, prompt: "Grade {{ answer }} for {{ criteria }}"}',
                  "      - {type: contains, value: question}"]
    return "\n".join(lines) + "\n"


BATCH_TARGETS = """targets:
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

TARGETS = """targets:
  - name: default
    provider: openai
    model: candidate
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
    judge_target: grader
  - name: second
    provider: openai
    model: second-model
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
    judge_target: grader
  - name: grader
    provider: openai
    model: grader-model
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
"""


def _h(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:12]


class CountingFake(FakeProvider):
    """Answers each request as a function of its body, marks every answer with `#<hash of the body>` and
    counts the requests by that hash and by the segment of the trial they arrived in."""

    def __init__(self) -> None:
        super().__init__()
        self.segment = 0
        self.slow = 0.0  # seconds added to every answer
        self.asked: list[tuple[int, str, str]] = []  # (segment, mark, what)

    def _respond(self, rec: Recorded, reply: Reply) -> tuple[int, bytes, dict[str, str]]:
        mark = _h(rec.body)
        try:
            req = json.loads(rec.body or b"{}")
        except ValueError:
            req = {}
        model = str(req.get("model"))
        messages = req.get("messages") or []
        text = json.dumps(messages)
        last = str(messages[-1].get("content")) if messages else ""
        tag = (re.findall(r"\[[pt]\d\d\]", text) or ["?"])[-1]
        n = int(mark, 16)
        if "<CRITERION>" in text:
            what = f"judge {tag}"
            grade = ("CLASS_EXACT", "CLASS_MAJOR", "CLASS_PARTIAL", "CLASS_MINOR", "CLASS_NO_MATCH")[n % 5]
            out = f"<reflection>judged #{mark}</reflection>\n<classification>{grade}</classification>"
        elif model == "grader-model":
            what = f"judge {tag}"
            if "[[ ## rubrics ## ]]" in last:  # AgentV's checklist prompt
                out = json.dumps({"checks": [{"id": "rubric-1", "satisfied": bool(n & 1), "reasoning": f"#{mark}"},
                                             {"id": "rubric-2", "satisfied": bool(n & 2), "reasoning": "len"}],
                                  "overall_reasoning": f"checked #{mark}"})
            else:
                out = json.dumps({"score": (n % 5) / 4, "hits": ["greets"], "misses": ["no name"],
                                  "reasoning": f"scored #{mark}"})
        else:
            what = f"answer {tag} {model}"
            wrong = " wrong" if n % 4 == 0 else ""
            out = f"{model} answers {tag}{wrong} #{mark}"
        with self._lock:
            self.asked.append((self.segment, mark, what))
        return super()._respond(rec, Reply.ok(out))

    @property  # type: ignore[override]
    def latency(self) -> float:  # read once a request: answers come back out of order
        return random.uniform(0.004, 0.035) + self.slow

    @latency.setter
    def latency(self, value: float) -> None:
        pass


@dataclass
class Config:
    kind: str  # weval | agentv
    flags: tuple[str, ...] = ()
    warm: bool = False  # --cache, its cache holding a random part of the run's answers before the trial

    @property
    def name(self) -> str:
        return self.kind + "".join(self.flags) + ("+warm" if self.warm else "")


@dataclass
class Baseline:
    code: int
    exports: dict[str, bytes]
    marks: set[str]
    seconds: float
    answers: int
    judgements: int
    cells: int
    out_bytes: int
    reexport: float = 0.0  # seconds a --resume of the finished run takes from taking the lock to its exit


@dataclass
class Trial:
    n: int
    config: Config
    scenario: str
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    kills: list[tuple[int, set[str]]] = field(default_factory=list)  # (segment, marks committed then)
    seen: list[tuple[int, dict[str, bytes]]] = field(default_factory=list)  # (segment, exports on disk then)
    processes: int = 0
    expect: Baseline | None = None  # what the trial ends with, when not its config's baseline (merging)
    warm: set[str] = field(default_factory=set)  # the marks of the calls the warm cache answers


class Harness:
    def __init__(self, root: Path, python: str) -> None:
        self.root = root
        self.python = python
        self.fake = CountingFake().start()
        self.work = root / "work"
        self.baselines: dict[str, Baseline] = {}
        self.ballast: Path | None = None  # the file that fills a full disk
        self.earlier: dict[str, list[bytes]] = {}  # exports() found more than one of these (older first)
        self.keep: Path | None = None  # where a failed trial's folder is copied
        self.warm_caches: dict[str, list[bytes]] = {}  # a cold --cache run's cache lines, by kind
        # Each baseline is run twice, to see that the masks hide all that differs between two runs (1: once,
        # as tests/run/test_kill_trials.py does for time; the bench's runs check it)
        self.baseline_runs = 2
        self.disk = "auto"  # a full disk: "tmpfs" (as root), "fsize" (the file-size limit), "auto"
        self.seed = 0

    def close(self) -> None:
        self.fake.stop()

    # -- the run's files ---------------------------------------------------------------------------------
    def fresh_work(self, config: Config) -> Path:
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        if config.kind == "weval":
            path = self.work / "kills.weval.yml"
            path.write_text(blueprint(), encoding="utf-8")
        elif config.kind == "batch":
            path = self.work / "kills.weval.yml"
            path.write_text(batch_blueprint(), encoding="utf-8")
        elif config.kind == "abatch":
            (self.work / ".agentv").mkdir()
            (self.work / ".agentv" / "targets.yaml").write_text(BATCH_TARGETS, encoding="utf-8")
            path = self.work / "evals" / "kills.eval.yaml"
            path.parent.mkdir()
            path.write_text(batch_suite(), encoding="utf-8")
        else:
            (self.work / ".agentv").mkdir()
            (self.work / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
            path = self.work / "evals" / "kills.eval.yaml"
            path.parent.mkdir()
            path.write_text(suite(), encoding="utf-8")
        return path

    @property
    def out(self) -> Path:
        return self.work / "out"

    def env(self) -> dict[str, str]:
        return {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": self.fake.url("/v1"), "PATH": "/usr/bin:/bin",
                "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "PYTHONDONTWRITEBYTECODE": "1",
                "EVALSPEC_CACHE_KEY": "kill trials: not a secret", "HOME": str(self.root / "home")}

    def start(self, path: Path, config: Config, *extra: str, fsize: int | None = None) -> subprocess.Popen[bytes]:
        n = len(list(self.work.glob("p*.out")))
        stdout = open(self.work / f"p{n}.out", "wb")  # noqa: SIM115
        stderr = open(self.work / f"p{n}.err", "wb")  # noqa: SIM115
        cmd = [self.python, "-m", "evalspec.cli", "run", str(path), "-o", str(self.out), "-j", "4", "--retries", "0",
               "--no-report", *config.flags, *extra]
        proc = subprocess.Popen(cmd, env=self.env(), stdout=stdout, stderr=stderr, cwd=self.work,
                                preexec_fn=_fsize_limit(fsize) if fsize else None)
        stdout.close()
        stderr.close()
        proc.log = n  # type: ignore[attr-defined]
        return proc

    def output(self, proc: subprocess.Popen[bytes]) -> str:
        n = proc.log  # type: ignore[attr-defined]
        return ((self.work / f"p{n}.out").read_bytes() + (self.work / f"p{n}.err").read_bytes()).decode("utf-8", "replace")

    # -- what the database holds -------------------------------------------------------------------------
    def database(self) -> Path | None:
        found = sorted(p for p in self.out.rglob("*.run.db")) if self.out.exists() else []
        return found[0] if found else None

    def counts(self) -> dict[str, int]:
        db = self.database()
        got = {"answers": 0, "judgements": 0, "scores": 0, "finished": 0, "batches": 0}
        if db is None:
            return got
        with contextlib.suppress(sqlite3.Error), contextlib.closing(_read(db)) as conn:
            for table in ("answers", "judgements", "scores"):
                got[table] = int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            row = conn.execute("SELECT finished FROM run").fetchone()
            got["finished"] = int(row[0] or 0) if row else 0
            got["batches"] = int(conn.execute("SELECT count(*) FROM batches WHERE batch_id IS NOT NULL").fetchone()[0])
        return got

    def committed(self) -> set[str]:
        """The marks of the calls whose answer or judgement the database holds (read as a reader would: the
        database and its WAL left as they are)."""
        db = self.database()
        if db is None:
            return set()
        # Read from a copy of the database and its WAL: a reader of the run's own files needs room for their
        # WAL index, which a full disk does not have.
        copy = self.root / "copy"
        shutil.rmtree(copy, ignore_errors=True)
        copy.mkdir()
        for suffix in ("", "-wal"):
            with contextlib.suppress(FileNotFoundError):
                shutil.copyfile(f"{db}{suffix}", copy / f"run.db{suffix}")
        db = copy / "run.db"
        for _ in range(50):
            try:
                with contextlib.closing(_read(db)) as conn:
                    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                    marks: set[str] = set()
                    for table in ("answers", "judgements", "key_points"):
                        if table in names:
                            for row in conn.execute(f"SELECT * FROM {table}"):
                                marks.update(MARK.findall(" ".join(str(v) for v in row)))
                    return marks
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                time.sleep(0.05)
        raise RuntimeError("the database stayed locked")

    def lock_pid(self) -> int | None:
        db = self.database()
        if db is None:
            return None
        with contextlib.suppress(sqlite3.Error), contextlib.closing(_read(db)) as conn:
            row = conn.execute("SELECT pid FROM lock").fetchone()
            return None if row is None else int(row[0])
        return None

    def raw_exports(self) -> dict[str, bytes]:
        """The export files under the output folder as they are, by path: the comparison JSON, the results JSONL,
        their cost files and shard manifests."""
        found: dict[str, bytes] = {}
        if not self.out.exists():
            return found
        for p in sorted(self.out.rglob("*")):
            if not p.is_file() or ".run." in p.name or ".cache" in p.parts or p.name.startswith("."):
                continue
            if p.name.endswith(EXPORTS):
                with contextlib.suppress(FileNotFoundError):
                    found[str(p.relative_to(self.out))] = p.read_bytes()
        return found

    def exports(self) -> dict[str, bytes]:
        """`raw_exports` with what differs between two uninterrupted runs masked (the stamps, AgentV's row
        times). Two files of one name once masked are two exports of one run (`earlier`: the older ones)."""
        found: dict[str, bytes] = {}
        self.earlier = {}
        for rel, raw in self.raw_exports().items():
            data = STAMP.sub(b"<stamp>", raw)
            if rel.endswith(".jsonl"):
                data = AGENTV_TIMES.sub(rb'\1"<time>"', data)
            name = STAMP.sub(b"<stamp>", rel.encode()).decode()
            if name in found:
                self.earlier.setdefault(name, []).append(found[name])
            found[name] = data
        return found

    # -- the uninterrupted run ---------------------------------------------------------------------------
    def baseline(self, config: Config) -> Baseline:
        if config.warm:  # a warm cache changes what is paid, not what is exported: the cold run's
            return self.baseline(Config(config.kind, config.flags))
        if config.name in self.baselines:
            return self.baselines[config.name]
        runs = []
        for _ in range(self.baseline_runs):  # what differs between two uninterrupted runs is what the trials mask
            path = self.fresh_work(config)
            self.fake.reset()
            self.fake.asked.clear()
            began = time.monotonic()
            proc = self.start(path, config)
            code = proc.wait(300)
            seconds = time.monotonic() - began
            text = self.output(proc)
            assert "Traceback" not in text, text
            counts = self.counts()
            marks = [m for _, m, _ in self.fake.asked]
            assert len(marks) == len(set(marks)), "an uninterrupted run asked a call twice"
            out_bytes = sum(p.stat().st_size for p in self.out.rglob("*") if p.is_file())
            runs.append(Baseline(code, self.exports(), set(marks), seconds, counts["answers"], counts["judgements"],
                                 counts["scores"], out_bytes))
        # The finished run resumed: it exports again, the same files byte for byte, and asks nothing
        first = self.raw_exports()
        proc = self.start(path, config, "--resume")
        end = time.monotonic() + 60
        while self.lock_pid() != proc.pid and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.002)
        locked = time.monotonic()
        assert proc.wait(300) == runs[-1].code, self.output(proc)
        runs[-1].reexport = runs[0].reexport = time.monotonic() - locked
        assert self.raw_exports() == first, "a --resume of a finished run exported other files or bytes"
        assert len(self.fake.asked) == len(marks), "a --resume of a finished run asked for calls"
        a, b = runs[0], runs[-1]
        assert a.exports == b.exports, f"two uninterrupted {config.name} runs exported different bytes: " + \
            ", ".join(k for k in a.exports if a.exports[k] != b.exports.get(k))
        assert a.marks == b.marks and a.code == b.code
        assert a.exports, "the uninterrupted run exported nothing"
        self.baselines[config.name] = a
        print(f"baseline {config.name}: exit {a.code}, {len(a.marks)} calls ({a.answers} answers, {a.judgements} "
              f"judgements), {a.cells} cells, {a.seconds:.2f} s (a re-export {a.reexport:.2f} s after the lock), "
              f"{len(a.exports)} exports, out {a.out_bytes:,} B", flush=True)
        return a

    def merge_baseline(self, config: Config) -> Baseline:
        """Every shard of a `--shard=1/2` config run uninterrupted, then `evalspec merge`: the exports of both
        shards and their merge (twice, to see that only the masked parts differ), every call of both."""
        key = config.name + "+merge"
        if key in self.baselines:
            return self.baselines[key]
        shard = self.baseline(config)
        runs = []
        for _ in range(self.baseline_runs):
            path = self.fresh_work(config)
            self.fake.reset()
            self.fake.asked.clear()
            for extra in ((), ("--shard=2/2",)):
                proc = self.start(path, config, *extra)
                assert proc.wait(300) == shard.code, self.output(proc)
            began = time.monotonic()
            merge = self.merge(config)
            assert merge.wait(300) == 0, self.output(merge)
            seconds = time.monotonic() - began
            runs.append(Baseline(0, self.exports(), {m for _, m, _ in self.fake.asked}, seconds, 0, 0, 0, 0))
            assert not self.earlier, f"a merge beside its shards wrote two exports of one run: {list(self.earlier)}"
        a, b = runs[0], runs[-1]
        assert a.exports == b.exports, "two uninterrupted merges exported different bytes: " + \
            ", ".join(k for k in a.exports if a.exports[k] != b.exports.get(k))
        print(f"baseline {key}: {len(a.marks)} calls, merge {a.seconds:.2f} s, {len(a.exports)} exports", flush=True)
        self.baselines[key] = a
        return a

    def merge(self, config: Config) -> subprocess.Popen[bytes]:
        """`evalspec merge` of the shards' manifests under the output folder."""
        n = len(list(self.work.glob("p*.out")))
        manifests = sorted(str(p) for p in self.out.rglob("*.shard.json"))
        cmd = [self.python, "-m", "evalspec.cli", "merge", *manifests, "-o", str(self.out),
               "--report" if self.report_wanted(config) else "--no-report"]
        with open(self.work / f"p{n}.out", "wb") as stdout, open(self.work / f"p{n}.err", "wb") as stderr:
            proc = subprocess.Popen(cmd, env=self.env(), stdout=stdout, stderr=stderr, cwd=self.work)
        proc.log = n  # type: ignore[attr-defined]
        return proc

    @staticmethod
    def report_wanted(config: Config) -> bool:
        return "--report" in config.flags

    def _check_report(self, t: Trial) -> None:
        """report.html beside every results file, whole, and written after them (not one a kill left stale)."""
        results = [p for p in self.out.rglob("*") if p.is_file() and p.name.endswith(("_comparison.json", ".jsonl"))
                   and ".cache" not in p.parts]
        for folder in sorted({p.parent for p in results}):
            report = folder / "report.html"
            if not report.is_file():
                t.failures.append(f"no report.html beside {folder.relative_to(self.out)}'s results")
                continue
            if not report.read_bytes().endswith(b"</body></html>\n"):
                t.failures.append(f"{report.relative_to(self.out)} is cut short")
            newest = max(p.stat().st_mtime_ns for p in results if p.parent == folder)
            if report.stat().st_mtime_ns < newest:
                t.failures.append(f"{report.relative_to(self.out)} is older than the results beside it")

    # -- a trial ---------------------------------------------------------------------------------------
    def trial(self, n: int, config: Config, scenario: str, rng: random.Random) -> Trial:
        base = self.baseline(config)
        if scenario == "merging":
            self.merge_baseline(config)
        t = Trial(n, config, scenario)
        path = self.fresh_work(config)
        self.fake.reset()
        self.fake.asked.clear()
        self.fake.segment = 0
        if config.warm:
            self._warm(t, base, rng)
        mount: Path | None = None
        try:
            final = self._scenario(t, base, path, rng)
            if final is not None:
                self._finish(t, t.expect or base, final)
        except AssertionError as exc:
            t.failures.append(str(exc) or repr(exc))
        finally:
            self._check_calls(t, t.expect or base)
            if t.failures and self.keep is not None:
                shutil.copytree(self.work, self.keep / f"trial-{self.seed}-{n}", dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("ballast"))
            mount = self.work / "out"
            if _mounted(mount):
                subprocess.run(["umount", "-l", str(mount)], check=False)
        return t

    def _warm(self, t: Trial, base: Baseline, rng: random.Random) -> None:
        """The response cache of the trial's output folder, holding a random part of what the run asks (the
        answers the cold baseline run cached), so that every process of the trial answers calls from it: the
        cost file's `cached` counts then come from several processes."""
        cache = self.warm_caches.get(t.config.kind)
        if cache is None:  # the cold run's cache, once
            path = self.fresh_work(Config(t.config.kind, t.config.flags))
            proc = self.start(path, t.config)
            assert proc.wait(300) == base.code, self.output(proc)
            cache = self.warm_caches[t.config.kind] = (self.out / ".cache" / "responses.jsonl").read_bytes().splitlines()
            path = self.fresh_work(t.config)
            self.fake.reset()
            self.fake.asked.clear()
        share = rng.uniform(0.2, 0.9)
        kept = [line for line in cache if rng.random() < share]
        (self.out / ".cache").mkdir(parents=True)
        (self.out / ".cache" / "responses.jsonl").write_bytes(b"".join(line + b"\n" for line in kept))
        t.warm = {m for line in kept for m in MARK.findall(line.decode("utf-8", "replace"))}
        t.notes.append(f"{len(kept)} of {len(cache)} answers in the cache")

    def _kill(self, t: Trial, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        self._ended(t, proc)

    def _ended(self, t: Trial, proc: subprocess.Popen[bytes]) -> None:
        """After a process ended without finishing (killed, refused, a full disk): what the database holds
        then is what no later process may ask for."""
        t.processes += 1
        self._no_crash(t, proc)
        if self.ballast is not None and self.ballast.exists():  # the disk freed before anything reads it
            self.ballast.unlink()
        if not self.fake.idle(15):
            t.failures.append("the fake provider still had connections 15 s after the kill")
        self._segment(t)

    def _segment(self, t: Trial) -> None:
        """A segment of the trial ended (its processes ended): what the database holds then is what no later
        process may ask for, and the exports then on disk are what every later export must repeat."""
        # A connection a killed process made may still wait in the fake's accept queue when the fake's own
        # connections look idle (a loaded machine: once in 50 trials, its request counted as the next
        # process's): until the kernel's queue of the fake's listening socket is empty, then idle again
        end = time.monotonic() + 15
        while _accept_queue(self.fake.url()) and time.monotonic() < end:
            time.sleep(0.005)
        time.sleep(0.02)  # (an accepted connection's handler starts on the fake's next loop turn)
        self.fake.idle(15)
        t.kills.append((self.fake.segment, self.committed()))
        t.seen.append((self.fake.segment, self.raw_exports()))
        self.fake.segment += 1

    def _no_crash(self, t: Trial, proc: subprocess.Popen[bytes]) -> None:
        text = self.output(proc)
        if "Traceback" in text:
            t.failures.append(f"process {proc.log} printed a traceback: " + text[text.index("Traceback"):][:1500])  # type: ignore[attr-defined]

    def _wait_for(self, proc: subprocess.Popen[bytes], ready: Any, timeout: float = 60) -> bool:
        """Poll until `ready(counts)`; False when the process ended first."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if proc.poll() is not None:
                return False
            if ready(self.counts()):
                return True
            time.sleep(0.003)
        raise AssertionError(f"timed out waiting for a moment ({timeout} s)")

    def _kill_at(self, t: Trial, base: Baseline, proc: subprocess.Popen[bytes], moment: str,
                 rng: random.Random) -> None:
        """SIGKILL `proc` at `moment` (or note that it ended first)."""
        delay = 0.0
        if moment == "random":
            # From the start of the process (sometimes before it made its database) or from its database's birth.
            if rng.random() < 0.7:
                end = time.monotonic() + 30
                while self.database() is None and proc.poll() is None and time.monotonic() < end:
                    time.sleep(0.002)
                delay = rng.uniform(0.0, base.seconds * 1.1)
                t.notes.append(f"kill {delay:.2f}s after the database appeared")
            else:
                delay = rng.uniform(0.0, 1.5)
                t.notes.append(f"kill {delay:.2f}s after the start")
        elif moment == "polling":
            wanted = rng.randint(1, 3)
            t.notes.append(f"kill once {wanted} batches exist")
            self._wait_for(proc, lambda c: c["batches"] >= wanted)
        elif moment == "early":
            wanted = rng.randint(1, base.answers // 3)
            t.notes.append(f"kill at {wanted} answers")
            self._wait_for(proc, lambda c: c["answers"] >= wanted)
        elif moment in ("calling", "judging", "scoring"):
            table, total = {"calling": ("answers", base.answers), "judging": ("judgements", base.judgements),
                            "scoring": ("scores", base.cells)}[moment]
            wanted = rng.randint(1, max(1, total - 1))
            t.notes.append(f"kill at {wanted} {table}")
            self._wait_for(proc, lambda c: c[table] >= wanted)
        elif moment == "exporting":
            delay = rng.choice([0.0, 0.0, rng.uniform(0.0, 0.2)])
            t.notes.append(f"kill {delay:.3f}s after every cell is scored")
            self._wait_for(proc, lambda c: c["scores"] >= base.cells)
        elif moment == "reporting":
            # report.html is written once the run has finished (its database says so): kill as its temporary
            # file appears, or at a random moment after the run finished
            self._wait_for(proc, lambda c: c["finished"] >= 1)
            if rng.random() < 0.6:
                delay = rng.choice([0.0, rng.uniform(0.0, 0.02)])
                seen = self._wait_for_file(proc, ".report.html.*.tmp")
                t.notes.append(f"kill {delay:.3f}s after report.html's temporary file appeared" if seen else
                               "report.html's temporary file not seen")
            else:
                delay = rng.uniform(0.0, 0.4)
                t.notes.append(f"kill {delay:.3f}s after the run finished")
        self._kill_after(t, proc, delay)

    def _kill_after(self, t: Trial, proc: subprocess.Popen[bytes], delay: float) -> None:
        """SIGKILL `proc` `delay` seconds from now, noting when it ended before that."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(delay)
        if proc.poll() is not None:
            t.notes.append(f"(it ended first: exit {proc.returncode})")
        self._kill(t, proc)

    def _wait_for_file(self, proc: subprocess.Popen[bytes], pattern: str, timeout: float = 30) -> bool:
        """Poll until a file matching `pattern` is in the run's results folder (where its database is); False
        when the process ended first."""
        import fnmatch

        db = self.database()
        folder = str(db.parent) if db is not None else str(self.out)
        end = time.monotonic() + timeout
        while time.monotonic() < end and proc.poll() is None:
            with contextlib.suppress(OSError):
                if fnmatch.filter(os.listdir(folder), pattern):
                    return True
            time.sleep(0.0005)
        return False

    def _reexport(self, t: Trial, base: Baseline, path: Path, rng: random.Random) -> subprocess.Popen[bytes]:
        """A run that exported (finished; killed once every cell was scored; or killed while calling or judging
        and resumed to the end, its resume answering the calls in flight at the kill from the cache with
        `--cache`), then a `--resume`, which exports again, killed at a random moment after it took the run's
        lock (once or twice); resumed."""
        first = self.start(path, t.config)
        how = rng.random()
        if how < 0.4:
            first.wait(120)
            t.notes.append(f"finished: exit {first.returncode}")
            self._ended(t, first)
        elif how < 0.7:
            self._kill_at(t, base, first, "exporting", rng)
        else:
            self._kill_at(t, base, first, rng.choice(["random", "calling", "judging"]), rng)
            done = self._resume(t, path, t.config)
            self._no_crash(t, done)
            t.notes.append(f"resumed: exit {done.returncode}")
            self.fake.idle(15)
            self._segment(t)
        for _ in range(1 if rng.random() < 0.7 else 2):
            again = self.start(path, t.config, "--resume")
            end = time.monotonic() + 60
            while self.lock_pid() != again.pid and again.poll() is None and time.monotonic() < end:
                time.sleep(0.001)
            delay = rng.uniform(0.0, base.reexport * 1.2)
            t.notes.append(f"the re-exporting --resume killed {delay:.3f}s after it took the lock")
            self._kill_after(t, again, delay)
        return self._resume(t, path, t.config)

    def _merging(self, t: Trial, base: Baseline, path: Path, rng: random.Random) -> subprocess.Popen[bytes]:
        """`--shard=1/2` killed at a random moment and resumed, `--shard=2/2` run, then `evalspec merge` of the
        two killed at a random moment (once or twice) and run again: the merge's exports are an uninterrupted
        merge's, the shards' are as they were."""
        t.expect = self.merge_baseline(t.config)  # (made before the trial began: trial())
        first = self.start(path, t.config)
        self._kill_at(t, base, first, rng.choice(["random", "calling", "judging", "scoring", "exporting"]), rng)
        resumed = self._resume(t, path, t.config)
        self._no_crash(t, resumed)
        if resumed.returncode != base.code:
            t.failures.append(f"the resumed shard exited {resumed.returncode}: {self.output(resumed)[-600:]}")
        other = self.start(path, t.config, "--shard=2/2")
        other.wait(300)
        t.processes += 1
        self._no_crash(t, other)
        self.fake.idle(15)
        self._segment(t)
        for _ in range(1 if rng.random() < 0.7 else 2):
            merge = self.merge(t.config)
            how = rng.random()
            if how < 0.3:
                delay = rng.uniform(0.0, t.expect.seconds * 1.2)
                t.notes.append(f"merge killed {delay:.3f}s after its start")
                with contextlib.suppress(subprocess.TimeoutExpired):
                    merge.wait(delay)
            elif how < 0.65:  # once it took the run's lock (its database appears beside the shards'), as it merges
                seen = self._wait_for_file(merge, f"{_label(self.out)}.run.db")
                delay = rng.uniform(0.0, 0.08)
                t.notes.append(f"merge killed {delay:.3f}s after it took the lock" if seen else
                               "merge: its lock not seen")
                with contextlib.suppress(subprocess.TimeoutExpired):
                    merge.wait(delay)
            else:
                seen = self._wait_for_file(merge, ".*.tmp")
                t.notes.append("merge killed as it wrote a file" if seen else "merge: no temporary file seen")
            if merge.poll() is not None:
                t.notes.append(f"(it ended first: exit {merge.returncode})")
            self._kill(t, merge)
        final = self.merge(t.config)
        final.wait(300)
        t.processes += 1
        return final

    def _scenario(self, t: Trial, base: Baseline, path: Path, rng: random.Random) -> subprocess.Popen[bytes] | None:
        cfg, s = t.config, t.scenario
        if s == "after_end":
            first = self.start(path, cfg)
            first.wait(120)
            t.processes += 1
            self._no_crash(t, first)
            if first.returncode != base.code:
                t.failures.append(f"the run exited {first.returncode}, uninterrupted {base.code}")
            self.fake.idle(15)
            self._segment(t)
            return self._resume(t, path, cfg)
        if s == "full_disk":
            return self._full_disk(t, base, path, rng)
        if s == "sigterm":
            return self._stopped(t, base, path, rng)
        if s == "two_fresh":
            return self._two_fresh(t, base, path, rng)
        if s == "reexport":
            return self._reexport(t, base, path, rng)
        if s == "merging":
            return self._merging(t, base, path, rng)
        first = self.start(path, cfg)
        moments = ["random", "polling", "scoring", "exporting"] if "batch" in cfg.kind else [
            "random", "calling", "judging", "scoring", "exporting"]
        moment = rng.choice(moments) if s in ("twice", "concurrent") else "early" if s == "fresh_beside" else s
        if self.report_wanted(cfg) and s in ("twice", "concurrent") and rng.random() < 0.3:
            moment = "reporting"
        self._kill_at(t, base, first, moment, rng)
        if s == "twice":
            second = self.start(path, cfg, "--resume")
            self._kill_at(t, base, second, rng.choice(moments), rng)
            return self._resume(t, path, cfg)
        if s == "concurrent":
            a, b = self.start(path, cfg, "--resume"), self.start(path, cfg, "--resume")
            if rng.random() < 0.3:  # the one that holds the run is killed too, once the other was refused
                end = time.monotonic() + 60
                while a.poll() is None and b.poll() is None and time.monotonic() < end:
                    time.sleep(0.005)
                ended, holder = (a, b) if a.poll() is not None else (b, a)
                time.sleep(rng.uniform(0.0, base.seconds / 2))
                if ended.returncode == 2 and holder.poll() is None:
                    holder.send_signal(signal.SIGKILL)
                    t.notes.append("the survivor killed too")
            a.wait(120)
            b.wait(120)
            codes = sorted([a.returncode, b.returncode])
            t.notes.append(f"concurrent exits {codes}")
            for p in (a, b):
                if p.returncode == 2 and "already running (PID" not in self.output(p):
                    t.failures.append(f"a refused --resume did not say why: {self.output(p)[-600:]}")
            if codes == [0, 0] and base.code == 0:
                t.notes.append("(both finished: the second started after the first ended)")
            elif 2 not in codes:
                t.failures.append(f"two --resume at once, neither refused: exits {codes}")
            t.processes += 1  # the two count as one segment
            self._no_crash(t, a)
            self._no_crash(t, b)
            self.fake.idle(15)
            self._segment(t)
            return self._resume(t, path, cfg)
        if s == "fresh_beside":
            self.fake.slow = 5.0  # the resume's calls wait while the others start (no sooner than they end)
            main = self.start(path, cfg, "--resume")
            try:
                end = time.monotonic() + 60
                while self.lock_pid() != main.pid and main.poll() is None and time.monotonic() < end:
                    time.sleep(0.005)
                # Beside the running resume: a fresh run and another resume, both refused, the database untouched
                # (not when the resume has nothing to do: it ends at once, and a fresh run then rightly runs).
                others = [] if main.poll() is not None or self.counts()["scores"] >= base.cells else [
                    self.start(path, cfg), self.start(path, cfg, "--resume")]
                if not others:
                    t.notes.append("(nothing left to resume: no run beside it)")
                for p in others:
                    p.wait(120)
                    alive = main.poll() is None
                    self._no_crash(t, p)
                    out = self.output(p)
                    if alive and (p.returncode != 2 or "already running (PID" not in out):
                        t.failures.append(f"a run beside a running one exited {p.returncode}: {out[-600:]}")
                    elif not alive:
                        t.notes.append("(the resume ended before a run beside it)")
                if list(self.out.rglob("*.run.prev.db")):
                    t.failures.append("a run beside a running one emptied its database (.prev kept)")
                self.fake.slow = 0.0
                if rng.random() < 0.5:
                    main.send_signal(signal.SIGKILL)
                    t.notes.append("the resume killed then")
            finally:
                self.fake.slow = 0.0
            main.wait(120)
            t.processes += 1
            self._no_crash(t, main)
            self.fake.idle(15)
            self._segment(t)
            return self._resume(t, path, cfg)
        return self._resume(t, path, cfg)

    def _two_fresh(self, t: Trial, base: Baseline, path: Path, rng: random.Random) -> subprocess.Popen[bytes]:
        """Two fresh runs of a file never run, started at once: one runs, the other is refused saying so
        (the first is slowed so that it still runs then); the one that runs is killed now and then."""
        self.fake.slow = 0.2
        try:
            a, b = self.start(path, t.config), self.start(path, t.config)
            end = time.monotonic() + 60
            while a.poll() is None and b.poll() is None and time.monotonic() < end:
                time.sleep(0.005)
            ended, other = (a, b) if a.poll() is not None else (b, a)
            out = self.output(ended)
            t.notes.append(f"first to end: exit {ended.returncode}")
            if ended.returncode != 2 or "already running (PID" not in out:
                t.failures.append(f"of two fresh runs at once, the first to end exited {ended.returncode}: {out[-600:]}")
            if rng.random() < 0.5:
                time.sleep(rng.uniform(0.0, base.seconds))
                if other.poll() is None:
                    other.send_signal(signal.SIGKILL)
                    t.notes.append("the other killed")
        finally:
            self.fake.slow = 0.0
        other.wait(120)
        ended.wait(10)
        t.processes += 1
        self._no_crash(t, ended)
        self._no_crash(t, other)
        self.fake.idle(15)
        self._segment(t)
        return self._resume(t, path, t.config)

    def _stopped(self, t: Trial, base: Baseline, path: Path, rng: random.Random) -> subprocess.Popen[bytes]:
        """SIGTERM or SIGINT (Ctrl-C) at a random moment, sometimes a SIGKILL while the run stops; resumed."""
        first = self.start(path, t.config)
        end = time.monotonic() + 30
        while self.database() is None and first.poll() is None and time.monotonic() < end:
            time.sleep(0.002)
        delay = rng.uniform(0.0, base.seconds * 1.1)
        with contextlib.suppress(subprocess.TimeoutExpired):
            first.wait(delay)
        if first.poll() is None:
            sig = rng.choice([signal.SIGTERM, signal.SIGINT])
            first.send_signal(sig)
            t.notes.append(f"{sig.name} {delay:.2f}s after the database appeared")
            if rng.random() < 0.3:
                time.sleep(rng.uniform(0.0, 0.2))
                if first.poll() is None:
                    first.send_signal(signal.SIGKILL)
                    t.notes.append("then SIGKILL")
        first.wait(60)
        out = self.output(first)
        t.notes.append(f"exit {first.returncode}")
        finished = "results: " in out  # the signal came as the process was ending, its results written
        if first.returncode not in (130, -9, base.code) and not (finished and first.returncode in (-15, -2)):
            t.failures.append(f"a stopped run exited {first.returncode}: {out[-600:]}")
        elif first.returncode == 130 and "interrupted" not in out:
            t.failures.append(f"a stopped run did not say so: {out[-600:]}")
        self._ended(t, first)
        return self._resume(t, path, t.config)

    def _resume(self, t: Trial, path: Path, cfg: Config) -> subprocess.Popen[bytes]:
        locked = self.lock_pid() is not None
        before = self.counts()["scores"]
        proc = self.start(path, cfg, "--resume")
        proc.wait(300)
        t.processes += 1
        out = self.output(proc)
        if locked and "cleared the lock of an earlier run" not in out:
            t.failures.append("the resume did not say it cleared the killed run's lock")
        if before and "already done (resumed)" not in out:
            t.failures.append(f"the resume did not say {before} cells were done")
        return proc

    def _full_disk(self, t: Trial, base: Baseline, path: Path, rng: random.Random) -> subprocess.Popen[bytes]:
        cfg = t.config
        free = rng.randint(8_000, int(base.out_bytes * 1.3))
        ballast = self.ballast = None
        if self.disk == "tmpfs" or (self.disk == "auto" and os.geteuid() == 0):
            self.out.mkdir(exist_ok=True)
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(self.out)], check=True)
            ballast = self.out / "ballast"
            st = os.statvfs(self.out)
            self.ballast = ballast if rng.random() < 0.7 else None  # else a resume on the full disk first
            with open(ballast, "wb") as f:
                f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - free))
            t.notes.append(f"{free:,} B free on a tmpfs")
            first = self.start(path, cfg)
        else:
            t.notes.append(f"file size limit {free:,} B")
            first = self.start(path, cfg, fsize=free)
        if rng.random() < 0.3:
            self._kill_at(t, base, first, "random", rng)
        else:
            first.wait(120)
            out = self.output(first)
            if first.returncode == 2:
                if not _says_full(out, tmpfs=ballast is not None):
                    t.failures.append(f"a full disk was not said clearly: {out[-800:]}")
                t.notes.append("full: exit 2")
            elif first.returncode == base.code:
                t.notes.append("it fitted")
            else:
                t.failures.append(f"on a full disk the run exited {first.returncode}: {out[-800:]}")
            self._ended(t, first)
        if ballast is not None and ballast.exists():
            again = self.start(path, cfg, "--resume")
            again.wait(120)
            out = self.output(again)
            t.notes.append(f"resumed on the full disk: exit {again.returncode}")
            if again.returncode not in (2, base.code) or (again.returncode == 2 and (
                    "cannot write" not in out or "full" not in out)):
                t.failures.append(f"a resume on a full disk exited {again.returncode}: {out[-800:]}")
            self.ballast = ballast
            self._ended(t, again)
        self.ballast = None
        return self._resume(t, path, cfg)

    def _finish(self, t: Trial, base: Baseline, final: subprocess.Popen[bytes]) -> None:
        self._no_crash(t, final)
        if final.returncode != base.code:
            t.failures.append(f"the final resume exited {final.returncode}, uninterrupted {base.code}: "
                              f"{self.output(final)[-800:]}")
        got = self.exports()
        if sorted(got) != sorted(base.exports):
            t.failures.append(f"exports {sorted(got)} where the uninterrupted run made {sorted(base.exports)}")
        for name, older in self.earlier.items():
            # One run, one set of files: every export of the run is named by the stamp its first export chose
            # (kept in the run database), so a re-export (a --resume after a kill once it was written, of a
            # finished run, of a stopped one) writes the same file, never a second one.
            t.failures.append(f"{len(older) + 1} exports of one run: {name}")
        final = self.raw_exports()
        for segment, exports in t.seen:
            # What a process left exported is what every later export of the run repeats, byte for byte (the
            # stamp, the comparison's `timestamp` and the cost file's `cached` counts included).
            for rel, data in exports.items():
                if rel not in final:
                    t.failures.append(f"{rel}, exported when segment {segment} ended, is gone")
                elif final[rel] != data:
                    t.failures.append(f"{rel}, exported when segment {segment} ended, was rewritten with other "
                                      f"bytes: {_first_difference(data, final[rel])}")
        left = [str(p.relative_to(self.out)) for p in self.out.rglob(".*.tmp")] if self.out.exists() else []
        if left:  # a killed export's temporary file: the next export into its folder removes it
            t.failures.append(f"temporary file(s) of a killed export left: {left}")
        for db in sorted(self.out.rglob("*.run.db")) if self.out.exists() else []:
            # a database that holds no run: a killed merge's lock, which the next merge did not take for its own
            with contextlib.suppress(sqlite3.Error), contextlib.closing(_read(db)) as conn:
                if conn.execute("SELECT count(*) FROM run").fetchone()[0] == 0:
                    t.failures.append(f"a run database that holds no run left: {db.relative_to(self.out)}")
        if self.report_wanted(t.config):
            self._check_report(t)
        cached = "--cache" in t.config.flags
        for name, data in got.items():
            want = base.exports.get(name)
            if want is None or data == want:
                continue
            if cached and _without_usage(name, data) == _without_usage(name, want):
                # A call the killed run made and cached, but had not committed, is answered from the cache
                # (or a warm cache answered it): the same answer, counted as cached (no tokens, no cost). Not a
                # difference in results; but every call is counted once, paid or cached, whichever process made it.
                t.notes.append(f"{name.rsplit('_', 1)[-1]}: calls answered from the cache")
                if name.endswith("_cost.json") and _calls(data) != _calls(want):
                    t.failures.append(f"{name} counts other calls (paid + cached) than the uninterrupted run's: "
                                      f"{_calls(data)} / {_calls(want)}")
                continue
            t.failures.append(f"{name} differs from the uninterrupted run's: {_first_difference(want, data)}")

    def _check_calls(self, t: Trial, base: Baseline) -> None:
        asked: dict[str, list[int]] = defaultdict(list)
        what: dict[str, str] = {}
        for seg, mark, w in self.fake.asked:
            asked[mark].append(seg)
            what[mark] = w
        committed_at = dict(t.kills)  # segment -> marks committed when it ended
        for mark, segs in asked.items():
            if mark not in base.marks:
                t.failures.append(f"a call the uninterrupted run does not make: {what[mark]} #{mark}")
            if len(segs) != len(set(segs)):
                t.failures.append(f"asked twice by processes running at once: {what[mark]} #{mark} in segments {segs}")
            for earlier in segs[:-1]:
                if earlier not in committed_at:
                    t.failures.append(f"asked again though its first process finished: {what[mark]} #{mark}")
            for seg, marks in t.kills:
                if mark in marks and any(s > seg for s in segs):
                    t.failures.append(f"committed at the kill of segment {seg} and asked again: {what[mark]} #{mark}")
        missing = base.marks - set(asked) - t.warm
        if missing and not any("exit" in f for f in t.failures):
            t.failures.append(f"{len(missing)} calls of the uninterrupted run never asked")
        t.notes.append(f"{len(self.fake.asked)} asks, {sum(len(v) - 1 for v in asked.values())} repeated in flight")


class _BatchFake:
    """tests/fakebatch.py's server as the harness uses its fake: a new server for each run of a trial's
    baseline and for each trial (a batch an earlier trial left there would be found by its key, and its
    results taken without a call); `asked` lists every request body it was sent, in a batch or not."""

    def __init__(self) -> None:
        from fakebatch import FakeBatchServer

        self._make = lambda: FakeBatchServer(polls_per_state=2)
        self.server = self._make().start()
        self.segment = 0
        self.slow = 0.0  # (not used: batches take polls, not seconds)

    def url(self, path: str = "") -> str:
        return str(self.server.url(path))

    @property
    def asked(self) -> list[tuple[int, str, str]]:
        return [(0, h, "request") for h, n in self.server.sent.items() for _ in range(n)]

    def reset(self) -> None:
        self.server.stop()
        self.server = self._make().start()

    def idle(self, timeout: float = 10.0) -> bool:
        time.sleep(0.05)
        return True

    def stop(self) -> None:
        self.server.stop()


class BatchHarness(Harness):
    """`--batch` trials: the Weval blueprint of batch_blueprint() through the provider batch APIs. A batch's
    key is its content, so a resumed run finds the batches a killed one created: nothing may be sent twice
    (tests/fakebatch.py counts every request body, in batches and interactively)."""

    def __init__(self, root: Path, python: str) -> None:
        super().__init__(root, python)
        self.fake.stop()
        self.fake = _BatchFake()  # type: ignore[assignment]

    def env(self) -> dict[str, str]:
        return {**super().env(), **self.fake.server.env()}  # type: ignore[attr-defined]

    def start(self, path: Path, config: Config, *extra: str, fsize: int | None = None) -> subprocess.Popen[bytes]:
        return super().start(path, config, "--batch", "--batch-poll", "0.02", "--batch-size", "8", *extra, fsize=fsize)

    def _check_calls(self, t: Trial, base: Baseline) -> None:
        sent = self.fake.server.sent  # type: ignore[attr-defined]
        twice = {h: n for h, n in sent.items() if n > 1}
        if twice:
            t.failures.append(f"{len(twice)} requests sent twice: {sorted(twice.items())[:5]}")
        if set(sent) - base.marks:
            t.failures.append(f"{len(set(sent) - base.marks)} requests the uninterrupted run does not send")
        if base.marks - set(sent) and not any("exit" in f for f in t.failures):
            t.failures.append(f"{len(base.marks - set(sent))} requests of the uninterrupted run never sent")
        t.notes.append(f"{sum(sent.values())} requests, {self.fake.server.creations} batches created")  # type: ignore[attr-defined]


def _label(out: Path) -> str:
    """The run label of the shards' manifests under `out` (what `evalspec merge` locks)."""
    manifest = next(out.rglob("*.shard.json"), None)
    return manifest.name.split(".shard-")[0] if manifest is not None else "?"


def for_scenario(config: Config, scenario: str) -> Config:
    """The config a scenario needs: `reporting` writes report.html (--report), `merging` runs shards."""
    if scenario == "reporting" and "--report" not in config.flags:
        return Config(config.kind, (*config.flags, "--report"))
    if scenario == "merging":
        return Config(config.kind, ("--shard=1/2", *(f for f in config.flags if f == "--report")))
    return config


def _says_full(out: str, *, tmpfs: bool) -> bool:
    """Whether a run stopped by a full disk said so: "cannot write", and on a full tmpfs "full" (SQLite's
    "database or disk is full", or its "disk I/O error" with the CLI's "(the disk is full: …)"). Under the
    file-size limit the disk has room: SQLite's error is "disk I/O error" or "database or disk is full"."""
    if "cannot write" not in out:
        return False
    return "full" in out if tmpfs else ("full" in out or "disk I/O error" in out or "too large" in out)


USAGE_KEYS = ("token_usage", "judge_token_usage", "cost_usd", "judge_cost_usd", "judge_target")


def _without_usage(name: str, data: bytes) -> Any:
    """An export without what a call answered from the response cache changes: the cost file, and an AgentV
    row's token and cost fields (its judge_* fields are there only when its judges' calls were paid for)."""
    if name.endswith("_cost.json"):
        return None
    if name.endswith(".jsonl"):
        return [{k: v for k, v in json.loads(line).items() if k not in USAGE_KEYS} for line in data.splitlines()]
    return data


def _accept_queue(url: str) -> int:
    """Connections waiting to be accepted by the server listening at `url` on 127.0.0.1 (the rx_queue of its
    LISTEN socket in /proc/net/tcp; 0 where that cannot be read)."""
    from urllib.parse import urlsplit

    port = urlsplit(url).port
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            parts = line.split()
            if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                return int(parts[4].split(":")[1], 16)
    return 0


def _calls(cost: bytes) -> dict[str, int]:
    """A cost file's calls by role and model, paid and cached added up."""
    return {f"{line['role']} {line['model']}": line["calls"] + line["cached"] for line in json.loads(cost)["lines"]}


def _read(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    return conn


def _fsize_limit(limit: int) -> Any:
    import resource

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def _mounted(path: Path) -> bool:
    with contextlib.suppress(OSError):
        return any(line.split()[1] == str(path) for line in Path("/proc/mounts").read_text().splitlines())
    return False


def _first_difference(a: bytes, b: bytes) -> str:
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    return f"at byte {i}: {a[max(0, i - 80):i + 80]!r} / {b[max(0, i - 80):i + 80]!r}"


def main(argv: list[str] | None = None) -> int:
    global PROMPTS, TESTS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--formats", help="default: weval,agentv; with --batch: batch,abatch (Weval, AgentV)")
    ap.add_argument("--scenarios", help=f"default: {','.join(SCENARIOS)}; with --batch: {','.join(BATCH_SCENARIOS)}")
    ap.add_argument("--batch", action="store_true", help="the --batch trials (BatchHarness) instead")
    ap.add_argument("--size", type=float, default=1.0,
                    help=f"the runs' size: {PROMPTS} prompts and {TESTS} tests times this (longer runs, more commits)")
    ap.add_argument("--flags", help="run options, one picked a trial (an empty one: none); each has its "
                    "uninterrupted run (default: ,--cache,--shard=1/2,--report; with --batch: none)")
    ap.add_argument("--keep", type=Path, help="copy each failed trial's folder here")
    ap.add_argument("--disk", choices=("auto", "tmpfs", "fsize"), default="auto",
                    help="how a full disk is made: a small tmpfs (root only; auto when root) or the file-size limit")
    ap.add_argument("--root", type=Path, help="where the trials run (default: a temporary folder)")
    args = ap.parse_args(argv)
    PROMPTS, TESTS = max(4, round(PROMPTS * args.size)), max(2, round(TESTS * args.size))
    rng = random.Random(args.seed)
    formats = (args.formats or ("batch,abatch" if args.batch else "weval,agentv")).split(",")
    scenarios = (args.scenarios or ",".join(BATCH_SCENARIOS if args.batch else SCENARIOS)).split(",")
    flags = (args.flags if args.flags is not None else "" if args.batch else ",--cache,--shard=1/2,--report").split(",")
    root = args.root or Path(tempfile.mkdtemp(prefix="kill-trials-"))
    root.mkdir(parents=True, exist_ok=True)
    harness = (BatchHarness if args.batch else Harness)(root, sys.executable)
    harness.keep, harness.seed, harness.disk = args.keep, args.seed, args.disk
    totals: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    began = time.monotonic()
    try:
        for n in range(args.trials):
            flag = rng.choice(flags)
            config = Config(rng.choice(formats), (flag,) if flag else ())
            scenario = rng.choice(scenarios)
            config = for_scenario(config, scenario)
            if "--cache" in config.flags and rng.random() < 0.5:
                config = Config(config.kind, config.flags, warm=True)
            trial_rng = random.Random(rng.random())
            t0 = time.monotonic()
            t = harness.trial(n, config, scenario, trial_rng)
            key = f"{config.name}/{scenario}"
            totals[key] += 1
            status = "ok" if not t.failures else "FAIL"
            if t.failures:
                failed[key] += 1
            print(f"trial {n:3d} {key:<34} {status:4} {time.monotonic() - t0:5.1f}s  {t.processes} processes; "
                  + "; ".join(t.notes), flush=True)
            for f in t.failures:
                print(f"    - {f}", flush=True)
    finally:
        harness.close()
        if not args.root:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\n{sum(totals.values())} trials in {time.monotonic() - began:.0f} s, {sum(failed.values())} failed")
    for key in sorted(totals):
        print(f"  {key:<34} {totals[key]:4d} trials, {failed[key]} failed")
    for part, name in ((0, "run"), (1, "scenario")):
        by: Counter[str] = Counter()
        bad: Counter[str] = Counter()
        for key, n in totals.items():
            by[key.rsplit("/", 1)[part]] += n
            bad[key.rsplit("/", 1)[part]] += failed[key]
        print(f"by {name}: " + ", ".join(f"{k} {by[k]} ({bad[k]} failed)" for k in sorted(by)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
