"""The ninth attack round (issue 15, ninth look): the language server's state over time, and results
folders that are someone else's when the editor shows them.

Run through `bench/attack.py` (`python bench/attack.py state9 show9 memory9`); this module holds the
probes, `attack.py` the harness they share (the raw LSP client, the tallies).

  state9    through the guard: hundreds of workspace folders added and removed (the document's own among
            them, `/`, `/proc`, junk), settings of the wrong types, nested 10,000 deep, 5 MB strings, a
            `run.output` of `/`, `/proc`, `~`, a file, a FIFO, `/dev/zero`, then opening a file (its
            earlier results are looked for there) and a Run; file renames and deletes of open and
            unopened documents, 100,000 watched-file events for distinct paths in one message and in
            1,000; a Run then the document edited, closed and reopened, two runs of one file under two
            URIs at once, `evalspec.run` for 5,000 URIs never opened; codeLens/resolve and
            completionItem/resolve with forged data naming another file's items. Broken as `protocol`.
  show9     "show results" (`evalspec.showResults`) and `evalspec report` on a results folder planted
            as a cloned repository's would be: the comparison file a link to a file outside the
            project, to /dev/zero, a FIFO; the cost file beside it a FIFO, /dev/zero, a link out; an
            AgentV results file whose first line is 1.5 GB of zeros, and whose journal names an eval
            file outside the project. Broken: a file under the outside folder opened (an audit hook in
            every evalspec process), its marker in a reply or report, a request unanswered past its
            bound, the server past 1 GB or left running after its guard is gone, `report` past 60 s.
  memory9   what the server keeps over time (RSS of the server process; a leak is a finding): 2,000
            blueprints of 200 KB opened and closed, 10,000 edits of a 1 MB blueprint, 200,000 `$/setTrace`
            notifications, and the count of handlers pygls keeps (`evalspec/workers`). Broken: the
            server past 400 MB, or more than a few handlers kept once the messages are answered.
"""

from __future__ import annotations

import contextlib
import json
import os
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

# ------------------------------------------------------------------------------------------------
# state9: the server's state over time, through the protocol area's harness


def _state9_cases(root: Path) -> Iterator[tuple[str, Callable[[A.RawLsp, str], list[Any]]]]:
    ids = iter(range(10**6))
    hover = "textDocument/hover"
    os.mkfifo(root / "fifo-out")
    (root / "a-file").write_text("x")
    (root / "cases.jsonl").write_text(json.dumps({"id": "t", "criteria": "c", "input": "hi"}) + "\n")
    suite = "name: s\ndescription: d\ntests: ./cases.jsonl\n"
    (root / "reads.eval.yaml").write_text(suite)

    def notify(s: A.RawLsp, method: str, params: Any) -> None:
        s.send({"jsonrpc": "2.0", "method": method, "params": params})

    def then(act: Callable[[A.RawLsp, str], None], *methods: str,
             uri_of: Callable[[str], str] = lambda u: u) -> Callable[[A.RawLsp, str], list[Any]]:
        def run(s: A.RawLsp, u: str) -> list[Any]:
            act(s, u)
            sent = []
            for m in methods or (hover, "textDocument/codeLens", "textDocument/documentSymbol"):
                i = next(ids)
                s.request(i, m, A._at(uri_of(u), 3, 4) if m == hover else {"textDocument": {"uri": uri_of(u)}})
                sent.append(i)
            return sent
        return run

    def folders(added: list[Any], removed: list[Any]) -> Callable[[A.RawLsp, str], None]:
        return lambda s, u: notify(s, "workspace/didChangeWorkspaceFolders", {"event": {"added": added, "removed": removed}})
    own = {"uri": root.as_uri(), "name": "own"}
    many = [{"uri": (root / f"w{i}").as_uri(), "name": f"w{i}"} for i in range(500)]
    yield "9/folders-500-added-then-removed", then(lambda s, u: (folders(many, [])(s, u), folders([], many)(s, u)))
    yield "9/folders-own-removed-then-added-twice", then(lambda s, u: (folders([], [own])(s, u),
                                                                       folders([own, own], [])(s, u)))
    yield "9/folders-root-proc-and-junk", then(folders(
        [{"uri": "file:///", "name": "/"}, {"uri": "file:///proc", "name": "p"}, {"uri": "file:///dev/zero", "name": "z"},
         {"uri": "", "name": ""}, {"uri": "file://" + "x" * 100_000, "name": "long"}], [{"uri": "nope:", "name": None}]))
    yield "9/folders-removed-never-added", then(folders([], [{"uri": f"file:///gone/{i}", "name": str(i)} for i in range(2000)]))
    yield "9/folders-1000-messages", then(lambda s, u: [folders([many[i % 500]], [many[(i + 1) % 500]])(s, u)
                                                        for i in range(1000)])

    def settings(value: Any) -> Callable[[A.RawLsp, str], None]:
        return lambda s, u: notify(s, "workspace/didChangeConfiguration", {"settings": value})
    deep: Any = 1
    for _ in range(10_000):
        deep = {"a": deep}
    # a raw message: json.dumps of a 10,000-deep object overflows Python's encoder
    raw_deep = ('{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"evalspec":'
                + '{"run":' * 10_000 + "1" + "}" * 10_000 + "}}}")
    yield "9/settings-10000-deep", then(lambda s, u: s.send_raw(b"Content-Length: %d\r\n\r\n" % len(raw_deep)
                                                                + raw_deep.encode()))
    yield "9/settings-500-deep-dict", then(settings(json.loads('{"evalspec":' * 500 + "1" + "}" * 500)))
    for label, value in [("wrong-types", {"evalspec": {"run": {"output": 5, "models": "echo", "cache": "yes",
                                                               "concurrency": "9", "timeoutSeconds": "1",
                                                               "batchModels": {"a": 1}, "maxCost": [1]},
                                                       "debounceMs": "x", "requestBudgetMs": None}}),
                         ("huge-strings", {"evalspec": {"run": {"output": "o" * 5_000_000, "models": ["m" * 1_000_000]}}}),
                         ("output-root", {"evalspec": {"run": {"output": "/"}}}),
                         ("output-proc", {"evalspec": {"run": {"output": "/proc"}}}),
                         ("output-home", {"evalspec": {"run": {"output": "~"}}}),
                         ("output-a-file", {"evalspec": {"run": {"output": str(root / "a-file")}}}),
                         ("output-fifo", {"evalspec": {"run": {"output": str(root / "fifo-out")}}}),
                         ("output-dev-zero", {"evalspec": {"run": {"output": "/dev/zero"}}}),
                         ("output-nul", {"evalspec": {"run": {"output": "a\x00b"}}}),
                         ("null", None), ("number", 5), ("string", "x" * 1_000_000)]:
        other = (root / f"s-{label}.weval.yml").as_uri()
        yield f"9/settings-{label}-then-open", then(
            lambda s, u, v=value, o=other: (settings(v)(s, u), A._open(s, o, A.GOOD)), uri_of=lambda u, o=other: o)
        yield f"9/settings-{label}-then-run", then(lambda s, u, v=value: (settings(v)(s, u), s.request(
            next(ids), "workspace/executeCommand", {"command": "evalspec.run", "arguments": [{"uri": u, "model": "echo"}]})))

    far = Path(tempfile.gettempdir()) / "attack9-far.weval.yml"

    def renames(s: A.RawLsp, u: str) -> None:
        files = [{"oldUri": u, "newUri": far.as_uri()}, {"oldUri": far.as_uri(), "newUri": u},
                 {"oldUri": u, "newUri": u}, {"oldUri": "", "newUri": None}, {"oldUri": u, "newUri": "file:///dev/zero"}]
        for method in ("workspace/willRenameFiles", "workspace/willDeleteFiles", "workspace/willCreateFiles"):
            s.request(next(ids), method, {"files": files * 2000})
        for method in ("workspace/didRenameFiles", "workspace/didDeleteFiles", "workspace/didCreateFiles"):
            notify(s, method, {"files": [*files, {"uri": u}] * 2000})
    yield "9/bulk-renames-and-deletes-of-the-open-document", then(renames)  # 10,000 files a message: timed as a flood

    def watched(n: int, per: int) -> Callable[[A.RawLsp, str], None]:
        def act(s: A.RawLsp, u: str) -> None:
            A._open(s, (root / "reads.eval.yaml").as_uri(), suite)
            for start in range(0, n, per):
                notify(s, "workspace/didChangeWatchedFiles", {"changes": [
                    {"uri": (root / f"sub{k % 97}" / f"f{k}.jsonl").as_uri(), "type": 1 + k % 3}
                    for k in range(start, min(n, start + per))] + [{"uri": (root / "cases.jsonl").as_uri(), "type": 2}]})
        return act
    yield "9/bulk-watched-100000-distinct-paths-one-message", then(watched(100_000, 100_000))
    yield "9/bulk-watched-100000-distinct-paths-1000-messages", then(watched(100_000, 100))

    def run_then(what: str) -> Callable[[A.RawLsp, str], None]:
        def act(s: A.RawLsp, u: str) -> None:
            settings({"evalspec": {"run": {"models": ["echo"], "output": "out9"}}})(s, u)
            s.request(next(ids), "workspace/executeCommand", {"command": "evalspec.run", "arguments": [{"uri": u}]})
            if what == "edited":
                for v in range(3, 40):
                    s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                        "textDocument": {"uri": u, "version": v}, "contentChanges": [{"text": A.GOOD.replace("Hi", f"Hi {v}")}]}})
            elif what == "closed-reopened":
                notify(s, "textDocument/didClose", {"textDocument": {"uri": u}})
                A._open(s, u, A.GOOD.replace("Hi", "Hello"), 9)
            elif what == "two-uris":
                alias = u.replace("b.weval", "%62.weval")
                A._open(s, alias, A.GOOD)
                s.request(next(ids), "workspace/executeCommand", {"command": "evalspec.run", "arguments": [{"uri": alias}]})
                s.request(next(ids), "workspace/executeCommand", {"command": "evalspec.run", "arguments": [{"uri": u}]})
            elif what == "closed-then-cancel":
                notify(s, "textDocument/didClose", {"textDocument": {"uri": u}})
                s.request(next(ids), "workspace/executeCommand", {"command": "evalspec.cancelRun", "arguments": [{"uri": u}]})
                A._open(s, u, A.GOOD, 11)
        return act
    for what in ("edited", "closed-reopened", "two-uris", "closed-then-cancel"):
        yield f"9/run-then-{what}", then(run_then(what))
    yield "9/bulk-run-5000-unopened-uris", then(lambda s, u: [s.request(next(ids), "workspace/executeCommand", {
        "command": "evalspec.run", "arguments": [{"uri": (root / f"never{i}.weval.yml").as_uri()}]}) for i in range(5000)])

    def forged(method: str, data: Any) -> Callable[[A.RawLsp, str], list[Any]]:
        def act(s: A.RawLsp, u: str) -> list[Any]:
            i = next(ids)
            s.request(i, method, data(u))
            return [i]
        return act
    rng = {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 1}}
    for name, data in [
        ("codelens-other-file", lambda u: {"range": rng, "data": {"uri": (root / "reads.eval.yaml").as_uri(), "item": "t"}}),
        ("codelens-stale-item", lambda u: {"range": rng, "data": {"uri": u, "item": "gone", "generation": -1}}),
        ("codelens-huge-data", lambda u: {"range": rng, "data": {"uri": u, "item": "x" * 3_000_000}}),
        ("codelens-command-run", lambda u: {"range": rng, "command": {"title": "x", "command": "evalspec.run",
                                                                      "arguments": [{"uri": u}]}}),
    ]:
        yield f"9/{name}", forged("codeLens/resolve", data)
    for name, data in [
        ("completion-other-file", lambda u: {"label": "x", "data": {"uri": (root / "reads.eval.yaml").as_uri(), "key": "tests"}}),
        ("completion-outside", lambda u: {"label": "x", "data": {"uri": "file:///etc/passwd", "path": "/etc/shadow"}}),
        ("completion-deep", lambda u: {"label": "x", "data": json.loads("[" * 500 + "]" * 500)}),
    ]:
        yield f"9/{name}", forged("completionItem/resolve", data)
    yield "9/execute-unknown-commands", then(lambda s, u: [s.request(next(ids), "workspace/executeCommand", {
        "command": c, "arguments": [{"uri": u}]}) for c in ("evalspec.runAll", "", "x" * 100_000, "evalspec.")])


def attack_state9(tally: A.Tally) -> None:
    print("language server state over time (ninth round)", flush=True)
    original = A.protocol_cases
    A.protocol_cases = _state9_cases
    try:
        A.attack_protocol(tally, lifecycle=False)
    finally:
        A.protocol_cases = original


# ------------------------------------------------------------------------------------------------
# show9: results folders from elsewhere, shown by the editor and reported by the CLI

# Every open of a path under ATTACK9_WATCH (its links followed) by an evalspec process, noted in ATTACK9_LOG
# (an audit hook is in every Python process started: the guard's server runs in a session of its own).
HOOK = '''
import os, sys
_watch, _log = os.environ.get("ATTACK9_WATCH"), os.environ.get("ATTACK9_LOG")
def _hook(event, args):
    if event == "open" and len(args) > 2 and isinstance(args[2], int) and args[2] & os.O_NOFOLLOW:
        return  # (os.open's event) without following a link: a link is refused (ELOOP), its target not reached
    if _watch and event in ("open", "os.open") and args and isinstance(args[0], (str, bytes, os.PathLike)) and (
            os.path.realpath(os.fsdecode(args[0])).startswith(_watch)):  # through a link too
        with open(_log, "a") as f:
            f.write(f"{os.getpid()} {event} {args[0]} {args[1:]}\\n")
if _watch:
    sys.addaudithook(_hook)
'''
MARK = "ATTACK9-OUTSIDE-MARKER"


def _show9_project(root: Path, outside: Path) -> tuple[Path, Path, Path]:
    """(project, blueprint, suite): both run once by the CLI with the echo model."""
    project = root / "proj"
    (project / ".git").mkdir(parents=True)
    bp = project / "x.weval.yml"
    bp.write_text("title: t\nmodels: [echo]\n---\n- id: p\n  prompt: hi\n  should: [$contains: hi]\n")
    suite = project / "s.eval.yaml"
    suite.write_text("name: s\ndescription: d\ntests:\n  - id: t\n    input: hi\n    criteria: c\n"
                     "    assert: [{type: contains, value: hi}]\n")
    (outside / "far.eval.yaml").write_text(f"name: far\ndescription: d\ntests:\n  - id: t\n    input: {MARK}\n    criteria: c\n")
    return project, bp, suite


def _planted(project: Path, outside: Path) -> Iterator[tuple[str, str, Callable[[], None]]]:
    """(name, which file it is shown for: weval or agentv, plant)."""
    def comparison() -> Path:
        return next((project / "evalspec-results").rglob("*_comparison.json"))

    def cost() -> Path:
        return next((project / "evalspec-results").rglob("*_cost.json"))

    def agentv_results() -> Path:
        return next(p for p in (project / "evalspec-results" / "agentv").rglob("*.jsonl") if "journal" not in p.name)

    def replace(path: Callable[[], Path], how: str) -> Callable[[], None]:
        def plant() -> None:
            p = path()
            data = p.read_bytes()
            p.unlink()
            if how == "link-out":
                (outside / p.name).write_bytes(data.replace(b"hi", MARK.encode()))
                p.symlink_to(outside / p.name)
            elif how == "fifo":
                os.mkfifo(p)
            elif how == "dev-zero":
                p.symlink_to("/dev/zero")
            elif how == "zeros-line":
                with p.open("wb") as f:
                    f.truncate(3 << 29)
        return plant
    for how in ("link-out", "fifo", "dev-zero"):
        yield f"comparison-{how}", "weval", replace(comparison, how)
        yield f"cost-{how}", "weval", replace(cost, how)
        yield f"agentv-results-{how}", "agentv", replace(agentv_results, how)
    yield "agentv-results-1.5gb-first-line", "agentv", replace(agentv_results, "zeros-line")

    def journal_names_outside() -> None:
        journal = next((project / "evalspec-results" / "agentv").rglob("*.journal.jsonl"))
        lines = journal.read_text().splitlines(keepends=True)
        head = json.loads(lines[0])
        label = head.get("run_label")
        results = agentv_results()
        # a second journal, of the results file's label, naming an eval file outside
        other = results.with_name(results.stem.rsplit("_", 1)[0] + ".journal.jsonl")
        if other == journal:
            head["file"] = str(outside / "far.eval.yaml")
            journal.write_text(json.dumps(head) + "\n" + "".join(lines[1:]))
        else:
            other.write_text(json.dumps({**head, "file": str(outside / "far.eval.yaml"), "run_label": label}) + "\n")
    yield "agentv-journal-names-an-eval-file-outside", "agentv", journal_names_outside


def _show9_case(tally: A.Tally, root: Path, name: str, which: str, plant: Callable[[], None]) -> None:
    outside = root / "outside"
    outside.mkdir(parents=True)
    hook = root / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK)
    log = root / "opens.log"
    project, bp, suite = _show9_project(root, outside)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")])),
           "ATTACK9_WATCH": str(outside), "ATTACK9_LOG": str(log)}
    for path in (bp, suite):
        extra = ["--eval-method", "none"] if path == bp else ["-m", "echo"]
        ran = subprocess.run([*A.EVALSPEC, "run", str(path), "-o", "evalspec-results", *extra],
                             cwd=project, env={**env, "ATTACK9_WATCH": ""}, capture_output=True, text=True, timeout=120)
        if ran.returncode != 0:
            tally.note(f"show9/{name}", f"the set-up run failed: {ran.stderr[-300:]}")
            return
    problems: list[str] = []
    try:
        plant()
    except StopIteration:
        tally.note(f"show9/{name}", "nothing to plant in (the set-up run wrote no such file)")
        return
    doc = bp if which == "weval" else suite
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        server = A.RawLsp(project, [sys.executable, "-m", "evalspec_lsp"])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    backend = None
    peak = 0.0
    try:
        server.request("init", "initialize", {"processId": None, "rootUri": project.as_uri(), "capabilities": {}})
        server.wait("init", 30)
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        A._open(server, doc.as_uri(), doc.read_text())
        backend = A._server_pid(server)
        shown = None
        for n in range(40):  # the earlier results are read back on open
            server.request(f"show-{n}", "workspace/executeCommand", {"command": "evalspec.showResults", "arguments": [
                {"uri": doc.as_uri(), "open": False, "markdown": True}]})
            t0 = time.monotonic()
            reply = server.wait(f"show-{n}", A.LSP_BOUND_S + 4)
            if reply is None:
                problems.append("showResults not answered")
                break
            if time.monotonic() - t0 > A.LSP_BOUND_S:
                problems.append(f"showResults answered after {time.monotonic() - t0:.1f} s")
            result = reply.get("result") or {}
            if MARK in json.dumps(reply):
                problems.append("the outside file's marker in the reply")
            if result.get("error") != "this file has no finished run yet" and "busy" not in json.dumps(reply):
                shown = reply
                break
            time.sleep(0.25)
        server.request("hover", "textDocument/hover", A._at(doc.as_uri(), 3, 4))
        t0 = time.monotonic()
        if server.wait("hover", A.LSP_BOUND_S + 4) is None or time.monotonic() - t0 > A.LSP_BOUND_S:
            problems.append("the next hover was not answered within the bound")
        time.sleep(2)  # a report being built meanwhile
        if backend is not None:
            peak = A._rss_mb(backend)
            if peak > 1024:
                problems.append(f"the server at {peak:.0f} MB")
        if shown is None and not problems:
            problems.append("no answer but 'no finished run' or 'busy' in 10 s")
    finally:
        server.stop()
        if backend is not None:
            time.sleep(3)
            if A._alive(backend):
                problems.append("the server left running after its guard was killed")
                with contextlib.suppress(ProcessLookupError):
                    os.kill(backend, signal.SIGKILL)
    for report_of in sorted(p for p in (project / "evalspec-results").rglob("*")
                            if p.name.endswith(("_comparison.json", ".jsonl")) and "journal" not in p.name
                            and ".cache" not in p.parts):
        try:
            # (not watched: `evalspec report` of results the user names reads the eval file their journal
            # names, wherever it is, to show the prompts; only the editor's "show results" is confined)
            ran = subprocess.run([*A.EVALSPEC, "report", str(report_of), "--format", "markdown"], cwd=project,
                                 env={**env, "ATTACK9_WATCH": ""}, capture_output=True, text=True, timeout=60)
            if "Traceback" in ran.stderr:
                problems.append(f"report {report_of.name}: a traceback")
        except subprocess.TimeoutExpired:
            problems.append(f"report {report_of.name}: not done in 60 s")
    reports = b"".join(p.read_bytes() for p in project.rglob("*.report.html"))  # show results' own
    if MARK.encode() in reports:
        problems.append("the outside file's marker in a report")
    if log.exists():
        opened = sorted({line.split(" ", 1)[1] for line in log.read_text().splitlines()})
        problems.append(f"opened outside: {opened[:3]}")
    tally.note(f"show9/{name} (peak {peak:.0f} MB)", "; ".join(problems) or None)


def attack_show9(tally: A.Tally) -> None:
    print("results from elsewhere, shown (ninth round)", flush=True)
    scratch = Path(tempfile.mkdtemp(prefix="attack-show9-"))
    try:
        listing = Path(tempfile.mkdtemp(prefix="attack-show9-list-"))
        names = [(n, w) for n, w, _ in _planted(listing / "proj", listing / "outside")]
        shutil.rmtree(listing, ignore_errors=True)
        for i, (name, which) in enumerate(names):
            if A.ONLY and A.ONLY not in f"show9/{name}":
                continue
            root = scratch / f"c{i}"
            root.mkdir()
            plant = next(p for n, _, p in _planted(root / "proj", root / "outside") if n == name)
            _show9_case(tally, root, name, which, plant)
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# memory9: what the server keeps over time

MEMORY_BOUND_MB = 400.0


class _Forgetful(A.RawLsp):
    """The raw client, keeping no replies but the last few (a flood's replies would be the client's memory)."""

    def _take(self, msg: Any) -> None:
        super()._take(msg)
        if len(self.replies) > 64:
            for key in list(self.replies)[:-8]:
                self.replies.pop(key, None)
                self.arrived.pop(key, None)
                self.answers.pop(key, None)


Act = Callable[[A.RawLsp, Path, Callable[[str], None], Callable[[], bool]], None]


def _memory_case(tally: A.Tally, name: str, act: Act) -> None:
    if A.ONLY and A.ONLY not in f"memory9/{name}":
        return
    root = Path(tempfile.mkdtemp(prefix="attack-memory9-"))
    (root / ".git").mkdir()
    server = _Forgetful(root, [sys.executable, "-m", "evalspec_lsp"])
    problems: list[str] = []
    figures: list[str] = []
    try:
        A._initialized(server, root)
        backend = A._server_pid(server)
        ids = iter(range(10**9))

        def settle(uri: str) -> None:
            """Until the document's outline is answered (its analysis done)."""
            for _ in range(400):
                i = f"s{next(ids)}"
                server.request(i, "textDocument/documentSymbol", {"textDocument": {"uri": uri}})
                reply = server.wait(i, 30)
                if reply is not None and "result" in reply:
                    return
                time.sleep(0.05)

        def over() -> bool:
            """Past the bound already (the probe stops there: a leak need not take a shared machine down)."""
            return backend is not None and A._rss_mb(backend) > MEMORY_BOUND_MB

        start = A._rss_mb(backend) if backend else 0.0
        figures.append(f"start {start:.0f} MB")
        act(server, root, settle, over)
        time.sleep(3)
        end = A._rss_mb(backend) if backend else 0.0
        figures.append(f"end {end:.0f} MB")
        if end > MEMORY_BOUND_MB:
            problems.append(f"the server at {end:.0f} MB")
        for n in range(100):
            server.request(f"w{n}", "evalspec/workers", None)
            reply = server.wait(f"w{n}", 10) or {}
            if "result" in reply:
                kept = reply["result"].get("handlers")
                figures.append(f"handlers {kept}")
                if kept is None or kept > 4:
                    problems.append(f"{kept} handlers kept")
                break
            time.sleep(0.5)
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    tally.note(f"memory9/{name} ({', '.join(figures)})", "; ".join(problems) or None)


def _blueprint(prompts: int) -> str:
    return "title: T\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: question {i} with some words here\n  should: [be kind, $contains: x]\n"
        for i in range(prompts))


def attack_memory9(tally: A.Tally) -> None:
    print("what the language server keeps over time (ninth round)", flush=True)

    def open_close(server: A.RawLsp, root: Path, settle: Callable[[str], None], over: Callable[[], bool]) -> None:
        text = _blueprint(2_200)  # 200 KB
        for k in range(2000):
            if k % 100 == 0 and over():
                print(f"    past the bound after {k} documents", flush=True)
                return
            uri = (root / f"d{k}.weval.yml").as_uri()
            A._open(server, uri, text)
            settle(uri)
            server.send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
    _memory_case(tally, "open-close-2000-documents-of-200kb", open_close)

    def edits(server: A.RawLsp, root: Path, settle: Callable[[str], None], over: Callable[[], bool]) -> None:
        uri = (root / "big.weval.yml").as_uri()
        A._open(server, uri, _blueprint(12_000))  # 1.1 MB
        settle(uri)
        for k in range(1, 10_001):
            line = 3 + (k * 37) % 30_000
            server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": k + 1}, "contentChanges": [{"range": {
                    "start": {"line": line, "character": 2}, "end": {"line": line, "character": 2 + (k % 2 == 0)}},
                    "text": "" if k % 2 == 0 else "x"}]}})
            if k % 25 == 0:
                settle(uri)
            if k % 1000 == 0 and over():
                print(f"    past the bound after {k} edits", flush=True)
                return
    _memory_case(tally, "edits-10000-of-a-1mb-blueprint", edits)

    def set_trace(server: A.RawLsp, root: Path, settle: Callable[[str], None], over: Callable[[], bool]) -> None:
        uri = (root / "a.weval.yml").as_uri()
        A._open(server, uri, A.GOOD)
        for _ in range(200_000):
            server.send({"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}})
        settle(uri)
    _memory_case(tally, "set-trace-200000", set_trace)


AREAS9: dict[str, Callable[[A.Tally], None]] = {"state9": attack_state9, "show9": attack_show9,
                                                "memory9": attack_memory9}
