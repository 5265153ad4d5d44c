"""Batch mode from the editor: the `run.batchModels` setting sends a run lens's calls through the batch
API (the fake batch server on 127.0.0.1), and the lenses show the results as for any run."""

from __future__ import annotations

from pathlib import Path

from ..fakebatch import KEY, FakeBatchServer
from .session import open_doc
from .test_run_lenses import RunClient, client, execute_settings, lenses, run_to_end, titles  # noqa: F401


async def test_batch_models_setting_batches_the_lens_run(client: RunClient, tmp_path: Path):  # noqa: F811
    with FakeBatchServer() as fake:
        text = ("title: Batch\nmodels:\n"
                f"  - id: local:fake\n    url: {fake.url('/v1')}\n    modelName: fake-1\n    inherit: openai\n"
                f"    headers:\n      Authorization: Bearer {KEY}\n"
                "---\n- id: greet\n  prompt: Say hello\n  should:\n    - $contains: hello\n"
                "- id: count\n  prompt: Count to three\n  should:\n    - $contains: four\n")
        await execute_settings(client, {"run": {"output": "results", "cache": False, "batchModels": ["local:*"]}})
        uri = open_doc(client, tmp_path / "batch.weval.yml", text)
        done = await run_to_end(client, uri)
        assert done["interrupted"] is False
        assert fake.creations == 1 and fake.chat_calls == 0
        assert sorted(len(b.items) for b in fake.batches.values()) == [2]
        found = titles(await lenses(client, uri))
        assert found[9] == ["▶ Run", "✓ 1.00 local:fake[temp:0]"]
        assert found[13] == ["▶ Run", "✗ 0.00 local:fake[temp:0]"]
