"""From a checked AgentV suite to the cells a run makes: every test × every target it runs on.

Targets come from the suite's `execution.target(s)` (a test's own `execution.target(s)` wins), looked up
in `targets.yaml` — the eval file's folder or an `.agentv/` folder, walking up to the repository root
(AgentV's lookup) — or from `-m`: a target name of that file, or a model id (`provider:model`,
`echo`) which becomes a target of its own. The judge of a target is its `judge_target`, or `--judge`.

`-m replay:<results file>` replaces the targets with the answers of an earlier run (plan/replay.py): one cell
per selected test and recorded target, under that target's name; no target is called, so only judges
are resolved (a recorded target missing from targets.yaml just has no judge_target).
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, overload

from ...agentv.model import AgentvSuite, AgentvTest
from ...agentv.test_store import TestStore
from ...file_source import MAX_READ, read_regular_bytes
from ...list_like import ListLike
from ...model_store import id_at, item_ids, keep_items
from ...own_files import folder_name
from ...providers.redact import redact
from ...registry.agentv_assertions import ASSERTION_TYPES
from ...registry.stages import Stage
from ..events import Cell
from ..options import RunOptions
from ..score.agentv_scorable import NotScoredReport, stage_of
from .error import PlanError
from .items import CHARS_PER_TOKEN
from .selection import selected, unmatched
from .shard import Shard

DEFAULT_TARGET = "default"  # what AgentV runs when the suite names no target
TARGET_FILES = ("targets.yaml", "targets.yml")
JUDGE_PROMPT_TOKENS = 600


@dataclass(frozen=True)
class TargetSpec:
    """Something that answers: a targets.yaml entry, or a model id given with -m / --judge."""

    name: str
    config: dict[str, Any] | None = None  # the targets.yaml entry
    model: str | None = None  # a `provider:model` / `echo` id
    judge: str | None = None  # the judge's target name or model id

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class AgentvTask:
    cell: Cell
    # the plan's tests and this cell's position in them: a big suite's tests are on disk
    # (agentv/test_store.py), and a task holding its test would hold the whole suite again
    tests: Sequence[AgentvTest] = field(compare=False, repr=False)
    index: int
    target: TargetSpec
    judge: TargetSpec | None
    position: int = field(default=-1, compare=False)  # the cell's place in the plan's tasks (AgentvTasks)
    # The test once read: a cell's stages read it a dozen times, and from a store each read took the
    # store's lock and its cache (AgentvTasks makes a task for each cell it hands out, dropped after it)
    _test: AgentvTest | None = field(default=None, compare=False, repr=False)

    @property
    def test(self) -> AgentvTest:
        found = self._test
        if found is None:
            found = self.tests[self.index]
            object.__setattr__(self, "_test", found)
        return found


class AgentvTasks(ListLike[AgentvTask]):
    """The plan's cells in order, each as its test's position and its target's (10 bytes); an AgentvTask
    is made when it is read. As objects (the task, its Cell, the position as an int, a copy of the test's
    id) a cell was ~250 bytes held for the whole run: 25 MB at 100,000 tests. The test's id is read from
    the tests' list or store (`model_store.id_at`: nothing decoded), so it is the one string they hold."""

    _unit = "cells"

    def __init__(self, tests: Sequence[AgentvTest], judges: Mapping[str, TargetSpec | None]) -> None:
        self.tests = tests
        self._judges = judges  # each target's judge, by the target's name (one per target)
        self._targets: list[TargetSpec] = []
        self._target_at: dict[str, int] = {}
        self._test = array("q")  # cell n: tests[_test[n]] on _targets[_target[n]]
        self._target = array("H")

    def add(self, index: int, target: TargetSpec) -> None:
        at = self._target_at.get(target.name)
        if at is None:
            at = self._target_at[target.name] = len(self._targets)
            self._targets.append(target)
        self._test.append(index)
        self._target.append(at)

    def __len__(self) -> int:
        return len(self._test)

    @overload
    def __getitem__(self, n: int) -> AgentvTask: ...

    @overload
    def __getitem__(self, n: slice) -> list[AgentvTask]: ...

    def __getitem__(self, n: int | slice) -> AgentvTask | list[AgentvTask]:
        if isinstance(n, slice):
            return [self[k] for k in range(*n.indices(len(self)))]
        if n < 0:
            n += len(self)
        index, target = self._test[n], self._targets[self._target[n]]
        return AgentvTask(Cell(id_at(self.tests, index), target.name), self.tests, index, target,
                          self._judges.get(target.name), n)

    def cell_at(self, n: int) -> Cell:
        """Cell n, without making its task."""
        return Cell(id_at(self.tests, self._test[n]), self._targets[self._target[n]].name)

    def cells(self) -> Iterator[Cell]:
        """The cells, in order, without making their tasks."""
        tests, names = self.tests, [t.name for t in self._targets]
        for index, at in zip(self._test, self._target, strict=True):
            yield Cell(id_at(tests, index), names[at])

    def items(self) -> Sequence[int]:
        """Each cell's test's position, in order (run/split.py cuts the cells between tests)."""
        return self._test

    def cell_targets(self) -> Iterator[str]:
        """Each cell's target's name, in order, without making the tasks."""
        names = [t.name for t in self._targets]
        return (names[at] for at in self._target)

    def targets(self) -> list[TargetSpec]:
        """The cells' targets, in the order of their first cells, each once (as `{t.target.name: t.target}`
        over the tasks), without making the tasks: `add` lists a target at its first cell."""
        return list(self._targets)

    def judges(self) -> list[TargetSpec]:
        """The cells' judges, in the order of their first cells, each once by name (as `{t.judge.name:
        t.judge for t in tasks if t.judge}`: a judge is its target's), without making the tasks."""
        out: dict[str, TargetSpec] = {}
        for target in self._targets:
            judge = self._judges.get(target.name)
            if judge is not None:
                out[judge.name] = judge
        return list(out.values())

    def judge_of(self, target: TargetSpec) -> TargetSpec | None:
        """The judge of `target`'s cells (their tasks' `judge`)."""
        return self._judges.get(target.name)

    def planned_items(self) -> set[str]:
        """The ids of the tests with a cell, without making the tasks."""
        tests = self.tests
        return {id_at(tests, k) for k in dict.fromkeys(self._test)}

    def target_names(self) -> list[str]:
        """The names of the cells' targets, in the order of their first cells, without making the tasks."""
        return [t.name for t in self.targets()]

    def target_orders(self, order: Sequence[str]) -> dict[str, list[str]]:
        """The tests whose cells are not in `order`'s order of targets (a test's own `targets` listed
        otherwise), each with its targets in the order of its cells: what `evalspec merge` needs besides
        the run database's rows to write a shard's rows in the plan's order (run/merge.py)."""
        if len(self._targets) <= 1:
            return {}
        rank = [order.index(t.name) if t.name in order else len(order) for t in self._targets]
        out: dict[str, list[str]] = {}
        tests, targets, total, n = self._test, self._target, len(self._test), 0
        while n < total:
            m = n + 1
            while m < total and tests[m] == tests[n]:
                m += 1
            if any(rank[targets[j]] > rank[targets[j + 1]] for j in range(n, m - 1)):
                out[id_at(self.tests, tests[n])] = [self._targets[targets[j]].name for j in range(n, m)]
            n = m
        return out

    def kept(self, tests: Sequence[AgentvTest], keep: Callable[[str], bool]) -> AgentvTasks:
        """The cells whose test id `keep` holds, on `tests` (the kept tests, in order: a shard's)."""
        where = {tid: k for k, tid in enumerate(item_ids(tests))}
        out = AgentvTasks(tests, self._judges)
        for n in range(len(self._test)):
            index, target = self._test[n], self._targets[self._target[n]]
            tid = id_at(self.tests, index)
            if keep(tid):
                out.add(where[tid], target)
        return out


@dataclass
class AgentvPlan:
    kind: ClassVar[Literal["agentv"]] = "agentv"
    suite: AgentvSuite
    path: Path
    dataset: str
    tests: Sequence[AgentvTest]  # a list, or a big suite's TestStore (agentv/test_store.py)
    targets: list[TargetSpec]
    tasks: AgentvTasks
    targets_file: Path | None
    run_label: str
    concurrency: int
    warnings: list[str] = field(default_factory=list)
    replay: Any = None  # a ReplaySource when the model is `replay:<file>`
    prices: Any = None  # the PriceTable (pricing.py): shipped prices + --prices / $EVALSPEC_PRICES
    fingerprints: Mapping[str, str] = field(default_factory=dict)  # item id -> its text's (plan/items.py)
    shard: Shard | None = None  # --shard: tests and tasks hold this shard's share only (plan/shard.py)
    all_items: list[str] = field(default_factory=list)  # every selected test id, in order, before sharding
    source_digest: str = ""  # of the suite's files (shard manifests compare it)
    # The project's folder every file the suite names must still lie in when the run reads it (None with
    # --allow-outside-files): `check` refused the references that pointed out; a read re-checks the file
    # it opened (file_source.read_regular_bytes), so one swapped for a link pointing out since is refused.
    inside: Path | None = None
    _facts: PlanFacts | None = field(default=None, repr=False, compare=False)  # facts(), once asked

    @property
    def output_folder_parts(self) -> tuple[str, ...]:
        # A suite named ../../x stays in the output folder; one named with `${{ OPENAI_API_KEY }}` is not
        # written as a folder named with the key (its value masked, as in every file's content).
        return ("agentv", folder_name(redact(self.dataset)))

    @property
    def results_base(self) -> str:
        """The run label as results file names carry it (a shard's names say which shard)."""
        return self.run_label + (self.shard.suffix if self.shard is not None else "")

    def facts(self) -> PlanFacts:
        """What the summary, the preflight and the run read of every cell's test, in one pass over the
        tasks (a big suite's tests are decoded again on each pass: agentv/test_store.py), kept."""
        if self._facts is None:
            self._facts = _facts_of(self)
        return self._facts

    def summary(self) -> dict[str, Any]:
        facts = self.facts()
        per_target = {name: dict(m) for name, m in facts.per_target.items()}
        judges = list(facts.judges)
        judge_calls = sum(m["judge_calls"] for m in per_target.values())
        return {
            "kind": "agentv",
            "file": str(self.path),
            "dataset": self.dataset,
            "run_label": self.run_label,
            "tests": len(self.tests),
            "targets": [t.name for t in self.targets],
            "targets_file": str(self.targets_file) if self.targets_file else None,
            "cells": len(self.tasks),
            "per_model": per_target,
            "judges": judges,
            "judge_source": "--judge / judge_target",
            "eval_methods": [],
            "calls": sum(m["calls"] for m in per_target.values()) + judge_calls,
            "estimated_input_tokens": sum(m["input_tokens"] for m in per_target.values())
            + judge_calls * JUDGE_PROMPT_TOKENS,
            "concurrency": self.concurrency,
            "replay": str(self.replay.path) if self.replay is not None else None,
            "shard": str(self.shard) if self.shard is not None else None,
            "warnings": list(self.warnings),
            "not_scored": [dict(g, first=list(g["first"])) for g in facts.not_scored],
        }

    def problems(self, options: RunOptions) -> list[str]:
        """What would fail before any call (missing keys, unusable targets), for --dry-run."""
        from ...providers.base import ProviderError

        out: list[str] = []
        seen: set[str] = set()
        called = [] if self.replay is not None else self.targets  # replay calls judges only
        for spec in [*called, *self.tasks.judges()]:
            if spec.name in seen:
                continue
            seen.add(spec.name)
            try:
                build_provider(spec, options, client=None, base_dir=self.path.parent)
            except ProviderError as err:
                out.append(f"target {spec.name}: {err.message}")
        if self.facts().unjudged:
            out.append("some tests need an LLM judge and their target has no judge_target: pass --judge MODEL")
        return out


@dataclass(frozen=True)
class PlanFacts:
    """What a plan's cells' tests say, gathered in one pass (AgentvPlan.facts)."""

    per_target: dict[str, dict[str, int]]  # target -> cells, calls, input_tokens, judge_calls
    judges: list[str]  # the judges of the judged cells, in order
    not_scored: list[dict[str, Any]]  # score/agentv_scorable.dry_run_report's groups
    unjudged: bool  # a test needs an LLM judge and its target has none
    any_workspace: bool  # the suite or a test has a workspace


class _Facts:
    """PlanFacts gathered a cell at a time (the planner's pass over the tests, or one of its own)."""

    def __init__(self, suite: AgentvSuite, replay: bool) -> None:
        self.per_target: dict[str, dict[str, int]] = {}
        self.judges: list[str] = []
        self.report = NotScoredReport()
        self.unjudged = False
        self.any_workspace = suite.workspace is not None
        self.replay = replay
        # the registered types a run scores from the answer alone (FUNCTION, TRACE): no judge, no script
        self._at_once = frozenset(name for name, kind in ASSERTION_TYPES.items()
                                  if kind.runnable and kind.stage.deterministic)

    def deterministic(self, test: AgentvTest) -> bool:
        """Are the test's assertions all of runnable deterministic types, none custom nor a group (most
        tests): then it calls no judge, has nothing a run cannot score and runs no shell (`add` and the
        planner's look at each assertion are skipped: what they would find is nothing)."""
        assertions = test.assertions
        if not assertions:  # AgentV's default judge
            return False
        at_once = self._at_once
        for a in assertions:  # noqa: SIM110  # a loop: all() over a generator costs more than the test
            if a.custom or a.children or a.type not in at_once:
                return False
        return True

    def add(self, cell: Cell, judge: TargetSpec | None, test: AgentvTest, deterministic: bool = False) -> None:
        m = self._counts(cell, 0 if self.replay else sum(len(msg.text()) for msg in test.input_messages))
        if deterministic:  # (self.deterministic(test)) no judge call, nothing unscored, no judge needed
            self.any_workspace = self.any_workspace or test.workspace is not None
            return
        judged = sum(1 for a in test.assertions if stage_of(a) is Stage.JUDGE)
        if test.uses_default_judge:
            judged = 1
        m["judge_calls"] += judged
        if judge is not None and judged and judge.name not in self.judges:
            self.judges.append(judge.name)
        self.report.add(cell, judge is not None, test)
        self.unjudged = self.unjudged or (judge is None and _needs_judge(test))
        self.any_workspace = self.any_workspace or test.workspace is not None

    def add_plain(self, cell: Cell, chars: int) -> None:
        """`add` for a test whose input of `chars` characters is all there is to gather: no judge call, no
        check a run cannot score, no workspace (test_store's `plain_inputs`)."""
        self._counts(cell, chars)

    def _counts(self, cell: Cell, chars: int) -> dict[str, int]:
        m = self.per_target.setdefault(cell.model, {"cells": 0, "calls": 0, "input_tokens": 0, "judge_calls": 0})
        m["cells"] += 1
        if not self.replay:  # a replayed answer costs no call
            m["calls"] += 1
            m["input_tokens"] += chars // CHARS_PER_TOKEN + 1
        return m

    def facts(self) -> PlanFacts:
        return PlanFacts(self.per_target, self.judges, self.report.groups(), self.unjudged, self.any_workspace)


def _facts_of(plan: AgentvPlan) -> PlanFacts:
    gathered = _Facts(plan.suite, plan.replay is not None)
    for t in plan.tasks:
        gathered.add(t.cell, t.judge, t.test)  # the test decoded: a task made for it
    return gathered.facts()


def _needs_judge(test: AgentvTest) -> bool:
    return test.uses_default_judge or any(stage_of(a).judged for a in test.assertions)


def find_targets_file(eval_path: Path) -> Path | None:
    """targets.yaml beside the eval file or in an .agentv/ folder, walking up to the repository root."""
    folder = eval_path.resolve().parent
    for current in (folder, *folder.parents):
        for name in TARGET_FILES:
            for candidate in (current / name, current / ".agentv" / name):
                if candidate.is_file():
                    return candidate
        if (current / ".git").exists():
            break
    return None


def load_targets(path: Path | None) -> dict[str, dict[str, Any]]:
    """The targets of `path` by name, read as AgentV reads them (plan/targets_file.py); {} without a file."""
    if path is None:
        return {}
    from .targets_file import read_targets

    try:
        raw = read_regular_bytes(path, MAX_READ)  # never a FIFO or a device
        if raw is None:
            raise OSError("not a regular file of at most 10 MB")
        text = raw.decode("utf-8")
    except (OSError, ValueError) as exc:
        raise PlanError(f"cannot read {path}: {exc}") from None
    return read_targets(path, text)


def _is_model_id(text: str) -> bool:
    return text == "echo" or text.startswith("echo:") or (":" in text and not text.startswith("replay:"))


def resolve_spec(name: str, targets: dict[str, dict[str, Any]], judge_override: str | None) -> TargetSpec:
    if name in targets:
        entry = targets[name]
        if "workspace_template" in entry or "workspaceTemplate" in entry:  # AgentV v2.19 refuses the target
            raise PlanError(f"{name}: target-level workspace_template has been removed. Use eval-level "
                            "workspace.template.")
        judge = judge_override or (str(entry["judge_target"]) if entry.get("judge_target") else None)
        return TargetSpec(name, config=entry, judge=judge)
    if _is_model_id(name):
        return TargetSpec(name, model=name, judge=judge_override)
    raise PlanError(f"no target named '{name}'" + (f" in {', '.join(sorted(targets))}" if targets else
                    " (no targets.yaml found beside the eval file or in .agentv/)")
                    + "; pass -m provider:model (or -m echo) to run against a model directly")


def plan_agentv(suite: AgentvSuite, path: Path, options: RunOptions) -> AgentvPlan:
    overridden = list(dict.fromkeys(m.strip() for m in options.models if m.strip()))
    replay = None
    if any(m.strip().startswith("replay:") for m in overridden):  # replay.is_replay, that module loaded only then
        from .replay import ReplaySource

        if len(overridden) != 1:
            raise PlanError("replay:<file> replaces the targets; give it alone (-m replay:results.jsonl)")
        replay = ReplaySource.load(overridden[0].partition(":")[2], kind="agentv")
    targets_file = find_targets_file(path)
    entries = load_targets(targets_file)
    judge_override = options.judges[0] if options.judges else None
    warnings: list[str] = []
    if len(options.judges) > 1:
        warnings.append(f"AgentV uses one judge per target; --judge {options.judges[0]} is used")

    tests = keep_items(suite.tests, lambda _, tid: selected(tid, options.select))
    missing = unmatched(options.select, item_ids(suite.tests))
    if missing:
        warnings.append(f"--test {', '.join(missing)} matched no test")
    if not tests:
        raise PlanError("no test to run" + (f" (--test {' '.join(options.select)})" if options.select else ""))

    specs: dict[str, TargetSpec] = {}

    def spec(name: str) -> TargetSpec:
        if name not in specs:
            specs[name] = resolve_spec(name, entries, judge_override)
        return specs[name]

    def recorded(name: str) -> TargetSpec:
        """A replayed target: never called, so a name that targets.yaml no longer has (or never had) is
        fine; it only loses its judge_target."""
        if name not in specs:
            known = name in entries or _is_model_id(name)
            specs[name] = resolve_spec(name, entries, judge_override) if known else TargetSpec(
                name, judge=judge_override)
        return specs[name]

    suite_targets = suite.targets or ([suite.target] if suite.target else [DEFAULT_TARGET])
    judges: dict[str, TargetSpec | None] = {}
    tasks = AgentvTasks(tests, judges)
    unanswered = 0
    shells: set[str] = set()
    # What the summary and the preflight read of each cell's test, gathered here for the cells this run
    # (this shard) makes: a store's tests are decoded again on each pass over them
    gathered = _Facts(suite, replay is not None)
    # A store's tests are decoded one at a time, none kept; a test whose input is all the plan needs of it
    # (the store's `plain_inputs`: most tests) is not decoded at all
    plain = tests.plain_inputs() if isinstance(tests, TestStore) else None
    for k in range(len(tests)):
        chars = plain[k] if plain is not None else -1
        test = tests[k] if chars < 0 else None
        deterministic = test is not None and gathered.deterministic(test)
        test_id = test.id if test is not None else id_at(tests, k)
        if replay is not None:
            names = replay.models_for(test_id)
            unanswered += not names
        else:
            names = overridden or (_test_targets(test) if test is not None else []) or suite_targets
        run_here = options.shard is None or options.shard.holds(test_id)
        for name in dict.fromkeys(names):
            target = spec(name) if replay is None else recorded(name)
            if target.name not in judges:
                judges[target.name] = spec(target.judge) if target.judge else None
            tasks.add(k, target)
            if run_here:
                if test is None:
                    gathered.add_plain(Cell(test_id, target.name), chars)
                else:
                    gathered.add(Cell(test_id, target.name), judges[target.name], test, deterministic)
        if test is not None and not deterministic:
            shells.update(a.name for a in _all_assertions(test.assertions) if a.config.get("shell")
                          and not a.custom and stage_of(a) is Stage.SCRIPT)
    if replay is not None:
        if not tasks:
            raise PlanError(f"replay: {replay.path} holds no answers for the selected tests")
        if unanswered:
            warnings.append(f"replay: {unanswered} selected test(s) have no answer in {replay.path}; skipped")

    if shells:
        warnings.append(f"code-judge {', '.join(sorted(shells))}: the command is a string, run through the platform's "
                        "shell (/bin/sh -c, cmd /c on Windows); write it as an argv list")

    from ...pricing import PriceFileError, PriceTable

    try:
        prices = PriceTable.load(options.prices, options.env)
    except PriceFileError as exc:
        raise PlanError(str(exc)) from None

    used = tasks.target_names()
    # A replay is its own run: without the source in its identity it would share the recorded run's label,
    # and its journal would push that run's journal aside (and --resume would mix the two).
    all_items = item_ids(tests)
    ident = json.dumps({"file": str(path.resolve()), "tests": all_items, "targets": used,
                        **({"replay": str(replay.path.resolve())} if replay is not None else {})}, sort_keys=True)
    digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
    label = f"{options.label.strip()}_{digest}" if options.label and options.label.strip() else digest
    dataset = suite.name or _stem(path)
    if options.shard is not None:  # after the label and targets: every shard names the same run
        shard = options.shard
        held = keep_items(tests, lambda _, tid: shard.holds(tid))
        tasks = tasks.kept(held, shard.holds)
        tests = held
    return AgentvPlan(suite=suite, path=path, dataset=dataset, tests=tests, targets=[specs[n] for n in used],
                      tasks=tasks, targets_file=targets_file, run_label=label,
                      concurrency=options.concurrency or 30, warnings=warnings, replay=replay,
                      prices=prices, shard=options.shard, all_items=all_items,
                      inside=None if options.allow_outside_files else _project_folder(path),
                      _facts=gathered.facts())


def _project_folder(path: Path) -> Path:
    from ...agentv.files import FileSystem

    return FileSystem().real_root(path.parent)


def _all_assertions(items: list[Any]) -> list[Any]:
    """Assertions and, inside composites, their children."""
    out: list[Any] = []
    for a in items:
        out.append(a)
        out.extend(_all_assertions(a.children))
    return out


def _test_targets(test: AgentvTest) -> list[str]:
    ex = test.execution or {}
    got = ex.get("targets") or ([ex["target"]] if ex.get("target") else [])
    return [str(t) for t in got if isinstance(t, str)]


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".eval.yaml", ".eval.yml", ".yaml", ".yml", ".jsonl", ".csv"):
        if name.endswith(suffix):
            return name[: -len(suffix)] or "eval"
    return name


def build_provider(spec: TargetSpec, options: RunOptions, *, client: Any, base_dir: Path | None) -> tuple[Any, str]:
    """(provider, model name for ChatRequest) behind a target spec, retries wrapped in. Raises
    ProviderError before any HTTP. A targets.yaml provider is bound to its model (the name is ignored)."""
    from ...providers.factory import provider_for_model
    from ...providers.retry import RetryPolicy
    from ...providers.targets import provider_from_target

    policy = RetryPolicy(max_retries=max(0, options.max_retries))
    if spec.config is not None:
        return provider_from_target(spec.config, client=client, env=options.env, base_dir=base_dir,
                                    timeout=options.timeout, retry=policy), ""
    binding = provider_for_model(spec.model or spec.name, client=client, env=options.env, timeout=options.timeout,
                                 retry=policy)
    return binding.provider, binding.model_name
