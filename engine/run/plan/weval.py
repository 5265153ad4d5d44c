"""From a checked blueprint to the list of calls a run makes, in the reference's order.

A cell is one prompt × one effective model: `model[temp:T]` for every temperature to run, plus
`[sp_idx:i]` for every system prompt when `systems` has more than one. Temperatures to run are
`temperatures`, else `[temperature]`; the temperature sent is that value, else the prompt's, else the
header's, else 0. The system prompt is the `systems` entry, else the prompt's own `system` (even
null), else the header's.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, overload

from ...list_like import ListLike
from ...weval.model import Blueprint, Judge, Prompt
from ...weval.models import effective_model_id
from ...weval.prompt_store import cell_prompt, cell_prompts, keep_prompts, prompt_ids
from ..events import Cell
from ..options import RunOptions
from .error import PlanError
from .items import CHARS_PER_TOKEN
from .run_label import content_hash, prompt_entry_json, run_label
from .selection import selected, unmatched
from .shard import Shard

DEFAULT_TEMPERATURE = 0.0
# The reference's default judges (holistic), used when the blueprint configures none.
DEFAULT_JUDGES: tuple[Judge, ...] = tuple(
    Judge(id=jid, model=model, approach="holistic")
    for jid, model in (
        ("holistic-gemini-2-5-flash", "openrouter:google/gemini-2.5-flash"),
        ("holistic-gpt-4-1-mini", "openrouter:openai/gpt-4.1-mini"),
        ("holistic-claude-haiku-4-5", "openrouter:anthropic/claude-haiku-4.5"),
    )
)
JUDGE_PROMPT_TOKENS = 900  # the judge's instructions and scale, per judged point


@dataclass(frozen=True, slots=True)
class WevalTask:
    cell: Cell
    # the plan's prompts and this cell's position in them: a big blueprint's prompts are on disk
    # (weval/prompt_store.py), and a task holding its prompt would hold the whole blueprint again
    prompts: Sequence[Prompt] = field(compare=False, repr=False)
    index: int
    model: str  # the model id as listed (custom models: their id)
    temperature: float
    system: str | None
    sp_index: int | None
    # the prompt once read: a cell's stages read it several times, and each read of a big blueprint's
    # store decodes it again (11 decodes a prompt at 20,000 prompts before it was kept)
    _prompt: Prompt | None = field(default=None, compare=False, repr=False)

    @property
    def prompt(self) -> Prompt:
        found = self._prompt
        if found is None:
            found = cell_prompt(self.prompts, self.index)  # (without its reference form: the export reads that)
            object.__setattr__(self, "_prompt", found)
        return found


class WevalTasks(ListLike[WevalTask]):
    """The plan's cells in order, a WevalTask made when one is read: each cell keeps its Cell (the batch
    stage's parts and the journal's state share it), its prompt's position (8 bytes) and the number of its
    (model, temperature, system prompt, system index), which few cells differ in (2 bytes). As objects the
    tasks were ~90 bytes a cell more, held for the whole run: ~18 MB at 200,000 cells."""

    _unit = "cells"

    def __init__(self, prompts: Sequence[Prompt]) -> None:
        self.prompts = prompts
        self._cells: list[Cell] = []
        self._index = array("q")
        self._kind = array("I")
        self._kinds: list[tuple[str, float, str | None, int | None]] = []
        self._kind_at: dict[tuple[str, type, float, str | None, int | None], int] = {}

    def add(self, cell: Cell, index: int, model: str, temperature: float, system: str | None,
            sp_index: int | None) -> None:
        key = (model, type(temperature), temperature, system, sp_index)
        kind = self._kind_at.get(key)
        if kind is None:
            kind = self._kind_at[key] = len(self._kinds)
            self._kinds.append((model, temperature, system, sp_index))
        self._cells.append(cell)
        self._index.append(index)
        self._kind.append(kind)

    def __len__(self) -> int:
        return len(self._cells)

    @overload
    def __getitem__(self, n: int) -> WevalTask: ...

    @overload
    def __getitem__(self, n: slice) -> list[WevalTask]: ...

    def __getitem__(self, n: int | slice) -> WevalTask | list[WevalTask]:
        if isinstance(n, slice):
            return [self[k] for k in range(*n.indices(len(self)))]
        model, temperature, system, sp_index = self._kinds[self._kind[n]]
        return WevalTask(self._cells[n], self.prompts, self._index[n], model, temperature, system, sp_index)

    def __iter__(self) -> Iterator[WevalTask]:
        prompts, kinds, kind_of, index = self.prompts, self._kinds, self._kind, self._index
        for n, cell in enumerate(self._cells):
            model, temperature, system, sp_index = kinds[kind_of[n]]
            yield WevalTask(cell, prompts, index[n], model, temperature, system, sp_index)

    def cells(self) -> list[Cell]:
        """The cells, in order (the plan's own list: not to be changed)."""
        return self._cells

    def planned_items(self) -> set[str]:
        """The ids of the prompts with a cell."""
        return {c.item for c in self._cells}

    def prompt_index(self, n: int) -> int:
        """Task n's prompt's position (its `index`), without making the task."""
        return self._index[n]

    def items(self) -> Sequence[int]:
        """Each cell's prompt's position, in order (run/split.py cuts the cells between prompts)."""
        return self._index

    def rows(self) -> Iterator[tuple[Cell, int, str | None]]:
        """Each task's cell, prompt position and system prompt, in order, without making the tasks."""
        kinds, kind_of, index = self._kinds, self._kind, self._index
        for n, cell in enumerate(self._cells):
            yield cell, index[n], kinds[kind_of[n]][2]

    @classmethod
    def of(cls, prompts: Sequence[Prompt], tasks: Iterable[WevalTask]) -> WevalTasks:
        out = cls(prompts)
        for t in tasks:
            out.add(t.cell, t.index, t.model, t.temperature, t.system, t.sp_index)
        return out


@dataclass
class WevalPlan:
    kind: ClassVar[Literal["weval"]] = "weval"  # a Plan's format, told without importing either plan module
    blueprint: Blueprint
    path: Path
    config_id: str
    title: str
    models: list[str]  # base model ids, in order
    model_specs: dict[str, Any]  # id → what to bind: the id, or a custom model object
    prompts: Sequence[Prompt]  # a list, or a big blueprint's PromptStore (weval/prompt_store.py)
    tasks: Sequence[WevalTask]  # WevalTasks (a list in plans made by hand)
    effective_models: list[str]
    judges: list[Judge]
    judge_source: str  # "--judge" | "blueprint" | "default"
    key_point_models: list[str]
    eval_methods: tuple[str, ...]
    content_hash: str
    run_label: str
    concurrency: int
    replay: Any = None  # a ReplaySource when the model is `replay:<file>`
    warnings: list[str] = field(default_factory=list)
    fingerprints: Mapping[str, str] = field(default_factory=dict)  # item id -> its text's (plan/items.py)
    prices: Any = None  # the PriceTable (pricing.py): shipped prices + --prices / $EVALSPEC_PRICES
    shard: Shard | None = None  # --shard: prompts and tasks hold this shard's share only (plan/shard.py)
    all_items: list[str] = field(default_factory=list)  # every selected prompt id, in order, before sharding
    source_digest: str = ""  # of the blueprint's text (shard manifests compare it)

    @property
    def output_folder_parts(self) -> tuple[str, ...]:
        return ("live", "blueprints", self.config_id)

    @property
    def results_base(self) -> str:
        """The run label as results file names carry it (a shard's names say which shard)."""
        return self.run_label + (self.shard.suffix if self.shard is not None else "")

    def judged_points(self, prompt: Prompt) -> int:
        return _judged_points(prompt)

    def prompt_facts(self) -> tuple[array, array, array]:
        """For each of `prompts`, in order: the turns a run generates, its messages' characters and its
        judged points. Read in one pass and kept (12 bytes a prompt): a big blueprint's prompts are on
        disk, and each pass over them decodes every one (`plan_weval` reads them in its own pass)."""
        facts = self.__dict__.get("_facts")
        if facts is None:
            read = PromptPass()
            for prompt in cell_prompts(self.prompts):
                read.facts(prompt)
            facts = self.__dict__["_facts"] = (read.generated, read.chars, read.judged)
        return facts

    def any_judged(self) -> bool:
        """Whether some prompt has a judged point (or key points to extract)."""
        return any(self.prompt_facts()[2])

    def summary(self) -> dict[str, Any]:
        """The plan as plain data: what `--dry-run` prints and RunStarted carries."""
        per_model: dict[str, dict[str, int]] = {}
        generated, chars, judged = self.prompt_facts()
        coverage = "llm-coverage" in self.eval_methods
        replayed = self.replay is not None
        tasks = self.tasks
        if type(tasks) is WevalTasks and tasks.prompts is self.prompts:  # the cells' numbers, no task made
            for cell, k, system in tasks.rows():
                m = per_model.get(cell.model)
                if m is None:
                    m = per_model[cell.model] = {"cells": 0, "calls": 0, "input_tokens": 0, "judge_calls": 0}
                m["cells"] += 1
                if not replayed:
                    m["calls"] += max(1, generated[k])
                    m["input_tokens"] += (chars[k] + len(system or "")) // CHARS_PER_TOKEN + 1
                if coverage:
                    m["judge_calls"] += judged[k] * len(self.judges)
            tasks = []
        for t in tasks:
            m = per_model.get(t.cell.model)
            if m is None:
                m = per_model[t.cell.model] = {"cells": 0, "calls": 0, "input_tokens": 0, "judge_calls": 0}
            m["cells"] += 1
            if t.prompts is self.prompts:
                k = t.index
                turns, text, points = generated[k], chars[k], judged[k]
            else:  # a plan made by hand
                prompt = t.prompt
                turns = sum(1 for msg in prompt.messages if msg.role == "assistant" and msg.content is None)
                turns += 1 if prompt.messages and prompt.messages[-1].role == "user" else 0
                text = sum(len(msg.content or "") for msg in prompt.messages)
                points = self.judged_points(prompt)
            m["calls"] += 0 if self.replay is not None else max(1, turns)
            m["input_tokens"] += 0 if self.replay is not None else (text + len(t.system or "")) // CHARS_PER_TOKEN + 1
            if coverage:
                m["judge_calls"] += points * len(self.judges)
        judge_calls = sum(m["judge_calls"] for m in per_model.values())
        return {
            "kind": "weval",
            "file": str(self.path),
            "config_id": self.config_id,
            "title": self.title,
            "run_label": self.run_label,
            "prompts": len(self.prompts),
            "models": self.models,
            "effective_models": self.effective_models,
            "cells": len(self.tasks),
            "per_model": per_model,
            "judges": [_judge_label(j) for j in self.judges] if "llm-coverage" in self.eval_methods else [],
            "judge_source": self.judge_source,
            "eval_methods": list(self.eval_methods),
            "calls": sum(m["calls"] for m in per_model.values()) + judge_calls,
            "estimated_input_tokens": sum(m["input_tokens"] for m in per_model.values())
            + judge_calls * JUDGE_PROMPT_TOKENS,
            "concurrency": self.concurrency,
            "replay": str(self.replay.path) if self.replay is not None else None,
            "shard": str(self.shard) if self.shard is not None else None,
            "warnings": list(self.warnings),
        }


def _judge_label(j: Judge) -> str:
    return f"{j.id or j.approach}({j.model})"


def _judged_points(prompt: Prompt) -> int:
    n = 0
    for points in (prompt.should, prompt.should_not):
        for p in points:
            if p.kind == "text":
                n += 1
    if not n and prompt.ideal and not prompt.has_points:
        n = 5  # key points extracted from the ideal: a handful, typically
    return n


class PromptPass:
    """What planning reads of each selected prompt, gathered in one pass over them: a big blueprint's
    prompts are on disk (weval/prompt_store.py), and each pass decoded every one (five passes were most of
    planning a 20,000-prompt run). Per prompt: `WevalPlan.prompt_facts`' three numbers, its entry in the
    run label's hashed text (UTF-8, in one buffer) and its span's first and last lines (fingerprints).
    The entries are hashed in the ids' locale order once all are read, so they are held while planning:
    ~170 bytes a prompt (17 MB at 100,000 prompts, the peak of planning them 106 -> 123 MB), the price of
    not decoding every prompt a second time, in that order.

    A run's check fills one as it stores each prompt (`check_weval(note=PromptPass)`), with each prompt's
    own system prompt and temperature (`settings`): then planning decodes none."""

    def __init__(self) -> None:
        self.generated, self.chars, self.judged = array("I"), array("Q"), array("I")
        self._entries = bytearray()
        self._entry_at = array("q", [0])
        self.lines = array("q")  # start line, end line of each prompt
        # (system_set, system, temperature) of each prompt that sets either, else None (most: one object)
        self.settings: list[tuple[bool, str | None, float | None] | None] = []
        self.of: Any = None  # the prompts these describe (check_weval sets it: the blueprint's `prompts`)

    def __len__(self) -> int:
        return len(self.generated)

    def facts(self, prompt: Prompt) -> None:
        messages = prompt.messages
        n = chars = 0
        for msg in messages:
            content = msg.content
            if content is None:
                n += msg.role == "assistant"
            else:
                chars += len(content)
        self.generated.append(n + 1 if messages and messages[-1].role == "user" else n)
        self.chars.append(chars)
        self.judged.append(_judged_points(prompt))

    def add(self, prompt: Prompt) -> None:
        self.facts(prompt)
        self.settings.append((prompt.system_set, prompt.system, prompt.temperature)
                             if prompt.system_set or prompt.temperature is not None else None)
        self._entries += prompt_entry_json(prompt).encode("utf-8", "surrogatepass")
        self._entry_at.append(len(self._entries))
        span = prompt.span
        self.lines.append(span.start_line)
        self.lines.append(span.end_line)

    def extend(self, other: PromptPass) -> None:
        """What `other` noted of the prompts that follow these (another process's part of a file's prompts)."""
        self.generated.extend(other.generated)
        self.chars.extend(other.chars)
        self.judged.extend(other.judged)
        self.settings.extend(other.settings)
        shift = len(self._entries)
        self._entries += other._entries
        self._entry_at.extend(at + shift for at in other._entry_at[1:])
        self.lines.extend(other.lines)

    def entry_json(self, k: int) -> str:
        return self._entries[self._entry_at[k]:self._entry_at[k + 1]].decode("utf-8", "surrogatepass")

    def kept(self, indexes: list[int]) -> PromptPass:
        """The same for the prompts at `indexes` (a shard's), in that order (no entries: hashed already)."""
        out = PromptPass()
        for k in indexes:
            out.generated.append(self.generated[k])
            out.chars.append(self.chars[k])
            out.judged.append(self.judged[k])
            out.lines.extend(self.lines[2 * k:2 * k + 2])
        return out


def plan_weval(bp: Blueprint, path: Path, options: RunOptions, noted: PromptPass | None = None) -> WevalPlan:
    """The plan of a blueprint. `noted`: what its check noted of its prompts as it stored them (read instead
    of decoding each prompt again, when it describes `bp.prompts` and every one of them is run)."""
    warnings: list[str] = []
    replay = None
    if options.models:
        listed = list(dict.fromkeys(m.strip() for m in options.models if m.strip()))
    else:
        listed = list(bp.models_resolved)
    if any(m.strip().startswith("replay:") for m in listed):  # replay.is_replay, that module loaded only then
        from .replay import ReplaySource

        if len(listed) != 1:
            raise PlanError("replay:<file> replaces the models; give it alone (-m replay:results.json)")
        replay = ReplaySource.load(listed[0].partition(":")[2])
    specs: dict[str, Any] = {}
    custom = {m.id: m.custom for m in bp.models if m.custom}
    for m in listed:
        specs[m] = custom.get(m, m)
    if replay is None:
        unresolved = [m for m in listed if ":" not in m and m != "echo" and m not in custom]
        if unresolved:
            raise PlanError(
                f"model collection {', '.join(unresolved)} is not resolved (no models/<NAME>.json found "
                "beside the blueprint, or not a JSON array of model ids); pass models with -m provider:model "
                "(or -m echo)")
        if not listed:
            raise PlanError("the blueprint lists no models; pass one with -m provider:model (or -m echo)")

    prompts = keep_prompts(bp.prompts, lambda _, pid: selected(pid, options.select))
    missing = unmatched(options.select, prompt_ids(bp.prompts))
    if missing:
        warnings.append(f"--prompt {', '.join(missing)} matched no prompt")
    if not prompts:
        raise PlanError("no prompt to run" + (f" (--prompt {' '.join(options.select)})" if options.select else ""))

    systems: list[tuple[int | None, str | None]]
    read: PromptPass | None = None  # what the one pass over the prompts read (not for a replay)
    several = bool(bp.systems) and len(bp.systems or []) > 1
    tasks = WevalTasks(prompts)
    if replay is not None:
        for k, pid in enumerate(prompt_ids(prompts)):
            for eff in replay.models_for(pid):
                tasks.add(Cell(pid, eff), k, eff, 0.0, replay.system_for(eff), None)
        if not tasks:
            raise PlanError(f"{replay.path} holds no answers for the selected prompts")
    else:
        ids = prompt_ids(prompts)
        # One string per effective model and one float per temperature, shared by the tasks (each made
        # anew was ~100 bytes a cell), and the ids the plan's prompts hold (a decoded prompt's are copies).
        shared: dict[Any, Any] = {}
        if noted is not None and noted.of is bp.prompts and not options.select and len(noted) == len(prompts):
            read = noted
        else:
            read = PromptPass()
            for p in cell_prompts(prompts):  # (what planning reads of a prompt: not its reference form)
                read.add(p)
        temperatures = bp.temperatures_to_run()
        written_systems: list[tuple[int | None, str | None]] | None = \
            list(enumerate(bp.systems)) if bp.systems else None
        unset: list[tuple[int | None, str | None]] = [(None, bp.system)]  # a prompt that sets no system prompt of its own
        for k, setting in enumerate(read.settings):
            system_set, own_system, own_temperature = setting if setting is not None else (False, None, None)
            systems = written_systems or ([(None, own_system)] if system_set else unset)
            for m in listed:
                for t in temperatures:
                    temp = t if t is not None else (own_temperature if own_temperature is not None else
                                                    (bp.temperature if bp.temperature is not None
                                                     else DEFAULT_TEMPERATURE))
                    for idx, system in systems:
                        key = (m, type(temp), temp, idx if several else None)
                        made = shared.get(key)
                        if made is None:
                            made = shared[key] = (effective_model_id(m, temp, idx if several else None), float(temp))
                        tasks.add(Cell(ids[k], made[0]), k, m, made[1], system, idx)

    if options.judges:
        judges = [Judge(id=None, model=j, approach="holistic") for j in options.judges]
        judge_source = "--judge"
    elif bp.judges:
        judges, judge_source = list(bp.judges), "blueprint"
    else:
        judges, judge_source = list(DEFAULT_JUDGES), "default"
    key_point_models = list(options.judges or bp.judge_models or [j.model for j in judges])

    from ...pricing import PriceFileError, PriceTable

    try:
        prices = PriceTable.load(options.prices, options.env)
    except PriceFileError as exc:
        raise PlanError(str(exc)) from None

    chash = content_hash(bp, [m for m in listed] if replay is None else replay.base_models(), prompts,
                         read.entry_json if read is not None else None)
    concurrency = options.concurrency or bp.concurrency or 30
    # The whole plan's (before sharding): every shard's results name the same models.
    effective = list(dict.fromkeys(cell.model for cell in tasks.cells()))
    all_items = prompt_ids(prompts)
    if options.shard is not None:
        shard = options.shard
        kept = [n for n, pid in enumerate(all_items) if shard.holds(pid)]
        prompts = keep_prompts(prompts, lambda n, pid: shard.holds(pid))
        read = read.kept(kept) if read is not None else None
        position = {n: k for k, n in enumerate(kept)}  # a task's prompt's place among the kept ones
        tasks = WevalTasks.of(prompts, (WevalTask(t.cell, prompts, position[t.index], t.model, t.temperature,
                                                  t.system, t.sp_index) for t in tasks if shard.holds(t.cell.item)))
    plan = WevalPlan(
        blueprint=bp, path=path, config_id=bp.id, title=bp.title, models=listed if replay is None else
        replay.base_models(), model_specs=specs, prompts=prompts, tasks=tasks, effective_models=effective,
        judges=judges, judge_source=judge_source, key_point_models=key_point_models,
        eval_methods=options.eval_methods, content_hash=chash, run_label=run_label(chash, options.label),
        concurrency=concurrency, replay=replay, warnings=warnings, prices=prices, shard=options.shard,
        all_items=all_items)
    if read is not None:
        plan.__dict__["_facts"] = (read.generated, read.chars, read.judged)
        plan.__dict__["_prompt_lines"] = (prompt_ids(prompts), read.lines)  # for plan_for's fingerprints
    return plan
