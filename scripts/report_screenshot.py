#!/usr/bin/env python3
"""The report screenshot of the README (docs/report.png), from a real run of examples/hello.weval.yml.

Everything stays on this machine: the fake OpenAI-compatible provider of the tests (tests/fakeprovider.py)
listens on 127.0.0.1 and answers as three "models" of different quality and as the judge; the real
`evalspec run` CLI runs the example blueprint against them, writes the results and report.html; Debian's
Chromium (through Playwright) opens the report, selects the failing cell of the weakest model and saves
the screenshot.

usage: scripts/report_screenshot.py [--out docs/report.png] [--keep DIR] [--dark]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakeprovider import FakeProvider, Recorded, Reply, last_user_text  # noqa: E402

MODELS = ["openai:gpt-4.1", "openai:gpt-4o-mini", "openai:tiny-model"]
ANSWERS = {  # prompt keyword → model → answer
    "capital": {"gpt-4.1": "Paris is the capital of France.", "gpt-4o-mini": "The capital of France is Paris.",
                "tiny-model": "As an AI, I believe it is Lyon."},
    "hello": {"gpt-4.1": "Say hello: hello, world!", "gpt-4o-mini": "Hello, world! Nice to meet you.",
              "tiny-model": "Greetings, planet."},
    "JSON": {"gpt-4.1": '{"ok": true}', "gpt-4o-mini": 'Sure! {"ok": true}', "tiny-model": "ok: true"},
    "colour": {"gpt-4.1": "Red.", "gpt-4o-mini": "Blue is a primary colour.", "tiny-model": "Green, probably."},
    "sky": {"gpt-4.1": "Sunlight is scattered by the molecules of the atmosphere; blue light scatters most, "
                       "so the sky looks blue.",
            "gpt-4o-mini": "Because of Rayleigh scattering: air molecules scatter short blue wavelengths of "
                           "sunlight more than red ones.",
            "tiny-model": "The sky reflects the ocean, which is blue."},
}


class DemoProvider(FakeProvider):
    def _respond(self, rec: Recorded, reply: Reply) -> tuple[int, bytes, dict[str, str]]:
        if reply.action == "answer" and reply.text is None:
            req = json.loads(rec.body or b"{}")
            reply = Reply.ok(self._answer(req))
        return super()._respond(rec, reply)

    def _answer(self, req: dict[str, Any]) -> str:
        model, text = str(req.get("model")), json.dumps(req)
        if model == "judge":
            good = "scatter" in text.lower() and "ocean" not in text
            return ("<reflection>The answer explains that air molecules scatter sunlight, blue most.</reflection>"
                    "<classification>CLASS_EXACT</classification>" if good else
                    "<reflection>It attributes the colour to the ocean; scattering of sunlight is never "
                    "mentioned.</reflection><classification>CLASS_UNMET</classification>")
        user = last_user_text(req)
        for key, by_model in ANSWERS.items():
            if key in user:
                return by_model.get(model, "…")
        return "…"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "report.png")
    ap.add_argument("--keep", type=Path, help="keep the run's results here (default: a temp dir)")
    ap.add_argument("--dark", action="store_true", help="dark colour scheme")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    from evalspec.cli import main as evalspec

    work = (args.keep or Path(tempfile.mkdtemp(prefix="report-shot-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    out = args.out.resolve()
    # Run from the work folder with relative paths, so the page shows `hello.weval.yml`, not this machine's.
    shutil.copy(ROOT / "examples" / "hello.weval.yml", work / "hello.weval.yml")
    os.chdir(work)
    with DemoProvider() as fake:
        os.environ.update({"OPENAI_API_KEY": "sk-demo-not-a-key", "OPENAI_BASE_URL": fake.url("/v1")})
        argv = ["run", "hello.weval.yml", "-o", "results", "--judge", "openai:judge"]
        for m in MODELS:
            argv += ["-m", m]
        if evalspec(argv) != 0:
            print("the example run failed", file=sys.stderr)
            return 1
    report = next(work.glob("results/live/blueprints/*/report.html"))
    out.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1360, "height": 900}, color_scheme="dark" if args.dark else "light")
        page.goto(report.resolve().as_uri())
        page.wait_for_selector("html[data-ready]")
        data = page.evaluate("() => JSON.parse(document.getElementById('evalspec-data').textContent)")
        i, m = data["items"].index("explain"), data["models"].index("openai:tiny-model[temp:0]")
        page.locator(f'.cell[data-i="{i}"][data-m="{m}"]').click()
        page.screenshot(path=str(out))
        browser.close()
    print(f"report: {report}\nscreenshot: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
