"""The eighth attack round (issue 15, eighth look): what results look like where they are shown, what
`check` must never run, files a run writes into odd places, and provider replies no round sent.

Run through `bench/attack.py` (`python bench/attack.py editor8 report8 check8 files8 replies8`); this
module holds the probes, `attack.py` the harness they share.

  editor8   model answers, judge reasons, provider errors and the file's own names holding Markdown
            images and links (`![](https://…)`, `[x](command:…)`), raw HTML, code-span breakouts, OSC 8
            hyperlinks, ANSI, bidi overrides — run by the CLI, then read back by the language server from
            the output folder: hover (Markdown), code-lens titles, diagnostics; and the server's own
            hovers on a file's values (assertion types, `$ref` names). Broken: a live image or link to
            the attacker's host or a `command:` URI, raw HTML, or a control or bidi character in any
            of them.
  report8   the same text through `evalspec report --format markdown` (what CI pastes into a pull
            request) and the CLI's run summary. Broken: a live image, link, HTML or an @mention in
            the Markdown; a raw control character in what the CLI prints.
  check8    `$js` points, code judges, code-judge aggregators, prompt scripts, cli targets and workspace
            hooks that would leave a marker: `check`, `run --dry-run`, `report`, and every language-server
            feature on them, under strace. Broken: any program executed or the marker written.
  files8    the output folder a file, a FIFO, a symlink to a file; a results file and a journal cut in
            the middle of a record, then `--resume`; a full disk (a tmpfs of 64–512 KB) mid-run, then
            `--resume` on a roomy one; `$HOME`, `~` and `${{ VAR }}` in `-o` and in tests paths;
            include graphs that double at every level (2^40 expansions without a cycle), cycles spelt
            three ways. Broken: a traceback, a hang, results that do not parse, a file written where
            the path was not meant, an answered prompt asked again.
  replies8  provider replies with duplicate keys (a good `choices` then a bad one, and the reverse),
            `Retry-After` of a year, of −1 and of an HTTP date in 1970 and 9999, redirects (301, 307,
            308) to another port, to `//host`, with CR LF in `Location`, to `file:` and `data:`; choices
            all null but the last, content as a million parts, usage numbers of 10^400. Broken: a
            traceback, a hang past the bound, the key sent to another port or host, no error cell.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attack as A
from fakeprovider import FakeProvider, Reply

EVIL = "evil.example"
# Everything a renderer might act on: a Markdown image (fetched on hover), links (a `command:` one runs
# in VS Code when the Markdown is trusted), raw HTML, a code-span breakout, an OSC 8 hyperlink, ANSI,
# bidi overrides, a GitHub @mention and issue reference.
PAYLOAD = (f"![b](https://{EVIL}/beacon.png) <img src=https://{EVIL}/i.png onerror=alert(1)> "
           f"[approve](command:workbench.action.terminal.new) [site](https://{EVIL}/phish) "
           f"\x1b]8;;https://{EVIL}/osc8\x1b\\click\x1b]8;;\x1b\\ \u202eRTL\u202c \x1b[31mred\x1b[0m "
           "``` ` @octocat #1 <script>alert(2)</script>")
JUDGE_TAIL = "<reflection>{p}</reflection><classification>CLASS_MAJOR_ISSUE</classification>"

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# A live Markdown link or image to the attacker's host or a command URI: `](` after an unescaped `]`.
_LIVE_LINK = re.compile(r"(?<!\\)\]\(\s*(?:<)?(?:https?://" + re.escape(EVIL) + r"|command:)")
_RAW_HTML = re.compile(r"(?<!\\)<(?:img|script)\b", re.I)
_MENTION = re.compile(r"(?<![\w`\\])@octocat\b")


def _outside_code(text: str) -> str:
    """`text` without its fenced blocks and code spans (CommonMark: a run of n backticks not escaped, up
    to the next run of exactly n), where a link or HTML is shown as written."""
    text = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1`*[ \t]*$", "", text)
    out, i = [], 0
    for m in re.finditer(r"(?<!\\)`+", text):
        if m.start() < i:
            continue
        close = re.compile(r"(?<!`)" + "`" * len(m.group()) + r"(?!`)").search(text, m.end())
        if close is None:
            continue
        out.append(text[i:m.start()])
        i = close.end()
    return "".join(out) + text[i:]


def markdown_problems(text: str, what: str) -> list[str]:
    out = plain_problems(text, what)
    text = _outside_code(text)
    if _LIVE_LINK.search(text):
        out.append(f"{what}: a live link or image ({_LIVE_LINK.search(text).group()[:40]!r})")  # type: ignore[union-attr]
    if _RAW_HTML.search(text):
        out.append(f"{what}: raw HTML")
    return out


def plain_problems(text: str, what: str) -> list[str]:
    raw = sorted({repr(c) for c in _CONTROLS.findall(text)})
    return [f"{what}: raw {', '.join(raw)[:80]}"] if raw else []


# ------------------------------------------------------------------------------------------------
# editor8 and report8: the results of runs as shown


def _yaml_dq(text: str) -> str:
    return A._yaml_dq(text)


def env8(fake: FakeProvider, root: Path) -> dict[str, str]:
    """The harness's environment with the default Weval judges (OpenRouter) on the fake provider too."""
    return {**A.base_env(fake, root), "OPENROUTER_API_KEY": A.KEY, "OPENROUTER_BASE_URL": fake.url("/v1")}


def _hostile_project(root: Path) -> dict[str, Path]:
    """A Weval blueprint and an AgentV suite whose names and points hold the payload."""
    p = _yaml_dq(PAYLOAD)
    files = {}
    bp = root / "hostile.weval.yml"
    bp.write_text("title: t\nmodels: [openai:candidate]\n---\n"
                  f"- id: {_yaml_dq('p`x` ' + PAYLOAD[:60])}\n  prompt: hi\n"
                  f"  should:\n    - $contains: {_yaml_dq('absent ' + PAYLOAD)}\n    - $contains: {p}\n    - {p}\n"
                  "- id: plain\n  prompt: hi\n  should: [be kind]\n")
    files["weval"] = bp
    (root / ".agentv").mkdir(exist_ok=True)
    (root / ".agentv" / "targets.yaml").write_text(A.TARGETS)
    (root / "judge.py").write_text("import json, sys\nsys.stdin.read()\n"
                                   f"print(json.dumps({{'score': 0.1, 'reasoning': {PAYLOAD!r}, "
                                   f"'misses': [{PAYLOAD!r}]}}))\n")
    suite = root / "hostile.eval.yaml"
    suite.write_text("name: s\ndescription: d\nexecution:\n  target: default\ntests:\n"
                     f"  - id: {_yaml_dq('t1`x` ' + PAYLOAD[:60])}\n    input: hi\n    criteria: {p}\n"
                     f"    assert:\n      - {{type: contains, value: {p}}}\n"
                     f"      - {{type: code-judge, name: {_yaml_dq('cj ' + PAYLOAD)}, command: [python3, judge.py]}}\n"
                     "      - {type: llm-judge}\n")
    files["agentv"] = suite
    return files


def _run_hostile(root: Path, fake: FakeProvider, files: dict[str, Path], tally: A.Tally) -> str:
    """Run both files against answers holding the payload; the CLI's output must show no raw control."""
    printed = []
    answer = PAYLOAD + " " + JUDGE_TAIL.format(p=PAYLOAD) + ' {"score": 0.2, "reasoning": ' + json.dumps(PAYLOAD) + "}"
    for fmt, path in files.items():
        fake.reset()
        fake.answer = answer
        ran = A.run_cli(["run", str(path), "--retries", "0"], env=env8(fake, root), cwd=root, timeout=120)
        problems = [p for p in [A.crashed(ran)] if p] + plain_problems(_not_ours(ran.out + ran.err), "stdout/stderr")
        tally.note(f"report8/run-summary-{fmt} (exit {ran.code})", "; ".join(problems) or None)
        printed.append(ran.out)
    fake.answer = None
    return "\n".join(printed)


def _not_ours(text: str) -> str:
    """The CLI's output without evalspec's own styling sequences."""
    for seq in ("\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[1;31m", "\x1b[1;33m", "\x1b[1;34m", "\x1b[1;36m",
                "\x1b[1;32m", "\x1b[1;35m", "\r\x1b[K", "\x1b[K"):
        text = text.replace(seq, "")
    return text


def attack_report8(tally: A.Tally) -> None:
    print("results shown in reports (eighth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-report8-"))
    try:
        with FakeProvider() as fake:
            files = _hostile_project(root)
            _run_hostile(root, fake, files, tally)
            results = sorted(root.rglob("*_comparison.json")) + sorted(
                p for p in root.rglob("*.jsonl") if "journal" not in p.name and ".cache" not in str(p))
            for path in results:
                ran = A.run_cli(["report", str(path), "--format", "markdown"], env=env8(fake, root),
                                cwd=root, timeout=90)
                problems = [p for p in [A.crashed(ran)] if p] + markdown_problems(ran.out, "markdown")
                if _MENTION.search(ran.out):
                    problems.append("markdown: a live @mention")
                tally.note(f"report8/markdown/{path.name[:40]} (exit {ran.code})", "; ".join(problems) or None)
            if not results:
                tally.note("report8/markdown", "no results file to report on")
    finally:
        shutil.rmtree(root, ignore_errors=True)


class NotedLsp(A.RawLsp):
    """The harness's raw client, keeping the diagnostics the server publishes (by URI, the last set)."""

    def __init__(self, root: Path) -> None:
        self.published: dict[str, list[Any]] = {}
        super().__init__(root)

    def _take(self, msg: Any) -> None:
        if isinstance(msg, dict) and msg.get("method") == "textDocument/publishDiagnostics":
            params = msg.get("params") or {}
            self.published[params.get("uri")] = params.get("diagnostics") or []
        super()._take(msg)


def _lsp_init(server: A.RawLsp, root: Path) -> None:
    server.request("init", "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {
        "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]},
                         "publishDiagnostics": {}}}})
    server.wait("init", 30)
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})


def _results_restored(server: A.RawLsp, uri: str, ids: Iterator[int], bound: float = 40.0) -> list[Any]:
    """The code lenses once the earlier run's results are on them (or the last ones seen at `bound`)."""
    end = time.monotonic() + bound
    lenses: list[Any] = []
    while time.monotonic() < end:
        i = next(ids)
        server.request(i, "textDocument/codeLens", {"textDocument": {"uri": uri}})
        reply = server.wait(i, 10) or {}
        lenses = reply.get("result") or []
        titles = [((lens.get("command") or {}).get("title") or "") for lens in lenses]
        if any(re.search(r"\d\.\d\d|error|not scored", t) for t in titles):
            return lenses
        time.sleep(0.5)
    return lenses


def _editor_file(server: NotedLsp, path: Path, ids: Iterator[int], tally: A.Tally, tag: str) -> None:
    uri = path.as_uri()
    text = path.read_text()
    A._open(server, uri, text)
    lenses = _results_restored(server, uri, ids)
    problems: list[str] = []
    titles = [((lens.get("command") or {}).get("title") or "") for lens in lenses]
    if not any(re.search(r"\d\.\d\d|error|not scored", t) for t in titles):
        tally.note(f"editor8/{tag}/results-restored", f"no result lens within 40 s: {titles[:4]}")
        return
    for t in titles:
        problems += plain_problems(t, "lens title")
    positions = [(line, col) for line in range(len(text.splitlines())) for col in (0, 2, 4, 6, 10)]
    hovers = _hover_problems(server, uri, positions, ids, problems)
    end = time.monotonic() + 20
    while time.monotonic() < end and not any(d.get("source") != "evalspec" for d in server.published.get(uri, [])):
        time.sleep(0.3)  # the run's notes come with the restored results
    items = server.published.get(uri, [])
    if not any(re.search(r"failed|not scored|no score", str(d.get("message"))) for d in items):
        problems.append(f"no run note among {len(items)} diagnostics: {[d.get('message') for d in items][:3]}")
    for d in items:
        problems += plain_problems(str(d.get("message") or ""), "diagnostic")
    seen = sorted(set(problems))
    tally.note(f"editor8/{tag}/results ({hovers} hovers, {len(items)} diagnostics, {len(titles)} lenses)",
               "; ".join(seen)[:600] or None)


def _hover_problems(server: A.RawLsp, uri: str, positions: list[tuple[int, int]], ids: Iterator[int],
                    problems: list[str]) -> int:
    """Hover at each position: an unanswered hover, or Markdown that could fetch, run or render, goes
    into `problems`. How many hovers had something to show."""
    shown = 0
    for line, col in positions:
        i = next(ids)
        server.request(i, "textDocument/hover", A._at(uri, line, col))
        reply = server.wait(i, A.LSP_BOUND_S + 4)
        if reply is None:
            problems.append(f"hover {line}:{col} not answered")
            continue
        value = ((reply.get("result") or {}).get("contents") or {}).get("value") or ""
        shown += bool(value)
        problems += markdown_problems(value, f"hover {line}:{col}")
    return shown


def _file_hovers(server: A.RawLsp, root: Path, ids: Iterator[int], tally: A.Tally) -> None:
    """The server's own hovers over values a file chose: an assertion type, a `$ref` name, a model id."""
    p = _yaml_dq(PAYLOAD)
    cases = {
        "assertion-type": (root / "types.eval.yaml", "name: s\ndescription: d\ntests:\n  - id: t\n    input: hi\n"
                           f"    criteria: c\n    assert:\n      - type: {_yaml_dq('x![b](https://evil.example/t.png)')}\n"),
        "ref-name": (root / "refs.weval.yml", f"title: t\npoint_defs:\n  {_yaml_dq('r![b](https://evil.example/r.png)')}: "
                     f"{p}\nmodels: [openai:candidate]\n---\n- id: a\n  prompt: hi\n"
                     f"  should: [{{$ref: {_yaml_dq('r![b](https://evil.example/r.png)')}}}]\n"),
        "model-id": (root / "model.weval.yml", f"title: t\nmodels: [{_yaml_dq('openai:x![b](https://evil.example/m.png)')}]\n"
                     "---\n- id: a\n  prompt: hi\n  should: [be kind]\n"),
        "custom-type": (root / "custom.eval.yaml", "name: s\ndescription: d\ntests:\n  - id: t\n    input: hi\n"
                        f"    criteria: c\n    assert:\n      - type: {_yaml_dq('x<img src=https://evil.example/c.png>')}\n"),
    }
    for tag, (path, text) in cases.items():
        path.write_text(text)
        uri = path.as_uri()
        A._open(server, uri, text)
        problems: list[str] = []
        width = min(80, max(len(x) for x in text.splitlines()) + 1)
        _hover_problems(server, uri, [(line, col) for line in range(len(text.splitlines()))
                                      for col in range(0, width, 3)], ids, problems)
        tally.note(f"editor8/file-hover/{tag}", "; ".join(sorted(set(problems)))[:600] or None)


def _history_cases(root: Path) -> Iterator[tuple[str, Callable[[Path], None]]]:
    """Output folders (as a cloned repository may hold them) whose earlier results the server reads when
    a file is opened: (name, plant into the blueprints folder of `x.weval.yml`)."""
    head = json.dumps({"sourceBlueprintFileName": "x.weval.yml", "configId": "x", "runLabel": "lab"})[:-1]
    name = "lab_2026-01-01T00-00-00-000Z_comparison.json"

    def sparse(folder: Path) -> None:
        f = folder / name
        f.write_text(head + ', "allFinalAssistantResponses": {"p": {"m": "')
        os.truncate(f, 3 << 29)  # 1.5 GB: enough to show, kind to a shared machine
    yield "comparison-1.5gb-sparse", sparse

    def link(to: str) -> Callable[[Path], None]:
        return lambda folder: (folder / name).symlink_to(to)
    for target in ("/proc/self/fd/0", "/dev/stdin", "/dev/zero", "/proc/self/mem", "/dev/tty"):
        yield f"comparison-linked-to-{target}", link(target)

    def fifo(folder: Path) -> None:
        os.mkfifo(folder / name)
    yield "comparison-a-fifo", fifo

    def journal_line(folder: Path) -> None:
        j = folder / "lab.journal.jsonl"
        j.write_text(json.dumps({"t": "run", "v": 1, "kind": "weval", "file": str(folder.parents[3] / "x.weval.yml"),
                                 "config_id": "x", "run_label": "lab"}) + "\n" + '{"t":"gen","text":"')
        os.truncate(j, 3 << 29)
    yield "journal-1.5gb-line", journal_line

    def journal_fifo(folder: Path) -> None:
        os.mkfifo(folder / "lab.journal.jsonl")
    yield "journal-a-fifo", journal_fifo


def _editor_history(tally: A.Tally, root: Path, ids: Iterator[int]) -> None:
    for name, plant in _history_cases(root):
        if A.ONLY and A.ONLY not in f"editor8/history/{name}":
            continue
        project = root / f"h-{name.replace('/', '_')}"
        (project / ".git").mkdir(parents=True)
        bp = project / "x.weval.yml"
        text = "title: t\nmodels: [echo]\n---\n- id: p\n  prompt: hi\n  should: [$contains: hi]\n"
        bp.write_text(text)
        folder = project / "evalspec-results" / "live" / "blueprints" / "x"
        folder.mkdir(parents=True)
        plant(folder)
        server = NotedLsp(project)
        problems: list[str] = []
        peak = 0.0
        try:
            _lsp_init(server, project)
            A._open(server, bp.as_uri(), text)
            end = time.monotonic() + 30  # the history is read meanwhile: requests must keep their bound
            while time.monotonic() < end:
                for method, params in (("textDocument/hover", A._at(bp.as_uri(), 3, 2)),
                                       ("textDocument/codeLens", {"textDocument": {"uri": bp.as_uri()}})):
                    i = next(ids)
                    t0 = time.monotonic()
                    server.request(i, method, params)
                    if server.wait(i, A.LSP_BOUND_S + 4) is None:
                        problems.append(f"{method} not answered")
                    elif time.monotonic() - t0 > A.LSP_BOUND_S + 1:
                        problems.append(f"{method} took {time.monotonic() - t0:.1f} s")
                kids = A._children(server.proc.pid)
                peak = max(peak, *(A._rss_mb(p) for p in [server.proc.pid, *kids, *(g for k in kids for g in A._children(k))]))
                if problems or server.closed:
                    break
                time.sleep(1)
            if server.closed:
                problems.append("the server died")
            if peak > 1024:
                problems.append(f"the server reached {peak:.0f} MB")
        finally:
            server.stop()
        tally.note(f"editor8/history/{name} (peak {peak:.0f} MB)", "; ".join(sorted(set(problems))) or None)


def attack_editor8(tally: A.Tally) -> None:
    print("results shown in the editor (eighth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-editor8-"))
    (root / ".git").mkdir()
    ids = iter(range(10**7))
    try:
        with FakeProvider() as fake:
            files = _hostile_project(root)
            _run_hostile(root, fake, files, A.Tally())
            # a run whose every call fails with the payload as the provider's error
            errors = root / "errors.weval.yml"
            errors.write_text("title: t\nmodels: [openai:candidate]\n---\n- id: e\n  prompt: hi\n  should: [be kind]\n")
            fake.reset()
            fake.then(*[Reply.error(400, PAYLOAD)] * 10)
            A.run_cli(["run", str(errors), "--retries", "0"], env=env8(fake, root), cwd=root, timeout=120)
            files["errors"] = errors
            env_before = dict(os.environ)
            os.environ.update(env8(fake, root))
            server = NotedLsp(root)
            try:
                _lsp_init(server, root)
                for tag, path in files.items():
                    if A.ONLY and A.ONLY not in f"editor8/{tag}":
                        continue
                    _editor_file(server, path, ids, tally, tag)
                _file_hovers(server, root, ids, tally)
            finally:
                server.stop()
                os.environ.clear()
                os.environ.update(env_before)
        _editor_history(tally, root, ids)
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# check8: nothing in a file runs unless it is an explicit run


def _check8_project(root: Path, marks: Path) -> list[Path]:
    """Eval files whose every runnable part would leave a file in `marks` (and is visible to strace)."""
    def touch(name: str) -> str:
        return json.dumps(["sh", "-c", f"touch {marks / name}"])

    (root / ".agentv").mkdir(exist_ok=True)
    (root / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        f"    command: {json.dumps('sh -c ' + repr('touch ' + str(marks / 'cli')) + ' {PROMPT}')}\n"
        "  - name: shell\n    provider: cli\n"
        f"    command: \"touch {marks / 'cli2'}; echo {{PROMPT}}\"\n")
    (root / "judge.sh").write_text(f"#!/bin/sh\ntouch {marks / 'script'}\necho '{{\"score\": 1}}'\n")
    (root / "judge.sh").chmod(0o755)
    suite = root / "runs.eval.yaml"
    suite.write_text(
        "name: s\ndescription: d\nexecution:\n  target: default\n"
        "workspace:\n  template: tpl\n"
        f"  setup: {{command: {touch('setup')}}}\n  teardown: {{command: {touch('teardown')}}}\n"
        f"  hooks:\n    before_all: {{command: {touch('before_all')}}}\n"
        f"    before_each: {{command: {touch('before_each')}}}\n"
        "tests:\n  - id: t1\n    input: hi\n    criteria: c\n    assert:\n"
        f"      - {{type: code-judge, command: {touch('code-judge')}}}\n"
        "      - {type: code-judge, command: [./judge.sh]}\n"
        f"      - {{type: llm-judge, prompt: {{command: {touch('prompt-script')}}}}}\n"
        "      - type: composite\n        assert: [{type: contains, value: x, name: c1}]\n"
        f"        aggregator: {{type: code-judge, path: ./judge.sh}}\n"
        "      - {type: tool-trajectory, mode: any_order, minimums: {x: 1}}\n")
    (root / "tpl").mkdir(exist_ok=True)
    bp = root / "js.weval.yml"
    bp.write_text("title: t\nmodels: [openai:candidate]\npoint_defs:\n  d: \"while(true){}\"\n---\n"
                  "- id: a\n  prompt: hi\n  should:\n    - $js: \"while(true){}\"\n    - {$ref: d}\n"
                  "    - $js: \"throw {toString(){ for(;;){} }}\"\n"
                  "    - $tool_args_match: {name: x, args: \"while(true){}\"}\n")
    return [suite, bp]


_ALLOWED_EXEC = re.compile(r"(^|/)(time|python3?(\.\d+)?)$")


def attack_check8(tally: A.Tally) -> None:
    """`check`, `run --dry-run`, `report` and the language server on files whose every runnable part
    would leave a mark: under strace, no program but evalspec's own Python may start and no mark appear."""
    print("nothing runs outside a run (eighth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-check8-"))
    (root / ".git").mkdir()
    marks = root / "marks"
    marks.mkdir()
    try:
        files = _check8_project(root, marks)
        with FakeProvider() as fake:
            env = env8(fake, root)
            commands = []
            for f in files:
                commands += [(f"check/{f.name}", ["check", str(f)]),
                             (f"check-json/{f.name}", ["check", str(f), "--format", "json"]),
                             (f"dry-run/{f.name}", ["run", str(f), "--dry-run", "-o", str(root / "dry")])]
            commands.append(("check-folder", ["check", str(root)]))
            for name, args in commands:
                if A.ONLY and A.ONLY not in f"check8/{name}":
                    continue
                ran = _traced_exec(args, env, root)
                problems = [p for p in [A.crashed(ran)] if p]
                started = [p for p in ran.opened if not _ALLOWED_EXEC.search(p)]
                if started:
                    problems.append(f"started {sorted(set(started))[:4]}")
                left = sorted(p.name for p in marks.iterdir())
                if left:
                    problems.append(f"marks left: {left}")
                tally.note(f"check8/{name} (exit {ran.code})", "; ".join(problems) or None)
            _check8_editor(tally, root, marks, files, env)
            # The control: an explicit run does start them (else the probes above prove nothing).
            ran = A.run_cli(["run", str(files[0]), "--retries", "0", "--timeout", "5", "-o", str(root / "ran")],
                            env=env, cwd=root, timeout=120)
            left = sorted(p.name for p in marks.iterdir())
            tally.note(f"check8/control-an-explicit-run-does-run-them ({', '.join(left)})",
                       A.crashed(ran) or (None if {"cli", "code-judge", "setup", "before_all"} <= set(left)
                                          else f"the run left only {left}: the probes' shapes do not run"))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _traced_exec(args: list[str], env: dict[str, str], cwd: Path) -> A.Ran:
    """evalspec under strace, noting only the programs it (or anything it started) executed."""
    log = Path(tempfile.mkstemp(prefix="attack-exec-")[1])
    cmd = ["strace", "-f", "-qq", "-e", "trace=execve,execveat", "-e", "status=successful", "-o", str(log),
           *A.EVALSPEC, *args]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=90)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = None
    text = log.read_text(errors="replace")
    log.unlink()
    programs = re.findall(r'execve(?:at)?\((?:\d+, )?"([^"]*)"', text)
    return A.Ran(code, out, err, programs[1:], time.monotonic() - start)  # the first: evalspec itself


def _check8_editor(tally: A.Tally, root: Path, marks: Path, files: list[Path], env: dict[str, str]) -> None:
    """Every feature of the language server at every line of the files, under strace: nothing started."""
    log = root.parent / f"{root.name}-lsp.strace"
    command = ["strace", "-f", "-qq", "-e", "trace=execve,execveat", "-e", "status=successful", "-o", str(log),
               sys.executable, "-m", "evalspec_lsp.main"]
    env_before = dict(os.environ)
    os.environ.update(env)
    server = A.RawLsp(root, command)
    ids = iter(range(10**6))
    problems: list[str] = []
    try:
        A._initialized(server, root)
        for f in files:
            uri = f.as_uri()
            text = f.read_text()
            A._open(server, uri, text)
            doc = {"textDocument": {"uri": uri}}
            sent = []
            for method, params in [("textDocument/codeLens", doc), ("textDocument/documentSymbol", doc),
                                   ("textDocument/diagnostic", doc), ("textDocument/documentLink", doc),
                                   ("textDocument/foldingRange", doc)]:
                i = next(ids)
                server.request(i, method, params)
                sent.append(i)
            for line in range(len(text.splitlines())):
                for method in ("textDocument/hover", "textDocument/completion", "textDocument/definition"):
                    for col in (4, 12, 30):
                        i = next(ids)
                        server.request(i, method, A._at(uri, line, col))
                        sent.append(i)
                i = next(ids)
                rng = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 40}}
                server.request(i, "textDocument/codeAction", {**doc, "range": rng, "context": {"diagnostics": []}})
                sent.append(i)
            for i in sent:
                if server.wait(i, 20) is None:
                    problems.append(f"{f.name}: request {i} not answered")
                    break
        time.sleep(2)  # what a lens or a watcher might start late
    finally:
        server.stop()
        os.environ.clear()
        os.environ.update(env_before)
    text = log.read_text(errors="replace") if log.exists() else ""
    log.unlink(missing_ok=True)
    programs = re.findall(r'execve(?:at)?\((?:\d+, )?"([^"]*)"', text)[1:]
    started = [p for p in programs if not _ALLOWED_EXEC.search(p)]
    if started:
        problems.append(f"started {sorted(set(started))[:4]}")
    left = sorted(p.name for p in marks.iterdir())
    if left:
        problems.append(f"marks left: {left}")
    if not programs and not text:
        problems.append("strace saw nothing (the probe did not run)")
    tally.note(f"check8/editor-every-feature ({len(programs)} programs)", "; ".join(problems) or None)


# ------------------------------------------------------------------------------------------------
# files8: where a run writes, and what it reads back


def _files8_suite(root: Path, n: int = 30) -> Path:
    (root / ".agentv").mkdir(exist_ok=True)
    (root / ".agentv" / "targets.yaml").write_text(A.TARGETS)
    suite = root / "s.eval.yaml"
    suite.write_text("name: s\ndescription: d\nexecution:\n  target: default\ntests:\n" + "".join(
        f"  - id: t{i}\n    input: question {i}\n    criteria: c\n    assert: [{{type: contains, value: ECHO}}]\n"
        for i in range(n)))
    return suite


def _files8_blueprint(root: Path, n: int = 30) -> Path:
    bp = root / "b.weval.yml"
    bp.write_text("title: t\nmodels: [openai:candidate]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: question {i}\n  should: [$contains: ECHO]\n" for i in range(n)))
    return bp


def _results_ok(out: Path, since: float = 0.0) -> str | None:
    """Every results file under `out` written after `since` parses (JSON, or JSONL line by line). Journals
    are not results: a resumed run appends after a cut line, which every reader skips."""
    for p in out.rglob("*"):
        if not p.is_file() or p.is_symlink() or ".cache" in p.parts or p.suffix not in (".json", ".jsonl") \
                or ".journal" in p.name or p.stat().st_mtime < since:
            continue
        text = p.read_text(errors="replace")
        try:
            if p.suffix == ".json":
                json.loads(text)
            else:
                for line in text.splitlines():
                    if line.strip():
                        json.loads(line)
        except ValueError as e:
            return f"{p.name} does not parse: {e}"
    return None


def _asked(fake: FakeProvider) -> list[str]:
    out = []
    for r in fake.requests:
        with contextlib.suppress(ValueError, KeyError, IndexError, TypeError):
            msgs = r.json()["messages"]
            out.append(str(msgs[-1]["content"]))
    return out


def _cut_mid_record(path: Path) -> None:
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    keep = b"".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][: max(1, len(lines[len(lines) // 2]) // 2)]
    path.write_bytes(keep)


def _files8_cases(root: Path, fake: FakeProvider) -> Iterator[tuple[str, Callable[[], str | None]]]:
    env = env8(fake, root)
    suite = _files8_suite(root)
    bp = _files8_blueprint(root)

    def refused(args: list[str], what: str, must_say: str | None = None) -> str | None:
        ran = A.run_cli(args, env=env, cwd=root, timeout=60)
        if A.crashed(ran):
            return A.crashed(ran)
        if ran.code == 0:
            return f"{what}: exit 0"
        if must_say and must_say not in (ran.out + ran.err):
            return f"{what}: no clear message ({(ran.err or ran.out).strip()[-160:]!r})"
        return None

    def output_is(kind: str) -> Callable[[], str | None]:
        def probe() -> str | None:
            target = root / f"out-{kind}"
            if kind == "file":
                target.write_text("not a folder\n")
            elif kind == "fifo":
                os.mkfifo(target)
            elif kind == "link-to-file":
                (root / "plain.txt").write_text("x\n")
                target.symlink_to(root / "plain.txt")
            elif kind == "dev-null":
                target.symlink_to("/dev/null")
            before = {p: p.stat().st_size for p in root.glob("plain.txt")}
            problems = [refused(["run", str(f), "-o", str(target), "--retries", "0"], f.name) for f in (suite, bp)]
            if {p: p.stat().st_size for p in root.glob("plain.txt")} != before:
                problems.append("the linked file was written")
            return "; ".join(p for p in problems if p) or None
        return probe
    for kind in ("file", "fifo", "link-to-file", "dev-null"):
        yield f"output-folder-is-a-{kind}", output_is(kind)

    def cut_then_resume(fmt: str, which: str) -> Callable[[], str | None]:
        def probe() -> str | None:
            out = root / f"cut-{fmt}-{which}"
            path = suite if fmt == "agentv" else bp
            fake.reset()
            first = A.run_cli(["run", str(path), "-o", str(out), "--retries", "0"], env=env, cwd=root, timeout=120)
            if first.code != 0:
                return f"the first run failed: {A.crashed(first) or first.err[-200:]}"
            if which == "journal":
                victims = [p for p in out.rglob("*.journal.jsonl")]
            else:
                victims = [p for p in out.rglob("*.jsonl") if "journal" not in p.name and ".cache" not in p.parts] + \
                    [p for p in out.rglob("*_comparison.json")]
            if not victims:
                return f"no {which} file to cut"
            for v in victims:
                _cut_mid_record(v)
            time.sleep(0.05)
            cut_at = time.time()
            fake.reset()
            ran = A.run_cli(["run", str(path), "-o", str(out), "--retries", "0", "--resume"], env=env, cwd=root,
                            timeout=120)
            problems = [p for p in [A.crashed(ran)] if p]
            if ran.code not in (0, 1, 2, 3) and ran.code is not None:
                problems.append(f"exit {ran.code}")
            bad = _results_ok(out, cut_at)
            if bad and ran.code == 0:
                problems.append(bad)
            asked = _asked(fake)
            if len(asked) != len(set(asked)):
                problems.append(f"{len(asked) - len(set(asked))} prompt(s) asked twice by one resume")
            fake.reset()
            again = A.run_cli(["run", str(path), "-o", str(out), "--retries", "0", "--resume"], env=env, cwd=root,
                              timeout=120)
            if A.crashed(again) or again.code != 0:
                problems.append(f"a second resume: exit {again.code} {A.crashed(again) or ''}")
            elif fake.requests:
                problems.append(f"a second resume asked {len(fake.requests)} call(s) again")
            if which == "results" and fmt == "agentv":
                rep = A.run_cli(["report", str(victims[0]), "--format", "markdown"], env=env, cwd=root, timeout=60)
                if A.crashed(rep):
                    problems.append("report of the cut file: " + str(A.crashed(rep)))
            return "; ".join(problems) or None
        return probe
    for fmt in ("agentv", "weval"):
        for which in ("results", "journal"):
            yield f"{which}-cut-mid-record-then-resume-{fmt}", cut_then_resume(fmt, which)

    def full_disk(kb: int, fmt: str) -> Callable[[], str | None]:
        def probe() -> str | None:
            (root / f"disk-{fmt}-{kb}").mkdir()
            path = _files8_suite(root / f"disk-{fmt}-{kb}", 200) if fmt == "agentv" else \
                _files8_blueprint(root / f"disk-{fmt}-{kb}", 200)
            mnt = A._tiny_tmpfs(root, f"tmpfs-{fmt}-{kb}", kb, fill=False)
            if mnt is None:
                return None  # not root: nothing to try (counted as tried)
            try:
                fake.reset()
                ran = A.run_cli(["run", str(path), "-o", str(mnt / "o"), "--retries", "0"], env=env,
                                cwd=path.parent, timeout=180)
                problems = [p for p in [A.crashed(ran)] if p]
                if ran.code == 0 and kb < 256:
                    problems.append("exit 0 on a full disk")
                first = set(_asked(fake))
                subprocess.run(["mount", "-o", "remount,size=65536k", str(mnt)], capture_output=True)
                fake.reset()
                again = A.run_cli(["run", str(path), "-o", str(mnt / "o"), "--retries", "0", "--resume"], env=env,
                                  cwd=path.parent, timeout=180)
                if A.crashed(again):
                    problems.append("resume: " + str(A.crashed(again)))
                elif again.code != 0:
                    problems.append(f"resume on a roomy disk: exit {again.code}: {(again.err or again.out).strip()[-200:]!r}")
                bad = _results_ok(mnt / "o")
                if bad:
                    problems.append("after the resume: " + bad)
                twice = first & set(_asked(fake))
                journals = list((mnt / "o").rglob("*.journal.jsonl"))
                recorded = sum(1 for j in journals for line in j.read_text(errors="replace").splitlines() if '"response"' in line)
                if len(twice) > 32 + 200 - recorded:
                    problems.append(f"{len(twice)} answered prompt(s) asked again")
                return "; ".join(problems) or None
            finally:
                A._unmount(mnt)
        return probe
    for kb in (64, 128, 512):
        for fmt in ("agentv", "weval"):
            yield f"full-disk-{kb}k-then-resume-{fmt}", full_disk(kb, fmt)

    def literal_paths(spelling: str) -> Callable[[], str | None]:
        def probe() -> str | None:
            home = Path(env["HOME"])
            before = {str(p) for p in home.rglob("*")} if home.exists() else set()
            ran = A.run_cli(["run", str(bp), "-o", spelling, "--retries", "0"], env={**env, "OUT": "expanded"},
                            cwd=root, timeout=120)
            problems = [p for p in [A.crashed(ran)] if p]
            new_in_home = {str(p) for p in home.rglob("*")} - before if home.exists() else set()
            outside_cwd = [p for p in new_in_home if not p.startswith(str(root) + "/")]
            if outside_cwd:
                problems.append(f"wrote under $HOME outside the project: {sorted(outside_cwd)[:2]}")
            if (root / "expanded").exists():
                problems.append("$OUT was expanded")
            return "; ".join(problems) or None
        return probe
    for spelling in ("$HOME/o", "${HOME}/o", "$OUT", "~nobody/o", "%HOME%/o", "${{ HOME }}/o"):
        yield f"output-spelt-{spelling}", literal_paths(spelling)

    def include_graph(kind: str) -> Callable[[], str | None]:
        def probe() -> str | None:
            folder = root / f"inc-{kind}"
            folder.mkdir()
            (folder / ".agentv").mkdir()
            (folder / ".agentv" / "targets.yaml").write_text(A.TARGETS)
            if kind == "doubling":
                for i in range(40):
                    (folder / f"l{i}.yaml").write_text(f"- file://l{i + 1}.yaml\n- file://l{i + 1}.yaml\n"
                                                       f"- {{id: x{i}, input: hi, criteria: c}}\n")
                (folder / "l40.yaml").write_text("- {id: leaf, input: hi, criteria: c}\n")
                top = "tests:\n  - file://l0.yaml\n  - file://l0.yaml\n"
            elif kind == "cycle-three-spellings":
                (folder / "sub").mkdir()
                (folder / "a.yaml").write_text("- file://./sub/../b.yaml\n- {id: a, input: hi, criteria: c}\n")
                (folder / "b.yaml").write_text("- file://sub/c.yaml\n")
                (folder / "sub" / "c.yaml").write_text("- file://../a.yaml\n- file://.//a.yaml\n- file://al.yaml\n")
                (folder / "sub" / "al.yaml").symlink_to(folder / "a.yaml")
                top = "tests:\n  - file://a.yaml\n  - file://./a.yaml\n"
            elif kind == "suite-includes-itself":
                top = "tests:\n  - file://s.eval.yaml\n  - file://*.eval.yaml\n  - file://./s.eval.yaml\n"
            else:  # glob-doubling: every level's glob matches the next level twice over
                for i in range(30):
                    (folder / f"g{i}a.yaml").write_text(f"- file://g{i + 1}*.yaml\n")
                    (folder / f"g{i}b.yaml").write_text(f"- file://g{i + 1}*.yaml\n")
                (folder / "g30a.yaml").write_text("- {id: leaf, input: hi, criteria: c}\n")
                top = "tests:\n  - file://g0*.yaml\n"
            suite = folder / "s.eval.yaml"
            suite.write_text("name: s\ndescription: d\nexecution:\n  target: default\n" + top)
            problems = []
            for args in (["check", str(suite)], ["run", str(suite), "--dry-run", "-o", str(folder / "o")]):
                ran = A.run_cli(args, env=env, cwd=folder, timeout=60)
                if A.crashed(ran):
                    problems.append(f"{args[0]}: {A.crashed(ran)}")
                elif ran.peak_kb > 600_000:
                    problems.append(f"{args[0]}: {ran.peak_kb // 1024} MB")
            return "; ".join(problems) or None
        return probe
    for kind in ("doubling", "cycle-three-spellings", "suite-includes-itself", "glob-doubling"):
        yield f"includes-{kind}", include_graph(kind)


ESCAPE = "atk8esc"
HOSTILE_MODEL_NAMES = [f"../../../../../tmp/{ESCAPE}", f"a/../../{ESCAPE}", "..", ".", f"a\nb{ESCAPE}",
                       f"a\x00b{ESCAPE}", "x" * 5000, f"%2e%2e%2f{ESCAPE}", f"..\\..\\{ESCAPE}",
                       f"/tmp/{ESCAPE}", f"~/{ESCAPE}", f"\u202e{ESCAPE}", "\U0001f642" * 300]


def _names8_cases(root: Path, fake: FakeProvider) -> Iterator[tuple[str, Callable[[], str | None]]]:
    """Model ids and AgentV target names that are paths: they name results files and folders."""
    env = env8(fake, root)
    for i, name in enumerate(HOSTILE_MODEL_NAMES):
        def weval(name: str = name, i: int = i) -> str | None:
            folder = root / f"m{i}"
            folder.mkdir()
            bp = folder / "b.weval.yml"
            bp.write_text(f"title: t\nmodels: [{_yaml_dq('openai:' + name)}, openai:candidate]\n---\n"
                          "- id: p\n  prompt: hi\n  should: [$contains: ECHO]\n")
            return _ran_inside(["run", str(bp), "-o", str(folder / "o"), "--retries", "0"], env, folder)
        yield f"model-id-{i}-{name[:24]!r}", weval

        def agentv(name: str = name, i: int = i) -> str | None:
            folder = root / f"t{i}"
            (folder / ".agentv").mkdir(parents=True)
            (folder / ".agentv" / "targets.yaml").write_text(A.TARGETS.replace("name: default", f"name: {_yaml_dq(name)}"))
            suite = folder / "s.eval.yaml"
            suite.write_text(f"name: s\ndescription: d\nexecution:\n  target: {_yaml_dq(name)}\n"
                             "tests:\n  - id: t\n    input: hi\n    criteria: c\n    assert: [{type: contains, value: ECHO}]\n")
            return _ran_inside(["run", str(suite), "-o", str(folder / "o"), "--retries", "0"], env, folder)
        yield f"target-name-{i}-{name[:24]!r}", agentv


def _ran_inside(args: list[str], env: dict[str, str], folder: Path) -> str | None:
    """Run; everything it wrote is under `folder / "o"`, nothing named like the escape anywhere near."""
    before = {str(p) for p in folder.rglob("*")}
    ran = A.run_cli(args, env=env, cwd=folder, timeout=120)
    problems = [p for p in [A.crashed(ran)] if p]
    after = {str(p) for p in folder.rglob("*")} - before
    strays = [p for p in after if not p.startswith(str(folder / "o"))]
    if strays:
        problems.append(f"wrote outside the output folder: {sorted(strays)[:2]}")
    escaped = [str(p) for base in (Path("/tmp"), folder.parent, Path(env["HOME"]))
               for p in base.glob(f"*{ESCAPE}*")]
    if escaped:
        problems.append(f"an escaped name: {escaped[:2]}")
        for p in escaped:
            with contextlib.suppress(OSError):
                shutil.rmtree(p) if Path(p).is_dir() else os.unlink(p)
    refused = ran.code == 2 and "nothing was run" in ran.out + ran.err  # the id is an error in `check`
    if not refused and not [p for p in after if p.endswith("_comparison.json") or (
            p.endswith(".jsonl") and "journal" not in p and ".cache" not in p)]:
        problems.append(f"no results written (exit {ran.code}): the probe proved nothing")
    too_long = [p for p in after if any(len(part.encode()) > 255 for part in Path(p).parts)]
    if too_long:
        problems.append("a file name over 255 bytes")
    return "; ".join(problems) or None


def attack_files8(tally: A.Tally) -> None:
    print("files a run writes and reads back (eighth round)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="attack-files8-"))
    (root / ".git").mkdir()
    try:
        with FakeProvider() as fake:
            for name, probe in [*_files8_cases(root, fake), *_names8_cases(root, fake)]:
                if A.ONLY and A.ONLY not in f"files8/{name}":
                    continue
                try:
                    problem = probe()
                except Exception as e:  # the harness's own failure is a finding to look at, not a crash
                    problem = f"the probe failed: {type(e).__name__}: {e}"
                tally.note(f"files8/{name}", problem)
    finally:
        for m in root.glob("tmpfs-*"):
            A._unmount(m)
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# replies8: provider replies no round sent, and redirects to a listener that records the key


def _replies8_cases(canary: int) -> Iterator[tuple[str, A.Behaviour]]:
    ok = {"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    yield "dup/bad-then-good-choices", A._json200(b'{"choices": null, "choices": [{"message": {"content": "hi"}}]}')
    yield "dup/good-then-list-message", A._json200(b'{"choices": [{"message": {"content": "hi"}}], '
                                                   b'"choices": [{"message": [1, 2]}]}')
    yield "dup/usage-twice", A._json200(b'{"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": 1},'
                                        b' "usage": {"prompt_tokens": 1e400, "completion_tokens": -5}}')
    yield "choices/null-but-last", A._json200({"choices": [None, None, {"message": {"content": "hi"}}]})
    yield "choices/a-map", A._json200({"choices": {"0": {"message": {"content": "hi"}}}})
    yield "choices/200k-empty", A._json200(b'{"choices": [' + b",".join([b"{}"] * 200_000) + b"]}")
    yield "content/200k-parts", A._json200({"choices": [{"message": {"content": [{"type": "text", "text": "a"}] * 200_000}}]})
    yield "content/parts-of-wrong-types", A._json200({"choices": [{"message": {"content": [None, 1, [], {"text": 5},
                                                                                          {"type": "text"}]}}]})
    yield "usage/2^80-and-nan", A._json200(b'{"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": '
                                           b'1208925819614629174706176, "completion_tokens": NaN, "total_tokens": -Infinity}}')
    yield "usage/cost-fields-huge", A._json200({**ok, "usage": {"prompt_tokens": 1, "completion_tokens": 1, "cost": 1e308,
                                                                "prompt_tokens_details": {"cached_tokens": 10**30}}})
    yield "body/utf8-bom", A._reply(200, b"\xef\xbb\xbf" + json.dumps(ok).encode(), "content-type: application/json")
    yield "body/utf16-bom-no-charset", A._reply(200, "\ufeff".encode("utf-16-le") + json.dumps(ok).encode("utf-16-le"),
                                                "content-type: application/json")
    yield "body/json-then-garbage", A._reply(200, json.dumps(ok).encode() + b"\x00\xff garbage {",
                                             "content-type: application/json")
    yield "body/two-json-documents", A._reply(200, json.dumps(ok).encode() * 2, "content-type: application/json")
    yield "body/sse-to-a-plain-call", A._reply(200, b"data: " + json.dumps(ok).encode() + b"\n\ndata: [DONE]\n\n",
                                               "content-type: text/event-stream")
    for when in ("Fri, 31 Dec 9999 23:59:59 GMT", "Thu, 01 Jan 1970 00:00:00 GMT", "31536000", "-1", "1e9", "0x10",
                 "Mon, 99 Foo 2026 99:99:99 GMT", "\u00a0", "10, 20"):
        yield f"429/retry-after-{when[:16]}", A._reply(429, b'{"error": {"message": "slow"}}', f"retry-after: {when}"
                                                       .encode().decode("latin-1"))
    yield "429/two-retry-afters", A._reply(429, b"{}", "retry-after: 0", "retry-after: 31536000")
    yield "429/reset-headers-a-year", A._reply(429, b"{}", "x-ratelimit-reset-requests: 8760h", "x-ratelimit-remaining-requests: 0",
                                               "anthropic-ratelimit-requests-reset: 9999-12-31T23:59:59Z")
    yield "429/reset-headers-past", A._reply(429, b"{}", "x-ratelimit-reset-requests: -5s", "x-ratelimit-reset-tokens: 1970-01-01T00:00:00Z",
                                             "retry-after-ms: -1e308")
    target = f"127.0.0.1:{canary}"
    for status in (301, 302, 303, 307, 308):
        yield f"redirect/{status}-other-port", A._reply(status, b"", f"location: http://{target}/v1/chat/completions")
    yield "redirect/307-localhost-name", A._reply(307, b"", f"location: http://localhost:{canary}/v1/chat/completions")
    yield "redirect/307-scheme-relative", A._reply(307, b"", f"location: //{target}/v1/chat/completions")
    yield "redirect/307-user-info", A._reply(307, b"", f"location: http://user:pw@{target}/v1/chat/completions")
    yield "redirect/307-data-url", A._reply(307, b"", "location: data:application/json,{\"choices\":[]}")
    yield "redirect/307-to-https-other-port", A._reply(307, b"", f"location: https://{target}/v1/chat/completions")
    yield "redirect/307-ipv6-loopback", A._reply(307, b"", f"location: http://[::1]:{canary}/v1/chat/completions")
    yield "redirect/307-decimal-ip", A._reply(307, b"", f"location: http://2130706433:{canary}/v1/chat/completions")


def attack_replies8(tally: A.Tally) -> None:
    """Each reply against a one-prompt Weval run on OpenAI, Anthropic and Gemini; a canary listener on
    another port stands where redirects point. Broken: a traceback, a run past 60 s, no run_finished, a
    canary request carrying the key (in a header or the URL)."""
    print("provider replies (eighth round)", flush=True)
    with A.RawServer() as server, FakeProvider() as canary:
        canary_port = canary.port
        for name, behaviour in _replies8_cases(canary_port):
            if A.ONLY and A.ONLY not in f"replies8/{name}":
                continue
            for model in ("openai:candidate", "anthropic:claude-x", "google:gemini-x"):
                if name.startswith("usage/") and not model.startswith("openai"):
                    continue  # OpenAI's usage fields
                root = Path(tempfile.mkdtemp(prefix="attack-replies8-"))
                try:
                    canary.reset()
                    bp = root / "b.yml"
                    bp.write_text(f"title: t\nmodels: [{model}]\n---\n- id: p\n  prompt: hello\n  should: [$contains: hi]\n")
                    server.behaviour = behaviour
                    base = f"http://127.0.0.1:{server.port}"
                    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root), "OPENAI_API_KEY": A.KEY,
                           "ANTHROPIC_API_KEY": A.KEY, "GEMINI_API_KEY": A.KEY, "GOOGLE_API_KEY": A.KEY,
                           "OPENAI_BASE_URL": base + "/v1", "ANTHROPIC_BASE_URL": base, "GEMINI_BASE_URL": base,
                           "GOOGLE_BASE_URL": base, "NO_COLOR": "1"}
                    ran = A.run_cli(["run", str(bp), "-o", str(root / "out"), "--timeout", "3", "--retries", "1",
                                     "--rate-limit-retries", "3", "--max-wait", "10", "--no-report", "--json"],
                                    env=env, cwd=root, timeout=60)
                    problems = [p for p in [A.crashed(ran)] if p]
                    if not problems and ran.code not in (0, 1, 3):
                        problems.append(f"exit {ran.code}: {ran.err.strip().splitlines()[-1:]}")
                    if not problems and '"type":"run_finished"' not in ran.out:
                        problems.append("no run_finished event")
                    for r in canary.requests:
                        carried = [k for k, v in r.headers.items() if A.KEY in v] + \
                            [k for k, v in r.query.items() if any(A.KEY in x for x in v)]
                        if carried:
                            problems.append(f"the key went to the other port in {carried}")
                    tally.note(f"replies8/{name}/{model.split(':')[0]} ({ran.seconds:.1f} s, exit {ran.code}, "
                               f"{len(canary.requests)} at the canary)", "; ".join(problems) or None)
                finally:
                    shutil.rmtree(root, ignore_errors=True)


AREAS8: dict[str, Callable[[A.Tally], None]] = {
    "editor8": attack_editor8,
    "report8": attack_report8,
    "check8": attack_check8,
    "files8": attack_files8,
    "replies8": attack_replies8,
}
