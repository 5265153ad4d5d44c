"""A run from the editor, before and after, as plain functions of an analysis: its options (the
editor's `run` settings), its plan (what run_process.py is given) or why nothing can run, what
`evalspec run --dry-run` would say, and the report of its results. The language server's engine
workers call them (server/features/run_jobs.py, code_lens.py).
"""

from __future__ import annotations

import importlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..run.options import RunOptions

log = logging.getLogger(__name__)


def run_options(settings: Any, output: Path, item: str | None, model: str | None) -> RunOptions:
    """The RunOptions of a run from the editor, from its settings' `run` section (the server's
    RunSettings: models, judges, cache, concurrency, eval_methods, batch_models, max_cost, timeout_s,
    max_wait_s); ValueError when they are invalid."""
    from ..run.options import RunOptions, parse_eval_methods

    options = RunOptions(models=[model] if model else list(settings.models), judges=list(settings.judges),
                         output=output, cache=settings.cache, select=[item] if item else [],
                         concurrency=settings.concurrency, partial_results=True,
                         eval_methods=parse_eval_methods(settings.eval_methods),
                         batch_models=list(settings.batch_models), max_cost=settings.max_cost)
    if settings.timeout_s is not None:
        options.timeout = settings.timeout_s
    if settings.max_wait_s is not None:
        options.max_wait = settings.max_wait_s
    return options


def plan(analysis: Any, settings: Any, output: Path, item: str | None, model: str | None,
         summary: bool = False) -> Any:
    """(the run's input for run_process.py, its run label, its cells, its problems, the run items), or
    with `summary` what `evalspec run --dry-run` says, as data and as text (kept with the analysis); or
    why nothing can run. A text that is not the saved file's gets a run label, and journal, of its own
    (run_label.unsaved_label)."""
    from ..run.plan.run_label import unsaved_label
    from ..run.preflight import problems
    from ..run.render import format_plan
    from ..run.runner import PlanError, plan_for
    from .run_process import run_input
    from .runs import run_items

    if analysis.error_count:
        return f"the file has {analysis.error_count} error(s); fix them to run it"
    try:
        options = run_options(settings, output, item, model)
    except ValueError as exc:
        return str(exc)
    key = f"ide.plan {item!r} {model!r} {options!r}" if summary else None
    if key in analysis.memo:
        return analysis.memo[key]
    if analysis.path is not None:
        options.label = unsaved_label(analysis.text, analysis.path, options.label) or options.label
    try:
        planned = plan_for(analysis, options)
    except (PlanError, ValueError) as exc:
        answer: Any = str(exc)
    else:
        found = problems(planned, options)
        if not summary:
            return run_input(planned, options), planned.run_label, len(planned.tasks), found, run_items(analysis)
        data = {**planned.summary(), "problems": found}
        answer = data, format_plan(data)
    if key is not None:
        analysis.memo[key] = answer
    return answer


def report(files: list[str], journal: str | None, markdown: bool,
           analyses: dict[Path, Any]) -> tuple[list[str], str | None, str | None] | str:
    """(the results files, the HTML report's path, the Markdown report) of the last run, given its
    results files, else its journal (whose results files are looked for); None for what cannot be made
    (the results file remains); a string when the file is refused. The output folder may be someone
    else's: the file must be an own file (not a link, a FIFO or a device), and no eval file but those
    of `analyses` (the open document's) is read for it, whatever the run's journal names."""
    from ..own_files import NotOwnFile, open_own
    from .run_history import result_files_of

    if not files and journal:
        files = result_files_of(Path(journal))
    source = files[0] if files else journal or ""
    try:  # the report package is optional here: without it "show results" opens the results
        build = importlib.import_module("evalspec.report")
        from ..report.sources import OnlyThese
    except ImportError:
        return files, None, None
    path = Path(source)
    try:
        os.close(open_own(path, os.O_RDONLY))
    except NotOwnFile as exc:
        return exc.strerror or str(exc)
    name = path.name.removesuffix(".jsonl").removesuffix(".json")
    only = OnlyThese(analyses)
    try:
        html = build.write_report([path], path.with_name(f"{name}.report.html"), analyses=only)
        text = build.build_report([path], fmt="markdown-text", analyses=only) if markdown else None
    except Exception:  # a report that cannot be made never hides the results themselves
        log.warning("no report for %s", path.name, exc_info=True)
        return files, None, None
    return files, str(html), text
