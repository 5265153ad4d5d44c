"""Running from the editor, in the LSP process: the commands behind the run lenses and actions, and
each document's run state.

Commands (workspace/executeCommand), one argument `{"uri", "item", "model", "line", "open", "markdown"}`
or `uri[, item]`: `evalspec.run` (answers once started; runs as cancellable work-done progress),
`evalspec.plan`, `evalspec.cancelRun`, `evalspec.showResults`; past the request budget `pending`. A
run is planned by a worker job (run_jobs.py) and run by its own process (evalspec/ide/run_process.py)
whose events feed the document's RunBoard; cancel is SIGTERM to it. A file's earlier results are read
back when it is first checked. Only a command runs anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from evalspec.ide.run_process import ENDED, FAILED, REFUSED, STOPPED, UNWRITABLE, RunEnd, RunProcess
from evalspec.ide.runs import RunBoard, RunItem
from evalspec.run.events import RunFinished

from ..convert import path_of
from ..documents import Document
from ..engine_workers import OK
from ..server import EvalspecServer
from .run_jobs import CANCEL, PLAN, RUN, SHOW

log = logging.getLogger(__name__)
RESTORE_TRIES = 20  # a worker starting or replaced meanwhile; then the next edit looks again
RUN_STATE = "evalspec/runState"  # our notification: a document's run changed (clients refresh lenses)
RUN_FINISHED = "evalspec/runFinished"  # and: it ended (the summary and result files)
ALREADY_RUNNING = "a run of this file is already going on; cancel it first"
REFRESH_EVERY_S = 0.25  # lens refreshes and progress reports while results pour in, at most this often
BOARD_SHARE = 20  # a refresh sends the worker the whole board: at most 1/BOARD_SHARE of the time doing so


def refresh_every(board_s: float) -> float:
    """Seconds between a run's lens refreshes, given what sending its board last took."""
    return max(REFRESH_EVERY_S, BOARD_SHARE * board_s)


@dataclass(eq=False)
class DocumentRuns:
    """A document's runs: kept while it is open or its run goes on."""

    board: RunBoard = field(default_factory=RunBoard)
    task: asyncio.Task[None] | None = None  # plans the run, then follows its process
    process: RunProcess | None = None  # the run's own process while it runs
    cancelled: bool = False  # the user asked the run to stop
    files: list[str] = field(default_factory=list)  # result files of the last run
    items: list[RunItem] = field(default_factory=list)  # as last analysed: to follow renamed ids
    generation: int = 0  # bumped whenever the board changes (the worker's copy is replaced then)
    restored: bool = False  # earlier runs' results were looked for on disk
    restore_tries: int = 0  # looks that got no answer (asked again, a few times)
    planning: bool = False  # the task is planning the run: the board still shows the last one

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def cancel(self) -> None:
        """Stop the run: its process writes what finished, then ends (RunProcess.stop); a run still
        being planned is not started."""
        self.cancelled = True
        if self.process is not None:
            self.process.stop()
        elif self.task is not None:
            self.task.cancel()


@dataclass(frozen=True)
class Target:
    """What a command is asked to do."""

    uri: str
    item: str | None = None
    model: str | None = None
    line: int | None = None  # instead of `item`: the prompt / test around this line (0-based), else the file
    open: bool = True  # showResults: open the report / results through the client
    markdown: bool = False  # showResults: also answer the report as Markdown

    @classmethod
    def parse(cls, args: tuple[Any, ...]) -> Target:
        """`{"uri": …, "item": …, "model": …}`, or `uri[, item]` as plain arguments (what a user types)."""
        model = line = None
        flags: dict[str, Any] = {}
        if args and isinstance(args[0], dict):
            uri, item, model, line = (args[0].get(k) for k in ("uri", "item", "model", "line"))
            flags = {k: v for k in ("open", "markdown") if isinstance(v := args[0].get(k), bool)}
        else:
            uri = args[0] if args else None
            item = args[1] if len(args) > 1 else None
        if not isinstance(uri, str) or not uri:
            raise ValueError("expected the document's uri as the first argument")
        return cls(uri, item if isinstance(item, str) and item else None,
                   model.strip() if isinstance(model, str) and model.strip() else None,
                   line if isinstance(line, int) and not isinstance(line, bool) and line >= 0 else None, **flags)


def workspace_root(server: EvalspecServer, uri: str) -> Path:
    """The workspace folder holding the document, else the document's own folder (then the cwd)."""
    doc = path_of(uri)
    if doc is None:
        return Path.cwd()
    return next((folder for folder in server.folders() if doc.is_relative_to(folder)), doc.parent)


def output_folder(server: EvalspecServer, uri: str) -> Path:
    output = Path(server.settings.run.output).expanduser()
    return output if output.is_absolute() else workspace_root(server, uri) / output


def _name(uri: str) -> str:
    return uri.rsplit("/", 1)[-1]


class RunFeature:
    def __init__(self, server: EvalspecServer) -> None:
        self.server = server
        self._tasks: set[asyncio.Future[None]] = set()  # restores in flight (kept from the GC)

    def message(self, kind: lsp.MessageType, text: str) -> None:
        from evalspec.providers.redact import redact

        self.server.tell(kind, redact(text))  # an error may quote what a provider echoed

    def refuse(self, why: str) -> dict[str, Any]:
        """Nothing is run: the user is told why, and so is the command's caller."""
        self.message(lsp.MessageType.Warning, f"evalspec: {why}")
        return {"ok": False, "error": why}

    async def ask(self, name: str, uri: str | None, *args: Any) -> Any:
        """The worker's answer to a run job (no budget: the commands answer `pending` past theirs)."""
        status, value = await self.server.workers.call(name, uri, None, *args,
                                                       board=self.server.board(uri) if uri else None)
        if status != OK:
            raise RuntimeError(f"the engine worker could not answer ({status}): {value[1] if value else ''}")
        return value

    async def in_budget(self, future: asyncio.Future[Any], pending: Any) -> Any:
        """`future`'s result if it comes within the request budget, else `pending` (its failure is
        reported when it comes)."""
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.server.remaining_budget())
        except TimeoutError:
            def done(f: asyncio.Future[Any]) -> None:
                if not f.cancelled() and f.exception() is not None:
                    self.server.report_failure("a command finishing late", f.exception())  # type: ignore[arg-type]

            future.add_done_callback(done)
            return pending

    async def plan(self, target: Target, summary: bool = False) -> Any:
        """The worker's plan (run_jobs.plan) with the settings' options, or why nothing can run. Planning
        hashes every prompt (1-2 s for a 4 MB file), in the worker; the summary is kept there."""
        if self.server.documents.get(target.uri) is None:
            return "this file is not open"
        return await self.ask("plan", target.uri, self.server.settings.run, output_folder(self.server, target.uri),
                              target.item, target.model, summary)

    async def plan_command(self, target: Target) -> dict[str, Any]:
        """The plan, shown as a message and answered (later, as a message only, past the budget)."""

        async def show() -> dict[str, Any]:
            planned = await self.plan(target, summary=True)
            if isinstance(planned, str):
                return self.refuse(planned)
            summary, text = planned
            self.message(lsp.MessageType.Info, text)
            return {"ok": True, "plan": summary}

        return await self.in_budget(asyncio.ensure_future(show()), {
            "ok": True, "pending": f"planning {_name(target.uri)}: the plan is shown when it is ready"})

    async def start(self, target: Target) -> dict[str, Any]:
        """Plans the run and starts it; past the budget the answer is `pending` (the lenses show the run
        as going on, it can be cancelled, and a refusal found later is shown as a message)."""
        if target.item is None and target.line is not None and self.server.documents.get(target.uri) is not None:
            target = Target(target.uri, await self.ask("item_at", target.uri, target.line), target.model)
        state = self.server.runs.setdefault(target.uri, DocumentRuns())
        if state.running:
            return self.refuse(ALREADY_RUNNING)
        started: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        state.cancelled = False
        state.task = asyncio.create_task(self.plan_and_drive(target, state, started))
        state.task.add_done_callback(lambda _: self.forget_if_closed(target.uri, state))
        answer = await self.in_budget(started, None)
        if answer is None:
            self.changed(target.uri, state)  # the suite's lens offers to cancel meanwhile
            return {"ok": True, "pending": f"planning {_name(target.uri)}: the run starts when its plan is ready",
                    "item": target.item}
        return answer

    async def plan_and_drive(self, target: Target, state: DocumentRuns, started: asyncio.Future[dict[str, Any]]) -> None:
        uri, item = target.uri, target.item
        state.planning = True
        try:
            planned = await self.plan(target)
        except asyncio.CancelledError:
            self.not_started(uri, state, started, {"ok": False, "error": "cancelled"})
            raise
        except Exception as exc:  # the command may have answered already: reported, not raised
            self.server.report_failure(f"planning the run of {uri}", exc)
            planned = {"ok": False, "error": str(exc)}
        if not isinstance(planned, tuple):
            self.not_started(uri, state, started, self.refuse(planned) if isinstance(planned, str) else planned)
            return
        state.planning = False
        run_input, label, cells, found, state.items = planned
        if found:  # the run still goes on: those cells fail with the same reason, visibly
            self.message(lsp.MessageType.Warning, "evalspec: " + "; ".join(found))
        state.board.start(state.items, item)
        state.files = []
        started.set_result({"ok": True, "runLabel": label, "cells": cells, "item": item})
        self.changed(uri, state)
        await self.drive(uri, item, run_input, state)

    async def drive(self, uri: str, item: str | None, run_input: bytes, state: DocumentRuns) -> None:
        """Runs the plan in a process of its own (evalspec/ide/run_process.py), whose events feed the board."""
        board = state.board
        progress: str | None = None
        last = shown = 0.0
        end = RunEnd(FAILED)
        try:
            progress = await self.begin_progress(uri, item, state)
            state.process = await RunProcess.start(
                run_input, board, lambda line: log.warning("the run of %s: %s", _name(uri), line))
            async for _ in state.process.follow():
                state.generation += 1  # the worker gets this board with the next lens or hover
                now = time.monotonic()
                if now - last >= REFRESH_EVERY_S and progress is not None:
                    last = now
                    with contextlib.suppress(Exception):
                        self.server.work_done_progress.report(progress, lsp.WorkDoneProgressReport(
                            message=board.progress_text(), cancellable=True,
                            percentage=int(100 * board.done / board.total) if board.total else 0))
                if now - shown >= refresh_every(self.server.workers.board_s):
                    shown = now
                    self.changed(uri, state)
            end = state.process.end
        except asyncio.CancelledError:  # the server shuts down: the run is told to stop (follow() did)
            board.stop(cancelled=True)
            end = RunEnd(STOPPED)
            raise
        except Exception as exc:  # a bug must not take the server down
            if state.process is not None:
                state.process.stop()
            board.stop(interrupted=True)
            end = RunEnd(FAILED, "".join(traceback.format_exception(exc)))
        finally:
            state.process = None
            if progress is not None:
                with contextlib.suppress(Exception):
                    self.server.work_done_progress.end(progress, lsp.WorkDoneProgressEnd(
                        message="cancelled" if board.cancelled else board.progress_text()))
                    self.server.work_done_progress.tokens.pop(progress, None)
            self.ended(uri, item, state, end)

    def ended(self, uri: str, item: str | None, state: DocumentRuns, end: RunEnd) -> None:
        """The run's process is gone (the board says how the run ended): the user's editor is told, and
        told `evalspec/runFinished`."""
        if end.kind == REFUSED:  # a run of the same label (a terminal's) holds the lock: said, nothing lost
            self.changed(uri, state)
            self.message(lsp.MessageType.Warning, f"evalspec: {end.message}")
            return
        if end.kind == UNWRITABLE:  # the results folder cannot be written (a file, /dev/null, read-only, full)
            self.server.tell(lsp.MessageType.Error, f"evalspec: {end.message}")
        elif end.kind == FAILED or (end.kind == ENDED and not state.cancelled):  # a bug, or killed
            self.server.report(f"the run of {uri}", end.message)
        state.files, board, summary = end.files, state.board, end.summary
        self.changed(uri, state)
        text = board.outcome(item)
        where = f" Results: {state.files[0]}" if state.files else ""
        self.server.log_to_client(lsp.MessageType.Info, f"evalspec: {text}.{where}")
        if item is None or board.interrupted:  # one prompt's result is in its lens; a suite's deserves a word
            with contextlib.suppress(Exception):
                self.server.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info,
                                                                      message=f"evalspec: {text}"))
        if summary is None and board.summary is not None:
            summary = RunFinished(board.summary).to_json()["summary"]
        with contextlib.suppress(Exception):
            self.server.protocol.notify(RUN_FINISHED, {
                "uri": uri, "item": item, "interrupted": board.interrupted, "cancelled": board.cancelled,
                "files": state.files, "summary": summary})

    def not_started(self, uri: str, state: DocumentRuns, started: asyncio.Future[dict[str, Any]],
                    answer: dict[str, Any]) -> None:
        state.planning = False
        if not started.done():
            started.set_result(answer)
        self.changed(uri, state)  # no run after all: the lenses go back

    def forget_if_closed(self, uri: str, state: DocumentRuns | None = None) -> None:
        """A document's run state goes once it is closed and its run is over (closing a tab is not
        "stop"); reopening reads the results back from the output folder."""
        state = state or self.server.runs.get(uri)
        if state is not None and self.server.documents.get(uri) is None and not state.running \
                and self.server.runs.get(uri) is state:
            del self.server.runs[uri]

    async def cancel(self, target: Target) -> dict[str, Any]:
        state = self.server.runs.get(target.uri)
        if state is None or state.task is None or not state.running:
            return {"ok": False, "error": "no run of this file is going on"}
        state.cancel()
        return {"ok": True}

    async def show(self, target: Target) -> dict[str, Any]:
        """The last run's results: its HTML report (written beside the results file) and the results
        file, opened through the client unless `open: false`; `markdown: true` adds the report as Markdown."""
        state = self.server.runs.get(target.uri)
        if state is None or not (state.files or state.board.journal):
            return {"ok": False, "error": "this file has no finished run yet"}
        journal = None if state.running else state.board.journal  # its results files are looked for
        made = await self.ask("report", target.uri if self.server.documents.get(target.uri) else None,
                              state.files, journal, target.markdown)
        if isinstance(made, str):
            return self.refuse(made)
        state.files, report, markdown = made
        answer: dict[str, Any] = {"ok": True, "file": state.files[0] if state.files else None, "report": report}
        if target.markdown:
            answer["markdown"] = markdown
        shown = report or answer["file"]
        if not target.open:
            return answer
        if shown and self.server.client.show_document:
            with contextlib.suppress(Exception):
                await self.server.window_show_document_async(lsp.ShowDocumentParams(
                    uri=Path(shown).as_uri(), external=bool(report), take_focus=True))
                return answer
        self.message(lsp.MessageType.Info, f"evalspec: results in {shown}")
        return answer

    # --- earlier runs, renamed ids ------------------------------------------------------------------

    def analysed(self, doc: Document) -> None:
        """Each check: look for the file's earlier results once, and follow renamed ids."""
        if not doc.eval_file or self.server.documents.get(doc.uri) is not doc:
            return
        state = self.server.runs.setdefault(doc.uri, DocumentRuns())
        first = not state.restored
        state.restored = True
        if first or state.board.results:
            task = asyncio.ensure_future(self.follow(doc, doc.version, state, first))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def follow(self, doc: Document, version: int, state: DocumentRuns, first: bool) -> None:
        # The first time, the file's earlier results are read in the same job as its items.
        where = None
        if first and doc.path is not None:
            where = (output_folder(self.server, doc.uri), doc.path, workspace_root(self.server, doc.uri))
        status, value = await self.server.workers.call("items_and_history", doc.uri, version, where)
        if status != OK or doc.version != version:  # a newer check comes, and follows it
            if first:
                state.restored = False
                if status != OK and doc.version == version and state.restore_tries < RESTORE_TRIES:
                    # No newer check may come (a file opened and not edited): ask again meanwhile.
                    log.info("earlier results of %s not read yet (%s): asked again", doc.uri, status)
                    state.restore_tries += 1
                    asyncio.get_running_loop().call_later(0.5 * state.restore_tries, self.analysed, doc)
            return
        items, history = value
        if not first:
            before = len(state.board.renamed)
            state.board.follow(state.items, items)
            state.items = items
            if len(state.board.renamed) != before:
                self.changed(doc.uri, state)
            return
        state.items = items
        if isinstance(history, str):  # unreadable results never stop the editor
            self.server.report(f"reading earlier results of {doc.uri}", history)
        elif history is not None and not history.empty and (current := self.server.runs.get(doc.uri)) is not None:
            current.board.restore(history)
            current.files = current.files or history.files
            log.info("restored %d item(s) of earlier runs for %s", len(history.results), _name(doc.uri))
            self.changed(doc.uri, current)

    # --- telling the editor -------------------------------------------------------------------------

    def changed(self, uri: str, state: DocumentRuns) -> None:
        """Lenses and diagnostics show the board: ask the client to fetch them again."""
        board = state.board
        state.generation += 1
        with contextlib.suppress(Exception):
            self.server.protocol.notify(RUN_STATE, {"uri": uri, "running": board.running, "done": board.done,
                                                    "total": board.total, "errors": board.errors,
                                                    "mean": board.summary.mean if board.summary else None})
        if self.server.client.code_lens_refresh:
            with contextlib.suppress(Exception):
                self.server.workspace_code_lens_refresh(None)
        self.server.documents.check_all([uri])  # its diagnostics show the run's failed points

    async def begin_progress(self, uri: str, item: str | None, state: DocumentRuns) -> str | None:
        if not self.server.client.work_done_progress:
            return None
        token = f"evalspec-run-{uuid.uuid4().hex[:12]}"
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(token), 5)
        except Exception:  # the client refused or did not answer: run without a progress bar
            log.debug("no work-done progress", exc_info=True)
            return None
        self.server.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
            title=f"evalspec: running {item or _name(uri)}", cancellable=True, message="starting", percentage=0))
        cancelled = self.server.work_done_progress.tokens.get(token)
        if cancelled is not None:  # the client's Cancel button cancels this future
            cancelled.add_done_callback(lambda f: state.cancel() if f.cancelled() else None)
        return token


def register(server: EvalspecServer) -> None:
    feature = RunFeature(server)

    def command(name: str, fn: Any) -> None:
        async def handle(*args: Any) -> Any:
            try:
                target = Target.parse(args)
            except ValueError as exc:
                return {"ok": False, "error": str(exc)}
            try:
                return await fn(target)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                server.report_failure(name, exc)
                return {"ok": False, "error": str(exc)}

        handle.__name__ = name.replace(".", "_")
        server.command(name)(handle)

    command(RUN, feature.start)
    command(PLAN, feature.plan_command)
    command(CANCEL, feature.cancel)
    command(SHOW, feature.show)
    server.on_checked.append(feature.analysed)
    server.on_closed.append(lambda doc: feature.forget_if_closed(doc.uri))
