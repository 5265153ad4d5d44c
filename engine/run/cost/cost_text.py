"""Costs as the console shows them: the dry run's estimate and the real spend, per role and model.

An unknown price prints as `unknown`, never `$0`; a total over lines some of which are unknown reads
"at least $X + unknown for A, B", and with nothing priced "unknown (no price for A, B)" (not "at least $0").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def usd(value: float | None) -> str:
    """US dollars: cents for $1 and more, six decimals below (a cheap run's figures stay visible)."""
    if value is None:
        return "unknown"
    return f"${value:,.2f}" if value >= 1 else f"${value:.6f}"


def total_text(total: float, unpriced: Sequence[str], *, at_least: bool = False) -> str:
    if unpriced and not total:
        return f"unknown (no price for {', '.join(unpriced)})"
    if unpriced:
        return f"at least {usd(total)} + unknown for {', '.join(unpriced)}"
    return f"{'at least ' if at_least else ''}{usd(total)}"


def _table(headers: tuple[str, ...], rows: Sequence[tuple[str, ...]], left: int = 2) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(widths[i]) if i < left else c.rjust(widths[i]) for i, c in enumerate(cells)).rstrip()

    return [line(headers), *(line(r) for r in rows)]


def estimate_lines(est: Mapping[str, Any]) -> list[str]:
    """The `--dry-run` cost table (cost_estimate.Estimate.to_json())."""
    rows = [(str(x["role"]), str(x["model"]), f"{x['calls']:,}", f"{x['input_tokens']:,}",
             f"{x['output_tokens']:,}", usd(x["usd"]), usd(x["batch_usd"])) for x in est.get("lines") or []]
    out = ["estimated tokens and cost (outputs counted at max_tokens; the rule is in the docs, guide/costs.md):"]
    out += ["  " + r for r in _table(("role", "model", "calls", "input tokens", "output tokens", "interactive",
                                      "batch"), rows)]
    unpriced = list(est.get("unpriced") or [])
    at_least = bool(est.get("notes"))
    out.append(f"estimated total: {est.get('input_tokens', 0):,} input + {est.get('output_tokens', 0):,} output tokens; "
               f"interactive {total_text(float(est.get('usd') or 0.0), unpriced, at_least=at_least)}; "
               f"batch {total_text(float(est.get('batch_usd') or 0.0), unpriced, at_least=at_least)}")
    for x in est.get("lines") or []:
        if x.get("batch_interactive_calls"):
            out.append(f"in batch mode {x['batch_interactive_calls']:,} of the {x['calls']:,} {x['role']} call(s) of "
                       f"{x['model']} are made one by one (the batch column counts them at the interactive price)")
    if unpriced:
        out.append(f"no price for {', '.join(unpriced)}: add them to a price file (--prices FILE or $EVALSPEC_PRICES)")
    out += [f"not in the estimate: {n}" for n in est.get("notes") or []]
    cap = est.get("max_cost")
    if cap:
        if cap.get("refused"):
            out.append(f"--max-cost {usd(cap['usd'])}: the run would not start ({cap['refused']})")
        elif cap["cells_within"] >= cap["cells"]:
            out.append(f"--max-cost {usd(cap['usd'])}: every cell fits the estimate")
        else:
            out.append(f"--max-cost {usd(cap['usd'])}: the first {cap['cells_within']:,} of {cap['cells']:,} cell(s) "
                       "fit the estimate and start; the rest start only as far as cells finish under their "
                       "estimates")
    return out


def spend_lines(spend: Mapping[str, Any]) -> list[str]:
    """The run summary's real tokens and cost (spend.Spend.to_json())."""
    lines = spend.get("lines") or []
    if not lines:
        return []
    # The way the calls were sent, when some went through a batch API (at its price).
    via = any(x.get("via") == "batch" for x in lines)
    rows = [(str(x["role"]), str(x["model"]), *((str(x.get("via") or "interactive"),) if via else ()),
             f"{x['calls']:,}", f"{x['input_tokens']:,}", f"{x['output_tokens']:,}", usd(x.get("usd"))) for x in lines]
    out = ["tokens and cost:"]
    heads = ("role", "model", *(("sent",) if via else ()), "calls", "input tokens", "output tokens", "cost")
    out += ["  " + r for r in _table(heads, rows, left=3 if via else 2)]
    unpriced = list(spend.get("unpriced") or [])
    out.append(f"total cost: {total_text(float(spend.get('usd') or 0.0), unpriced)}")
    return out
