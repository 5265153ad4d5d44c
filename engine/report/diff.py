"""Comparing two runs cell by cell: what regressed, what improved, what appeared or disappeared.

Cells are matched by (prompt or test id, model or target). A score change smaller than the regression
threshold (`--regression-threshold`, REGRESSION_THRESHOLD by default) is noise: judges and sampled answers
move a few hundredths between identical runs. A verdict that changes always counts, and so does a cell that
gained or lost its answer (an error) or its score.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import ERROR, OK, PENDING, CellResult, RunResults

REGRESSION_THRESHOLD = 0.05
SAME, REGRESSED, IMPROVED, CHANGED, ADDED, REMOVED = "same", "regressed", "improved", "changed", "added", "removed"
_RANK = {"fail": 0, "borderline": 1, "pass": 2}


def change_of(old: CellResult | None, new: CellResult | None, threshold: float = REGRESSION_THRESHOLD) -> str:
    if old is None or old.status == PENDING:
        return SAME if new is None or new.status == PENDING else ADDED
    if new is None or new.status == PENDING:
        return REMOVED
    if old.status == ERROR or new.status == ERROR:
        if old.status == new.status:
            return SAME
        return REGRESSED if new.status == ERROR else IMPROVED
    if old.score is None or new.score is None:
        if old.score is None and new.score is None:
            return SAME
        return CHANGED  # scored in one run only: neither better nor worse, but not the same
    delta = new.score - old.score
    ov, nv = _RANK.get(old.verdict or "", -1), _RANK.get(new.verdict or "", -1)
    # The smallest step counts at threshold 0 (never a difference of 0 itself).
    if (delta < 0 and delta <= -threshold) or (nv < ov and delta < 0):
        return REGRESSED
    if (delta > 0 and delta >= threshold) or (nv > ov and delta > 0):
        return IMPROVED
    return SAME


@dataclass
class ModelDiff:
    model: str
    regressed: int = 0
    improved: int = 0
    changed: int = 0
    added: int = 0
    removed: int = 0
    old_mean: float | None = None
    new_mean: float | None = None


@dataclass
class RunDiff:
    old: RunResults
    new: RunResults
    models: list[str]
    items: list[str]
    threshold: float = REGRESSION_THRESHOLD
    changes: dict[tuple[str, str], str] = field(default_factory=dict)
    per_model: list[ModelDiff] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for c in self.changes.values() if c == kind)

    def cells(self, kind: str) -> list[tuple[str, str]]:
        return [k for k, c in self.changes.items() if c == kind]


def diff_runs(old: RunResults, new: RunResults, threshold: float = REGRESSION_THRESHOLD) -> RunDiff:
    models = list(dict.fromkeys([*new.models, *old.models]))
    items = list(dict.fromkeys([*(i.id for i in new.items), *(i.id for i in old.items)]))
    d = RunDiff(old, new, models, items, threshold=threshold)
    old_stats = {s.model: s for s in old.summaries()}
    new_stats = {s.model: s for s in new.summaries()}
    for m in models:
        md = ModelDiff(m, old_mean=old_stats[m].mean if m in old_stats else None,
                       new_mean=new_stats[m].mean if m in new_stats else None)
        for i in items:
            c = change_of(old.cells.get((i, m)), new.cells.get((i, m)), threshold)
            d.changes[(i, m)] = c
            if c != SAME:
                setattr(md, c, getattr(md, c) + 1)
        d.per_model.append(md)
    return d


def run_names(old: RunResults, new: RunResults) -> tuple[str, str]:
    """What names each side of a comparison, told apart: the run labels, with the time when they are the
    same (a Weval label is the blueprint's hash: two runs of one file share it), then the results file."""
    def name(r: RunResults, *, when: bool, where: bool) -> str:
        out = r.run_label or r.source
        if when and r.timestamp:
            out += f" @ {r.timestamp}"
        if where:
            out += f" ({r.source})"
        return out

    for when, where in ((False, False), (True, False), (True, True)):
        a, b = name(old, when=when, where=where), name(new, when=when, where=where)
        if a != b:
            return a, b
    return a + " (old)", b + " (new)"


def describe(old: CellResult | None, new: CellResult | None) -> str:
    """`0.80 → 0.40`, `error → 0.90`, `— → 0.50` for text reports."""
    return f"{_short(old)} → {_short(new)}"


def _short(c: CellResult | None) -> str:
    if c is None or c.status == PENDING:
        return "—"
    if c.status == ERROR:
        return "error"
    if c.status != OK or c.score is None:
        return "not scored"
    return f"{c.score:.2f}"
