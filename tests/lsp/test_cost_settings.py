"""The run lenses' cost and patience settings over the protocol: `run.maxCost` (`--max-cost`) and
`run.maxWaitSeconds` (`--max-wait`), against a fake provider on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..fakeprovider import FakeProvider, Reply
from .session import open_doc
from .test_run_lenses import BLUEPRINT, RunClient, client, execute_settings, run_to_end  # noqa: F401


def _blueprint(fake: FakeProvider) -> str:
    # A custom model named after a priced one: the price table knows what its calls cost.
    return BLUEPRINT.replace("  - openai:gpt-4o-mini\n", f"  - id: local:fake\n    url: {fake.url('/v1')}\n"
                             "    modelName: gpt-4o-mini\n    inherit: openai\n")


def _comparison(folder: Path) -> dict[str, Any]:
    files = sorted(folder.rglob("*_comparison.json"))
    assert files, f"no comparison file under {folder}"
    return json.loads(files[-1].read_text(encoding="utf-8"))


async def test_max_cost_setting_caps_a_lens_run(client: RunClient, tmp_path: Path):  # noqa: F811
    with FakeProvider() as fake:
        fake.answer = "hello"
        # A cap below one call's estimate: nothing starts, and each cell says why.
        await execute_settings(client, {"run": {"output": "capped", "cache": False, "maxCost": 0.000001}})
        text = _blueprint(fake)
        uri = open_doc(client, tmp_path / "cap.weval.yml", text)
        done = await run_to_end(client, uri)
        assert done["interrupted"] is False
        assert fake.requests == []
        errors = _comparison(tmp_path / "capped")["errors"]
        assert set(errors) == {"greet", "count"}
        assert all(m.startswith("not run: --max-cost $0.000001 reached") for row in errors.values() for m in row.values())
        # A cap the run fits in: it runs, and the cost file says what it paid.
        await execute_settings(client, {"run": {"output": "room", "cache": False, "maxCost": 5}})
        await run_to_end(client, uri)
        assert len(fake.requests) == 2 and "errors" not in _comparison(tmp_path / "room")
        cost = json.loads(next((tmp_path / "room").rglob("*_cost.json")).read_bytes())
        assert cost["caps"] == {"--max-cost": 5.0} and cost["usd"] > 0


async def test_max_wait_setting_bounds_the_back_off(client: RunClient, tmp_path: Path):  # noqa: F811
    with FakeProvider() as fake:
        fake.answer = "hello"
        fake.then(*[Reply.rate_limited(30) for _ in range(4)])  # each prompt's first call: 429, retry in 30 s
        await execute_settings(client, {"run": {"output": "results", "cache": False, "maxWaitSeconds": 1}})
        uri = open_doc(client, tmp_path / "wait.weval.yml", _blueprint(fake))
        done = await run_to_end(client, uri)  # within the hang guard: a 30 s wait is not taken
        assert done["interrupted"] is False
        assert len(fake.requests) == 2  # no retry: waiting 30 s would pass the 1 s the setting allows
        errors = _comparison(tmp_path / "results")["errors"]
        assert set(errors) == {"greet", "count"}
        assert all("the limit of 1 s of waiting per call" in m for row in errors.values() for m in row.values())
