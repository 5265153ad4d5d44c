"""The report's layout as a person sees it in Chromium (issue 30, item 4): a big matrix folds the summary
away and the selected cell's answer is on screen at 1440×900 and 1024×768 without scrolling; model
headers read apart; answers are Markdown that stays inert; search reads criteria, ideal answers and
judges' reasons and marks the cells it matched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalspec.report import write_report
from evalspec.report.model import OK, CellResult, Item, Point, RunResults, verdict_of

from .conftest import CHROMIUM_ARGS  # noqa: F401  (the browser fixture's flags)

MODELS = [f"openai:gpt-4o-mini-2024-07-{d:02d}[temp:0]" for d in (18, 19)] + \
    ["openai:gpt-4.1-mini[temp:0]", "openai:gpt-4.1-nano[temp:0]", "openai:gpt-5-mini[temp:0]"]
LONG_PROMPT = "\n\n".join(f"Paragraph {k}: " + "context " * 40 for k in range(12))


def _run(items: int, answer: str = "**Paris** is the capital.\n\n- one\n- two") -> RunResults:
    run = RunResults(kind="weval", title="layout", source="generated", models=list(MODELS))
    for i in range(items):
        run.items.append(Item(f"p{i:05d}", [{"role": "user", "content": LONG_PROMPT}],
                              description="criteria: names the capital", ideal=f"ideal answer {i}"))
        for j, m in enumerate(MODELS):
            score = ((i * 7 + j * 3) % 11) / 10
            run.cells[(f"p{i:05d}", m)] = CellResult(
                status=OK, score=score, verdict=verdict_of(score), answer=answer,
                points=[Point("mentions the river", score, note=f"judge says reason{i}x{j}")])
    return run


@pytest.fixture
def sized(browser: Any) -> Iterator[Any]:
    contexts: list[Any] = []

    def open_at(path: Path, width: int, height: int) -> Any:
        ctx = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(ctx)
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        fetched: list[str] = []
        url = path.resolve().as_uri()

        def route(r: Any) -> None:
            if r.request.url != url:
                fetched.append(r.request.url)
                r.abort()
            else:
                r.continue_()

        page.route("**/*", route)
        page.goto(url)
        page.wait_for_selector("html[data-ready]", timeout=20000)
        page.errors, page.fetched = errors, fetched  # type: ignore[attr-defined]
        return page

    yield open_at
    for ctx in contexts:
        for page in ctx.pages:
            assert not page.errors and not page.fetched, (page.errors, page.fetched)
        ctx.close()


@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)])
def test_a_big_matrix_leaves_the_screen_to_the_matrix_and_the_answer(tmp_path: Path, sized: Any,
                                                                       size: tuple[int, int]) -> None:
    path = write_report([], tmp_path / "big.html", runs=[_run(400)])
    page = sized(path, *size)
    assert not page.locator("#overview-box").evaluate("e => e.open")  # folded: one line
    line = page.locator("#overview-line").inner_text()
    assert line.startswith("Summary:") and "gpt-4o-mini-2024-07-18" in line
    heads = page.locator(".ghead .mhead").all_inner_texts()
    assert len(set(heads)) == len(heads) and not any(h.startswith("openai:") for h in heads)
    assert page.locator(".ghead .mhead").first.get_attribute("title") == MODELS[0]
    # Read whole, not cut to the same "gpt-4o-mi…": a narrow column wraps its header instead.
    assert page.evaluate("() => [...document.querySelectorAll('.ghead .mhead')].every(e => e.scrollWidth <= e.clientWidth"
                         " && e.scrollHeight <= e.clientHeight + 1)")
    rows_on_screen = page.evaluate("() => document.getElementById('grid').clientHeight") // 30
    assert rows_on_screen >= 15
    page.locator('.cell[data-i="3"][data-m="1"]').click()
    box = page.locator("#detail .answer").bounding_box()
    assert box is not None and box["y"] + 24 < size[1]  # the answer's first line is on screen
    assert page.locator("#detail .answer strong").inner_text() == "Paris"  # Markdown
    page.screenshot(path=str(tmp_path / f"layout-{size[0]}.png"))
    page.locator("#overview-line").click()  # unfolds on demand
    assert page.locator("#summary").is_visible()


MIXED = ["openai:gpt-4o-mini-2024-07-18[temp:0]", "openai:gpt-4o-2024-08-06[temp:0]", "openai:gpt-4.1-mini[temp:0]",
         "openai:gpt-4.1-nano[temp:0]", "anthropic:claude-3-5-haiku-20241022[temp:0]"]


@pytest.fixture(scope="module")
def big_mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunResults]:
    """20,000 prompts × 5 models of two providers (the size the issue is judged at)."""
    run = RunResults(kind="weval", title="big", source="generated", models=list(MIXED))
    for i in range(20_000):
        run.items.append(Item(f"p{i:05d}", [{"role": "user", "content": f"question {i}"}]))
        for j, m in enumerate(MIXED):
            score = ((i * 7 + j * 3) % 11) / 10
            run.cells[(f"p{i:05d}", m)] = CellResult(status=OK, score=score, verdict=verdict_of(score),
                                                     answer=f"answer {i} of {j}")
    return write_report([], tmp_path_factory.mktemp("big") / "big.html", runs=[run]), run


@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)])
def test_five_models_of_two_providers_fit_beside_the_answer(big_mixed: tuple[Path, RunResults], sized: Any,
                                                            size: tuple[int, int]) -> None:
    path, run = big_mixed
    page = sized(path, *size)
    assert not page.locator("#overview-box").evaluate("e => e.open")
    heads = page.locator(".ghead .mhead").all_inner_texts()
    # Each model without its provider (they still read apart); the full id is the header's title.
    assert [h.replace("\n", "") for h in heads] == [m.split(":", 1)[1].removesuffix("[temp:0]") for m in MIXED]
    assert page.locator(".ghead .mhead").last.get_attribute("title") == MIXED[-1]
    # Every model's column on screen: the matrix does not scroll sideways, nothing is cut.
    assert page.evaluate("() => { const g = document.getElementById('grid'); return g.scrollWidth <= g.clientWidth }")
    grid_right = page.evaluate("() => document.getElementById('grid').getBoundingClientRect().right")
    last = page.locator('.cell[data-i="3"][data-m="4"]')
    box = last.bounding_box()
    assert box is not None and box["x"] + box["width"] <= grid_right
    assert last.inner_text() == f"{run.cells[('p00003', MIXED[4])].score:.2f}"  # the number in the results
    last.click()
    assert MIXED[4] in page.locator("#detail").inner_text()
    answer = page.locator("#detail .answer").bounding_box()
    assert answer is not None and answer["y"] + 24 < size[1]
    assert page.locator("#detail .answer").inner_text() == "answer 3 of 4"


def test_a_small_matrix_shows_its_summary_open(tmp_path: Path, sized: Any) -> None:
    page = sized(write_report([], tmp_path / "small.html", runs=[_run(3)]), 1440, 900)
    assert page.locator("#overview-box").evaluate("e => e.open") and page.locator("#summary").is_visible()


HOSTILE_MD = """# Title <script>window.__pwned = 1</script>

<img src="http://127.0.0.1:9/pixel.png" onerror="window.__pwned = 2">
![tracker](http://127.0.0.1:9/track.png)
[harmless](https://example.com/page) and [evil](javascript:window.__pwned=3) and [data](data:text/html,x)
<style>body { display: none }</style> <a href="https://example.com" onclick="window.__pwned=4">raw a</a>
`<b>code</b>` and **bold**
"""


def test_hostile_markdown_stays_inert(tmp_path: Path, sized: Any) -> None:
    page = sized(write_report([], tmp_path / "h.html", runs=[_run(2, HOSTILE_MD)]), 1440, 900)
    page.locator('.cell[data-i="0"][data-m="0"]').click()
    md = page.locator("#detail .answer")
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("#detail img, #detail style, #detail script, #detail iframe").count() == 0
    assert md.locator("[style], [onerror], [onclick]").count() == 0
    links = md.locator("a")
    assert links.count() == 1 and links.first.get_attribute("href") == "https://example.com/page"
    assert "noopener" in (links.first.get_attribute("rel") or "") and links.first.get_attribute("target") == "_blank"
    text = md.inner_text()
    assert "[image: tracker] http://127.0.0.1:9/track.png" in text  # an image is its text, never loaded
    assert "[evil](javascript:window.__pwned=3)" in text and "<style>body { display: none }</style>" in text
    assert md.locator("code").first.inner_text() == "<b>code</b>" and md.locator("strong").inner_text() == "bold"
    assert page.locator("body").is_visible()
    page.locator("#detail input.raw").check()
    assert page.locator("#detail pre.answer").evaluate("e => e.textContent") == HOSTILE_MD


def test_search_reads_criteria_ideals_and_reasons_and_marks_the_cells(tmp_path: Path, sized: Any) -> None:
    page = sized(write_report([], tmp_path / "s.html", runs=[_run(30)]), 1440, 900)
    page.locator("#q").fill("reason7x2")  # a judge's reason in one cell
    page.locator("#q").press("Enter")
    page.wait_for_function("() => document.getElementById('count').textContent.startsWith('1 of')")
    assert page.locator(".row .idcell b").all_inner_texts() == ["p00007"]
    marked = page.locator(".cell.mark-hit")
    assert marked.count() == 1 and marked.first.get_attribute("data-m") == "2"
    page.locator("#q").fill("ideal answer 12")  # an ideal answer: the item is marked
    page.locator("#q").press("Enter")
    page.wait_for_function("() => document.getElementById('count').textContent.startsWith('1 of')")
    assert page.locator(".row .idcell.mark-hit b").all_inner_texts() == ["p00012"]
    page.locator("#q").fill("names the capital")  # the criteria: every item
    page.locator("#q").press("Enter")
    page.wait_for_function("() => document.getElementById('count').textContent.startsWith('30 of')")
