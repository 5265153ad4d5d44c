"""What a call cost: a price table shipped as data (`data/prices.json`, generated from the maintained
`genai-prices` package by scripts/update_prices.py), extendable by the user.

Prices are US dollars per million tokens, per model: `input`, `output`, optional `cached_input` (an
input token served from the provider's prompt cache) and `batch_discount` (the share the provider's
batch API takes off). A user file of the same shape (JSON or YAML; `models:` or the models at the top
level) adds models or overrides shipped ones: `evalspec run --prices FILE`, or `EVALSPEC_PRICES=FILE`.

A model is looked up by the name the provider reports having used, else the name asked for, with the
provider prefix, vendor path and release suffix (`-2024-08-06`, `-20241022`, `-latest`, `-001`)
removed. A model a host serves (Together, OpenRouter: the shipped file's `providers`) is priced by that
host when the model id names it (`openrouter:meta-llama/llama-3.1-8b-instruct`). There is no fuzzy match: a model not in the table has no price, and a cost computed from it
is None — never a guess. Weval runs and reports use the same `cost_usd`.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

PRICES_ENV = "EVALSPEC_PRICES"
_SHIPPED = Path(__file__).parent / "data" / "prices.json"
_SUFFIXES = (re.compile(r"-\d{4}-\d{2}-\d{2}$"), re.compile(r"-\d{8}$"), re.compile(r"-latest$"),
             re.compile(r"-\d{3}$"), re.compile(r"-v\d+(:\d+)?$"))
_DOTTED = re.compile(r"(?<=\d)\.(?=\d)")


@dataclass(frozen=True)
class Price:
    input: float  # USD per 1M input tokens
    output: float  # USD per 1M output tokens
    cached_input: float | None = None  # USD per 1M cached input tokens (None: charged as input)
    batch_discount: float = 0.0  # 0.5: the batch API halves the price


class PriceFileError(ValueError):
    pass


def model_key(model: str) -> str:
    """`openai:gpt-4o-2024-08-06` → `gpt-4o`; `claude-haiku-4.5` → `claude-haiku-4-5`."""
    name = model.strip().lower()
    head, sep, tail = name.partition(":")
    if sep and tail and "/" not in head and "." not in head:
        name = tail
    name = name.rsplit("/", 1)[-1]
    if name.startswith("claude"):
        name = _DOTTED.sub("-", name)
    changed = True
    while changed:
        changed = False
        for pattern in _SUFFIXES:
            stripped = pattern.sub("", name)
            if stripped != name and stripped:
                name, changed = stripped, True
    return name


def _number(value: Any, where: str, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise PriceFileError(f"{where} must be a non-negative number (got {value!r})")
    return float(value)


def parse_prices(data: Any, source: str) -> dict[str, Price]:
    """`{models: {name: {input, output, cached_input?, batch_discount?}}}` (or the models mapping itself)."""
    if not isinstance(data, Mapping):
        raise PriceFileError(f"{source}: a price file is a mapping of model names to prices")
    models = data.get("models", data) if "models" in data else data
    if not isinstance(models, Mapping):
        raise PriceFileError(f"{source}: 'models' must be a mapping of model names to prices")
    out: dict[str, Price] = {}
    for name, entry in models.items():
        where = f"{source}: models.{name}"
        if not isinstance(entry, Mapping):
            raise PriceFileError(f"{where} must be a mapping with 'input' and 'output'")
        discount = _number(entry.get("batch_discount", 0.0), f"{where}.batch_discount") or 0.0
        if discount > 1:
            raise PriceFileError(f"{where}.batch_discount is a share between 0 and 1 (got {discount})")
        out[model_key(str(name))] = Price(
            _number(entry.get("input"), f"{where}.input") or 0.0,
            _number(entry.get("output"), f"{where}.output") or 0.0,
            _number(entry.get("cached_input"), f"{where}.cached_input", optional=True), discount)
    return out


def read_price_file(path: Path) -> dict[str, Price]:
    from .file_source import MAX_READ, read_regular_bytes

    try:
        # a regular file of bounded size, opened without blocking: `--prices /dev/zero` read until memory
        # ran out, a FIFO waited for good
        data_bytes = read_regular_bytes(path, MAX_READ)
    except OSError as exc:
        raise PriceFileError(f"cannot read the price file {path}: {exc.strerror or exc}") from None
    if data_bytes is None:
        raise PriceFileError(f"the price file {path} is not a regular file of at most {MAX_READ >> 20} MB")
    try:
        text = data_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PriceFileError(f"the price file {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except (ValueError, Exception) as exc:  # yaml.YAMLError, json.JSONDecodeError
        raise PriceFileError(f"the price file {path} is not valid {path.suffix.lstrip('.').upper() or 'YAML'}: "
                             f"{exc}") from None
    return parse_prices(data, str(path))


@lru_cache(maxsize=1)
def _shipped() -> tuple[dict[str, Price], dict[str, Price]]:
    """(models by key, hosted models by `host/key`)."""
    data = json.loads(_SHIPPED.read_text(encoding="utf-8"))
    hosted: dict[str, Price] = {}
    for host, models in (data.get("providers") or {}).items():
        for key, price in parse_prices(models, f"prices.json providers.{host}").items():
            hosted[f"{host}/{key}"] = price
    return parse_prices(data, "prices.json"), hosted


class PriceTable:
    """The shipped prices, with a user's file on top."""

    def __init__(self, prices: Mapping[str, Price], hosted: Mapping[str, Price] | None = None,
                 user: Mapping[str, Price] | None = None) -> None:
        self.prices = {**prices, **(user or {})}
        self.hosted = dict(hosted or {})  # `openrouter/llama-3.1-8b-instruct` → the host's price
        self.user = frozenset(user or ())  # the user's keys win over a host's price too

    @classmethod
    def load(cls, user_file: Path | str | None = None, env: Mapping[str, str] | None = None) -> PriceTable:
        """Shipped prices + `user_file` (or $EVALSPEC_PRICES). Raises PriceFileError for a bad file."""
        models, hosted = _shipped()
        chosen = user_file or (env if env is not None else os.environ).get(PRICES_ENV) or None
        user = read_price_file(Path(chosen).expanduser()) if chosen else {}
        return cls(models, hosted, user)

    def price(self, model: str | None) -> Price | None:
        if not model:
            return None
        key = model_key(model)
        if key not in self.user and self.hosted:
            host, sep, rest = model.strip().lower().partition(":")
            if sep and rest and (found := self.hosted.get(f"{host}/{key}")) is not None:
                return found
        return self.prices.get(key)

    def cost(self, model: str | None, input_tokens: int, output_tokens: int, *, cached_input_tokens: int = 0,
             batch: bool = False) -> float | None:
        """US dollars for one call; None when the model has no price. `input_tokens` includes the
        cached ones (as providers report them)."""
        price = self.price(model)
        if price is None:
            return None
        return call_cost(price, input_tokens, output_tokens, cached_input_tokens=cached_input_tokens, batch=batch)


def call_cost(price: Price, input_tokens: int, output_tokens: int, *, cached_input_tokens: int = 0,
              batch: bool = False) -> float:
    cached = max(0, min(cached_input_tokens, input_tokens))
    cached_rate = price.input if price.cached_input is None else price.cached_input
    usd = ((input_tokens - cached) * price.input + cached * cached_rate + output_tokens * price.output) / 1_000_000
    if batch:
        usd *= 1.0 - price.batch_discount
    return usd


def missing_price_reason(models: tuple[str | None, ...]) -> str:
    named = next((m for m in models if m), None)
    what = f"model '{named}'" if named else "this target (it reports no model name)"
    return (f"no price for {what} in the price table; add it to a price file (evalspec run --prices FILE, "
            f"or {PRICES_ENV}=FILE)")
