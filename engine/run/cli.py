"""`evalspec run FILE`: run a Weval blueprint or an AgentV eval file and show the results.

Exit codes: 0 the run finished; 1 the mean score is below `--fail-under`; 2 the file is invalid (its
errors are printed as `path:line:col: …`) or the command line is; 3 every call failed, so nothing was
measured (one line names the cause); 4 a cost cap (`--max-cost`, AgentV's `execution.total_budget_usd`)
kept cells from running (they are reported as not run; `--resume` with a higher cap runs them); 130 interrupted (every result
already received is in the journal; `--resume` finishes the run).
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .options import (
    DEFAULT_BATCH_POLL,
    DEFAULT_MAX_RATE_LIMIT_RETRIES,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_MAX_WAIT,
    DEFAULT_OUTPUT,
    DEFAULT_TIMEOUT,
    RunOptions,
    parse_eval_methods,
)

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..report.sources import Analyses
    from ..weval.model import Blueprint
    from .cost.estimate import Estimate
    from .preflight import FileWarning, Problem
    from .runner import Plan


def add_run_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "run", help="run a Weval blueprint or an AgentV eval file against models",
        description="Run an eval file: call the models (or AgentV targets), score the answers, write results. "
                    "Offline: -m echo answers with the prompt; -m replay:<results file> re-scores earlier answers.")
    p.add_argument("file", metavar="FILE", help="a Weval blueprint or an AgentV eval file, or a folder: every eval "
                                                "file below it, one after the other")
    p.add_argument("-m", "--model", action="append", default=[], metavar="MODEL",
                   help="model id (provider:model, echo, replay:<file>) or AgentV target name; repeatable; "
                        "replaces the file's models / targets")
    p.add_argument("--prompt", "--test", dest="select", action="append", default=[], metavar="ID",
                   help="only these prompt / test ids (globs such as 'safety-*'); repeatable")
    p.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT, metavar="DIR",
                   help=f"results folder (default: ./{DEFAULT_OUTPUT})")
    p.add_argument("-j", "--concurrency", type=int, metavar="N",
                   help="calls in flight at once (default: the blueprint's concurrency, else 30)")
    p.add_argument("--provider-concurrency", action="append", default=[], metavar="PROVIDER=N",
                   help="at most N calls in flight to one provider (e.g. openai=8); repeatable")
    p.add_argument("--cache", action=argparse.BooleanOptionalAction, default=None,
                   help="reuse identical earlier answers from DIR/.cache (errors are never cached); default off, "
                        "unless an AgentV suite sets execution.cache: true (--no-cache overrides it)")
    p.add_argument("--resume", action="store_true",
                   help="finish an interrupted run: calls already answered are not made again")
    p.add_argument("--artefacts", action="store_true",
                   help="Weval: also write the artefact folder beside the comparison file (core.json and a file "
                        "per prompt and model, as the reference's storage keeps them); the run database and the "
                        "comparison file hold everything without it")
    p.add_argument("--retry-errors", action="store_true",
                   help="like --resume, and also retry the cells and judgements that failed")
    p.add_argument("--eval-method", metavar="METHODS",
                   help="Weval: llm-coverage (default), embedding, all or none (comma-separated)")
    p.add_argument("--judge", action="append", default=[], metavar="MODEL",
                   help="judge model id; repeatable; replaces the file's judges")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"per-call timeout (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--retries", type=int, default=2, metavar="N",
                   help="retries of a call that failed with an error: 5xx, timeout, connection (default 2)")
    p.add_argument("--rate-limit-retries", type=int, default=DEFAULT_MAX_RATE_LIMIT_RETRIES, metavar="N",
                   help="retries of a call answered with a rate limit: 429, 529, 503 with Retry-After "
                        "(default %(default)s)")
    p.add_argument("--max-wait", type=float, default=DEFAULT_MAX_WAIT, metavar="SECONDS",
                   help="at most this much back-off per call; a provider and key that answers nothing but "
                        "rate limits this long is given up, its remaining calls fail (default %(default)g)")
    p.add_argument("--processes", type=int, metavar="N",
                   help="processes that run the cells (default: one per core, up to 4, for a run of 1,000 cells "
                        "or more; 1: this process only)")
    p.add_argument("--fixed-concurrency", action="store_true",
                   help="keep the concurrency fixed: do not lower it per provider and key on 429s or low "
                        "rate-limit headers (Retry-After is still honoured)")
    p.add_argument("--allow-outside-files", action="store_true",
                   help="read and send files the eval file refers to outside its project (its repository, or "
                        "its folder when there is none); refused by default")
    p.add_argument("--max-response-mb", type=float, default=DEFAULT_MAX_RESPONSE_BYTES / 2**20, metavar="MB",
                   help="refuse a provider answer larger than this (default %(default)g MB): the call is an error "
                        "cell, nothing of it is kept")
    p.add_argument("--dry-run", action="store_true",
                   help="check the file and print the plan (calls per model, judges, tokens); call nothing. "
                        "Exit 2 when the run would be refused, 1 when the plan lists other problems")
    p.add_argument("--keep-going", action="store_true",
                   help="run even when a model or target cannot be called (unknown provider, missing key: its "
                        "cells fail) or, for a folder, when some of its files cannot run")
    p.add_argument("--json", action="store_true", help="print the run's events as JSON lines on stdout")
    p.add_argument("--report", action=argparse.BooleanOptionalAction, default=True,
                   help="write report.html beside the results (default; --no-report skips it)")
    p.add_argument("--fail-under", type=float, metavar="SCORE",
                   help="exit 1 when the mean score is below SCORE (0–1)")
    p.add_argument("--skip-invalid", action="store_true",
                   help="Weval: run the prompts without errors and name each prompt left out with its first "
                        "error (errors in the header still stop the run)")
    p.add_argument("--label", metavar="LABEL", help="run label prefix (Weval: <label>_<content hash>)")
    p.add_argument("--models-dir", type=Path, metavar="DIR", help="folder of Weval model collections (CORE.json…)")
    p.add_argument("--batch", action="store_true",
                   help="send the answers' calls through the providers' batch APIs (OpenAI, Anthropic: about half "
                        "the price, results within 24 h); other models are called one by one")
    p.add_argument("--batch-model", action="append", default=[], metavar="MODEL",
                   help="batch mode for this model id only (a glob; repeatable); also a custom OpenAI-format "
                        "endpoint known to have the Batch API")
    p.add_argument("--batch-poll", type=float, default=DEFAULT_BATCH_POLL, metavar="SECONDS",
                   help=f"seconds between two looks at a running batch (default {DEFAULT_BATCH_POLL:g})")
    p.add_argument("--batch-size", type=int, metavar="N",
                   help="at most N requests per batch (default: the provider's limit, 50,000 OpenAI, 100,000 "
                        "Anthropic); larger runs are split")
    p.add_argument("--batch-max-mb", type=float, metavar="MB",
                   help="at most MB per batch (default: the provider's limit, 200 OpenAI, 256 Anthropic)")
    p.add_argument("--cancel-batches-on-interrupt", action="store_true",
                   help="when the run is interrupted without a terminal to ask, cancel its running batches "
                        "(default: leave them running for --resume)")
    p.add_argument("--shard", metavar="I/N",
                   help="run shard I of N (CI matrices): each prompt / test, with all its models, belongs to one "
                        "shard by a hash of its id; `evalspec merge` combines the shards' results into what one "
                        "run writes")
    p.add_argument("--prices", type=Path, metavar="FILE",
                   help="a price file (JSON/YAML, USD per million tokens per model) over the shipped table; "
                        "default: $EVALSPEC_PRICES")
    p.add_argument("--max-cost", type=float, metavar="USD",
                   help="stop starting calls once the run's spend plus what the calls in flight may cost would "
                        "pass USD (estimated as --dry-run does); the cells not run are reported, the exit code is "
                        "4, and --resume with a higher cap runs them")
    p.set_defaults(func=cmd_run)
    return p


class _Usage(Exception):
    pass


# A label starts the results' file names (`<label>_<hash>_<time>…`): a path in it ("../../x",
# "/tmp/x") wrote the results outside the output folder.
_LABEL_MAX_BYTES = 100


def _label_problem(label: str) -> str | None:
    if any(c in label for c in "/\\") or label.strip() in (".", ".."):
        return f"--label is part of a file name, not a path: {label!r} (no '/' or '\\', not '.' or '..')"
    if any(ord(c) < 32 or ord(c) == 127 for c in label):
        return f"--label holds a control character: {label!r}"
    if len(label.encode("utf-8", "surrogateescape")) > _LABEL_MAX_BYTES:
        return f"--label is part of a file name: at most {_LABEL_MAX_BYTES} bytes"
    return None


def options_from_args(args: argparse.Namespace) -> RunOptions:
    try:
        methods = parse_eval_methods(args.eval_method)
    except ValueError as exc:
        raise _Usage(str(exc)) from None
    limits: dict[str, int] = {}
    for item in args.provider_concurrency:
        name, sep, n = item.partition("=")
        if not sep or not name.strip() or not n.strip().isdigit() or int(n) < 1:
            raise _Usage(f"--provider-concurrency wants PROVIDER=N with N ≥ 1, got {item!r}")
        limits[name.strip().lower()] = int(n)
    if args.concurrency is not None and args.concurrency < 1:
        raise _Usage("--concurrency must be at least 1")
    if args.processes is not None and args.processes < 1:
        raise _Usage("--processes must be at least 1")
    if args.fail_under is not None and not 0 <= args.fail_under <= 1:
        raise _Usage("--fail-under is a score between 0 and 1")
    # `not x > 0` (not `x <= 0`) so NaN is refused too; infinity is refused where it would become an
    # int (OverflowError) or a wait that never ends.
    if not 0 < args.timeout < math.inf:
        raise _Usage("--timeout must be a positive number of seconds")
    if not 0 < args.max_response_mb * 2**20 < math.inf:  # in bytes: 1e308 MB is an infinite number of bytes
        raise _Usage("--max-response-mb must be a positive number")
    if args.max_cost is not None and not (args.max_cost >= 0 and args.max_cost != float("inf")):
        raise _Usage("--max-cost is a number of US dollars, 0 or more")
    if not 0 < args.batch_poll < math.inf:
        raise _Usage("--batch-poll must be a positive number of seconds")
    if args.batch_size is not None and args.batch_size < 1:
        raise _Usage("--batch-size must be at least 1")
    if args.batch_max_mb is not None and not 0 < args.batch_max_mb * 2**20 < math.inf:
        raise _Usage("--batch-max-mb must be a positive number")
    shard = None
    if args.shard is not None:
        from .plan.shard import parse_shard

        try:
            shard = parse_shard(args.shard)
        except ValueError as exc:
            raise _Usage(str(exc)) from None
    if args.label is not None and (problem := _label_problem(args.label)):
        raise _Usage(problem)
    if args.rate_limit_retries < 0:
        raise _Usage("--rate-limit-retries must be 0 or more")
    if not args.max_wait >= 0:
        raise _Usage("--max-wait must be 0 or more seconds")
    return RunOptions(
        models=list(args.model), select=list(args.select), output=args.output, concurrency=args.concurrency,
        provider_concurrency=limits, cache=args.cache, resume=args.resume or args.retry_errors,
        retry_errors=args.retry_errors, eval_methods=methods, judges=list(args.judge), label=args.label,
        timeout=args.timeout, max_retries=max(0, args.retries), models_dir=args.models_dir, env=dict(os.environ),
        prices=args.prices, max_response_bytes=int(args.max_response_mb * 2**20),
        allow_outside_files=args.allow_outside_files, max_cost=args.max_cost, batch=args.batch,
        batch_models=list(args.batch_model), batch_poll=args.batch_poll, batch_max_requests=args.batch_size,
        batch_max_bytes=int(args.batch_max_mb * 2**20) if args.batch_max_mb else None,
        shard=shard, max_rate_limit_retries=args.rate_limit_retries, max_wait=args.max_wait,
        adaptive_concurrency=not args.fixed_concurrency, artefacts=args.artefacts, processes=args.processes)


@dataclass
class _Prepared:
    """A file ready to run: its plan, what the report reads of it, and its check warnings."""

    path: Path
    plan: Plan
    analyses: Analyses | None
    warnings: list[FileWarning] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def cmd_run(args: argparse.Namespace) -> int:
    try:
        options = options_from_args(args)
    except _Usage as exc:
        print(f"evalspec run: {exc}", file=sys.stderr)
        return 2
    path = Path(args.file)
    if path.is_dir():
        return _run_folder(args, options, path)
    if not path.is_file():
        print(f"evalspec run: no such file or folder: {args.file}", file=sys.stderr)
        return 2
    prepared = _prepare(args, options, path)
    if isinstance(prepared, int):
        return prepared
    if args.dry_run:
        return _dry_run(prepared.plan, options, as_json=args.json, found=prepared.problems)
    if (code := _refused([prepared], keep_going=args.keep_going)) is not None:
        return code
    return _execute(args, options, prepared)


def _execute(args: argparse.Namespace, options: RunOptions, prepared: _Prepared) -> int:
    return _run(prepared.plan, options, as_json=args.json, fail_under=args.fail_under, report=args.report,
                analyses=prepared.analyses, cancel_batches=args.cancel_batches_on_interrupt,
                warnings=prepared.warnings)


def _refused(prepared: list[_Prepared], *, keep_going: bool) -> int | None:
    """Exit 2 before any call when a model or target cannot be called at all (preflight.py), unless
    --keep-going; the problems that only leave points not scored are listed and the run goes on."""
    from .preflight import grouped, refusing

    blocking = [(p, refusing(p.problems)) for p in prepared]
    other = [(p, [x for x in p.problems if not x.refuses]) for p in prepared]
    for p, found in other:
        for line in grouped(found):
            print(f"evalspec run: warning: {_name(p, prepared)}{line}", file=sys.stderr)
    if not any(found for _, found in blocking):
        return None
    for p, found in blocking:
        for line in grouped(found):
            print(f"evalspec run: {'warning' if keep_going else 'error'}: {_name(p, prepared)}{line}",
                  file=sys.stderr)
    if keep_going:
        print("evalspec run: --keep-going: running anyway; the cells of those models fail", file=sys.stderr)
        return None
    print("evalspec run: nothing was run (no call made); fix the above, or pass --keep-going to run the rest "
          "anyway", file=sys.stderr)
    return 2


def _name(p: _Prepared, prepared: list[_Prepared]) -> str:
    return f"{_shown(p.path)}: " if len(prepared) > 1 else ""


def _prompt_pass() -> Any:
    """What a blueprint's check notes of its prompts for the plan (`plan.weval.PromptPass`): Weval's plan and
    model are loaded for a blueprint only."""
    from .plan.weval import PromptPass

    return PromptPass()


def _prepare(args: argparse.Namespace, options: RunOptions, path: Path) -> _Prepared | int:
    """The file analysed, its warnings shown, planned and pre-flighted; an exit code when it cannot run."""
    from ..analysis import analyze_file
    from ..detect import FileKind
    from .preflight import check, file_warnings, warnings_of
    from .runner import PlanError, plan_for

    name = str(path)
    # a blueprint's check notes what the plan reads of each prompt as it stores it (no decoding them again)
    analysis = analyze_file(path, models_dir=args.models_dir, allow_outside_files=args.allow_outside_files,
                            note_prompts=_prompt_pass, processes=options.processes)
    too_large = next((f for f in analysis.findings if f.code == "file-too-large"), None)
    if too_large is not None:  # not read at all, whatever its format
        print(f"evalspec run: {name}: {too_large.message}", file=sys.stderr)
        return 2
    if analysis.kind is FileKind.AGENTV_TARGETS:
        print(f"evalspec run: {name} is an AgentV targets file; run an eval file that names its targets",
              file=sys.stderr)
        return 2
    if analysis.kind is FileKind.AGENTV and path.suffix.lower() in (".jsonl", ".csv"):
        return _dataset_alone(path, analysis)
    if analysis.kind is FileKind.NONE:
        print(f"evalspec run: {name} is not a Weval blueprint or an AgentV eval file", file=sys.stderr)
        return 2
    skipped_blueprint = None
    if analysis.errors and args.skip_invalid and analysis.kind is FileKind.WEVAL:
        skipped_blueprint = _skip_invalid(analysis, name)
        if skipped_blueprint is None:
            return 2
    elif analysis.errors:
        from ..terminal import show_findings

        show_findings(analysis, analysis.shown_errors, sys.stderr)  # with source lines on a terminal, as check
        hint = " (--skip-invalid runs the prompts without errors)" if analysis.kind is FileKind.WEVAL else ""
        print(f"evalspec run: {name} has {len(analysis.errors)} error(s); nothing was run{hint}",
              file=sys.stderr)
        return 2
    found = warnings_of(analysis)
    if found:  # on stderr: with --json too (stdout is the events' channel)
        from ..terminal import show_findings

        show_findings(analysis, found, sys.stderr)
        print(f"evalspec run: {name} has {len(found):,} warning(s) (above)", file=sys.stderr)
    warnings = file_warnings(analysis, found)
    try:
        if skipped_blueprint is not None:
            from .plan.weval import plan_weval

            plan: Plan = plan_weval(skipped_blueprint, path, options)
            if plan.shard is not None:
                from .plan.shard import source_digest

                plan.source_digest = source_digest(analysis.text, analysis.dependencies, path.parent)
        else:
            plan = plan_for(analysis, options)
    except PlanError as exc:
        print(f"evalspec run: {exc}", file=sys.stderr)
        return 2
    # An AgentV report reads the tests' inputs from this same analysis's suite, not the file again: only
    # the suite is kept (the report reads nothing else of it). A Weval report reads the comparison file
    # alone. Either way the located tree and text go now: they are memory the run reuses for its results
    # (bench/run_memory.py).
    analyses = {path.resolve(): _suite_only(analysis)} if analysis.kind is FileKind.AGENTV else None
    del analysis
    return _Prepared(path, plan, analyses, warnings, check(plan, options))


def _run_folder(args: argparse.Namespace, options: RunOptions, folder: Path) -> int:
    """`evalspec run DIR`: every eval file below DIR (as `check DIR` finds them), each planned and
    pre-flighted before the first call, then run one after the other; the worst exit code."""
    from ..eval_files import eval_files_in

    files = eval_files_in(folder)
    if not files:
        print(f"evalspec run: {args.file} is a folder with no Weval blueprint or AgentV eval file in it "
              "(a blueprint is *.weval.yml / *.yml under blueprints/, a suite *.eval.yaml)", file=sys.stderr)
        return 2
    print(f"evalspec run: {len(files)} eval file(s) in {args.file}: {', '.join(str(_shown(f)) for f in files)}",
          file=sys.stderr)
    prepared: list[_Prepared] = []
    bad: list[tuple[Path, int]] = []
    for f in files:
        got = _prepare(args, options, f)
        if isinstance(got, int):
            bad.append((f, got))
        else:
            prepared.append(got)
    if bad and not args.keep_going:
        print(f"evalspec run: {', '.join(str(_shown(f)) for f, _ in bad)} cannot run (above); nothing was run. "
              "--keep-going runs the other files", file=sys.stderr)
        return 2
    if args.dry_run:
        codes = [_dry_run(p.plan, options, as_json=args.json, found=p.problems, title=len(prepared) > 1)
                 for p in prepared]
        return max([*codes, *(c for _, c in bad)], default=0)
    if (code := _refused(prepared, keep_going=args.keep_going)) is not None:
        return code
    codes = [c for _, c in bad]
    for i, p in enumerate(prepared, 1):
        print(f"\n== {i}/{len(prepared)}: {_shown(p.path)}", file=sys.stderr)
        code = _execute(args, options, p)
        if code == 130:
            return code
        codes.append(code)
    return max(codes, default=0)


def _suite_only(analysis: Analysis) -> Analysis:
    """The analysis as the report reads it (report/sources.py: `suite`), without its tree and text."""
    from ..agentv.check import AgentvResult
    from ..analysis import Analysis
    from ..source import ParsedFile

    return Analysis("", analysis.path, analysis.kind, ParsedFile(text=""), agentv=AgentvResult(analysis.suite))


def _dataset_alone(path: Path, analysis: Analysis) -> int:
    """A tests file has no targets or judges of its own: name the suite that includes it."""
    from ..agentv.including_suites import search_root, suites_including
    from ..finding_format import format_finding

    for f in analysis.shown_errors:
        print(format_finding(analysis, f), file=sys.stderr)
    suites = [_shown(s) for s in suites_including(path)]
    what = f"evalspec run: {path} is an AgentV tests file (a dataset), not a suite: it has no targets or judges"
    if suites:
        also = f" (also included by {', '.join(str(s) for s in suites[1:])})" if len(suites) > 1 else ""
        print(f"{what}. Run the suite that includes it instead: evalspec run {suites[0]}{also}", file=sys.stderr)
    else:
        print(f"{what}, and no suite under {search_root(path)} includes it. Write one that does "
              f"(`tests: ./{path.name}`) and run that.", file=sys.stderr)
    return 2


def _shown(path: Path) -> Path:
    """A path as a person would type it here: relative to the working folder when it lies below it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except (ValueError, OSError):  # OSError: the working folder was deleted (getcwd fails)
        return path


def _skip_invalid(analysis: Analysis, name: str) -> Blueprint | None:
    """The blueprint without its invalid prompts, each named on stderr with its first error; None (after
    printing why) when an error belongs to no prompt or no prompt is left."""
    from ..finding_format import format_finding
    from .plan.skip_invalid import valid_part

    part = valid_part(analysis)
    for s in part.skipped:
        what = f"prompt '{s.prompt_id}'" if s.prompt_id else "a prompt"
        print(f"{format_finding(analysis, s.finding)} (skipped {what})", file=sys.stderr)
    if part.blocking:
        for f in part.blocking:
            print(format_finding(analysis, f), file=sys.stderr)
        print(f"evalspec run: {name} has {len(part.blocking)} error(s) outside any prompt, which --skip-invalid "
              "cannot skip; nothing was run", file=sys.stderr)
        return None
    if part.blueprint is None:
        print(f"evalspec run: every prompt of {name} has an error; nothing was run", file=sys.stderr)
        return None
    total = len(part.blueprint.prompts) + len(part.skipped)
    print(f"evalspec run: --skip-invalid: running {len(part.blueprint.prompts)} of {total} prompt(s); "
          f"{len(part.skipped)} skipped (above)", file=sys.stderr)
    return part.blueprint


def _dry_run(plan: Plan, options: RunOptions, *, as_json: bool, found: list[Problem] | None = None,
             title: bool = False) -> int:
    """The plan, printed; exit 2 when the run would be refused (preflight.py), 1 when it lists other
    problems (a judge that cannot be called), 0 otherwise."""
    from .preflight import check, grouped, refusing
    from .render import format_plan

    found = check(plan, options) if found is None else found
    summary = plan.summary()
    summary["problems"] = grouped(found)
    try:
        summary["cost"] = _estimate(plan, options).to_json()
    except ValueError as exc:  # pricing.PriceFileError: a bad --prices file
        print(f"evalspec run: {exc}", file=sys.stderr)
        return 2
    if options.max_cost is not None:
        summary["cost"]["max_cost"] = _within_cap(plan, options, summary["cost"])
    if as_json:
        import json

        print(json.dumps({"type": "plan", "plan": summary}, ensure_ascii=False))
    else:
        print(("\n" if title else "") + format_plan(summary))
    if refusing(found):
        print("evalspec run: --dry-run: the run would be refused (the problems above); exit 2", file=sys.stderr)
        return 2
    if found:
        print(f"evalspec run: --dry-run: the plan lists {len(summary['problems'])} problem(s); exit 1",
              file=sys.stderr)
        return 1
    return 0


def _estimate(plan: Plan, options: RunOptions) -> Estimate:
    """The plan's estimated tokens and cost (cost/estimate.py) at the run's prices."""
    from ..pricing import PriceTable
    from .cost.estimate import estimate

    prices = getattr(plan, "prices", None) or PriceTable.load(options.prices, options.env)
    return estimate(plan, prices)


def _within_cap(plan: Plan, options: RunOptions, cost: dict[str, Any]) -> dict[str, Any]:
    """What `--max-cost` would let start: the cells that fit the estimate in order (at least those run)."""
    from ..pricing import PriceTable
    from .cost.estimate import cells_within

    assert options.max_cost is not None
    if cost.get("unpriced"):
        return {"usd": options.max_cost, "refused": f"no price for {', '.join(cost['unpriced'])}"}
    prices = getattr(plan, "prices", None) or PriceTable.load(options.prices, options.env)
    return {"usd": options.max_cost, "cells": len(plan.tasks),
            "cells_within": cells_within(plan, prices, options.max_cost)}


def _run(plan: Plan, options: RunOptions, *, as_json: bool, fail_under: float | None, report: bool = True,
         analyses: Analyses | None = None, cancel_batches: bool = False,
         warnings: list[FileWarning] | None = None) -> int:
    import asyncio  # here, not at the top: `evalspec check` should not pay for it

    from .outcome import Outcome
    from .plan.error import PlanError
    from .render import HumanRenderer, JsonRenderer

    renderer: Any = JsonRenderer(sys.stdout) if as_json else HumanRenderer(sys.stdout, sys.stderr,
                                                                         prices=getattr(plan, "prices", None))
    outcome = Outcome()
    previous = _sigterm_as_interrupt()
    interrupted = False
    try:
        asyncio.run(_consume(plan, options, renderer, outcome))
    except (KeyboardInterrupt, asyncio.CancelledError):  # CancelledError: SIGTERM with SIGINT ignored
        interrupted = True
    except PlanError as exc:  # raised as the run starts: another process holds its lock (journal/database.py)
        print(f"evalspec run: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the output folder cannot be written: read-only, a file in the way, a full disk
        where = f" {exc.filename}" if exc.filename else ""
        print(f"evalspec run: cannot write{where}: {exc.strerror or exc}{_full(options.output)}; results received "
              f"so far (if any) are in {options.output}", file=sys.stderr)
        if as_json:
            renderer.close()  # a run_finished line held for its wall time
        return 2
    finally:
        signal.signal(signal.SIGTERM, previous)
    if getattr(renderer, "journal", None):
        from .journal.run_store import wall_time

        renderer.wall = wall_time(Path(renderer.journal))  # the run's own time, from its database
    if interrupted:
        renderer.close(interrupted=True)
        journal = getattr(renderer, "journal", None) or str(options.output)
        if report and getattr(renderer, "journal", None):
            _write_report(journal, as_json=as_json, analyses=analyses)
        after = ""
        if getattr(renderer, "wall", None):
            from .render import wall_text

            after = f" ({wall_text(renderer.wall)})"
        print(f"\nevalspec run: interrupted{after}; every result received so far is in {journal}. "
              "Run the same command with --resume to finish it.", file=sys.stderr)
        if getattr(renderer, "journal", None):
            _running_batches(plan, options, Path(renderer.journal), cancel=cancel_batches)
        return 130
    if renderer.summary is not None and not as_json:
        # Why cells were not scored when the runner's notes do not say, then the file's check warnings
        # again, tied to the items with cells not scored.
        import dataclasses

        from .preflight import closing_notes

        more = [*renderer.unscored_notes(), *closing_notes(warnings or [], renderer.not_scored_items)]
        renderer.summary = dataclasses.replace(renderer.summary, notes=(*renderer.summary.notes, *more))
    renderer.close()
    summary = renderer.summary
    if report and summary is not None and summary.files:
        _write_report(summary.files[0], as_json=as_json, analyses=analyses)
    failed = outcome.all_failed()
    if failed is not None:
        print(f"evalspec run: {failed}", file=sys.stderr)
        return 3
    if summary is not None and summary.stopped:
        # A cost cap kept cells from running: those checks were not made, so the run cannot pass.
        print(f"evalspec run: {summary.stopped}", file=sys.stderr)
        return 4
    if fail_under is not None:
        mean = summary.mean if summary is not None else None
        unscored = sum(m.not_scored for m in summary.models) if summary is not None else 0
        if unscored:
            # A check that was not made is never a pass: the mean of the rest cannot vouch for them.
            _not_scored_fails(unscored, "cell(s)", fail_under, summary)
            return 1
        points = summary.points_not_scored if summary is not None else 0
        if points:
            # The same rule inside a cell: its score leaves such points out (as the reference does), so the
            # mean cannot vouch for them either.
            _not_scored_fails(points, "point(s)", fail_under, summary)
            return 1
        if mean is None:
            print(f"evalspec run: nothing was scored; --fail-under {fail_under:g} fails", file=sys.stderr)
            return 1
        if mean < fail_under:
            print(f"evalspec run: mean score {mean:.3f} is below --fail-under {fail_under:g}", file=sys.stderr)
            return 1
    return 0


def _full(folder: Path) -> str:
    """" (the disk is full: …)" when the output folder's disk has (almost) no room: SQLite says "disk I/O
    error" where it could not grow the database's WAL index, the full disk's first sign."""
    import shutil

    try:
        free = shutil.disk_usage(next(p for p in (folder, *folder.parents) if p.exists())).free
    except (OSError, StopIteration):
        return ""
    return f" (the disk is full: {free:,} bytes free)" if free < 2**20 else ""


def _not_scored_fails(n: int, what: str, fail_under: float, summary: Any) -> None:
    notes = list(summary.notes) if summary is not None else []
    why = ", why:" if notes else " (no note says why: the results file has each cell)"
    print(f"evalspec run: {n:,} {what} not scored; --fail-under {fail_under:g} fails{why}", file=sys.stderr)
    for note in notes:
        print(f"  {note}", file=sys.stderr)


def _running_batches(plan: Plan, options: RunOptions, journal: Path, *, cancel: bool) -> None:
    """After an interruption: the provider batches still running are cancelled or left for --resume. On
    a terminal the user is asked; otherwise they are left running unless --cancel-batches-on-interrupt."""
    import asyncio
    import shlex

    from .generate.batch_cancel import cancel_open_batches, open_batches

    parts = open_batches(journal)
    if not parts:
        return
    ids = ", ".join(str(p.batch_id) for p in parts)
    if not cancel and sys.stdin.isatty() and sys.stderr.isatty():
        # The question goes to stderr, where the progress was: stdout may be a file (`> table.txt`).
        sys.stderr.write(f"evalspec run: {len(parts)} provider batch(es) still running ({ids}). Cancel them (c) "
                         "or leave them running for --resume (Enter)? ")
        sys.stderr.flush()
        try:
            answer = sys.stdin.readline()
        except KeyboardInterrupt:  # a second Ctrl-C: leave them
            answer = ""
        cancel = answer.strip().lower() in ("c", "cancel", "y", "yes")
    if cancel:
        try:
            lines = asyncio.run(cancel_open_batches(journal, plan, options))
        except KeyboardInterrupt:
            lines = ["interrupted while cancelling"]
        for line in lines:
            print(f"evalspec run: cancel {line}", file=sys.stderr)
        print("evalspec run: --resume collects what the cancelled batches finished and calls the rest one by one",
              file=sys.stderr)
        return
    argv = [a for a in sys.argv[1:] if a != "--resume"]
    print(f"evalspec run: {len(parts)} provider batch(es) left running ({ids}); to collect them: "
          f"{shlex.join(['evalspec', *argv, '--resume'])}", file=sys.stderr)


def _write_report(results: str, *, as_json: bool, analyses: Analyses | None = None) -> None:
    write_report_beside(results, as_json=as_json, analyses=analyses)


def write_report_beside(results: str, *, as_json: bool, analyses: Analyses | None = None,
                        command: str = "run") -> None:
    """report.html beside the results. A report that cannot be written is a warning: the results are safe.
    `analyses`: the run's own analysis of its eval file, so the report does not parse it again."""
    from ..report import ResultsError, write_report

    try:
        path = write_report([results], analyses=analyses)
    except (ResultsError, OSError) as exc:
        print(f"evalspec {command}: warning: no report written: {exc}", file=sys.stderr)
        return
    print(f"report: {path}", file=sys.stderr if as_json else sys.stdout)


# The run's main task while it runs, for SIGTERM when SIGINT has no Python handler (see below).
_MAIN_TASK: list[Any] = []


async def _consume(plan: Plan, options: RunOptions, renderer: Any, outcome: Any) -> None:
    import asyncio

    from .runner import run

    _MAIN_TASK[:] = [asyncio.current_task()]
    ticker = asyncio.create_task(_ticking(renderer)) if getattr(renderer, "tty", False) else None
    try:
        async for event in run(plan, options):
            renderer(event)
            outcome(event)
    finally:
        _MAIN_TASK.clear()
        if ticker is not None:
            ticker.cancel()


async def _ticking(renderer: Any) -> None:
    """The status line redrawn twice a second between events (its clock and ETA)."""
    import asyncio

    while True:
        await asyncio.sleep(0.5)
        renderer.tick()


def _sigterm_as_interrupt() -> Any:
    """SIGTERM ends the run like Ctrl-C: the journal is closed cleanly and the exit code is 130.

    It is handed to whatever handles SIGINT at that moment: inside `asyncio.run` that is the runner's
    handler, which cancels the run's main task and raises KeyboardInterrupt once it has unwound. Raising
    KeyboardInterrupt from here instead lands in whatever code runs when the signal arrives, a task the
    run awaits through `gather` among them: that task then ends with the interrupt as its exception,
    which is printed at exit after the run's last words ("--resume …")."""

    def handler(signum: int, frame: Any) -> None:
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint):
            on_sigint(signal.SIGINT, frame)
        elif _MAIN_TASK and not _MAIN_TASK[0].done():
            # SIGINT ignored (a background job of a script inherits SIG_IGN, so asyncio.run installs no
            # handler): cancel the main task as the runner's handler would, instead of raising
            # KeyboardInterrupt into whatever code runs (a polled batch's read: a traceback, no "--resume").
            task = _MAIN_TASK[0]
            task.get_loop().call_soon_threadsafe(task.cancel)
        else:  # SIG_IGN / SIG_DFL set by an embedding program, outside the run's loop
            raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (embedded use)
        return signal.getsignal(signal.SIGTERM)
