#!/usr/bin/env python3
"""The HTML report at scale: a 20,000-prompt × 5-model Weval run (100,000 cells) in headless Chromium.

Generates a Weval comparison file with realistic cells (answers of 150–600 characters, three points per
cell, a judged one with a reflection; about a fifth failing, some not scored, some errors), writes the
report with `evalspec.report.write_report` (timed: what `evalspec run` adds at the end of a run), then
opens it in Debian's Chromium (/usr/bin/chromium, through Playwright) and measures, inside the page
(performance.now(), so no driver round trip is counted):

  open      navigation start → the summary, chart and first rows of the matrix are on screen
  filter    a click on "Failures" → the filtered matrix is drawn (the next frame)
  model     choosing one model in the select → drawn
  sort      sorting by disagreement between models → drawn
  search    typing a word → its final result drawn (the first search also parses every answer,
            chunk by chunk, the page responding in between: included)
  cell      clicking a cell → its detail is drawn (the first click parses the details block: included)
  scroll    jumping to the middle of the matrix → drawn

and the DOM size (only the visible rows exist). Target: open and filter < 2 s each. Prints one line
per measure; --repeat N opens the page N times and prints the median.

usage: report_browser.py [--prompts N] [--models M] [--repeat R] [--keep DIR] [--screenshot PNG]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

WORDS = ["the", "model", "answers", "with", "a", "careful", "explanation", "of", "the", "policy", "and", "its", "exceptions", "while", "noting", "that", "several", "sources", "disagree", "about", "the", "dates", "involved", "in", "the", "original", "decision"]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def comparison(prompts: int, models: int, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    model_ids = [f"openai:model-{m}[temp:0]" for m in range(models)]
    ids = [f"prompt-{i:05d}" for i in range(prompts)]
    responses: dict[str, dict[str, str]] = {}
    coverage: dict[str, dict[str, Any]] = {}
    errors: dict[str, dict[str, str]] = {}
    for pid in ids:
        row: dict[str, str] = {}
        cov: dict[str, Any] = {}
        for m in model_ids:
            if rng.random() < 0.01:
                errors.setdefault(pid, {})[m] = "openai: HTTP 500: internal error"
                row[m] = "<<error>>openai: HTTP 500: internal error<</error>>"
                cov[m] = {"error": "Generation failed: openai: HTTP 500: internal error"}
                continue
            row[m] = " ".join(rng.choice(WORDS) for _ in range(rng.randint(25, 100)))
            judged = None if rng.random() < 0.03 else rng.choice((0.0, 0.3, 0.7, 1.0, 1.0))
            points = [
                {"keyPointText": 'Function: icontains("policy")', "coverageExtent": 1.0 if rng.random() < 0.8 else 0.0,
                 "multiplier": 1.0, "isInverted": False, "reflection": "Function 'icontains' evaluated."},
                {"keyPointText": "Function: word_count_between([10,200])", "coverageExtent": 1.0, "multiplier": 1.0,
                 "isInverted": False, "reflection": "Function 'word_count_between' evaluated to 1.00."},
                {"keyPointText": "mentions that sources disagree about the dates", "coverageExtent": judged,
                 "multiplier": 2.0, "isInverted": False,
                 "reflection": "The answer notes the disagreement but not the dates." if judged is not None
                 else "Not scored: no judge can be called.",
                 **({"error": "Not scored: no judge can be called."} if judged is None else {})},
            ]
            scored = [(p["coverageExtent"], p["multiplier"]) for p in points if p["coverageExtent"] is not None]
            score = sum(s * w for s, w in scored) / sum(w for _, w in scored)
            cov[m] = {"keyPointsCount": 3, "avgCoverageExtent": round(score, 4), "pointAssessments": points}
        responses[pid] = row
        coverage[pid] = cov
    return {
        "configId": "report-bench", "configTitle": f"Report bench: {prompts:,} prompts × {models} models",
        "runLabel": "bench", "timestamp": "2026-01-01T00-00-00-000Z",
        "config": {"id": "report-bench", "title": "Report bench", "models": model_ids,
                   "prompts": [{"id": pid, "messages": [{"role": "user", "content": f"Question {pid}: explain the "
                                                         "policy and its exceptions, with dates."}]} for pid in ids]},
        "evalMethodsUsed": ["llm-coverage"], "effectiveModels": model_ids, "promptIds": ids,
        "promptContexts": {pid: [{"role": "user", "content": f"Question {pid}: explain the policy and its "
                                  "exceptions, with dates."}] for pid in ids},
        "allFinalAssistantResponses": responses, "fullConversationHistories": {},
        "evaluationResults": {"llmCoverageScores": coverage}, "errors": errors,
    }


DRAWN = "() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))"


def timed(page: Any, action: str) -> float:
    """Milliseconds from an action in the page to the next frame after it (its redraw)."""
    return float(page.evaluate(
        "async (action) => { const t = performance.now(); (new Function(action))();"
        " await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0))); return performance.now() - t; }",
        action))


def until_searched(page: Any, action: str) -> float:
    """Milliseconds from typing a search to its final result (the answers are indexed chunk by chunk,
    the page answering in between)."""
    return float(page.evaluate(
        "async (action) => { const t = performance.now(); (new Function(action))();"
        " const count = document.getElementById('count');"
        " while (count.textContent.startsWith('searching')) await new Promise(r => setTimeout(r, 5));"
        " await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0))); return performance.now() - t; }",
        action))


def measure(browser: Any, url: str, screenshot: Path | None) -> dict[str, float]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    t = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("html[data-ready]", timeout=60000)
    page.evaluate(DRAWN)
    wall = (time.perf_counter() - t) * 1000
    out = {"open": float(page.evaluate("() => Number(document.documentElement.dataset.readyMs)")),
           "open (driver wall clock)": wall}
    out["filter"] = timed(page, "document.getElementById('f-fail').click()")
    out["rows shown"] = float(page.evaluate("() => document.querySelectorAll('.row').length"))
    out["filter off"] = timed(page, "document.getElementById('f-fail').click()")
    out["model"] = timed(page, "const s = document.getElementById('model'); s.value = '2';"
                               " s.dispatchEvent(new Event('change'))")
    out["sort"] = timed(page, "const s = document.getElementById('sort'); s.value = 'disagree';"
                              " s.dispatchEvent(new Event('change'))")
    out["search (first: parses the answers)"] = until_searched(
        page, "const q = document.getElementById('q'); q.value = 'exceptions'; "
              "q.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}))")
    out["search again"] = until_searched(
        page, "const q = document.getElementById('q'); q.value = 'dates'; "
              "q.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}))")
    out["cell (first: parses the details)"] = timed(page, "document.querySelector('.cell').click()")
    out["cell again"] = timed(page, "document.querySelectorAll('.cell')[3].click()")
    out["scroll to the middle"] = timed(page, "const g = document.getElementById('grid'); "
                                              "g.scrollTop = g.scrollHeight / 2; g.dispatchEvent(new Event('scroll'))")
    out["DOM elements"] = float(page.evaluate("() => document.getElementsByTagName('*').length"))
    if screenshot is not None:
        page.screenshot(path=str(screenshot))
    context.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=20_000)
    ap.add_argument("--models", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="write the comparison file and report here (default: a temp dir)")
    ap.add_argument("--screenshot", type=Path)
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    from evalspec.jsonio import dumps_bytes
    from evalspec.report import write_report

    folder = args.keep or Path(tempfile.mkdtemp(prefix="report-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    results = folder / "bench_2026-01-01T00-00-00-000Z_comparison.json"
    results.write_bytes(dumps_bytes(comparison(args.prompts, args.models)))
    t = time.perf_counter()
    report = write_report([results], folder / "report.html")
    build = time.perf_counter() - t
    cells = args.prompts * args.models
    print(f"cells: {cells:,}; results {results.stat().st_size / 1e6:.1f} MB; report {report.stat().st_size / 1e6:.1f} MB "
          f"(written in {build:.2f} s)")
    runs: list[dict[str, float]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for n in range(args.repeat):
            runs.append(measure(browser, report.resolve().as_uri(), args.screenshot if n == 0 else None))
        browser.close()
    for key in runs[0]:
        values = [r[key] for r in runs]
        med = statistics.median(values)
        if key in ("rows shown", "DOM elements"):
            print(f"{key:38s} {med:,.0f}")
        else:
            print(f"{key:38s} median {med:7,.0f} ms   (runs: {', '.join(f'{v:,.0f}' for v in values)})")
    ok = statistics.median(r["open"] for r in runs) < 2000 and statistics.median(r["filter"] for r in runs) < 2000
    print("target (open and filter < 2 s):", "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
