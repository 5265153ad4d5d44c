"""bench/provider_throughput.py still runs end to end (a handful of calls; no timing is asserted)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from fakeprovider import FakeProvider

BENCH = Path(__file__).resolve().parents[2] / "bench" / "provider_throughput.py"


def test_bench_runs_against_any_openai_compatible_server(fake: FakeProvider, capsys) -> None:
    spec = importlib.util.spec_from_file_location("provider_throughput", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    assert bench.main(["-n", "40", "-c", "4", "--base-url", fake.url("/v1")]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["calls"] == 40 and out["errors"] == 0 and out["transport"] == "aiohttp"
    assert {"wall_s", "calls_per_s", "peak_rss_mb", "client_cpu_ms_per_call"} <= set(out)
    assert fake.count == 40
