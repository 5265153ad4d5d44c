"""What a run really spent: tokens and US dollars per role and model, from the providers' own usage.

Every chat call of a run goes through `Calls.chat`, which hands its result here. Tokens are what the
provider reported; the price is looked up by the model the provider says answered, else the model
asked for (pricing.py). A model with no price has an unknown cost (None), never zero. Answers served
from the response cache cost nothing and are counted apart.

Each call's usage is also written to the run's journal (a `Usage` record, journal/records.py), so a resumed run's
totals (and `--max-cost`) include what the earlier attempts spent; a call the cache answered is too (`cached`: no
tokens, no cost), so every export of the run counts all of them, whichever process made them.

A line is one role, model and way of sending (`via`: "interactive", or "batch" for answers a provider's batch
API gave, at its discount). This is what the run paid, and it is written apart from the results, in the
cost file beside them (cost/cost_file.py): the results of a batch run are those of an interactive run byte for
byte. What a results file says a call cost (an AgentV row's `cost_usd`, `judge_cost_usd`) is its cost at
the model's interactive price, so a result, and a `cost` assertion on it, do not depend on the mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ...pricing import Price, PriceTable, call_cost
from ..events import Cell
from ..journal.records import Usage

ROLES = {"generate": "answers", "judge": "judge", "extract": "key points", "embed": "embeddings"}
_ROLE_RANK = {role: n for n, role in enumerate(ROLES.values())}


def line_order(role: str, model: str, via: str = "interactive") -> tuple[int, str, str, int]:
    return (_ROLE_RANK.get(role, len(_ROLE_RANK)), role, model, via != "interactive")


@dataclass
class SpendLine:
    role: str
    model: str  # as shown: the model id, target name or judge label
    via: str = "interactive"  # or "batch": answered through a provider's batch API
    priced_as: str | None = None  # the model name the price was looked up by
    calls: int = 0
    cached: int = 0  # answers from the response cache (not billed)
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0
    unpriced_calls: int = 0  # calls whose model has no price: the line's cost is unknown

    @property
    def cost(self) -> float | None:
        return None if self.unpriced_calls else self.usd

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "model": self.model, "via": self.via, "priced_as": self.priced_as, "calls": self.calls,
                "cached": self.cached, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "usd": self.cost}


class Spend:
    def __init__(self, prices: PriceTable, *, per_cell: bool = False) -> None:
        self.prices = prices
        self.lines: dict[tuple[str, str, str], SpendLine] = {}
        # Judge calls per cell, for AgentV rows: [calls, in, out, usd at the interactive price | None].
        # Kept only when asked (`per_cell`: an AgentV run): no Weval result names them, and a judged
        # 100,000-prompt blueprint's 200,000 cells held ~40 MB of them.
        self.per_cell = per_cell
        self.by_cell: dict[Cell, list[Any]] = {}
        self._price: dict[tuple[str | None, ...], tuple[Price | None, str | None]] = {}
        # Names to price a label's calls by when the request names no model (AgentV targets.yaml targets).
        self.hints: dict[str, tuple[str | None, ...]] = {}
        self.sink: Callable[[Usage], None] | None = None  # the journal's writer
        self.on_cost: Callable[[Cell, float], None] | None = None  # the budget's (cost/budget.py)

    def price_of(self, *names: str | None) -> tuple[Price | None, str | None]:
        key = names
        got = self._price.get(key)
        if got is None:
            found = next(((p, n) for n in names if n and (p := self.prices.price(n)) is not None), None)
            got = self._price[key] = found if found is not None else (None, next((n for n in names if n), None))
        return got

    def record(self, purpose: str, label: str, cell: Cell, *, model: str | None, reported: str | None,
               input_tokens: int | None, output_tokens: int, cached: bool = False,
               batched: bool = False) -> float | None:
        """One call's usage; its cost (None: no price). `model`: the model asked for; `reported`: the
        model the provider says answered; `batched`: answered through a batch API (its discount applies).
        `input_tokens` None: the answer reported no usage, so the call's cost is unknown too."""
        role = ROLES.get(purpose, purpose)
        if cached:
            self._line(role, label, "interactive", None).cached += 1
            if self.sink is not None:  # kept, so that every later export of the run counts it
                self.sink(Usage(cell, role, label, None, (0, 0), 0.0, cached=True))
            return 0.0
        price, named = self.price_of(reported, model or None, *self.hints.get(label, ()))
        if input_tokens is None:
            price, input_tokens = None, 0
        usd = call_cost(price, input_tokens, output_tokens, batch=batched) if price is not None else None
        listed = call_cost(price, input_tokens, output_tokens) if price is not None else None
        self._add(role, label, named, cell, 1, input_tokens, output_tokens, usd, batched=batched, listed=listed)
        if self.sink is not None:
            self.sink(Usage(cell, role, label, named, (input_tokens, output_tokens), usd, batched))
        if usd is not None and self.on_cost is not None:
            self.on_cost(cell, usd)
        return usd

    def _line(self, role: str, label: str, via: str, named: str | None) -> SpendLine:
        line = self.lines.get((role, label, via))
        if line is None:
            line = self.lines[(role, label, via)] = SpendLine(role, label, via, named)
        elif line.priced_as is None:
            line.priced_as = named
        return line

    def _add(self, role: str, label: str, named: str | None, cell: Cell, calls: int, inp: int, out: int,
             usd: float | None, *, batched: bool = False, listed: float | None = None, by_cell: bool = True) -> None:
        line = self._line(role, label, "batch" if batched else "interactive", named)
        line.calls += calls
        line.input_tokens += inp
        line.output_tokens += out
        if usd is None:
            line.unpriced_calls += calls
        else:
            line.usd += usd
        if role == "judge" and self.per_cell and by_cell:
            per = self.by_cell.setdefault(cell, [0, 0, 0, 0.0])
            per[0] += calls
            per[1] += inp
            per[2] += out
            per[3] = None if listed is None or per[3] is None else per[3] + listed

    def restore(self, records: Iterable[Usage], *, cells: bool = True) -> int:
        """The usage an earlier attempt of this run journaled (`--resume`), or another process of it made
        (run/split.py; `cells` False: not kept per cell, its rows have them); how many records."""
        n = 0
        for rec in records:
            n += 1
            if rec.cached:
                self._line(rec.role, rec.model, "interactive", None).cached += 1
                continue
            listed = rec.usd
            if rec.batched and rec.usd is not None:  # the row's figure is the interactive price
                price, _ = self.price_of(rec.priced_as)
                listed = call_cost(price, *rec.usage) if price is not None else None
            self._add(rec.role, rec.model, rec.priced_as, rec.cell, 1, rec.usage[0], rec.usage[1], rec.usd,
                      batched=rec.batched, listed=listed, by_cell=cells)
        return n

    def take_judge_usage(self, cell: Cell) -> dict[str, Any] | None:
        """A cell's judge calls, for its AgentV row: {calls, input, output, cost_usd}; forgotten once
        taken (the row is made once, and 100,000 judged cells' counts held to the end were ~15 MB)."""
        per = self.by_cell.pop(cell, None)
        if per is None:
            return None
        return {"calls": per[0], "input": per[1], "output": per[2], "cost_usd": per[3]}

    @property
    def total(self) -> float:
        """US dollars of the priced calls (the unpriced are listed by `unpriced`)."""
        return sum(line.usd for line in self.lines.values())

    def ordered(self) -> list[SpendLine]:
        """The lines by role (answers, judge, key points, embeddings), then model: the same run writes
        the same file, whichever call happened to finish first (and `evalspec merge` of its shards)."""
        return sorted(self.lines.values(), key=lambda line: line_order(line.role, line.model, line.via))

    @property
    def unpriced(self) -> list[str]:
        return list(dict.fromkeys(line.priced_as or line.model for line in self.ordered() if line.unpriced_calls))

    def to_json(self) -> dict[str, Any]:
        return {"currency": "USD", "lines": [line.to_json() for line in self.ordered()],
                "input_tokens": sum(line.input_tokens for line in self.lines.values()),
                "output_tokens": sum(line.output_tokens for line in self.lines.values()),
                "usd": self.total, "unpriced": self.unpriced}
