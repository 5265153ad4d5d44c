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
from collections.abc import Iterator, Mapping
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
    return {model_key(str(name)): _price(name, entry, source) for name, entry in _models_of(data, source).items()}


def _models_of(data: Any, source: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise PriceFileError(f"{source}: a price file is a mapping of model names to prices")
    models = data.get("models", data) if "models" in data else data
    if not isinstance(models, Mapping):
        raise PriceFileError(f"{source}: 'models' must be a mapping of model names to prices")
    return models


def _price(name: Any, entry: Any, source: str) -> Price:
    where = f"{source}: models.{name}"
    if not isinstance(entry, Mapping):
        raise PriceFileError(f"{where} must be a mapping with 'input' and 'output'")
    discount = _number(entry.get("batch_discount", 0.0), f"{where}.batch_discount") or 0.0
    if discount > 1:
        raise PriceFileError(f"{where}.batch_discount is a share between 0 and 1 (got {discount})")
    return Price(
        _number(entry.get("input"), f"{where}.input") or 0.0,
        _number(entry.get("output"), f"{where}.output") or 0.0,
        _number(entry.get("cached_input"), f"{where}.cached_input", optional=True), discount)


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


class _Entries(Mapping[str, Price]):
    """A price file's models by their keys (parse_prices'), each entry made a Price at its first lookup: a
    run looks up the few models it calls, and making every shipped entry a Price was ~4 ms of each start."""

    def __init__(self, models: Mapping[str, Any], source: str) -> None:
        self._source = source
        self._raw = {model_key(str(name)): (name, entry) for name, entry in models.items()}  # the last name wins
        self._made: dict[str, Price] = {}

    def __getitem__(self, key: str) -> Price:
        found = self._made.get(key)
        if found is None:
            name, entry = self._raw[key]
            found = self._made[key] = _price(name, entry, self._source)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


class _Hosted(Mapping[str, Price]):
    """The shipped hosts' models by `host/key`, a host's models keyed at the first lookup through it."""

    def __init__(self, hosts: Mapping[str, Any]) -> None:
        self._hosts = hosts
        self._keyed: dict[str, _Entries] = {}

    def _host(self, host: str) -> _Entries:
        found = self._keyed.get(host)
        if found is None:
            source = f"prices.json providers.{host}"
            found = self._keyed[host] = _Entries(_models_of(self._hosts[host], source), source)
        return found

    def __getitem__(self, key: str) -> Price:
        host, _, model = key.rpartition("/")
        if host not in self._hosts:
            raise KeyError(key)
        return self._host(host)[model]

    def __iter__(self) -> Iterator[str]:
        return (f"{host}/{key}" for host in self._hosts for key in self._host(host))

    def __len__(self) -> int:
        return sum(len(self._host(host)) for host in self._hosts)

    def __bool__(self) -> bool:
        return bool(self._hosts)


@lru_cache(maxsize=1)
def _shipped() -> tuple[Mapping[str, Price], Mapping[str, Price]]:
    """(models by key, hosted models by `host/key`), each entry parsed at its first lookup."""
    data = json.loads(_SHIPPED.read_text(encoding="utf-8"))
    return _Entries(_models_of(data, "prices.json"), "prices.json"), _Hosted(data.get("providers") or {})


class PriceTable:
    """The shipped prices, with a user's file on top."""

    def __init__(self, prices: Mapping[str, Price], hosted: Mapping[str, Price] | None = None,
                 user: Mapping[str, Price] | None = None) -> None:
        self.prices = prices  # the shipped table (its entries parsed as they are looked up)
        self.hosted = hosted or {}  # `openrouter/llama-3.1-8b-instruct` → the host's price
        self.user = dict(user or {})  # the user's file: wins over the shipped table and a host's price

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
        found = self.user.get(key)
        return found if found is not None else self.prices.get(key)

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
