"""The cost file: what a run paid, beside its results (`<runLabel>_<time>_cost.json`).

The results files say what was asked, answered and scored; they are the same bytes however the calls
were sent. What the run paid is not: a batch API answers the same request at a discount. So the real
tokens and US dollars per role, model and way of sending (cost/spend.py's lines: `via` "interactive" or
"batch") go in this file beside the results, which the report and `evalspec merge` read with them:

    {"evalspec_cost": 1, "results": "<the results file's name>", "currency": "USD",
     "lines": [{role, model, via, priced_as, calls, cached, input_tokens, output_tokens, usd}],
     "input_tokens": n, "output_tokens": n, "usd": priced total, "unpriced": [names],
     "caps"?: {name: usd}, "stopped"?: why cells were not run, "not_run"?: n}

A `usd` of null is an unknown price (never 0). Earlier versions of evalspec wrote the same object inside
the comparison file as `evalspecCost`; readers still take it from there when no cost file exists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..write.files import write_json

VERSION = 1
SUFFIX = "_cost.json"


def cost_path(results: Path) -> Path:
    """The cost file of a results file or artefact folder: `x_comparison.json`, `x/` (the artefact
    folder of the same run) and `x.jsonl` → `x_cost.json`."""
    name = results.name
    for ending in ("_comparison.json", ".jsonl"):
        if name.endswith(ending):
            return results.with_name(name[: -len(ending)] + SUFFIX)
    return results.with_name(name + SUFFIX)


def write_cost(results: Path, cost: dict[str, Any] | None) -> Path | None:
    """Write the cost file of `results` (nothing when the run has no cost summary); its path."""
    if cost is None:
        return None
    path = cost_path(results)
    write_json(path, {"evalspec_cost": VERSION, "results": results.name, **cost}, pretty=True)
    return path

