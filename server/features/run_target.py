"""What a run command is asked to do (`{"uri", "item", "model", "line", "open", "markdown"}`) and the
RunOptions it runs with: the settings' `run` section, the output folder under the document's workspace
folder. Used by run.py (the commands) and, for the output folder, by the results read back on open."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..convert import path_of

if TYPE_CHECKING:
    from evalspec.run.options import RunOptions

    from ..server import EvalspecServer

RUN, PLAN, CANCEL, SHOW = "evalspec.run", "evalspec.plan", "evalspec.cancelRun", "evalspec.showResults"


@dataclass(frozen=True)
class Target:
    uri: str
    item: str | None = None
    model: str | None = None
    line: int | None = None  # instead of `item`: the prompt / test around this line (0-based), else the file
    open: bool = True  # showResults: open the report / results through the client
    markdown: bool = False  # showResults: also answer the report as Markdown


def parse_target(args: tuple[Any, ...]) -> Target:
    """`{"uri": …, "item": …, "model": …}`, or `uri[, item]` as plain arguments (what a user types)."""
    model = line = None
    flags: dict[str, Any] = {}
    if args and isinstance(args[0], dict):
        uri, item, model, line = args[0].get("uri"), args[0].get("item"), args[0].get("model"), args[0].get("line")
        flags = {k: v for k in ("open", "markdown") if isinstance(v := args[0].get(k), bool)}
    else:
        uri = args[0] if args else None
        item = args[1] if len(args) > 1 else None
    if not isinstance(uri, str) or not uri:
        raise ValueError("expected the document's uri as the first argument")
    return Target(uri, item if isinstance(item, str) and item else None,
                  model.strip() if isinstance(model, str) and model.strip() else None,
                  line if isinstance(line, int) and not isinstance(line, bool) and line >= 0 else None, **flags)


def output_folder(server: EvalspecServer, uri: str) -> Path:
    output = Path(server.settings.run.output).expanduser()
    return output if output.is_absolute() else workspace_root(server, uri) / output


def options_for(server: EvalspecServer, uri: str, item: str | None, model: str | None = None) -> RunOptions:
    from evalspec.run.options import RunOptions, parse_eval_methods

    settings = server.settings.run
    options = RunOptions(models=[model] if model else list(settings.models), judges=list(settings.judges),
                         output=output_folder(server, uri), cache=settings.cache, select=[item] if item else [],
                         concurrency=settings.concurrency, partial_results=True,
                         eval_methods=parse_eval_methods(settings.eval_methods))
    if settings.timeout_s is not None:
        options.timeout = settings.timeout_s
    options.batch_models = list(settings.batch_models)
    options.max_cost = settings.max_cost
    if settings.max_wait_s is not None:
        options.max_wait = settings.max_wait_s
    return options


def workspace_root(server: EvalspecServer, uri: str) -> Path:
    """The workspace folder holding the document, else the document's own folder (then the cwd)."""
    doc = path_of(uri)
    folders = []
    with contextlib.suppress(RuntimeError):  # before initialize
        folders = [path_of(f.uri) for f in server.workspace.folders.values()]
        if not folders and server.workspace.root_path:
            folders = [Path(server.workspace.root_path)]
    for folder in folders:
        if folder is not None and doc is not None and doc.is_relative_to(folder):
            return folder
    return doc.parent if doc is not None else Path.cwd()
