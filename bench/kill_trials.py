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
then deleted and the run resumed). Each trial asserts:

- no call whose answer or judgement was committed at a kill is asked again afterwards;
- every call of the uninterrupted run is asked, no other, and each once — bar a call in flight at a kill
  (asked, not committed), which the next process asks once more; no call is asked twice by processes
  running at the same time;
- the exports (the Weval comparison JSON, the AgentV results JSONL, their cost files) are byte for byte
  those of an uninterrupted run of the same file, after masking what differs between any two runs: the
  run's start stamp (in the file names, the comparison's `timestamp`, the cost file's `results`), and
  AgentV's per-row `timestamp` and `duration_ms`;
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
             "fresh_beside", "full_disk", "sigterm", "two_fresh")
BATCH_SCENARIOS = ("random", "polling", "scoring", "exporting", "after_end", "twice", "concurrent", "sigterm")
MARK = re.compile(r"#([0-9a-f]{12})\b")
STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z")
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
            if "[[ ## rubric ## ]]" in last:
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

    @property
    def name(self) -> str:
        return self.kind + "".join(self.flags)


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


@dataclass
class Trial:
    n: int
    config: Config
    scenario: str
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    kills: list[tuple[int, set[str]]] = field(default_factory=list)  # (segment, marks committed then)
    processes: int = 0


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

    def exports(self) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        self.earlier: dict[str, list[bytes]] = {}
        if not self.out.exists():
            return found
        for p in sorted(self.out.rglob("*")):
            if not p.is_file() or ".run." in p.name or ".cache" in p.parts:
                continue
            if p.name.endswith(("_comparison.json", "_cost.json")) or p.suffix == ".jsonl":
                data = STAMP.sub(b"<stamp>", p.read_bytes())
                if p.suffix == ".jsonl":
                    data = AGENTV_TIMES.sub(rb'\1"<time>"', data)
                name = STAMP.sub(b"<stamp>", str(p.relative_to(self.out)).encode()).decode()
                if name in found:  # an earlier export of the run (another stamp): kept apart, the newest here
                    self.earlier.setdefault(name, []).append(found[name])
                found[name] = data
        return found

    # -- the uninterrupted run ---------------------------------------------------------------------------
    def baseline(self, config: Config) -> Baseline:
        if config.name in self.baselines:
            return self.baselines[config.name]
        runs = []
        for _ in range(2):  # twice: what differs between two uninterrupted runs is what the trials mask
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
        a, b = runs
        assert a.exports == b.exports, f"two uninterrupted {config.name} runs exported different bytes: " + \
            ", ".join(k for k in a.exports if a.exports[k] != b.exports.get(k))
        assert a.marks == b.marks and a.code == b.code
        assert a.exports, "the uninterrupted run exported nothing"
        self.baselines[config.name] = a
        print(f"baseline {config.name}: exit {a.code}, {len(a.marks)} calls ({a.answers} answers, {a.judgements} "
              f"judgements), {a.cells} cells, {a.seconds:.2f} s, {len(a.exports)} exports, out {a.out_bytes:,} B",
              flush=True)
        return a

    # -- a trial ---------------------------------------------------------------------------------------
    def trial(self, n: int, config: Config, scenario: str, rng: random.Random) -> Trial:
        base = self.baseline(config)
        t = Trial(n, config, scenario)
        path = self.fresh_work(config)
        self.fake.reset()
        self.fake.asked.clear()
        self.fake.segment = 0
        mount: Path | None = None
        try:
            final = self._scenario(t, base, path, rng)
            if final is not None:
                self._finish(t, base, final)
        except AssertionError as exc:
            t.failures.append(str(exc) or repr(exc))
        finally:
            self._check_calls(t, base)
            if t.failures and self.keep is not None:
                shutil.copytree(self.work, self.keep / f"trial-{self.seed}-{n}", dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("ballast"))
            mount = self.work / "out"
            if _mounted(mount):
                subprocess.run(["umount", "-l", str(mount)], check=False)
        return t

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
        t.kills.append((self.fake.segment, self.committed()))
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
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(delay)
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
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(delay)
        if proc.poll() is not None:
            t.notes.append(f"(it ended first: exit {proc.returncode})")
        self._kill(t, proc)

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
            t.kills.append((self.fake.segment, self.committed()))
            self.fake.segment += 1
            return self._resume(t, path, cfg)
        if s == "full_disk":
            return self._full_disk(t, base, path, rng)
        if s == "sigterm":
            return self._stopped(t, base, path, rng)
        if s == "two_fresh":
            return self._two_fresh(t, base, path, rng)
        first = self.start(path, cfg)
        moments = ["random", "polling", "scoring", "exporting"] if "batch" in cfg.kind else [
            "random", "calling", "judging", "scoring", "exporting"]
        moment = rng.choice(moments) if s in ("twice", "concurrent") else "early" if s == "fresh_beside" else s
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
            t.kills.append((self.fake.segment, self.committed()))
            self.fake.segment += 1
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
            t.kills.append((self.fake.segment, self.committed()))
            self.fake.segment += 1
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
        t.kills.append((self.fake.segment, self.committed()))
        self.fake.segment += 1
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
            # A Weval comparison file is named by the time it is written (write/weval.py): a run killed after
            # writing it and resumed, or a finished run resumed, writes it again under a new name; a stopped
            # run (SIGTERM, a full disk) writes its cells so far (write_partial).
            stopped = t.scenario in ("sigterm", "full_disk")
            cached = "--cache" in t.config.flags
            for data in older:
                if data == got.get(name):
                    t.notes.append(f"an earlier {name.rsplit('_', 1)[-1]} alike")
                elif cached and _without_usage(name, data) == _without_usage(name, got.get(name, b"")):
                    # The cost file's `cached` counts this session's cache hits: a re-export reads 0.
                    t.notes.append(f"an earlier {name.rsplit('_', 1)[-1]} alike but for its cache counts")
                elif stopped:
                    t.notes.append(f"the stopped run's {name.rsplit('_', 1)[-1]}")
                else:
                    t.failures.append(f"an earlier {name} that differs: {_first_difference(got[name], data)}")
        left = [p.name for p in self.out.rglob(".*.tmp")] if self.out.exists() else []
        if left:  # a SIGKILL while an export was written leaves its temporary file (renamed into place when done)
            t.notes.append(f"{len(left)} temporary file(s) of a killed export left")
        cached = "--cache" in t.config.flags
        for name, data in got.items():
            want = base.exports.get(name)
            if want is None or data == want:
                continue
            if cached and _without_usage(name, data) == _without_usage(name, want):
                # A call the killed run made and cached, but had not committed, is answered from the cache:
                # the same answer, counted as cached (no tokens, no cost). Not a difference in results.
                t.notes.append(f"{name.rsplit('_', 1)[-1]}: calls answered from the cache")
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
        missing = base.marks - set(asked)
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
