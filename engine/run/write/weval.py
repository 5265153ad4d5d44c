"""The write stage of a Weval run: what each cell left for the results, and the files written from it.

The runner tells the writer what happened to each cell (answered, failed, scored) as it happens; the
comparison file and its artefact folder (write/weval_results.py: their layout) are written once, when the run
ends, or for the cells that finished when it was stopped (`RunOptions.partial_results`). Everything
here is also in the journal, so no result depends on these files being written.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..events import Cell
from ..journal.database import json_text
from ..plan.cell_index import CellIndex
from ..plan.weval import WevalPlan, WevalTask
from . import cell_store
from .cell_store import COVERAGE, HISTORY, ODD, RESPONSE, CellStore, piece
from .files import now_utc, safe_timestamp
from .weval_results import WevalResults, comparison_object, write_comparison

log = logging.getLogger(__name__)


def stored_result(result: dict[str, Any]) -> tuple[bytes, str]:
    """A coverage result encoded once: its piece for the results (`cell_store.piece`) and its JSON text
    for the database's `scores.result` (what `database.put` would encode it as: the same JSON, masked)."""
    encoded = piece(result)
    return encoded, json_text(encoded.removeprefix(ODD))


class WevalWriter:
    """The results of one run, by prompt and effective model, and the files they become."""

    def __init__(self, plan: WevalPlan, folder: Path, *, coverage: bool, bound: int | None = None,
                 index: CellIndex | None = None, artefacts: bool = True) -> None:
        self.plan = plan
        self.artefacts = artefacts  # the artefact folder too (--artefacts)
        self.folder = folder
        self.coverage = coverage  # coverage results are written (not with --eval-method embedding alone)
        # `bound`: cells held in memory; past it they wait for the files on disk (write/cell_store.py),
        # found through `index` (the plan's cells: plan/cell_index.py) when given
        self.results = WevalResults(CellStore(folder, bound if bound is not None else
                                              cell_store.bound_for(len(plan.tasks)), index))
        self.index = index
        self.exported: dict[str, Any] | None = None  # the comparison object last written
        # Which of the plan's prompts have an ideal, as the cells are told (answered or failed; every cell
        # is by the end of a finished run): the results then read no prompt to learn whether any has one,
        # nor a prompt without one for its row of answers (1 byte a prompt)
        self.ideals = bytearray(len(plan.prompts))
        self.told_elsewhere = False  # a cell whose task reads other prompts than the plan's (a plan made by hand)
        self.points_not_scored = 0  # point assessments with an error in the coverage results recorded
        # a cell process's (hand_over): what each cell gave the results, by cell, and key points by prompt
        self._handing: dict[Cell, dict[str, Any]] | None = None
        self._handing_points: dict[str, list[str]] = {}

    def answered(self, task: WevalTask, final: str, messages: list[dict[str, str]]) -> None:
        """A cell's answer (its final turn) and the whole exchange as {role, content} (`as_messages`; kept
        as they are, never changed)."""
        cell = task.cell
        if self._handing is not None:
            self._hand(task)["a"] = (piece(final), piece(messages))
            return
        self._told(task)
        # the cell's last record unless its coverage result follows (`scored`)
        self.results.put(cell.item, cell.model, RESPONSE, piece(final), cell, HISTORY, piece(messages),
                         last=not self.coverage)
        self.results.system_prompts[cell.model] = task.system

    def failed(self, task: WevalTask, message: str, *, not_run: bool = False) -> None:
        """A cell with no answer: the reference's error marker in place of the answer. `not_run`: a
        cost cap kept it from starting (its coverage error says so, not "Generation failed")."""
        cell = task.cell
        if self._handing is not None:
            self._hand(task)["f"] = (message, not_run)
            return
        self._told(task)
        marked = f"<<error>>{message}<</error>>"
        self.results.errors.setdefault(cell.item, {})[cell.model] = message
        history = [{"role": "system", "content": task.system}] if task.system else []
        history += [{"role": m.role, "content": m.content or ""} for m in task.prompt.messages
                    if not (m.role == "assistant" and m.content is None)]  # only assistant turns hold None
        history.append({"role": "assistant", "content": marked})
        self.results.system_prompts[cell.model] = task.system
        if self.coverage:
            self.results.record(cell.item, cell.model, cell=cell, last=True, response=marked, history=history,
                                coverage={"error": message[:1].upper() + message[1:] if not_run
                                          else f"Generation failed: {message}"})
        else:
            self.results.record(cell.item, cell.model, cell=cell, last=True, response=marked, history=history)

    def _told(self, task: WevalTask) -> None:
        if task.prompts is self.plan.prompts:
            if task.prompt.ideal:
                self.ideals[task.index] = 1
        else:
            self.told_elsewhere = True

    def _told_all(self, finished: bool) -> bool:
        """Every prompt's cells were told: a finished run's, where every prompt has cells (a replay's
        prompts have those the replayed file answered) and the tasks read the plan's prompts."""
        return finished and not self.told_elsewhere and self.plan.replay is None

    def scored(self, cell: Cell, result: dict[str, Any], encoded: bytes | None = None) -> None:
        """A cell's coverage result (nothing for an empty one); `encoded`: its `piece`, when the caller
        made it (Weval.scored: the database's copy is the same bytes)."""
        if result and self.coverage:
            if encoded is None:
                encoded = piece(result)
            errors = 0
            if b'"error"' in encoded:  # (a result whose JSON has no such key has no point with an error)
                errors = sum(1 for pa in result.get("pointAssessments") or [] if isinstance(pa, dict) and pa.get("error"))
            if self._handing is not None:
                self._handing.setdefault(cell, {})["s"] = (encoded, errors)
                return
            self.results.put(cell.item, cell.model, COVERAGE, encoded, cell, last=True)
            self.points_not_scored += errors

    def key_points(self, prompt_id: str, points: list[str]) -> None:
        if self._handing is not None:
            self._handing_points[prompt_id] = points
            return
        self.results.key_points[prompt_id] = points

    # --- cells another process ran (run/split.py) ----------------------------------------------------
    def hand_over(self) -> None:
        """In a cell process: what each cell gives the results is kept for the run's process (`handed`,
        then its writer's `adopt`), encoded as this writer would keep it, instead of kept here."""
        self._handing = {}

    def _hand(self, task: WevalTask) -> dict[str, Any]:
        given = self._handing.setdefault(task.cell, {})  # type: ignore[union-attr]
        given["i"] = bool(task.prompt.ideal) if task.prompts is self.plan.prompts else None  # (`_told`)
        return given

    def handed(self, cell: Cell) -> dict[str, Any] | None:
        """In a cell process: what `cell`, finished, gave the results (None: nothing)."""
        assert self._handing is not None
        given = self._handing.pop(cell, None)
        points = self._handing_points.pop(cell.item, None)
        if points is not None:
            given = given if given is not None else {}
            given["k"] = points
        return given

    def adopt(self, task: WevalTask, given: dict[str, Any] | None) -> None:
        """What a cell process's cell gave the results (`handed`), kept as if given here."""
        if not given:
            return
        cell = task.cell
        if "i" in given:
            ideal = given["i"]
            if ideal is None:
                self.told_elsewhere = True
            elif ideal:
                self.ideals[task.index] = 1
        if "f" in given:
            message, not_run = given["f"]
            self.failed(task, message, not_run=not_run)
        if "a" in given:
            final, messages = given["a"]
            self.results.put(cell.item, cell.model, RESPONSE, final, cell, HISTORY, messages, last=not self.coverage)
            self.results.system_prompts[cell.model] = task.system
        if "s" in given:
            encoded, errors = given["s"]
            self.results.put(cell.item, cell.model, COVERAGE, encoded, cell, last=True)
            self.points_not_scored += errors
        if "k" in given:
            self.results.key_points[cell.item] = given["k"]

    def answers(self, prompt_id: str) -> dict[str, str]:
        """Each model's answer to a prompt so far (an error marker for a failed cell)."""
        return self.results.field(prompt_id, "response")

    def similarity(self, overall: dict[str, dict[str, float]],
                   per_prompt: dict[str, dict[str, dict[str, float]]]) -> None:
        self.results.similarity = overall
        self.results.per_prompt_similarity = per_prompt

    def write(self, *, cost: dict[str, Any] | None, finished: bool = True, stamp: str | None = None) -> list[Path]:
        """The comparison file, the artefact folder (when asked for) and the cost file; the paths written.
        `cost`: the run's real tokens and cost (cost/spend.py), in their own file (cost/cost_file.py) so that the
        comparison file is the same bytes whether the calls went one by one or through a batch API. `stamp`: the
        time that names the files and is their `timestamp` (the run's, chosen at its first export: every
        export of one run is the same files); now when not given."""
        stamp = stamp or safe_timestamp(now_utc())
        plan = self.plan
        full = comparison_object(bp=plan.blueprint, models=plan.models, prompts=plan.prompts,
                                 run_label=plan.run_label, timestamp=stamp,
                                 eval_methods=list(plan.eval_methods) or ["llm-coverage"],
                                 effective_models=plan.effective_models, results=self.results,
                                 positions=self.index.item_positions() if self.index is not None else None,
                                 ideals=self.ideals if self._told_all(finished) else None)
        self.exported = full  # what a shard keeps of it in its run database (Weval.write, weval_rebuild.py)
        files = write_comparison(self.folder, plan.results_base, stamp, full, artefacts=self.artefacts)
        from ..cost.cost_file import write_cost

        cost_file = write_cost(files[0], cost)
        if cost_file is not None:
            files.append(cost_file)
        if finished and plan.shard is not None:  # a shard's manifest says it finished (plan/shard.py)
            from ..plan.shard import write_manifest

            write_manifest(plan, files[0], timestamp=stamp, models=plan.models,
                           effective_models=plan.effective_models, eval_methods=plan.eval_methods)
        return files  # the cells stay readable: the run's summary counts their points

    def write_partial(self, *, cost: dict[str, Any] | None, stamp: str | None = None) -> None:
        """A stopped run's results files, for the cells that finished (the journal has them anyway)."""
        try:
            self.write(cost=cost, finished=False, stamp=stamp)
        except Exception:  # never mask the cancellation or error that stopped the run
            log.warning("could not write the results of the stopped run", exc_info=True)
        finally:
            self.results.cells.close()
