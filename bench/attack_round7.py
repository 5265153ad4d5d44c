"""The seventh attack round (issue 15 once more): areas and mutations no earlier round tried.

Run through `bench/attack.py` (`python bench/attack.py lsp7 outside7 secrets7 resume7 faults7`); this
module holds the probes, `attack.py` the harness they share (the raw LSP client, strace, the fake
providers, the tallies).

  lsp7      documents never opened, closed while analysed, versions backwards, two URIs for one file;
            didChange past the end, overlapping and reversed ranges, ranges and positions inside
            surrogate pairs and between CR and LF, rangeLength lies; watched-file storms on a file an
            open suite reads; the Run lens commands with hostile arguments; resolve requests with
            hostile items; file operations on open documents. Broken as `protocol`.
  outside7  new spellings of references that leave the project (file URLs with upper-case schemes,
            one slash, ports, user info, queries, percent-encoded letters and dots, YAML escapes, overlong
            UTF-8, `%u002e`, mixed separators, more dot look-alikes, glob classes and parents), content
            blocks of type image, and every earlier outside case opened in the language server (every
            feature at every line, then the Run command) under strace; a dataset run whose sidecar
            search looks beyond its project. Broken as `outside`.
  secrets7  `${{ VAR }}` spellings and places no round tried: no spaces, tabs, in paths (content blocks,
            tests files, judge prompts, workspaces) whose error messages name them, in the suite's name
            and test ids that become file names, in a target's model and endpoint, in a code judge's
            command. Broken: the key in any output, results file or results file NAME.
  resume7   two to eight `--resume` (and fresh) runs of one label started at the same instant (a shared
            start signal), after a SIGKILL (a stale lock), with the holder stopped, AgentV and Weval.
            Broken: a prompt asked twice by the followers, a prompt never asked, a traceback.
  faults7   HTTP replies no round sent: chunk sizes past 64 bits, negative, with huge extensions, longer
            than said, huge trailers; 1,000 stacked encodings; gzip of a million empty members, with an
            endless file-name field, raw deflate bombs; bodies after a 304 or a HEAD-like reply, 1 MB
            reason phrases, charsets that do not exist. Broken as `faults`.
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
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attack as A
from fakeprovider import FakeProvider, Reply

# ------------------------------------------------------------------------------------------------
# lsp7: documents and edits no client should send, through the protocol area's harness


SURROGATE_LINE = 4  # the harness opens its blueprint with "prompt: 😀😀 Hi" on this line


def _lsp7_cases(root: Path) -> Iterator[tuple[str, Callable[[A.RawLsp, str], list[Any]]]]:
    ids = iter(range(10**6))
    hover = "textDocument/hover"
    (root / "never.weval.yml").write_text(A.GOOD)
    (root / "dir.weval.yml").mkdir(exist_ok=True)
    (root / "cases.jsonl").write_text(json.dumps({"id": "t", "criteria": "c", "input": "hi"}) + "\n")
    (root / "reads.eval.yaml").write_text("name: s\ndescription: d\ntests: ./cases.jsonl\n")
    outside = Path(tempfile.mkdtemp(prefix="attack-lsp7-out-"))
    (outside / "far.weval.yml").write_text(A.GOOD)
    big = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: question {i} with some words\n  should: [be kind, $contains: x]\n" for i in range(25_000))

    def every_method(uri: str) -> list[tuple[str, Any]]:
        at = A._at(uri, 3, 4)
        doc = {"textDocument": {"uri": uri}}
        rng = {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 4}}
        return [(hover, at), ("textDocument/completion", at), ("textDocument/definition", at),
                ("textDocument/references", {**at, "context": {"includeDeclaration": True}}),
                ("textDocument/documentSymbol", doc), ("textDocument/foldingRange", doc),
                ("textDocument/codeLens", doc), ("textDocument/documentLink", doc),
                ("textDocument/codeAction", {**doc, "range": rng, "context": {"diagnostics": []}}),
                ("textDocument/diagnostic", doc), ("textDocument/selectionRange", {**doc, "positions": [
                    {"line": 3, "character": 4}]}), ("textDocument/semanticTokens/full", doc),
                ("textDocument/documentHighlight", at), ("textDocument/signatureHelp", at),
                ("textDocument/formatting", {**doc, "options": {"tabSize": 2, "insertSpaces": True}}),
                ("textDocument/rename", {**at, "newName": "x"}), ("textDocument/prepareRename", at),
                ("textDocument/inlayHint", {**doc, "range": rng}), ("textDocument/typeDefinition", at),
                ("textDocument/implementation", at), ("textDocument/declaration", at),
                ("textDocument/linkedEditingRange", at), ("textDocument/moniker", at),
                ("textDocument/prepareCallHierarchy", at), ("textDocument/inlineValue", {
                    **doc, "range": rng, "context": {"frameId": 1, "stoppedLocation": rng}})]

    def all_methods_on(uri_of: Callable[[str], str]) -> Callable[[A.RawLsp, str], list[Any]]:
        def act(s: A.RawLsp, u: str) -> list[Any]:
            sent = []
            for method, params in every_method(uri_of(u)):
                i = next(ids)
                s.request(i, method, params)
                sent.append(i)
            return sent
        return act
    yield "7/never-opened-on-disk", all_methods_on(lambda u: (root / "never.weval.yml").as_uri())
    yield "7/never-opened-missing", all_methods_on(lambda u: (root / "gone.weval.yml").as_uri())
    yield "7/never-opened-outside-root", all_methods_on(lambda u: (outside / "far.weval.yml").as_uri())
    yield "7/never-opened-a-folder", all_methods_on(lambda u: (root / "dir.weval.yml").as_uri())
    yield "7/never-opened-other-host", all_methods_on(lambda u: "file://example.com" + (root / "never.weval.yml").as_posix())
    yield "7/never-opened-encoded-name", all_methods_on(lambda u: u.replace("b.weval", "%62.weval"))
    yield "7/every-method-on-the-open-document", all_methods_on(lambda u: u)

    def change(s: A.RawLsp, uri: str, version: int, changes: list[Any]) -> None:
        s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": changes}})

    def then_requests(act: Callable[[A.RawLsp, str], None], uri_of: Callable[[str], str] = lambda u: u,
                      methods: tuple[str, ...] = (hover, "textDocument/completion", "textDocument/documentSymbol",
                                                  "textDocument/diagnostic", "textDocument/codeLens"),
                      at: tuple[int, int] = (3, 4)) -> Callable[[A.RawLsp, str], list[Any]]:
        def run(s: A.RawLsp, u: str) -> list[Any]:
            act(s, u)
            sent = []
            for m in methods:
                i = next(ids)
                uri = uri_of(u)
                if m == "textDocument/references":
                    s.request(i, m, {**A._at(uri, *at), "context": {"includeDeclaration": True}})
                else:
                    s.request(i, m, A._at(uri, *at) if m in (hover, "textDocument/completion", "textDocument/definition")
                              else {"textDocument": {"uri": uri}})
                sent.append(i)
            return sent
        return run

    other = (root / "c.weval.yml").as_uri()
    yield "7/closed-while-analysed", then_requests(
        lambda s, u: (A._open(s, other, big), s.send({"jsonrpc": "2.0", "method": "textDocument/didClose",
                                                      "params": {"textDocument": {"uri": other}}})),
        lambda u: other)
    yield "7/closed-reopened-shorter-while-analysed", then_requests(
        lambda s, u: (A._open(s, other, big), s.send({"jsonrpc": "2.0", "method": "textDocument/didClose",
                                                      "params": {"textDocument": {"uri": other}}}),
                      A._open(s, other, "title: x\n", 1)), lambda u: other, at=(20_000, 3))
    yield "7/version-backwards-then-edits", then_requests(lambda s, u: [
        change(s, u, v, [{"range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 0}},
                          "text": "#"}]) for v in (50, 2, -7, 2, 2**53, 0)])
    rng = lambda a, b, c, d: {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}  # noqa: E731
    yield "7/change-past-the-end", then_requests(lambda s, u: change(s, u, 3, [
        {"range": rng(1_000_000, 0, 1_000_005, 9), "text": "- id: far\n"}]))
    yield "7/change-start-after-end", then_requests(lambda s, u: change(s, u, 3, [
        {"range": rng(5, 2, 1, 0), "text": "x"}]))
    yield "7/changes-overlapping", then_requests(lambda s, u: change(s, u, 3, [
        {"range": rng(1, 0, 4, 5), "text": "a\nb\n"}, {"range": rng(0, 3, 6, 0), "text": ""},
        {"range": rng(2, 0, 2, 10**6), "text": "\r"}, {"range": rng(0, 0, 0, 0), "text": "\ud800"}]))
    yield "7/change-splits-a-surrogate-pair", then_requests(lambda s, u: change(s, u, 3, [
        {"range": rng(SURROGATE_LINE, 11, SURROGATE_LINE, 13), "text": "x"}]))
    yield "7/change-ends-inside-a-surrogate-pair", then_requests(lambda s, u: change(s, u, 3, [
        {"range": rng(SURROGATE_LINE, 9, SURROGATE_LINE, 12), "text": "\ude00"}]))
    yield "7/positions-inside-surrogate-pairs", then_requests(
        lambda s, u: None, methods=(hover, "textDocument/completion", "textDocument/definition", "textDocument/references"),
        at=(SURROGATE_LINE, 11))
    yield "7/position-past-line-end", then_requests(lambda s, u: None, at=(SURROGATE_LINE, 10_000))
    yield "7/position-on-the-line-after-the-last", then_requests(lambda s, u: None, at=(6, 0))
    yield "7/range-length-lies", then_requests(lambda s, u: change(s, u, 3, [
        {"range": rng(0, 0, 0, 1), "rangeLength": -1, "text": "t"},
        {"range": rng(0, 0, 0, 1), "rangeLength": 10**12, "text": "t"}]))
    crlf = (root / "crlf.weval.yml").as_uri()
    yield "7/change-between-cr-and-lf", then_requests(
        lambda s, u: (A._open(s, crlf, A.GOOD.replace("\n", "\r\n")),
                      change(s, crlf, 2, [{"range": rng(0, 8, 0, 9), "text": "\n- x\r"}]),
                      change(s, crlf, 3, [{"range": rng(1, 0, 1, 0), "text": "\r"}])), lambda u: crlf, at=(0, 9))
    yield "7/full-text-then-range-in-one-change", then_requests(lambda s, u: change(s, u, 3, [
        {"text": "title: x\n"}, {"range": rng(40, 0, 41, 0), "text": "y"}, {"text": A.GOOD}]))

    reads = (root / "reads.eval.yaml").as_uri()

    def watched_storm(s: A.RawLsp, u: str) -> list[Any]:
        A._open(s, reads, (root / "reads.eval.yaml").read_text())
        changes = [{"uri": (root / "cases.jsonl").as_uri(), "type": 1 + i % 3} for i in range(20_000)]
        s.send({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": changes}})
        for i in range(2000):
            (root / "cases.jsonl").write_text(json.dumps({"id": f"t{i}", "criteria": "c", "input": "hi"}) + "\n")
            s.send({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": [
                {"uri": (root / "cases.jsonl").as_uri(), "type": 2}]}})
        i = next(ids)
        s.request(i, "textDocument/documentSymbol", {"textDocument": {"uri": reads}})
        return [i]
    yield "7/bulk-watched-files-storm-on-a-read-file", watched_storm

    def watched_odd(s: A.RawLsp, u: str) -> list[Any]:
        s.send({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": [
            {"uri": u, "type": 3}, {"uri": u, "type": 0}, {"uri": u, "type": 2**40}, {"uri": u + "/..", "type": 2},
            {"uri": "file:///", "type": 2}, {"uri": "file:///proc/self/mem", "type": 2}, {"uri": "", "type": 1}]}})
        i = next(ids)
        s.request(i, hover, A._at(u, 3, 4))
        return [i]
    yield "7/watched-files-delete-of-open-document", watched_odd

    def command(name: str, args: Any) -> Callable[[A.RawLsp, str], list[Any]]:
        def act(s: A.RawLsp, u: str) -> list[Any]:
            i = next(ids)
            s.request(i, "workspace/executeCommand", {"command": name, "arguments": args(u) if callable(args) else args})
            return [i]
        return act
    far = (outside / "far.weval.yml").as_uri()
    hostile_args: list[tuple[str, Any]] = [
        ("outside-root", lambda u: [{"uri": far}]),
        ("other-host", lambda u: [{"uri": "file://example.com/etc/passwd"}]),
        ("missing", lambda u: [{"uri": (root / "gone.weval.yml").as_uri()}]),
        ("root-folder", lambda u: [{"uri": root.as_uri()}]),
        ("environ", lambda u: [{"uri": "file:///proc/self/environ"}]),
        ("stdin", lambda u: [{"uri": "file:///dev/stdin"}]),
        ("item-huge-number", lambda u: [{"uri": u, "item": 10**30}]),
        ("item-float", lambda u: [{"uri": u, "item": 1e308}]),
        ("item-list", lambda u: [{"uri": u, "item": ["a"]}]),
        ("item-dotdot", lambda u: [{"uri": u, "item": "../../../etc/passwd"}]),
        ("model-object", lambda u: [{"uri": u, "model": {"id": "openai:x"}}]),
        ("model-huge", lambda u: [{"uri": u, "model": "openai:" + "x" * 200_000}]),
        ("model-replay-outside", lambda u: [{"uri": u, "model": "replay:/etc/passwd"}]),
        ("three-thousand-arguments", lambda u: [{"uri": u}] * 3000),
        ("uri-number", lambda u: [{"uri": 12}]),
        ("uri-relative", lambda u: [{"uri": "../../../etc/passwd"}]),
        ("uri-percent-dotdot", lambda u: [{"uri": u.rsplit("/", 1)[0] + "/%2e%2e/%2e%2e/%2e%2e/etc/passwd"}]),
    ]
    for cmd in ("evalspec.run", "evalspec.plan", "evalspec.showResults", "evalspec.cancelRun"):
        for label, args in hostile_args:
            yield f"7/command-{cmd.split('.')[1]}-{label}", command(cmd, args)

    def resolve(method: str, item: Any) -> Callable[[A.RawLsp, str], list[Any]]:
        def act(s: A.RawLsp, u: str) -> list[Any]:
            i = next(ids)
            s.request(i, method, item(u) if callable(item) else item)
            return [i]
        return act
    deep: Any = "x"
    for _ in range(400):
        deep = {"a": deep}
    for method in ("completionItem/resolve", "codeLens/resolve", "documentLink/resolve", "codeAction/resolve",
                   "inlayHint/resolve", "workspaceSymbol/resolve"):
        yield f"7/{method}-junk", resolve(method, {"label": "x", "data": deep, "range": "no", "command": 5})
        yield f"7/{method}-null", resolve(method, None)
        yield f"7/{method}-outside-target", resolve(method, lambda u: {
            "label": "x", "range": rng(0, 0, 0, 1), "target": "file:///etc/passwd", "data": {"uri": far}})
    yield "7/workspace-symbol-huge-query", resolve("workspace/symbol", {"query": ".*(" * 30_000})
    yield "7/workspace-diagnostic-junk-ids", resolve("workspace/diagnostic", {
        "previousResultIds": [{"uri": "file:///etc/passwd", "value": "x"}] * 5000})

    def file_operations(s: A.RawLsp, u: str) -> list[Any]:
        sent = []
        for method in ("workspace/willRenameFiles", "workspace/willCreateFiles", "workspace/willDeleteFiles"):
            i = next(ids)
            s.request(i, method, {"files": [{"oldUri": u, "newUri": far, "uri": u}] * 100})
            sent.append(i)
        for method in ("workspace/didRenameFiles", "workspace/didDeleteFiles", "workspace/didCreateFiles"):
            s.send({"jsonrpc": "2.0", "method": method, "params": {"files": [{"oldUri": u, "newUri": far, "uri": u}]}})
        i = next(ids)
        s.request(i, hover, A._at(u, 3, 4))
        return [*sent, i]
    yield "7/file-operations-on-the-open-document", file_operations

    def two_uris(s: A.RawLsp, u: str) -> list[Any]:
        for alias in (u.replace("b.weval", "%62.weval"), u.replace("file://", "file://localhost"),
                      u.replace("file:///", "file:////"), u.upper().replace("FILE:", "file:")):
            A._open(s, alias, "title: [broken\n", 1)
            change(s, alias, 2, [{"text": "models: 5\n"}])
            s.send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": alias}}})
        i = next(ids)
        s.request(i, "textDocument/documentSymbol", {"textDocument": {"uri": u}})
        return [i]
    yield "7/one-file-opened-under-other-uris-then-closed", two_uris

    def notebook(s: A.RawLsp, u: str) -> list[Any]:
        s.send({"jsonrpc": "2.0", "method": "notebookDocument/didOpen", "params": {
            "notebookDocument": {"uri": u, "notebookType": "x", "version": 1, "cells": [
                {"kind": 2, "document": u}] * 1000}, "cellTextDocuments": [
                {"uri": u, "languageId": "yaml", "version": 1, "text": "title: [\n"}] * 50}})
        s.send({"jsonrpc": "2.0", "method": "notebookDocument/didClose", "params": {
            "notebookDocument": {"uri": u}, "cellTextDocuments": [{"uri": u}]}})
        i = next(ids)
        s.request(i, hover, A._at(u, 3, 4))
        return [i]
    yield "7/notebook-with-the-open-document-as-cells", notebook
    yield "7/progress-cancel-junk", then_requests(lambda s, u: [s.send({
        "jsonrpc": "2.0", "method": "window/workDoneProgress/cancel", "params": {"token": t}})
        for t in (None, deep, "x" * 1_000_000, 1.5, [1])], methods=(hover,))


def attack_lsp7(tally: A.Tally) -> None:
    print("language server protocol (seventh round)", flush=True)
    original = A.protocol_cases
    A.protocol_cases = _lsp7_cases
    try:
        A.attack_protocol(tally, lifecycle=False)
    finally:
        A.protocol_cases = original
    root = Path(tempfile.mkdtemp(prefix="attack-guard7-"))
    try:
        _guard7_backend_cases(tally, root)
        _guard7_stopped_server(tally, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


# The sixth round's stand-in server with new ways to go wrong: stuck in the middle of an answer (after
# its header, inside its header block, after a whole answer written with the start of the next), an
# answer written a byte at a time for 14 s (slow, not stuck), and `shutdown` never answered.
_HEAD = 'b"Content-Length: %d\\r\\nEvalspec-Response-Id: %s\\r\\n\\r\\n" % (len(body), json.dumps(rid).encode())'
_BODY = 'body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": None}).encode()'
GUARD7_MODES = {
    "stuck-mid-body": f'body = b"{{" * 500; out.write({_HEAD} + body[:10]); out.flush(); time.sleep(3600)',
    "stuck-mid-header": 'out.write(b"Content-Length: 500\\r\\n"); out.flush(); time.sleep(3600)',
    "stuck-after-a-whole-answer": f'{_BODY}; out.write({_HEAD} + body + b"Content-Length: 99\\r\\n\\r\\n{{"); '
                                  'out.flush(); time.sleep(3600)',
    "slow-answer": f'{_BODY}; out.write({_HEAD}); out.flush()\n'
                   '        for i in range(len(body)):\n'
                   '            out.write(body[i:i + 1]); out.flush(); time.sleep(14 / len(body))\n'
                   '        return',
}
GUARD7_RESTART_S = 30.0  # the guard's 10 s without a byte of a begun answer, a restart, a margin for load


def _guard7_backend(root: Path) -> Path:
    extra = "".join(f"    elif mode == {mode!r}:\n        {code}\n" for mode, code in GUARD7_MODES.items())
    script = A.FAKE_BACKEND.replace('    elif mode == "hang":\n', extra + '    elif mode == "hang":\n', 1)
    script = script.replace('    if method == "exit":\n',
                            '    if method == "shutdown" and mode == "never-answers-shutdown":\n        continue\n'
                            '    if method == "exit" and mode != "never-answers-shutdown":\n', 1)
    path = root / "fake_backend7.py"
    path.write_text(script)
    return path


def _guard7_backend_cases(tally: A.Tally, root: Path) -> None:
    script = _guard7_backend(root)
    for mode in (*GUARD7_MODES, "never-answers-shutdown"):
        if A.ONLY and A.ONLY not in f"guard7/{mode}":
            continue
        starts = root / f"starts-{mode}"
        starts.write_text("")
        server = A.RawLsp(root, A._guard_command(mode, starts, script))
        problems: list[str] = []
        try:
            A._initialized(server, root)
            if mode != "never-answers-shutdown":
                server.request("evil", "evil/now", {})
                t0 = time.monotonic()
                reply = server.wait("evil", A.LSP_BOUND_S + 4)
                if reply is None or time.monotonic() - t0 > A.LSP_BOUND_S + 0.1:
                    problems.append("evil/now not answered in time")
                more, served = A._served_again(server, mode, time.monotonic() + GUARD7_RESTART_S)
                problems += more
                if not served:
                    problems.append(f"not served again within {GUARD7_RESTART_S:.0f} s")
                restarted = len(starts.read_text().split()) > 1
                if mode == "slow-answer" and restarted:
                    problems.append("a slow answer that kept coming was taken for a stuck server (restarted)")
            server.request("down", "shutdown", None)
            t0 = time.monotonic()
            reply = server.wait("down", 10)
            if reply is None:
                problems.append("shutdown not answered within 10 s")
            elif time.monotonic() - t0 > 5:
                problems.append(f"shutdown answered after {time.monotonic() - t0:.1f} s")
            server.send({"jsonrpc": "2.0", "method": "exit"})
            try:
                code = server.proc.wait(15)
                if code != 0:
                    problems.append(f"exit code {code} after shutdown and exit")
            except subprocess.TimeoutExpired:
                problems.append("the guard still runs 15 s after exit")
            time.sleep(0.3)
            left = [p for p in (int(x) for x in starts.read_text().split()) if A._alive(p)]
            if left:
                problems.append(f"server processes left running: {left}")
        finally:
            server.stop()
            for p in (int(x) for x in starts.read_text().split()):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p, signal.SIGKILL)
        tally.note(f"guard7/{mode}", "; ".join(problems) or None)


def _guard7_stopped_server(tally: A.Tally, root: Path) -> None:
    """The real server SIGSTOPped (a debugger, a suspended job) while idle, while a 25,000-prompt file is
    analysed, and with two `shutdown`s: each shutdown answered within 5 s, exit ending both processes."""
    big = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: question {i}\n  should: [be kind]\n" for i in range(25_000))
    for case in ("idle", "analysing", "two-shutdowns"):
        if A.ONLY and A.ONLY not in f"guard7/stopped-server-{case}":
            continue
        (root / "b.weval.yml").write_text(A.GOOD)
        server = A.RawLsp(root, [sys.executable, "-m", "evalspec_lsp"])
        problems: list[str] = []
        backend = None
        try:
            A._initialized(server, root)
            uri = (root / "b.weval.yml").as_uri()
            A._open(server, uri, A.GOOD)
            server.request("h", "textDocument/hover", A._at(uri, 3, 4))
            server.wait("h", 10)
            backend = A._server_pid(server)
            if backend is None:
                problems.append("no server process")
                continue
            if case == "analysing":
                A._open(server, (root / "big.weval.yml").as_uri(), big)
                time.sleep(0.3)
            os.kill(backend, signal.SIGSTOP)
            downs = ["down", "down2"] if case == "two-shutdowns" else ["down"]
            t0 = time.monotonic()
            for d in downs:
                server.request(d, "shutdown", None)
            for d in downs:
                reply = server.wait(d, 10)
                if reply is None:
                    problems.append(f"{d}: shutdown not answered within 10 s")
                elif time.monotonic() - t0 > 5:
                    problems.append(f"{d}: shutdown answered after {time.monotonic() - t0:.1f} s")
            server.send({"jsonrpc": "2.0", "method": "exit"})
            try:
                server.proc.wait(15)
            except subprocess.TimeoutExpired:
                problems.append("the guard still runs 15 s after exit")
            time.sleep(0.3)
            if A._alive(backend):
                problems.append("the stopped server is left running")
        finally:
            server.stop()
            if backend is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(backend, signal.SIGKILL)
            tally.note(f"guard7/stopped-server-{case}", "; ".join(problems) or None)


# ------------------------------------------------------------------------------------------------
# outside7: new spellings, new channels (image blocks, the language server, the dataset search)


def _block(kind: str, yaml_scalar: str) -> str:
    if yaml_scalar.startswith(">"):  # a block scalar: in a block mapping
        return ("    input:\n      - role: user\n        content:\n"
                f"          - type: {kind}\n            value: {yaml_scalar}\n")
    return ("    input:\n      - role: user\n        content:\n"
            f"          - {{type: {kind}, value: {yaml_scalar}}}\n")


def outside7_cases(root: Path, out: Path, project: Path) -> Iterator[tuple[str, str, Callable[[], None] | None]]:
    evals = project / "evals"
    up = os.path.relpath(out, evals)  # ../../outside
    abs_secret = str(out / "secret.txt")
    q = json.dumps

    refs: list[tuple[str, str]] = [
        ("file-url-upper-scheme", q("FILE://" + abs_secret)),
        ("file-url-mixed-case-scheme", q("FiLe://" + abs_secret)),
        ("file-url-one-slash", q("file:" + abs_secret)),
        ("file-url-four-slashes", q("file:////" + abs_secret.lstrip("/"))),
        ("file-url-percent-letters", q("file://" + abs_secret.replace("secret", "%73%65cret"))),
        ("file-url-percent-slashes", q("file://" + abs_secret.replace("/", "%2F"))),
        ("file-url-encoded-dotdot", q(f"file://{up.replace('..', '%2e%2e')}/secret.txt")),
        ("file-url-dot-host", q(f"file://./{up}/secret.txt")),
        ("file-url-localhost-port", q("file://localhost:80" + abs_secret)),
        ("file-url-user-info", q("file://user@localhost" + abs_secret)),
        ("file-url-query", q("file://" + abs_secret + "?x=1")),
        ("file-url-fragment", q("file://" + abs_secret + "#top")),
        ("file-url-127", q("file://127.0.0.1" + abs_secret)),
        ("yaml-hex-escapes", '"' + up.replace(".", "\\x2e").replace("/", "\\x2f") + '\\x2fsecret.txt"'),
        ("yaml-unicode-escapes", '"' + up.replace(".", "\\u002e") + '/secret.txt"'),
        ("yaml-folded-scalar", ">-\n              " + up + "/secret.txt"),
        ("yaml-anchor-alias", "&p " + q(f"{up}/secret.txt")),
        ("overlong-utf8-dots", q(f"{up.replace('..', '%c0%ae%c0%ae')}/secret.txt")),
        ("percent-u-dots", q(f"{up.replace('..', '%u002e%u002e')}/secret.txt")),
        ("percent-nul-suffix", q(f"{up}/secret.txt%00.png")),
        ("mixed-separators", q(up.replace("/", "\\", 1) + "/secret.txt")),
        ("backslash-after-name", q(f"sub\\..\\{up}/secret.txt")),
        ("dotdot-semicolon", q(f"{up.replace('..', '..;')}/secret.txt")),
        ("small-full-stops", q(f"{up.replace('..', chr(0xFE52) * 2)}/secret.txt")),
        ("one-dot-leaders", q(f"{up.replace('..', chr(0x2024) * 2)}/secret.txt")),
        ("dollar-home", q("$HOME/secret.txt")),
        ("dollar-brace-home", q("${HOME}/secret.txt")),
        ("tilde-plus-dotdot", q(f"~+/{up}/secret.txt")),
        ("tilde-double-slash", q("~//secret.txt")),
        ("tilde-backslash", q("~\\secret.txt")),
        ("dev-stdin", q("/dev/stdin")),
        ("proc-self-fd-cwd", q("/proc/self/fd/../cwd/" + os.path.relpath(out / "secret.txt", project))),
        ("proc-thread-self-root", q("/proc/thread-self/root" + abs_secret)),
        ("sys-fs-link", q("/proc/1/root" + abs_secret)),
    ]
    for name, scalar in refs:
        yield f"file-block/{name}", A._test(_block("file", scalar)), None
    for name, scalar in (("dotdot", q(f"{up}/secret.txt")), ("absolute", q(abs_secret)),
                         ("file-url", q("file://" + abs_secret)), ("tilde", q("~/secret.txt"))):
        yield f"image-block/{name}", A._test(_block("image", scalar)), None
    yield "image-block/symlink", A._test(_block("image", '"img.png"')), \
        lambda: os.symlink(out / "secret.txt", evals / "img.png")
    yield "system-message-file-block", A._suite(
        "tests:\n  - id: a\n    criteria: c\n    input:\n      - role: system\n        content:\n"
        f"          - {{type: file, value: {q(up + '/secret.txt')}}}\n      - role: user\n        content: hi\n"
        "    assert: [{type: contains, value: x}]\n"), None
    yield "expected-output-file-url", A._test("    input: hi\n", "    expected_output:\n      - role: assistant\n"
                                              "        content:\n"
                                              f"          - {{type: file, value: {q('file://' + abs_secret)}}}\n"), None
    yield "input-files-file-url", A._test("    input: hi\n", f"    input_files: [{q('file://' + abs_secret)}]\n"), None
    yield "input-files-absolute", A._test("    input: hi\n", f"    input_files: [{q(abs_secret)}]\n"), None
    yield "tests-string-upper-file-url", A._suite(f"tests: {q('FILE://' + str(out / 'cases.yaml'))}\n"), None
    yield "tests-string-file-url-localhost", A._suite(f"tests: {q('file://localhost' + str(out / 'cases.jsonl'))}\n"), None
    yield "tests-string-percent-dotdot", A._suite(f"tests: {q(up.replace('..', '%2e%2e') + '/cases.jsonl')}\n"), None
    yield "tests-string-backslashes", A._suite(f"tests: {q(up.replace('/', chr(92)) + chr(92) + 'cases.jsonl')}\n"), None
    yield "tests-glob-class-dotdot", A._suite("tests:\n  - " + q("file://" + up.replace("..", "[.][.]") + "/*.yaml") + "\n"), None
    yield "tests-glob-star-then-dotdot", A._suite("tests:\n  - " + q(f"file://*/../{up}/*.yaml") + "\n"), \
        lambda: (evals / "sub").mkdir()
    yield "tests-glob-globstar-then-dotdot", A._suite("tests:\n  - " + q(f"file://**/../{up}/*.jsonl") + "\n"), None
    yield "tests-glob-braces", A._suite("tests:\n  - " + q("file://{" + up + ",x}/*.yaml") + "\n"), None
    yield "tests-glob-absolute-star", A._suite("tests:\n  - " + q("file://" + str(out).replace("outside", "out*") + "/*.jsonl") + "\n"), None
    yield "tests-list-file-url-upper", A._suite("tests:\n  - " + q("FILE://" + str(out / "cases.yaml")) + "\n"), None
    judge = "tests:\n  - id: a\n    criteria: c\n    input: hi\n    assert:\n      - type: llm-judge\n        prompt: {p}\n"
    yield "judge-prompt-file-url", A._suite(judge.format(p=q("file://" + str(out / "secret.md")))), None
    yield "judge-prompt-percent-dotdot", A._suite(judge.format(p=q(up.replace("..", "%2e%2e") + "/secret.md"))), None
    yield "judge-prompt-backslashes", A._suite(judge.format(p=q(up.replace("/", "\\") + "\\secret.md"))), None
    code = "tests:\n  - id: a\n    criteria: c\n    input: hi\n    assert:\n      - type: code-judge\n        command: {c}\n"
    yield "code-judge-command-string", A._suite(code.format(c=q(f"python3 {up}/judge.py"))), None
    yield "code-judge-file-url", A._suite(code.format(c=q(["python3", "file://" + str(out / "judge.py")]))), None
    yield "workspace-template-file-url", A._suite("workspace:\n  template: " + q("file://" + str(out / "tpl")) +
                                                  "\ntests:\n  - id: a\n    criteria: c\n    input: hi\n"), None
    yield "workspace-template-backslashes", A._suite("workspace:\n  template: " + q(up.replace("/", "\\") + "\\tpl") +
                                                     "\ntests:\n  - id: a\n    criteria: c\n    input: hi\n"), None
    yield "workspace-file-percent", A._suite("workspace: " + q(up.replace("..", "%2e%2e") + "/ws.yaml") +
                                             "\ntests:\n  - id: a\n    criteria: c\n    input: hi\n"), None
    inner = ("- id: in\n  criteria: c\n  input:\n    - role: user\n      content:\n"
             f"        - {{type: image, value: {q('file://' + abs_secret)}}}\n")
    yield "tests-file-inside-with-outside-image", A._suite("tests: inner.yaml\n"), \
        lambda: (evals / "inner.yaml").write_text(inner)
    yield "tests-jsonl-inside-with-file-url-block", A._suite("tests: inner.jsonl\n"), \
        lambda: (evals / "inner.jsonl").write_text(json.dumps({"id": "in", "criteria": "c", "input": [
            {"role": "user", "content": [{"type": "file", "value": "FILE://" + abs_secret}]}]}) + "\n")


def attack_outside7(tally: A.Tally) -> None:
    """The new spellings through the outside area's harness (check and run under strace), then every
    outside case (old and new) opened in the language server, then the dataset's sidecar search."""
    print("outside files (seventh round)", flush=True)
    original = A.outside_cases
    A.outside_cases = outside7_cases
    try:
        A.attack_outside(tally)
    finally:
        A.outside_cases = original
    _outside_in_the_server(tally)
    _dataset_search(tally)


def _strace_command(log: Path) -> list[str]:
    return ["strace", "-f", "-qq", "-e", "trace=open,openat,openat2,execve,creat", "-e", "status=successful",
            "-o", str(log), sys.executable, "-m", "evalspec_lsp"]


def _opened(log: Path) -> list[str]:
    text = log.read_text(errors="replace") if log.exists() else ""
    return [m.group(1) for m in re.finditer(r'(?:open|openat|openat2|execve|creat)\((?:[A-Z_]+, )?"([^"]*)"', text)]


def _outside_in_the_server(tally: A.Tally) -> None:
    """Each outside case's suite opened in the editor: diagnostics, then every feature at every
    reference, then the Run command (the fake provider behind the targets). Broken: a file under the
    outside folder opened by the guard, the server or anything they started, or its marker in any
    message to the client or request to the provider."""
    with FakeProvider() as fake:
        index = 0
        while True:
            root = Path(tempfile.mkdtemp(prefix="attack-out7s-"))
            try:
                out = A._outside_world(root)
                project = root / "proj"
                (project / ".git").mkdir(parents=True)
                (project / ".agentv").mkdir()
                (project / ".agentv" / "targets.yaml").write_text(A.TARGETS)
                (project / "evals").mkdir()
                cases = [*A.outside_cases(root, out, project), *outside7_cases(root, out, project)]
                if index >= len(cases):
                    break
                name, text, setup = cases[index]
                index += 1
                if A.ONLY and A.ONLY not in name:
                    continue
                if setup is not None:
                    setup()
                suite = project / "evals" / "s.eval.yaml"
                suite.write_text(text)
                problem = _server_probe(root, out, project, suite, text, fake)
                tally.note(f"outside7/server/{name}", problem)
            finally:
                shutil.rmtree(root, ignore_errors=True)


def _server_probe(root: Path, out: Path, project: Path, suite: Path, text: str, fake: FakeProvider) -> str | None:
    log = root / "strace.log"
    saved = dict(os.environ)
    os.environ.update(A.base_env(fake, out) | {"ATTACK_PATH": str(out / "secret.txt"),
                                               "ATTACK_UP": os.path.relpath(out, project / "evals"),
                                               "ATTACK_ABS": str(out / "secret.txt")})
    fake.reset()
    seen: list[bytes] = []
    try:
        server = A.RawLsp(project, _strace_command(log))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        A._initialized(server, project)
        uri = suite.as_uri()
        A._open(server, uri, text)
        time.sleep(1.0)
        ids = []
        n = 0
        for method in ("textDocument/documentLink", "textDocument/codeLens", "textDocument/documentSymbol",
                       "textDocument/diagnostic", "textDocument/foldingRange"):
            n += 1
            server.request(f"r{n}", method, {"textDocument": {"uri": uri}})
            ids.append(f"r{n}")
        for line_no, line in enumerate(text.splitlines()):
            for col in {max(0, line.find("value:") + 8), max(0, line.find("- ") + 4), len(line) - 2,
                        max(0, line.find(":") + 2)}:
                for method in ("textDocument/hover", "textDocument/definition", "textDocument/completion"):
                    n += 1
                    server.request(f"r{n}", method, A._at(uri, line_no, col))
                    ids.append(f"r{n}")
        problems = []
        late = [i for i in ids if server.wait(i, 10) is None]
        if late:
            problems.append(f"{len(late)} request(s) unanswered")
        server.request("run", "workspace/executeCommand", {"command": "evalspec.run", "arguments": [{"uri": uri}]})
        server.wait("run", 10)
        time.sleep(3.0)
        with server.cond:
            replies = json.dumps(list(server.replies.values()))
        seen.append(replies.encode())
        seen.append(server.stderr)
    finally:
        server.stop()
    real_out = os.path.realpath(out)
    leaked = sorted({p for p in _opened(log) if os.path.realpath(os.path.join(project / "evals", p)).startswith(real_out + "/")
                     or "/outside/" in p})
    if leaked:
        problems.append(f"opened {', '.join(leaked[:3])}")
    where = [w for w, t in (("replies or log", b"\n".join(seen).decode(errors="replace")),
                            ("requests", "\n".join(r.body.decode(errors="replace") for r in fake.requests)))
             if A.MARKER in t]
    if where:
        problems.append(f"marker in {', '.join(where)}")
    return "; ".join(problems) or None


def _dataset_search(tally: A.Tally) -> None:
    """`check`/`run` of a dataset (`cases.jsonl`) outside any repository: the search for the suite that
    includes it must not read the folders beside the dataset's (no suite there may name it)."""
    with FakeProvider() as fake:
        # (the files directly in the dataset's folder and its parents are read: a suite there may name it)
        for layout in ("sibling", "sibling-deep", "grandparent-sibling"):
            root = Path(tempfile.mkdtemp(prefix="attack-out7d-"))
            try:
                data = root / "a" / "b" / "data"
                data.mkdir(parents=True)
                (data / "cases.jsonl").write_text(json.dumps({"id": "t", "criteria": "c", "input": "hi"}) + "\n")
                far = {"sibling": root / "a" / "b" / "other", "sibling-deep": root / "a" / "b" / "o" / "t" / "h",
                       "grandparent-sibling": root / "a" / "x"}[layout]
                far.mkdir(parents=True, exist_ok=True)
                (far / "outside.yaml").write_text(f"name: {A.MARKER}\ndescription: d\ntests: ./*\n")
                problems = []
                for args in (["check", str(data / "cases.jsonl")],
                             ["run", str(data / "cases.jsonl"), "-o", str(root / "res"), "--no-report"]):
                    ran = A.run_cli(args, env=A.base_env(fake, root), cwd=data, trace=root, timeout=90)
                    if A.crashed(ran):
                        problems.append(f"{args[0]}: {A.crashed(ran)}")
                    opened = [p for p in ran.opened if p.endswith("outside.yaml")]
                    if opened:
                        problems.append(f"{args[0]} opened {opened[0]}")
                tally.note(f"outside7/dataset-search/{layout}", "; ".join(problems) or None)
            finally:
                shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# secrets7: interpolation spellings and places


def secret7_cases(key: str) -> Iterator[tuple[str, str, list[Reply], dict[str, str], str | None]]:
    """(name, eval file, replies, extra env, targets file or None for the default)."""
    base = ("name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n    input: hello\n"
            "    assert: [{type: contains, value: hello}]\n")
    k = "${{ OPENAI_API_KEY }}"
    yield "no-spaces", base.replace("criteria: c", "criteria: 'k=${{OPENAI_API_KEY}}'"), [], {}, None
    yield "tabs", base.replace("criteria: c", '"criteria": "k=${{\\tOPENAI_API_KEY\\t}}"'), [], {}, None
    yield "many-spaces", base.replace("criteria: c", "criteria: 'k=${{       OPENAI_API_KEY        }}'"), [], {}, None
    yield "input-twice-in-one", base.replace("input: hello", f"input: '{k}{k}'"), [], {}, None
    yield "folded-input", base.replace("input: hello", f"input: >-\n      a\n      {k}\n      b"), [], {}, None
    yield "suite-name", base.replace("name: s", f"name: 'n-{k}'"), [], {}, None
    yield "description", base.replace("description: d", f"description: '{k}'"), [], {}, None
    yield "test-id-in-file-name", base.replace("id: a", f"id: 'x{k}'"), [], {}, None
    yield "file-block-path", base.replace("input: hello", "input:\n      - role: user\n        content:\n"
                                          f"          - {{type: file, value: './{k}.txt'}}"), [], {}, None
    yield "image-block-path", base.replace("input: hello", "input:\n      - role: user\n        content:\n"
                                           f"          - {{type: image, value: './{k}.png'}}"), [], {}, None
    yield "tests-file-path", f"name: s\ndescription: d\ntests: './{k}.jsonl'\n", [], {}, None
    yield "tests-glob", f"name: s\ndescription: d\ntests:\n  - 'file://{k}/*.yaml'\n", [], {}, None
    yield "judge-prompt-path", base.replace("assert: [{type: contains, value: hello}]",
                                            f"assert: [{{type: llm-judge, prompt: './{k}.md'}}]"), [], {}, None
    yield "workspace-template-path", base.replace("tests:", f"workspace: {{template: './{k}'}}\ntests:"), [], {}, None
    yield "code-judge-command", base.replace("assert: [{type: contains, value: hello}]",
                                             f"assert: [{{type: code-judge, command: [echo, '{k}']}}]"), [], {}, None
    yield "code-judge-missing-program", base.replace("assert: [{type: contains, value: hello}]",
                                                     f"assert: [{{type: code-judge, command: ['./{k}']}}]"), [], {}, None
    yield "rubric-text", base.replace("assert: [{type: contains, value: hello}]",
                                      f"assert: [{{type: rubrics, criteria: [{{id: r, outcome: '{k}'}}]}}]"), [], {}, None
    yield "regex-assert", base.replace("value: hello}", f"value: hello}}, {{type: regex, value: '{k}('}}"), [], {}, None
    yield "metadata", base.replace("criteria: c", f"criteria: c\n    metadata: {{k: '{k}'}}"), [], {}, None
    yield "other-secret-looking-name", base.replace("input: hello", "input: '${{ GITHUB_TOKEN }}'"), [], \
        {"GITHUB_TOKEN": key}, None
    targets = A.TARGETS.replace("model: candidate", "model: 'cand-${{ OPENAI_API_KEY }}'")
    yield "target-model-id", base, [], {}, targets
    targets = A.TARGETS.replace("endpoint: ${{ OPENAI_BASE_URL }}", "endpoint: '${{ OPENAI_BASE_URL }}/${{ OPENAI_API_KEY }}'", 1)
    yield "target-endpoint-path", base, [Reply.raw(404, "no such path")] * 4, {}, targets
    targets = A.TARGETS.replace("name: default", "name: 'd-${{ OPENAI_API_KEY }}'").replace(
        "judge_target: grader", "judge_target: grader")
    yield "target-name", base.replace("criteria: c", "criteria: c\n    execution: {target: 'd-${{ OPENAI_API_KEY }}'}"), \
        [], {}, targets


def attack_secrets7(tally: A.Tally) -> None:
    print("secrets (seventh round)", flush=True)
    with FakeProvider() as fake:
        for name, text, replies, extra, targets in secret7_cases(A.KEY):
            if A.ONLY and A.ONLY not in name:
                continue
            root = Path(tempfile.mkdtemp(prefix="attack-sec7-"))
            try:
                project = root / "proj"
                (project / ".git").mkdir(parents=True)
                (project / ".agentv").mkdir()
                (project / ".agentv" / "targets.yaml").write_text(targets or A.TARGETS)
                suite = project / "s.eval.yaml"
                suite.write_text(text)
                env = A.base_env(fake, root) | extra
                fake.reset()
                fake.then(*replies)
                problems = []
                for args in (["check", str(suite)], ["check", str(suite), "--format", "json"],
                             ["run", str(suite), "-o", str(root / "results"), "--timeout", "3", "--retries", "0",
                              "--max-wait", "2"],
                             ["run", str(suite), "-o", str(root / "results"), "--timeout", "3", "--retries", "0",
                              "--max-wait", "2", "--json", "--resume"],
                             ["report", str(root / "results"), "--format", "markdown", "-o", str(root / "results" / "r.md")]):
                    ran = A.run_cli(args, env=env, cwd=project, timeout=120)
                    if A.crashed(ran):
                        problems.append(f"{args[0]}: {A.crashed(ran)}")
                    for where, t in (("stdout", ran.out), ("stderr", ran.err)):
                        leak = A._leaks(t, A.KEY)
                        if leak:
                            problems.append(f"{' '.join(args[:2 if args[0] != 'check' else 1])} {where}: {leak}")
                for f in sorted((root / "results").rglob("*")) if (root / "results").exists() else []:
                    rel = str(f.relative_to(root))
                    leak = A._leaks(rel, A.KEY)
                    if leak:
                        problems.append(f"a file's name: {leak}")
                    if f.is_file():
                        leak = A._leaks(f.read_text(errors="replace"), A.KEY)
                        if leak:
                            problems.append(f"{rel[:60]}: {leak}")
                tally.note(f"secrets7/{name}", "; ".join(dict.fromkeys(problems[:4])) or None)
            finally:
                shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# resume7: runs of one label started at the same instant


GO_WRAPPER = ("import os, sys, time\n"
              "go = sys.argv[1]\n"
              "while not os.path.exists(go):\n"
              "    time.sleep(0.0005)\n"
              "os.execv(sys.executable, [sys.executable, '-m', 'evalspec.cli', *sys.argv[2:]])\n")


def _suite7(n: int) -> str:
    lines = ["name: s", "description: d", "tests:"]
    for i in range(n):
        lines += [f"  - id: t{i}", "    criteria: c", f"    input: question number {i}",
                  "    assert: [{type: contains, value: question}]"]
    return "\n".join(lines) + "\n"


def attack_resume7(tally: A.Tally) -> None:
    """A run killed (or not started, or its holder SIGSTOPped), then N runs of the same label released at
    the same instant by one start signal; the fake provider counts each prompt's calls."""
    print("resumes at the same instant (seventh round)", flush=True)
    n = 60
    with FakeProvider() as fake:
        fake.latency = 0.02
        plans: list[tuple[str, str, float | None, list[list[str]]]] = []
        for fmt in ("weval", "agentv"):
            for kill_after in (None, 1.0, "stopped"):
                for followers in ([["--resume"]] * 2, [["--resume"]] * 4, [["--resume"]] * 8,
                                  [["--resume"], ["--resume", "--retry-errors"], ["--resume"], []],
                                  [["--resume", "-j", "16"]] * 4):
                    if kill_after is None and followers == [["--resume"]] * 8 and fmt == "agentv":
                        continue
                    plans.append((fmt, str(kill_after), kill_after if isinstance(kill_after, float) else None,
                                   followers))
        for fmt, label, kill_after, followers in plans:
            name = f"resume7/{fmt}/first={label}/{'+'.join(' '.join(f) or 'fresh' for f in followers)}"
            if A.ONLY and A.ONLY not in name:
                continue
            root = Path(tempfile.mkdtemp(prefix="attack-res7-"))
            stopped: subprocess.Popen[str] | None = None
            try:
                if fmt == "weval":
                    src = root / "b.yml"
                    src.write_text(A._blueprint(n))
                else:
                    (root / ".git").mkdir()
                    (root / ".agentv").mkdir()
                    (root / ".agentv" / "targets.yaml").write_text(A.TARGETS)
                    src = root / "s.eval.yaml"
                    src.write_text(_suite7(n))
                (root / "go.py").write_text(GO_WRAPPER)
                env = A.base_env(fake, root)
                fake.reset()
                common = ["run", str(src), "-o", str(root / "out"), "-j", "4", "--no-report", "--retries", "0",
                          "--label", "same"]
                before: list[str] = []
                if kill_after is not None:
                    first = A._start(common, env, root)
                    time.sleep(kill_after)
                    os.killpg(first.pid, signal.SIGKILL)
                    first.communicate(timeout=60)
                    before = A._asked(fake)
                elif label == "stopped":
                    stopped = A._start(common, env, root)
                    time.sleep(1.0)
                    os.killpg(stopped.pid, signal.SIGSTOP)
                    before = A._asked(fake)
                go = root / "go"
                procs = [subprocess.Popen([sys.executable, str(root / "go.py"), str(go), *common, *f], env=env, cwd=root,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                                          start_new_session=True) for f in followers]
                time.sleep(1.0)  # every follower waiting on the signal
                codes, after, problems = A.release_followers(go, procs, fake, before)
                if label != "stopped":
                    missing = {str(i) for i in range(n)} - set(before) - set(after)
                    if missing:
                        problems.append(f"{len(missing)} prompt(s) never asked")
                    if not any(c == 0 for c in codes):
                        problems.append(f"no follower finished the run (exits {codes})")
                elif any(c == 0 and "--resume" in f for c, f in zip(codes, followers, strict=True)) and after:
                    # (a fresh Weval run is a run of its own, with its own timestamp: it may run)
                    problems.append("a --resume follower ran while the label's holder was only stopped")
                tally.note(f"{name} exits {codes}", "; ".join(dict.fromkeys(problems)) or None)
            finally:
                if stopped is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(stopped.pid, signal.SIGKILL)
                    stopped.communicate(timeout=30)
                shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# faults7: HTTP replies no round sent


def _gzip_members(count: int) -> bytes:
    empty = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = empty.compress(b"") + empty.flush()
    return member * count


def _gzip_endless_name(size: int) -> bytes:
    # a gzip header with FNAME set, and a name that never ends within the body
    return b"\x1f\x8b\x08\x08\x00\x00\x00\x00\x00\x03" + b"n" * size


def _raw_deflate_bomb(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = b" " * (1 << 20)
    return b"".join([*(packer.compress(block) for _ in range(size >> 20)), packer.flush()])


def faults7_cases() -> Iterator[tuple[str, A.Behaviour]]:
    ok = json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}).encode()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
    chunked = head + b"transfer-encoding: chunked\r\n\r\n"
    raw = lambda data, close=True: (lambda r, w: A._raw_bytes(w, data, close=close))  # noqa: E731
    yield "7/chunk-size-past-64-bits", raw(chunked + b"1" + b"0" * 40 + b"\r\n" + ok + b"\r\n0\r\n\r\n")
    yield "7/chunk-size-negative", raw(chunked + b"-5\r\n" + ok + b"\r\n0\r\n\r\n")
    yield "7/chunk-size-with-0x", raw(chunked + b"0x%x\r\n" % len(ok) + ok + b"\r\n0\r\n\r\n")
    yield "7/chunk-extension-1mb", raw(chunked + b"%x;" % len(ok) + b"e" * 1_000_000 + b"\r\n" + ok + b"\r\n0\r\n\r\n")
    yield "7/chunk-longer-than-said", raw(chunked + b"4\r\n" + ok + b"\r\n0\r\n\r\n")
    yield "7/chunk-without-crlf", raw(chunked + b"%x\r\n" % len(ok) + ok + b"0\r\n\r\n")
    yield "7/trailers-1mb", raw(chunked + b"%x\r\n" % len(ok) + ok + b"\r\n0\r\n" +
                                b"".join(b"x-t%d: %s\r\n" % (i, b"v" * 1000) for i in range(1000)) + b"\r\n")
    yield "7/trailers-endless", A._forever(chunked + b"%x\r\n" % len(ok) + ok + b"\r\n0\r\n", b"x-t: v\r\n")
    yield "7/last-chunk-missing", raw(chunked + b"%x\r\n" % len(ok) + ok + b"\r\n", close=False)
    yield "7/thousand-stacked-encodings", A._reply(200, ok, "content-type: application/json",
                                                   "content-encoding: " + ", ".join(["identity"] * 1000))
    yield "7/thousand-gzip-encodings", A._reply(200, ok, "content-type: application/json",
                                                "content-encoding: " + ", ".join(["gzip"] * 1000))
    yield "7/gzip-million-empty-members", A._reply(200, _gzip_members(1_000_000), "content-type: application/json",
                                                   "content-encoding: gzip")
    yield "7/gzip-endless-file-name", A._reply(200, _gzip_endless_name(20_000_000), "content-type: application/json",
                                               "content-encoding: gzip")
    yield "7/raw-deflate-bomb-1g", A._reply(200, _raw_deflate_bomb(1 << 30), "content-type: application/json",
                                            "content-encoding: deflate")
    yield "7/gzip-bomb-chunked-slowly", A._trickle(head + b"content-encoding: gzip\r\ncontent-length: 2000000\r\n\r\n",
                                                   A._bomb(1 << 30, True)[:200], 0.05)
    yield "7/gzip-bomb-http10-no-length", raw(b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n"
                                              b"content-encoding: gzip\r\n\r\n" + A._bomb(1 << 30, True))
    yield "7/http10-keep-alive-no-length-hang", raw(b"HTTP/1.0 200 OK\r\nconnection: keep-alive\r\n"
                                                    b"content-type: application/json\r\n\r\n" + ok, close=False)
    yield "7/reason-phrase-1mb", raw(b"HTTP/1.1 200 " + b"O" * 1_000_000 + b"\r\ncontent-length: %d\r\n\r\n" % len(ok) + ok)
    yield "7/reason-phrase-controls", raw(b"HTTP/1.1 500 \x1b]0;PWNED\x07\x1b[2J\r\ncontent-length: 2\r\n\r\n{}")
    yield "7/status-three-digits-plus", raw(b"HTTP/1.1 2000 OK\r\ncontent-length: %d\r\n\r\n" % len(ok) + ok)
    yield "7/status-negative", raw(b"HTTP/1.1 -200 OK\r\ncontent-length: %d\r\n\r\n" % len(ok) + ok)
    yield "7/version-http3", raw(b"HTTP/3 200 OK\r\ncontent-length: %d\r\n\r\n" % len(ok) + ok)
    yield "7/icy-status", raw(b"ICY 200 OK\r\ncontent-length: %d\r\n\r\n" % len(ok) + ok)
    yield "7/charset-unknown", A._reply(200, ok, "content-type: application/json; charset=x-evil-9")
    yield "7/charset-utf7", A._reply(200, b'{"choices":[{"message":{"content":"+AGgAaQ-"}}]}',
                                     "content-type: application/json; charset=utf-7")
    yield "7/304-with-body", raw(b"HTTP/1.1 304 Not Modified\r\ncontent-length: %d\r\n\r\n" % len(ok) + ok)
    yield "7/content-length-plus-sign", raw(head + b"content-length: +%d\r\n\r\n" % len(ok) + ok)
    yield "7/content-length-list", raw(head + b"content-length: %d, %d\r\n\r\n" % (len(ok), len(ok)) + ok)
    yield "7/content-length-huge-exact-body-short", raw(head + b"content-length: 18446744073709551617\r\n\r\n" + ok)
    yield "7/header-name-with-space", raw(b"HTTP/1.1 200 OK\r\ncontent-length : %d\r\n\r\n" % len(ok) + ok)
    yield "7/headers-100k-tiny", raw(b"HTTP/1.1 200 OK\r\n" + b"a:b\r\n" * 100_000 + b"content-length: %d\r\n\r\n"
                                     % len(ok) + ok)
    yield "7/headers-endless-obs-fold", A._forever(b"HTTP/1.1 200 OK\r\nx-a: 1\r\n", b" folded\r\n")
    yield "7/extra-response-after-body", raw(head + b"content-length: %d\r\n\r\n" % len(ok) + ok +
                                             b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nsmugg", close=False)
    yield "7/bodies-at-once-100mb-declared-short", raw(head + b"content-length: 104857600\r\n\r\n" + ok)


def attack_faults7(tally: A.Tally) -> None:
    print("provider replies (seventh round)", flush=True)
    original = A.fault_cases
    A.fault_cases = lambda port: faults7_cases()
    try:
        A.attack_faults(tally)
    finally:
        A.fault_cases = original


AREAS7: dict[str, Callable[[A.Tally], None]] = {
    "lsp7": attack_lsp7,
    "outside7": attack_outside7,
    "secrets7": attack_secrets7,
    "resume7": attack_resume7,
    "faults7": attack_faults7,
}
