"""The attack run: hostile eval files, providers, clients and concurrent runs thrown at evalspec.

    python bench/attack.py [AREA ...]     areas: yaml scoring outside secrets faults concurrent runs sandbox protocol,
                                          the fourth round's planted display names replies chains protocol4,
                                          the fifth round's args streams environment journal batch merge lsp5 report,
                                          the sixth round's guard streamed waiting report6,
                                          the seventh round's lsp7 outside7 secrets7 resume7 faults7
                                          (bench/attack_round7.py, which says what breaks them),
                                          the eighth round's editor8 report8 check8 files8 replies8
                                          (bench/attack_round8.py), the ninth round's state9 show9
                                          memory9 (bench/attack_round9.py),
                                          the ninth round's run-side wire9 secrets9 spell9 scripts9
                                          (bench/attack_round9r.py)

Prints every probe it tried and what broke (a line starting with BROKEN), then counts per area. Not
run in CI (minutes, strace, real subprocesses); each failure it found became a focused test in tests/.

What "broke" means per area:
  outside    a file outside the project was opened (strace: open/openat/execve of a path under the
             outside folder, by evalspec or anything it started) or its marker reached the results,
             the journal, stdout/stderr or a request the fake provider received, without
             --allow-outside-files; or `check`/`run` crashed (traceback) or hung.
  secrets    the API key appears in anything written or printed (results, journal, report, stdout,
             stderr) — the model may receive it only when the file itself asks for it.
  faults     a faulted provider reply ended in a traceback, a hang (past its bound) or no error cell.
  concurrent two to four runs on one output folder made a call twice or lost a journal record.
  sandbox    a `$js` probe, code judge or cli target escaped its time/output limit or left a process.
  protocol   the language server did not answer a request within its bound, or died.
  planted    a file outside the output folder changed because of links, FIFOs or folders planted in it.
  display    a control character from a file, model or provider printed raw (OSC 52, titles, erases…).
  names      an id or suite name put a file outside the output folder, shared a file, or refused a run.
  replies    as faults, with the fourth round's replies.
  chains     kill/resume chains with concurrent resumes asked an item more than the kills explain.
  protocol4  as protocol, with the fourth round's probes.
  args       a command-line value that cannot be honoured was accepted, or a traceback or hang.
  streams    standard streams closed, full or cut, odd terminals and locales: a traceback or hang.
  environment  keys, base URLs, proxies and variables that are hostile: a traceback, a hang, a leak.
  journal    a damaged journal made `--resume` crash, hang, or write results that do not parse.
  batch      a hostile batch service made the run crash, hang, take a wrong answer or leak the key.
  merge      shard results from elsewhere made `merge` write outside -o, crash or hang.
  lsp5       as protocol, with the fifth round's probes and initialize variants.
  report     a payload in a report's data ran or became an element in headless Chromium.
  guard      through the guard process (a hostile client; a stand-in server writing garbage, closing its
             output, hanging, dying): a request not answered in time, an id answered twice, a server that
             can answer not served again within 15 s, edits lost by a restart, a process left after exit.
  streamed   a streamed analysis (check, run) or the editor's incremental one that differs from a whole
             analysis of the same text (findings, items), an exception, a big suite `check` cannot finish.
  waiting    a batch run with a full or odd TMPDIR, a file-size limit, a kill, a cut journal, a reused
             batch id, then resumed: a traceback, a hang, results unlike the interactive run's, a request
             sent twice in batches.
  report6    as report, with hostile model answers and judge reasons (Weval and AgentV).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from fakeprovider import FakeProvider, Reply  # noqa: E402

MARKER = "ATTACK-MARKER-7f3a91"
KEY = "sk-attack-key-0123456789abcdef"
EVALSPEC = [sys.executable, "-m", "evalspec.cli"]
TARGETS = """targets:
  - name: default
    provider: openai
    model: candidate
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
    judge_target: grader
  - name: grader
    provider: openai
    model: grader-model
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
"""


@dataclass
class Tally:
    tried: int = 0
    broken: list[str] = field(default_factory=list)

    def note(self, name: str, problem: str | None) -> None:
        self.tried += 1
        if problem:
            self.broken.append(f"{name}: {problem}")
            print(f"  BROKEN {name}: {problem}", flush=True)
        else:
            print(f"  ok     {name}", flush=True)


@dataclass
class Ran:
    code: int | None  # None: killed at the time limit
    out: str
    err: str
    opened: list[str]  # paths opened or executed (strace), when traced
    seconds: float
    peak_kb: int = 0  # the evalspec process's peak resident memory


def run_cli(args: list[str], *, env: dict[str, str], cwd: Path, timeout: float = 60.0,
            trace: Path | None = None) -> Ran:
    """evalspec with `args`; with `trace`, under strace noting every successful open/exec."""
    usage = Path(tempfile.mkstemp(prefix="attack-rss-")[1])
    cmd = ["/usr/bin/time", "-q", "-f", "%M", "-o", str(usage), *EVALSPEC, *args]
    log = None
    if trace is not None:
        log = Path(tempfile.mkstemp(prefix="attack-strace-")[1])
        cmd = ["strace", "-f", "-qq", "-e", "trace=open,openat,openat2,execve,creat", "-e", "status=successful", "-o", str(log), *cmd]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = None
    try:
        peak_kb = int(usage.read_text().split()[-1])
    except (ValueError, IndexError):
        peak_kb = 0
    usage.unlink()
    opened: list[str] = []
    if log is not None:
        text = log.read_text(errors="replace")
        log.unlink()
        opened = [m.group(1) for m in re.finditer(r'(?:open|openat|openat2|execve|creat)\((?:[A-Z_]+, )?"([^"]*)"',
                                                   text)]
    return Ran(code, out, err, opened, time.monotonic() - start, peak_kb)


def base_env(fake: FakeProvider, home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": fake.url("/v1"), "ANTHROPIC_BASE_URL": fake.url(""),
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "NO_COLOR": "1", "LANG": "C.UTF-8"}


def everything_under(folder: Path) -> str:
    if not folder.exists():
        return ""
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in folder.rglob("*")
                     if p.is_file() and not p.is_symlink())


def crashed(ran: Ran) -> str | None:
    if ran.code is None:
        return f"hung (killed after {ran.seconds:.0f} s)"
    for text in (ran.err, ran.out):
        # Ours, not a judge script's stderr quoted in a row: a frame in evalspec's own code.
        if "Traceback (most recent call last)" in text and OWN_FRAME.search(text):
            return "traceback: " + text.strip().splitlines()[-1][:200]
    return None


OWN_FRAME = re.compile(r'File "[^"]*/(engine|server|evalspec|evalspec_lsp)/')


# ------------------------------------------------------------------------------------------------
# outside files


def _outside_world(root: Path) -> Path:
    """A folder outside the project holding every kind of file an eval file might point at."""
    out = root / "outside"
    (out / "tpl").mkdir(parents=True)
    (out / "secret.txt").write_text(f"{MARKER} secret\n")
    (out / "secret.md").write_text(f"{MARKER} {{{{ answer }}}} {{{{ expected_output }}}}\n")
    (out / "cases.jsonl").write_text(json.dumps({"id": "far", "input": MARKER, "criteria": "x"}) + "\n")
    (out / "cases.yaml").write_text(f"- id: far\n  input: {MARKER}\n  criteria: x\n")
    (out / "tpl" / "f.txt").write_text(MARKER)
    (out / "judge.py").write_text(f"print('{{\"score\": 1, \"reasoning\": \"{MARKER}\"}}')\n")
    (out / "ws.yaml").write_text("template: tpl\n")
    (out / "ws-static.yaml").write_text("mode: static\npath: tpl\n")
    repo = out / "repo"
    repo.mkdir()
    (repo / "f.txt").write_text(MARKER)
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "."], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "x"], check=True)
    return out


def _suite(body: str) -> str:
    return "name: s\ndescription: d\n" + body


def _test(input_yaml: str, extra: str = "") -> str:
    return _suite("tests:\n  - id: a\n    criteria: c\n" + input_yaml + extra +
                  "    assert: [{type: contains, value: x}]\n")


def _file_block(value: str) -> str:
    return ("    input:\n      - role: user\n        content:\n"
            f"          - {{type: file, value: {json.dumps(value)}}}\n")


def outside_cases(root: Path, out: Path, project: Path) -> Iterator[tuple[str, str, Callable[[], None] | None]]:
    """(name, eval file text, setup) for every way a reference could leave the project."""
    evals = project / "evals"
    up = os.path.relpath(out, evals)
    abs_secret = str(out / "secret.txt")

    def link(name: str, to: Path) -> Callable[[], None]:
        return lambda: os.symlink(to, evals / name)

    def links(*pairs: tuple[str, Path]) -> Callable[[], None]:
        def make() -> None:
            for name, to in pairs:
                os.symlink(to, evals / name)
        return make

    block_refs: list[tuple[str, str, Callable[[], None] | None]] = [
        ("dotdot", f"{up}/secret.txt", None),
        ("dotdot-normalised", f"./sub/../{up}/secret.txt", None),
        ("dotdot-deep", "../" * 40 + abs_secret.lstrip("/"), None),
        ("absolute", abs_secret, None),
        ("absolute-double-slash", "//" + abs_secret.lstrip("/"), None),
        ("slash-repo-relative", "/" + os.path.relpath(out / "secret.txt", project), None),
        ("file-url", "file://" + abs_secret, None),
        ("file-url-relative", f"file://{up}/secret.txt", None),
        ("tilde", "~/secret.txt", None),
        ("percent-encoded", f"{up.replace('..', '%2e%2e')}/secret.txt", None),
        ("windows-backslash", f"{up.replace('/', chr(92))}\\secret.txt", None),
        ("nul-in-path", f"{up}/secret.txt\0.png", None),
        ("symlink-file", "link.txt", link("link.txt", out / "secret.txt")),
        ("symlink-relative", "rel.txt", link("rel.txt", Path(up) / "secret.txt")),
        ("symlink-dir", "dirlink/secret.txt", link("dirlink", out)),
        ("symlink-chain", "c1.txt", links(("c2.txt", out / "secret.txt"), ("c1.txt", evals / "c2.txt"))),
        ("symlink-loop", "l1.txt", links(("l1.txt", evals / "l2.txt"), ("l2.txt", evals / "l1.txt"))),
        ("env-var", "${{ ATTACK_PATH }}", None),
        # the third round
        ("file-url-localhost", "file://localhost" + abs_secret, None),
        ("file-colon-no-slashes", "file:" + f"{up}/secret.txt", None),
        ("encoded-slash", f"{up.replace('/', '%2F')}%2Fsecret.txt", None),
        ("fullwidth-dots", f"{up.replace('..', '．．').replace('/', '／')}／secret.txt", None),
        ("proc-self-root", "/proc/self/root" + abs_secret, None),
        ("proc-self-cwd", "/proc/self/cwd/" + os.path.relpath(out / "secret.txt", project), None),
        ("dev-fd", "/dev/fd/0", None),
        ("trailing-dot-slash", f"{up}/./secret.txt/.", None),
        ("double-dot-in-name", "..secret.txt", link("..secret.txt", out / "secret.txt")),
        ("symlink-to-proc-cwd", "pc.txt", link("pc.txt", Path("/proc/self/cwd") / os.path.relpath(out / "secret.txt",
                                                                                                  project))),
        ("symlink-in-parent-folder", "sub/x/secret.txt", lambda: (evals / "sub").mkdir() or
         os.symlink(out, evals / "sub" / "x")),
        ("interpolated-dotdot", "${{ ATTACK_UP }}/secret.txt", None),
        # the fourth round
        ("hard-link", "hl.txt", lambda: os.link(out / "secret.txt", evals / "hl.txt")),
        ("hard-link-in-subfolder", "sub/hl.md", lambda: (evals / "sub").mkdir() or
         os.link(out / "secret.md", evals / "sub" / "hl.md")),
        ("windows-long-prefix", "\\\\?\\" + abs_secret, None),
        ("windows-unc", "\\\\localhost\\" + abs_secret.lstrip("/").replace("/", "\\"), None),
        ("windows-drive", "C:" + abs_secret, None),
        ("file-url-other-host", "file://example.com" + abs_secret, None),
        ("double-encoded", f"{up.replace('..', '%252e%252e')}/secret.txt", None),
        ("division-slash", f"{up.replace('/', chr(0x2215))}{chr(0x2215)}secret.txt", None),
        ("fullwidth-solidus-only", f"{up.replace('/', chr(0xFF0F))}{chr(0xFF0F)}secret.txt", None),
        ("one-dot-leader", f"{up.replace('..', chr(0x2025))}/secret.txt", None),
        ("interpolated-absolute", "${{ ATTACK_ABS }}", None),
        ("symlink-to-hard-link", "shl.txt", lambda: os.link(out / "secret.txt", root / "hl-outside.txt") or
         os.symlink(root / "hl-outside.txt", evals / "shl.txt")),
    ]
    for name, ref, setup in block_refs:
        yield f"file-block/{name}", _test(_file_block(ref)), setup
    yield "expected-output-file-block", _test("    input: hi\n", "    expected_output:\n      - role: assistant\n"
                                              "        content:\n"
                                              f"          - {{type: file, value: {up}/secret.txt}}\n"), None
    yield "input-files", _test("    input: hi\n", f"    input_files: [{up}/secret.txt]\n"), None
    yield "tests-string-jsonl", _suite(f"tests: {up}/cases.jsonl\n"), None
    yield "tests-string-absolute", _suite(f"tests: {out / 'cases.yaml'}\n"), None
    yield "tests-file-url", _suite(f"tests:\n  - file://{up}/cases.yaml\n"), None
    yield "tests-file-url-abs", _suite(f"tests:\n  - file://{out / 'cases.yaml'}\n"), None
    yield "tests-glob-up", _suite(f"tests:\n  - file://{up}/*.yaml\n"), None
    yield "tests-glob-dirlink", _suite("tests:\n  - file://dl/*.yaml\n"), link("dl", out)
    yield "tests-symlinked-file", _suite("tests: cl.jsonl\n"), link("cl.jsonl", out / "cases.jsonl")
    yield "tests-glob-star-link", _suite("tests:\n  - file://**/*.jsonl\n"), link("sub.jsonl", out / "cases.jsonl")
    judge = "    input: hi\n    assert:\n      - type: llm-judge\n        prompt: {p}\n"
    yield "judge-prompt-dotdot", _suite("tests:\n  - id: a\n    criteria: c\n" + judge.format(p=f"{up}/secret.md")), None
    yield "judge-prompt-abs", _suite("tests:\n  - id: a\n    criteria: c\n" + judge.format(p=str(out / "secret.md"))), None
    yield "judge-prompt-link", _suite("tests:\n  - id: a\n    criteria: c\n" + judge.format(p="./pl.md")), \
        link("pl.md", out / "secret.md")
    code = "    input: hi\n    assert:\n      - type: code-judge\n        command: [python3, {p}]\n"
    yield "code-judge-dotdot", _suite("tests:\n  - id: a\n    criteria: c\n" + code.format(p=f"{up}/judge.py")), None
    yield "code-judge-abs", _suite("tests:\n  - id: a\n    criteria: c\n" + code.format(p=str(out / "judge.py"))), None
    yield "code-judge-cwd", _suite("tests:\n  - id: a\n    criteria: c\n    input: hi\n    assert:\n"
                                   "      - type: code-judge\n        command: [python3, judge.py]\n"
                                   f"        cwd: {up}\n"), None
    ws = "workspace:\n  {k}: {v}\n"
    yield "workspace-file", _suite(f"workspace: {up}/ws.yaml\n" + "tests:\n  - id: a\n    criteria: c\n    input: hi\n"), None
    yield "workspace-template", _suite(ws.format(k="template", v=f"{up}/tpl") +
                                       "tests:\n  - id: a\n    criteria: c\n    input: hi\n"), None
    yield "workspace-template-abs", _suite(ws.format(k="template", v=str(out / "tpl")) +
                                           "tests:\n  - id: a\n    criteria: c\n    input: hi\n"), None
    yield "workspace-template-link", _suite(ws.format(k="template", v="tl") +
                                            "tests:\n  - id: a\n    criteria: c\n    input: hi\n"), link("tl", out / "tpl")
    yield "workspace-static", _suite(f"workspace:\n  mode: static\n  path: {up}/tpl\n"
                                     "tests:\n  - id: a\n    criteria: c\n    input: hi\n"), None
    yield "workspace-repo-local", _suite("workspace:\n  repos:\n    - path: r\n      source: {type: local, path: "
                                         f"{up}/repo}}\n" + "tests:\n  - id: a\n    criteria: c\n    input: hi\n"), None
    yield "workspace-repo-file-url", _suite("workspace:\n  repos:\n    - path: r\n      source: {type: git, url: "
                                            f"'file://{out / 'repo'}'}}\n"
                                            "tests:\n  - id: a\n    criteria: c\n    input: hi\n"), None
    inner = ("- id: in\n  criteria: c\n  input:\n    - role: user\n      content:\n"
             f"        - {{type: file, value: {up}/secret.txt}}\n")
    yield "tests-file-inside-with-outside-block", _suite("tests: inner.yaml\n"), \
        lambda: (evals / "inner.yaml").write_text(inner)
    yield "tests-jsonl-inside-with-outside-block", _suite("tests: inner.jsonl\n"), \
        lambda: (evals / "inner.jsonl").write_text(json.dumps({"id": "in", "criteria": "c", "input": [
            {"role": "user", "content": [{"type": "file", "value": f"{up}/secret.txt"}]}]}) + "\n")
    yield "tests-jsonl-inside-with-outside-judge-prompt", _suite("tests: inner.jsonl\n"), \
        lambda: (evals / "inner.jsonl").write_text(json.dumps({"id": "in", "criteria": "c", "input": "hi", "assert": [
            {"type": "llm-judge", "prompt": f"{up}/secret.md"}]}) + "\n")
    yield "tests-glob-inside-with-outside-block", _suite("tests:\n  - file://in*.yaml\n"), \
        lambda: (evals / "inner.yaml").write_text(inner)
    yield "test-workspace-template", _suite("tests:\n  - id: a\n    criteria: c\n    input: hi\n"
                                            f"    workspace: {{template: {up}/tpl}}\n"), None


# ATTACK_CONTROL=1: run with --allow-outside-files, to see that the probes do reach the outside files
# (every run probe should then report BROKEN): a check of the harness itself.
CONTROL = ["--allow-outside-files"] if os.environ.get("ATTACK_CONTROL") else []
# ATTACK_ONLY=text: only the probes whose name holds it (yaml, scoring, faults, protocol, outside and the
# runs area's kills), to rerun some.
ONLY = os.environ.get("ATTACK_ONLY", "")


def attack_outside(tally: Tally) -> None:
    print("outside files", flush=True)
    with FakeProvider() as fake:
        for index in range(1000):
            root = Path(tempfile.mkdtemp(prefix="attack-out-"))
            try:
                out = _outside_world(root)
                project = root / "proj"
                (project / ".git").mkdir(parents=True)
                (project / ".agentv").mkdir()
                (project / ".agentv" / "targets.yaml").write_text(TARGETS)
                (project / "evals").mkdir()
                cases = list(outside_cases(root, out, project))
                if index >= len(cases):
                    break
                name, text, setup = cases[index]
                if ONLY and ONLY not in name:
                    continue
                if setup is not None:
                    setup()
                suite = project / "evals" / "s.eval.yaml"
                suite.write_text(text)
                env = base_env(fake, out) | {"ATTACK_PATH": str(out / "secret.txt"),
                                             "ATTACK_UP": os.path.relpath(out, project / "evals"),
                                             "ATTACK_ABS": str(out / "secret.txt")}
                fake.reset()
                for what in ("check", "run"):
                    args = ["check", str(suite)] if what == "check" else \
                        ["run", str(suite), "-o", str(root / "results"), "--no-cache", "--timeout", "5", "--retries", "0", "--no-report", *CONTROL]
                    ran = run_cli(args, env=env, cwd=project, trace=root, timeout=90)
                    problem = crashed(ran)
                    # Paths as opened and as they resolve (a link inside the project pointing out).
                    real_out = os.path.realpath(out)
                    leaked = sorted({p for p in ran.opened
                                     if os.path.realpath(os.path.join(project, p)).startswith(real_out + "/")
                                     or p.startswith(str(out) + "/") or "/outside/" in p})
                    if leaked:
                        problem = (problem + "; " if problem else "") + f"opened {', '.join(leaked[:3])}"
                    seen = [where for where, t in (("stdout", ran.out), ("stderr", ran.err),
                                                   ("results", everything_under(root / "results")),
                                                   ("requests", "\n".join(r.body.decode(errors="replace")
                                                                          for r in fake.requests)))
                            if MARKER in t]
                    if seen:
                        problem = (problem + "; " if problem else "") + f"marker in {', '.join(seen)}"
                    tally.note(f"outside/{name}/{what} (exit {ran.code})", problem)
            finally:
                shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# YAML and meaning: documents through analyze() and every editor feature (the third round)

W = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n"
A = "name: s\ndescription: d\ntests:\n"


def yaml_cases() -> Iterator[tuple[str, str]]:
    """(name, document): tags, complex keys, anchors on keys, merges, numbers no double holds,
    directives, BOMs and other encodings, NUL, CR-only files, million-element flow sequences, long keys,
    deep flow nesting, regexes and interpolations built to backtrack or recurse, special files."""
    yield "tag-python-object", W + "- id: !!python/object:os.system a\n  prompt: !!python/object/apply:os.system [ls]\n"
    yield "tag-binary", W + "- id: a\n  prompt: !!binary aGVsbG8=\n"
    yield "tag-custom", W + "- id: !foo a\n  prompt: !bar {x: 1}\n  should: !baz [x]\n"
    yield "tag-verbatim", W + "- id: !<tag:yaml.org,2002:int> a\n  prompt: hi\n"
    yield "tag-str-on-map", "title: !!str {a: 1}\nmodels: !!map [a]\n---\n- id: a\n  prompt: !!int hi\n"
    yield "complex-key", W + "- ? [a]\n  : b\n  prompt: hi\n"
    yield "complex-key-map", "? {title: x}\n: y\nmodels: [a:b]\n---\n- prompt: x\n"
    yield "complex-key-top-agentv", "? [tests]\n: []\nname: s\n"
    yield "anchor-on-key", W + "- &k id: a\n  *k : b\n  prompt: hi\n"
    yield "alias-as-key", "x: &k prompt\n---\n- *k : hi\n"
    yield "merge-chain", "a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: &c {<<: *b, z: 3}\ntitle: t\n" + "models: {<<: *c}\n---\n- prompt: hi\n  <<: [*a, *b, *c]\n"
    yield "merge-of-seq", "title: t\nmodels: [a:b]\n---\n- <<: [1, 2]\n  prompt: hi\n"
    yield "merge-of-scalar", "title: t\n<<: x\n---\n- <<: hi\n  prompt: x\n"
    yield "merge-self", "a: &a\n  <<: *a\n"
    yield "merge-seq-of-seq", W + "- <<: [[a], [b]]\n  prompt: x\n"
    yield "merge-in-agentv-test", A + "  - &t {id: a, input: hi, criteria: c}\n  - <<: *t\n    id: b\n"
    yield "merge-deep-chain", "".join(f"a{i}: &a{i} {{<<: *a{i-1}, k{i}: {i}}}\n" if i else "a0: &a0 {k: 0}\n" for i in range(500)) + "title: t\n"
    yield "huge-int-weight", W + "- prompt: hi\n  should:\n    - point: x\n      weight: " + "9" * 10000 + "\n"
    yield "huge-int-temp", "title: t\nmodels: [a:b]\ntemperature: " + "1" * 10000 + "\n---\n- prompt: hi\n"
    yield "huge-int-agentv", A + "  - id: a\n    input: hi\n    criteria: c\n    assert: [{type: contains, value: x, weight: " + "7" * 20000 + "}]\n"
    yield "huge-int-key", "1" * 10000 + ": x\ntitle: t\n"
    yield "huge-int-id", W + "- id: " + "5" * 10000 + "\n  prompt: hi\n"
    yield "float-1e999", W + "- prompt: hi\n  weight: 1e999\n  should: [{point: x, weight: 1e999}, {point: y, weight: -1e999}, {point: z, weight: .nan}, {point: w, weight: .inf}]\n"
    yield "float-nan-temp", "title: t\nmodels: [a:b]\ntemperature: .nan\ntemperatures: [.inf, -.inf, .nan, 1e999]\n---\n- prompt: hi\n"
    yield "agentv-weights", A + "  - id: a\n    input: hi\n    criteria: c\n    assert: [{type: contains, value: x, weight: .nan}, {type: contains, value: y, weight: -1}, {type: contains, value: z, weight: 1e999}]\n"
    yield "agentv-threshold", A + "  - id: a\n    input: hi\n    criteria: c\n    assert: [{type: rubrics, criteria: [{id: a, outcome: x, weight: .nan, score_ranges: [{score_range: [1e999, -1], outcome: x}]}]}]\n"
    yield "dup-keys", "title: a\ntitle: b\nmodels: [a:b]\nmodels: 3\n---\n- prompt: a\n  prompt: b\n  id: x\n  id: [1]\n"
    yield "dup-keys-agentv", A + "  - id: a\n    id: b\n    input: hi\n    input: [1]\n    criteria: c\n"
    yield "yaml-directive", "%YAML 1.1\n---\ntitle: t\nmodels: [a:b]\n---\n- prompt: hi\n"
    yield "yaml-directive-bad", "%YAML 9.9\n---\ntitle: t\n"
    yield "tag-directive", "%TAG !e! tag:example.com,2000:\n---\ntitle: !e!x t\n---\n- prompt: !e!y hi\n"
    yield "tag-directive-dup", "%TAG ! !a\n%TAG ! !b\n---\ntitle: t\n"
    yield "directive-mid", W + "- prompt: hi\n%YAML 1.2\n---\n- prompt: x\n"
    yield "reserved-directive", "%FOO bar baz\n---\ntitle: t\n"
    for enc in ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"):
        yield f"decoded-{enc}", (W + "- prompt: hi\n").encode(enc).decode("latin-1")
    yield "bom-mid", W + "- prompt: hi\n\ufeff- prompt: x\n"
    yield "bom-after-doc", W + "---\n\ufeff- prompt: x\n"
    yield "many-boms", "\ufeff" * 100 + W
    yield "nul-many", W + "- prompt: " + "\x00" * 1000 + "\n"
    yield "nul-key", "\x00title: t\n"
    yield "cr-only", (W + "- id: a\n  prompt: hi\n  should: [x]\n").replace("\n", "\r")
    yield "cr-only-agentv", (A + "  - id: a\n    input: hi\n    criteria: c\n").replace("\n", "\r")
    yield "mixed-nl", "title: t\r\nmodels: [a:b]\n\r---\r\n- prompt: hi\u2029- prompt: x\x85"
    yield "flow-1m", "title: t\nmodels: [" + "a:b," * 1_000_000 + "]\n---\n- prompt: hi\n"
    yield "flow-1m-should", W + "- prompt: hi\n  should: [" + "x," * 1_000_000 + "]\n"
    yield "flow-1m-numbers", "x: [" + "1," * 1_000_000 + "]\n"
    yield "flow-1m-agentv-tests", A.replace("tests:\n", "tests: [") + "{id: a, input: b, criteria: c}," * 100_000 + "]\n"
    yield "long-scalar-key", "k" * 1_000_000 + ": x\ntitle: t\n"
    yield "long-scalar-key-1024+", W + "- " + "p" * 2000 + ": hi\n  prompt: x\n"
    yield "long-quoted-key", '"' + "k" * 500_000 + '": x\n'
    yield "long-plain-multiline-key", W + "- prompt: " + "a " * 500_000 + "\n"
    yield "deep-flow", "x: " + "[" * 100_000 + "]" * 100_000 + "\n"
    yield "deep-flow-open", "x: " + "[" * 100_000 + "\n"
    yield "deep-flow-map", "x: " + "{a: " * 50_000 + "1" + "}" * 50_000 + "\n"
    yield "deep-flow-in-prompt", W + "- prompt: " + "[" * 50_000 + "\n"
    yield "deep-flow-in-should", W + "- prompt: hi\n  should: " + "[" * 50_000 + "]" * 50_000 + "\n"
    yield "deep-block", "".join("  " * i + "a:\n" for i in range(3000))
    yield "deep-block-seq", "".join("  " * i + "-\n" for i in range(3000))
    yield "deep-seq-one-line", "x: " + "- " * 50_000 + "a\n"
    yield "deep-compact-seq-item", W + "- " + "- " * 50_000 + "a\n"
    yield "many-anchors", "".join(f"a{i}: &a{i} x\n" for i in range(100_000))
    yield "long-anchor-name", "a: &" + "n" * 1_000_000 + " x\nb: *" + "n" * 1_000_000 + "\n"
    yield "undefined-alias", W + "- prompt: *nope\n  should: [*x, *y]\n"
    yield "alias-to-self-seq", "a: &a [*a]\n"
    yield "many-docs", "---\n" * 200_000
    yield "many-docs-w", W + "---\n" * 100_000
    yield "many-items", W + "- prompt: x\n" * 100_000
    yield "many-items-same-id", W + "- id: a\n  prompt: x\n" * 50_000
    yield "many-points", W + "- prompt: x\n  should:\n" + "    - x\n" * 100_000
    yield "many-tests-dup-id", A + "  - {id: a, input: b, criteria: c}\n" * 50_000
    yield "tabs-indent", W + "-\tid: a\n\tprompt: hi\n"
    yield "weird-spaces", W + "-\u00a0id: a\n\u3000 prompt: hi\n"
    yield "zero-width", W + "- id\u200b: a\n  pro\u200dmpt: hi\n"
    yield "rtl-override", W + "- id: a\u202e\n  prompt: hi\n"
    yield "invalid-utf8-surrogateescape", W + "- prompt: \udcff\udcfe\n"
    yield "private-use-astral", W + "- prompt: " + "\U0010ffff" * 1000 + "\n"
    yield "noncharacters", W + "- prompt: \ufffe\uffff\n"
    yield "c1-controls", W + "- prompt: \x80\x81\x9f\n"
    yield "escapes-dq", W + '- prompt: "\\x00\\u0000\\U0010FFFF\\ud800\\udfff\\N\\_\\L\\P"\n'
    yield "escape-U-huge", W + '- prompt: "\\UFFFFFFFF"\n'
    yield "escape-surrogate-pair-dq", W + '- prompt: "\\ud83d\\ude00"\n'
    yield "block-scalar-indicators", W + "- prompt: |9-\n         x\n- prompt: >+0\n  x\n- prompt: |10\n  x\n"
    yield "block-scalar-huge-indent", W + "- prompt: |" + "9" * 100 + "\n  x\n"
    yield "anchor-tag-both", W + "- prompt: &a !t &b x\n"
    yield "empty-key", W + "- : x\n  prompt: hi\n"
    yield "null-key", W + "- ~: x\n  null: y\n  prompt: hi\n"
    yield "bool-keys", W + "- true: x\n  yes: y\n  prompt: hi\n"
    yield "int-key-id", W + "- 1: x\n  0x10: y\n  prompt: hi\n"
    yield "float-keys", "1e999: x\n.nan: y\n.inf: z\ntitle: t\n"
    yield "seq-as-key-agentv", "tests:\n  - ? [id]\n    : a\n    input: x\n"
    yield "map-as-key-seq", "? {a: [1, {b: c}]}\n: x\n"
    yield "question-mark-nested", "? ? ? a\n"
    yield "comment-in-flow", "x: [a, # c\n b]\n"
    yield "timestamps", W + "- id: 2001-12-14t21:59:43.10-05:00\n  prompt: 2002-12-14\n"
    yield "sexagesimal", W + "- id: 190:20:30\n  prompt: 0o777\n  weight: 1_000\n"
    yield "tests-is-number", "name: s\ndescription: d\ntests: 12345678901234567890123\n"
    yield "tests-huge-int-string", "name: s\ndescription: d\ntests: " + "9" * 5000 + "\n"
    yield "interp-loop", A + "  - id: a\n    input: '${{ A }}${{ ${{ B }} }}'\n    criteria: '${{' \n"
    yield "interp-nested", A + "  - id: a\n    input: " + "'" + "${{ " * 5000 + "X" + " }}" * 5000 + "'\n    criteria: c\n"
    yield "interp-unclosed-many", A + "  - id: a\n    input: '" + "${{" * 100_000 + "'\n    criteria: c\n"
    yield "interp-long", A + "  - id: a\n    input: '${{ " + "A" * 500_000 + " }}'\n    criteria: c\n"
    yield "mustache-unclosed", W + "- prompt: '" + "{{" * 100_000 + "'\n"
    yield "regex-point-catastrophic", W + "- prompt: hi\n  should:\n    - $matches: '(a+)+$'\n    - $imatches: '^(a|a)*$'\n    - $matches: '(?:(?:a*)*)*b'\n"
    yield "regex-point-huge", W + "- prompt: hi\n  should:\n    - $matches: '" + "(a" * 5000 + ")" * 5000 + "'\n"
    yield "regex-point-badlookbehind", W + "- prompt: hi\n  should:\n    - $matches: '(?<=a+)b'\n    - $matches: '\\\\k<x>(?<x>a)'\n    - $matches: '[\\\\u{10FFFF}-\\\\u{0}]'\n"
    yield "regex-point-flags", W + "- prompt: hi\n  should:\n    - $matches: ['a', 'gimsuyvdx']\n    - $matches: '/a/zz'\n"
    yield "regex-repetition-bomb", W + "- prompt: hi\n  should:\n    - $matches: 'a{1000000000}'\n    - $matches: '(a{1000}){1000}'\n    - $matches: '((a{100}){100}){100}'\n"
    yield "regex-agentv", A + "  - id: a\n    input: hi\n    criteria: c\n    assert: [{type: regex, value: '(a+)+$'}, {type: regex, value: '(a{999999}){999999}'}, {type: regex, value: '[z-a]'}]\n"
    yield "js-point-bomb", W + "- prompt: hi\n  should:\n    - $js: '" + "(" * 10000 + "'\n"
    yield "file-ref-dev-zero", A + "  - id: a\n    input: [{role: user, content: [{type: file, value: /dev/zero}]}]\n    criteria: c\n"
    yield "file-ref-proc", A + "  - id: a\n    input: [{role: user, content: [{type: file, value: /proc/self/environ}]}]\n    criteria: c\n"
    yield "tests-dev-zero", "name: s\ndescription: d\ntests: /dev/zero\n"
    yield "tests-proc-self-fd", "name: s\ndescription: d\ntests: file:///proc/self/fd/0\n"
    yield "tests-dev-stdin", "name: s\ndescription: d\ntests: /dev/stdin\n"
    yield "tests-glob-dev", "name: s\ndescription: d\ntests:\n  - file:///dev/*\n  - file:///proc/**/*.yaml\n"
    yield "tests-glob-star-many", "name: s\ndescription: d\ntests:\n  - file://" + "*/" * 200 + "*.yaml\n"
    yield "tests-glob-brackets", "name: s\ndescription: d\ntests:\n  - 'file://[[[[[[[[[[[[[[[[[[[[[[[[*.yaml'\n  - 'file://{a,{b,{c,{d}}}}*.yaml'\n  - 'file://" + "**/" * 100 + "x.yaml'\n"
    yield "targets-proc", "targets:\n  - name: a\n    provider: cli\n    command: cat /proc/self/environ\n    cwd: /proc\n"
    for special in ("pipe.jsonl", "dir.jsonl", "zero.jsonl"):  # made beside the document by attack_yaml
        yield f"tests-{special}", f"name: s\ndescription: d\ntests: {special}\n"
        yield f"tests-glob-{special}", f"name: s\ndescription: d\ntests:\n  - file://{special[:3]}*.jsonl\n"
        yield f"content-{special}", A + f"  - id: a\n    criteria: c\n    input: [{{role: user, content: [{{type: file, value: {special}}}]}}]\n"
        yield f"judge-prompt-{special}", A + f"  - id: a\n    criteria: c\n    input: hi\n    assert: [{{type: llm-judge, prompt: {special}}}]\n"
        yield f"workspace-{special}", "name: s\ndescription: d\nworkspace: " + special + "\ntests:\n  - {id: a, input: b, criteria: c}\n"
    yield "include-self", "name: s\ndescription: d\ntests:\n  - file://s.eval.yaml\n  - file://*.eval.yaml\n"
    yield "include-glob-everything", "name: s\ndescription: d\ntests:\n  - file://**/*\n"
    yield "hex-huge", W + "- prompt: hi\n  weight: 0x" + "f" * 100_000 + "\n"
    yield "octal-huge", W + "- prompt: hi\n  weight: 0o" + "7" * 100_000 + "\n"
    yield "int-400-digits-everywhere", ("title: t\nmodels: [a:b]\ntemperature: {n}\ntemperatures: [{n}]\n---\n"
                                       "- id: {n}\n  prompt: hi\n  weight: {n}\n  should:\n    - point: x\n      weight: {n}\n"
                                       "    - $js: {n}\n    - $contains: [{n}]\n").format(n="1" + "0" * 400)
    yield "agentv-400-digits-everywhere", ("name: s\ndescription: d\nexecution: {{threshold: {n}, trials: {{count: {n}}}}}\n"
                                          "tests:\n  - id: a\n    input: hi\n    criteria: c\n    assert: [{{type: contains, "
                                          "value: x, weight: {n}}}, {{type: latency, threshold: {n}}}]\n").format(n="1" + "0" * 400)
    yield "unknown-keys-20000", "".join(f"a{i}: &a{i} x\n" for i in range(20_000))
    yield from _fourth_round_yaml()
    yield from _fifth_round_yaml()


def _fifth_round_yaml() -> Iterator[tuple[str, str]]:
    """Aliases and merges that refer to themselves, anchors redefined thousands of times, typed scalars on
    the wrong node kinds, Unicode that renders as something else (combining floods, zero-width, bidi in
    keys and ids, NFC/NFD twin keys, noncharacters), directives and document markers in bulk."""
    yield "5/alias-to-own-sequence", W + "- id: a\n  prompt: hi\n  should: &s [x, *s]\n"
    yield "5/alias-to-own-mapping", W + "- id: a\n  prompt: hi\n  should: [{point: &p {k: *p}}]\n"
    yield "5/merge-of-itself", W + "- &m {<<: *m, id: a, prompt: hi}\n"
    yield "5/merge-list-of-itself", W + "- &m\n  <<: [*m, *m]\n  id: a\n  prompt: hi\n"
    chain = "".join(f"- &m{i} {{<<: *m{i - 1}, id: a{i}, prompt: hi}}\n" for i in range(1, 3000))
    yield "5/merge-chain-3000", W + "- &m0 {id: a0, prompt: hi}\n" + chain
    yield "5/merge-10000-aliases", W + "- &m {id: a, prompt: hi}\n- <<: [" + ", ".join(["*m"] * 10_000) + "]\n  id: b\n"
    for label, value in (("null", "~"), ("int", "5"), ("scalar", "x"), ("tagged", "!!merge x"), ("nested", "[[*m]]")):
        yield f"5/merge-of-{label}", W + f"- &m {{id: a, prompt: hi}}\n- <<: {value}\n  id: b\n  prompt: hi\n"
    yield "5/merge-as-flow-key", W + "- {[<<]: x, id: a, prompt: hi}\n- {? <<: *nope, id: b}\n"
    yield "5/anchor-redefined-10000", W + "".join(f"- &a {{id: a{i}, prompt: *a}}\n" for i in range(10_000))
    yield "5/alias-of-redefined-anchor", W + "- &a {id: x, prompt: hi}\n- &a {id: y, prompt: hi}\n- *a\n- *a\n"
    for tag, node in (("binary-huge", "!!binary " + "QUJD" * 700_000), ("binary-invalid", "!!binary '***'"),
                      ("timestamp-invalid", "!!timestamp 2001-13-45"), ("map-on-scalar", "!!map x"),
                      ("seq-on-scalar", "!!seq x"), ("str-on-seq", "!!str [a, b]"), ("null-on-map", "!!null {a: 1}"),
                      ("float-on-map", "!!float {a: 1}"), ("set-on-seq", "!!set [a, b]"), ("int-huge-hex", "!!int 0x" + "f" * 100_000)):
        yield f"5/tag-{tag}", W + f"- id: {node}\n  prompt: {node}\n  should: [{node}]\n  weight: {node}\n"
    yield "5/combining-flood-id", W + "- id: a" + "\u0301" * 200_000 + "\n  prompt: hi\n"
    yield "5/combining-flood-key", "title: t\nmodels: [openai:gpt-4o-mini]\nti" + "\u0301" * 200_000 + "tle: x\n---\n- prompt: hi\n"
    yield "5/zero-width-line", W + "- id: a\n  prompt: " + "\u200b" * 500_000 + "\n"
    yield "5/zwj-emoji-ids", W + "".join(f"- id: \U0001f468\u200d\U0001f469\u200d\U0001f467{i}\n  prompt: hi\n" for i in range(5_000))
    yield "5/bidi-in-keys", "title: t\nmo\u202edels: [openai:gpt-4o-mini]\n---\n- i\u2066d: a\n  pro\u061cmpt: hi\n"
    yield "5/nfc-nfd-twin-keys", "title: t\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: hi\n  t\u00edtulo: 1\n  ti\u0301tulo: 2\n"
    yield "5/nfc-nfd-twin-ids", W + "- id: caf\u00e9\n  prompt: hi\n- id: cafe\u0301\n  prompt: hi\n"
    yield "5/noncharacters", W + "- id: \ufffe\uffff\U0010ffff\n  prompt: \ufdd0 hi\n"
    yield "5/bom-in-keys", "title: t\nmodels: [openai:gpt-4o-mini]\n\ufefftitle: y\n---\n- id: a\n  prompt: hi\n"
    yield "5/private-use", W + "- id: \ue000\U000f0000\n  prompt: \U00100000\n"
    yield "5/yaml-9.9", "%YAML 9.9\n---\n" + W + "- id: a\n  prompt: hi\n"
    yield "5/yaml-directive-twice", "%YAML 1.1\n%YAML 1.2\n---\n" + W
    yield "5/tag-directive-used", "%TAG !e! tag:example.com,2000:\n---\ntitle: !e!x t\nmodels: [openai:gpt-4o-mini]\n---\n- id: !e!y a\n  prompt: hi\n"
    yield "5/document-ends-100000", W + "- id: a\n  prompt: hi\n" + "...\n" * 100_000
    yield "5/documents-100000-empty", "---\n" * 100_000 + W
    yield "5/literal-root", "--- |\n  title: t\n" + W
    yield "5/set-root", "--- !!set\n? a\n? b\n"
    for value in ("1e999", ".nan", "{a: 1}", "[a]", "null", "true", "0x" + "f" * 5000, "''", "' '"):
        yield f"5/id-{value[:12]}", W + f"- id: {value}\n  prompt: hi\n- id: {value}\n  prompt: hi\n"
        yield f"5/agentv-id-{value[:12]}", A + f"  - id: {value}\n    input: hi\n    criteria: c\n  - id: {value}\n    input: hi\n    criteria: c\n"
    yield "5/keys-empty-and-null", "title: t\nmodels: [openai:gpt-4o-mini]\n: x\n~: y\nnull: z\n---\n- ? \n  : a\n  prompt: hi\n"
    yield "5/block-scalar-keys", W + "- ? |\n    id\n  : a\n  prompt: hi\n"
    yield "5/agentv-bidi-file-refs", A + "  - id: a\n    input:\n      - role: user\n        content:\n          - {type: file, value: \"./\u202etxt.exe\"}\n    criteria: c\n"


def _fourth_round_yaml() -> Iterator[tuple[str, str]]:
    """Anchors across documents, YAML 1.1's typed scalars where strings and numbers are due, blueprints
    and suites written as JSON, single tokens of megabytes, interpolation edge cases, odd indentation."""
    yield "4/anchor-across-documents", "title: &t x\nmodels: [a:b]\n---\n- id: *t\n  prompt: *t\n"
    yield "4/alias-before-anchor", W + "- id: *later\n  prompt: &later hi\n"
    for name, value in (("bool-yes", "yes"), ("bool-off", "off"), ("timestamp", "2001-12-14t21:59:43.10-05:00"),
                        ("date", "2002-12-14"), ("binary-int", "0b1010"), ("underscored", "1_000_000"),
                        ("sexagesimal", "190:20:30"), ("inf", ".inf"), ("nan", "-.nan"), ("null", "~"),
                        ("set", "!!set {a, b}"), ("omap", "!!omap [a: 1, b: 2]"), ("pairs", "!!pairs [a: 1, a: 2]"),
                        ("timestamp-tag", "!!timestamp 2001-12-14"), ("float-tag-huge", "!!float 1e400"),
                        ("int-tag-on-text", "!!int abc"), ("bool-tag-on-text", "!!bool maybe")):
        yield f"4/typed-{name}", (f"title: {value}\nmodels: [{value}]\ntemperature: {value}\n---\n- id: {value}\n"
                                  f"  prompt: {value}\n  weight: {value}\n  should:\n    - {value}\n"
                                  f"    - {{point: {value}, weight: {value}}}\n")
        yield f"4/agentv-typed-{name}", (f"name: {value}\ndescription: {value}\nexecution: {{target: {value}}}\n"
                                         f"tests:\n  - id: {value}\n    input: {value}\n    criteria: {value}\n"
                                         f"    assert: [{{type: contains, value: {value}, weight: {value}, "
                                         f"required: {value}}}]\n")
    yield "4/json-blueprint", json.dumps({"title": "t", "models": ["a:b"]}) + "\n---\n" + json.dumps(
        [{"id": "a", "prompt": "hi", "should": ["x", {"$js": "1"}]}])
    yield "4/json-duplicate-keys", '{"title": "t", "title": {"x": 1}, "models": ["a:b"], "models": 5}\n'
    yield "4/json-escapes", '{"title": "\\u0000\\u001b]0;x\\u0007\\ud83d\\ude00", "models": ["a:b"]}\n'
    yield "4/json-agentv", json.dumps({"name": "s", "description": "d", "tests": [
        {"id": "a", "input": [{"role": "user", "content": [{"type": "file", "value": "x.md"}]}], "criteria": "c"}]})
    yield "4/json-flow-nested-maps", "{" * 5000 + "a: b" + "}" * 5000 + "\n"
    yield "4/token-3mb-prompt", W + "- id: a\n  prompt: " + "x" * 3_000_000 + "\n"
    yield "4/token-3mb-id", W + "- id: " + "i" * 3_000_000 + "\n  prompt: hi\n"
    yield "4/token-1mb-model", "title: t\nmodels: [openai:" + "m" * 1_000_000 + "]\n---\n- prompt: hi\n"
    yield "4/token-3mb-quoted-escapes", W + '- prompt: "' + "\\x41" * 700_000 + '"\n'
    yield "4/token-1mb-var-name", A + "  - {id: a, input: '${{ " + "V" * 1_000_000 + " }}', criteria: c}\n"
    for name, text in (("empty", "${{}}"), ("blank", "${{ }}"), ("nested", "${{ ${{ HOME }} }}"),
                       ("default-syntax", "${{ HOME:-x }}"), ("unicode-name", "${{ HÖME }}"),
                       ("nul-name", "${{ \\0 }}"), ("escaped-dollar", "$${{ HOME }}"), ("half", "${{ HOME }"),
                       ("back-to-back", "${{ HOME }}" * 50_000), ("newline-in", "${{\\n HOME \\n}}")):
        yield f"4/interp-{name}", (A + f'  - id: a\n    input: "{text}"\n    criteria: c\n'
                                   f'    expected_output: "{text}"\n')
        yield f"4/interp-targets-{name}", (f'targets:\n  - name: d\n    provider: openai\n    model: "{text}"\n'
                                           f'    api_key: "{text}"\n    endpoint: "{text}"\n')
    yield "4/tab-indent", "title: t\nmodels:\n\t- a:b\n---\n-\tid: a\n\tprompt: hi\n"
    yield "4/ideographic-space-indent", "title: t\n---\n- id: a\n\u3000 prompt: hi\n"
    yield "4/nbsp-indent", "title: t\n---\n- id: a\n\u00a0 prompt: hi\n"
    yield "4/zero-width-in-keys", "ti\u200btle: t\nmod\u2060els: [a:b]\n---\n- i\ufeffd: a\n  prompt: hi\n"
    yield "4/fullwidth-keys", "\uff54\uff49\uff54\uff4c\uff45: t\n---\n- prompt: hi\n"
    yield "4/windows-refs", A + "".join(
        f"  - id: w{i}\n    criteria: c\n    input: [{{role: user, content: [{{type: file, value: '{ref}'}}]}}]\n"
        for i, ref in enumerate(["C:\\Windows\\win.ini", "\\\\?\\C:\\x", "\\\\server\\share\\x",
                                 "file:///C:/x", "file://host/share/x", "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
                                 "..\u2215..\u2215etc\u2215passwd", "NUL", "CON.txt", "x::$DATA"]))


YAML_BOUND_S = 60.0  # a document past this is a hang (each is at most a few MB)
_YAML_WORKER = """
import json, random, sys, time
sys.path.insert(0, sys.argv[1])
from fuzzing import check
for line in sys.stdin:
    path, text = json.loads(line)
    out = check(path, text, random.Random(1))
    print(json.dumps([out.seconds, out.problems[:2]]), flush=True)
"""


def attack_yaml(tally: Tally) -> None:
    """Each document as a Weval blueprint and as an AgentV suite (a project folder holding a FIFO, a
    folder named like a tests file and a link to /dev/zero), through `tests/fuzzing.check`: analyze()
    then completion, hover, definition, symbols, folding, links and refactorings at six positions.
    Broken: an exception, an impossible range, or no answer within YAML_BOUND_S."""
    print("yaml and meaning", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-yaml-"))
    (root / ".git").mkdir()
    os.mkfifo(root / "pipe.jsonl")
    (root / "dir.jsonl").mkdir()
    os.symlink("/dev/zero", root / "zero.jsonl")
    worker: subprocess.Popen[str] | None = None
    try:
        for name, text in yaml_cases():
            if ONLY and ONLY not in name:
                continue
            for path in (root / "b.yml", root / "s.eval.yaml"):
                if worker is None:
                    worker = subprocess.Popen([sys.executable, "-c", _YAML_WORKER, str(HERE.parent / "tests")],
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                              errors="surrogateescape", start_new_session=True)
                assert worker.stdin is not None and worker.stdout is not None
                worker.stdin.write(json.dumps([str(path), text]) + "\n")
                worker.stdin.flush()
                answer: list[str] = []
                reader = threading.Thread(target=lambda w=worker, a=answer: a.append(w.stdout.readline()), daemon=True)
                start = time.monotonic()
                reader.start()
                reader.join(YAML_BOUND_S)
                took = time.monotonic() - start
                label = f"yaml/{name}/{path.name} ({len(text.encode('utf-8', 'surrogatepass')) // 1024} KB, {took:.1f} s)"
                if not answer or not answer[0]:
                    why = f"no answer within {YAML_BOUND_S:.0f} s" if not answer else "the worker died"
                    os.killpg(worker.pid, signal.SIGKILL)
                    worker.wait()
                    worker = None
                    tally.note(label, why)
                    continue
                _seconds, problems = json.loads(answer[0])
                tally.note(label, "; ".join(p.strip().splitlines()[-1][:200] for p in problems) or None)
    finally:
        if worker is not None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# secrets


def _leaks(text: str, key: str) -> str | None:
    """The key, or a long piece of it (a truncated preview, an escaped form), in `text`."""
    if key.strip() in text:
        return "the key"
    for size in (16, 12):
        for start in range(0, len(key.strip()) - size + 1, 4):
            if key.strip()[start:start + size] in text:
                return f"{size} characters of the key"
    if json.dumps(key)[1:-1] in text and json.dumps(key)[1:-1] != key:
        return "the key, JSON-escaped"
    return None


def secret_cases(key: str) -> Iterator[tuple[str, str, list[Reply], dict[str, str]]]:
    """(name, eval file, scripted replies, extra env)."""
    echo_json = {"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid_request_error"}}
    agentv = ("name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n    input: hello\n"
              "    assert: [{type: contains, value: hello}]\n")
    weval = "title: t\nmodels: [openai:candidate]\n---\n- id: p\n  prompt: hello\n  should: [be polite]\n"
    for fmt, text in (("agentv", agentv), ("weval", weval)):
        yield f"{fmt}/answer-echo", text, [Reply.ok(f"your key is {key}")] * 4, {}
        yield f"{fmt}/answer-echo-long", text, [Reply.ok("x" * 300 + key + "y" * 3000)] * 4, {}
        for offset in (0, 20, 37, 50, 61, 75, 99, 117, 150, 197, 250):  # where a preview might cut it
            yield f"{fmt}/answer-echo-at-{offset}", text, [Reply.ok("w" * offset + key + " and more" * 40)] * 4, {}
        yield f"{fmt}/401-body", text, [Reply.raw(401, echo_json)] * 4, {}
        yield f"{fmt}/400-text-body", text, [Reply.raw(400, f"bad key {key}")] * 4, {}
        yield f"{fmt}/500-retried", text, [Reply.raw(500, f"oops {key}")] * 12, {}
        yield f"{fmt}/429-retry-after", text, [Reply.raw(429, f"slow down {key}", **{"retry-after": "0"})] * 12, {}
        yield f"{fmt}/header-echo", text, [Reply.raw(500, "x", **{"x-echo": key})] * 12, {}
        yield f"{fmt}/redirect-to-key", text, [Reply.raw(302, "", location=f"http://127.0.0.1:1/?k={key}")] * 4, {}
        yield f"{fmt}/malformed-200-echo", text, [Reply.malformed(f'{{"choices": [{{"message": "{key}"}}]}}'.encode())] * 4, {}
        yield f"{fmt}/key-with-newline", text, [], {"OPENAI_API_KEY": key + "\n"}
        yield f"{fmt}/key-with-space", text, [], {"OPENAI_API_KEY": " " + key + " "}
        yield f"{fmt}/key-with-nonascii", text, [], {"OPENAI_API_KEY": key + "é"}
        yield f"{fmt}/key-with-crlf-header-injection", text, [], {"OPENAI_API_KEY": key + "\r\nX-Injected: 1"}
    yield "agentv/interpolated-criteria", agentv.replace("criteria: c", "criteria: 'k=${{ OPENAI_API_KEY }}'"), [], {}
    yield "agentv/interpolated-expected", agentv.replace("criteria: c", "criteria: c\n    expected_output: "
                                                         "'${{ OPENAI_API_KEY }}'"), [], {}
    yield "agentv/interpolated-assert", agentv.replace("value: hello", "value: '${{ OPENAI_API_KEY }}'"), [], {}
    yield "agentv/interpolated-id", agentv.replace("id: a", "id: '${{ OPENAI_API_KEY }}'"), [], {}
    yield "agentv/interpolated-other-name", agentv.replace("input: hello", "input: '${{ MY_PASSWORD }}'"), [], \
        {"MY_PASSWORD": key}
    yield "agentv/judge-echo", agentv.replace("assert: [{type: contains, value: hello}]",
                                              "assert: [{type: llm-judge}]"), \
        [Reply.ok("hello"), Reply.ok(json.dumps({"score": 1, "reasoning": key}))], {}
    yield "agentv/code-judge-prints-env", agentv.replace(
        "assert: [{type: contains, value: hello}]",
        "assert: [{type: code-judge, command: [sh, -c, 'echo $OPENAI_API_KEY >&2; echo $OPENAI_API_KEY; exit 3']}]"), [], {}


def attack_secrets(tally: Tally) -> None:
    print("secrets", flush=True)
    with FakeProvider() as fake:
        for name, text, replies, extra in secret_cases(KEY):
            root = Path(tempfile.mkdtemp(prefix="attack-sec-"))
            try:
                project = root / "proj"
                (project / ".git").mkdir(parents=True)
                (project / ".agentv").mkdir()
                (project / ".agentv" / "targets.yaml").write_text(TARGETS)
                suite = project / ("s.eval.yaml" if name.startswith("agentv") else "b.yml")
                suite.write_text(text)
                env = base_env(fake, root) | extra
                fake.reset()
                fake.then(*replies)
                problems = []
                for args in (["check", str(suite)],
                             ["run", str(suite), "-o", str(root / "results"), "--timeout", "3", "--retries", "1",
                              "--max-wait", "2", "--judge", "openai:grader"] + (["--json"] if "long" in name else []),
                             ["report", str(root / "results"), "-o", str(root / "results" / "r.html")],
                             ["report", str(root / "results"), "--format", "markdown",
                              "-o", str(root / "results" / "r.md")]):
                    if name.startswith("agentv") and "--judge" in args:
                        args = [a for a in args if a not in ("--judge", "openai:grader")]
                    ran = run_cli(args, env=env, cwd=project, timeout=120)
                    if crashed(ran):
                        problems.append(f"{args[0]}: {crashed(ran)}")
                    for where, t in (("stdout", ran.out), ("stderr", ran.err)):
                        leak = _leaks(t, env["OPENAI_API_KEY"])
                        if leak:
                            problems.append(f"{args[0]} {where}: {leak}")
                for f in sorted((root / "results").rglob("*")) if (root / "results").exists() else []:
                    if f.is_file():
                        leak = _leaks(f.read_text(errors="replace"), env["OPENAI_API_KEY"])
                        if leak:
                            problems.append(f"{f.relative_to(root)}: {leak}")
                tally.note(f"secrets/{name}", "; ".join(problems[:4]) or None)
            finally:
                shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# faulted providers

Behaviour = Callable[[Any, Any], Awaitable[None]]  # (reader, writer) after the request was read


class LoopbackServer:
    """A TCP server on 127.0.0.1 (its port chosen by the system), run by an event loop of its own on a
    daemon thread while the `with` lasts; a subclass answers each connection in `_serve`."""

    port = 0
    _loop: asyncio.AbstractEventLoop | None = None

    def __enter__(self) -> Self:
        ready = threading.Event()

        def run() -> None:
            loop = self._loop = asyncio.new_event_loop()
            server = loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()

        threading.Thread(target=run, daemon=True).start()
        ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


class RawServer(LoopbackServer):
    """A loopback server that reads one HTTP request per connection, then does whatever the probe's
    behaviour writes: truncated chunks, slow headers, endless bodies, resets, bombs."""

    def __init__(self) -> None:
        self.behaviour: Behaviour | None = None
        self.requests = 0

    async def _serve(self, reader: Any, writer: Any) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if length:
                    await reader.readexactly(length)
                self.requests += 1
                assert self.behaviour is not None
                await self.behaviour(reader, writer)
                if writer.is_closing():
                    return
        except Exception:
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()


def _reply(status: int, body: bytes, *headers: str, length: bool = True) -> Behaviour:
    async def go(reader: Any, writer: Any) -> None:
        head = f"HTTP/1.1 {status} X\r\n" + "".join(h + "\r\n" for h in headers)
        if length:
            head += f"content-length: {len(body)}\r\n"
        writer.write(head.encode("latin-1") + b"\r\n" + body)
        await writer.drain()
        if not length:
            writer.close()
    return go


def _json200(body: Any) -> Behaviour:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return _reply(200, data, "content-type: application/json")


def _chunks_then(end: str) -> Behaviour:
    async def go(reader: Any, writer: Any) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
                     b"10\r\n{\"choices\": [{\"me\r\n")
        await writer.drain()
        if end == "hang":
            await asyncio.sleep(3600)
        elif end == "close":
            writer.close()
        elif end == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        elif end == "endless":
            chunk = b"1000\r\n" + b" " * 4096 + b"\r\n"
            while True:
                writer.write(chunk * 64)
                await writer.drain()
        elif end == "trickle":
            while True:
                writer.write(b"1\r\n \r\n")
                await writer.drain()
                await asyncio.sleep(0.5)
    return go


def _slow_headers(reader: Any, writer: Any) -> Awaitable[None]:
    async def go() -> None:
        for byte in b"HTTP/1.1 200 OK\r\nx-slow: " + b"a" * 10_000:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.2)
    return go()


def _bomb(size: int, gzip: bool) -> bytes:
    """`size` zero bytes compressed, made a megabyte at a time (never `size` bytes in this process)."""
    import zlib
    packer = zlib.compressobj(9, zlib.DEFLATED, 31 if gzip else 15)
    block = b"\x00" * (1 << 20)
    parts = [packer.compress(block) for _ in range(size >> 20)]
    return b"".join([*parts, packer.flush()])


def _gzip_bomb(size: int) -> Behaviour:
    return _reply(200, _bomb(size, True), "content-type: application/json", "content-encoding: gzip")


def _deflate_bomb(size: int) -> Behaviour:
    return _reply(200, _bomb(size, False), "content-type: application/json", "content-encoding: deflate")


def _endless_content_length(reader: Any, writer: Any) -> Awaitable[None]:
    async def go() -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 999999999999\r\n\r\n")
        while True:
            writer.write(b" " * 65536)
            await writer.drain()
    return go()


def _no_length_endless(reader: Any, writer: Any) -> Awaitable[None]:
    async def go() -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
        while True:
            writer.write(b"[" * 65536)
            await writer.drain()
    return go()


def fault_cases(port: int) -> Iterator[tuple[str, Behaviour]]:
    msg = {"role": "assistant", "content": "hi"}
    ok = {"choices": [{"message": msg, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    shapes: list[tuple[str, Any]] = [
        ("null-body", None), ("list-body", []), ("string-body", "x"), ("number-body", 1),
        ("choices-null", {"choices": None}), ("choices-empty", {"choices": []}), ("choices-str", {"choices": "x"}),
        ("choice-null", {"choices": [None]}), ("choice-list", {"choices": [[1]]}),
        ("message-null", {"choices": [{"message": None}]}), ("message-list", {"choices": [{"message": [msg]}]}),
        ("content-null", {"choices": [{"message": {"content": None}}]}),
        ("content-int", {"choices": [{"message": {"content": 12}}]}),
        ("content-dict", {"choices": [{"message": {"content": {"text": "a"}}}]}),
        ("content-parts", {"choices": [{"message": {"content": [{"type": "text", "text": "a"}, None, 3, {"x": 1}]}}]}),
        ("tool-calls-str", {"choices": [{"message": {"content": "a", "tool_calls": "x"}}]}),
        ("tool-calls-bad", {"choices": [{"message": {"content": None, "tool_calls": [None, {"function": None},
                                                                                     {"function": {"name": 3, "arguments": "{bad"}},
                                                                                     {"function": {"name": "f", "arguments": [1]}}]}}]}),
        ("usage-str", {**ok, "usage": "lots"}), ("usage-list", {**ok, "usage": [1, 2]}),
        ("usage-negative", {**ok, "usage": {"prompt_tokens": -5, "completion_tokens": -1}}),
        ("usage-float", {**ok, "usage": {"prompt_tokens": 1.5, "completion_tokens": 1e308}}),
        ("usage-bool", {**ok, "usage": {"prompt_tokens": True, "completion_tokens": False}}),
        ("usage-nested-null", {**ok, "usage": {"prompt_tokens": None, "prompt_tokens_details": None,
                                               "completion_tokens_details": {"reasoning_tokens": None}}}),
        ("error-in-200", {"error": {"message": None, "code": [1]}}),
        ("error-str-in-200", {"error": "boom"}),
        ("finish-reason-weird", {"choices": [{"message": msg, "finish_reason": {"x": 1}}]}),
        ("huge-content", {"choices": [{"message": {"content": "a" * 7_000_000}}]}),
    ]
    for name, body in shapes:
        yield f"shape/{name}", _json200(body)
    raw: list[tuple[str, bytes]] = [
        ("usage-bigint", b'{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":' + b"9" * 5000 + b'}}'),
        ("usage-1e400", b'{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":1e400}}'),
        ("usage-nan", b'{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":NaN,"completion_tokens":Infinity}}'),
        ("invalid-utf8", b'{"choices":[{"message":{"content":"h\xff\xfei"}}]}'),
        ("lone-surrogate", b'{"choices":[{"message":{"content":"a\\ud800b"}}]}'),
        ("nul-in-content", b'{"choices":[{"message":{"content":"a\\u0000b"}}]}'),
        ("utf16-bom", '{"choices":[{"message":{"content":"hi"}}]}'.encode("utf-16")),
        ("truncated", b'{"choices":[{"message":{"content":"hi'),
        ("deep-nesting", b'{"choices":[{"message":{"content":"hi"}}],"x":' + b"[" * 200_000 + b"]" * 200_000 + b"}"),
        ("deep-nesting-open", b"[" * 500_000),
        ("duplicate-keys", b'{"choices":[{"message":{"content":"a"}}],"choices":null}'),
        ("trailing-garbage", b'{"choices":[{"message":{"content":"a"}}]} garbage'),
        ("empty-200", b""),
    ]
    for name, body in raw:
        yield f"raw/{name}", _reply(200, body, "content-type: application/json")
    yield "transport/chunked-stops", _chunks_then("hang")
    yield "transport/chunked-closes", _chunks_then("close")
    yield "transport/reset-mid-body", _chunks_then("reset")
    yield "transport/chunked-endless", _chunks_then("endless")
    yield "transport/chunked-trickle", _chunks_then("trickle")
    yield "transport/slow-loris-headers", _slow_headers
    yield "transport/gzip-bomb-1g", _gzip_bomb(1 << 30)
    yield "transport/deflate-bomb-200m", _deflate_bomb(200 << 20)
    yield "transport/content-length-lies-huge", _endless_content_length
    yield "transport/no-length-endless", _no_length_endless
    yield "transport/content-length-short", _reply(200, b'{"choices":[]}', "content-length: 5000", length=False)
    yield "transport/garbage-status-line", lambda r, w: _raw_bytes(w, b"HTTX/9 abc\r\n\r\n")
    yield "transport/http09", lambda r, w: _raw_bytes(w, b'{"choices":[{"message":{"content":"hi"}}]}')
    yield "transport/huge-header", _reply(200, b"{}", "x-big: " + "a" * 1_000_000)
    yield "transport/many-headers", _reply(200, b"{}", *[f"x-h{i}: v" for i in range(20000)])
    yield "transport/status-999", _reply(999, b"{}")
    yield "transport/status-204", _reply(204, b"")
    yield "transport/status-100-only", lambda r, w: _raw_bytes(w, b"HTTP/1.1 100 Continue\r\n\r\n", close=False)
    for status in (301, 302, 307, 308):
        yield f"redirect/{status}-other-host", _reply(status, b"", "location: http://169.254.169.254/v1/chat/completions")
    yield "redirect/loop-same-host", _reply(307, b"", f"location: http://127.0.0.1:{port}/v1/chat/completions")
    for value in ("-5", "1e308", "inf", "nan", "99999999999999999999", "Wed, 21 Oct 2099 07:28:00 GMT",
                  "Wed, 21 Oct 2015 07:28:00 GMT", "soon", "", "1, 2", "0x10", "  3  "):
        yield f"429/retry-after={value!r}", _reply(429, b'{"error":{"message":"slow"}}', f"retry-after: {value}")
    yield "429/retry-after-ms-huge", _reply(429, b"{}", "retry-after-ms: 1e300")
    yield "429/ratelimit-reset-huge", _reply(429, b"{}", "x-ratelimit-reset-requests: 99999h",
                                             "x-ratelimit-remaining-requests: 0")
    yield "503/retry-after-huge", _reply(503, b"{}", "retry-after: 86400000")
    yield "529/anthropic-overloaded", _reply(529, b'{"type":"error","error":{"type":"overloaded_error"}}')
    yield from _third_round_faults()


def _trickle(head: bytes, body: bytes, every: float) -> Behaviour:
    async def go(reader: Any, writer: Any) -> None:
        writer.write(head)
        await writer.drain()
        for byte in body:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(every)
    return go


def _forever(head: bytes, unit: bytes, every: float = 0.0) -> Behaviour:
    async def go(reader: Any, writer: Any) -> None:
        writer.write(head)
        while True:
            writer.write(unit)
            await writer.drain()
            if every:
                await asyncio.sleep(every)
    return go


def _nested_gzip_bomb() -> bytes:
    """1 GB of zeros gzipped twice: a few KB on the wire, for a client that decodes both layers."""
    import zlib
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return packer.compress(_bomb(1 << 30, True)) + packer.flush()


def _third_round_faults() -> Iterator[tuple[str, Behaviour]]:
    ok = json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}).encode()
    json_head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
    yield "third/1xx-flood", _forever(b"", b"HTTP/1.1 100 Continue\r\n\r\n", 0.01)
    yield "third/103-then-200", lambda r, w: _raw_bytes(w, b"HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n" + json_head +
                                                         b"content-length: %d\r\n\r\n" % len(ok) + ok, close=False)
    yield "third/101-switching", lambda r, w: _raw_bytes(w, b"HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n"
                                                          b"connection: upgrade\r\n\r\n" + b"\x00" * 1000, close=False)
    yield "third/gzip-twice-bomb", _reply(200, _nested_gzip_bomb(), "content-type: application/json",
                                          "content-encoding: gzip, gzip")
    yield "third/gzip-then-identity-bomb", _reply(200, _bomb(1 << 30, True), "content-type: application/json",
                                                  "content-encoding: gzip, identity")
    yield "third/br-garbage", _reply(200, os.urandom(4096), "content-type: application/json", "content-encoding: br")
    yield "third/zstd-garbage", _reply(200, os.urandom(4096), "content-type: application/json", "content-encoding: zstd")
    yield "third/unknown-encoding", _reply(200, ok, "content-type: application/json", "content-encoding: x-evil")
    yield "third/gzip-truncated", _reply(200, _bomb(1 << 20, True)[:100], "content-type: application/json",
                                         "content-encoding: gzip")
    yield "third/gzip-trailing-garbage", _reply(200, __import__("gzip").compress(ok) + b"garbage",
                                                "content-type: application/json", "content-encoding: gzip")
    yield "third/html-200", _reply(200, b"<!doctype html><html><body><h1>Welcome to nginx!</h1>" + b"x" * 100_000,
                                   "content-type: text/html")
    yield "third/sse-endless", _forever(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n",
                                        b'data: {"choices":[{"delta":{"content":"a"}}]}\n\n', 0.001)
    yield "third/sse-endless-chunked", _forever(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        b"10\r\ndata: {\"a\": 1}\n\n\r\n", 0.001)
    yield "third/cl-and-te", lambda r, w: _raw_bytes(w, json_head + b"content-length: 5\r\ntransfer-encoding: chunked\r\n\r\n"
                                                      + b"%x\r\n" % len(ok) + ok + b"\r\n0\r\n\r\n")
    yield "third/two-content-lengths", lambda r, w: _raw_bytes(w, json_head + b"content-length: 5\r\ncontent-length: %d"
                                                               b"\r\n\r\n" % len(ok) + ok)
    yield "third/negative-content-length", lambda r, w: _raw_bytes(w, json_head + b"content-length: -1\r\n\r\n" + ok)
    yield "third/body-trickle-1-byte-a-second", _trickle(json_head + b"content-length: %d\r\n\r\n" % len(ok), ok, 1.0)
    yield "third/headers-trickle-then-body", _trickle(b"", json_head + b"content-length: %d\r\n\r\n" % len(ok) + ok, 0.05)
    yield "third/close-at-once", lambda r, w: _raw_bytes(w, b"")
    yield "third/status-line-only", lambda r, w: _raw_bytes(w, b"HTTP/1.1 200 OK\r\n")
    yield "third/header-no-colon", lambda r, w: _raw_bytes(w, b"HTTP/1.1 200 OK\r\nnocolon\r\n\r\n" + ok)
    yield "third/header-nul", lambda r, w: _raw_bytes(w, b"HTTP/1.1 200 OK\r\nx-a: \x00\r\ncontent-length: %d\r\n\r\n"
                                                       % len(ok) + ok)
    yield "third/header-obs-fold", lambda r, w: _raw_bytes(w, b"HTTP/1.1 200 OK\r\nx-a: 1\r\n  folded\r\ncontent-length: %d"
                                                           b"\r\n\r\n" % len(ok) + ok)
    yield "third/lf-only", lambda r, w: _raw_bytes(w, b"HTTP/1.1 200 OK\ncontent-length: %d\n\n" % len(ok) + ok)
    yield "third/http2-preface", lambda r, w: _raw_bytes(w, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00" * 100)
    yield "third/tls-on-plain", lambda r, w: _raw_bytes(w, bytes.fromhex("160301002a0200002603") + os.urandom(40))
    for name, number in [("leading-zero", b"01"), ("trailing-dot", b"1."), ("bare-minus", b"-"), ("leading-dot", b".5"),
                         ("bare-exponent", b"1e"), ("plus", b"+1"), ("hex", b"0x10"), ("huge-exponent", b"1e999999999999"),
                         ("many-digits", b"1" * 100_000), ("minus-zero", b"-0"), ("tiny", b"1e-999999")]:
        body = b'{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":' + number + b',"completion_tokens":1}}'
        yield f"third/number-{name}", _reply(200, body, "content-type: application/json")
    many = json.dumps({"choices": [{"message": {"content": "hi"}}] * 100_000}).encode()
    yield "third/100000-choices", _reply(200, many, "content-type: application/json")
    keys = b'{"choices":[{"message":{"content":"hi"}}],' + b",".join(b'"k%d":%d' % (i, i) for i in range(300_000)) + b"}"
    yield "third/300000-keys", _reply(200, keys, "content-type: application/json")
    escaped = b'{"choices":[{"message":{"content":"' + b"\\ud83d\\ude00" * 500_000 + b'"}}]}'
    yield "third/escaped-surrogate-pairs", _reply(200, escaped, "content-type: application/json")
    yield "third/content-is-escaped-nul-heavy", _reply(200, b'{"choices":[{"message":{"content":"' + b"\\u0000" * 1_000_000
                                                       + b'"}}]}', "content-type: application/json")
    yield "third/retry-after-on-200", _reply(200, ok, "content-type: application/json", "retry-after: 99999")
    yield "third/set-cookie-flood", _reply(200, ok, "content-type: application/json",
                                           *[f"set-cookie: c{i}={'x' * 4000}" for i in range(50)])


async def _raw_bytes(writer: Any, data: bytes, close: bool = True) -> None:
    writer.write(data)
    await writer.drain()
    if close:
        writer.close()
    else:
        await asyncio.sleep(3600)


def attack_faults(tally: Tally) -> None:
    """Each fault against a one-prompt Weval run (OpenAI, then Anthropic and Gemini parsers for the
    body shapes): it must end, in time, without a traceback, with an error cell or an answer."""
    print("faulted providers", flush=True)
    bound = 60.0  # --timeout 3, --retries 1, --max-wait 10: anything past a minute is a hang
    with RawServer() as server:
        for name, behaviour in fault_cases(server.port):
            if ONLY and ONLY not in name:
                continue
            models = ["openai:candidate"]
            if name.startswith(("shape/", "raw/", "third/number", "third/100000", "third/300000", "third/escaped")):
                models += ["anthropic:claude-x", "google:gemini-x"]
            for model in models:
                root = Path(tempfile.mkdtemp(prefix="attack-fault-"))
                try:
                    bp = root / "b.yml"
                    bp.write_text(f"title: t\nmodels: [{model}]\n---\n- id: p\n  prompt: hello\n  should: [$contains: hi]\n")
                    server.behaviour = behaviour
                    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root), "OPENAI_API_KEY": KEY,
                           "ANTHROPIC_API_KEY": KEY, "GEMINI_API_KEY": KEY, "GOOGLE_API_KEY": KEY,
                           "OPENAI_BASE_URL": f"http://127.0.0.1:{server.port}/v1",
                           "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.port}",
                           "GEMINI_BASE_URL": f"http://127.0.0.1:{server.port}",
                           "GOOGLE_BASE_URL": f"http://127.0.0.1:{server.port}", "NO_COLOR": "1"}
                    ran = run_cli(["run", str(bp), "-o", str(root / "out"), "--timeout", "3", "--retries", "1",
                                   "--rate-limit-retries", "3", "--max-wait", "10", "--no-report", "--json"],
                                  env=env, cwd=root, timeout=bound)
                    problem = crashed(ran)
                    if problem is None and ran.code not in (0, 1, 3):
                        problem = f"exit {ran.code}: {ran.err.strip().splitlines()[-1:]}"
                    if problem is None and '"type":"run_finished"' not in ran.out:
                        problem = "no run_finished event"
                    if ran.peak_kb > 400_000:  # the cap is 8 MB an answer; a run this small needs ~100 MB
                        problem = (problem or "") + f" peak memory {ran.peak_kb // 1024} MB"
                    tally.note(f"faults/{name}/{model.split(':')[0]} ({ran.seconds:.1f} s, exit {ran.code})", problem)
                finally:
                    shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# concurrent runs on one output folder


def _blueprint(n: int) -> str:
    lines = ["title: t", "models: [openai:candidate]", "---"]
    for i in range(n):
        lines += [f"- id: p{i}", f"  prompt: question number {i}", "  should: [$contains: question]"]
    return "\n".join(lines) + "\n"


def _start(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(EVALSPEC + args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", start_new_session=True)


def _asked(fake: FakeProvider) -> list[str]:
    out = []
    for r in fake.requests:
        if r.path.endswith("/chat/completions"):
            m = re.search(r"question number (\d+)", r.body.decode(errors="replace"))
            if m:
                out.append(m.group(1))
    return out


def release_followers(go: Path, procs: list[subprocess.Popen[str]], fake: FakeProvider,
                      before: list[str]) -> tuple[list[int | None], list[str], list[str]]:
    """Start the processes waiting on the file `go` at once and wait for them (killed after 240 s): their
    exit codes, the prompts they asked, and what went wrong (a prompt asked twice, a traceback or a hang,
    an exit other than 0, 2 or 3)."""
    go.write_text("go")
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=240))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            outs.append(("", "hung (killed after 240 s)"))
    codes = [p.returncode for p in procs]
    after = _asked(fake)[len(before):]
    problems = []
    dup = sorted({q for q in after if after.count(q) > 1}, key=int)
    if dup:
        problems.append(f"{len(dup)} prompt(s) asked twice by the followers ({', '.join(dup[:5])})")
    for (_, e), c in zip(outs, codes, strict=True):
        if "Traceback" in e or "hung" in e:
            problems.append(e.strip().splitlines()[-1][:150])
        if c not in (0, 2, 3):
            problems.append(f"exit {c}: {e.strip().splitlines()[-1:]}")
    return codes, after, problems


def attack_concurrent(tally: Tally) -> None:
    """Kill a run (SIGKILL or SIGTERM) at a point, then start 2–4 runs at once on the same folder
    (`--resume`, `--retry-errors`, fresh); count each prompt's calls at the fake server."""
    print("concurrent runs", flush=True)
    n = 80
    with FakeProvider() as fake:
        fake.latency = 0.03
        for kill_after in (None, 0.3, 1.0, 2.0, 3.5):
            for sig in (signal.SIGKILL, signal.SIGTERM):
                if kill_after is None and sig == signal.SIGTERM:
                    continue
                for followers in (["--resume"] * 4, ["--resume", "--retry-errors", "--resume"], [None, None, None],
                                  ["--resume", None]):
                    root = Path(tempfile.mkdtemp(prefix="attack-conc-"))
                    try:
                        bp = root / "b.yml"
                        bp.write_text(_blueprint(n))
                        env = base_env(fake, root)
                        fake.reset()
                        common = ["run", str(bp), "-o", str(root / "out"), "-j", "4", "--no-report", "--retries", "0"]
                        before: list[str] = []
                        if kill_after is not None:
                            first = _start(common, env, root)
                            time.sleep(kill_after)
                            os.killpg(first.pid, sig)
                            first.communicate(timeout=60)
                            before = _asked(fake)
                        procs = [_start(common + ([f] if f else []), env, root) for f in followers]
                        outs = [p.communicate(timeout=300) for p in procs]
                        codes = [p.returncode for p in procs]
                        after = _asked(fake)[len(before):]
                        problems = []
                        answered_before = set(before)  # a superset of what was journaled before the kill
                        dup = {q for q in set(after) if after.count(q) > 1}
                        if dup:
                            problems.append(f"{len(dup)} prompt(s) asked twice by the followers")
                        # A fresh run starts over by design: repeats count only when every follower resumes.
                        repeated = set(after) & answered_before if all(followers) else set()
                        if len(repeated) > 8 and sig == signal.SIGKILL:  # in flight at the kill: ≤ -j 4, + journal lag
                            problems.append(f"{len(repeated)} prompt(s) answered before the kill asked again")
                        if sig == signal.SIGTERM and len(repeated) > 4:
                            problems.append(f"{len(repeated)} prompt(s) asked again after a clean SIGTERM")
                        for (_, e), c in zip(outs, codes, strict=True):
                            if "Traceback" in e:
                                problems.append("traceback: " + e.strip().splitlines()[-1][:150])
                            if c not in (0, 2, 3):
                                problems.append(f"exit {c}: {e.strip().splitlines()[-1:]}")
                        if set(before) | set(after) != {str(i) for i in range(n)}:
                            problems.append(f"{n - len(set(before) | set(after))} prompt(s) never asked")
                        # The finished folder: one comparison holds every prompt (the last run to write it).
                        comps = sorted((root / "out").rglob("*_comparison.json"))
                        if not comps:
                            problems.append("no comparison file")
                        else:
                            data = json.loads(comps[-1].read_text())
                            have = set(data.get("allFinalAssistantResponses") or {})
                            if len(have) != n:
                                problems.append(f"the last comparison holds {len(have)} of {n} prompts")
                        label = (f"concurrent/kill={kill_after}/{signal.Signals(sig).name}/"
                                 f"{'+'.join(f or 'fresh' for f in followers)} exits {codes}")
                        tally.note(label, "; ".join(problems) or None)
                    finally:
                        shutil.rmtree(root, ignore_errors=True)
    # A lock in a read-only folder, and a stale lock file left with a dead PID.
    root = Path(tempfile.mkdtemp(prefix="attack-conc-"))
    try:
        with FakeProvider() as fake:
            bp = root / "b.yml"
            bp.write_text(_blueprint(3))
            env = base_env(fake, root)
            ro = root / "ro"
            ro.mkdir()
            ran = run_cli(["run", str(bp), "-o", str(ro / "out"), "--no-report"], env=env, cwd=root)
            os.chmod(ro, 0o500)
            ran = run_cli(["run", str(bp), "-o", str(ro / "out2"), "--no-report"], env=env, cwd=root)
            tally.note(f"concurrent/read-only-folder (exit {ran.code})", crashed(ran) or
                       (None if ran.code == 2 or os.geteuid() == 0 else f"exit {ran.code}"))
            os.chmod(ro, 0o700)
            (root / "taken").write_text("a file where the output folder should be\n")
            ran = run_cli(["run", str(bp), "-o", str(root / "taken" / "out"), "--no-report"], env=env, cwd=root)
            tally.note(f"concurrent/output-folder-is-a-file (exit {ran.code})", crashed(ran) or
                       (None if ran.code == 2 else f"exit {ran.code}"))
            out = root / "out"
            ran = run_cli(["run", str(bp), "-o", str(out), "--no-report"], env=env, cwd=root)
            for lock in out.rglob("*.journal.jsonl"):
                lock.with_suffix(".lock").write_text("999999\n")
                lock.with_suffix(".lock").chmod(0o400)
            ran = run_cli(["run", str(bp), "-o", str(out), "--no-report", "--retry-errors"], env=env, cwd=root)
            tally.note(f"concurrent/stale-read-only-lock (exit {ran.code})", crashed(ran))
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# the language server over raw JSON-RPC

LSP_BOUND_S = 1.0  # every request answered within this (issue 15)
LSP_BULK_BOUND_S = 5.0  # the replies after a flood of thousands of messages, timed from its last one
GOOD = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  should: [be kind]\n"


class RawLsp:
    """evalspec-lsp on stdio, spoken to byte by byte: frames in, frames out (a reader thread)."""

    def __init__(self, root: Path, command: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(command or [sys.executable, "-m", "evalspec_lsp.main"], cwd=root,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)
        self.replies: dict[Any, dict[str, Any]] = {}
        self.answers: dict[str, int] = {}  # replies per id (an id answered twice: 2)
        self.frames = 0  # frames read, parsed or not
        self.arrived: dict[Any, float] = {}
        self.cond = threading.Condition()
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.stderr = b""

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr = (self.stderr + line)[-20000:]

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self.cond:
                        self.closed = True
                        self.cond.notify_all()
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = out.read(length or 0)
            self.frames += 1
            try:
                msg = json.loads(body)
            except ValueError:
                continue
            with self.cond:
                self._take(msg)
                self.cond.notify_all()

    def _take(self, msg: Any) -> None:
        """One message from the server (under `cond`): an answer is kept by its id."""
        if isinstance(msg, dict) and "id" in msg and ("result" in msg or "error" in msg):
            key = json.dumps(msg["id"])
            self.answers[key] = self.answers.get(key, 0) + 1
            self.replies[key] = msg
            self.arrived[key] = time.monotonic()

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def send(self, msg: Any) -> None:
        body = json.dumps(msg).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, id_: Any, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})

    def wait(self, id_: Any, bound: float) -> dict[str, Any] | None:
        key = json.dumps(id_)
        end = time.monotonic() + bound
        with self.cond:
            while key not in self.replies and not self.closed:
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)
            return self.replies.get(key)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)


def _initialized(server: RawLsp, root: Path) -> None:
    server.request("init", "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
    server.wait("init", 20)
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})


def _open(server: RawLsp, uri: str, text: str, version: int = 1) -> None:
    server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "yaml", "version": version, "text": text}}})


def _at(uri: str, line: int, char: int) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": char}}


def protocol_cases(root: Path) -> Iterator[tuple[str, Callable[[RawLsp, str], list[Any]]]]:
    """(name, act): `act` sends its messages and returns the request ids that must be answered."""
    ids = iter(range(10**6))

    def req(method: str, params: Any, id_: Any = None) -> Callable[[RawLsp, str], list[Any]]:
        def act(server: RawLsp, uri: str) -> list[Any]:
            i = next(ids) if id_ is None else id_
            server.request(i, method, params(uri) if callable(params) else params)
            return [i]
        return act

    hover = "textDocument/hover"
    for name, params in [
        ("hover-position-string", lambda u: {"textDocument": {"uri": u}, "position": "x"}),
        ("hover-position-floats", lambda u: _at(u, 1.5, 0.5)),  # type: ignore[arg-type]
        ("hover-position-null", lambda u: {"textDocument": {"uri": u}, "position": None}),
        ("hover-document-null", lambda u: {"textDocument": None, "position": {"line": 0, "character": 0}}),
        ("hover-uri-int", lambda u: _at(5, 0, 0)),  # type: ignore[arg-type]
        ("hover-uri-unknown", lambda u: _at("file:///nowhere/x.yml", 0, 0)),
        ("hover-uri-garbage", lambda u: _at("::::\x00", 0, 0)),
        ("hover-params-list", lambda u: [1, 2]),
        ("hover-params-missing", None),
        ("hover-line-2^53", lambda u: _at(u, 2**53, 0)),
        ("hover-mid-surrogate", lambda u: _at(u, 3, 13)),
        ("completion-bad-context", lambda u: {**_at(u, 4, 2), "context": {"triggerKind": 99}}),
        ("codeAction-range-backwards", lambda u: {"textDocument": {"uri": u}, "range": {
            "start": {"line": 5, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}),
        ("codeAction-diagnostics-junk", lambda u: {"textDocument": {"uri": u}, "range": {
            "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": [{"range": None, "message": 3}, 5, None]}}),
        ("rename-empty", lambda u: {**_at(u, 3, 7), "newName": ""}),
        ("rename-huge", lambda u: {**_at(u, 3, 7), "newName": "x" * 1_000_000}),
        ("foldingRange-unknown-doc", lambda u: {"textDocument": {"uri": "file:///tmp/none.yml"}}),
        ("semantic-unknown", lambda u: {"textDocument": {"uri": u}}),
        ("executeCommand-unknown", lambda u: {"command": "evalspec.nope", "arguments": [None, {}, 3]}),
        ("executeCommand-run-bad-args", lambda u: {"command": "evalspec.run", "arguments": [5, {"x": None}]}),
        ("executeCommand-args-not-list", lambda u: {"command": "evalspec.run", "arguments": "x"}),
    ]:
        method = "textDocument/completion" if name.startswith("completion") else \
            "textDocument/codeAction" if name.startswith("codeAction") else \
            "textDocument/rename" if name.startswith("rename") else \
            "textDocument/foldingRange" if name.startswith("foldingRange") else \
            "textDocument/semanticTokens/full" if name.startswith("semantic") else \
            "workspace/executeCommand" if name.startswith("executeCommand") else hover
        if params is None:
            yield name, lambda server, uri, m=method: (server.send({"jsonrpc": "2.0", "id": "nop", "method": m}),
                                                       ["nop"])[1]
        else:
            yield name, req(method, params)
    for id_ in (2**70, -1, 1.5, "x" * 100_000, True, {"a": 1}, [1]):
        yield f"id-{type(id_).__name__}-{str(id_)[:12]}", req(hover, lambda u: _at(u, 0, 0), id_)
    yield "id-null", lambda server, uri: (server.request(None, hover, _at(uri, 0, 0)), [])[1]
    yield "unknown-method", req("evalspec/nothing", {})
    yield "unknown-method-$", req("$/nothing", {})
    yield "cancel-unknown", lambda s, u: (s.send({"jsonrpc": "2.0", "method": "$/cancelRequest",
                                                  "params": {"id": 987654}}), [])[1]
    yield "cancel-bad-id", lambda s, u: (s.send({"jsonrpc": "2.0", "method": "$/cancelRequest",
                                                 "params": {"id": {"x": [1]}}}), [])[1]
    yield "notification-with-id", lambda s, u: (s.send({"jsonrpc": "2.0", "id": "n1", "method": "initialized",
                                                        "params": {}}), [])[1]
    yield "batch", lambda s, u: (s.send([{"jsonrpc": "2.0", "id": "b1", "method": hover, "params": _at(u, 0, 0)},
                                         {"jsonrpc": "2.0", "method": "initialized"}]), [])[1]
    yield "empty-batch", lambda s, u: (s.send([]), [])[1]
    yield "not-json", lambda s, u: (s.send_raw(b"Content-Length: 5\r\n\r\n{{{{{"), [])[1]
    yield "json-scalar", lambda s, u: (s.send_raw(b"Content-Length: 1\r\n\r\n5"), [])[1]
    yield "no-jsonrpc-field", lambda s, u: (s.send({"id": "nj", "method": hover, "params": _at(u, 0, 0)}), [])[1]
    yield "bad-header", lambda s, u: (s.send_raw(b"Content-Type: x\r\nGarbage\r\n\r\n"), [])[1]
    yield "invalid-utf8-body", lambda s, u: (s.send_raw(b"Content-Length: 4\r\n\r\n\"\xff\xfe\""), [])[1]

    def change(edits: list[Any], version: int = 2) -> Callable[[RawLsp, str], list[Any]]:
        def act(server: RawLsp, uri: str) -> list[Any]:
            server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version}, "contentChanges": edits}})
            i = next(ids)
            server.request(i, hover, _at(uri, 0, 0))
            return [i]
        return act

    def rng(a: int, b: int, c: int, d: int) -> dict[str, Any]:
        return {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}
    yield "didChange-out-of-range", change([{"range": rng(100, 0, 200, 5), "text": "x"}])
    yield "didChange-negative", change([{"range": rng(-1, -1, 0, 0), "text": "x"}])
    yield "didChange-backwards", change([{"range": rng(3, 5, 1, 0), "text": "x"}])
    yield "didChange-huge-char", change([{"range": rng(0, 2**31, 0, 2**31 + 5), "text": "x"}])
    yield "didChange-mid-surrogate", change([{"range": rng(3, 13, 3, 14), "text": "x"}])
    yield "didChange-no-text", change([{"range": rng(0, 0, 0, 0)}])
    yield "didChange-text-null", change([{"text": None}])
    yield "didChange-old-version", change([{"text": GOOD}], version=-5)
    yield "didChange-mixed-endings", change([{"text": "title: T\r\nmodels: [a:b]\r---\n- id: a\u2028\r\n"
                                                      "  prompt: \ud83d\ude00 hi\x85\n  should: [x]\r\r\n"}])
    yield "didChange-lone-surrogates", change([{"text": GOOD.replace("Hi", "\udc00\ud800 Hi")}])
    yield "didChange-nul", change([{"text": GOOD.replace("Hi", "\x00\x00")}])
    yield "didChange-unopened", lambda s, u: change([{"text": "x"}])(s, "file:///tmp/never-opened.yml")
    yield "didOpen-twice", lambda s, u: (_open(s, u, GOOD + "# again\n"), change([{"text": GOOD}], 3)(s, u))[1]
    yield "didClose-unknown", lambda s, u: (s.send({"jsonrpc": "2.0", "method": "textDocument/didClose",
                                                    "params": {"textDocument": {"uri": "file:///x/y.yml"}}}), [])[1]
    yield "didSave-no-doc", lambda s, u: (s.send({"jsonrpc": "2.0", "method": "textDocument/didSave",
                                                  "params": {}}), [])[1]
    yield "config-junk", lambda s, u: (s.send({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                                               "params": {"settings": {"evalspec": {"debounceMs": "x", "run": [1],
                                                                                    "maxFileBytes": -5}}}}), [])[1]
    yield "watched-files-junk", lambda s, u: (s.send({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles",
                                                      "params": {"changes": [{"uri": 5, "type": 99}, None]}}), [])[1]
    yield "second-initialize", req("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    yield from _third_round_protocol_cases(root, ids, req, change, rng)


def _third_round_protocol_cases(root: Path, ids: Iterator[int], req: Callable[..., Any], change: Callable[..., Any],
                                rng: Callable[..., Any]) -> Iterator[tuple[str, Callable[[RawLsp, str], list[Any]]]]:
    """The third round: cancel storms, commands with wrong or huge arguments, watched-file floods,
    documents that are not files, language ids that lie, surrogate pairs split by incremental edits,
    thousands of open documents."""
    hover = "textDocument/hover"

    def storm(server: RawLsp, uri: str) -> list[Any]:
        waiting = [next(ids) for _ in range(300)]
        for i in waiting:
            server.request(i, "textDocument/completion", _at(uri, 4, 2))
        for i in waiting:  # while they queue, each cancelled twice
            server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": i}})
            server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": i}})
        return waiting
    yield "3/bulk-cancel-storm", storm

    def cancel_before(server: RawLsp, uri: str) -> list[Any]:
        i = next(ids)
        server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": i}})  # before it exists
        server.request(i, hover, _at(uri, 3, 4))
        return [i]
    yield "3/cancel-before-request", cancel_before
    for command in ("evalspec.run", "evalspec.plan", "evalspec.cancelRun", "evalspec.showResults"):
        for name, args in [("null", None), ("int", 5), ("dict", {"uri": 5}), ("list-of-null", [None, None]),
                           ("uri-int", [5]), ("uri-dev-zero", ["file:///dev/zero"]),
                           ("uri-proc", ["file:///proc/self/environ"]), ("uri-untitled", ["untitled:Untitled-1"]),
                           ("uri-http", ["http://127.0.0.1:1/x.yml"]), ("uri-folder", [root.as_uri()]),
                           ("huge-string", ["x" * 5_000_000]), ("deep-list", json.loads("[" * 500 + "]" * 500)),
                           ("options-junk", [None, {"item": [1], "models": "x", "output": {"a": 1}, "concurrency": -1}]),
                           ("item-nul", [None, {"item": "a\u0000b"}])]:
            yield f"3/executeCommand-{command.split('.')[1]}-{name}", req("workspace/executeCommand",
                                                                     {"command": command, "arguments": args})

    def deep_raw(server: RawLsp, uri: str) -> list[Any]:
        i = next(ids)  # nested past any JSON parser's recursion (json.dumps cannot even write it)
        body = (b'{"jsonrpc": "2.0", "id": %d, "method": "workspace/executeCommand", "params": {"command": '
                b'"evalspec.plan", "arguments": ' % i + b"[" * 100_000 + b"]" * 100_000 + b"}}")
        server.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return [i]
    yield "3/executeCommand-args-nested-100000", deep_raw

    def watched_flood(server: RawLsp, uri: str) -> list[Any]:
        junk = ["file:///dev/zero", "file:///proc/self/mem", "untitled:x", "http://x/y.yml", "file://host/share/x.yml",
                "file:///", root.as_uri(), "file:///nonexistent/\u0000.yml", "", "::", "file:///%ZZ", uri]
        changes = [{"uri": junk[k % len(junk)], "type": 1 + k % 3} for k in range(10_000)]
        server.send({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": changes}})
        i = next(ids)
        server.request(i, hover, _at(uri, 3, 4))
        return [i]
    yield "3/watched-files-flood", watched_flood

    for label, other in [("untitled", "untitled:Untitled-1"), ("http", "http://127.0.0.1:1/b.weval.yml"),
                         ("dev-zero", "file:///dev/zero"), ("proc-environ", "file:///proc/self/environ"),
                         ("folder", root.as_uri() + "/"), ("no-scheme", "b.weval.yml"),
                         ("notebook-cell", "vscode-notebook-cell:/x.ipynb#W0sZmlsZQ%3D%3D"),
                         ("percent-nul", "file:///tmp/a%00b.yml"), ("dotdot", root.as_uri() + "/../../etc/passwd")]:
        def other_doc(server: RawLsp, uri: str, other: str = other) -> list[Any]:
            _open(server, other, GOOD)
            waiting = []
            for method, params in [(hover, _at(other, 3, 4)), ("textDocument/completion", _at(other, 4, 2)),
                                   ("textDocument/codeLens", {"textDocument": {"uri": other}}),
                                   ("textDocument/documentLink", {"textDocument": {"uri": other}}),
                                   ("textDocument/documentSymbol", {"textDocument": {"uri": other}}),
                                   ("textDocument/definition", _at(other, 3, 8))]:
                i = next(ids)
                server.request(i, method, params)
                waiting.append(i)
            return waiting
        yield f"3/didOpen-{label}", other_doc
    for language in ("json", "python", "plaintext", "", "yaml\u0000", "x" * 100_000):
        def lying(server: RawLsp, uri: str, language: str = language) -> list[Any]:
            other = (root / "lang.weval.yml").as_uri()
            server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": other, "languageId": language, "version": 1, "text": GOOD}}})
            i = next(ids)
            server.request(i, "textDocument/completion", _at(other, 4, 2))
            return [i]
        yield f"3/languageId-{language[:8] or 'empty'}", lying
    # Incremental edits that split a surrogate pair, then join its halves again; an edit whose range
    # ends inside the pair; a pair typed one half at a time.
    yield "3/didChange-split-pair", change([{"range": rng(4, 10, 4, 11), "text": "x"}, {"range": rng(4, 12, 4, 12),
                                                                                      "text": "\ude00"}])
    yield "3/didChange-half-then-half", change([{"range": rng(4, 10, 4, 10), "text": "\ud83d"},
                                              {"range": rng(4, 11, 4, 11), "text": "\ude00"}])
    yield "3/didChange-delete-half", change([{"range": rng(4, 11, 4, 12), "text": ""}])
    yield "3/didChange-range-past-line-end", change([{"range": rng(0, 500, 0, 900), "text": "x"}])
    yield "3/didChange-range-past-last-line", change([{"range": rng(9999, 0, 9999, 0), "text": "- id: z\n"}])
    yield "3/didChange-1000-edits", change([{"range": rng(4, 10, 4, 10), "text": "\u00e9"} for _ in range(1000)])
    yield "3/didChange-crlf-split", change([{"range": rng(0, 8, 0, 8), "text": "\r"}, {"range": rng(1, 0, 1, 0),
                                                                                   "text": "\n"}])

    def many_docs(server: RawLsp, uri: str) -> list[Any]:
        for k in range(10_000):
            _open(server, (root / f"many-{k}.weval.yml").as_uri(), GOOD.replace("id: a", f"id: a{k}"))
        waiting = []
        for k in (0, 5_000, 9_999):
            i = next(ids)
            server.request(i, hover, _at((root / f"many-{k}.weval.yml").as_uri(), 3, 4))
            waiting.append(i)
        i = next(ids)
        server.request(i, hover, _at(uri, 3, 4))
        return [*waiting, i]
    yield "3/bulk-open-10000-documents", many_docs


def attack_protocol(tally: Tally, lifecycle: bool = True) -> None:
    print("language server protocol", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-lsp-"))
    try:
        (root / "b.weval.yml").write_text(GOOD)
        uri = (root / "b.weval.yml").as_uri()
        surrogate_doc = GOOD.replace("prompt: Hi", "prompt: \ud83d\ude00\ud83d\ude00 Hi")
        for name, act in protocol_cases(root):
            if ONLY and ONLY not in name:
                continue
            server = RawLsp(root)
            try:
                _initialized(server, root)
                _open(server, uri, surrogate_doc)
                server.request("warm", "textDocument/hover", _at(uri, 0, 0))
                server.wait("warm", 10)
                sent = time.monotonic()
                waiting = act(server, uri)
                if "bulk-" in name:  # timed from the last message of the flood
                    sent = time.monotonic()
                problems = []
                # A bulk probe queues thousands of messages at once: each request must be answered (a
                # result or an error), the hover after it within the bound; its own replies wait their turn.
                # After a flood of notifications (bulk-open) the requests behind it are answered as any other:
                # a result within the bound (the server handles them ahead of other documents' opens).
                results = "bulk-open" in name
                bound = LSP_BULK_BOUND_S if "bulk-" in name and not results else LSP_BOUND_S
                for i in waiting:
                    reply = server.wait(i, bound + 4)
                    if reply is None:
                        problems.append(f"no reply to {str(i)[:20]}" + (" (server exited)" if server.closed else ""))
                    elif server.arrived[json.dumps(i)] - sent > bound:
                        problems.append(f"reply after {server.arrived[json.dumps(i)] - sent:.2f} s")
                        break
                    elif results and "error" in reply:
                        problems.append(f"{str(i)[:20]} answered {str(reply['error'].get('message'))[:60]!r}")
                # Still serving: a hover on the open document, answered within the bound (after a
                # shutdown: answered, with the error LSP asks for).
                server.request("after", "textDocument/hover", _at(uri, 3, 4))
                t0 = time.monotonic()
                reply = server.wait("after", LSP_BOUND_S + 4)
                # After a flood, "busy" (the guard's answer for a server still working through it) and "still
                # checking" (a document made 50,000 lines long by it, not yet analysed) are answers within
                # the bound; the server must then serve again within the flood's bound.
                retry = 0
                while "bulk-" in name and reply is not None and time.monotonic() - sent < LSP_BULK_BOUND_S and any(
                        w in str((reply.get("error") or {}).get("message")) for w in ("busy", "still checking")):
                    time.sleep(0.1)
                    retry += 1
                    server.request(f"after-{retry}", "textDocument/hover", _at(uri, 3, 4))
                    t0 = time.monotonic()
                    reply = server.wait(f"after-{retry}", LSP_BOUND_S + 4)
                if reply is None:
                    problems.append("stopped serving" + (" (exited)" if server.closed else ""))
                elif time.monotonic() - t0 > LSP_BOUND_S:
                    problems.append(f"next hover took {time.monotonic() - t0:.2f} s")
                elif "error" in reply and "shutdown" not in name:
                    problems.append(f"next hover failed: {reply['error'].get('message', '')[:80]}")
                # pygls logs what it refused with a traceback; a log line is not a failure, but say so.
                logged = " (a traceback was logged)" if b"Traceback" in server.stderr else ""
                tally.note(f"protocol/{name}{logged}", "; ".join(problems) or None)
            finally:
                server.stop()
        if not lifecycle:
            return
        # Lifecycle: requests before initialize, after shutdown, exit without shutdown.
        server = RawLsp(root)
        server.request("early", "textDocument/hover", _at(uri, 0, 0))
        reply = server.wait("early", 5)
        tally.note("protocol/before-initialize", None if reply and "error" in reply else f"reply {reply}")
        _initialized(server, root)
        server.request("down", "shutdown", None)
        server.wait("down", 5)
        server.request("late", "textDocument/hover", _at(uri, 0, 0))
        reply = server.wait("late", 5)
        tally.note("protocol/after-shutdown", None if reply and "error" in reply else f"reply {reply}")
        server.send({"jsonrpc": "2.0", "method": "exit"})
        try:
            code = server.proc.wait(10)
            tally.note(f"protocol/exit-after-shutdown (exit {code})", None if code == 0 else f"exit {code}")
        except subprocess.TimeoutExpired:
            tally.note("protocol/exit-after-shutdown", "still running 10 s after exit")
        server.stop()
        server = RawLsp(root)
        _initialized(server, root)
        server.send({"jsonrpc": "2.0", "method": "exit"})
        try:
            code = server.proc.wait(10)
            tally.note(f"protocol/exit-without-shutdown (exit {code})", None if code == 1 else f"exit {code}")
        except subprocess.TimeoutExpired:
            tally.note("protocol/exit-without-shutdown", "still running 10 s after exit")
        server.stop()
        server = RawLsp(root)
        _initialized(server, root)
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        try:
            server.proc.wait(10)
            tally.note("protocol/stdin-closed", None)
        except subprocess.TimeoutExpired:
            tally.note("protocol/stdin-closed", "still running 10 s after its input closed")
        server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# sandboxes: $js, code judges, cli targets

JS_PROBES = {
    "toPrimitive-thrown": "throw {[Symbol.toPrimitive](){ for(;;){} }}",
    "toPrimitive-result": "({[Symbol.toPrimitive](){ for(;;){} }})",
    "score-getter": "({get score(){ for(;;){} }})",
    "score-toPrimitive": "({score: {[Symbol.toPrimitive](){ for(;;){} }}})",
    "explain-getter": "({score: 1, get explain(){ for(;;){} }})",
    "has-trap": "new Proxy({}, {has(){ for(;;){} }})",
    "getPrototypeOf-trap": "new Proxy([], {getPrototypeOf(){ for(;;){} }})",
    "revoked-proxy": "(() => { const r = Proxy.revocable([], {}); r.revoke(); return r.proxy })()",
    "async-loop": "(async () => { for(;;){} })()",
    "promise-chain": "(function f(){ return Promise.resolve().then(f) })()",
    "await-loop": "(async () => { while (true) await null })()",
    "huge-string": "'a'.repeat(2**29)",
    "string-doubling": "let s = 'a'; for(;;) s += s",
    "big-result": "'a'.repeat(50 * 1024 * 1024)",
    "deep-recursion": "function f(){ return f() + 1 } f()",
    "recursion-catching-overflow": "function f(){ try { return f() } catch (e) { return f() } } f()",
    "finalization-registry": "new FinalizationRegistry(() => { for(;;){} }).register({}, 1); new WeakRef({}); 1",
    "atomics-wait": "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)",
    "regex-backtracking": "/(a+)+$/.test('a'.repeat(40) + '!')",
    "lone-surrogate-result": "'\\ud800'",
    "lone-surrogate-in-source": "'\ud800'",
    "lone-surrogate-thrown": "throw '\\udc00'",
    "sort-comparator-loop": "[3, 2, 1].sort(() => { for(;;){} })",
    "json-parse-deep": "JSON.parse('['.repeat(100000) + ']'.repeat(100000))",
    "cyclic-cause": "const e = new Error('x'); e.cause = e; throw e",
    "aggregate-error": "throw new AggregateError([{toString(){ for(;;){} }}])",
    "String-replaced": "String = function(){ for(;;){} }; throw {}",
    "JSON-replaced": "JSON.stringify = () => '{\"ok\":{\"t\":\"boolean\",\"v\":true}}'; false",
    "symbol-thrown": "throw Symbol('x')",
    "null-prototype-thrown": "throw Object.create(null)",
    "bigint-huge": "10n ** 1000000n",
    "Function-constructor": "Function('for(;;){}')()",
    "generator-spread": "function* g(){ for(;;) yield 1 } [...g()]",
    "array-2^31": "new Array(2 ** 31).fill(0)",
    "deep-source": "(" * 100000 + "1" + ")" * 100000,
    "globalThis-getter": "Object.defineProperty(globalThis, 'r', {get(){ for(;;){} }}); r",
}


def attack_sandbox(tally: Tally) -> None:
    """`$js` probes through the sandbox API (each must end within the limit plus the kill grace, as a
    value or an error, never a Python exception), then code judges and cli targets that flood their
    output, fork, or leave children behind, through the real CLI."""
    print("sandboxes", flush=True)
    from evalspec.scoring.js_sandbox import (
        DEFAULT_TIME_LIMIT_S,
        KILL_GRACE_S,
        JsSandboxError,
        evaluate_script_or_body,
    )

    bound = DEFAULT_TIME_LIMIT_S * 2 + KILL_GRACE_S + 1.0
    for name, source in [*JS_PROBES.items(), *JS_PROBES_3.items(), ("binding-surrogate", "r.length"),
                         ("binding-huge", "r.length")]:
        bindings = {"r": "a\ud800b" if name == "binding-surrogate" else "x" * 10_000_000 if name == "binding-huge"
                    else "answer"}
        t0 = time.monotonic()
        problem = None
        try:
            value, _ = evaluate_script_or_body(source, bindings)
            got = f"value {value.type}"
        except JsSandboxError as err:
            got = err.kind
            if err.kind in ("crash", "internal"):
                problem = f"sandbox {err.kind}: {err.message[:80]}"
        except Exception as exc:
            got, problem = "exception", f"{type(exc).__name__}: {str(exc)[:80]!a}"
        took = time.monotonic() - t0
        if took > bound:
            problem = (problem + "; " if problem else "") + f"took {took:.1f} s"
        if name == "JSON-replaced" and got != "value boolean":
            problem = f"the script forged its result ({got})"
        tally.note(f"sandbox/js/{name} ({got}, {took:.2f} s)", problem)

    root = Path(tempfile.mkdtemp(prefix="attack-box-"))
    try:
        with FakeProvider() as fake:
            project = root / "proj"
            (project / ".git").mkdir(parents=True)
            (project / ".agentv").mkdir()
            marker = f"attack-orphan-{os.getpid()}"
            judges = {
                "flood-stdout": "import sys\nwhile True: sys.stdout.write('x' * 65536)\n",
                "flood-stderr": "import sys\nwhile True: sys.stderr.write('x' * 65536)\n",
                "flood-one-line": "import sys\nsys.stdout.write('{\"score\": 1, \"reasoning\": \"' + 'x' * 50_000_000)\n",
                "sleep-forever": "import time\ntime.sleep(3600)\n",
                "fork-children": (f"import subprocess, sys\nfor _ in range(20): subprocess.Popen(['sleep', '3600', "
                                  f"'{marker}'])\nprint('{{\"score\": 1}}')\n"),
                "background-holding-stdout": (f"import subprocess\nsubprocess.Popen(['sleep', '3600', '{marker}'])\n"
                                              "print('{\"score\": 1}')\n"),
                "close-stdout-keep-running": "import os, time\nos.close(1)\ntime.sleep(3600)\n",
                "ignore-sigterm": ("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                   "time.sleep(3600)\n"),
                "binary-garbage": "import sys\nsys.stdout.buffer.write(bytes(range(256)) * 1000)\n",
            }
            for name, code in judges.items():
                (project / f"{name}.py").write_text(code)
            tests = "".join(
                f"  - id: {name}\n    criteria: c\n    input: hi\n    assert:\n      - type: code-judge\n"
                f"        command: [python3, {name}.py]\n        timeout_ms: 3000\n" for name in judges)
            (project / ".agentv" / "targets.yaml").write_text(TARGETS + f"""  - name: flood
    provider: cli
    command: "python3 -c 'import sys\\nwhile True: sys.stdout.write(\\"x\\" * 65536)'"
    timeout_seconds: 3
  - name: forker
    provider: cli
    command: "sh -c 'sleep 3600 {marker} & sleep 3600 {marker} & echo answered'"
    timeout_seconds: 3
""")
            suite = project / "s.eval.yaml"
            suite.write_text("name: s\ndescription: d\ntests:\n" + tests)
            env = base_env(fake, root)
            ran = run_cli(["run", str(suite), "-o", str(root / "out"), "--no-report", "-j", "4"], env=env, cwd=project,
                          timeout=120)
            if crashed(ran) and os.environ.get("ATTACK_DEBUG"):
                Path("/tmp/attack-debug.txt").write_text(ran.out + "\n-----\n" + ran.err)
            rows = {}
            for f in (root / "out").rglob("*.jsonl"):
                if not f.name.endswith(".journal.jsonl"):
                    rows = {r["test_id"]: r for r in map(json.loads, f.read_text().splitlines())}
            for name in judges:
                row = rows.get(name)
                problem = crashed(ran) or (None if row is not None else "no result row")
                tally.note(f"sandbox/code-judge/{name} ({ran.seconds:.0f} s for all)", problem)
            for target in ("flood", "forker"):
                suite2 = project / f"{target}.eval.yaml"
                suite2.write_text(f"name: {target}\ndescription: d\nexecution:\n  target: {target}\ntests:\n"
                                  "  - id: a\n    criteria: c\n    input: hi\n    assert: [{type: contains, value: x}]\n")
                ran2 = run_cli(["run", str(suite2), "-o", str(root / "out2"), "--no-report"], env=env, cwd=project,
                               timeout=60)
                tally.note(f"sandbox/cli-target/{target} ({ran2.seconds:.1f} s, exit {ran2.code})", crashed(ran2))
            time.sleep(0.5)
            left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
            tally.note("sandbox/no-orphans", f"{len(left)} process(es) left running" if left else None)
            for pid in left:  # ours (they carry the marker): end them so the machine stays clean
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# scoring: what a file makes the runner do with an answer (the third round)

_LONG_A = "a" * 40 + "!"
SCORING_BOUND_S = float(os.environ.get("ATTACK_BOUND", "90"))  # ATTACK_BOUND: a shorter bound for a quick look


def scoring_cases() -> Iterator[tuple[str, dict[str, str | None], dict[str, str], list[str]]]:
    """(name, files, extra env, run arguments): each run with the offline `echo` model, whose answer is
    the prompt, so a prompt written to make a pattern backtrack is the answer it runs on."""
    weval = "title: t\nmodels: [echo]\n---\n- id: p\n  prompt: {prompt}\n  should:\n{points}"
    agentv = "name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n    input: {prompt}\n    assert:\n{asserts}"
    patterns = [("nested-plus", "(a+)+$", _LONG_A), ("alternation", "^(a|a)*$", _LONG_A),
                ("overlap", "(a|aa)+$", _LONG_A), ("dot-star-repeat", "(.*a){30}", _LONG_A),
                ("x-plus-x-plus", "(x+x+)+y", "x" * 40), ("star-star-star", "((a*)*)*b", _LONG_A),
                ("word-space", "(\\w+\\s?)+$", "word " * 30 + "!"), ("star-dollar-long", "(a*)*$", "a" * 20_000 + "!"),
                ("backreference", "\\b(\\w+)\\s+\\1\\b", "ab " * 5_000),
                ("lookahead-repeat", "^(?=(a+))*\\1b", _LONG_A), ("nested-class", "([a-z]+[a-z]*)+!$", "a" * 40 + "?"),
                ("case-fold", "(A+a+)+$", _LONG_A + "B")]
    for name, pattern, prompt in patterns:
        for fn in ("matches", "imatches"):
            yield (f"weval-{fn}-{name}", {"b.yml": weval.format(prompt=prompt, points=f"    - ${fn}: '{pattern}'\n"
                                                                                      "    - $contains: a\n")}, {}, [])
        yield (f"weval-imatches_all_of-{name}", {"b.yml": weval.format(
            prompt=prompt, points=f"    - $imatches_all_of: ['{pattern}', '{pattern}', 'a']\n")}, {}, [])
        yield (f"agentv-regex-{name}", {"s.eval.yaml": agentv.format(
            prompt=json.dumps(prompt), asserts=f"      - {{type: regex, value: '{pattern}'}}\n"
                                               "      - {type: regex, value: 'a', flags: 'i'}\n")}, {}, [])
    for name, source in [*JS_PROBES.items(), *JS_PROBES_3.items()]:
        yield (f"weval-js-{name}", {"b.yml": weval.format(prompt="hi", points=f"    - $js: {json.dumps(source)}\n")},
               {}, [])
    for name, value in [("nan", ".nan"), ("inf", ".inf"), ("minus-inf", "-.inf"), ("negative", "-1"), ("zero", "0"),
                        ("huge", "1e308"), ("int-400-digits", "1" + "0" * 400), ("string", "'x'")]:
        yield (f"weval-weight-{name}", {"b.yml": weval.format(prompt="hi", points=f"    - point: be kind\n      weight: {value}\n"
                                                                                "    - $contains: hi\n")}, {}, [])
        yield (f"agentv-weight-{name}", {"s.eval.yaml": agentv.format(prompt="hi", asserts="      - {type: contains, "
                                                                                           f"value: hi, weight: {value}}}\n")},
               {}, [])
    yield ("agentv-interpolation-loop", {"s.eval.yaml": agentv.format(prompt="'${{ A }} ${{ B }}'",
                                                                      asserts="      - {type: contains, value: x}\n")},
           {"A": "${{ B }}", "B": "${{ A }}"}, [])
    yield ("agentv-interpolation-self", {"s.eval.yaml": agentv.format(prompt="'${{ A }}'",
                                                                      asserts="      - {type: contains, value: '${{ A }}'}\n")},
           {"A": "${{ A }}" * 5_000}, [])
    yield ("agentv-interpolation-huge", {"s.eval.yaml": agentv.format(prompt="'" + "${{ A }}" * 20_000 + "'",
                                                                      asserts="      - {type: contains, value: x}\n")},
           {"A": "x" * 100_000}, [])
    yield ("agentv-includes-itself", {"s.eval.yaml": "name: s\ndescription: d\ntests:\n  - file://s.eval.yaml\n"
                                                     "  - file://*.yaml\n  - {id: a, input: hi, criteria: c}\n"}, {}, [])
    yield ("agentv-include-cycle", {"s.eval.yaml": "name: s\ndescription: d\ntests: t.eval.yaml\n",
                                    "t.eval.yaml": "name: t\ndescription: d\ntests: s.eval.yaml\n"}, {}, [])
    yield ("agentv-tests-file-includes-suite", {"s.eval.yaml": "name: s\ndescription: d\ntests: cases.yaml\n",
                                                "cases.yaml": "- {id: a, input: hi, criteria: c}\n- file://s.eval.yaml\n"},
           {}, [])
    yield ("agentv-judge-prompt-is-itself", {"s.eval.yaml": agentv.format(
        prompt="hi", asserts="      - {type: llm-judge, prompt: s.eval.yaml}\n")}, {}, ["--judge", "echo"])
    yield ("agentv-judge-template-recursive", {"s.eval.yaml": agentv.format(
        prompt="'{{ answer }}{{ answer }}'", asserts="      - {type: llm-judge, prompt: p.md}\n"),
        "p.md": "{{ answer }}" * 10_000 + "{{ criteria }}{{ input }}{{ expected_output }}"}, {}, ["--judge", "echo"])
    yield ("weval-mustache-bomb", {"b.yml": weval.format(prompt="'" + "{{response}}" * 10_000 + "'",
                                                         points="    - $contains: '{response}{modelId}{promptId}'\n")},
           {}, [])
    # Files that are not regular files, inside the project (None: a FIFO no one writes to).
    fifo: dict[str, str | None]
    for label, fifo in [
        ("content-block-fifo", {"s.eval.yaml": agentv.format(prompt="[{role: user, content: [{type: text, value: hi}, "
                                                             "{type: file, value: pipe.txt}]}]",
                                                             asserts="      - {type: contains, value: hi}\n"),
                                "pipe.txt": None}),
        ("judge-prompt-fifo", {"s.eval.yaml": agentv.format(prompt="hi", asserts="      - {type: llm-judge, prompt: pipe.md}\n"),
                               "pipe.md": None}),
        ("workspace-file-fifo", {"s.eval.yaml": "name: s\ndescription: d\nworkspace: pipe.yaml\ntests:\n"
                                                "  - {id: a, input: hi, criteria: c}\n", "pipe.yaml": None}),
        ("targets-file-fifo", {"s.eval.yaml": agentv.format(prompt="hi", asserts="      - {type: contains, value: hi}\n"),
                               ".agentv/targets.yaml": None}),
        ("tests-file-fifo", {"s.eval.yaml": "name: s\ndescription: d\ntests: pipe.jsonl\n", "pipe.jsonl": None}),
        ("code-judge-script-fifo", {"s.eval.yaml": agentv.format(prompt="hi", asserts="      - {type: code-judge, "
                                                                 "command: [python3, pipe.py], timeout_ms: 3000}\n"),
                                    "pipe.py": None}),
    ]:
        yield (f"agentv-{label}", fifo, {}, ["--judge", "echo"] if "judge" in label else [])  # type: ignore[misc]
    yield ("weval-answer-of-surrogates", {"b.yml": weval.format(prompt='"\\ud800\\udc00\\ud800 x"',
                                                                points="    - $matches: '.'\n    - $word_count_between: [1, 9]\n")},
           {}, [])


# More `$js` bodies (the third round): results deep, wide or cyclic, built-ins replaced on the
# prototypes the conversion reads, buffers and strings past the memory limit, dynamic import, eval.
JS_PROBES_3 = {
    "deep-result": "let o = {}; for (let i = 0; i < 1000000; i++) o = {o}; o",
    "deep-array-result": "let o = []; for (let i = 0; i < 1000000; i++) o = [o]; o",
    "cyclic-result": "const o = {}; o.o = o; o",
    "wide-result": "new Array(5000000).fill(1)",
    "wide-object": "const o = {}; for (let i = 0; i < 2000000; i++) o['k' + i] = i; o",
    "proto-toJSON": "Object.prototype.toJSON = function(){ for(;;){} }; ({score: 1})",
    "proto-score-getter": "Object.defineProperty(Object.prototype, 'score', {get(){ for(;;){} }}); ({})",
    "array-iterator": "Array.prototype[Symbol.iterator] = function*(){ for(;;) yield 1 }; [1, 2]",
    "toStringTag-getter": "({get [Symbol.toStringTag](){ for(;;){} }})",
    "arraybuffer-2g": "new ArrayBuffer(2 ** 31 - 1)",
    "dynamic-import": "import('os')",
    "eval-loop": "eval('for(;;){}')",
    "surrogate-heavy-result": "'\\ud800'.repeat(5000000)",
    "error-message-huge": "throw new Error('x'.repeat(50 * 1024 * 1024))",
    "throw-deep": "let o = {}; for (let i = 0; i < 1000000; i++) o = {o}; throw o",
    "throw-cyclic": "const o = {}; o.o = o; throw o",
    "array-index-getter": "const a = [1]; Object.defineProperty(a, 0, {get(){ for(;;){} }}); a",
    "proxy-get": "new Proxy({score: 1}, {get(){ for(;;){} }})",
    "valueOf-score": "({score: {valueOf(){ for(;;){} }}})",
    "explain-huge": "({score: 1, explain: 'x'.repeat(60000000)})",
    "getter-recursion": "({get score(){ return this.score }})",
    "promise-never": "new Promise(() => {})",
    "promise-rejects-getter": "Promise.reject({get message(){ for(;;){} }})",
    "async-throw-proxy": "(async () => { throw new Proxy({}, {get(){ for(;;){} }}) })()",
    "score-nan": "({score: NaN})", "score-inf": "({score: Infinity})", "score-negative": "({score: -5})",
    "score-huge": "({score: 1e308 * 10})", "score-string": "({score: '1'})", "score-bigint": "({score: 1n})",
}


def attack_scoring(tally: Tally) -> None:
    """Each case through `evalspec run` with the echo model. Broken: a traceback, no end within
    SCORING_BOUND_S, an exit other than 0/1/2/3, or results missing after a run that said it finished."""
    print("scoring", flush=True)
    for name, files, extra, args in scoring_cases():
        if ONLY and ONLY not in name:
            continue
        root = Path(tempfile.mkdtemp(prefix="attack-score-"))
        try:
            project = root / "proj"
            (project / ".git").mkdir(parents=True)
            for rel, text in files.items():
                (project / rel).parent.mkdir(parents=True, exist_ok=True)
                if text is None:
                    os.mkfifo(project / rel)
                else:
                    (project / rel).write_text(text, encoding="utf-8", errors="surrogatepass")
            target = project / next(iter(files))
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root), "NO_COLOR": "1", "LANG": "C.UTF-8"} | extra
            ran = run_cli(["run", str(target), "-m", "echo", "-o", str(root / "out"), "--no-report", "--timeout", "5",
                           *args], env=env, cwd=project, timeout=SCORING_BOUND_S)
            problem = crashed(ran)
            if problem is None and ran.code not in (0, 1, 2, 3):
                problem = f"exit {ran.code}: {ran.err.strip().splitlines()[-1:]}"
            if problem is None and ran.code in (0, 1, 3) and not list((root / "out").rglob("*.json*")):
                problem = "finished without results"
            tally.note(f"scoring/{name} ({ran.seconds:.1f} s, exit {ran.code})", problem)
        finally:
            shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# runs: kills while results and reports are written, resumes of a changed file, shards, a full disk

def _comparison_prompts(out: Path) -> tuple[set[str], str | None]:
    """The prompt ids of the newest comparison under `out`, or a problem with it."""
    comps = sorted(out.rglob("*_comparison.json"), key=lambda p: p.stat().st_mtime)
    if not comps:
        return set(), "no comparison file"
    try:
        data = json.loads(comps[-1].read_text())
    except ValueError as exc:
        return set(), f"{comps[-1].name} is not JSON ({exc})"
    return set(data.get("allFinalAssistantResponses") or {}), None


def _valid_results(out: Path, journals: bool = True) -> str | None:
    """Every results file under `out` reads back: JSON files parse, JSONL lines parse (a journal may end
    in a cut line: it is an append log). `journals=False`: journals left out (the journal area plants
    lines in them that evalspec did not write)."""
    for f in out.rglob("*"):
        if not f.is_file() or f.suffix not in (".json", ".jsonl"):
            continue
        if not journals and f.name.endswith(".journal.jsonl"):
            continue
        text = f.read_text(errors="replace")
        try:
            if f.suffix == ".json":
                json.loads(text)
            else:
                lines = text.splitlines()
                for line in lines[:-1] if f.name.endswith(".journal.jsonl") else lines:
                    json.loads(line)
        except (ValueError, RecursionError):
            return f"{f.relative_to(out)} does not parse"
    return None


class _Skip(Exception):
    """A section of an area that ATTACK_ONLY leaves out."""


def attack_runs(tally: Tally) -> None:
    """A Weval run of N prompts against the fake provider, SIGKILLed or SIGTERMed at points from its
    start to past its end (while answers arrive, while the comparison and the artefacts are written,
    while report.html is written), then resumed; a blueprint edited between the kill and the resume;
    an unsharded run killed and finished by two shards at once; a run under a file-size limit, then
    resumed without one; an output folder that is a symlink, a dangling one, a loop.
    Broken: a traceback, a hang, a result file that does not parse, a prompt missing from the final
    comparison, a finished answer asked again, or the changed prompt not asked again."""
    print("runs", flush=True)
    n = 400
    with FakeProvider() as fake:
        fake.latency = 0.002
        for delay in (0.2, 0.6, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0):
            for sig in (signal.SIGKILL, signal.SIGTERM):
                name = f"kill-at-{delay}s-{signal.Signals(sig).name}"
                if ONLY and ONLY not in name:
                    continue
                root = Path(tempfile.mkdtemp(prefix="attack-runs-"))
                try:
                    bp = root / "b.yml"
                    bp.write_text(_blueprint(n))
                    env = base_env(fake, root)
                    fake.reset()
                    common = ["run", str(bp), "-o", str(root / "out"), "-j", "16", "--retries", "0"]
                    first = _start(common, env, root)
                    time.sleep(delay)
                    finished_first = first.poll() is not None
                    if not finished_first:
                        os.killpg(first.pid, sig)
                    _, err1 = first.communicate(timeout=60)
                    before = _asked(fake)
                    problems = []
                    bad = _valid_results(root / "out")
                    if bad and sig == signal.SIGTERM:  # SIGKILL may cut a file: --resume must mend it
                        problems.append(f"after the kill: {bad}")
                    ran = run_cli([*common, "--resume"], env=env, cwd=root, timeout=180)
                    after = _asked(fake)[len(before):]
                    problem = crashed(ran)
                    if problem:
                        problems.append(problem)
                    if "Traceback" in err1 and OWN_FRAME.search(err1):
                        problems.append("the killed run printed a traceback")
                    repeated = set(after) & set(before)
                    if len(repeated) > 16 + 4:  # in flight at the kill (-j 16), and the journal's lag
                        problems.append(f"{len(repeated)} answered prompts asked again")
                    have, bad_comp = _comparison_prompts(root / "out")
                    if bad_comp:
                        problems.append(bad_comp)
                    elif len(have) != n:
                        problems.append(f"the final comparison holds {len(have)} of {n} prompts")
                    bad = _valid_results(root / "out")
                    if bad:
                        problems.append(f"after --resume: {bad}")
                    tally.note(f"runs/{name}{' (finished before the kill)' if finished_first else ''}",
                               "; ".join(problems) or None)
                finally:
                    shutil.rmtree(root, ignore_errors=True)

        def fresh(root: Path) -> tuple[Path, dict[str, str]]:
            bp = root / "b.yml"
            bp.write_text(_blueprint(60))
            fake.reset()
            return bp, base_env(fake, root)

        # Resume after the blueprint changed: a prompt reworded (the run label, which hashes ids and
        # points, stays), then a prompt added (a new label: a new run, which --resume must say).
        root = Path(tempfile.mkdtemp(prefix="attack-runs-"))
        try:
            if ONLY and ONLY not in "resume-after-reword resume-after-new-prompt":
                raise _Skip
            bp, env = fresh(root)
            common = ["run", str(bp), "-o", str(root / "out"), "--retries", "0", "--no-report"]
            run_cli(common, env=env, cwd=root)
            before = len(_asked(fake))
            bp.write_text(bp.read_text().replace("question number 7\n", "question number 7 reworded\n"))
            ran = run_cli([*common, "--resume"], env=env, cwd=root)
            asked = _asked(fake)[before:]
            problems = [p for p in [crashed(ran)] if p]
            if sorted(asked) != ["7"]:
                problems.append(f"asked {sorted(asked)[:10]} (only the reworded prompt was due)")
            answers = json.loads(sorted((root / "out").rglob("*_comparison.json"))[-1].read_text())
            if "reworded" not in json.dumps(answers.get("allFinalAssistantResponses", {}).get("p7", "")) and \
                    "reworded" not in json.dumps(answers.get("promptContexts", {}).get("p7", "")):
                problems.append("the results keep the old prompt's answer")
            tally.note(f"runs/resume-after-reword (exit {ran.code}, asked {sorted(asked)[:5]})", "; ".join(problems) or None)
            before = len(_asked(fake))
            bp.write_text(bp.read_text() + "- id: p999\n  prompt: question number 999\n  should: [$contains: question]\n")
            ran = run_cli([*common, "--resume"], env=env, cwd=root)
            problems = [p for p in [crashed(ran)] if p]
            if "--resume: no run labelled" not in ran.err + ran.out:
                problems.append(f"a new run started under --resume without a word ({len(_asked(fake)) - before} calls)")
            tally.note(f"runs/resume-after-new-prompt (exit {ran.code})", "; ".join(problems) or None)
        except _Skip:
            pass
        finally:
            shutil.rmtree(root, ignore_errors=True)

        # An unsharded run killed, then two shards resumed at once on its folder.
        root = Path(tempfile.mkdtemp(prefix="attack-runs-"))
        try:
            if ONLY and ONLY not in "two-shards-resume-an-unsharded-run":
                raise _Skip
            bp, env = fresh(root)
            bp.write_text(_blueprint(300))
            common = ["run", str(bp), "-o", str(root / "out"), "--retries", "0", "--no-report", "-j", "8"]
            first = _start(common, env, root)
            time.sleep(1.0)
            os.killpg(first.pid, signal.SIGKILL)
            first.communicate(timeout=60)
            before = _asked(fake)
            procs = [_start([*common, "--resume", "--shard", f"{i}/2"], env, root) for i in (1, 2)]
            outs = [p.communicate(timeout=300) for p in procs]
            after = _asked(fake)[len(before):]
            problems = [f"traceback: {e.strip().splitlines()[-1][:120]}" for _, e in outs if "Traceback" in e]
            dup = {q for q in after if after.count(q) > 1}
            if dup:
                problems.append(f"{len(dup)} prompts asked by both shards")
            if set(before) | set(after) != {str(i) for i in range(300)}:
                problems.append(f"{300 - len(set(before) | set(after))} prompts never asked")
            tally.note(f"runs/two-shards-resume-an-unsharded-run (exits {[p.returncode for p in procs]})",
                       "; ".join(problems) or None)
        except _Skip:
            pass
        finally:
            shutil.rmtree(root, ignore_errors=True)

        # Eight --resume runs at once after a kill; a run stopped (SIGSTOP) holding its lock while
        # another resumes, then continued.
        for case in ("eight-resumes-at-once", "resume-while-the-first-is-stopped"):
            if ONLY and ONLY not in case:
                continue
            root = Path(tempfile.mkdtemp(prefix="attack-runs-"))
            try:
                bp, env = fresh(root)
                bp.write_text(_blueprint(200))
                common = ["run", str(bp), "-o", str(root / "out"), "--retries", "0", "--no-report", "-j", "4"]
                first = _start(common, env, root)
                waited = time.monotonic()
                while len(_asked(fake)) < 20 and time.monotonic() - waited < 60:  # it holds the lock by now
                    time.sleep(0.05)
                problems = []
                if case == "eight-resumes-at-once":
                    os.killpg(first.pid, signal.SIGKILL)
                    first.communicate(timeout=60)
                    before = _asked(fake)
                    procs = [_start([*common, "--resume"], env, root) for _ in range(8)]
                    outs = [p.communicate(timeout=300) for p in procs]
                else:
                    os.killpg(first.pid, signal.SIGSTOP)
                    before = _asked(fake)
                    second = _start([*common, "--resume"], env, root)
                    outs = [second.communicate(timeout=120)]
                    procs = [second]
                    if second.returncode == 0:
                        problems.append("a resume ran while the stopped run held the lock")
                    os.killpg(first.pid, signal.SIGCONT)
                    outs.append(first.communicate(timeout=300))
                    procs.append(first)
                after = _asked(fake)[len(before):]
                problems += [f"traceback: {e.strip().splitlines()[-1][:120]}" for _, e in outs
                             if "Traceback" in e and OWN_FRAME.search(e)]
                dup = {q for q in after if after.count(q) > 1}
                if dup:
                    problems.append(f"{len(dup)} prompts asked twice")
                if len(set(after) & set(before)) > 4 + 4:
                    problems.append(f"{len(set(after) & set(before))} answered prompts asked again")
                if set(before) | set(after) != {str(i) for i in range(200)}:
                    problems.append(f"{200 - len(set(before) | set(after))} prompts never asked")
                tally.note(f"runs/{case} (exits {[p.returncode for p in procs]})", "; ".join(problems) or None)
            finally:
                shutil.rmtree(root, ignore_errors=True)

        # A file-size limit (EFBIG, as a full disk: ENOSPC), then the same run resumed without it.
        for limit_kb in (1, 8, 32, 128):
            if ONLY and ONLY not in "file-size-limit":
                continue
            root = Path(tempfile.mkdtemp(prefix="attack-runs-"))
            try:
                bp, env = fresh(root)
                common = ["run", str(bp), "-o", str(root / "out"), "--retries", "0", "-j", "8"]
                limited = subprocess.run(["bash", "-c", f"ulimit -f {limit_kb}; exec \"$@\"", "bash", *EVALSPEC, *common],
                                         env=env, cwd=root, capture_output=True, text=True, timeout=120)
                before = _asked(fake)
                problems = []
                for journal in (root / "out").rglob("*.journal.jsonl"):
                    first = journal.read_bytes().split(b"\n", 1)[0]
                    try:
                        json.loads(first)
                    except ValueError:
                        if before:
                            problems.append(f"{len(before)} calls made with the journal's header cut short")
                ran = run_cli([*common, "--resume"], env=env, cwd=root)
                after = _asked(fake)[len(before):]
                if "Traceback" in limited.stderr and OWN_FRAME.search(limited.stderr):
                    problems.append("the limited run: traceback: " + limited.stderr.strip().splitlines()[-1][:150])
                if limited.returncode not in (0, 2):
                    problems.append(f"the limited run exited {limited.returncode}")
                if crashed(ran):
                    problems.append(f"resume: {crashed(ran)}")
                # In flight or held for their scores when the write failed (the pool runs 2 × -j cells):
                # lost, as at a kill.
                if len(set(after) & set(before)) > 2 * 8 + 2:
                    problems.append(f"{len(set(after) & set(before))} answered prompts asked again")
                have, bad_comp = _comparison_prompts(root / "out")
                if bad_comp or len(have) != 60:
                    problems.append(bad_comp or f"the final comparison holds {len(have)} of 60 prompts")
                tally.note(f"runs/file-size-limit-{limit_kb}k (exit {limited.returncode}, then {ran.code})",
                           "; ".join(problems) or None)
            finally:
                shutil.rmtree(root, ignore_errors=True)

        # The output folder as a symlink: to a folder elsewhere (followed, as any path), dangling, a loop.
        for kind in ("to-folder", "dangling", "loop", "to-file", "to-dev-null"):
            if ONLY and ONLY not in f"output-symlink-{kind}":
                continue
            root = Path(tempfile.mkdtemp(prefix="attack-runs-"))
            try:
                bp, env = fresh(root)
                out = root / "out"
                elsewhere = root / "elsewhere"
                if kind == "to-folder":
                    elsewhere.mkdir()
                    out.symlink_to(elsewhere)
                elif kind == "dangling":
                    out.symlink_to(root / "nowhere")
                elif kind == "loop":
                    out.symlink_to(root / "out2")
                    (root / "out2").symlink_to(out)
                elif kind == "to-file":
                    elsewhere.write_text("x")
                    out.symlink_to(elsewhere)
                else:
                    out.symlink_to("/dev/null")
                ran = run_cli(["run", str(bp), "-o", str(out), "--retries", "0"], env=env, cwd=root)
                problem = crashed(ran) or (None if ran.code in (0, 2) else f"exit {ran.code}")
                if kind == "to-folder" and ran.code == 0 and not list(elsewhere.rglob("*_comparison.json")):
                    problem = "no results in the folder the link points to"
                tally.note(f"runs/output-symlink-{kind} (exit {ran.code})", problem)
            finally:
                shutil.rmtree(root, ignore_errors=True)



# ------------------------------------------------------------------------------------------------
# fourth round: mutation families none of the earlier rounds tried


def _digest_tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` (links not followed) with its content's digest: what must not change."""
    import hashlib
    out: dict[str, str] = {}
    for p in sorted(folder.rglob("*")):
        if p.is_symlink():
            out[str(p)] = "link:" + os.readlink(p)
        elif p.is_file():
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _files_outside(root: Path, allowed: list[Path], before: set[str]) -> list[str]:
    """Files under `root` that are new since `before` and under none of `allowed`."""
    found = []
    for p in root.rglob("*"):
        if str(p) in before or (p.is_dir() and not p.is_symlink()):
            continue
        if not any(p == a or a in p.parents for a in allowed):
            found.append(str(p.relative_to(root)))
    return found


PRECIOUS = "export PATH=/usr/bin  # the user's own file\n"
AGENTV_SUITE = """name: planted
description: d
execution:
  target: default
tests:
  - {id: t1, input: question number 1, criteria: c, assert: [{type: contains, value: question}]}
  - {id: t2, input: question number 2, criteria: c, assert: [{type: contains, value: question}]}
"""


def attack_planted(tally: Tally) -> None:
    """An output folder prepared by someone else (a cloned repository's `results/`): after a first run
    shows the names, each file a run writes or reads back (journal, lock, response cache, report and
    its temporary file, a Weval artefact) is replaced by a symlink to a file outside, a dangling link,
    a FIFO, a folder or a link to /dev/zero; then `run`, `run --resume` and `run --retry-errors`.
    Broken: the file outside changed, a hang (60 s), a traceback, or a FIFO/link left without a word
    when the run exits 0."""
    print("planted output folders", flush=True)
    with FakeProvider() as fake:
        for fmt in ("weval", "agentv"):
            for kind in ("journal", "lock", "cache", "report-tmp", "report", "artefact-core", "subfolder", "cache-folder"):
                if fmt == "agentv" and kind == "artefact-core":
                    continue
                for plant in ("link-out", "dangling", "fifo", "folder", "dev-zero"):
                    for mode in ("--resume", "--retry-errors", None):
                        name = f"planted/{fmt}/{kind}/{plant}/{mode or 'fresh'}"
                        if ONLY and ONLY not in name:
                            continue
                        tally.note(name, _planted_case(fake, fmt, kind, plant, mode))


def _planted_case(fake: FakeProvider, fmt: str, kind: str, plant: str, mode: str | None) -> str | None:
    root = Path(tempfile.mkdtemp(prefix="attack-planted-"))
    try:
        home = root / "home"
        home.mkdir()
        victim = home / ".bashrc"
        victim.write_text(PRECIOUS)
        if fmt == "weval":
            src = root / "b.yml"
            src.write_text(_blueprint(6))
        else:
            (root / ".agentv").mkdir()
            (root / ".agentv" / "targets.yaml").write_text(TARGETS)
            src = root / "s.eval.yaml"
            src.write_text(AGENTV_SUITE)
        env = base_env(fake, home)
        out = root / "out"
        common = ["run", str(src), "-o", str(out), "--retries", "0", "--cache"]
        first = run_cli(common, env=env, cwd=root)
        if first.code not in (0, 1):
            return f"the first run failed: exit {first.code} {first.err.strip().splitlines()[-1:]}"
        journals = sorted(out.rglob("*.journal.jsonl"))
        if not journals:
            return "no journal after the first run"
        journal = journals[0]
        target = {"journal": journal, "lock": journal.with_suffix(".lock"),
                  "cache": out / ".cache" / "responses.jsonl",
                  "report-tmp": journal.parent / f".report.html.{os.getpid()}.tmp",  # a guess at a PID
                  "report": journal.parent / "report.html",
                  "subfolder": out / ("live" if fmt == "weval" else "agentv"),  # evalspec's own folders
                  "cache-folder": out / ".cache"}.get(kind)
        if kind == "artefact-core":
            runs = [p for p in journal.parent.iterdir() if p.is_dir()]
            target = runs[0] / "core.json" if runs else None
        if target is None:
            return None
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)
        if plant == "link-out":
            target.symlink_to(home if kind in ("subfolder", "cache-folder") else victim)
        elif plant == "dangling":
            target.symlink_to(home / "created-through-a-link")
        elif plant == "fifo":
            os.mkfifo(target)
        elif plant == "folder":
            target.mkdir()
        else:
            target.symlink_to("/dev/zero")
        before = _digest_tree(home)
        ran = run_cli(common + ([mode] if mode else []), env=env, cwd=root, timeout=60)
        problems = [p for p in [crashed(ran)] if p]
        if _digest_tree(home) != before:
            problems.append("a file outside the output folder was written or created")
        if ran.code not in (0, 1, 2, 3):
            problems.append(f"exit {ran.code}")
        return "; ".join(problems) or None
    finally:
        shutil.rmtree(root, ignore_errors=True)


HOSTILE_TEXT = "\x1b]52;c;SGVsbG8=\x07\x1b]0;PWNED\x07\r\x1b[K\x1b[8mhidden\x1b[0m\u202edesrever\x9b31m\x00"


def _raw_controls(text: str) -> list[str]:
    """Control characters printed raw, other than newline, tab and evalspec's own styling."""
    for seq in ("\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[1;31m", "\x1b[1;33m", "\x1b[1;34m", "\x1b[1;36m",
                "\r\x1b[K", "\x1b[K"):
        text = text.replace(seq, "")
    return sorted({repr(c) for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f
                   or c in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"})


def _yaml_dq(text: str) -> str:
    """`text` as a YAML double-quoted scalar: control characters (C0, C1, bidi) as escapes, the rest raw."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif code < 0x20 or 0x7F <= code <= 0x9F or 0x2028 <= code <= 0x202E or 0x2066 <= code <= 0x2069:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def display_cases(root: Path, fake: FakeProvider) -> Iterator[tuple[str, list[str], dict[str, str] | None]]:
    """(name, evalspec arguments, replies) whose output must hold no raw control character."""
    h = _yaml_dq(HOSTILE_TEXT)
    bp = root / "keys.weval.yml"
    bp.write_text(f"title: {h}\nmodels: [openai:candidate]\n---\n- id: {_yaml_dq('p' + HOSTILE_TEXT)}\n"
                  f"  prompt: {h}\n  {h}: 1\n  should: [{h}, $contains: {h}, $js: {h}]\n")
    for fmt in ("concise", "full", "json", "github"):
        yield f"check-keys-{fmt}", ["check", str(bp), "--format", fmt, "--color", "always"], None
    bad = root / "broken.weval.yml"
    bad.write_text(f"title: t\nmodels: [{_yaml_dq('openai:' + HOSTILE_TEXT)}]\n---\n- id: p\n  prompt: hi\n"
                   f"  should: [$nope: {h}]\n")
    yield "run-refused-errors", ["run", str(bad), "-o", str(root / "o1")], None
    good = root / "good.weval.yml"
    good.write_text(f"title: t\nmodels: [openai:candidate]\n---\n- id: {_yaml_dq('p' + HOSTILE_TEXT)}\n"
                    f"  prompt: {h}\n  should: [$contains: x, $icontains: {h}]\n")
    for status in (200, 400, 401, 500):
        yield f"run-answer-{status}", ["run", str(good), "-o", str(root / f"o{status}"), "--retries", "0"], \
            {"status": str(status)}
    yield "run-dry-run", ["run", str(good), "--dry-run", "-o", str(root / "od")], None
    yield "run-label", ["run", str(good), "-o", str(root / "ol"), "--label", "x" + HOSTILE_TEXT.replace("\x00", ""), "--retries", "0"], \
        {"status": "200"}
    agentv = root / "s.eval.yaml"
    (root / ".agentv").mkdir(exist_ok=True)
    (root / ".agentv" / "targets.yaml").write_text(TARGETS)
    agentv.write_text(f"name: s\ndescription: {h}\nexecution:\n  target: default\ntests:\n"
                      f"  - id: {_yaml_dq('t' + HOSTILE_TEXT)}\n    input: {h}\n    criteria: {h}\n"
                      f"    assert: [{{type: contains, value: {h}}}, {{type: icontains, value: {h}}}]\n")
    yield "agentv-check", ["check", str(agentv)], None
    for status in (200, 500):
        yield f"agentv-run-{status}", ["run", str(agentv), "-o", str(root / f"a{status}"), "--retries", "0"], \
            {"status": str(status)}


def attack_display(tally: Tally) -> None:
    """What evalspec prints: keys, ids, titles, model ids, answers, provider error bodies, judge replies
    and labels holding OSC 52 (clipboard), OSC 0 (title), CR + erase line, SGR 8 (hidden), U+202E,
    C1 CSI and NUL, through `check` in every format and `run` (answers and errors), plus `report`;
    and the HTML report of those runs. Broken: a control character printed raw (other than evalspec's
    own colours and progress line), a traceback, a hang; in report.html, the hostile markup unescaped."""
    print("what is shown", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-display-"))
    try:
        with FakeProvider() as fake:
            for name, args, reply in display_cases(root, fake):
                if ONLY and ONLY not in name:
                    continue
                fake.reset()
                if reply is not None:
                    status = int(reply["status"])
                    one = (Reply.ok("answer " + HOSTILE_TEXT) if status == 200
                           else Reply.error(status, "refused " + HOSTILE_TEXT))
                    fake.then(*[one] * 20)
                ran = run_cli(args, env=base_env(fake, root), cwd=root, timeout=90)
                problems = [p for p in [crashed(ran)] if p]
                raw = _raw_controls(ran.out + ran.err)
                if raw:
                    problems.append(f"printed raw: {', '.join(raw)[:120]}")
                tally.note(f"display/{name} (exit {ran.code})", "; ".join(problems) or None)
            for results in sorted(root.rglob("*_comparison.json")) + sorted(
                    p for p in root.rglob("*.jsonl") if "journal" not in p.name and ".cache" not in str(p)):
                ran = run_cli(["report", str(results), "--format", "markdown"], env=base_env(fake, root),
                              cwd=root, timeout=90)
                raw = _raw_controls(ran.out + ran.err)
                tally.note(f"display/report-markdown/{results.parent.name[:20]} (exit {ran.code})",
                           crashed(ran) or (f"printed raw: {', '.join(raw)[:120]}" if raw else None))
            for page in sorted(root.rglob("report.html")):
                text = page.read_text(errors="replace")
                problems = []
                if "\x1b" in text and "\\u001b" not in text:
                    problems.append("a raw ESC in the page")
                if re.search(r"<script>alert|<img src=x onerror", text):
                    problems.append("markup from the answers unescaped")
                tally.note(f"display/html/{page.parent.name[:30]}", "; ".join(problems) or None)
    finally:
        shutil.rmtree(root, ignore_errors=True)


HOSTILE_IDS = ["../../escape", "/abs/olute", "a/b", "..", ".", "CON", "nul.txt", "x" * 5000, "\u00e9", "e\u0301",
               "P", "p", "\uff0e\uff0e\uff0fx", "%2e%2e%2fx", "\\\\?\\C:\\x", "C:\\x\\y", "file://host/x",
               "a\u202eb", "\U0001f642" * 300, " lead", "trail.", "a\x00b", "a\nb", "-rf", "--resume", "~",
               "$HOME", "${{ HOME }}", "{{ id }}", "<script>alert(1)</script>", "a:b", "a|b", "a_b", "*", "?"]


def attack_names(tally: Tally) -> None:
    """Ids, titles, suite names and labels that are paths, traversals, reserved names, Unicode twins
    (NFC/NFD, case), 5,000 characters, 300 emoji (1,200 bytes), NUL, newline, lone surrogates, option-
    and template-looking text, as Weval prompt ids and AgentV test ids, through `check`, `run`, `--resume`
    and `report`. Broken: a file written outside the output folder, a traceback, a hang, an item missing
    from the results or two items sharing one."""
    print("hostile names", flush=True)
    with FakeProvider() as fake:
        for fmt in ("weval", "agentv"):
            for title in ("plain", "../../titled", "x" * 3000, "a/b", "\u202ename"):
                name = f"names/{fmt}/title-{title[:12]!r}"
                if ONLY and ONLY not in name:
                    continue
                root = Path(tempfile.mkdtemp(prefix="attack-names-"))
                try:
                    ids = HOSTILE_IDS
                    if fmt == "weval":
                        src = root / "proj" / "b.yml"
                        src.parent.mkdir()
                        body = [f"title: {_yaml_dq(title)}", "models: [openai:candidate]", "---"]
                        for i, ident in enumerate(ids):
                            body += [f"- id: {_yaml_dq(ident)}", f"  prompt: question number {i}",
                                     "  should: [$contains: question]"]
                    else:
                        src = root / "proj" / "s.eval.yaml"
                        (root / "proj" / ".agentv").mkdir(parents=True)
                        (root / "proj" / ".agentv" / "targets.yaml").write_text(TARGETS)
                        body = [f"name: {_yaml_dq(title)}", "description: d", "execution:", "  target: default",
                                "tests:"]
                        for i, ident in enumerate(ids):
                            body += [f"  - id: {_yaml_dq(ident)}", f"    input: question number {i}",
                                     "    criteria: c", "    assert: [{type: contains, value: question}]"]
                    src.write_text("\n".join(body) + "\n")
                    before = {str(p) for p in root.rglob("*")}
                    env = base_env(fake, root)
                    fake.reset()
                    out = root / "out"
                    checked = run_cli(["check", str(src), "--format", "json"], env=env, cwd=root / "proj")
                    ran = run_cli(["run", str(src), "-o", str(out), "--retries", "0", "--skip-invalid"], env=env,
                                  cwd=root / "proj", timeout=120)
                    again = run_cli(["run", str(src), "-o", str(out), "--retries", "0", "--skip-invalid", "--resume"],
                                    env=env, cwd=root / "proj", timeout=120)
                    problems = [p for p in (crashed(checked), crashed(ran), crashed(again)) if p]
                    # --skip-invalid runs what it can: a refusal of the whole file (exit 2) is a failure here.
                    if ran.code not in (0, 1, 3):
                        problems.append(f"run exit {ran.code}: {ran.err.strip().splitlines()[-1:]}")
                    stray = _files_outside(root, [out, root / "proj" / "out", src], before)
                    if stray:
                        problems.append(f"written outside the output folder: {stray[:3]}")
                    asked = _asked(fake)
                    dup = {q for q in set(asked) if asked.count(q) > 1}
                    if dup:
                        problems.append(f"{len(dup)} item(s) asked twice (the resume asked again)")
                    if ran.code == 0 and len(set(asked)) < len(ids) - 5:  # --skip-invalid: some ids are refused
                        problems.append(f"only {len(set(asked))} of {len(ids)} items asked")
                    if fmt == "weval":
                        for run_dir in {p.parent for p in out.rglob("core.json")}:
                            files = list((run_dir / "responses").glob("*.json"))
                            if ran.code == 0 and len(files) != len(set(asked)):
                                problems.append(f"{len(set(asked))} prompts answered, {len(files)} response files")
                    for results in [p for p in out.rglob("*_comparison.json")] + [
                            p for p in out.rglob("*.jsonl") if "journal" not in p.name and ".cache" not in str(p)]:
                        rep = run_cli(["report", str(results), "-o", str(root / "r.html")], env=env, cwd=root)
                        if crashed(rep):
                            problems.append(f"report: {crashed(rep)}")
                    tally.note(f"{name} (exit {ran.code}, {len(set(asked))} asked)", "; ".join(problems) or None)
                finally:
                    shutil.rmtree(root, ignore_errors=True)


def _fourth_round_faults() -> Iterator[tuple[str, Behaviour]]:
    """Replies none of the earlier rounds sent."""
    msg = {"role": "assistant", "content": "hi"}
    ok = {"choices": [{"message": msg, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    okb = json.dumps(ok).encode()
    yield "fourth/duplicate-keys", _json200(b'{"choices": [{"message": {"content": "hi"}}], "choices": null}')
    yield "fourth/duplicate-content", _json200(b'{"choices": [{"message": {"content": "hi", "content": 5}}]}')
    yield "fourth/bom-json", _json200(b"\xef\xbb\xbf" + okb)
    yield "fourth/utf16-json", _reply(200, b"\xff\xfe" + json.dumps(ok).encode("utf-16-le"),
                                      "content-type: application/json; charset=utf-16")
    yield "fourth/trailing-garbage", _json200(okb + b"}}]]garbage")
    yield "fourth/two-objects", _json200(okb + okb)
    yield "fourth/json-comments", _json200(b'{"choices": [/* c */ {"message": {"content": "hi"}}]}')
    yield "fourth/nan-literals", _json200(b'{"choices": [{"message": {"content": "hi"}}], "usage": '
                                          b'{"prompt_tokens": NaN, "completion_tokens": Infinity}}')
    yield "fourth/usage-huge-int", _json200(b'{"choices": [{"message": {"content": "hi"}}], "usage": '
                                            b'{"prompt_tokens": ' + b"9" * 400 + b', "completion_tokens": -5}}')
    yield "fourth/usage-float-exp", _json200(b'{"choices": [{"message": {"content": "hi"}}], "usage": '
                                             b'{"prompt_tokens": 1e308, "completion_tokens": 1e308}}')
    yield "fourth/control-chars-content", _json200({"choices": [{"message": {"content": HOSTILE_TEXT}}]})
    yield "fourth/content-just-under-cap", _json200({"choices": [{"message": {"content": "a" * (7 << 20)}}]})
    yield "fourth/ten-thousand-tool-calls", _json200({"choices": [{"message": {"content": None, "tool_calls": [
        {"id": str(i), "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in range(10_000)]}}]})
    yield "fourth/deep-tool-arguments", _json200({"choices": [{"message": {"content": None, "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "f", "arguments": "[" * 100_000 + "]" * 100_000}}]}}]})
    yield "fourth/html-200", _reply(200, b"<html><body>" + okb + b"</body></html>", "content-type: text/html")
    yield "fourth/gzip-header-plain-body", _reply(200, okb, "content-type: application/json", "content-encoding: gzip")
    yield "fourth/identity-then-gzip", _reply(200, okb, "content-type: application/json",
                                              "content-encoding: identity, gzip")
    yield "fourth/te-gzip-chunked", _reply(200, b"5\r\nhello\r\n0\r\n\r\n", "content-type: application/json",
                                           "transfer-encoding: gzip, chunked", length=False)
    yield "fourth/http10-close", lambda r, w: _raw_bytes(w, b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n"
                                                         + okb)
    yield "fourth/early-reply-before-body", lambda r, w: _raw_bytes(
        w, b"HTTP/1.1 413 X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
    yield "fourth/upgrade-200", _reply(200, okb, "content-type: application/json", "connection: upgrade",
                                       "upgrade: websocket")
    yield "fourth/sse-on-plain-request", _reply(200, b"data: " + okb + b"\n\ndata: [DONE]\n\n",
                                                "content-type: text/event-stream")
    yield "fourth/sse-endless", _forever(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n",
                                         b"data: {\"choices\": [{\"delta\": {\"content\": \"a\"}}]}\n\n", 0.01)
    yield "fourth/drip-headers-then-endless-body", _trickle(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000000\r\n\r\n", b" " * 200, 0.5)
    yield "fourth/error-in-200", _json200({"error": {"message": HOSTILE_TEXT, "code": 500}})
    yield "fourth/choices-2", _json200({"choices": [{"message": {"content": "one"}}, {"message": {"content": "two"}}]})
    yield "fourth/finish-length-empty", _json200({"choices": [{"message": {"content": ""}, "finish_reason": "length"}]})
    yield "fourth/refusal-field", _json200({"choices": [{"message": {"content": None, "refusal": HOSTILE_TEXT}}]})
    yield "fourth/redirect-metadata", _reply(307, b"", "location: http://169.254.169.254/latest/meta-data/")
    yield "fourth/redirect-file-url", _reply(302, b"", "location: file:///etc/passwd")
    yield "fourth/redirect-unix-socket", _reply(307, b"", "location: http+unix://%2Fvar%2Frun%2Fdocker.sock/")
    yield "fourth/retry-after-negative-ms", _reply(429, b"{}", "retry-after-ms: -1000", "retry-after: 0")
    yield "fourth/content-length-negative", lambda r, w: _raw_bytes(
        w, b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: -5\r\n\r\n" + okb)
    yield "fourth/status-line-garbage", lambda r, w: _raw_bytes(w, b"HTTP/1.1 2OO OK\r\n\r\n" + okb)
    yield "fourth/header-nul", lambda r, w: _raw_bytes(w, b"HTTP/1.1 200 OK\r\nx-a: \x00\x1b]0;t\x07\r\n"
                                                       b"content-length: " + str(len(okb)).encode() + b"\r\n\r\n" + okb)


def attack_replies(tally: Tally) -> None:
    """The fourth round's provider replies through the faults area's harness (one Weval prompt, OpenAI,
    Anthropic and Gemini parsers for the body shapes)."""
    print("provider replies (fourth round)", flush=True)
    global fault_cases
    original = fault_cases
    fault_cases = lambda port: _fourth_round_faults()  # noqa: E731  # the faults area's loop, these cases
    try:
        attack_faults(tally)
    finally:
        fault_cases = original


def attack_chains(tally: Tally) -> None:
    """A run killed, then `--resume`d by three processes at once that are killed in turn at a random
    point, four times over, then one last `--resume`: Weval (400 prompts) and AgentV (200 tests), SIGKILL
    and SIGTERM. Counted at the fake server. Broken: an item asked more often than the kills can explain
    (in flight at each kill: -j 8), an item never asked, results that miss items, a traceback, a hang."""
    import random
    print("kill and resume chains", flush=True)
    rng = random.Random(4)
    with FakeProvider() as fake:
        fake.latency = 0.01
        for fmt, n in (("weval", 400), ("agentv", 200)):
            for sig in (signal.SIGKILL, signal.SIGTERM):
                for rounds in (2, 4):
                    name = f"chains/{fmt}/{signal.Signals(sig).name}/{rounds}-rounds"
                    if ONLY and ONLY not in name:
                        continue
                    root = Path(tempfile.mkdtemp(prefix="attack-chains-"))
                    try:
                        if fmt == "weval":
                            src = root / "b.yml"
                            src.write_text(_blueprint(n))
                        else:
                            (root / ".agentv").mkdir()
                            (root / ".agentv" / "targets.yaml").write_text(TARGETS)
                            src = root / "s.eval.yaml"
                            src.write_text("name: chains\ndescription: d\nexecution:\n  target: default\ntests:\n" + "".join(
                                f"  - {{id: t{i}, input: question number {i}, criteria: c, "
                                f"assert: [{{type: contains, value: question}}]}}\n" for i in range(n)))
                        env = base_env(fake, root)
                        fake.reset()
                        common = ["run", str(src), "-o", str(root / "out"), "-j", "8", "--retries", "0", "--no-report"]
                        kills = 0
                        first = _start(common, env, root)
                        time.sleep(rng.uniform(0.5, 2.0))
                        os.killpg(first.pid, sig)
                        first.communicate(timeout=60)
                        kills += 1
                        problems: list[str] = []
                        for _ in range(rounds):
                            procs = [_start([*common, "--resume"], env, root) for _ in range(3)]
                            time.sleep(rng.uniform(0.3, 1.5))
                            for p in procs:
                                if p.poll() is None:
                                    with contextlib.suppress(ProcessLookupError):
                                        os.killpg(p.pid, sig)
                                    kills += 1
                            for p in procs:
                                _, err = p.communicate(timeout=60)
                                if "Traceback" in err and OWN_FRAME.search(err):
                                    problems.append("traceback: " + err.strip().splitlines()[-1][:150])
                        last = run_cli([*common, "--resume"], env=env, cwd=root, timeout=300)
                        problems += [p for p in [crashed(last)] if p]
                        asked = _asked(fake)
                        extra = len(asked) - len(set(asked))
                        if extra > 8 * kills + 4:
                            problems.append(f"{extra} repeated calls for {kills} kills (at most 8 in flight each)")
                        if len(set(asked)) != n:
                            problems.append(f"{n - len(set(asked))} item(s) never asked")
                        if last.code not in (0, 1):
                            problems.append(f"the last resume exited {last.code}: {last.err.strip().splitlines()[-1:]}")
                        if fmt == "weval":
                            have, bad = _comparison_prompts(root / "out")
                            if bad or len(have) != n:
                                problems.append(bad or f"the comparison holds {len(have)} of {n}")
                        else:
                            files = [p for p in (root / "out").rglob("*.jsonl") if "journal" not in p.name
                                     and ".cache" not in str(p)]
                            rows = {json.loads(ln)["test_id"] for ln in max(files, key=lambda p: p.stat().st_mtime)
                                    .read_text().splitlines()} if files else set()
                            if len(rows) != n:
                                problems.append(f"the results hold {len(rows)} of {n} tests")
                        tally.note(f"{name} ({kills} kills, {len(asked)} calls)", "; ".join(problems) or None)
                    finally:
                        shutil.rmtree(root, ignore_errors=True)


def _fourth_round_protocol_cases(ids: Iterator[int]) -> Iterator[tuple[str, Callable[[RawLsp, str], list[Any]]]]:
    """Ids reused while in flight, replies the client sends unasked, cancels before their request,
    versions out of order, frames cut or doubled, headers that lie, a batch of 10,000."""
    hover = "textDocument/hover"

    def same_id(methods: list[str]) -> Callable[[RawLsp, str], list[Any]]:
        def act(s: RawLsp, u: str) -> list[Any]:
            for m in methods:
                s.request("dup", m, _at(u, 3, 4))
            return ["dup"]
        return act
    yield "4/duplicate-id-hovers", same_id([hover, hover])
    yield "4/duplicate-id-mixed", same_id([hover, "textDocument/completion", "textDocument/foldingRange", hover])
    yield "4/client-result-unasked", lambda s, u: (s.send({"jsonrpc": "2.0", "id": 424242, "result": {"x": 1}}), [])[1]
    yield "4/client-error-unasked", lambda s, u: (s.send({"jsonrpc": "2.0", "id": "zz", "error": {
        "code": -1, "message": HOSTILE_TEXT}}), [])[1]
    yield "4/result-and-method", lambda s, u: (s.send({"jsonrpc": "2.0", "id": "rm", "method": hover,
                                                       "params": _at(u, 0, 0), "result": 1}), ["rm"])[1]

    def cancel_first(s: RawLsp, u: str) -> list[Any]:
        s.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "later"}})
        s.request("later", hover, _at(u, 3, 4))
        return ["later"]
    yield "4/cancel-before-request", cancel_first

    def cancel_twice_reuse(s: RawLsp, u: str) -> list[Any]:
        s.request("re", "textDocument/completion", _at(u, 4, 2))
        s.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "re"}})
        s.request("re", hover, _at(u, 3, 4))  # the id reused at once
        return ["re"]
    yield "4/cancel-then-reuse-id", cancel_twice_reuse
    for id_ in ("", 0, -2**63, 2**63, "\x00", HOSTILE_TEXT):
        yield f"4/id-{json.dumps(id_)[:10]}", lambda s, u, i=id_: (s.request(i, hover, _at(u, 0, 0)), [i])[1]
    yield "4/jsonrpc-1.0", lambda s, u: (s.send({"jsonrpc": "1.0", "id": "v1", "method": hover,
                                                 "params": _at(u, 0, 0)}), [])[1]
    yield "4/method-null", lambda s, u: (s.send({"jsonrpc": "2.0", "id": "mn", "method": None}), [])[1]
    yield "4/method-huge", lambda s, u: (s.send({"jsonrpc": "2.0", "id": "mh", "method": "x" * 1_000_000}), ["mh"])[1]

    def versions(order: list[int]) -> Callable[[RawLsp, str], list[Any]]:
        def act(s: RawLsp, u: str) -> list[Any]:
            for v in order:
                s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": u, "version": v}, "contentChanges": [{"text": GOOD + f"# v{v}\n"}]}})
            i = next(ids)
            s.request(i, hover, _at(u, 3, 4))
            return [i]
        return act
    yield "4/versions-backwards", versions([9, 5, 3, 2])
    yield "4/versions-same", versions([4, 4, 4])
    yield "4/versions-huge", versions([2**31 - 1, 2**31, 2**53])

    def close_then_hover(s: RawLsp, u: str) -> list[Any]:
        s.send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": u}}})
        i = next(ids)
        s.request(i, hover, _at(u, 3, 4))
        s.request(i + 10**6, "textDocument/completion", _at(u, 4, 2))
        _open(s, u, GOOD)
        return [i, i + 10**6]
    yield "4/closed-document-requests", close_then_hover

    def frames(data: bytes) -> Callable[[RawLsp, str], list[Any]]:
        return lambda s, u: (s.send_raw(data), [])[1]
    body = json.dumps({"jsonrpc": "2.0", "id": "fr", "method": hover, "params": _at("file:///x.yml", 0, 0)}).encode()
    yield "4/length-negative", frames(b"Content-Length: -5\r\n\r\n" + body)
    yield "4/length-not-a-number", frames(b"Content-Length: abc\r\n\r\n" + body)
    yield "4/length-two-headers", frames(b"Content-Length: 3\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    yield "4/length-short", frames(b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body)
    yield "4/charset-utf16", frames(b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-16"
                                    b"\r\n\r\n" % len(body) + body)
    yield "4/lf-only-headers", frames(b"Content-Length: %d\n\n" % len(body) + body)

    def dripped(s: RawLsp, u: str) -> list[Any]:
        msg = json.dumps({"jsonrpc": "2.0", "id": "drip", "method": hover, "params": _at(u, 3, 4)}).encode()
        frame = b"Content-Length: %d\r\n\r\n" % len(msg) + msg
        for k in range(0, len(frame), 7):
            s.send_raw(frame[k:k + 7])
            time.sleep(0.002)
        return ["drip"]
    yield "4/frame-dripped", dripped

    def batch(n: int) -> Callable[[RawLsp, str], list[Any]]:
        def act(s: RawLsp, u: str) -> list[Any]:
            s.send([{"jsonrpc": "2.0", "id": f"b{k}", "method": hover, "params": _at(u, 0, 0)} for k in range(n)])
            return []
        return act
    yield "4/bulk-batch-10000", batch(10_000)

    def bulk_dupes(s: RawLsp, u: str) -> list[Any]:
        for _ in range(2_000):
            s.request("same", hover, _at(u, 3, 4))
        return ["same"]
    yield "4/bulk-2000-same-id", bulk_dupes

    def bulk_cancel_all(s: RawLsp, u: str) -> list[Any]:
        for k in range(1_000):
            s.request(f"c{k}", "textDocument/completion", _at(u, 4, 2))
        for k in reversed(range(1_000)):
            s.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": f"c{k}"}})
        return [f"c{k}" for k in range(0, 1_000, 50)]
    yield "4/bulk-1000-cancelled-out-of-order", bulk_cancel_all

    def shutdown_twice(s: RawLsp, u: str) -> list[Any]:
        s.request("sd1", "shutdown", None)
        s.request("sd2", "shutdown", None)
        return ["sd1", "sd2"]
    yield "4/shutdown-twice", shutdown_twice


def attack_protocol4(tally: Tally) -> None:
    """The fourth round's protocol probes through the protocol area's harness."""
    print("language server protocol (fourth round)", flush=True)
    global protocol_cases
    original = protocol_cases
    protocol_cases = lambda root: _fourth_round_protocol_cases(iter(range(10**6)))  # noqa: E731
    try:
        attack_protocol(tally, lifecycle=False)
    finally:
        protocol_cases = original


# ------------------------------------------------------------------------------------------------
# the fifth round: command-line values, standard streams, the environment


FIFTH_BLUEPRINT = "title: t\nmodels: [echo]\n---\n- id: p1\n  prompt: hello\n  should: [hello]\n- id: p2\n  prompt: bye\n"


def _fifth_args() -> Iterator[tuple[str, list[str]]]:
    """Option values no earlier round gave: NaN, infinity, 1e999, zero, negative, huge, empty names."""
    for opt in ("--timeout", "--max-wait", "--max-response-mb", "--batch-poll", "--batch-max-mb", "--fail-under",
                "--max-cost"):
        for v in ("nan", "inf", "-inf", "1e999", "0", "-1", "1e308", "0x10", " 1", "1_0"):
            yield f"args/{opt[2:]}={v}", [opt, v]
    for opt in ("-j", "--retries", "--rate-limit-retries", "--batch-size"):
        for v in ("0", "-1", "1000000000", "99999999999999999999999", "1e3", ""):
            yield f"args/{opt.lstrip('-')}={v}", [opt, v]
    for v in ("=3", "openai=", "openai=0", "openai=1e3", "=", "openai=99999999999999999999", "a=1=2", "\u202e=2"):
        yield f"args/provider-concurrency={v!r}", ["--provider-concurrency", v]
    for v in ("0/0", "1/0", "-1/2", "1/1e9", "1/99999999999999999999", "2/1", "1/", "/1", "١/٢", "1/2/3"):
        yield f"args/shard={v}", ["--shard", v]
    for v in ("", "[", "**", "\x1b]0;x\x07", "a" * 100_000, "-x"):
        yield f"args/prompt={v[:12]!r}", ["--prompt", v]
    for v in (",", "llm-coverage,,embedding", "ALL", "none,all"):
        yield f"args/eval-method={v}", ["--eval-method", v]
    for v in ("/dev/null", "/nonexistent", "/etc", "/dev/zero"):
        yield f"args/prices={v}", ["--prices", v]
        yield f"args/models-dir={v}", ["--models-dir", v]
    yield "args/model-empty", ["-m", ""]
    yield "args/model-colon", ["-m", ":"]
    yield "args/model-huge", ["-m", "openai:" + "x" * 100_000]
    yield "args/model-replay-dev-zero", ["-m", "replay:/dev/zero"]
    yield "args/model-replay-folder", ["-m", "replay:/etc"]
    yield "args/judge-empty", ["--judge", ""]
    yield "args/output-dev-null", ["-o", "/dev/null"]
    yield "args/output-proc", ["-o", "/proc/self"]
    yield "args/label-huge", ["--label", "l" * 10_000]


def attack_args(tally: Tally) -> None:
    """`evalspec run` (echo model) with hostile option values. Broken: a traceback, a hang (60 s), or a
    value that cannot be honoured (NaN, infinity where it becomes an int or a wait) accepted: exit 0."""
    print("command-line values (fifth round)", flush=True)
    must_refuse = re.compile(r"^args/(timeout|max-response-mb|batch-poll|batch-max-mb)=(nan|inf|1e999)$"
                             r"|^args/provider-concurrency='='|^args/provider-concurrency='=3'")
    root = Path(tempfile.mkdtemp(prefix="attack-args-"))
    try:
        (root / "b.yml").write_text(FIFTH_BLUEPRINT)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "LANG": "C.UTF-8",
               "NO_COLOR": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        for name, extra in _fifth_args():
            if ONLY and ONLY not in name:
                continue
            ran = run_cli(["run", "b.yml", "-o", "out", "--no-report", *extra], env=env, cwd=root, timeout=60)
            problem = crashed(ran)
            if problem is None and must_refuse.search(name) and ran.code == 0:
                problem = "accepted"
            tally.note(f"{name} (exit {ran.code})", problem)
            shutil.rmtree(root / "out", ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def attack_streams(tally: Tally) -> None:
    """`check` and `run` with standard output a full device, closed, a pipe closed early, standard error
    closed, standard input closed; and odd terminal settings. Broken: a traceback ("Exception ignored"
    included), a hang, or a run that wrote no results."""
    print("standard streams (fifth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-streams-"))
    try:
        (root / "b.yml").write_text(FIFTH_BLUEPRINT)
        many = root / "many"
        many.mkdir()
        for i in range(300):
            (many / f"b{i}.weval.yml").write_text("title: t\nmodels: [nope:x]\nfoo: 1\n---\n- prompt: hi\n")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "LANG": "C.UTF-8",
               "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        commands = {"check": ["check", "many"], "check-json": ["check", "many", "--format", "json"],
                    "run": ["run", "b.yml", "-m", "echo", "-o", "out"],
                    "run-json": ["run", "b.yml", "-m", "echo", "-o", "out", "--json"]}

        def closing(*fds: int) -> Callable[[], None]:
            return lambda: [os.close(fd) for fd in fds] and None  # type: ignore[func-returns-value]
        setups: dict[str, dict[str, Any]] = {
            "stdout-dev-full": {"stdout": "/dev/full"},
            "stdout-closed": {"preexec": closing(1)},
            "stderr-closed": {"preexec": closing(2)},
            "stdin-closed": {"preexec": closing(0)},
            "all-closed": {"preexec": closing(0, 1, 2)},
            "stdout-pipe-closed-early": {"head": True},
            "columns-0": {"env": {"COLUMNS": "0", "LINES": "0"}},
            "columns-huge": {"env": {"COLUMNS": "1000000000"}},
            "columns-text": {"env": {"COLUMNS": "abc"}},
            "term-escape": {"env": {"TERM": "\x1b]0;x\x07", "FORCE_COLOR": "1"}},
            "color-forced-dumb": {"env": {"TERM": "dumb", "FORCE_COLOR": "3", "CLICOLOR_FORCE": "1"}},
            "lang-c": {"env": {"LANG": "C", "LC_ALL": "C"}},
            "lang-bogus": {"env": {"LANG": "xx_YY.BOGUS", "LC_ALL": "xx_YY.BOGUS"}},
            "ioencoding-ascii": {"env": {"PYTHONIOENCODING": "ascii"}},
            "ioencoding-strict-latin1": {"env": {"PYTHONIOENCODING": "latin-1:strict"}},
            "cwd-deleted": {"cwd-deleted": True},
            "home-unset": {"env": {"HOME": None}},
            "home-a-file": {"env": {"HOME": "/etc/passwd"}},
            "tmpdir-missing": {"env": {"TMPDIR": "/nonexistent/tmp"}},
            "umask-777": {"umask": 0o777},
        }
        for sname, setup in setups.items():
            for cname, args in commands.items():
                name = f"streams/{sname}/{cname}"
                if ONLY and ONLY not in name:
                    continue
                shutil.rmtree(root / "out", ignore_errors=True)
                e = dict(env)
                for k, v in setup.get("env", {}).items():
                    if v is None:
                        e.pop(k, None)
                    else:
                        e[k] = v
                cwd = root
                argv = [*EVALSPEC, *args]
                if setup.get("cwd-deleted"):
                    gone = root / "gone"
                    gone.mkdir(exist_ok=True)
                    cwd = gone
                    argv = [*EVALSPEC, *[str(root / a) if a in ("many", "b.yml", "out") else a for a in args]]
                preexec = setup.get("preexec")
                if setup.get("umask") is not None:
                    mask = setup["umask"]
                    preexec = lambda m=mask: (os.umask(m), None)[1]  # noqa: E731
                if setup.get("cwd-deleted"):
                    preexec = lambda g=cwd: (os.rmdir(g), None)[1]  # noqa: E731  # after the chdir
                out_to: Any = subprocess.PIPE
                if setup.get("stdout"):
                    out_to = open(setup["stdout"], "w")  # noqa: SIM115
                try:
                    proc = subprocess.Popen(argv, env=e, cwd=cwd, stdout=out_to, stderr=subprocess.PIPE,
                                            stdin=subprocess.DEVNULL, preexec_fn=preexec, start_new_session=True)
                    if setup.get("head"):
                        assert proc.stdout is not None
                        proc.stdout.read(10)
                        proc.stdout.close()
                    try:
                        err_b = proc.communicate(timeout=60)[1]
                        code: int | None = proc.returncode
                    except subprocess.TimeoutExpired:
                        os.killpg(proc.pid, signal.SIGKILL)
                        err_b = proc.communicate()[1]
                        code = None
                finally:
                    if out_to is not subprocess.PIPE:
                        out_to.close()
                err = (err_b or b"").decode("utf-8", "replace")
                problem = None
                if code is None:
                    problem = "hung"
                elif "Traceback (most recent call last)" in err or "Exception ignored" in err:
                    problem = "traceback: " + err.strip().splitlines()[-1][:200]
                elif cname.startswith("run") and code in (0, 2) and sname not in ("umask-777", "cwd-deleted") \
                        and not setup.get("head") and sname != "stdout-dev-full" \
                        and not list((root / "out").rglob("*_comparison.json")):
                    problem = f"exit {code} and no results"
                tally.note(f"{name} (exit {code})", problem)
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(root)], check=False)
        shutil.rmtree(root, ignore_errors=True)


def attack_environment(tally: Tally) -> None:
    """A one-prompt OpenAI run against the fake provider with hostile environment values: keys and base
    URLs that are not UTF-8, hold control characters, credentials, a query holding the key, a port out of
    range, an unclosed IPv6 bracket, 100 KB; proxies that do not parse; interpolated variables that are
    not UTF-8, huge or themselves templates. Broken: a traceback, a hang, the key in anything written or
    printed (the user name/password of a URL included)."""
    print("environment values (fifth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-env-"))
    try:
        (root / "e.yml").write_text("title: t\nmodels: [openai:gpt-4o-mini]\n---\n- id: p1\n"
                                    "  prompt: 'hello ${{ V }}'\n  should: [hello]\n")
        with FakeProvider() as fake:
            base = fake.url("/v1")
            host = base.split("//")[1].split("/")[0]
            cases: dict[str, dict[str, str | None]] = {
                "key-not-utf8": {"OPENAI_API_KEY": os.fsdecode(b"sk-\xff\xfe-0123456789abcdef")},
                "key-control": {"OPENAI_API_KEY": KEY + "\x01\x7f"},
                "key-non-ascii": {"OPENAI_API_KEY": KEY + "\u00e9\u20ac"},
                "key-100k": {"OPENAI_API_KEY": "sk-" + "a" * 100_000},
                "key-spaces": {"OPENAI_API_KEY": "  " + KEY + "  "},
                "var-not-utf8": {"V": os.fsdecode(b"\xff\xfe\x80")},
                "var-100k": {"V": "x" * 100_000},
                "var-a-template": {"V": "${{ OPENAI_API_KEY }}"},
                "var-bidi": {"V": "\u202e\u061c\u2066"},
                "base-userinfo-key": {"OPENAI_BASE_URL": f"http://user:{KEY}@{host}/v1"},
                "base-userinfo-user-only": {"OPENAI_BASE_URL": f"http://{KEY}@{host}/v1"},
                "base-query-key": {"OPENAI_BASE_URL": base + f"?key={KEY}"},
                "base-fragment": {"OPENAI_BASE_URL": base + "#frag"},
                "base-file": {"OPENAI_BASE_URL": "file:///etc/passwd"},
                "base-unix": {"OPENAI_BASE_URL": "http+unix://%2Ftmp%2Fx.sock/v1"},
                "base-ipv6-unclosed": {"OPENAI_BASE_URL": "http://[::1"},
                "base-port-huge": {"OPENAI_BASE_URL": "http://127.0.0.1:999999/v1"},
                "base-port-text": {"OPENAI_BASE_URL": "http://127.0.0.1:abc/v1"},
                "base-empty": {"OPENAI_BASE_URL": ""},
                "base-spaces": {"OPENAI_BASE_URL": " " + base + " "},
                "base-crlf": {"OPENAI_BASE_URL": base + "\r\nX-Injected: 1"},
                "base-nul-like": {"OPENAI_BASE_URL": base + "\x01"},
                "base-not-utf8": {"OPENAI_BASE_URL": os.fsdecode(b"http://127.0.0.1/\xff")},
                "base-idn": {"OPENAI_BASE_URL": "http://ex\u00e4mple.invalid/v1"},
                "base-100k": {"OPENAI_BASE_URL": base + "/" + "a" * 100_000},
                "base-bidi": {"OPENAI_BASE_URL": base + "/\u202e"},
                "proxy-unclosed": {"HTTP_PROXY": "http://[::1", "http_proxy": "http://[::1"},
                "proxy-https-unclosed": {"HTTPS_PROXY": "http://[::1"},
                "proxy-all-bad-port": {"ALL_PROXY": "http://127.0.0.1:99999"},
                "proxy-socks-closed": {"HTTPS_PROXY": "socks5://127.0.0.1:1", "ALL_PROXY": "socks5://127.0.0.1:1"},
                "proxy-userinfo-key": {"HTTP_PROXY": f"http://u:{KEY}@127.0.0.1:1"},
                "no-proxy-huge": {"NO_PROXY": "*" * 10_000},
                "ssl-cert-file-missing": {"SSL_CERT_FILE": "/nonexistent.pem", "SSL_CERT_DIR": "/nonexistent"},
                "ssl-cert-file-dev-zero": {"SSL_CERT_FILE": "/dev/zero"},
            }
            for cname, extra in cases.items():
                name = f"environment/{cname}"
                if ONLY and ONLY not in name:
                    continue
                env = base_env(fake, root)
                env["V"] = "v"
                for k, v in extra.items():
                    if v is None:
                        env.pop(k, None)
                    else:
                        env[k] = v
                fake.reset()
                shutil.rmtree(root / "out", ignore_errors=True)
                ran = run_cli(["run", "e.yml", "-o", "out", "--retries", "0", "--timeout", "5"], env=env, cwd=root,
                              timeout=90)
                problem = crashed(ran)
                if problem is None:
                    leak = _leaks(ran.out + ran.err + everything_under(root / "out"), KEY)
                    if leak:
                        problem = f"the key in the output: {leak}"
                tally.note(f"{name} (exit {ran.code}, {len(fake.requests)} calls)", problem)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _journal_mutations(lines: list[str]) -> Iterator[tuple[str, list[str] | bytes]]:
    """A finished run's journal rewritten as someone (a cloned repository, a crash, an editor) might leave
    it: each record kind with its fields of the wrong type, out of range, for items that do not exist,
    and the file's bytes damaged."""
    head, rest = json.loads(lines[0]), [json.loads(x) for x in lines[1:]]

    def with_head(**changes: Any) -> list[str]:
        h = dict(head)
        for k, v in changes.items():
            if v is _DROP:
                h.pop(k, None)
            else:
                h[k] = v
        return [json.dumps(h), *lines[1:]]

    for field_ in ("v", "kind", "file", "config_id", "run_label", "started", "systems", "path", "select", "fp"):
        yield f"header/{field_}-dropped", with_head(**{field_: _DROP})
        for bad in (None, 7, "x", [], {}, "\x00\u202e", "a" * 100_000):
            yield f"header/{field_}={json.dumps(bad)[:12]}", with_head(**{field_: bad})
    yield "header/v=999", with_head(v=999)
    yield "header/kind=agentv", with_head(kind="agentv")
    yield "header/path=/etc/passwd", with_head(path="/etc/passwd")
    yield "header/twice", [lines[0], *lines]
    yield "header/last", [*lines[1:], lines[0]]
    yield "header/only", [lines[0]]
    kinds = sorted({r.get("t") for r in rest if isinstance(r, dict)})
    for kind in kinds:
        sample = next(r for r in rest if r.get("t") == kind)
        for key in sample:
            if key == "t":
                continue
            for bad in (None, -1, 2**64, 1e308, "x", [], {}, ["zz", "nobody"], True, "a" * 1_000_000):
                rec = dict(sample)
                rec[key] = bad
                yield f"{kind}/{key}={json.dumps(bad)[:12]}", [*lines, json.dumps(rec)]
            rec = dict(sample)
            del rec[key]
            yield f"{kind}/{key}-dropped", [*lines, json.dumps(rec)]
        yield f"{kind}/repeated-1000", [*lines, *[json.dumps(sample)] * 1000]
    yield "record/unknown-type", [*lines, json.dumps({"t": "zz", "c": ["p1", "x"]})]
    yield "record/not-an-object", [*lines, "[1, 2, 3]", '"text"', "42", "null"]
    yield "record/deep", [*lines, "[" * 100_000 + "]" * 100_000]
    yield "record/score-above-one", [*lines, *[json.dumps({**r, "s": 5.0}) for r in rest if r.get("t") == "score"]]
    yield "record/score-negative", [*lines, *[json.dumps({**r, "s": -3}) for r in rest if r.get("t") == "score"]]
    raw = "\n".join(lines).encode() + b"\n"
    yield "bytes/invalid-utf8-mid", raw[: len(raw) // 2] + b"\xff\xfe\xc3" + raw[len(raw) // 2:]
    yield "bytes/nul-mid", raw[: len(raw) // 2] + b"\x00" * 100 + raw[len(raw) // 2:]
    yield "bytes/cut-mid-line-then-more", raw[: len(raw) // 2] + b"\n" + raw[len(raw) // 2:]
    yield "bytes/crlf", raw.replace(b"\n", b"\r\n")
    yield "bytes/bom", b"\xef\xbb\xbf" + raw
    yield "bytes/blank-lines", raw.replace(b"\n", b"\n\n\n")
    yield "bytes/empty", b""
    yield "bytes/whitespace", b"   \n\t\n"
    yield "bytes/only-cut-header", raw[:20]
    yield "bytes/utf16", b"\xff\xfe" + "\n".join(lines).encode("utf-16-le")
    yield "bytes/huge-line", raw + b'{"t": "gen", "text": "' + b"a" * (64 << 20) + b'"}\n'


_DROP = object()


def attack_journal(tally: Tally) -> None:
    """A finished Weval run (3 prompts, the echo model) whose journal is then damaged (see
    _journal_mutations), then `--resume` and `--retry-errors`. Broken: a traceback, a hang (60 s), an exit
    other than 0-3, results that do not parse, a score outside 0-1 or not a number in the comparison."""
    print("damaged journals (fifth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-journal-"))
    try:
        (root / "b.yml").write_text("title: t\nmodels: [echo]\n---\n" + "".join(
            f"- id: p{i}\n  prompt: hello {i}\n  should: [{{$contains: hello}}, {{$js: 'true'}}]\n" for i in range(3)))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "LANG": "C.UTF-8",
               "NO_COLOR": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        first = run_cli(["run", "b.yml", "-o", "clean", "--no-report"], env=env, cwd=root)
        assert first.code == 0, first.err
        [journal] = (root / "clean").rglob("*.journal.jsonl")
        lines = journal.read_text().splitlines()
        for case, content in _journal_mutations(lines):
            for mode in ("--resume", "--retry-errors") if case.startswith(("bytes/", "record/")) else ("--resume",):
                name = f"journal/{case}/{mode[2:]}"
                if ONLY and ONLY not in name:
                    continue
                out = root / "out"
                shutil.rmtree(out, ignore_errors=True)
                shutil.copytree(root / "clean", out)
                [target] = out.rglob("*.journal.jsonl")
                for old in out.rglob("*_comparison.json"):
                    old.unlink()
                if isinstance(content, bytes):
                    target.write_bytes(content)
                else:
                    target.write_text("\n".join(content) + "\n")
                ran = run_cli(["run", "b.yml", "-o", "out", "--no-report", mode], env=env, cwd=root, timeout=60)
                problem = crashed(ran)
                if problem is None and ran.code not in (0, 1, 2, 3):
                    problem = f"exit {ran.code}: {ran.err.strip().splitlines()[-1:]}"
                if problem is None and ran.code in (0, 1):
                    problem = _valid_results(out, journals=False)
                    comps = list(out.rglob("*_comparison.json"))
                    if problem is None and comps:
                        data = json.loads(comps[0].read_text())
                        for cov in (data.get("evaluationResults") or {}).get("llmCoverageScores", {}).values():
                            for r in cov.values():
                                s = r.get("avgCoverageExtent") if isinstance(r, dict) else None
                                if s is not None and not (isinstance(s, int | float) and 0 <= s <= 1):
                                    problem = f"a score of {s!r} in the comparison"
                tally.note(f"{name} (exit {ran.code})", problem)
    finally:
        shutil.rmtree(root, ignore_errors=True)


SUITE_REFS = """name: refs
description: d
tests:
  - id: t1
    criteria: c
    input:
      - role: user
        content:
          - {type: file, value: ./fifo.txt}
          - {type: file, value: /dev/zero}
          - {type: file, value: ./folder}
          - {type: text, value: hi}
  - file://fifo.jsonl
  - file://zero-link.yaml
"""


def _fifth_round_protocol_cases(root: Path, ids: Iterator[int]) -> Iterator[tuple[str, Callable[[RawLsp, str], list[Any]]]]:
    """Documents opened twice or changed before they are opened, every feature on references to a FIFO,
    /dev/zero and a folder, hostile run settings then a Run, progress tokens that are objects or huge,
    trace values, unsupported workspace notifications."""
    hover = "textDocument/hover"
    refs_uri = (root / "refs.eval.yaml").as_uri()

    def then_hover(act: Callable[[RawLsp, str], None]) -> Callable[[RawLsp, str], list[Any]]:
        def run(s: RawLsp, u: str) -> list[Any]:
            act(s, u)
            i = next(ids)
            s.request(i, hover, _at(u, 3, 4))
            return [i]
        return run
    yield "5/open-twice", then_hover(lambda s, u: _open(s, u, GOOD + "# again\n", 7))
    yield "5/open-twice-older-version", then_hover(lambda s, u: _open(s, u, "title: [\n", -3))
    yield "5/open-twice-other-language", then_hover(lambda s, u: s.send({
        "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": u, "languageId": "python", "version": 9, "text": "import os\n"}}}))
    yield "5/change-before-open", then_hover(lambda s, u: s.send({
        "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": u + ".other.yml", "version": 2}, "contentChanges": [
                {"range": {"start": {"line": 5, "character": 3}, "end": {"line": 9, "character": 0}}, "text": "x"}]}}))
    yield "5/close-never-opened", then_hover(lambda s, u: s.send({
        "jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": u + ".nope.yml"}}}))
    yield "5/close-twice-then-change", then_hover(lambda s, u: [s.send({
        "jsonrpc": "2.0", "method": m, "params": p}) for m, p in [
            ("textDocument/didClose", {"textDocument": {"uri": u}}),
            ("textDocument/didClose", {"textDocument": {"uri": u}}),
            ("textDocument/didChange", {"textDocument": {"uri": u, "version": 40}, "contentChanges": [{"text": GOOD}]}),
            ("textDocument/didOpen", {"textDocument": {"uri": u, "languageId": "yaml", "version": 41, "text": GOOD}})]])
    yield "5/save-unknown-with-text", then_hover(lambda s, u: s.send({
        "jsonrpc": "2.0", "method": "textDocument/didSave", "params": {
            "textDocument": {"uri": (root / "fifo.txt").as_uri()}, "text": "x" * 1_000_000}}))
    yield "5/overlapping-ranges", then_hover(lambda s, u: s.send({
        "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": u, "version": 50}, "contentChanges": [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 2}}, "text": "a\n"},
                {"range": {"start": {"line": 2, "character": 1}, "end": {"line": 0, "character": 0}}, "text": "b"},
                {"range": {"start": {"line": 0, "character": 2**31}, "end": {"line": 2**31, "character": 0}},
                 "text": "c"},
                {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}},
                 "rangeLength": -5, "text": "d"}]}}))
    def ranges(n: int, down: bool) -> Callable[[RawLsp, str], None]:
        # n changes in one didChange: at the top, or one per line going down a file of n lines (a
        # multi-cursor edit on every line). 50,000 make a 6 MB message: timed as a flood (bulk-).
        def act(s: RawLsp, u: str) -> None:
            body = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n" + "# c\n" * n
            s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": u, "version": 59}, "contentChanges": [{"text": body}]}})
            at = [(5 + k, 3) if down else (0, 0) for k in range(n)]
            s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": u, "version": 60}, "contentChanges": [
                    {"range": {"start": {"line": a, "character": b}, "end": {"line": a, "character": b}},
                     "text": "#" if down else "#\n"} for a, b in at]}})
        return act
    yield "5/change-5000-ranges-at-the-top", then_hover(ranges(5_000, False))
    yield "5/change-5000-ranges-down-a-file", then_hover(ranges(5_000, True))
    yield "5/bulk-change-50000-ranges-at-the-top", then_hover(ranges(50_000, False))
    yield "5/bulk-change-50000-ranges-down-a-file", then_hover(ranges(50_000, True))

    def on_refs(method: str, line: int, char: int, extra: dict[str, Any] | None = None
                ) -> Callable[[RawLsp, str], list[Any]]:
        def act(s: RawLsp, u: str) -> list[Any]:
            _open(s, refs_uri, SUITE_REFS)
            i = next(ids)
            params: dict[str, Any] = {"textDocument": {"uri": refs_uri}}
            if method not in ("textDocument/documentLink", "textDocument/codeLens", "textDocument/documentSymbol",
                              "textDocument/foldingRange", "textDocument/diagnostic"):
                params["position"] = {"line": line, "character": char}
            if method == "textDocument/codeAction":
                params = {"textDocument": {"uri": refs_uri}, "range": {"start": {"line": 0, "character": 0},
                          "end": {"line": 14, "character": 0}}, "context": {"diagnostics": []}}
            params.update(extra or {})
            s.request(i, method, params)
            j = next(ids)
            s.request(j, hover, _at(refs_uri, 9, 30))
            return [i, j]
        return act
    for line, char, what in ((8, 32, "fifo"), (9, 32, "dev-zero"), (10, 32, "folder"), (12, 12, "fifo-tests"),
                             (13, 12, "link-to-dev-zero")):
        for method in (hover, "textDocument/definition", "textDocument/completion"):
            yield f"5/{method.split('/')[1]}-on-{what}", on_refs(method, line, char)
    for method in ("textDocument/documentLink", "textDocument/codeLens", "textDocument/documentSymbol",
                   "textDocument/foldingRange", "textDocument/diagnostic", "textDocument/codeAction"):
        yield f"5/{method.split('/')[1]}-of-references-to-devices", on_refs(method, 0, 0)
    for token_name, token in (("object", {"a": [1, {"b": None}]}), ("huge", "t" * 2_000_000), ("float", 1.5),
                              ("deep", json.loads("[" * 400 + "]" * 400)), ("null", None)):
        for key in ("workDoneToken", "partialResultToken"):
            yield f"5/{key}-{token_name}", on_refs("textDocument/documentSymbol", 0, 0, {key: token})
    for value in ("verbose", "messages", 5, None, "x" * 100_000):
        yield f"5/setTrace-{json.dumps(value)[:10]}", then_hover(lambda s, u, v=value: s.send({
            "jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": v}}))
    yield "5/didChangeWorkspaceFolders", then_hover(lambda s, u: s.send({
        "jsonrpc": "2.0", "method": "workspace/didChangeWorkspaceFolders", "params": {"event": {
            "added": [{"uri": "file:///", "name": "root"}, {"uri": "file:///dev/zero", "name": "z"}] * 500,
            "removed": [{"uri": "http://x", "name": 5}]}}}))
    yield "5/window-workDoneProgress-cancel-unknown", then_hover(lambda s, u: s.send({
        "jsonrpc": "2.0", "method": "window/workDoneProgress/cancel", "params": {"token": {"x": 1}}}))

    def settings_then_run(settings: Any, uri: str | None = None) -> Callable[[RawLsp, str], list[Any]]:
        def act(s: RawLsp, u: str) -> list[Any]:
            s.send({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": settings}})
            target = uri or u
            if uri:
                _open(s, uri, SUITE_REFS)
            i = next(ids)
            s.request(i, "workspace/executeCommand", {"command": "evalspec.run", "arguments": [target]})
            time.sleep(1.0)  # the run under way; the cancel's answer is not timed (sent a second later)
            s.request(next(ids), "workspace/executeCommand", {"command": "evalspec.cancelRun", "arguments": [target]})
            return [i]
        return act
    for label, run in [("output-dev-null", {"output": "/dev/null", "models": ["echo"]}),
                       ("output-fifo", {"output": str(root / "fifo.txt"), "models": ["echo"]}),
                       ("output-proc", {"output": "/proc/self", "models": ["echo"]}),
                       ("output-up", {"output": "../../../../../tmp/attack-lsp5-escape", "models": ["echo"]}),
                       ("models-control", {"models": ["echo\x1b]0;x\x07", "\u202e"]}),
                       ("eval-methods-junk", {"evalMethods": "zz,,\x00", "models": ["echo"]}),
                       ("batch-all-no-key", {"batchModels": ["*"], "models": ["openai:gpt-4o-mini"]}),
                       ("timeout-tiny", {"timeoutSeconds": 1e-300, "models": ["echo"]}),
                       ("settings-deep", json.loads("{\"a\":" * 300 + "1" + "}" * 300)),
                       ("settings-list", [1, 2]),
                       ("settings-huge", {"evalspec": {"run": {"models": ["echo"] * 100_000}}})]:
        yield f"5/settings-{label}-then-run", settings_then_run({"evalspec": {"run": run}} if "models" in run
                                                                  or "evalMethods" in run else run)
    yield "5/run-suite-with-device-references", settings_then_run({"evalspec": {"run": {"models": ["echo"]}}},
                                                                  refs_uri)


def attack_lsp5(tally: Tally) -> None:
    """The fifth round's protocol probes through the protocol area's harness, then initialize requests
    no client had sent: each must be answered, and a hover after it within the bound."""
    print("language server protocol (fifth round)", flush=True)
    global protocol_cases
    original = protocol_cases

    def cases(root: Path) -> Iterator[tuple[str, Callable[[RawLsp, str], list[Any]]]]:
        os.mkfifo(root / "fifo.txt")
        os.mkfifo(root / "fifo.jsonl")
        (root / "folder").mkdir()
        os.symlink("/dev/zero", root / "zero-link.yaml")
        (root / "refs.eval.yaml").write_text(SUITE_REFS)
        return _fifth_round_protocol_cases(root, iter(range(10**6)))
    protocol_cases = cases
    try:
        attack_protocol(tally, lifecycle=False)
    finally:
        protocol_cases = original
    root = Path(tempfile.mkdtemp(prefix="attack-lsp5-"))
    try:
        (root / "b.weval.yml").write_text(GOOD)
        uri = (root / "b.weval.yml").as_uri()
        base = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        variants: list[tuple[str, Any]] = [
            ("root-http", {**base, "rootUri": "http://127.0.0.1:1/"}),
            ("root-dev-zero", {**base, "rootUri": "file:///dev/zero"}),
            ("root-slash", {**base, "rootUri": "file:///", "rootPath": "/"}),
            ("root-unc", {**base, "rootUri": "file://server/share/x"}),
            ("root-int", {**base, "rootUri": 5}),
            ("root-missing", {"processId": None, "capabilities": {}}),
            ("folders-10000", {**base, "workspaceFolders": [{"uri": f"file:///tmp/w{i}", "name": str(i)}
                                                           for i in range(10_000)]}),
            ("folders-junk", {**base, "workspaceFolders": [{"uri": None}, 5, "x", {"uri": "file:///dev/zero", "name": ""}]}),
            ("capabilities-null", {**base, "capabilities": None}),
            ("capabilities-wrong-types", {**base, "capabilities": {"textDocument": 5, "workspace": "x", "window": [],
                                                                   "general": {"positionEncodings": 7}}}),
            ("encoding-utf8-only", {**base, "capabilities": {"general": {"positionEncodings": ["utf-8"]}}}),
            ("encoding-utf32-only", {**base, "capabilities": {"general": {"positionEncodings": ["utf-32"]}}}),
            ("encoding-junk", {**base, "capabilities": {"general": {"positionEncodings": ["ebcdic", "", None]}}}),
            ("options-list", {**base, "initializationOptions": [1, 2]}),
            ("options-deep", {**base, "initializationOptions": json.loads("{\"a\":" * 400 + "1" + "}" * 400)}),
            ("options-nan-like", {**base, "initializationOptions": {"debounceMs": 1e308, "requestBudgetMs": -1,
                                                                    "run": {"concurrency": 10**30, "maxCost": -0.0}}}),
            ("options-huge", {**base, "initializationOptions": {"x": "y" * 5_000_000}}),
            ("process-id-dead", {**base, "processId": 2**22 + 12345}),
            ("process-id-huge", {**base, "processId": 2**63}),
            ("process-id-negative", {**base, "processId": -1}),
            ("trace-junk", {**base, "trace": "loud"}),
            ("locale-hostile", {**base, "locale": "\x1b]0;x\x07" * 1000}),
            ("client-info-huge", {**base, "clientInfo": {"name": "x" * 1_000_000, "version": None}}),
            ("params-null", None),
            ("params-list", [1, 2, 3]),
        ]
        for name, params in variants:
            full = f"protocol/5/initialize-{name}"
            if ONLY and ONLY not in full:
                continue
            server = RawLsp(root)
            try:
                problems = []
                server.request("init", "initialize", params)
                reply = server.wait("init", 20)
                if reply is None:
                    problems.append("initialize not answered" + (" (server exited)" if server.closed else ""))
                server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                _open(server, uri, GOOD)
                server.request("warm", "textDocument/hover", _at(uri, 0, 0))
                server.wait("warm", 10)
                server.request("after", "textDocument/hover", _at(uri, 3, 4))
                t0 = time.monotonic()
                reply = server.wait("after", LSP_BOUND_S + 4)
                if reply is None:
                    problems.append("no hover answer" + (" (exited)" if server.closed else ""))
                elif time.monotonic() - t0 > LSP_BOUND_S:
                    problems.append(f"hover took {time.monotonic() - t0:.2f} s")
                tally.note(full, "; ".join(problems) or None)
            finally:
                server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _batch_server(mutation: str) -> Any:
    """tests/fakebatch.py's server, its batches' states, status JSON and result files rewritten by
    `mutation` as a hostile or broken batch service would send them."""
    from fakebatch import FakeBatchServer

    class Hostile(FakeBatchServer):  # type: ignore[misc]
        def _finish_openai(self, b: Any, *, expired: bool, cancelled: bool) -> None:
            super()._finish_openai(b, expired=expired, cancelled=cancelled)
            if b.output_file:
                self.files[b.output_file] = _mutated_lines(self.files[b.output_file], mutation, b)
            if mutation == "output-is-the-input-file":
                b.output_file = b.input_file
            elif mutation == "output-file-missing":
                b.output_file = "file-nonexistent"
            elif mutation == "output-file-of-another-batch" and len(self.batches) > 1:
                b.output_file = next(x.output_file for x in self.batches.values() if x is not b and x.output_file) \
                    if any(x is not b and x.output_file for x in self.batches.values()) else b.output_file
            elif mutation == "error-file-50mb":
                b.error_file = f"file-{next(self._ids)}"
                line = json.dumps({"custom_id": "zz", "error": {"code": "x", "message": "e" * 1000}}).encode() + b"\n"
                self.files[b.error_file] = line * (50_000_000 // len(line))
            elif mutation == "error-file-one-50mb-line":
                b.error_file = f"file-{next(self._ids)}"
                self.files[b.error_file] = b'{"custom_id": "zz", "error": {"message": "' + b"e" * 50_000_000 + b'"}}\n'

        def _finish_anthropic(self, b: Any, *, cancelled: bool) -> None:
            super()._finish_anthropic(b, cancelled=cancelled)
            raw = b"".join(json.dumps(r).encode() + b"\n" for r in b.results)
            b.results = [json.loads(x) for x in _mutated_lines(raw, mutation, b).splitlines()
                         if x.strip() and _parses(x)]
            if mutation.startswith("anthropic-result-type-"):
                for r in b.results:
                    r["result"]["type"] = mutation.removeprefix("anthropic-result-type-")

        def _openai_json(self, b: Any) -> dict[str, Any]:
            out = super()._openai_json(b)
            return _mutated_status(out, mutation, b, "status")

        def _anthropic_json(self, b: Any) -> dict[str, Any]:
            out = super()._anthropic_json(b)
            if mutation == "results-url-other-host":
                out["results_url"] = "http://169.254.169.254/latest/meta-data/"
            elif mutation == "results-url-file":
                out["results_url"] = "file:///etc/passwd"
            elif mutation == "results-url-unparsable":
                out["results_url"] = "http://[::1/results"
            elif mutation == "results-url-crlf":
                out["results_url"] = self.url("/x\r\nX-Injected: 1")
            return _mutated_status(out, mutation, b, "processing_status")

    return Hostile(polls_per_state=1)


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
        return True
    except (ValueError, RecursionError):
        return False


def _mutated_lines(data: bytes, mutation: str, b: Any) -> bytes:
    lines = [x for x in data.splitlines() if x.strip()]
    recs = [json.loads(x) for x in lines]
    if mutation == "unknown-custom-ids":
        for r in recs:
            r["custom_id"] = "zz-" + str(r.get("custom_id"))
    elif mutation == "duplicate-custom-ids-differing":
        extra = []
        for r in recs:
            twin = json.loads(json.dumps(r))
            body = (twin.get("response") or {}).get("body") or (twin.get("result") or {}).get("message") or {}
            for c in body.get("choices") or []:
                c["message"]["content"] = "TWIN ANSWER"
            for c in body.get("content") or []:
                c["text"] = "TWIN ANSWER"
            extra.append(twin)
        recs = recs + extra
    elif mutation == "custom-ids-of-another-run":
        for r in recs:
            cid = str(r.get("custom_id"))
            r["custom_id"] = cid[:-4] + "ffff" if len(cid) > 4 else cid + "x"
    elif mutation == "custom-id-types":
        for k, r in enumerate(recs):
            r["custom_id"] = [None, 5, [], {}, "", "\x00", "a" * 1_000_000][k % 7]
    elif mutation == "status-code-string":
        for r in recs:
            if r.get("response"):
                r["response"]["status_code"] = "200"
    elif mutation == "body-null":
        for r in recs:
            if r.get("response"):
                r["response"]["body"] = None
            if r.get("result"):
                r["result"]["message"] = None
    elif mutation == "body-deep":
        return data + b'{"custom_id": "' + (str(recs[0].get("custom_id")) if recs else "x").encode() + \
            b'", "response": {"status_code": 200, "body": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}\n"
    elif mutation == "lines-garbage":
        return b"\xff\xfe garbage\n" + data.replace(b"\n", b"\nnot json\n", 3) + b"\x00\x00\n[1,2]\n\"s\"\n"
    elif mutation == "lines-truncated":
        return data[: len(data) * 2 // 3]
    elif mutation == "lines-empty":
        return b""
    elif mutation == "lines-crlf-bom":
        return b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")
    elif mutation == "results-of-half":
        recs = recs[: len(recs) // 2]
    elif mutation == "usage-hostile":
        for r in recs:
            body = (r.get("response") or {}).get("body") or (r.get("result") or {}).get("message") or {}
            if isinstance(body, dict):
                body["usage"] = {"prompt_tokens": 10**400 if False else 1e308, "completion_tokens": -5,
                                 "input_tokens": "x", "output_tokens": [1]}
    elif mutation == "answers-hostile":  # control characters and the run's own key, echoed
        from fakebatch import KEY as batch_key
        for r in recs:
            body = (r.get("response") or {}).get("body") or (r.get("result") or {}).get("message") or {}
            for c in body.get("choices") or []:
                c["message"]["content"] = HOSTILE_TEXT + batch_key
            for c in body.get("content") or []:
                c["text"] = HOSTILE_TEXT + batch_key
    return b"".join(json.dumps(r).encode() + b"\n" for r in recs)


def _mutated_status(out: dict[str, Any], mutation: str, b: Any, state_key: str) -> dict[str, Any]:
    if mutation == "state-backwards":
        b.polls_seen = getattr(b, "polls_seen", 0) + 1
        if b.polls_seen % 3 == 2 and out[state_key] in ("completed", "ended"):
            out[state_key] = "in_progress"
    elif mutation == "state-unknown":
        if out[state_key] not in ("completed", "ended"):
            out[state_key] = "zz_state"
    elif mutation == "state-null":
        if out[state_key] not in ("completed", "ended"):
            out[state_key] = None
    elif mutation == "counts-hostile":
        out["request_counts"] = {"total": -5, "completed": 10**30, "failed": "x", "processing": 1e308,
                                 "succeeded": True}
    elif mutation == "id-path-traversal":
        out["id"] = "../../../v1/files/" + str(out["id"])
    elif mutation == "id-crlf":
        out["id"] = str(out["id"]) + "\r\nX-Injected: 1"
    elif mutation == "id-changes":
        out["id"] = str(out["id"]) + "-other"
    elif mutation == "status-huge":
        out["metadata"] = {"x": "y" * 20_000_000}
    elif mutation == "status-deep":
        out["errors"] = json.loads("[" * 500 + "]" * 500)
    return out


BATCH_MUTATIONS = [
    "none", "unknown-custom-ids", "duplicate-custom-ids-differing", "custom-ids-of-another-run", "custom-id-types",
    "status-code-string", "body-null", "body-deep", "lines-garbage", "lines-truncated", "lines-empty",
    "lines-crlf-bom", "results-of-half", "usage-hostile", "answers-hostile", "output-is-the-input-file",
    "output-file-missing", "output-file-of-another-batch", "error-file-50mb", "error-file-one-50mb-line",
    "anthropic-result-type-zz", "anthropic-result-type-succeeded", "results-url-other-host", "results-url-file",
    "results-url-unparsable", "results-url-crlf", "state-backwards", "state-unknown", "state-null",
    "counts-hostile", "id-path-traversal", "id-crlf", "id-changes", "status-huge", "status-deep",
]


def attack_batch(tally: Tally) -> None:
    """A batch run (`--batch`, 6 Weval prompts on an OpenAI and an Anthropic model) against a batch
    service whose states, status JSON and result files are hostile (see _mutated_lines and
    _mutated_status), then a `--resume`. Broken: a traceback, a hang (120 s), an exit other than 0-3,
    results that do not parse, an answer in the results that the service gave for another item (a
    twin, an unknown id), the key in anything written or printed, a request to another host."""
    print("batch services (fifth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-batch-"))
    try:
        bp = root / "b.yml"
        bp.write_text("title: t\nmodels: [openai:gpt-4o-mini, anthropic:claude-3-5-haiku-latest]\n---\n" + "".join(
            f"- id: p{i}\n  prompt: question number {i}\n  should: [{{$contains: question}}]\n" for i in range(6)))
        for mutation in BATCH_MUTATIONS:
            name = f"batch/{mutation}"
            if ONLY and ONLY not in name:
                continue
            server = _batch_server(mutation)
            with server:
                env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "LANG": "C.UTF-8",
                       "NO_COLOR": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **server.env()}
                out = root / "out"
                shutil.rmtree(out, ignore_errors=True)
                common = ["run", "b.yml", "-o", "out", "--no-report", "--batch", "--batch-poll", "0.05", "--retries", "0",
                          "--timeout", "10"]
                problems = []
                for args in (common, [*common, "--resume"]):
                    ran = run_cli(args, env=env, cwd=root, timeout=120)
                    problem = crashed(ran)
                    if problem is None and ran.code not in (0, 1, 2, 3):
                        problem = f"exit {ran.code}: {ran.err.strip().splitlines()[-1:]}"
                    if problem:
                        problems.append(problem)
                        break
                    leak = _leaks(ran.out + ran.err + everything_under(out), server.env()["OPENAI_API_KEY"])
                    if leak:
                        problems.append(f"{leak} in the output")
                        break
                    if _leaks(ran.out + ran.err + everything_under(out), KEY):
                        problems.append("an echoed key in the output")
                        break
                if not problems:
                    bad = _valid_results(out)
                    if bad:
                        problems.append(bad)
                    written = everything_under(out)
                    if "TWIN ANSWER" in written:
                        problems.append("a second, differing answer for an item was taken")
                    foreign = [p for m, p in server.log if not p.startswith(("/v1", "/upload", "/download"))]
                    if foreign:
                        problems.append(f"requests to {foreign[:3]}")
                tally.note(f"{name} (exit {ran.code}, {server.creations} batches, {server.chat_calls} chat calls)",
                           "; ".join(problems) or None)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def attack_merge(tally: Tally) -> None:
    """Shard results from elsewhere (a CI job's artefacts): two finished shards of a 6-prompt echo run whose
    manifests and comparison files are rewritten (folders and names that leave the output folder, files
    that are devices, FIFOs, links out, wrong types, huge lists), then `evalspec merge`; and 2-8 merges at
    once into one folder. Broken: a file written outside the merge's output folder, a traceback, a hang,
    merged results that do not parse, a concurrent merge failing with anything but a clear refusal."""
    print("shard merges (fifth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-merge-"))
    try:
        (root / "b.yml").write_text("title: t\nmodels: [echo]\n---\n" + "".join(
            f"- id: p{i}\n  prompt: hello {i}\n  should: [{{$contains: hello}}]\n" for i in range(6)))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "LANG": "C.UTF-8",
               "NO_COLOR": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        for shard in ("1/2", "2/2"):
            assert run_cli(["run", "b.yml", "-o", "clean", "--shard", shard, "--no-report"], env=env, cwd=root).code == 0
        manifests = sorted((root / "clean").rglob("*.shard.json"))
        original = {m.name: m.read_text() for m in manifests}
        comps = {m.name.replace(".shard.json", ".json"): m.with_name(m.name.replace(".shard.json", ".json")).read_text()
                 for m in manifests}
        outside = root / "outside"
        cases: list[tuple[str, Callable[[Path], None]]] = []

        def set_manifest(**changes: Any) -> Callable[[Path], None]:
            def plant(folder: Path) -> None:
                for m in folder.rglob("*.shard.json"):
                    data = json.loads(m.read_text())
                    data.update(changes)
                    m.write_text(json.dumps(data))
            return plant

        def set_comparison(**changes: Any) -> Callable[[Path], None]:
            def plant(folder: Path) -> None:
                for c in folder.rglob("*_comparison.json"):
                    data = json.loads(c.read_text())
                    data.update(changes)
                    c.write_text(json.dumps(data))
            return plant

        def replace_results(kind: str) -> Callable[[Path], None]:
            def plant(folder: Path) -> None:
                for c in folder.rglob("*_comparison.json"):
                    c.unlink()
                    if kind == "fifo":
                        os.mkfifo(c)
                    elif kind == "dev-zero":
                        os.symlink("/dev/zero", c)
                    elif kind == "link-out":
                        os.symlink("/etc/passwd", c)
                    elif kind == "folder":
                        c.mkdir()
                    elif kind == "deep":
                        c.write_text("[" * 100_000 + "]" * 100_000)
            return plant

        def fifo_manifest(folder: Path) -> None:
            os.mkfifo(next(folder.rglob("*.shard.json")).with_name("zz.shard.json"))
        for field_ in ("output_folder", "results", "run_label", "timestamp"):
            for bad in (["..", "..", str(outside.name)], [str(outside)], "../../" + outside.name, str(outside),
                        "..", ".", "", None, 5, ["a/b"], "a\x00b", "\\..\\x"):
                cases.append((f"{field_}={json.dumps(bad)[:20]}", set_manifest(**{field_: bad})))
        for field_ in ("items", "shard_items", "models", "effective_models"):
            for bad in ([None, {}, []], "p1", [["p1"]], [f"p{i}" for i in range(200_000)]):
                cases.append((f"{field_}={json.dumps(bad)[:20]}", set_manifest(**{field_: bad})))
        for bad in ({"index": 1, "count": 10**30}, {"index": True, "count": 2}, {"index": 1.0, "count": 2}):
            cases.append((f"shard={json.dumps(bad)[:20]}", set_manifest(shard=bad)))
        for bad in ("../../../" + outside.name, "/tmp/x", "", None, ["x"]):
            cases.append((f"comparison-runLabel={json.dumps(bad)[:20]}", set_comparison(runLabel=bad)))
        cases.append(("comparison-promptIds-junk", set_comparison(promptIds=[None, {}, 5])))
        cases.append(("comparison-config-list", set_comparison(config=[1])))
        cases.append(("comparison-timestamp-up", set_comparison(timestamp="../../x")))
        for kind in ("fifo", "dev-zero", "link-out", "folder", "deep"):
            cases.append((f"results-a-{kind}", replace_results(kind)))
        cases.append(("manifest-a-fifo", fifo_manifest))
        for name, plant in cases:
            full = f"merge/{name}"
            if ONLY and ONLY not in full:
                continue
            shards = root / "shards"
            shutil.rmtree(shards, ignore_errors=True)
            shutil.rmtree(outside, ignore_errors=True)
            shutil.rmtree(root / "deep", ignore_errors=True)
            shutil.copytree(root / "clean", shards)
            plant(shards)
            before = {p.name for p in root.iterdir()}
            ran = run_cli(["merge", "shards", "-o", "deep/er/merged", "--no-report"], env=env, cwd=root, timeout=60)
            problem = crashed(ran)
            new = sorted({p.name for p in root.iterdir()} - before - {"deep"})
            merged = root / "deep" / "er" / "merged"
            beside = sorted(str(p.relative_to(root)) for p in (root / "deep").rglob("*")
                            if not p.is_relative_to(merged) and p not in (root / "deep" / "er", merged)) \
                if (root / "deep").exists() else []
            if problem is None and (new or outside.exists() or beside):
                problem = f"written outside the output folder: {(beside or new or [outside.name])[:3]}"
            if problem is None and (root / "deep").exists():
                problem = _valid_results(root / "deep")
            tally.note(f"{full} (exit {ran.code})", problem)
        for n in (2, 4, 8):
            full = f"merge/concurrent-{n}"
            if ONLY and ONLY not in full:
                continue
            shutil.rmtree(root / "merged", ignore_errors=True)
            procs = [_start(["merge", "clean", "-o", "merged", "--no-report"], env, root) for _ in range(n)]
            problems = []
            codes = []
            for p in procs:
                try:
                    _, err = p.communicate(timeout=120)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    problems.append("hung")
                    continue
                codes.append(p.returncode)
                if "Traceback" in err:
                    problems.append("traceback: " + err.strip().splitlines()[-1][:150])
                elif p.returncode != 0 and "is being written" not in err:
                    problems.append(f"exit {p.returncode}: {err.strip().splitlines()[-1:]}")
            if 0 not in codes:
                problems.append("no merge finished")
            bad = _valid_results(root / "merged")
            if bad:
                problems.append(bad)
            tally.note(f"{full} (exits {codes})", "; ".join(problems) or None)
        del original, comps
    finally:
        shutil.rmtree(root, ignore_errors=True)


REPORT_PAYLOADS = [
    "</script><script>window.__pwned=1</script>", "<img src=x onerror=window.__pwned=2>",
    "<svg onload=window.__pwned=3><circle/></svg>", "javascript:window.__pwned=4", "<!--", "-->",
    "<style>body{display:none}</style>", "<meta http-equiv=refresh content=\"0;url=http://127.0.0.1:1/\">",
    "\u2028\u2029", "]]>", "{{constructor.constructor('window.__pwned=5')()}}", "${window.__pwned=6}",
    "<base href=http://127.0.0.1:1/>", "<link rel=stylesheet href=http://127.0.0.1:1/x.css>",
    "<iframe srcdoc=\"<script>parent.__pwned=7</script>\"></iframe>", "<a href=javascript:window.__pwned=8>x</a>",
    "<math><mtext><table><mglyph><style><img src=x onerror=window.__pwned=9>", "\"'><x onmouseover=window.__pwned=10>",
    "<object data=\"data:text/html,<script>parent.__pwned=11</script>\"></object>", "&lt;script&gt;", "\x00\x1b[31m",
]


def attack_report(tally: Tally) -> None:
    """A run whose title, description, prompt ids, prompts, points, model ids, system prompt and answers
    (the fake provider echoes the prompt) hold HTML, script, SVG, CSS and URL payloads; its report.html
    opened in headless Chromium (Playwright), every cell clicked open, a search typed, and links to a
    cell with a payload in the address (#…). Also `report --format markdown`. Broken: any payload's
    script ran (window.__pwned), an element from the data (img, svg, iframe, object, style, link, base,
    meta refresh, an on* attribute, a javascript: link), a request other than the file, a page error, a
    traceback; in the Markdown, a payload's `<` unescaped outside code."""
    print("report injections (fifth round)", flush=True)
    from playwright.sync_api import sync_playwright

    root = Path(tempfile.mkdtemp(prefix="attack-report-"))
    try:
        head = "title: " + json.dumps("T " + " ".join(REPORT_PAYLOADS)) + "\ndescription: " + \
            json.dumps(" ".join(REPORT_PAYLOADS)) + "\nsystem: " + json.dumps(REPORT_PAYLOADS[0]) + \
            "\nmodels:\n" + "".join(f"  - {json.dumps('openai:' + p)}\n" for p in (  # model ids hold no spaces
                "</script><script>window.__pwned=1</script>", "<img/src=x/onerror=window.__pwned=2>",
                "javascript:window.__pwned=4", "<!--")) + "---\n"
        items = "".join(
            f"- id: {json.dumps('id' + str(k) + p)}\n  prompt: {json.dumps('say ' + p)}\n  should:\n"
            f"    - $contains: {json.dumps(p)}\n    - $icontains: {json.dumps(p[::-1])}\n"
            for k, p in enumerate(REPORT_PAYLOADS))
        (root / "r.yml").write_text(head + items)
        with FakeProvider() as fake:
            env = base_env(fake, root)
            ran = run_cli(["run", "r.yml", "-o", "out", "--retries", "0"], env=env, cwd=root, timeout=300)
        tally.note(f"report/run (exit {ran.code})", crashed(ran))
        reports = list((root / "out").rglob("report.html"))
        if not reports:
            tally.note("report/written", "no report.html")
            return
        report = reports[0]
        md = run_cli(["report", str(report.parent), "--format", "markdown"], env=env, cwd=root)
        problem = crashed(md)
        if problem is None:
            outside_code = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", md.out, flags=re.S))
            raw = [p for p in ("<script", "<img", "<svg", "<iframe", "<style", "<meta", "<object", "<a href")
                   if p in outside_code]
            problem = f"raw HTML in the Markdown outside code: {raw}" if raw else None
        tally.note("report/markdown", problem)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=[
                "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"])
            try:
                for label, suffix in [("open", ""), *[(f"hash-{k}", "#" + p) for k, p in enumerate(REPORT_PAYLOADS)],
                                      ("hash-item-model", "#id0" + REPORT_PAYLOADS[0] + "/openai:" + REPORT_PAYLOADS[1])]:
                    name = f"report/browser-{label}"
                    if ONLY and ONLY not in name:
                        continue
                    tally.note(name, _report_in_browser(browser, report, suffix, clicks=label == "open"))
            finally:
                browser.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _report_in_browser(browser: Any, report: Path, suffix: str, clicks: bool) -> str | None:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    url = report.resolve().as_uri()
    requests: list[str] = []
    errors: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.split("#")[0] != url:
            requests.append(r.request.url)
            r.abort()
        else:
            r.continue_()
    page.route("**/*", route)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url + suffix.replace("%", "%25"))
        page.wait_for_selector("html[data-ready]", timeout=30000)
        if clicks:
            cells = page.locator(".cell")
            for k in range(min(cells.count(), 200)):
                cells.nth(k).click()
            page.locator("#q").fill("pwned")
            page.locator("#q").press("Enter")
            page.wait_for_timeout(500)
        page.wait_for_timeout(300)
        found = page.evaluate("""() => {
            const bad = [];
            if (window.__pwned !== undefined) bad.push('script ran: ' + window.__pwned);
            if (parent.__pwned !== undefined) bad.push('script ran in a frame');
            // the page draws its own SVG charts: an SVG from the data would come with its on* attribute
            const sel = 'img, iframe, object, embed, link, base, meta[http-equiv=refresh], math, '
                + 'a[href^="javascript"], [onerror], [onload], [onmouseover], body style, circle';
            for (const e of document.querySelectorAll(sel)) bad.push(e.outerHTML.slice(0, 80));
            if (document.scripts.length !== 3) bad.push(document.scripts.length + ' scripts');
            return bad;
        }""")
    except Exception as exc:  # a page that never got ready is a finding, not a harness crash
        found = [f"{exc.__class__.__name__}: {str(exc)[:120]}"]
    finally:
        context.close()
    problems = [*found, *(f"page error: {e[:100]}" for e in errors), *(f"request: {r[:80]}" for r in requests)]
    return "; ".join(problems) or None


# ------------------------------------------------------------------------------------------------
# the sixth round: the guard process, streamed AgentV analysis, answers waiting on disk, the report

def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _server_pid(guard: RawLsp, old: int | None = None, wait: float = 15.0) -> int | None:
    """The guarded server process (the guard's child), a new one when `old` is given."""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        kids = [k for k in _children(guard.proc.pid) if k != old and _alive(k)]
        if kids:
            return kids[0]
        time.sleep(0.05)
    return None


# A stand-in server for the guard (guard.serve runs it as its backend): answers `initialize` and every
# request like the real one does under a guard (Evalspec-Response-Id), and misbehaves as its mode says
# when it is sent `evil/now`. Each start is counted in ATTACK_STARTS (a file), and its PID noted.
FAKE_BACKEND = r'''
import json, os, sys, time
mode, starts_file = sys.argv[1], sys.argv[2]
with open(starts_file, "a") as f:
    f.write(f"{os.getpid()}\n")
starts = len(open(starts_file).read().split()) - 1
inp, out = sys.stdin.buffer, sys.stdout.buffer

def send(obj, rid=None, raw=None):
    body = raw if raw is not None else json.dumps(obj).encode()
    head = b"Content-Length: %d\r\n" % len(body)
    if rid is not None:
        head += b"Evalspec-Response-Id: " + json.dumps(rid).encode() + b"\r\n"
    out.write(head + b"\r\n" + body)
    out.flush()

def evil(rid):
    if mode == "long-header-line":
        out.write(b"X" * 3_000_000); out.flush()
    elif mode == "stdout-closed":
        os.close(1); time.sleep(3600)
    elif mode == "content-length-huge":
        out.write(b"Content-Length: 99999999999\r\n\r\n{"); out.flush()
    elif mode == "content-length-negative":
        out.write(b"Content-Length: -5\r\n\r\n"); out.flush()
    elif mode == "no-content-length":
        out.write(b"Content-Type: x\r\n\r\n" + json.dumps({"jsonrpc": "2.0", "method": "x"}).encode() + b"\r\n"); out.flush()
    elif mode == "binary-garbage":
        out.write(os.urandom(1_000_000).replace(b"\r\n\r\n", b"")); out.flush()
    elif mode == "frame-40mb":
        send(None, raw=b'{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":4,"message":"' + b"x" * 40_000_000 + b'"}}')
    elif mode == "id-header-garbage":
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": None}).encode()
        out.write(b"Content-Length: %d\r\nEvalspec-Response-Id: {not json\r\n\r\n" % len(body) + body); out.flush()
        return
    elif mode == "exit-0":
        os._exit(0)
    elif mode == "dies-on-initialize-again":
        os._exit(3)
    elif mode == "killed-by-itself":
        os.kill(os.getpid(), 9)
    elif mode == "hang":
        time.sleep(3600)
    elif mode == "answers-for-unknown-ids":
        for i in range(10_000):
            send({"jsonrpc": "2.0", "id": f"never-{i}", "result": None}, f"never-{i}")
    elif mode == "requests-to-the-client":
        for i in range(2_000):
            send({"jsonrpc": "2.0", "id": 10**6 + i, "method": "workspace/configuration", "params": {"items": []}})
    send({"jsonrpc": "2.0", "id": rid, "result": None}, rid)

while True:
    length = 0
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    msg = json.loads(inp.read(length))
    method, rid = msg.get("method"), msg.get("id")
    if method == "exit":
        sys.exit(0)
    if "id" not in msg or method is None:
        continue
    if method == "initialize":
        if mode == "dies-on-initialize-again" and starts > 0:
            os._exit(3)
        send({"jsonrpc": "2.0", "id": rid, "result": {"capabilities": {}}}, rid)
    elif method == "evil/now":
        evil(rid)
    else:
        send({"jsonrpc": "2.0", "id": rid, "result": {"method": method, "start": starts}}, rid)
'''

# modes whose server is still there to answer (or dies and is started again): the guard must serve again
# with a server's answers within GUARD_RECOVERY_S; the others (a hung server) only be answered in time.
GUARD_BACKEND_MODES = {
    "long-header-line": True, "stdout-closed": True, "content-length-negative": True, "no-content-length": True,
    "binary-garbage": True, "frame-40mb": True, "id-header-garbage": True, "exit-0": True,
    "killed-by-itself": True, "answers-for-unknown-ids": True, "requests-to-the-client": True,
    "dies-on-initialize-again": False, "content-length-huge": False, "hang": False,
}
GUARD_RECOVERY_S = 15.0


def _guard_command(mode: str, starts: Path, script: Path) -> list[str]:
    return [sys.executable, "-c", "import asyncio, sys\nfrom evalspec_lsp import guard\n"
            "sys.exit(asyncio.run(guard.serve([sys.executable, sys.argv[1], sys.argv[2], sys.argv[3]])))",
            str(script), mode, str(starts)]


def _served_again(server: RawLsp, tag: str, until: float) -> tuple[list[str], bool]:
    """Hovers every 0.3 s until a server answers one or `until`: each must be answered within the bound.
    (problems, a server answered)."""
    problems: list[str] = []
    n = 0
    while time.monotonic() < until:
        n += 1
        rid = f"{tag}-{n}"
        server.request(rid, "textDocument/hover", _at("file:///x.yaml", 0, 0))
        t0 = time.monotonic()
        reply = server.wait(rid, LSP_BOUND_S + 4)
        took = time.monotonic() - t0
        if reply is None:
            problems.append(f"hover {n} not answered" + (" (guard exited)" if server.closed else ""))
            return problems, False
        if took > LSP_BOUND_S:
            problems.append(f"hover {n} answered after {took:.2f} s")
            return problems, False
        if "result" in reply:
            return problems, True
        time.sleep(0.3)
    return problems, False


def _guard_ends(server: RawLsp, pids: list[int]) -> str | None:
    server.request("down", "shutdown", None)
    server.wait("down", 5)
    server.send({"jsonrpc": "2.0", "method": "exit"})
    try:
        server.proc.wait(20)
    except subprocess.TimeoutExpired:
        return "the guard still runs 20 s after exit"
    time.sleep(0.2)
    left = [p for p in pids if _alive(p)]
    return f"server processes left running: {left}" if left else None


def _guard_backend_cases(tally: Tally, root: Path) -> None:
    script = root / "fake_backend.py"
    script.write_text(FAKE_BACKEND)
    for mode, recovers in GUARD_BACKEND_MODES.items():
        name = f"guard/backend/{mode}"
        if ONLY and ONLY not in name:
            continue
        starts = root / f"starts-{mode}"
        starts.write_text("")
        server = RawLsp(root, _guard_command(mode, starts, script))
        pids: list[int] = []
        try:
            problems: list[str] = []
            server.request("init", "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
            if server.wait("init", 20) is None:
                tally.note(name, "initialize not answered")
                continue
            server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            server.request("evil", "evil/now", {})
            reply = server.wait("evil", LSP_BOUND_S + 4)
            if reply is None:
                problems.append("the request that set it off not answered")
            if mode == "frame-40mb":  # the client's own reading of 40 MB is not the guard's time: wait for it
                end = time.monotonic() + 60
                while server.frames < 3 and time.monotonic() < end:
                    time.sleep(0.1)
            got, served = _served_again(server, "after", time.monotonic() + GUARD_RECOVERY_S)
            problems += got
            if recovers and not served and not got:
                problems.append(f"no server answered within {GUARD_RECOVERY_S:.0f} s (only the guard's errors)")
            if server.answers and max(server.answers.values()) > 1:
                problems.append(f"ids answered twice: {[k[:20] for k, v in server.answers.items() if v > 1][:3]}")
            pids = [int(x) for x in starts.read_text().split()]
            rss = _rss_mb(server.proc.pid)
            problem = _guard_ends(server, pids)
            if problem:
                problems.append(problem)
            tally.note(f"{name} ({len(pids)} server starts, guard {rss:.0f} MB)",
                       "; ".join(problems) or None)
        finally:
            server.stop()
            for p in pids:
                with contextlib.suppress(OSError):
                    os.kill(p, signal.SIGKILL)


def _symbols(server: RawLsp, uri: str, rid: str) -> Any:
    """The document's outline, asked until the server (not the guard's "busy") answers, for 20 s."""
    end = time.monotonic() + 20
    n = 0
    while time.monotonic() < end:
        n += 1
        server.request(f"{rid}-{n}", "textDocument/documentSymbol", {"textDocument": {"uri": uri}})
        reply = server.wait(f"{rid}-{n}", LSP_BOUND_S + 4)
        if reply is not None and "result" in reply:
            return reply["result"]
        time.sleep(0.3)
    return None


def _guard_client_cases(tally: Tally, root: Path) -> None:
    """The real guard and server, a hostile or broken client, and a server killed under it."""
    doc = root / "g.weval.yml"
    doc.write_text(GOOD)
    uri = doc.as_uri()

    def started() -> RawLsp:
        server = RawLsp(root)
        _initialized(server, root)
        _open(server, uri, GOOD)
        server.request("warm", "textDocument/hover", _at(uri, 0, 0))
        server.wait("warm", 20)
        return server

    def hover_ok(server: RawLsp, tag: str, bound: float = LSP_BOUND_S, settle: float = 0.0) -> str | None:
        """A hover answered by the server (not an error) within `bound`, retried for `settle` seconds
        while the guard answers 'busy' or the server is being started again."""
        end = time.monotonic() + settle
        n = 0
        while True:
            n += 1
            rid = f"{tag}-{n}"
            server.request(rid, "textDocument/hover", _at(uri, 3, 4))
            t0 = time.monotonic()
            reply = server.wait(rid, bound + 4)
            took = time.monotonic() - t0
            if reply is None:
                return "hover not answered" + (" (exited)" if server.closed else "")
            if took > bound:
                return f"hover answered after {took:.2f} s"
            if "result" in reply:
                return None
            if time.monotonic() > end:
                return f"hover still failing: {str(reply.get('error', {}).get('message'))[:90]}"
            time.sleep(0.3)

    def case(name: str, act: Callable[[RawLsp], list[str]]) -> None:
        full = f"guard/client/{name}"
        if ONLY and ONLY not in full:
            return
        server = started()
        try:
            problems = act(server)
            dup = [k[:20] for k, v in server.answers.items() if v > 1]
            if dup:
                problems.append(f"ids answered twice: {dup[:3]}")
            tally.note(full, "; ".join(problems) or None)
        finally:
            server.stop()

    def big_id(size: int) -> Callable[[RawLsp], list[str]]:
        def act(server: RawLsp) -> list[str]:
            rid = "i" * size
            server.request(rid, "textDocument/hover", _at(uri, 3, 4))
            reply = server.wait(rid, LSP_BOUND_S + 4)
            problems = [] if reply is not None else ["the request not answered"]
            problem = hover_ok(server, "after", settle=5.0)
            return problems + ([problem] if problem else [])
        return act

    case("id-string-100kb", big_id(100_000))
    case("id-string-1.1mb", big_id(1_100_000))
    case("id-string-8mb", big_id(8_000_000))

    def odd_ids_while_busy(server: RawLsp) -> list[str]:
        """Ids the guard does not track (floats, booleans, objects) while the server analyses a big file:
        answered within the bound all the same (JSON-RPC allows numbers; LSP clients send integers)."""
        big = root / "big.weval.yml"
        big_text = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
            f"- id: p{i}\n  prompt: question {i} " + "w " * 40 + "\n  should: [be kind]\n" for i in range(25_000))
        big.write_text(big_text)
        _open(server, big.as_uri(), big_text)
        problems = []
        for rid in (1.5, -0.0, True, {"a": 1}, [1], None):
            server.request(rid, "textDocument/hover", _at(uri, 3, 4))
            t0 = time.monotonic()
            reply = server.wait(rid, LSP_BOUND_S + 4)
            if reply is None:
                problems.append(f"id {rid!r} not answered")
            elif time.monotonic() - t0 > LSP_BOUND_S:
                problems.append(f"id {rid!r} answered after {time.monotonic() - t0:.2f} s")
        return problems
    case("untracked-ids-while-busy", odd_ids_while_busy)

    def killed(times: int, gap: float) -> Callable[[RawLsp], list[str]]:
        def act(server: RawLsp) -> list[str]:
            problems: list[str] = []
            # edits the restarted server must see again: the outline after the kills is the edited text's
            text = GOOD
            for i in range(30):
                line = f"- id: added{i}\n  prompt: p{i}\n"
                server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": uri, "version": 2 + i}, "contentChanges": [{
                        "range": {"start": {"line": 6 + 2 * i, "character": 0},
                                  "end": {"line": 6 + 2 * i, "character": 0}}, "text": line}]}})
                text += line
            expected = _symbols(server, uri, "before")
            old: int | None = None
            for k in range(times):
                pid = _server_pid(server, old)
                if pid is None:
                    problems.append(f"no server process before kill {k + 1}")
                    return problems
                os.kill(pid, signal.SIGKILL)
                old = pid
                for j in range(20):  # requests in flight while it dies and while it is replayed
                    server.request(f"k{k}-{j}", "textDocument/hover", _at(uri, 3, 4))
                time.sleep(gap)
            for k in range(times):
                for j in range(20):
                    if server.wait(f"k{k}-{j}", LSP_BOUND_S + 10) is None:
                        problems.append(f"request k{k}-{j} not answered")
                        return problems
            if times > 3:  # past MAX_RESTARTS within the window: it stops restarting, answers errors in time
                server.request("given-up", "textDocument/hover", _at(uri, 3, 4))
                t0 = time.monotonic()
                reply = server.wait("given-up", LSP_BOUND_S + 4)
                if reply is None or time.monotonic() - t0 > LSP_BOUND_S:
                    problems.append("no answer in time once the guard gave up")
                server.send({"jsonrpc": "2.0", "method": "exit"})
                try:
                    server.proc.wait(10)
                except subprocess.TimeoutExpired:
                    problems.append("exit after giving up: the guard still runs")
                return problems
            got = _symbols(server, uri, "after")
            if got != expected:
                problems.append(f"the restarted server's outline differs ({len(got or [])} vs {len(expected or [])} symbols)")
            problem = hover_ok(server, "final", settle=10.0)
            return problems + ([problem] if problem else [])
        return act

    case("server-killed-once", killed(1, 0.0))
    case("server-killed-three-times-during-replay", killed(3, 0.05))
    case("server-killed-four-times", killed(4, 0.3))

    def stopped_server(server: RawLsp) -> list[str]:
        """The server stopped (SIGSTOP) under 200 requests and cancels, then continued: each answered once,
        in time; the server's late answers to what the guard answered dropped."""
        pid = _server_pid(server)
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        problems = []
        try:
            for i in range(200):
                server.request(f"s{i}", "textDocument/hover", _at(uri, 3, 4))
                if i % 3 == 0:
                    server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": f"s{i}"}})
            t0 = time.monotonic()
            for i in range(200):
                if server.wait(f"s{i}", LSP_BULK_BOUND_S) is None:
                    problems.append(f"s{i} not answered while the server was stopped")
                    break
            if time.monotonic() - t0 > LSP_BULK_BOUND_S:
                problems.append(f"answers took {time.monotonic() - t0:.2f} s")
        finally:
            os.kill(pid, signal.SIGCONT)
        time.sleep(3)
        problem = hover_ok(server, "after", settle=5.0)
        return problems + ([problem] if problem else [])
    case("server-stopped-under-200-requests", stopped_server)

    def cancel_races(server: RawLsp) -> list[str]:
        problems = []
        for i in range(500):  # cancel before, right after, and long after its request
            if i % 3 == 0:
                server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": i}})
            server.request(i, "textDocument/hover", _at(uri, 3, 4))
            if i % 3 == 1:
                server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": i}})
        for i in range(500):
            server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": i}})
        for i in range(500):
            if server.wait(i, LSP_BULK_BOUND_S) is None:
                problems.append(f"request {i} never answered")
                break
        problem = hover_ok(server, "after", settle=5.0)
        return problems + ([problem] if problem else [])
    case("cancel-before-with-and-after-500", cancel_races)

    def reused_ids(server: RawLsp) -> list[str]:
        """The id of `initialize` (the guard replays it to a restarted server) reused by requests queued
        when the server dies, and ids reused as soon as they are answered."""
        problems = []
        pid = _server_pid(server)
        assert pid is not None
        for i in range(40):
            server.request(f"q{i}", "textDocument/hover", _at(uri, 3, 4))
        with server.cond:  # initialize's own answer, long read
            server.replies.pop(json.dumps("init"), None)
            server.answers.pop(json.dumps("init"), None)
        server.request("init", "textDocument/hover", _at(uri, 3, 4))
        os.kill(pid, signal.SIGKILL)
        reply = server.wait("init", LSP_BOUND_S + 10)
        if reply is None:
            problems.append("the request reusing initialize's id not answered")
        elif "result" in reply and isinstance(reply["result"], dict) and "capabilities" in reply["result"]:
            problems.append("a hover got the replayed initialize's answer")
        time.sleep(3)
        for k in range(50):
            server.request("same", "textDocument/hover", _at(uri, 3, 4))
            if server.wait("same", LSP_BOUND_S + 4) is None:
                problems.append(f"reused id not answered at {k}")
                break
            with server.cond:
                server.replies.pop(json.dumps("same"), None)
        server.answers.pop(json.dumps("same"), None)
        problem = hover_ok(server, "after", settle=10.0)
        return problems + ([problem] if problem else [])
    case("ids-reused-across-a-restart", reused_ids)

    def garbage_then_serve(server: RawLsp) -> list[str]:
        """Frames the guard cannot read, then one 8 MB didOpen dripped in 64 KB writes, then a hover."""
        server.send_raw(b"Content-Length: 5\r\n\r\n{{{{{" + b"\xff\xfe" * 1000 + b"\r\n\r\n")
        server.send_raw(b"Content-Length: 99999\r\nContent-Length: 3\r\n\r\n[1]")
        big = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: " + "x" * 8_000_000 + "\n"
        body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": (root / "drip.weval.yml").as_uri(), "languageId": "yaml", "version": 1, "text": big}}}).encode()
        data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        for i in range(0, len(data), 65536):
            server.send_raw(data[i:i + 65536])
        # A reader that takes a lying length at its word eats what follows it (the guard and the server
        # alike): the first request after the lie may be lost with it; the ones after must be served.
        server.request("eaten", "textDocument/hover", _at(uri, 3, 4))
        time.sleep(1)
        problem = hover_ok(server, "after", bound=LSP_BULK_BOUND_S, settle=10.0)
        return [problem] if problem else []
    case("garbage-then-8mb-drip", garbage_then_serve)


def _guard_never_reads(tally: Tally, root: Path) -> None:
    """A client that sends requests and never reads what comes back: the guard's own memory must stay
    bounded (the answers wait in a pipe, then in the guard)."""
    name = "guard/client/never-reads-its-output"
    if ONLY and ONLY not in name:
        return
    big = root / "outline.weval.yml"
    text = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: q{i}\n  should: [be kind, be brief]\n" for i in range(20_000))
    big.write_text(text)
    proc = subprocess.Popen([sys.executable, "-m", "evalspec_lsp.main"], cwd=root, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    assert proc.stdin is not None

    def send(msg: Any) -> None:
        body = json.dumps(msg).encode()
        assert proc.stdin is not None
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()
    peak = 0.0
    sent = 0
    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"processId": None, "rootUri": root.as_uri(),
                                                                          "capabilities": {}}})
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": big.as_uri(), "languageId": "yaml", "version": 1, "text": text}}})
        done = threading.Event()

        def flood() -> None:
            nonlocal sent
            with contextlib.suppress(OSError, ValueError):
                for i in range(1, 1500):
                    send({"jsonrpc": "2.0", "id": i, "method": "textDocument/documentSymbol",
                          "params": {"textDocument": {"uri": big.as_uri()}}})
                    sent += 1
            done.set()
        threading.Thread(target=flood, daemon=True).start()
        end = time.monotonic() + 60
        while time.monotonic() < end and not done.is_set():
            peak = max(peak, _rss_mb(proc.pid))
            time.sleep(0.25)
        for _ in range(40):  # the server answers what is queued after the flood
            peak = max(peak, _rss_mb(proc.pid))
            time.sleep(0.25)
        tally.note(f"{name} ({sent} outlines asked, guard peak {peak:.0f} MB)",
                   f"the guard held {peak:.0f} MB for a client that does not read" if peak > 400 else None)
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def attack_guard(tally: Tally) -> None:
    """The guard process (server/guard.py) between a hostile or broken client and the server, and between
    the client and a server that misbehaves (a stand-in backend: over-long header lines, its output
    closed, a Content-Length it never sends, 200 MB frames, garbage, dying on every start). Broken: a
    request not answered within the bound, an id answered twice, a server that can answer not served
    again within 15 s, a restarted server that lost edits, the guard or a server left running after
    `exit`, the guard's memory growing without bound."""
    print("the guard (sixth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-guard-"))
    try:
        _guard_backend_cases(tally, root)
        _guard_client_cases(tally, root)
        _guard_never_reads(tally, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)



def _analysis_digest(a: Any) -> tuple[list[tuple[Any, ...]], list[str] | None]:
    """What must not depend on how a text was parsed: its findings and its model's items."""
    found = sorted((f.code, tuple(f.span), f.severity.name, f.message, f.path or "") for f in a.findings)
    items: list[str] | None = None
    if a.agentv is not None and a.agentv.suite is not None:
        items = [repr(sorted((k, repr(v)) for k, v in t.__dict__.items())) for t in a.agentv.suite.tests]
    elif a.weval is not None and a.weval.blueprint is not None:
        items = [repr(sorted((k, repr(v)) for k, v in p.__dict__.items())) for p in a.weval.blueprint.prompts]
    return found, items


def _digest_difference(one: Any, other: Any, names: tuple[str, str]) -> str | None:
    (f1, m1), (f2, m2) = _analysis_digest(one), _analysis_digest(other)
    problems = []
    if f1 != f2:
        only1 = [x[:3] for x in f1 if x not in f2][:2]
        only2 = [x[:3] for x in f2 if x not in f1][:2]
        problems.append(f"findings differ ({names[0]} only {only1}, {names[1]} only {only2})")
    if m1 != m2:
        first = next((i for i, (a, b) in enumerate(zip(m1 or [], m2 or [], strict=False)) if a != b), None)
        problems.append(f"items differ ({len(m1 or [])} vs {len(m2 or [])}, first at {first})")
    return "; ".join(problems) or None


def _streamed_vs_whole(text: str, path: Path) -> str | None:
    from evalspec.analysis import analyze

    try:
        whole = analyze(text, path, streamed=False)
        streamed = analyze(text, path, streamed=True)
    except Exception as exc:  # an exception is what is looked for
        return f"{type(exc).__name__}: {str(exc)[:120]}"
    return _digest_difference(whole, streamed, ("whole", "streamed"))


_SUITE_HEAD = "name: s\ndescription: d\ntests:\n"
_BP_HEAD = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n"


def _suite_test(i: int, indent: str = "  ") -> str:
    return f"{indent}- id: t{i}\n{indent}  input: question {i}\n{indent}  criteria: answers {i}\n"


def _bp_prompt(i: int) -> str:
    return f"- id: p{i}\n  prompt: question {i}\n  should: [answers {i}]\n"


def streamed_cases() -> Iterator[tuple[str, str]]:
    """(name, text): item lists whose items a streamed parse reads one at a time, made so that reading
    them alone might read them otherwise than the whole file does."""
    suite = _SUITE_HEAD + "".join(_suite_test(i) for i in range(3))
    bp = _BP_HEAD + "".join(_bp_prompt(i) for i in range(3))
    t1, t2 = _suite_test(1), _suite_test(2)
    p1, p2 = _bp_prompt(1), _bp_prompt(2)
    yield "suite/anchor-in-one-alias-in-another", _SUITE_HEAD + "  - id: a\n    input: &q question\n    criteria: c\n" \
        "  - id: b\n    input: *q\n    criteria: c\n"
    yield "suite/alias-to-a-later-anchor", _SUITE_HEAD + "  - id: a\n    input: *q\n    criteria: c\n" \
        "  - id: b\n    input: &q question\n    criteria: c\n"
    yield "suite/anchor-on-the-tests-key", "name: s\ntests: &all\n" + t1 + t2 + "extra: *all\n"
    yield "suite/anchor-in-a-comment", _SUITE_HEAD + "  # &c not an anchor\n" + t1 + "  - id: b\n    input: '*c'\n    criteria: c\n"
    yield "suite/merge-of-an-earlier-test", _SUITE_HEAD + "  - &base\n    id: a\n    input: q\n    criteria: c\n" \
        "  - <<: *base\n    id: b\n"
    yield "suite/quoted-continuation-like-an-item", _SUITE_HEAD + "  - id: a\n    input: \"hello\n  - world\"\n    criteria: c\n" + t2
    yield "suite/single-quoted-continuation", _SUITE_HEAD + "  - id: a\n    input: 'hello\n  - world'\n    criteria: c\n" + t2
    yield "suite/flow-continuation-at-item-indent", _SUITE_HEAD + "  - {id: a,\n  - input: x}\n" + t2
    yield "suite/flow-continuation-at-column-0", _SUITE_HEAD + "  - {id: a, input: q,\ncriteria: c}\n" + t2
    yield "suite/block-scalar-holding-items", _SUITE_HEAD + "  - id: a\n    input: |\n      - one\n      - two\n    criteria: c\n" + t2
    yield "suite/block-scalar-keep-at-the-end", _SUITE_HEAD + t1 + "  - id: z\n    input: |+\n      last\n\n\n"
    yield "suite/items-at-column-0", "name: s\ntests:\n" + _suite_test(1, "") + _suite_test(2, "") + "execution:\n  target: default\n"
    yield "suite/items-at-column-0-then-a-dash-key", "name: s\ntests:\n" + _suite_test(1, "") + "-x: 1\n"
    yield "suite/a-key-after-the-list", suite + "execution:\n  target: default\n"
    yield "suite/a-less-indented-item", suite + " - id: x\n   input: q\n   criteria: c\n" + t2
    yield "suite/a-more-indented-item", suite + "    - id: x\n      input: q\n" + t2
    yield "suite/tab-after-the-dash", _SUITE_HEAD + "  -\tid: a\n    input: q\n    criteria: c\n" + t2
    yield "suite/tab-indented-line", suite + "\tinput: q\n"
    yield "suite/empty-items", _SUITE_HEAD + "  -\n  -\n" + t1 + "  -\n"
    yield "suite/last-item-a-comment", suite + "  - # x\n"
    yield "suite/last-item-null-then-key", suite + "  -\nname2: x\n"
    yield "suite/tests-twice", suite + "tests:\n" + t2
    yield "suite/tests-with-a-tag", "name: s\ntests: !!seq\n" + t1 + t2
    yield "suite/tests-with-a-comment", "name: s\ntests:   # the tests\n" + t1 + t2
    yield "suite/tests-flow-then-block", "name: s\ntests: [\n" + t1 + "]\n"
    yield "suite/document-marker-inside", suite + "---\n" + t2
    yield "suite/document-end-inside", suite + "...\n" + t2
    yield "suite/second-document-broken-list", suite + "---\n- {id: a,\n- x: y}\n- a\n"
    yield "suite/second-document-broken-tests", suite + "---\nname: t\ntests:\n  - id: {a\n  - id: b\n"
    yield "suite/directive", "%YAML 1.1\n---\n" + suite
    yield "suite/complex-key", _SUITE_HEAD + "  - ? id\n    : a\n    input: q\n    criteria: c\n" + t2
    yield "suite/crlf", suite.replace("\n", "\r\n")
    yield "suite/bare-cr", suite.replace("\n", "\r")
    yield "suite/mixed-endings", suite.replace("\n", "\r\n", 3)
    yield "suite/u2028-in-an-item", _SUITE_HEAD + "  - id: a\n    input: x\u2028  - y\n    criteria: c\n" + t2
    yield "suite/nel-in-an-item", _SUITE_HEAD + "  - id: a\n    input: x\x85  - y\n    criteria: c\n" + t2
    yield "suite/bom-between-items", suite + "\ufeff" + t2
    yield "suite/nul-in-an-item", _SUITE_HEAD + "  - id: a\n    input: x\x00y\n" + t2
    yield "suite/syntax-error-in-item-40", _SUITE_HEAD + "".join(_suite_test(i) for i in range(40)) + "  - id: {\n" + \
        "".join(_suite_test(i) for i in range(40, 80))
    yield "suite/duplicate-ids-across-groups", _SUITE_HEAD + "".join(_suite_test(i % 33) for i in range(100))
    yield "suite/deep-item", _SUITE_HEAD + "  - id: a\n    input: " + "[" * 5000 + "]" * 5000 + "\n" + t2
    yield "suite/alias-bomb-in-one-item", _SUITE_HEAD + "  - id: a\n    input: &a [x, x]\n" + "".join(
        f"  - id: b{i}\n    input: &a{i + 1} [*a{'' if i == 0 else i}, *a{'' if i == 0 else i}]\n" for i in range(40))
    yield "blueprint/quoted-continuation-at-column-0", _BP_HEAD + "- id: a\n  prompt: \"hello\n- world\"\n" + p2
    yield "blueprint/flow-continuation-at-column-0", _BP_HEAD + "- {id: a,\n- prompt: x}\n" + p2
    yield "blueprint/plain-continuation", _BP_HEAD + "- id: a\n  prompt: hello\n - world\n" + p2
    yield "blueprint/block-scalar-at-column-0", _BP_HEAD + "- id: a\n  prompt: |\n   x\n- y\n"
    yield "blueprint/anchor-across", _BP_HEAD + "- id: a\n  prompt: &q hi\n- id: b\n  prompt: *q\n"
    yield "blueprint/two-prompt-documents", bp + "---\n" + p1 + p2
    yield "blueprint/second-document-broken", bp + "---\n- {id: a,\n- x}\n"
    yield "blueprint/crlf", bp.replace("\n", "\r\n")
    yield "blueprint/bare-cr", bp.replace("\n", "\r")
    yield "blueprint/syntax-error-in-prompt-40", _BP_HEAD + "".join(_bp_prompt(i) for i in range(40)) + "- id: {\n" + \
        "".join(_bp_prompt(i) for i in range(40, 80))
    yield "blueprint/block-keep-last", bp + "- id: z\n  prompt: |+\n    last\n\n\n"


_HOSTILE_LINES = ["- ", "  - ", "---", "...", "  - id: {", "  - id: \"open", "&a x", "*a", "  input: *a", "  x: &a y",
                  "<<: *a", "\t- x", "- |", "  - |-", "- >+", "#", "  # &a", "tests:", "tests: &t", "- ? k", ": v",
                  "- [a,", "  b]", "- {a: 1,", "- 'x", "  y'", "\ufeff- x", "- \u2028", "- x\x85y", "%YAML 1.2"]


def _mutated(text: str, rng: Any) -> str:
    """One to four line-level mutations: hostile lines in, lines out, doubled, re-indented, joined."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(lines) + 1)
        op = rng.randrange(7)
        if op == 0:
            lines.insert(i, rng.choice(_HOSTILE_LINES))
        elif op == 1 and lines:
            del lines[min(i, len(lines) - 1)]
        elif op == 2 and lines:
            j = min(i, len(lines) - 1)
            lines.insert(j, lines[j])
        elif op == 3 and lines:
            j = min(i, len(lines) - 1)
            lines[j] = rng.choice(["", " ", "  ", "    ", "\t"]) + lines[j].lstrip()
        elif op == 4 and len(lines) > 1:
            j = min(i, len(lines) - 2)
            lines[j:j + 2] = [lines[j] + rng.choice([" ", "", "\r"]) + lines[j + 1]]
        elif op == 5 and lines:
            j = min(i, len(lines) - 1)
            k = rng.randrange(len(lines[j]) + 1)
            lines[j] = lines[j][:k] + rng.choice(["&a ", "*a", "\"", "'", "{", "[", ": ", " #", "\r", "\x85"]) + lines[j][k:]
        else:
            lines.insert(i, rng.choice(lines) if lines else "")
    return rng.choice(["\n", "\n", "\n", "\r\n"]).join(lines)


def _incremental_vs_fresh(base: str, path: Path, rng: Any, steps: int) -> str | None:
    """The editor's analyses (DocumentAnalyzer: items reused and moved between edits) against a fresh
    analysis of each text, through edits that split, merge, move and break items."""
    from evalspec.analysis import analyze
    from evalspec.incremental import DocumentAnalyzer

    doc = DocumentAnalyzer(path)
    text = base
    for step in range(steps):
        text = _mutated(text, rng) if step else text
        try:
            edited = doc.analyze(text)
            fresh = analyze(text, path, kind=doc.kind if edited.kind is not None and not edited.parsed.ok else None)
        except Exception as exc:  # an exception is what is looked for
            return f"step {step}: {type(exc).__name__}: {str(exc)[:120]}"
        if edited.kind != fresh.kind:
            continue  # the editor keeps a broken file's format (sticky); a fresh look may not
        diff = _digest_difference(edited, fresh, ("editor", "fresh"))
        if diff:
            return f"step {step}: {diff}"
    return None


def attack_streamed(tally: Tally) -> None:
    """Streamed analysis (check and run: source.LazyItems, the AgentV test store past 4,096 tests) and
    the editor's incremental analysis, each against a whole analysis of the same text: the findings and
    the model's items must be the same. Broken: a difference, an exception, a huge single test or a
    5,000-test suite that `check` does not finish within 120 s."""
    import random

    print("streamed analysis (sixth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-streamed-"))
    try:
        suite_path, bp_path = root / "s.eval.yaml", root / "b.weval.yml"
        for name, text in streamed_cases():
            full = f"streamed/{name}"
            if ONLY and ONLY not in full:
                continue
            problems = []
            for path in (suite_path, bp_path):  # each text as a suite and as a blueprint
                problem = _streamed_vs_whole(text, path)
                if problem:
                    problems.append(f"as {path.suffixes[0]}: {problem}")
            tally.note(full, "; ".join(problems) or None)
        # Random line-level mutations of the corpus's suites and blueprints, and of long generated ones.
        corpus = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
        seeds = {"suite": [p for p in corpus.rglob("*.yaml") if "eval" in p.name][:60],
                 "blueprint": [p for p in (corpus / "weval-configs" / "blueprints").rglob("*.yml")][:60]}
        long = {"suite": _SUITE_HEAD + "".join(_suite_test(i) for i in range(120)),
                "blueprint": _BP_HEAD + "".join(_bp_prompt(i) for i in range(120))}
        for fmt, files in seeds.items():
            full = f"streamed/random-{fmt}s"
            if ONLY and ONLY not in full:
                continue
            rng = random.Random(6)
            texts = [p.read_text(errors="replace") for p in files] + [long[fmt]] * 20
            path = suite_path if fmt == "suite" else bp_path
            problems = []
            tried = 0
            for _ in range(600):
                text = _mutated(rng.choice(texts), rng)
                tried += 1
                problem = _streamed_vs_whole(text, path)
                if problem:
                    problems.append(f"{problem} in {text[:300]!r}")
                    if len(problems) >= 3:
                        break
            tally.note(f"{full} ({tried} texts)", " | ".join(problems) or None)
        for fmt, base in long.items():
            full = f"streamed/editor-edits-{fmt}"
            if ONLY and ONLY not in full:
                continue
            rng = random.Random(7)
            path = suite_path if fmt == "suite" else bp_path
            problems = []
            for run in range(30):
                problem = _incremental_vs_fresh(base, path, rng, 12)
                if problem:
                    problems.append(f"run {run}: {problem}")
                    if len(problems) >= 3:
                        break
            tally.note(f"{full} (30 editing sessions of 12 edits)", " | ".join(problems) or None)
        # Past the test store's bound (4,096 tests on disk), and one huge test, through `check`.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "LANG": "C.UTF-8", "NO_COLOR": "1"}
        big_cases = {
            "5000-tests-store": _SUITE_HEAD + "".join(_suite_test(i) for i in range(5000)),
            "5000-tests-with-anchors": _SUITE_HEAD + "  - id: a\n    input: &q shared\n    criteria: c\n" + "".join(
                f"  - id: t{i}\n    input: *q\n    criteria: c{i}\n" for i in range(5000)),
            "5000-tests-one-broken-at-4500": _SUITE_HEAD + "".join(_suite_test(i) for i in range(4500)) + "  - id: [\n"
                + "".join(_suite_test(i) for i in range(4500, 5000)),
            "one-test-of-20mb": _SUITE_HEAD + "  - id: huge\n    input: |\n" + "      " + "x" * 100 + "\n" * 0
                + ("      " + "y" * 200 + "\n") * 95_000 + "    criteria: c\n",
            "one-test-20mb-line": _SUITE_HEAD + "  - id: huge\n    input: " + "z" * 20_000_000 + "\n    criteria: c\n",
            "one-test-200k-messages": _SUITE_HEAD + "  - id: many\n    input:\n" + "      - {role: user, content: x}\n" * 200_000
                + "    criteria: c\n",
        }
        for name, text in big_cases.items():
            full = f"streamed/check-{name}"
            if ONLY and ONLY not in full:
                continue
            problems = []
            if len(text) < 1_000_000:
                problem = _streamed_vs_whole(text, suite_path)
                if problem:
                    problems.append(problem)
            suite_path.write_text(text)
            ran = run_cli(["check", str(suite_path), "--format", "json"], env=env, cwd=root, timeout=120)
            problem = crashed(ran)
            if problem:
                problems.append(problem)
            elif ran.code not in (0, 1):
                problems.append(f"exit {ran.code}: {ran.err.strip()[-200:]}")
            tally.note(f"{full} ({len(text) / 1e6:.1f} MB, {ran.seconds:.1f} s, {ran.peak_kb // 1024} MB, exit {ran.code})",
                       "; ".join(problems) or None)
    finally:
        shutil.rmtree(root, ignore_errors=True)



_STAMP = re.compile(rb"\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}(?:[.-]\d{1,6})?Z")


def _result_files(out: Path) -> dict[str, bytes]:
    """A run's results files (not its journal, lock, report or costs), timestamps masked: what a batch
    run must write byte for byte as the interactive run (tests/batch/test_batch_run.py)."""
    files = {}
    for f in sorted(out.rglob("*")):
        if (f.is_file() and ".journal" not in f.name and not f.name.endswith((".lock", ".html", ".prev.jsonl"))
                and not f.name.endswith("_cost.json")):
            files[_STAMP.sub(b"<ts>", str(f.relative_to(out)).encode()).decode()] = _STAMP.sub(b"<ts>", f.read_bytes())
    return files


def _batch_run(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 180,
               preexec: Callable[[], None] | None = None, kill_after: float | None = None,
               sig: int = signal.SIGKILL) -> Ran:
    """`evalspec run … --batch` as a process; `kill_after`: signalled that many seconds in."""
    start = time.monotonic()
    proc = subprocess.Popen([*EVALSPEC, *args], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", start_new_session=True, preexec_fn=preexec)
    try:
        if kill_after is not None:
            try:
                out, err = proc.communicate(timeout=kill_after)
            except subprocess.TimeoutExpired:
                proc.send_signal(sig)
                out, err = proc.communicate(timeout=timeout)
        else:
            out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = None
    return Ran(code, out, err, [], time.monotonic() - start)


def _tiny_tmpfs(root: Path, name: str, kb: int, fill: bool = True, read_only: bool = False,
                leave: int = 0) -> Path | None:
    """A tmpfs of `kb` KB (full when `fill` but for `leave` bytes; read-only): a full or unwritable TMPDIR.
    None where mounting is not allowed (not root, no CAP_SYS_ADMIN)."""
    folder = root / name
    folder.mkdir(exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kb}k", "tmpfs", str(folder)],
                      capture_output=True).returncode != 0:
        return None
    if fill:
        with contextlib.suppress(OSError), open(folder / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
        if leave:
            os.truncate(folder / "filler", max(0, (folder / "filler").stat().st_size - leave))
    if read_only:
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], capture_output=True)
    return folder


def _unmount(folder: Path | None) -> None:
    if folder is not None:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


class _ReusedIds:
    """tests/fakebatch.py's server whose every second batch gets the id of the one before it (the service
    reusing an id: its status and results are the newer batch's)."""

    def __new__(cls, how: str) -> Any:
        from fakebatch import FakeBatchServer

        class Server(FakeBatchServer):  # type: ignore[misc]
            def _new(self, api: str, items: list[tuple[str, dict[str, Any]]], metadata: dict[str, Any],
                     input_file: str | None, state: str) -> Any:
                batch = super()._new(api, items, metadata, input_file, state)
                if how == "same-id-twice" and batch.number % 2 == 0:
                    previous = next((b for b in self.batches.values() if b.number == batch.number - 1), None)
                    if previous is not None and previous.api == batch.api:
                        del self.batches[batch.id]
                        batch.id = previous.id
                        self.batches[batch.id] = batch  # the earlier one is gone: its id is the new one's
                return batch

        return Server(polls_per_state=1)


def attack_waiting(tally: Tally) -> None:
    """Batch mode's answers waiting on disk (run/generate/waiting_answers.py, spill files in TMPDIR) and
    its journaled batches: a full, read-only, missing TMPDIR; file-size limits; runs killed (SIGKILL,
    SIGTERM) while batches are created, polled and collected; journals cut mid-line after a kill; a
    service giving two batches one id. Each run is then resumed without the fault. Broken: a traceback,
    a hang (180 s), an exit outside 0-3 and 130, results that differ from an interactive run's, a request
    sent twice in batches (`duplicates`), the run's key in its output."""
    from fakebatch import FakeBatchServer

    print("answers waiting on disk, journaled batches (sixth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-waiting-"))
    mounts: list[Path | None] = []
    try:
        bp = root / "b.weval.yml"
        bp.write_text("title: t\nmodels: [openai:gpt-4o-mini, anthropic:claude-3-5-haiku-latest]\n---\n" + "".join(
            f"- id: p{i}\n  prompt: question number {i} " + "pad " * 40 + "\n  should:\n"
            "    - $contains: question\n    - answers the question\n" for i in range(300)))
        base_args = ["run", "b.weval.yml", "--no-report", "--retries", "0", "--timeout", "20"]
        batch_args = ["--batch", "--batch-poll", "0.05", "--batch-size", "120"]

        def env_for(server: Any, **extra: str) -> dict[str, str]:
            return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "LANG": "C.UTF-8",
                    "NO_COLOR": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **server.env(), **extra}

        with FakeBatchServer(polls_per_state=1) as server:
            ran = _batch_run([*base_args, "-o", "interactive"], env_for(server), root)
            expected = _result_files(root / "interactive")
            if ran.code != 0 or not expected:
                tally.note("waiting/baseline", f"the interactive run failed (exit {ran.code}): {ran.err[-300:]}")
                return

        def judged(name: str, server: Any, out: Path, runs: list[Ran], lost: bool = False) -> None:
            """`lost`: the service lost batches (their requests are then asked one by one: not a duplicate)."""
            problems = []
            for i, r in enumerate(runs):
                if r.code == -signal.SIGTERM and "Running " not in r.err:
                    continue  # signalled while Python started, before the run's handler: nothing begun
                problem = crashed(r)
                if problem is None and r.code not in (0, 1, 2, 3, 130):
                    problem = f"exit {r.code}: {r.err.strip().splitlines()[-1:] if r.err.strip() else ''}"
                if problem:
                    problems.append(f"run {i + 1}: {problem}")
                if _leaks(r.out + r.err, server.env()["OPENAI_API_KEY"]):
                    problems.append(f"run {i + 1}: the key in its output")
            if not problems:
                got = _result_files(out)
                if got != expected:
                    differ = sorted(k for k in set(got) | set(expected) if got.get(k) != expected.get(k))
                    problems.append(f"results differ from the interactive run's: {differ[:3]}")
                dup = server.duplicates()
                if dup and not (lost and len(dup) <= server.chat_calls):
                    problems.append(f"{len(dup)} request(s) sent twice in batches")
            if os.environ.get("ATTACK_VERBOSE"):
                print("\n".join(r.err[:800] + " … " + r.err[-400:] for r in runs))
            tally.note(f"{name} ({server.creations} batches, {server.chat_calls} chat calls, exits "
                       f"{[r.code for r in runs]})", "; ".join(problems) or None)

        # TMPDIR full, read-only, missing, a file; file-size limits: the run says so, then --resume finishes it.
        faults: list[tuple[str, dict[str, str], Callable[[], None] | None]] = []
        full = _tiny_tmpfs(root, "full", 64)
        nearly = _tiny_tmpfs(root, "nearly", 512, leave=16 * 1024)  # room for tempfile's own probe, not a batch
        ro = _tiny_tmpfs(root, "ro", 64, fill=False, read_only=True)
        mounts += [full, nearly, ro]
        if full is not None:  # (tempfile finds it unwritable and takes /tmp)
            faults.append(("tmpdir-full", {"TMPDIR": str(full)}, None))
        if nearly is not None:
            faults.append(("tmpdir-16kb-free", {"TMPDIR": str(nearly)}, None))
        if ro is not None:
            faults.append(("tmpdir-read-only", {"TMPDIR": str(ro)}, None))
        (root / "a-file").write_text("x")
        faults += [("tmpdir-missing", {"TMPDIR": str(root / "nowhere")}, None),
                   ("tmpdir-a-file", {"TMPDIR": str(root / "a-file")}, None)]
        import resource
        for kb in (16, 128, 512, 2048):
            def limit(kb: int = kb) -> None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (kb * 1024, kb * 1024))
            faults.append((f"file-size-limit-{kb}kb", {}, limit))
        for name, extra_env, preexec in faults:
            full_name = f"waiting/{name}"
            if ONLY and ONLY not in full_name:
                continue
            with FakeBatchServer(polls_per_state=1) as server:
                out = root / "out"
                shutil.rmtree(out, ignore_errors=True)
                first = _batch_run([*base_args, "-o", "out", *batch_args], env_for(server, **extra_env), root,
                                   preexec=preexec)
                second = _batch_run([*base_args, "-o", "out", *batch_args, "--resume"], env_for(server), root)
                judged(full_name, server, out, [first, second])

        # Killed while batches are created, polled, collected (answers being written to disk), and while
        # the cells take them; then resumed.
        for sig_name, sig in (("SIGKILL", signal.SIGKILL), ("SIGTERM", signal.SIGTERM)):
            for at in (0.3, 0.8, 1.5, 2.5, 4.0, 6.0):
                full_name = f"waiting/killed-{sig_name}-at-{at}s"
                if ONLY and ONLY not in full_name:
                    continue
                with FakeBatchServer(polls_per_state=1) as server:
                    out = root / "out"
                    shutil.rmtree(out, ignore_errors=True)
                    first = _batch_run([*base_args, "-o", "out", *batch_args], env_for(server), root,
                                       kill_after=at, sig=sig)
                    if first.code == -signal.SIGKILL:
                        first = Ran(0, first.out, first.err, [], first.seconds)  # killed: its exit is ours
                    second = _batch_run([*base_args, "-o", "out", *batch_args, "--resume"], env_for(server), root)
                    judged(full_name, server, out, [first, second])

        # A journal cut mid-line after a kill while every batch was still running, then --resume.
        for cut in ("mid-header", "mid-first-batch-line", "mid-last-line", "last-line-without-newline",
                    "half", "all-but-8-bytes", "batch-lines-doubled", "batch-lines-only"):
            full_name = f"waiting/journal-{cut}"
            if ONLY and ONLY not in full_name:
                continue
            with FakeBatchServer(polls_per_state=1) as server:
                server.hold = True
                out = root / "out"
                shutil.rmtree(out, ignore_errors=True)
                env = env_for(server)
                proc = subprocess.Popen([*EVALSPEC, *base_args, "-o", "out", *batch_args], env=env, cwd=root,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
                end = time.monotonic() + 60
                while server.creations < 6 and time.monotonic() < end and proc.poll() is None:
                    time.sleep(0.05)
                time.sleep(0.5)
                proc.kill()
                proc.wait()
                journals = list(out.rglob("*.journal.jsonl"))
                if not journals:
                    tally.note(full_name, "no journal after the kill")
                    continue
                jpath = journals[0]
                data = jpath.read_bytes()
                lines = data.split(b"\n")
                batch_idx = [i for i, x in enumerate(lines) if b'"batch' in x[:40] or b'"t":"b' in x[:20]]
                if cut == "mid-header":
                    data = data[: len(lines[0]) // 2]
                elif cut == "mid-first-batch-line" and batch_idx:
                    start = sum(len(x) + 1 for x in lines[:batch_idx[0]])
                    data = data[: start + len(lines[batch_idx[0]]) // 2]
                elif cut == "mid-last-line":
                    body = data.rstrip(b"\n")
                    data = body[: body.rfind(b"\n") + 1 + (len(body) - body.rfind(b"\n")) // 2]
                elif cut == "last-line-without-newline":
                    data = data.rstrip(b"\n")
                elif cut == "half":
                    data = data[: len(data) // 2]
                elif cut == "all-but-8-bytes":
                    data = data[:-8]
                elif cut == "batch-lines-doubled":
                    data = b"\n".join(lines + [lines[i] for i in batch_idx]) + b"\n"
                elif cut == "batch-lines-only":
                    data = b"\n".join([lines[0]] + [lines[i] for i in batch_idx]) + b"\n"
                jpath.write_bytes(data)
                server.hold = False
                second = _batch_run([*base_args, "-o", "out", *batch_args, "--resume"], env, root)
                judged(f"{full_name} ({len(batch_idx)} batch lines)", server, out, [second])

        # A service giving a second batch the first one's id (the first one's status and results are lost):
        # the run must not take one batch's answers for the other's items; then a resume of such a journal.
        for how in ("same-id-twice",):
            full_name = f"waiting/{how}"
            if ONLY and ONLY not in full_name:
                continue
            with _ReusedIds(how) as server:
                out = root / "out"
                shutil.rmtree(out, ignore_errors=True)
                first = _batch_run([*base_args, "-o", "out", *batch_args], env_for(server), root)
                second = _batch_run([*base_args, "-o", "out", *batch_args, "--resume"], env_for(server), root)
                judged(full_name, server, out, [first, second], lost=True)
            with _ReusedIds(how) as server:  # killed while held, then resumed against the reused ids
                server.hold = True
                out = root / "out"
                shutil.rmtree(out, ignore_errors=True)
                first = _batch_run([*base_args, "-o", "out", *batch_args], env_for(server), root, kill_after=3.0)
                first = Ran(0, first.out, first.err, [], first.seconds) if first.code == -signal.SIGKILL else first
                server.hold = False
                second = _batch_run([*base_args, "-o", "out", *batch_args, "--resume"], env_for(server), root)
                judged(f"{full_name}-killed-then-resumed", server, out, [first, second], lost=True)
    finally:
        for m in mounts:
            _unmount(m)
        shutil.rmtree(root, ignore_errors=True)



def _hostile_answers() -> list[Any]:
    """Model answers (not echoes of the prompt) as a hostile or broken provider sends them."""
    payloads = REPORT_PAYLOADS
    replies: list[Any] = [Reply.ok(text=p + " " + p[::-1]) for p in payloads]
    replies.append(Reply.ok(text="".join(payloads) * 20_000))  # ~6 MB of them in one answer
    replies.append(Reply.ok(text="\n".join(f"<td onclick=window.__pwned=12>{i}</td>" for i in range(20_000))))
    replies.append(Reply.ok(text="[x](javascript:window.__pwned=13) ![y](x onerror=window.__pwned=14) "
                                 "<javascript:window.__pwned=15> &#106;avascript:window.__pwned=16"))
    replies.append(Reply.ok(text="\x1b]8;;javascript:window.__pwned=17\x1b\\click\x1b]8;;\x1b\\ \x07\x08\x7f\u202e"))
    # a lone surrogate and invalid UTF-8 in the provider's JSON
    replies.append(Reply.raw(200, b'{"choices":[{"message":{"role":"assistant","content":"\\ud800<img src=x '
                                  b'onerror=window.__pwned=18>"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}'))
    replies.append(Reply.raw(200, b'{"choices":[{"message":{"role":"assistant","content":"\xff\xfe<svg onload='
                                  b'window.__pwned=19>"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}',
                             **{"content-type": "application/json"}))
    replies.append(Reply.ok(text=payloads[0], tool_calls=[(payloads[1], {payloads[2]: payloads[0]}),
                                                          ("<b>tool</b>", [payloads[3]])]))
    return replies


def attack_report6(tally: Tally) -> None:
    """The report (HTML in headless Chromium, clicked through; Markdown) of a Weval and an AgentV run whose
    model ANSWERS are hostile: HTML, script and URL payloads, 6 MB of them in one answer, 20,000 table
    cells, Markdown links to javascript:, terminal hyperlinks, a lone surrogate and invalid UTF-8 in the
    provider's JSON, tool calls named and filled with payloads; the judge's reasons hold them too.
    Broken as in the report area."""
    print("report with hostile answers (sixth round)", flush=True)
    from playwright.sync_api import sync_playwright

    root = Path(tempfile.mkdtemp(prefix="attack-report6-"))
    try:
        project = root / "proj"
        (project / ".git").mkdir(parents=True)
        (project / ".agentv").mkdir()
        (project / ".agentv" / "targets.yaml").write_text(TARGETS)
        n = len(_hostile_answers())
        (project / "b.yml").write_text("title: hostile answers\nmodels: [openai:candidate]\n---\n" + "".join(
            f"- id: p{i}\n  prompt: question {i}\n  should: [{{$contains: question}}, {{$icontains: script}}]\n"
            for i in range(n)))
        (project / "s.eval.yaml").write_text("name: hostile\ndescription: answers\ntests:\n" + "".join(
            f"  - id: t{i}\n    input: question {i}\n    criteria: answers the question\n    assert:\n"
            "      - {type: contains, value: question}\n      - {type: llm-judge, prompt: judge it}\n" for i in range(n)))
        reports: list[tuple[str, Path]] = []
        with FakeProvider() as fake:
            env = base_env(fake, root)
            for fmt, target, args in (("weval", "b.yml", []), ("agentv", "s.eval.yaml", [])):
                fake.reset()
                replies = _hostile_answers()
                if fmt == "agentv":  # each answer then its judge's verdict, whose reasons hold the payloads
                    replies = [r for a in replies for r in (a, Reply.ok(text=json.dumps({
                        "score": 0.5, "hits": REPORT_PAYLOADS[:3], "misses": REPORT_PAYLOADS[3:6],
                        "reasoning": " ".join(REPORT_PAYLOADS)})))]
                fake.then(*replies)
                out = root / f"out-{fmt}"
                ran = run_cli(["run", target, "-o", str(out), "--retries", "0", "--timeout", "20",
                               "--concurrency", "1", *args], env=env, cwd=project, timeout=300)
                problem = crashed(ran) or (None if ran.code in (0, 1, 2, 3) else f"exit {ran.code}: {ran.err[-200:]}")
                tally.note(f"report6/{fmt}-run (exit {ran.code}, {len(fake.requests)} calls)", problem)
                found = list(out.rglob("report.html"))
                if not found:
                    tally.note(f"report6/{fmt}-written", "no report.html")
                    continue
                reports.append((fmt, found[0]))
                md = run_cli(["report", str(found[0].parent), "--format", "markdown"], env=env, cwd=project)
                problem = crashed(md)
                if problem is None:
                    outside_code = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", md.out, flags=re.S))
                    raw = [p for p in ("<script", "<img", "<svg", "<iframe", "<style", "<meta", "<object", "<a href",
                                       "<td onclick", "](javascript") if p in outside_code]
                    problem = f"raw HTML or links in the Markdown outside code: {raw}" if raw else None
                    raw_controls = _raw_controls(md.out)
                    if raw_controls:
                        problem = f"control characters printed raw: {raw_controls[:3]}"
                tally.note(f"report6/{fmt}-markdown", problem)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=[
                "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"])
            try:
                for fmt, report in reports:
                    for label, suffix in (("open", ""), ("hash-answer", "#p0/openai:candidate"),
                                          ("hash-payload", "#" + REPORT_PAYLOADS[1] + "/" + REPORT_PAYLOADS[0])):
                        name = f"report6/{fmt}-browser-{label}"
                        if ONLY and ONLY not in name:
                            continue
                        tally.note(name, _report_in_browser(browser, report, suffix, clicks=label == "open"))
            finally:
                browser.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)



AREAS: dict[str, Callable[[Tally], None]] = {
    "yaml": attack_yaml,
    "scoring": attack_scoring,
    "outside": attack_outside,
    "secrets": attack_secrets,
    "faults": attack_faults,
    "concurrent": attack_concurrent,
    "runs": attack_runs,
    "sandbox": attack_sandbox,
    "protocol": attack_protocol,
    # the fourth round
    "planted": attack_planted,
    "display": attack_display,
    "names": attack_names,
    "replies": attack_replies,
    "chains": attack_chains,
    "protocol4": attack_protocol4,
    # the fifth round
    "args": attack_args,
    "streams": attack_streams,
    "environment": attack_environment,
    "journal": attack_journal,
    "lsp5": attack_lsp5,
    "batch": attack_batch,
    "merge": attack_merge,
    "report": attack_report,
    # the sixth round
    "guard": attack_guard,
    "streamed": attack_streamed,
    "waiting": attack_waiting,
    "report6": attack_report6,
    # the seventh round (its probes: bench/attack_round7.py)
    **{name: (lambda tally, name=name: __import__("attack_round7").AREAS7[name](tally))
       for name in ("lsp7", "outside7", "secrets7", "resume7", "faults7")},
    # the eighth round (its probes: bench/attack_round8.py)
    **{name: (lambda tally, name=name: __import__("attack_round8").AREAS8[name](tally))
       for name in ("editor8", "report8", "check8", "files8", "replies8")},
    # the ninth round (its probes: bench/attack_round9.py)
    **{name: (lambda tally, name=name: __import__("attack_round9").AREAS9[name](tally))
       for name in ("state9", "show9", "memory9")},
    # the ninth round, run side (its probes: bench/attack_round9r.py)
    **{name: (lambda tally, name=name: __import__("attack_round9r").AREAS9R[name](tally))
       for name in ("wire9", "secrets9", "spell9", "scripts9")},
}


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="The attack run: hostile files, providers, clients and runs.")
    ap.add_argument("areas", nargs="*", metavar="AREA", help="areas to run (default: all): " + " ".join(AREAS))
    chosen = ap.parse_args(argv).areas or list(AREAS)
    unknown = [a for a in chosen if a not in AREAS]
    if unknown:  # not argparse's choices: with nargs="*" Python 3.11 checks the empty default against them
        ap.error(f"unknown area {', '.join(unknown)} (areas: {' '.join(AREAS)})")
    totals: dict[str, Tally] = {}
    for area in chosen:
        tally = totals[area] = Tally()
        AREAS[area](tally)
    print("\nsummary")
    for area, tally in totals.items():
        print(f"  {area:<11} {tally.tried:>4} probes, {len(tally.broken)} broken")
        for line in tally.broken:
            print(f"      {line}")
    return 1 if any(t.broken for t in totals.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
