"""A run's real tokens and cost per role and model, for the report, from whatever the results keep.

A run writes them in the cost file beside its results (run/cost/cost_file.py: what it paid, batch discounts
included); without one, a Weval comparison file of an earlier evalspec carries them in `evalspecCost`, a
journal in its `usage` records, AgentV rows in `token_usage` / `cost_usd` (the target) and
`judge_token_usage` / `judge_cost_usd` (its judges; at the interactive price). A cost that is not known
stays None ("unknown"), never 0.

The shape, for the writers: {"lines": [{role, model, via, calls, input_tokens, output_tokens, usd}],
"usd": the priced total, "unpriced": [names], "stopped": why cells were not run (a cost cap) or None}.
`via` is "interactive" or "batch" (answers a provider's batch API gave, at its price).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..run.journal.records import Usage

_NUMBERS = (int, float)
COST_MAX_BYTES = 16 << 20  # a cost file is a line per role and model: a few KB


def _int(value: Any) -> int:
    return int(value) if type(value) in _NUMBERS else 0


def _usd(value: Any) -> float | None:
    return float(value) if type(value) in _NUMBERS else None


def from_comparison(data: Any) -> dict[str, Any] | None:
    """`evalspecCost` of a comparison file, checked field by field (the file is untrusted)."""
    if not isinstance(data, dict) or not isinstance(data.get("lines"), list):
        return None
    lines = []
    for x in data["lines"]:
        if not isinstance(x, dict):
            continue
        lines.append({"role": str(x.get("role") or ""), "model": str(x.get("model") or ""),
                      "via": "batch" if x.get("via") == "batch" else "interactive", "calls": _int(x.get("calls")), "input_tokens": _int(x.get("input_tokens")),
                      "output_tokens": _int(x.get("output_tokens")), "usd": _usd(x.get("usd"))})
    unpriced = [str(u) for u in data.get("unpriced") or [] if isinstance(u, str)]
    stopped = data.get("stopped")
    return {"lines": lines, "usd": sum(x["usd"] for x in lines if x["usd"] is not None), "unpriced": unpriced,
            "stopped": str(stopped) if isinstance(stopped, str) else None}


def beside(results: Path) -> dict[str, Any] | None:
    """The cost file of a results file or artefact folder (run/cost/cost_file.py), checked; None when there
    is none or it cannot be read (the caller falls back on what the results themselves carry)."""
    from ..jsonio import loads
    from ..own_files import open_own
    from ..run.cost.cost_file import cost_path

    # Found by its name beside results that may be someone else's (a cloned results folder, the editor's
    # "show results"): read as an own file, never through a link nor from a FIFO (which held the report,
    # and a thread of the language server for good) or a device (/dev/zero: read until memory ran out).
    try:
        with os.fdopen(open_own(cost_path(results), os.O_RDONLY), "rb") as f:
            raw = f.read(COST_MAX_BYTES + 1)
        data = loads(raw) if len(raw) <= COST_MAX_BYTES else None
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("evalspec_cost") != 1:
        return None
    return from_comparison(data)


def from_usage_records(records: Iterable[Usage]) -> dict[str, Any] | None:
    """A journal's `usage` records (one a call) summed per role and model."""
    from ..pricing import PriceTable
    from ..run.cost.spend import Spend

    spend = Spend(PriceTable({}))
    spend.restore(records)
    if not spend.lines:
        return None
    return from_comparison(spend.to_json())


def from_rows(rows: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """AgentV rows summed per target: its answers and its judges' calls, each a line."""
    lines: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        target = str(row.get("target") or "")
        for role, usage_key, cost_key in (("answers", "token_usage", "cost_usd"),
                                          ("judge", "judge_token_usage", "judge_cost_usd")):
            usage = row.get(usage_key)
            if not isinstance(usage, dict):
                continue
            inp, out = _int(usage.get("input")), _int(usage.get("output"))
            if role == "answers" and not (inp or out) and row.get("error"):
                continue  # no call was answered (an error, a cell not run)
            name = target if role == "answers" else str(row.get("judge_target") or f"judge of {target}")
            line = lines.setdefault((role, name), {"role": role, "model": name, "via": "interactive", "calls": 0,
                                                   "input_tokens": 0,
                                                   "output_tokens": 0, "usd": 0.0})
            line["calls"] += 1 if role == "answers" else _int(usage.get("calls")) or 1
            line["input_tokens"] += inp
            line["output_tokens"] += out
            cost = _usd(row.get(cost_key))
            line["usd"] = None if cost is None or line["usd"] is None else line["usd"] + cost
    if not lines:
        return None
    out_lines = list(lines.values())
    return {"lines": out_lines, "usd": sum(x["usd"] for x in out_lines if x["usd"] is not None),
            "unpriced": [x["model"] for x in out_lines if x["usd"] is None], "stopped": None}


def with_answer_costs(stats: list[Any], costs: dict[str, Any] | None) -> list[Any]:
    """Each model's summary with its answers' cost from the cost table when its cells carry none (a Weval
    run's cells have tokens, not dollars): the table's "answers" lines of that model (`openai:x` for the
    effective models `openai:x[temp:0]`…). A line shared by several effective models (two temperatures
    of one model) is not split: their cost stays unknown there, the table has it."""
    import re

    if not costs or not costs.get("lines"):
        return stats
    base = {s.model: re.sub(r"(\[[^\]]*\])+$", "", s.model) for s in stats}
    sharing: dict[str, int] = {}
    for b in base.values():
        sharing[b] = sharing.get(b, 0) + 1
    for s in stats:
        if s.cost_known and not s.cost_missing:
            continue
        lines = [x for x in costs["lines"] if x.get("role") == "answers" and x.get("model") in (s.model, base[s.model])]
        if not lines or (sharing[base[s.model]] > 1 and not any(x.get("model") == s.model for x in lines)):
            continue
        usd = [x.get("usd") for x in lines]
        if any(u is None for u in usd):
            continue
        s.cost_usd, s.cost_known, s.cost_missing = float(sum(usd)), True, False
    return stats


def usd_text(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:,.2f}" if value >= 1 else f"${value:.6f}"


def total_text(costs: dict[str, Any]) -> str:
    unpriced = costs.get("unpriced") or []
    total = usd_text(float(costs.get("usd") or 0.0))
    if unpriced and not costs.get("usd"):  # nothing priced: "at least $0.000000" would say nothing
        return f"unknown (no price for {', '.join(unpriced)})"
    return f"at least {total} + unknown for {', '.join(unpriced)}" if unpriced else total
