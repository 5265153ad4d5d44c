"""Fixtures for report tests: real runs (the CLI against the fake provider on 127.0.0.1) whose results
hold passing, failing, not scored, errored and hostile cells; and a headless Debian Chromium driven by
Playwright (pointed at /usr/bin/chromium; nothing is downloaded)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalspec.cli import main

from ..run.conftest import AGENTV_TARGETS, KEY, SmartFake, classify, criterion_of, env_for, write

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# A model answer that would run script, load an image and inject markup if it were ever put in as HTML.
HOSTILE = ('</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
           '<b>bold</b> &amp; <!-- comment --> \u2028 done')

BLUEPRINT = """title: Report test <b>title</b>
models: [openai:candidate, openai:other]
evaluationConfig:
  llm-coverage:
    judges:
      - {model: "openai:judge-a", approach: holistic}
---
- id: capital
  prompt: What is the capital of France?
  should:
    - $contains: Paris
    - is friendly
- id: hostile
  prompt: "Repeat after me: <script>alert(1)</script>"
  should:
    - $contains: bold
- id: broken
  prompt: This one breaks for one model
  should:
    - $contains: ok
"""

SUITE = """$schema: agentv-eval-v2
name: report-suite
tests:
  - id: greeting
    criteria: Greets Alice
    input: Hello, I am Alice
    assert:
      - type: contains
        value: Alice
      - type: rubrics
        criteria: [Is warm]
  - id: hostile
    criteria: Anything
    input: Say something hostile
    assert:
      - type: contains
        value: bold
"""

TARGETS = AGENTV_TARGETS + """  - name: other
    provider: openai
    model: other-model
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
"""


class ReportFake(SmartFake):
    """Answers by model and prompt; the model `other` fails on the prompt `broken` with a 400."""

    def __init__(self, version: int = 1) -> None:
        super().__init__(self._answer)
        self.version = version

    def _answer(self, req: dict[str, Any]) -> str | None:
        text = json.dumps(req)
        if criterion_of(req) is not None:  # the Weval judge
            if "London" in text:
                return classify("CLASS_UNMET", "Not friendly: it names <i>London</i>")
            return classify("CLASS_EXACT", "Warm and correct")
        if req.get("model") == "grader-model":  # the AgentV judge
            return json.dumps({"checks": [{"id": "rubric-1", "satisfied": True, "reasoning": "warm <b>enough</b>"}],
                               "overall_reasoning": "fine"})
        model = req.get("model")
        if "Repeat after me" in text or "hostile" in text:
            return HOSTILE
        if model in ("candidate", "other-model") and "Alice" in text:
            return "Hello Alice!" if model == "candidate" else "Hello there"
        if model == "candidate":
            return "London, friend. ok" if self.version == 2 else "Paris, my friend. ok"
        if model == "other":
            return "Paris, dear friend. ok" if self.version == 2 else "London. ok"
        return None

    def _respond(self, rec: Any, reply: Any) -> tuple[int, bytes, dict[str, str]]:
        from tests.fakeprovider import Reply

        try:
            req = json.loads(rec.body or b"{}")
        except ValueError:
            req = {}
        if req.get("model") == "other" and "breaks for one model" in json.dumps(req):
            return super()._respond(rec, Reply.error(400, "bad request for this model"))
        return super()._respond(rec, reply)


def run_cli(args: list[str], env: dict[str, str]) -> int:
    with pytest.MonkeyPatch.context() as mp:
        for k in ("OPENROUTER_API_KEY", "ANTHROPIC_API_KEY"):
            mp.delenv(k, raising=False)
        for k, v in env.items():
            mp.setenv(k, v)
        return main(args)


def weval_run(folder: Path, version: int = 1) -> Path:
    """Run the blueprint; the comparison file."""
    bp = write(folder / "report.weval.yml", BLUEPRINT)
    with ReportFake(version) as fake:
        assert run_cli(["run", str(bp), "-o", str(folder / "out"), "--retries", "0", "--artefacts"], env_for(fake)) == 0
    return sorted((folder / "out").glob("live/blueprints/*/*_comparison.json"))[-1]


def agentv_run(folder: Path) -> Path:
    write(folder / ".agentv" / "targets.yaml", TARGETS)
    suite = write(folder / "evals" / "report.eval.yaml", SUITE)
    with ReportFake() as fake:
        assert run_cli(["run", str(suite), "-m", "default", "-m", "other", "-o", str(folder / "out"),
                        "--retries", "0"], env_for(fake)) == 0
    return next(p for p in (folder / "out").glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One Weval run, a second one after a model swap (for diffs), one AgentV run."""
    base = tmp_path_factory.mktemp("runs")
    return {"weval": weval_run(base / "w1"), "weval2": weval_run(base / "w2", version=2),
            "agentv": agentv_run(base / "a1")}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Module-scoped, not session-scoped: Playwright's sync API keeps an event loop running in this thread
    while it is open, and the runner's asyncio.run() in later tests must not find one."""
    from playwright.sync_api import sync_playwright

    assert shutil.which(CHROMIUM) or Path(CHROMIUM).exists(), "Debian's chromium is required (.ci/run installs it)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


class Page:
    """A report opened in Chromium: every request other than the file itself is refused and recorded,
    page errors are collected."""

    def __init__(self, browser: Any, path: Path, *, scheme: str = "light") -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 900}, color_scheme=scheme)
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.url = path.resolve().as_uri()

        def route(r: Any) -> None:
            if r.request.url != self.url:
                self.requests.append(r.request.url)
                r.abort()
            else:
                r.continue_()

        self.page.route("**/*", route)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(self.url)
        self.page.wait_for_selector("html[data-ready]", timeout=20000)

    def cell(self, item: str, model: str) -> Any:
        i = self.page.evaluate("([item]) => JSON.parse(document.getElementById('evalspec-data').textContent)"
                               ".items.indexOf(item)", [item])
        m = self.page.evaluate("([model]) => JSON.parse(document.getElementById('evalspec-data').textContent)"
                               ".models.indexOf(model)", [model])
        assert i >= 0 and m >= 0, (item, model)
        return self.page.locator(f'.cell[data-i="{i}"][data-m="{m}"]')

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    pages: list[Page] = []

    def opener(path: Path, **kw: Any) -> Page:
        page = Page(browser, path, **kw)
        pages.append(page)
        return page

    yield opener
    for p in pages:
        assert not p.errors, p.errors
        assert not p.requests, f"the report fetched {p.requests}"
        p.close()


__all__ = ["HOSTILE", "KEY", "Page", "run_cli"]
