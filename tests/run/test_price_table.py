"""The shipped price table (generated from genai-prices by scripts/update_prices.py) and its lookups:
every provider evalspec calls has prices, a hosted model is priced by its host, the user's file wins,
and a model with no price is an explicit "unknown" in the dry run (issue 30, item 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.cli import main
from evalspec.pricing import PriceTable, parse_prices
from evalspec.providers.catalog import PROVIDERS

from .conftest import write

SHIPPED = json.loads((Path(__file__).resolve().parents[2] / "engine" / "data" / "prices.json").read_text())


@pytest.mark.parametrize("model", [
    "openai:gpt-4o-mini", "anthropic:claude-haiku-4.5", "google:gemini-2.5-flash", "mistral:mistral-large-latest",
    "together:meta-llama/Llama-3.3-70B-Instruct-Turbo", "xai:grok-4", "openrouter:meta-llama/llama-3.1-8b-instruct",
    "openrouter:qwen/qwen3-235b-a22b"])
def test_each_provider_we_call_has_prices(model: str) -> None:
    price = PriceTable.load(None, {}).price(model)
    assert price is not None and price.input > 0 and price.output > 0
    assert model.split(":")[0] in PROVIDERS


def test_the_table_comes_from_the_maintained_source() -> None:
    assert SHIPPED["source"].startswith("genai-prices ")
    assert set(SHIPPED["providers"]) == {"together", "openrouter"} and len(SHIPPED["models"]) > 200


def test_the_shipped_table_read_at_lookup_is_the_whole_file_parsed() -> None:
    # A run parses only the entries it looks up (pricing._Entries): every entry of the file is valid, and
    # looked up one by one the table gives what parsing the whole file gives.
    table = PriceTable.load(None, {})
    models = parse_prices(SHIPPED, "prices.json")
    hosted = {f"{host}/{key}": price for host, entries in SHIPPED["providers"].items()
              for key, price in parse_prices(entries, host).items()}
    assert {key: table.prices[key] for key in models} == models and len(table.prices) == len(models)
    assert {key: table.hosted[key] for key in hosted} == hosted and dict(table.hosted) == hosted
    assert table.price("openai:gpt-4o-2024-08-06") == models["gpt-4o"]
    assert table.price("openrouter:meta-llama/llama-3.1-8b-instruct") == hosted["openrouter/llama-3.1-8b-instruct"]
    assert table.price("together:gpt-4o") == models["gpt-4o"]  # not a model the host serves: the shipped price
    assert table.price("no-such-model") is None and "no-such-model" not in table.prices


def test_a_host_prices_the_models_it_serves_and_the_users_file_wins(tmp_path: Path) -> None:
    table = PriceTable.load(None, {})
    hosted = SHIPPED["providers"]["openrouter"]["llama-3.1-8b-instruct"]
    assert table.price("openrouter:meta-llama/llama-3.1-8b-instruct").input == hosted["input"]  # type: ignore[union-attr]
    assert table.price("meta-llama/llama-3.1-8b-instruct") is None  # no host named: no guess
    user = write(tmp_path / "prices.yml", "models:\n  llama-3.1-8b-instruct: {input: 9, output: 9}\n")
    assert PriceTable.load(user, {}).price("openrouter:meta-llama/llama-3.1-8b-instruct").input == 9  # type: ignore[union-attr]


def test_a_model_without_a_price_is_an_explicit_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    bp = write(tmp_path / "u.weval.yml", "title: u\nmodels: [openai:no-such-model-xyz]\n---\n- id: a\n  prompt: hi\n"
                                         "  should:\n    - $contains: hi\n")
    main(["run", str(bp), "--dry-run"])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("  answers") and "no-such-model-xyz" in line)
    assert "unknown" in row
