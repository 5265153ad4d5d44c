"""The command line loads what a command uses (issue 30, item 7): `evalspec --version` and `evalspec
COMMAND --help` load no analysis, YAML, report or runner, and `run` without a proxy never loads httpx
(its calls go straight to aiohttp); bench/cli_start.py measures what that saves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .fakeprovider import FakeProvider

HEAVY = ("yaml", "evalspec.analysis", "evalspec.source", "evalspec.report.build", "evalspec.report.sources",
         "evalspec.run.runner", "httpx", "aiohttp", "orjson")


def _modules(*argv: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> set[str]:
    # As the `evalspec` entry point runs it: main() with the process's own argv; the modules at exit.
    code = ("import sys, json, atexit\n"
            "atexit.register(lambda: sys.__stderr__.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
            f"sys.argv = ['evalspec', *{list(argv)!r}]\n"
            "from evalspec.cli import main\nsys.exit(main())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env,
                          cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def test_version_loads_nothing_of_the_engine() -> None:
    loaded = _modules("--version")
    assert not [m for m in HEAVY if m in loaded]
    assert "argparse" not in loaded  # answered before any parser is built


def test_help_loads_the_parser_only() -> None:
    for command in ("check", "run", "report"):
        loaded = _modules(command, "--help")
        assert not [m for m in HEAVY if m in loaded], command


_BLUEPRINT = "title: b\nmodels: [{model}]\n---\n- id: a\n  prompt: hello there\n  should:\n    - $contains: hello\n"


def _env_without_proxies(**extra: str) -> dict[str, str]:
    """The test's environment with no proxy variable (a proxy is what loads httpx) and no provider key."""
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in ("http_proxy", "https_proxy", "all_proxy") and not k.endswith("_API_KEY")
           and not k.endswith("_BASE_URL")}
    return {**env, **extra}


def _results(out: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file() and p.suffix in (".json",
                                                                                                        ".jsonl"))


def test_run_without_a_proxy_never_loads_httpx(tmp_path: Path) -> None:
    (tmp_path / "echo.weval.yml").write_text(_BLUEPRINT.format(model="echo"))
    (tmp_path / "openai.weval.yml").write_text(_BLUEPRINT.format(model="openai:gpt-4o-mini"))
    env = _env_without_proxies()

    # A dry run (the plan builds the provider and parses its endpoint) and an offline run.
    planned = _modules("run", "--dry-run", "openai.weval.yml", env={**env, "OPENAI_API_KEY": "sk-plan"}, cwd=tmp_path)
    assert "evalspec.providers.http" in planned and "httpx" not in planned
    offline = _modules("run", "-m", "echo", "echo.weval.yml", "-o", "echo-out", "--no-report", env=env, cwd=tmp_path)
    assert "evalspec.run.runner" in offline and "httpx" not in offline
    # Every cell passes and --no-report: the closing lines list no worst items, so the report's model,
    # Markdown and sources are not loaded (~6 ms of each such run's end)
    assert not {"evalspec.report.model", "evalspec.report.markdown", "evalspec.report.sources",
                "evalspec.report.diff", "evalspec.report.spool"} & offline
    assert "hello there" in _results(tmp_path / "echo-out")

    # A real run against an OpenAI-compatible server on 127.0.0.1: the calls are made, over aiohttp alone.
    with FakeProvider(answer="hello from the fake") as fake:
        online = _modules("run", "openai.weval.yml", "-o", "openai-out", "--no-report",
                          env={**env, "OPENAI_API_KEY": "sk-test-imports", "OPENAI_BASE_URL": fake.url("/v1")},
                          cwd=tmp_path)
        asked = [r for r in fake.requests if r.path.endswith("/chat/completions")]
    assert asked and asked[0].headers["authorization"] == "Bearer sk-test-imports"
    assert "hello from the fake" in _results(tmp_path / "openai-out")
    assert "aiohttp" in online and "evalspec.providers.http" in online
    assert not [m for m in online if m == "httpx" or m.startswith(("httpx.", "httpx_aiohttp", "httpcore"))]
    # An interactive run without embeddings loads neither the batch stage nor the embeddings stage.
    assert not [m for m in online if m in ("evalspec.run.generate.batch_stage", "evalspec.run.score.embeddings")
                or m.startswith("evalspec.batch")]


def test_a_proxy_still_goes_through_httpx(tmp_path: Path) -> None:
    """The other side: with HTTPS_PROXY set, the client is httpx's (it mounts the proxy), loaded then."""
    code = ("import sys\nfrom evalspec.providers.http import make_client\n"
            "c = make_client(2)\nprint(type(c).__name__, 'httpx' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                          env=_env_without_proxies(HTTPS_PROXY="http://127.0.0.1:9"))
    assert done.stdout.split() == ["AiohttpClient", "True"]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                          env=_env_without_proxies())
    assert done.stdout.split() == ["DirectClient", "False"]


_SUITE = ("name: s\ndescription: d\nexecution:\n  target: default\ntests:\n  - id: t\n    input: hello there\n"
          "    criteria: c\n    assert:\n      - {type: contains, value: hello}\n      - {type: regex, value: \"[a-z]+\"}\n")


def test_each_format_loads_none_of_the_others_plan_and_scorers(tmp_path: Path) -> None:
    """A run loads its own format's plan, scorers and judges only (an AgentV run's start was ~91 M
    instructions, 6 %, less without Weval's), and a plain regex's check starts no QuickJS."""
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    (tmp_path / "s.eval.yaml").write_text(_SUITE)
    (tmp_path / "echo.weval.yml").write_text(_BLUEPRINT.format(model="echo"))
    env = _env_without_proxies()
    agentv = _modules("run", "s.eval.yaml", "-o", "a-out", "--no-report", env=env, cwd=tmp_path)
    assert "evalspec.run.agentv_stages" in agentv and "evalspec.run.score.agentv_judges" in agentv
    assert not {"evalspec.run.plan.weval", "evalspec.run.score.functions", "evalspec.run.score.judges",
                "evalspec.scoring.weval_points", "evalspec.registry.weval_functions", "evalspec.weval.model",
                "quickjs"} & agentv
    # (the run reads targets.yaml with PyYAML; the check of a suite whose head is of simple_items' subset
    # loads none of it: source._simple_head)
    assert "yaml" not in _modules("check", "s.eval.yaml", env=env, cwd=tmp_path)
    weval = _modules("run", "-m", "echo", "echo.weval.yml", "-o", "w-out", "--no-report", env=env, cwd=tmp_path)
    assert "evalspec.run.weval_stages" in weval and "evalspec.run.score.judges" in weval
    assert not {"evalspec.run.plan.agentv", "evalspec.run.score.agentv_judges", "evalspec.run.score.agentv_entries",
                "evalspec.scoring.agentv_assertions"} & weval
