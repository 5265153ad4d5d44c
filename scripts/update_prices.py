#!/usr/bin/env python3
"""Regenerate engine/data/prices.json from the `genai-prices` package (pydantic's maintained price data).

    pip install genai-prices && python scripts/update_prices.py

genai-prices is not a runtime dependency: it imports pydantic and a 1.6 MB data module (60-100 ms of
every start, ARCHITECTURE.md), so evalspec ships its prices as JSON, regenerated here. For each provider
evalspec calls (providers/catalog.py), each model's price in force today: the latest price whose start
date has passed (time-of-day discounts left out), a tiered price's base tier, `cache_read_mtok` as
`cached_input`. First-party models (OpenAI, Anthropic, Google, Mistral, xAI) are keyed by their bare name
(pricing.model_key); models hosted by Together and OpenRouter under `providers.<name>`, used when the
model id names that provider. Batch discounts are the providers' published ones (genai-prices has none).
"""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

FIRST_PARTY = {"openai": "openai", "anthropic": "anthropic", "google": "google", "mistral": "mistral", "x-ai": "xai"}
HOSTS = {"together": "together", "openrouter": "openrouter"}
BATCH_DISCOUNT = {"openai": 0.5, "anthropic": 0.5, "google": 0.5}  # their batch APIs halve the price


def _today_price(prices: Any, today: datetime.date) -> Any:
    from genai_prices import types

    if isinstance(prices, types.ModelPrice):
        return prices
    chosen = None
    for conditional in prices:
        constraint = conditional.constraint
        if constraint is None:
            chosen = chosen or conditional.prices
        elif isinstance(constraint, types.StartDateConstraint) and constraint.start_date <= today:
            chosen = conditional.prices
    return chosen


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, Decimal):
        return float(value)
    base = getattr(value, "base", None)  # TieredPrices: the first tier
    return float(base) if base is not None else None


def equal_names(clause: Any) -> list[str]:
    """The exact names a model's match clause accepts (`grok-4` for `grok-4-0709`): more keys for it."""
    equals = getattr(clause, "equals", None)
    if isinstance(equals, str):
        return [equals]
    return [n for c in getattr(clause, "or_", None) or [] for n in equal_names(c)]


def entry(price: Any, discount: float) -> dict[str, Any] | None:
    inp, out = _number(price.input_mtok), _number(price.output_mtok)
    if inp is None:  # priced per request, per image, … : not a token price
        return None
    out = out or 0.0  # an embedding model: input tokens only
    got: dict[str, Any] = {"input": inp, "output": out}
    cached = _number(getattr(price, "cache_read_mtok", None))
    if cached is not None:
        got["cached_input"] = cached
    if discount:
        got["batch_discount"] = discount
    return got


def _dump(out: dict[str, Any]) -> str:
    """One model a line (the file is read by people too, and diffs stay a line per changed price)."""
    def table(models: dict[str, Any], indent: str) -> str:
        return "{\n" + ",\n".join(f"{indent}  {json.dumps(k)}: {json.dumps(v)}" for k, v in models.items()) + f"\n{indent}}}"

    head = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in out.items()
                      if k not in ("models", "providers"))
    hosts = ",\n".join(f"    {json.dumps(h)}: {table(t, '    ')}" for h, t in out["providers"].items())
    return f"{{\n{head},\n  \"models\": {table(out['models'], '  ')},\n  \"providers\": {{\n{hosts}\n  }}\n}}\n"


def main() -> None:
    from importlib.metadata import version

    from genai_prices import data

    from evalspec.pricing import model_key

    today = datetime.date.today()
    models: dict[str, Any] = {}
    providers: dict[str, dict[str, Any]] = {name: {} for name in HOSTS.values()}
    aliases: list[tuple[dict[str, Any], list[str], dict[str, Any]]] = []
    for provider in data.providers:
        ours = FIRST_PARTY.get(provider.id) or HOSTS.get(provider.id)
        if ours is None:
            continue
        # A model whose id is its key first: `gpt-4o` before `gpt-4o-2024-05-13` (another price, the same key).
        for m in sorted(provider.models, key=lambda m: model_key(m.id) != m.id.lower()):
            price = _today_price(m.prices, today)
            got = entry(price, BATCH_DISCOUNT.get(ours, 0.0)) if price is not None else None
            if got is None:
                continue
            table = models if provider.id in FIRST_PARTY else providers[ours]
            key = model_key(m.id)
            if key == m.id.lower().rsplit("/", 1)[-1] or any(ch.isdigit() for ch in key):  # not `claude-v1` → `claude`
                table.setdefault(key, got)
            aliases.append((table, [model_key(n) for n in equal_names(m.match)], got))
    for table, keys, got in aliases:  # after every model's own id: an alias never displaces an id
        for key in keys:
            # An alias that pricing.model_key cuts to a bare word (`claude-v2` → `claude`, `chat-latest` →
            # `chat`) would price whatever model is called that: left out.
            if any(ch.isdigit() for ch in key):
                table.setdefault(key, got)
    # What the hand-kept table had that genai-prices does not (offline models, older names): kept.
    path = ROOT / "engine" / "data" / "prices.json"
    kept = {k: v for k, v in json.loads(path.read_text(encoding="utf-8")).get("models", {}).items() if k not in models}
    models.update(kept)
    out = {
        "about": "List prices in US dollars per million tokens, generated by scripts/update_prices.py from the "
                 f"genai-prices package {version('genai-prices')} on {today.isoformat()} (the price in force that "
                 "day; a tiered price's first tier). `cached_input`: an input token served from the prompt cache; "
                 "`batch_discount`: the share the provider's batch API takes off. `providers`: models priced by the "
                 "host that serves them (Together, OpenRouter), used when the model id names that host. Extend or "
                 "override with a file of the same shape: `evalspec run --prices FILE` or EVALSPEC_PRICES=FILE.",
        "unit": "USD per 1M tokens",
        "source": f"genai-prices {version('genai-prices')}",
        "kept": sorted(kept),
        "models": dict(sorted(models.items())),
        "providers": {name: dict(sorted(table.items())) for name, table in providers.items()},
    }
    path.write_text(_dump(out), encoding="utf-8")
    print(f"wrote {path}: {len(models)} first-party models, "
          + ", ".join(f"{n} {len(t)}" for n, t in out["providers"].items()) + f"; kept {len(kept)} hand-kept")


if __name__ == "__main__":
    main()
