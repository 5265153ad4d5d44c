"""One model of a run's results, whatever file they came from (Weval comparison, AgentV JSONL, journal).

The report writers (HTML, Markdown, the terminal's worst items) and the diff read only this model.
Everything in it is untrusted text from models and judges: the writers escape it, never interpret it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PASS, BORDERLINE = 0.8, 0.6  # AgentV's verdict thresholds; evalspec uses them for Weval too

# A cell's status: scored; not scored (nothing could be scored, e.g. only judged points and no judge);
# error (no answer: the call failed); pending (an unfinished run has no result for it yet).
OK, NOT_SCORED, ERROR, PENDING = "ok", "not_scored", "error", "pending"


def verdict_of(score: float | None) -> str | None:
    if score is None:
        return None
    return "pass" if score >= PASS else "borderline" if score >= BORDERLINE else "fail"


@dataclass(slots=True)
class Point:
    """One Weval point or AgentV assertion of a cell."""

    text: str  # the point's text (`Function: icontains("x")`, a rubric line) or the assertion's name
    score: float | None  # None: not scored, and `not_scored` says why
    weight: float = 1.0
    kind: str = ""  # "should" / "should_not" (Weval), the assertion type (AgentV)
    note: str | None = None  # the judge's reflection or the assertion's reasoning
    not_scored: str | None = None  # why the point has no score
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    path: str | None = None  # Weval alternative path id
    counted: bool = True  # False: a point of an alternative path that did not count (another path won)
    verdict: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # fields this version does not know, shown as is

    @property
    def failed(self) -> bool:
        if not self.counted or self.score is None:
            return False
        if self.verdict in ("pass", "fail", "borderline"):
            return self.verdict == "fail"
        return self.score < PASS


@dataclass(slots=True)
class CellResult:
    """One (prompt or test) × (model or target) result."""

    status: str = OK
    score: float | None = None
    verdict: str | None = None
    answer: str | None = None
    history: list[dict[str, Any]] | None = None  # the whole conversation, when it has more than one turn
    points: list[Point] = field(default_factory=list)
    error: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # unknown row fields, shown generically

    def first_failed_point(self) -> Point | None:
        """The first counted point that failed, else the first that was not scored."""
        for p in self.points:
            if p.failed:
                return p
        return None

    def unscored_points(self) -> list[Point]:
        return [p for p in self.points if p.score is None]


@dataclass
class Item:
    """A Weval prompt or an AgentV test."""

    id: str
    messages: list[dict[str, Any]] = field(default_factory=list)  # [{role, content}]
    description: str | None = None
    ideal: str | None = None


@dataclass
class RunResults:
    kind: str  # "weval" | "agentv"
    title: str
    source: str  # the file the results were read from
    run_label: str = ""
    timestamp: str = ""
    eval_file: str | None = None
    complete: bool = True  # False: read from the journal of an unfinished or interrupted run
    models: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    cells: dict[tuple[str, str], CellResult] = field(default_factory=dict)  # (item id, model) → result
    notes: list[str] = field(default_factory=list)
    system_prompts: dict[str, str | None] = field(default_factory=dict)
    costs: dict[str, Any] | None = None  # real tokens and cost per role and model (report/costs.py)
    # Each process's wall time running the run, in seconds (its database's sessions; None: not recorded):
    # the run's own time, not its calls' durations added up (they overlap).
    wall: tuple[float, ...] | None = None

    def cell(self, item: str, model: str) -> CellResult | None:
        return self.cells.get((item, model))

    def model_summary(self, model: str) -> ModelStats:
        stats = ModelStats(model)
        for item in self.items:
            c = self.cells.get((item.id, model))
            stats.add(c)
        return stats

    def summaries(self) -> list[ModelStats]:
        """Every model's, in one pass over the items (the cells of a big file are made when read)."""
        stats = {m: ModelStats(m) for m in self.models}
        for item in self.item_ids():
            for m, s in stats.items():
                s.add(self.cells.get((item, m)))
        return [stats[m] for m in self.models]

    def item_ids(self) -> list[str]:
        """The items' ids (a big file's items are made when read: their ids are at hand)."""
        ids = getattr(self.items, "ids", None)
        return ids() if ids is not None else [i.id for i in self.items]


@dataclass
class ModelStats:
    model: str
    cells: int = 0
    scored: int = 0
    total: float = 0.0
    passed: int = 0
    borderline: int = 0
    failed: int = 0
    not_scored: int = 0
    errors: int = 0
    pending: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_known: bool = False
    cost_usd: float = 0.0
    cost_known: bool = False
    cost_missing: bool = False  # a cell that used tokens has no cost (no price): the sum is a lower bound
    duration_ms: float = 0.0
    duration_known: bool = False

    def add(self, c: CellResult | None) -> None:
        self.cells += 1
        if c is None or c.status == PENDING:
            self.pending += 1
            return
        if c.status == ERROR:
            self.errors += 1
        elif c.score is None:
            self.not_scored += 1
        else:
            self.scored += 1
            self.total += c.score
            v = c.verdict or verdict_of(c.score)
            if v == "pass":
                self.passed += 1
            elif v == "borderline":
                self.borderline += 1
            else:
                self.failed += 1
        if c.tokens_in is not None or c.tokens_out is not None:
            self.tokens_known = True
            self.tokens_in += c.tokens_in or 0
            self.tokens_out += c.tokens_out or 0
        if c.cost_usd is not None:
            self.cost_known = True
            self.cost_usd += c.cost_usd
        elif c.tokens_in or c.tokens_out:
            self.cost_missing = True
        if c.duration_ms is not None:
            self.duration_known = True
            self.duration_ms += c.duration_ms

    @property
    def mean(self) -> float | None:
        return self.total / self.scored if self.scored else None
