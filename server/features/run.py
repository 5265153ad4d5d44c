"""Running from the editor: the commands behind the run lenses, driving the engine's own runner.

Commands (workspace/executeCommand), each with one argument `{"uri": …, "item": …, "model": …}` (or
the uri alone):

- `evalspec.run`: run the whole file, or one prompt / test (`item`), with the settings' models or one
  `model` (the code action "Run prompt <id> with <model>"). It answers as soon as the run
  has started; the run then goes on in the background, as work-done progress the user can cancel,
  and every result updates the document's lenses and hover as it arrives.
- `evalspec.plan`: what a run would do (calls per model, judges, estimated tokens, missing keys).
- `evalspec.cancelRun`: stop the document's run; the calls in flight are marked cancelled, the
  finished ones stay (on disk too: the journal, and results files for what finished).
- `evalspec.showResults`: open the last run's results file.

When a file is opened, the results of its earlier runs are read back from the output folder
(engine/ide/run_history.py) and shown as if just run, with their age. Failed points get Information
diagnostics at their lines (engine/ide/run_notes.py, published by diagnostics.py).

Only an explicit command runs anything: opening, checking or hovering a file never does. The run uses
the open text (saved or not), the settings' `run` section (models, judges, output…) and the server's
environment for API keys, exactly as `evalspec run` would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from ..convert import path_of
from ..documents import Document
from ..engine_workers import OK
from ..run_state import DocumentRuns
from ..server import EvalspecServer
from .run_target import (
    CANCEL,
    PLAN,
    RUN,
    SHOW,
    Target,
    options_for,
    output_folder,
    parse_target,
    workspace_root,
)

if TYPE_CHECKING:
    from evalspec.ide.run_history import RunHistory
    from evalspec.ide.runs import RunBoard
    from evalspec.run.events import RunFinished
    from evalspec.run.options import RunOptions

log = logging.getLogger(__name__)
RESTORE_TRIES = 20  # a worker starting or replaced meanwhile; then the next edit looks again

RUN_STATE = "evalspec/runState"  # our notification: a document's run changed (clients refresh lenses)
RUN_FINISHED = "evalspec/runFinished"  # and: it ended (the summary and result files)
ALREADY_RUNNING = "a run of this file is already going on; cancel it first"
REFRESH_EVERY_S = 0.25  # lens refreshes and progress reports while results pour in, at most this often


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

    # --- planning -----------------------------------------------------------------------------------

    async def ask(self, name: str, uri: str | None, *args: Any) -> Any:
        """The worker's answer to a run job (no budget: the commands answer `pending` past theirs)."""
        status, value = await self.server.workers.call(name, uri, None, *args,
                                                       board=self.server.board(uri) if uri else None)
        if status != OK:
            raise RuntimeError(f"the engine worker could not answer ({status}): {value[1] if value else ''}")
        return value

    async def options(self, target: Target) -> RunOptions | str:
        """The run's options (an unsaved text gets a run label, and journal, of its own), or why none."""
        if self.server.documents.get(target.uri) is None:
            return "this file is not open"
        try:
            options = options_for(self.server, target.uri, target.item, target.model)
        except ValueError as exc:
            return str(exc)
        options.label = await self.ask("run_label", target.uri, options.label) or options.label
        return options

    async def plan(self, target: Target) -> tuple[Any, list[str], Any, RunOptions] | str:
        """(plan, its problems, run items, options), or why nothing can run. Planning hashes every
        prompt (0.8 s for a 4 MB blueprint), in the worker."""
        options = await self.options(target)
        if isinstance(options, str):
            return options
        planned = await self.ask("plan", target.uri, options)
        return planned if isinstance(planned, str) else (*planned, options)

    async def plan_command(self, target: Target) -> dict[str, Any]:
        """The plan, shown as a message and answered. Planning a 4 MB file takes 1-2 s: past the request
        budget the command answers `pending` and the message follows when the plan is ready; the plan
        is kept with the analysis, so asking again is immediate."""
        from evalspec.run.render import format_plan

        async def summary() -> dict[str, Any] | str:
            options = await self.options(target)
            if isinstance(options, str):
                return options
            key = f"lsp.plan {target.item!r} {target.model!r} {options!r}"
            return await self.ask("plan_summary", target.uri, options, key)

        planning = asyncio.ensure_future(summary())

        def answer(done: asyncio.Future[dict[str, Any] | str]) -> dict[str, Any]:
            summary = done.result()
            if isinstance(summary, str):
                return self.refuse(summary)
            self.message(lsp.MessageType.Info, format_plan(summary))
            return {"ok": True, "plan": summary}

        try:
            await asyncio.wait_for(asyncio.shield(planning), self.server.remaining_budget())
        except TimeoutError:
            self._later(planning, answer)
            return {"ok": True, "pending": f"planning {_name(target.uri)}: the plan is shown when it is ready"}
        return answer(planning)

    def _later(self, future: asyncio.Future[Any], then: Any) -> None:
        """`then(future)` once it is done (its failure is reported, never raised)."""

        def done(f: asyncio.Future[Any]) -> None:
            if f.cancelled():
                return
            try:
                then(f)
            except Exception as exc:
                self.server.report_failure("a command finishing late", exc)

        future.add_done_callback(done)

    # --- running ------------------------------------------------------------------------------------

    async def at_line(self, target: Target) -> Target:
        """A `line` becomes the item written around it (what `:EvalspecRun` sends: the cursor's line)."""
        if target.item is not None or target.line is None or self.server.documents.get(target.uri) is None:
            return target
        item = await self.ask("item_at", target.uri, target.line)
        return Target(target.uri, item, target.model)

    async def start(self, target: Target) -> dict[str, Any]:
        """Plans the run and starts it. Planning a 4 MB file takes 1-2 s: past the request budget the
        command answers `pending` (the lenses show the run as going on, and it can be cancelled) and
        the run starts when its plan is ready; a refusal found then is shown as a message."""
        target = await self.at_line(target)
        state = self.server.runs.setdefault(target.uri, DocumentRuns())
        if state.running:
            return self.refuse(ALREADY_RUNNING)
        started: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        state.task = asyncio.create_task(self.plan_and_drive(target, state, started))
        state.task.add_done_callback(lambda _: self.forget_if_closed(target.uri, state))
        try:
            return await asyncio.wait_for(asyncio.shield(started), self.server.remaining_budget())
        except TimeoutError:
            self.changed(target.uri, state)  # the suite's lens offers to cancel meanwhile
            return {"ok": True, "pending": f"planning {_name(target.uri)}: the run starts when its plan is ready",
                    "item": target.item}

    async def plan_and_drive(self, target: Target, state: DocumentRuns, started: asyncio.Future[dict[str, Any]]) -> None:
        uri, item = target.uri, target.item
        state.planning = True
        try:
            planned = await self.plan(target)
            if isinstance(planned, str):
                state.planning = False
                started.set_result(self.refuse(planned))
                self.changed(uri, state)  # no run after all: the lenses go back
                return
            plan, found, state.items, options = planned
            if found:  # the run still goes on: those cells fail with the same reason, visibly
                self.message(lsp.MessageType.Warning, "evalspec: " + "; ".join(found))
        except asyncio.CancelledError:  # cancelled while planning
            state.planning = False
            if not started.done():
                started.set_result({"ok": False, "error": "cancelled"})
            self.changed(uri, state)
            raise
        except Exception as exc:  # the command may have answered already: reported, not raised
            state.planning = False
            self.server.report_failure(f"planning the run of {uri}", exc)
            if not started.done():
                started.set_result({"ok": False, "error": str(exc)})
            self.changed(uri, state)
            return
        state.planning = False
        state.board.start(state.items, item)
        state.files = []
        started.set_result({"ok": True, "runLabel": plan.run_label, "cells": len(plan.tasks), "item": item})
        self.changed(uri, state)
        await self.drive(uri, item, plan, options, state)

    async def drive(self, uri: str, item: str | None, plan: Any, options: RunOptions, state: DocumentRuns) -> None:
        from evalspec.run.events import RunFinished
        from evalspec.run.journal.run_store import RunLocked, mark_stopped
        from evalspec.run.runner import run

        board = state.board
        progress = await self.begin_progress(uri, item, state)
        events = run(plan, options)
        last = 0.0
        finished: RunFinished | None = None
        refused = ""
        try:
            async for event in events:
                board.apply(event)
                state.generation += 1  # the worker gets this board with the next lens or hover
                if isinstance(event, RunFinished):
                    finished = event
                now = time.monotonic()
                if now - last >= REFRESH_EVERY_S:
                    last = now
                    self.report(progress, board)
                    self.changed(uri, state)
        except asyncio.CancelledError:
            board.stop(cancelled=True)
            # Closing the stream here, not in `finally`, lets the runner write the partial results
            # before the files are looked for.
            with contextlib.suppress(Exception):
                await events.aclose()  # type: ignore[attr-defined]
            if board.journal:  # so that the file's next session says "cancelled", not "interrupted"
                with contextlib.suppress(OSError):
                    mark_stopped(Path(board.journal), "cancelled", board.cancelled_cells())
            raise
        except RunLocked as exc:  # a run of the same label (a terminal's) holds the lock: said, nothing lost
            board.refuse()
            refused = f"evalspec: {exc}"
        except OSError as exc:  # the results folder cannot be written (a file, /dev/null, read-only, full)
            board.stop(interrupted=True)
            where = f" {exc.filename}" if exc.filename else ""
            self.server.tell(lsp.MessageType.Error, f"evalspec: cannot write the results{where}: {exc.strerror or exc}")
        except Exception as exc:  # a bug in the runner must not take the server down
            board.stop(interrupted=True)
            self.server.report_failure(f"the run of {uri}", exc)
        finally:
            with contextlib.suppress(Exception):
                await events.aclose()  # type: ignore[attr-defined]
            if board.running:
                board.stop(interrupted=True)
            self.end_progress(progress, board)
            if refused:
                self.changed(uri, state)
                self.message(lsp.MessageType.Warning, refused)
            else:
                self.finished(uri, item, state, finished)

    def finished(self, uri: str, item: str | None, state: DocumentRuns, event: RunFinished | None) -> None:
        from evalspec.ide.run_history import result_files_of
        from evalspec.run.events import RunFinished

        board = state.board
        if event is not None:
            state.files = list(event.summary.files)
        elif board.journal:  # stopped: the results files written for what finished, if any
            state.files = result_files_of(Path(board.journal))
        self.changed(uri, state)
        text = _outcome(board, item)
        where = f" Results: {state.files[0]}" if state.files else ""
        self.server.log_to_client(lsp.MessageType.Info, f"evalspec: {text}.{where}")
        if item is None or board.interrupted:  # one prompt's result is in its lens; a suite's deserves a word
            with contextlib.suppress(Exception):
                self.server.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info,
                                                                      message=f"evalspec: {text}"))
        summary = event.to_json()["summary"] if event is not None else None
        if summary is None and board.summary is not None:
            summary = RunFinished(board.summary).to_json()["summary"]
        payload = {"uri": uri, "item": item, "interrupted": board.interrupted, "cancelled": board.cancelled,
                   "files": state.files, "summary": summary}
        with contextlib.suppress(Exception):
            self.server.protocol.notify(RUN_FINISHED, payload)

    def forget_if_closed(self, uri: str, state: DocumentRuns) -> None:
        """A document's run state lives while it is open or its run goes on (closing a tab is not "stop");
        then it goes, and reopening reads the results back from the output folder. Kept for every URI
        ever opened or named by a command, it held each file's run items: 2,000 blueprints of 200 KB
        opened and closed took the server from 64 MB to 2 GB."""
        if self.server.documents.get(uri) is None and not state.running and self.server.runs.get(uri) is state:
            del self.server.runs[uri]

    def closed(self, doc: Document) -> None:
        state = self.server.runs.get(doc.uri)
        if state is not None:
            self.forget_if_closed(doc.uri, state)

    async def cancel(self, target: Target) -> dict[str, Any]:
        state = self.server.runs.get(target.uri)
        if state is None or not state.running:
            return {"ok": False, "error": "no run of this file is going on"}
        assert state.task is not None
        state.task.cancel()
        return {"ok": True}

    async def show(self, target: Target) -> dict[str, Any]:
        """The last run's results: its HTML report (written beside the results file, evalspec.report)
        and the results file. Opened through the client (the report in the browser) unless the caller
        asks for the paths only (`open: false`: the editor plugins show them themselves); `markdown:
        true` adds the report as Markdown (Neovim shows it in a split when there is no display)."""
        state = self.server.runs.get(target.uri)
        if state is not None and not state.files and not state.running and state.board.journal:
            from evalspec.ide.run_history import result_files_of

            state.files = result_files_of(Path(state.board.journal))
        if state is None or not (state.files or state.board.journal):
            return {"ok": False, "error": "this file has no finished run yet"}
        sources = list(state.files[:1]) or [state.board.journal or ""]
        made = await self.ask("report", target.uri if self.server.documents.get(target.uri) else None,
                              sources[0], target.markdown)
        if isinstance(made, str):
            return self.refuse(made)
        report, markdown = made
        answer: dict[str, Any] = {"ok": True, "file": state.files[0] if state.files else None, "report": report}
        if target.markdown:
            answer["markdown"] = markdown
        if not target.open:
            return answer
        shown = report or answer["file"]
        if shown and self.server.client.show_document:
            with contextlib.suppress(Exception):
                await self.server.window_show_document_async(lsp.ShowDocumentParams(
                    uri=Path(shown).as_uri(), external=bool(report), take_focus=True))
                return answer
        self.message(lsp.MessageType.Info, f"evalspec: results in {shown}")
        return answer

    # --- earlier runs, renamed ids --------------------------------------------------------------------

    def analysed(self, doc: Document) -> None:
        """Each check: look for the file's earlier results once, and follow renamed ids."""
        if not doc.eval_file or self.server.documents.get(doc.uri) is not doc:
            return
        state = self.server.runs.get(doc.uri)
        if state is None:
            state = self.server.runs[doc.uri] = DocumentRuns()
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
        if first:
            state.items = items
            if isinstance(history, str):  # unreadable results never stop the editor
                self.server.report(f"reading earlier results of {doc.uri}", history)
            elif history is not None and doc.path is not None:
                self.restore(doc.uri, doc.path, history)
            return
        before = len(state.board.renamed)
        state.board.follow(state.items, items)
        state.items = items
        if len(state.board.renamed) != before:
            self.changed(doc.uri, state)

    def restore(self, uri: str, path: Path, history: RunHistory) -> None:
        state = self.server.runs.get(uri)
        if state is None or history.empty:
            return
        state.board.restore(history)
        if not state.files:
            state.files = history.files
        log.info("restored %d item(s) of earlier runs for %s", len(history.results), path.name)
        self.changed(uri, state)

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
        path = path_of(uri)
        name = path.name if path is not None else uri
        self.server.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
            title=f"evalspec: running {item or name}", cancellable=True, message="starting", percentage=0))
        cancelled = self.server.work_done_progress.tokens.get(token)
        if cancelled is not None:  # the client's Cancel button cancels this future
            cancelled.add_done_callback(lambda f: state.task.cancel() if f.cancelled() and state.task else None)
        return token

    def report(self, token: str | None, board: RunBoard) -> None:
        if token is None:
            return
        pct = int(100 * board.done / board.total) if board.total else 0
        with contextlib.suppress(Exception):
            self.server.work_done_progress.report(token, lsp.WorkDoneProgressReport(
                message=board.progress_text(), percentage=pct, cancellable=True))

    def end_progress(self, token: str | None, board: RunBoard) -> None:
        if token is None:
            return
        with contextlib.suppress(Exception):
            self.server.work_done_progress.end(token, lsp.WorkDoneProgressEnd(
                message="cancelled" if board.cancelled else board.progress_text()))
            self.server.work_done_progress.tokens.pop(token, None)


def _name(uri: str) -> str:
    return uri.rsplit("/", 1)[-1]


def _outcome(board: RunBoard, item: str | None) -> str:
    what = f"run of {item}" if item else "run"
    if board.summary is None:
        return f"{what} stopped after {board.done} of {board.total} cell(s); every result received is kept"
    mean = board.summary.mean
    head = f"{what} {'cancelled' if board.cancelled else 'interrupted' if board.interrupted else 'finished'}"
    score = f"mean {mean:.3f}" if mean is not None else "nothing scored"
    done = f"{board.done} of {board.total} cell(s)" if board.interrupted and board.total else f"{board.done} cell(s)"
    return f"{head}: {score}, {done}, {board.errors} error(s)"


def register(server: EvalspecServer) -> None:
    feature = RunFeature(server)  # code_lens.py and hover.py read the boards in server.runs

    def command(name: str, fn: Any) -> None:
        async def handle(*args: Any) -> Any:
            try:
                target = parse_target(args)
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
    server.on_closed.append(feature.closed)
    # A closed document's run goes on (closing a tab is not "stop"), and its lenses are back on reopening
    # (forget_if_closed).
