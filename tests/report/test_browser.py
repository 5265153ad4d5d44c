"""The HTML report in a real browser (headless Debian Chromium through Playwright): what a person sees
when they open it, click cells, filter and use the keyboard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from evalspec.report import write_report

from .conftest import HOSTILE


def _report(runs: dict[str, Path], tmp_path: Path, *names: str) -> Path:
    return write_report([runs[n] for n in names], tmp_path / "report.html")


def test_a_reviewer_finds_the_failing_prompt_model_and_point(runs: dict[str, Path], tmp_path: Path,
                                                            open_page: Any) -> None:
    view = open_page(_report(runs, tmp_path, "weval"))
    page = view.page
    summary = page.locator("#summary").inner_text()
    assert "openai:candidate[temp:0]" in summary and "openai:other[temp:0]" in summary
    assert page.locator("#count").inner_text() == "3 of 3 prompts"

    page.locator("#f-fail").check()  # failures only: the one prompt that failed for some model
    assert page.locator("#count").inner_text() == "1 of 3 prompts"
    assert page.locator(".row .idcell b").all_inner_texts() == ["capital"]
    cell = view.cell("capital", "openai:other[temp:0]")
    assert cell.inner_text() == "0.00" and "b0" in (cell.get_attribute("class") or "")

    cell.click()
    detail = page.locator("#detail")
    assert page.locator("#detail-title").inner_text() == "capital"
    assert "openai:other[temp:0]" in page.locator("#detail-model").inner_text()
    assert "What is the capital of France?" in detail.locator(".msg pre").first.inner_text()
    assert detail.locator(".answer").inner_text() == "London. ok"  # rendered as Markdown: a paragraph
    first = detail.locator("table.points tr.first")
    assert first.count() == 1
    assert 'Function: contains("Paris")' in first.inner_text() and "first failed point" in first.inner_text()
    judged = detail.locator("table.points tbody tr").nth(1)
    assert "is friendly" in judged.inner_text() and "0.00" in judged.inner_text()
    assert "Not friendly: it names <i>London</i>" in judged.inner_text()  # the reflection, as text
    page.screenshot(path=str(tmp_path / "failing.png"))
    assert (tmp_path / "failing.png").stat().st_size > 10_000


def test_hostile_answers_prompts_and_titles_render_as_text(runs: dict[str, Path], tmp_path: Path,
                                                         open_page: Any) -> None:
    view = open_page(_report(runs, tmp_path, "weval"))
    page = view.page
    view.cell("hostile", "openai:candidate[temp:0]").click()
    # As Markdown the answer is built of text nodes: nothing in it runs or loads.
    shown = page.locator("#detail .answer").inner_text()
    assert "<script>window." in shown and '<img src=x onerror="window.' in shown and "<b>bold</b>" in shown
    page.locator("#detail input.raw").check()  # the raw view: the answer as it came, byte for byte
    assert page.locator("#detail pre.answer").evaluate("e => e.textContent") == HOSTILE
    page.locator("#detail input.raw").uncheck()
    assert page.locator("#detail .msg pre").first.inner_text() == "Repeat after me: <script>alert(1)</script>"
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("#detail img, #detail b:text('bold'), #app img").count() == 0
    # the page's own three scripts (the data, the details, the code) and nothing else
    assert page.evaluate("() => document.scripts.length") == 3
    assert page.locator("h1").inner_text().startswith("Report test <b>title</b>")
    assert page.title().startswith("Report test <b>title</b>")
    page.locator("#q").fill("window.__pwned")  # search finds it in the answers, as text
    page.locator("#q").press("Enter")
    assert page.locator(".row .idcell b").all_inner_texts() == ["hostile"]
    assert page.evaluate("() => window.__pwned") is None


def test_errors_and_not_scored_filters_show_why(runs: dict[str, Path], tmp_path: Path, open_page: Any) -> None:
    view = open_page(_report(runs, tmp_path, "weval"))
    page = view.page
    page.locator("#f-err").check()
    assert page.locator(".row .idcell b").all_inner_texts() == ["broken"]
    cell = view.cell("broken", "openai:other[temp:0]")
    assert cell.inner_text() == "error"
    cell.click()
    assert "HTTP 400: bad request for this model" in page.locator("#detail pre.error").inner_text()

    suite = open_page(write_report([runs["agentv"]], tmp_path / "suite.html"))
    sp = suite.page
    sp.locator("#f-ns").check()  # the rubric the target without a judge could not score
    assert sp.locator(".row .idcell b").all_inner_texts() == ["greeting"]
    sp.locator("#model").select_option(label="other")
    suite.cell("greeting", "other").click()
    why = sp.locator("#detail table.points .why").inner_text()
    assert why.startswith("not scored: ") and "no judge" in why
    assert "Hello, I am Alice" in sp.locator("#detail .msg pre").first.inner_text()  # from the eval file
    assert sp.locator("#detail table.points tr.first").inner_text().startswith("✗")


def test_keyboard_moves_the_selection_and_drives_the_filters(runs: dict[str, Path], tmp_path: Path,
                                                             open_page: Any) -> None:
    page = open_page(_report(runs, tmp_path, "weval")).page
    page.locator("#grid").focus()
    page.keyboard.press("ArrowDown")  # the first key selects (row 0, col 0 → row 1)
    assert page.locator("#detail-title").inner_text() == "hostile"
    page.keyboard.press("ArrowRight")
    assert "openai:other" in page.locator("#detail-model").inner_text()
    page.keyboard.press("End")
    assert page.locator("#detail-title").inner_text() == "broken"
    page.keyboard.press("e")  # errors only
    assert page.locator("#f-err").is_checked() and page.locator("#count").inner_text() == "1 of 3 prompts"
    page.keyboard.press("Escape")
    assert page.locator("#count").inner_text() == "3 of 3 prompts"
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.id") == "q"
    page.keyboard.type("capital")
    page.keyboard.press("Enter")
    assert page.locator("#count").inner_text() == "1 of 3 prompts"


def test_sorting_by_disagreement_puts_the_split_prompt_first(runs: dict[str, Path], tmp_path: Path,
                                                            open_page: Any) -> None:
    page = open_page(_report(runs, tmp_path, "weval")).page
    page.locator("#sort").select_option("disagree")
    assert page.locator(".row .idcell b").first.inner_text() == "capital"
    page.locator("#sort").select_option("worst")
    assert page.locator(".row .idcell b").first.inner_text() == "capital"


def test_the_diff_names_regressions_and_improvements_first(runs: dict[str, Path], tmp_path: Path,
                                                          open_page: Any) -> None:
    view = open_page(_report(runs, tmp_path, "weval", "weval2"))
    page = view.page
    assert page.locator("#show-reg").inner_text() == "▼ 1 regressed"
    assert page.locator("#show-imp").inner_text() == "▲ 1 improved"
    page.locator("#show-reg").click()
    assert page.locator("#f-reg").is_checked()
    assert page.locator(".row .idcell b").all_inner_texts() == ["capital"]
    cell = view.cell("capital", "openai:candidate[temp:0]")
    assert "chg-reg" in (cell.get_attribute("class") or "") and "▼" in cell.inner_text()
    cell.click()
    assert page.locator("#detail-change").inner_text() == "regressed: 1.00 → 0.00"
    answers = page.locator("#detail .answer").all_inner_texts()
    assert answers == ["Paris, my friend. ok", "London, friend. ok"]
    page.screenshot(path=str(tmp_path / "diff.png"))


def test_dark_mode_follows_the_system_setting(runs: dict[str, Path], tmp_path: Path, open_page: Any) -> None:
    path = _report(runs, tmp_path, "weval")
    light = open_page(path).page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    dark = open_page(path, scheme="dark").page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert light == "rgb(251, 251, 252)" and dark == "rgb(21, 23, 28)"


def _big_run(items: int, models: int) -> Any:
    from evalspec.report.model import OK, CellResult, Item, Point, RunResults, verdict_of

    run = RunResults(kind="weval", title="big", source="generated", models=[f"m{j}" for j in range(models)])
    for i in range(items):
        run.items.append(Item(f"p{i:05d}", [{"role": "user", "content": f"question {i}"}]))
        for j in range(models):
            score = ((i * 7 + j * 3) % 11) / 10
            run.cells[(f"p{i:05d}", f"m{j}")] = CellResult(
                status=OK, score=score, verdict=verdict_of(score), answer=f"answer {i} from m{j} token{i}x{j}",
                points=[Point("Function: contains(x)", score)])
    return run


def test_thousands_of_rows_render_only_what_is_visible_and_still_search_every_chunk(
        tmp_path: Path, open_page: Any) -> None:
    run = _big_run(4_500, 3)  # five details chunks
    path = write_report([], tmp_path / "big.html", runs=[run])
    view = open_page(path)
    page = view.page
    assert page.evaluate("() => document.scripts.length") == 2 + 5
    assert page.locator(".row").count() < 80  # 4,500 rows, a screenful (and some overscan) in the DOM
    failing = sum(1 for i in run.items if any(run.cells[(i.id, m)].verdict == "fail" for m in run.models))
    page.locator("#f-fail").check()
    assert page.locator("#count").inner_text() == f"{failing:,} of 4,500 prompts"
    page.locator("#f-fail").uncheck()
    page.locator("#q").fill("token4321x2")  # only in one answer, in the fifth chunk
    page.locator("#q").press("Enter")
    page.wait_for_function("() => document.getElementById('count').textContent.startsWith('1 of')")
    assert page.locator(".row .idcell b").all_inner_texts() == ["p04321"]
    view.cell("p04321", "m2").click()
    assert page.locator("#detail .answer").inner_text() == "answer 4321 from m2 token4321x2"
    page.keyboard.press("Escape")  # clears the search (and any filter)
    assert page.locator("#q").input_value() == "" and page.locator("#count").inner_text() == "4,500 of 4,500 prompts"
    page.keyboard.press("End")
    assert page.locator("#detail-title").inner_text() == "p04499"


def test_pointing_at_a_cell_says_why_it_failed(runs: dict[str, Path], tmp_path: Path, open_page: Any) -> None:
    view = open_page(_report(runs, tmp_path, "weval"))
    failed = view.cell("capital", "openai:other[temp:0]").get_attribute("title")
    assert failed == 'openai:other[temp:0]: 0.00\nfirst failed point: Function: contains("Paris")'
    error = view.cell("broken", "openai:other[temp:0]").get_attribute("title") or ""
    assert error.startswith("openai:other[temp:0]: error\nerror: Failed to get response")
    assert view.cell("capital", "openai:candidate[temp:0]").get_attribute("title") == "openai:candidate[temp:0]: 1.00"


def test_a_link_to_the_report_can_point_at_a_cell(runs: dict[str, Path], tmp_path: Path, browser: Any) -> None:
    from .conftest import Page

    path = _report(runs, tmp_path, "weval")
    view = Page(browser, path)
    view.cell("capital", "openai:other[temp:0]").click()
    url = view.page.url
    assert url.endswith("#capital/openai%3Aother%5Btemp%3A0%5D")
    view.close()
    again = browser.new_page()
    again.goto(url)
    again.wait_for_selector("html[data-ready]")
    assert again.locator("#detail-title").inner_text() == "capital"
    assert "openai:other[temp:0]" in again.locator("#detail-model").inner_text()
    assert again.locator(".cell.sel").get_attribute("title", timeout=1000).startswith("openai:other[temp:0]: 0.00")
    again.close()


WIDE_MODELS = 14  # more than fit at 72 px each beside the detail of a 1400 px window


def _wide_comparison(folder: Path) -> Path:
    """A Weval comparison file with item ids and prompts from two characters to hundreds, and more models
    (with long names) than the matrix pane can show side by side."""
    models = [f"openrouter:some-vendor/a-rather-long-model-name-{m}[temp:0]" for m in range(WIDE_MODELS)]
    texts = {"a": "Hi?", "b" * 90: "Explain " + "the policy and its many exceptions " * 20,
             "mid-sized-item": "What is the capital of France?", "x": "A " + "long " * 200}
    ids = list(texts)
    prompts = {pid: [{"role": "user", "content": text}] for pid, text in texts.items()}
    coverage = {pid: {m: {"keyPointsCount": 1, "avgCoverageExtent": (n + k) % 5 / 4,
                          "pointAssessments": [{"keyPointText": "is right", "coverageExtent": (n + k) % 5 / 4,
                                                "multiplier": 1.0, "isInverted": False, "reflection": "ok"}]}
                      for k, m in enumerate(models)} for n, pid in enumerate(ids)}
    data = {"configId": "wide", "configTitle": "Wide", "runLabel": "wide", "timestamp": "2026-01-01T00-00-00-000Z",
            "config": {"id": "wide", "title": "Wide", "models": models,
                       "prompts": [{"id": pid, "messages": prompts[pid]} for pid in ids]},
            "evalMethodsUsed": ["llm-coverage"], "effectiveModels": models, "promptIds": ids,
            "promptContexts": prompts,
            "allFinalAssistantResponses": {pid: {m: f"answer {pid[:5]} {m[-10:]}" for m in models} for pid in ids},
            "fullConversationHistories": {}, "evaluationResults": {"llmCoverageScores": coverage}, "errors": {}}
    path = folder / "wide_2026-01-01T00-00-00-000Z_comparison.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _column_centres(page: Any) -> dict[str, list[list[float]]]:
    """The centre x of each model column: [header, then every row's cell], and the item cells' boxes."""
    return cast(dict[str, list[list[float]]], page.evaluate("""() => {
      const centre = (e) => { const b = e.getBoundingClientRect(); return b.left + b.width / 2; };
      const head = [...document.querySelectorAll('.ghead > div')];
      const cols = head.slice(1).map((h, c) => [centre(h),
        ...[...document.querySelectorAll('.row')].map((r) => centre(r.querySelectorAll('.cell')[c]))]);
      const ids = [...document.querySelectorAll('.row .idcell'), head[0]].map((e) => {
        const b = e.getBoundingClientRect(); return [b.left, b.right]; });
      return { cols, ids };
    }"""))


def test_matrix_columns_line_up_whatever_the_item_text(tmp_path: Path, open_page: Any) -> None:
    view = open_page(write_report([_wide_comparison(tmp_path)], tmp_path / "wide.html"))
    page = view.page
    assert page.locator(".row").count() == 4
    grid = page.locator("#grid")
    pane = grid.bounding_box()
    for scrolled in (False, True):
        if scrolled:  # the models do not fit: the pane scrolls sideways, the item column stays in view
            assert page.evaluate("() => { const g = document.getElementById('grid');"
                                 " return g.scrollWidth > g.clientWidth + 100; }")
            page.evaluate("() => { const g = document.getElementById('grid'); g.scrollLeft = g.scrollWidth; }")
            page.wait_for_function("() => document.getElementById('grid').scrollLeft > 0")
        got = _column_centres(page)
        assert len(got["cols"]) == WIDE_MODELS
        for column in got["cols"]:  # header and every row: the same x, long item text or short
            assert max(column) - min(column) < 1, column
        lefts = {round(left) for left, _ in got["ids"]}
        rights = {round(right) for _, right in got["ids"]}
        assert lefts == {round(pane["x"])} and len(rights) == 1, got["ids"]  # one width, pinned to the left
        assert got["cols"][0][0] < got["cols"][1][0]
    # scrolled to the end, the last model column is whole inside the pane, right of the item column
    last = page.locator(".ghead > div").last.bounding_box()
    assert last["x"] + last["width"] <= pane["x"] + pane["width"] + 1
    assert last["x"] >= max(r for _, r in got["ids"]) - 1
    # the keyboard brings a column hidden under the item column back into view
    page.locator(".row .cell").last.click()
    for _ in range(WIDE_MODELS):
        page.keyboard.press("ArrowLeft")
    first = page.locator(".row .cell.sel").bounding_box()
    assert first["x"] >= max(r for _, r in _column_centres(page)["ids"]) - 1
