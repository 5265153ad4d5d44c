"""What a run yields: a stream of plain, frozen events.

The runner never prints. The CLI renders these events as a progress bar, lines and a table (or as JSON
lines with `--json`); the language server renders the same events as progress and inline results.
Every event has `type` and `to_json()` (`from_json` reads it back: an editor's run in a process of its
own sends its events so, engine/ide/run_process.py); cells are `(item, model)`: a Weval prompt id and an effective
model id (`openai:gpt-4o-mini[temp:0]`), or an AgentV test id and a target name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, NamedTuple


class Cell(NamedTuple):
    """A NamedTuple, not a dataclass: cells key every dict of a run, and a tuple hashes in C."""

    item: str  # prompt id / test id
    model: str  # effective model id / target name

    def to_json(self) -> dict[str, str]:
        return {"item": self.item, "model": self.model}

    def __str__(self) -> str:
        return f"{self.item} × {self.model}"


@dataclass(frozen=True, slots=True)
class Event:
    type: ClassVar[str] = "event"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if type(value) in _AS_IS:  # most fields: a text, a number, a flag, a dict
                out[name] = value
            else:
                out[name] = value.to_json() if hasattr(value, "to_json") else _plain(value)
        return out


# Values to_json writes as they are (what `_plain` gives back unchanged, found by exact type)
_AS_IS = frozenset({str, int, float, bool, type(None), dict, list})


def _plain(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class RunStarted(Event):
    """The plan as plain data (see Plan.summary()): kind, file, run label, cells per model, judges,
    estimated tokens, how many cells a resumed run already has."""

    type: ClassVar[str] = "run_started"
    plan: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CallStarted(Event):
    """A provider call is about to be made. `purpose`: generate | judge | extract | embed."""

    type: ClassVar[str] = "call_started"
    cell: Cell
    purpose: str = "generate"
    model: str = ""  # the model called (a judge's id for purpose=judge)


@dataclass(frozen=True, slots=True)
class Retrying(Event):
    """A call failed transiently and will be retried after `delay` seconds (`reason`: "429", "timeout")."""

    type: ClassVar[str] = "retrying"
    cell: Cell
    attempt: int
    delay: float
    reason: str
    purpose: str = "generate"


@dataclass(frozen=True, slots=True)
class RateLimit(Event):
    """The calls to one provider and key adapted to its rate limits (providers/rate_limits.py): the
    concurrency went `previous` → `concurrency` (of the user's `ceiling`) and/or calls to it pause `wait`
    seconds, because of `reason` ("429", "529", "503", "requests remaining 3 of 500", "recovering").
    `provider` names the lane ("openai"; "openai #2" for a second key). `gave_up`: it answered nothing
    but rate limits for the whole --max-wait, and its remaining calls fail. `text()` is the line shown."""

    type: ClassVar[str] = "rate_limit"
    provider: str
    reason: str
    concurrency: int
    previous: int
    ceiling: int
    wait: float = 0.0
    throttled: int = 0  # throttled answers from this lane so far
    gave_up: bool = False
    pace: float = 0.0  # calls started per second at most, while requests run low (0: no pacing)

    def text(self) -> str:
        if self.gave_up:
            return (f"{self.provider}: gave up: {self.throttled} rate-limit answer(s) and no success; "
                    "its remaining calls fail")
        parts = []
        if self.wait >= 0.05:
            parts.append(f"waiting {_seconds(self.wait)}")
        if self.concurrency != self.previous:
            parts.append(f"concurrency {self.previous} → {self.concurrency}")
        if self.pace:
            parts.append(f"pacing {self.pace:.3g} calls/s")
        return f"{self.provider}: {self.reason}" + (f": {', '.join(parts)}" if parts else "")


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s >= 10 or s == int(s) else f"{s:.1f} s"


@dataclass(frozen=True, slots=True)
class Response(Event):
    """A model's answer for a cell. `resumed`: read back from the journal of an interrupted run;
    `replayed`: taken from an earlier results file (replay:)."""

    type: ClassVar[str] = "response"
    cell: Cell
    text: str
    usage: tuple[int, int] = (0, 0)  # input, output tokens
    cached: bool = False
    latency_ms: float = 0.0
    resumed: bool = False
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class Scored(Event):
    """A cell's result. `score` is None when nothing could be scored (e.g. only judged points and no
    judge); `verdict` is pass | borderline | fail | None; `details` is the format's own result object
    (a Weval CoverageResult, an AgentV result row)."""

    type: ClassVar[str] = "scored"
    cell: Cell
    score: float | None
    verdict: str | None
    details: dict[str, Any] = field(default_factory=dict)
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class CellFailed(Event):
    """No answer for this cell (the run goes on). `kind` is the provider error kind when there is one."""

    type: ClassVar[str] = "cell_failed"
    cell: Cell
    error: str
    kind: str = "error"
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class Notice(Event):
    """Something the user should know that is not tied to one cell ("no judge key: text points are not
    scored", "3 finished cells taken from the journal")."""

    type: ClassVar[str] = "notice"
    message: str
    level: str = "info"  # info | warning


@dataclass(frozen=True, slots=True)
class BatchProgress(Event):
    """Batch mode: every provider batch of the run, after each poll: `{model, id, state, ended, counts,
    progress}` (`progress` reads "in_progress 120/500 (3 failed)")."""

    type: ClassVar[str] = "batch_progress"
    batches: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class ModelSummary:
    model: str
    cells: int = 0
    scored: int = 0
    mean: float | None = None
    passed: int = 0
    borderline: int = 0
    failed: int = 0
    not_scored: int = 0
    errors: int = 0


@dataclass(frozen=True, slots=True)
class RunSummary:
    kind: str
    run_label: str
    models: tuple[ModelSummary, ...]
    files: tuple[str, ...] = ()  # result files written
    interrupted: bool = False
    calls: int = 0  # provider calls made by this process (cache hits and resumed cells excluded)
    cached: int = 0
    resumed: int = 0
    notes: tuple[str, ...] = ()  # what the table alone would not say ("3 judged points not scored: …")
    # Points left out of a scored cell's score because they could not be scored (no judge, a `$js`
    # error, …): the reference averages the rest, so the cell has a score, but it vouches for less.
    points_not_scored: int = 0
    # Real tokens and US dollars per role and model (spend.Spend.to_json() + caps), and why cells were
    # not run when a cost cap stopped them (cost/budget.py): such a run exits non-zero.
    cost: dict[str, Any] | None = None
    stopped: str | None = None

    @property
    def mean(self) -> float | None:
        scores = [(m.mean, m.scored) for m in self.models if m.mean is not None and m.scored]
        total = sum(n for _, n in scores)
        return sum(s * n for s, n in scores) / total if total else None


@dataclass(frozen=True, slots=True)
class RunFinished(Event):
    type: ClassVar[str] = "run_finished"
    summary: RunSummary

    def to_json(self) -> dict[str, Any]:
        s = asdict(self.summary)
        s["mean"] = self.summary.mean
        return {"type": self.type, "summary": s}


_EVENTS: dict[str, type[Event]] = {cls.type: cls for cls in (
    RunStarted, CallStarted, Retrying, RateLimit, Response, Scored, CellFailed, Notice, BatchProgress, RunFinished)}


def from_json(data: Mapping[str, Any]) -> Event | None:
    """The event whose `to_json()` this is; None for a type this version does not know. Keys it does not
    know are left out (an evalspec that writes more can be read)."""
    cls = _EVENTS.get(str(data.get("type")))
    if cls is None:
        return None
    if cls is RunFinished:
        return RunFinished(summary_from_json(data["summary"]))
    values: dict[str, Any] = {}
    for f in fields(cls):
        if f.name in data:
            value = data[f.name]
            values[f.name] = (Cell(value["item"], value["model"]) if f.name == "cell"
                              else tuple(value) if isinstance(value, list) else value)
    return cls(**values)


def summary_from_json(data: Mapping[str, Any]) -> RunSummary:
    """The RunSummary of `RunFinished.to_json()["summary"]`."""
    known = {f.name for f in fields(RunSummary)}
    per_model = {f.name for f in fields(ModelSummary)}
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in known}
    values["models"] = tuple(ModelSummary(**{k: v for k, v in m.items() if k in per_model})
                             for m in data.get("models") or ())
    return RunSummary(**values)
