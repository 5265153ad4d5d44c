"""Issue 31's editor features in a real VS Code (code-server 4.100, the packaged extension), on real files
from ../shared/corpus, read on screen and checked against what the engine then does with the file:

- the inlay hints on the lines of a real blueprint without prompt ids (`id: hash-…`, each point's share,
  `CORE · 33 models`) against the ids and weights a real `-m echo` run writes, and the collections a dry
  run resolves; the Run lenses' `≈ $…, N calls` against `evalspec run --dry-run`;
- F2 on a `point_defs` name and on an AgentV test id in a suite's tests file: the new name typed, Enter;
  the saved files check clean and run identically; a clash refused with its reason on screen;
- the Problems panel listing an eval file that was never opened, and following it when it changes on disk.

One workbench for the module, with VS Code's inlay hints on (test_vscode.py turns them off to read typed
lines). Each test saves a screenshot, the page's text and the logs under .ci/artefacts/vscode/ when a
step fails.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evalspec.analysis import analyze
from evalspec.ide.run_costs import RunCost

from .test_vscode import EDITOR_PATH, save_artefacts
from .workbench import VSIX, CodeServer, Workbench, missing, readme_settings, workspace_venv

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
WEVAL = CORPUS / "weval-configs"
AGENTV = CORPUS / "agentv-examples" / "examples" / "features" / "suite-level-input" / "evals"
EVALSPEC = str(Path(sys.executable).with_name("evalspec"))

# An eval file nobody opens in the editor: its findings reach the Problems panel from the workspace scan.
UNOPENED = """\
title: Never opened
models: [echo]
---
- id: greet
  prompt: Say hello
  shuld:
    - $contains: hello
"""


def without_prompt_ids(text: str) -> str:
    """A real blueprint as an author writes it before naming its prompts: the prompts' `id:` lines removed
    (the header's own `id` stays: it is not a prompt's)."""
    head, sep, body = text.partition("\n---\n")
    return head + sep + re.sub(r"^id: .*\n", "", body, flags=re.M)


@dataclass
class Session:
    ws: Path
    server: CodeServer
    wb: Workbench


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    why = missing()
    assert why is None, why
    assert CORPUS.is_dir(), f"the real-files corpus is expected at {CORPUS}"
    root = tmp_path_factory.mktemp("features")
    ws = root / "ws"
    workspace_venv(ws)
    # A Weval project as its repository lays it out: blueprints/ beside models/ (the collections).
    shutil.copytree(WEVAL / "models", ws / "models")
    (ws / "blueprints").mkdir()
    (ws / "blueprints" / "pix.yml").write_text(
        without_prompt_ids((WEVAL / "blueprints" / "brazil-pix-consumer-protection.yml").read_text()))
    shutil.copy(WEVAL / "blueprints" / "compass" / "proactive.yml", ws / "blueprints" / "proactive.yml")
    shutil.copytree(AGENTV, ws / "evals")
    (ws / "checks").mkdir()
    (ws / "checks" / "unopened.weval.yml").write_text(UNOPENED)
    server = CodeServer(root / "home", readme_settings(), EDITOR_PATH)  # VS Code's inlay hints: on (its default)
    server.install(VSIX)
    with server, Workbench.open(server.url_for(ws)) as wb:
        yield Session(ws, server, wb)


def evalspec(*args: str, cwd: Path, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["nice", EVALSPEC, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode in ok, f"evalspec {' '.join(args)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def comparison(out: Path) -> dict[str, Any]:
    [found] = list(out.rglob("*_comparison.json"))
    return dict(json.loads(found.read_text()))


def dry_run(path: Path, cwd: Path, *args: str) -> dict[str, Any]:
    """`evalspec run --dry-run --json` (exit 1 or 2: the plan lists the keys it lacks; the estimate is made)."""
    proc = evalspec("run", str(path), "--dry-run", "--json", *args, cwd=cwd, ok=(0, 1, 2))
    assert proc.stdout.startswith("{"), f"evalspec run --dry-run {' '.join(args)}: {proc.stderr}"
    return dict(json.loads(proc.stdout)["plan"])


def lens_text(plan: dict[str, Any]) -> str:
    cost = plan["cost"]
    return RunCost(None if cost["unpriced"] else cost["usd"], sum(line["calls"] for line in cost["lines"]),
                   bool(cost["notes"]), tuple(cost["unpriced"])).text()


def share(hint: str) -> float:
    found = re.fullmatch(r"(\d+(?:\.\d)?) %", hint)
    assert found, f"not a share: {hint!r}"
    return float(found.group(1))


def test_hints_on_the_lines_are_the_ids_weights_and_models_a_run_uses(session: Session, tmp_path: Path,
                                                                       request: pytest.FixtureRequest) -> None:
    ws, wb = session.ws, session.wb
    path = ws / "blueprints" / "pix.yml"
    text = path.read_text()
    count = len(text.splitlines())
    step = "opening the blueprint"
    try:
        wb.open_file("pix.yml")
        wb.wait(lambda: wb.lenses(), "the run lenses")
        step = "the hints on screen"
        wb.wait(lambda: wb.hints(), "the inlay hints")
        hints = wb.all(wb.hints, count)
        shown = wb.all(wb.text_lines, count)
        assert shown == dict(enumerate(text.splitlines())), "the hints are not the line's text"

        # The models: each collection's hint is the size of its definition (models/NAME.json), and the
        # collections are what a dry run resolves the file's models to.
        collections = {line: shown[line][2:] for line in hints if shown[line].startswith("- ") and
                       (ws / "models" / f"{shown[line][2:]}.json").exists()}
        assert sorted(collections.values()) == ["CLAUDES", "CORE", "FRONTIER", "OPENAI_GPT4O_SNAPSHOTS"]
        resolved: list[str] = []
        for line, name in collections.items():
            models = json.loads((ws / "models" / f"{name}.json").read_text())
            assert hints[line] == [f"· {len(models)} models"], (name, hints[line])
            resolved += [m for m in models if m not in resolved]
        assert dry_run(path, ws)["models"] == resolved

        # The prompts: the id hint at the end of each prompt's line, the shares on its points' lines.
        prompts: list[tuple[str, list[float]]] = []
        for line in sorted(hints):
            if line in collections:
                continue
            for hint in hints[line]:
                if hint.startswith("id: "):
                    assert shown[line].startswith("prompt: "), (line, shown[line])
                    prompts.append((hint[4:], []))
                else:
                    assert prompts and shown[line].startswith("- "), (line, shown[line], hint)
                    prompts[-1][1].append(share(hint))
        assert len(prompts) == 7

        step = "a real -m echo run"
        out = tmp_path / "results"
        evalspec("run", str(path), "-m", "echo", "--judge", "echo", "-o", str(out), "--no-report", cwd=ws, ok=(0, 1))
        result = comparison(out)
        scores = result["evaluationResults"]["llmCoverageScores"]
        # The ids the results carry (promptIds sorted, as Weval writes them; the scores in the file's order).
        assert result["promptIds"] == sorted(pid for pid, _ in prompts)
        assert list(scores) == [pid for pid, _ in prompts]
        assert all(pid.startswith("hash-") for pid in result["promptIds"])
        for pid, shares in prompts:
            [cell] = scores[pid].values()
            weights = [a["multiplier"] for a in cell["pointAssessments"]]
            assert len(weights) == len(shares), (pid, weights, shares)
            for weight, hint in zip(weights, shares, strict=True):
                assert abs(hint - 100 * weight / sum(weights)) < 0.05 + 1e-9, (pid, weights, shares)
        assert {w for _, s in prompts for w in s} > {50.0}, "the file's weights give unequal shares"

        step = "the hints follow an edit"
        weight = text.splitlines().index("  weight: 2")  # the first prompt's first point: 2 of 4.5
        wb.goto(weight + 1, 11)
        wb.press("Shift+End")
        wb.type("3")  # 3 of 5.5: 54.5 %, 27.3 %, 18.2 %

        def first_prompt() -> list[str]:
            shown = wb.hints()
            return [h for line in sorted(shown) if weight - 3 <= line <= weight + 6 for h in shown[line]]

        wb.wait(lambda: first_prompt() == ["54.5 %", "27.3 %", "18.2 %"], "the shares after the edit", 15)
        edited = wb.all(wb.hints, count)
        assert f"id: {prompts[0][0]}" not in [h for found in edited.values() for h in found]  # a hash of the content
        wb.press("Control+z")
        wb.wait(lambda: first_prompt() == ["44.4 %", "33.3 %", "22.2 %"], "the shares after the undo", 15)
        wb.wait(lambda: not wb.page.locator(".tab.active.dirty").count(), "the file as it was")
        wb.wait(lambda: path.read_text() == text, "the file on disk as it was")

    except BaseException:
        save_artefacts(wb, session.server, request.node.name, step)
        raise



def test_the_run_lenses_show_what_the_dry_run_estimates(session: Session, request: pytest.FixtureRequest) -> None:
    """Each Run lens's `≈ $…, N calls`, read on screen, is `evalspec run --dry-run` for the editor's models
    (the README's settings) and the default judges: the file's, and each prompt's (`--prompt ID`)."""
    ws, wb = session.ws, session.wb
    path = ws / "blueprints" / "pix.yml"
    text = path.read_text()
    count = len(text.splitlines())
    step = "the Run lenses' estimates"
    try:
        wb.open_file("pix.yml")
        def sized() -> bool:
            found = wb.lenses(costs=True)
            return bool(found) and all(" · " in titles[0] for titles in found.values())

        wb.wait(sized, "the lenses' estimates")
        def costed() -> dict[int, list[str]]:
            return {n: t for n, t in wb.lenses(costs=True).items() if " · " in t[0]}

        lenses = wb.all(costed, count)
        # The file's lens sits above line 1: the view scrolled right up to show it (Ctrl+G stops at the line).
        wb.goto(1)
        wb.page.locator(".part.editor .editor-instance .monaco-editor .view-lines").first.hover()
        wb.page.mouse.wheel(0, -5000)
        lenses.update(wb.wait(lambda: (found := costed()).get(0) and found, "the file's Run lens", 15))
        assert len(lenses) == 8, lenses
        settings = readme_settings()["evalspec.run.models"]
        plan = dry_run(path, ws, *[a for m in settings for a in ("-m", m)])
        file_line = min(lenses)
        assert lenses[file_line][0] == f"▶ Run all (7 prompts) · {lens_text(plan)}"
        ids = iter(p.id for p in analyze(path.read_text(), path).blueprint.prompts)
        for line in sorted(lenses)[1:]:
            one = dry_run(path, ws, "--prompt", next(ids), *[a for m in settings for a in ("-m", m)])
            assert lenses[line][0] == f"▶ Run · {lens_text(one)}", line
        assert re.search(r"≈ \$\d", lenses[file_line][0])
    except BaseException:
        save_artefacts(wb, session.server, request.node.name, step)
        raise


def scores_of(result: dict[str, Any], old: str = "", new: str = "") -> dict[str, Any]:
    """What a run scored, per prompt and model: each point's text (with `old` read as `new`), weight,
    verdict and error, and the average."""
    out: dict[str, Any] = {}
    for pid, by_model in result["evaluationResults"]["llmCoverageScores"].items():
        for model, cell in by_model.items():
            out[f"{pid} {model}"] = (cell.get("avgCoverageExtent"), [
                (str(a.get("keyPointText", "")).replace(old, new) if old else a.get("keyPointText"),
                 a.get("multiplier"), a.get("coverageExtent"), a.get("isInverted"), a.get("error"))
                for a in cell.get("pointAssessments", [])])
    return out


def rename_at(wb: Workbench, line: int, column: int, new: str) -> None:
    """F2 on the 0-based line and column, the new name typed over the old one, Enter."""
    wb.goto(line + 1, column + 1)
    for attempt in range(6):
        # Pressed while the server still checks the file, F2 says so ("… ask again in a moment"): again.
        wb.press("F2")
        try:
            wb.wait(lambda: wb.page.evaluate("() => !!document.activeElement?.closest('.rename-box')"),
                    "the rename box, with the keyboard in it", 5)
            break
        except AssertionError:
            if attempt == 5:
                raise
            wb.press("Escape")
    box = wb.page.locator(".rename-box input, .rename-box .rename-input").first
    box.fill(new)  # over the old name, which the box holds selected
    box.press("Enter")


def test_renaming_a_point_definition_leaves_a_file_that_checks_clean_and_runs_the_same(
        session: Session, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    ws, wb = session.ws, session.wb
    path = ws / "blueprints" / "proactive.yml"
    before = path.read_text()
    assert before.count("mcq_scorer") == 6  # the definition and five $refs
    lines = before.splitlines()
    step = "F2 on the definition"
    try:
        wb.open_file("proactive.yml")
        wb.wait(lambda: wb.lenses(), "the run lenses")
        at = lines.index("  mcq_scorer:")
        rename_at(wb, at, 4, "mcq_choice")
        wb.wait(lambda: wb.text_lines().get(at) == "  mcq_choice:", "the definition renamed in the editor")
        wb.save()
        step = "the file on disk"
        after = wb.wait(lambda: (text := path.read_text()) != before and text, "the renamed file saved")
        assert after == before.replace("mcq_scorer", "mcq_choice")
        original = tmp_path / "before" / "blueprints" / "proactive.yml"
        original.parent.mkdir(parents=True)
        original.write_text(before)
        shutil.copytree(ws / "models", original.parents[1] / "models")  # the same project around it
        # Clean: no error, and the same findings as before the rename (the corpus file has one warning).
        check = evalspec("check", "blueprints/proactive.yml", cwd=ws)
        assert "0 error(s)" in check.stderr, check.stderr
        assert check.stdout == evalspec("check", "blueprints/proactive.yml", cwd=original.parents[1]).stdout

        step = "the runs before and after"
        args = ("-m", "echo", "--judge", "echo", "--no-report")
        evalspec("run", str(original), *args, "-o", str(tmp_path / "r1"), cwd=tmp_path, ok=(0, 1))
        evalspec("run", str(path), *args, "-o", str(tmp_path / "r2"), cwd=tmp_path, ok=(0, 1))
        first, second = comparison(tmp_path / "r1"), comparison(tmp_path / "r2")
        assert first["promptIds"] == second["promptIds"]
        scored = scores_of(first, "mcq_scorer", "mcq_choice")
        assert scored == scores_of(second)
        # The $js points the definition holds were scored (echo answers with the prompt: a letter is found).
        assert any(extent is not None for _, points in scored.values() for _, _, extent, _, _ in points)

        step = "a clash refused"
        pid = "mcq-potential-problem"
        at = next(n for n, line in enumerate(lines) if line == f"- id: {pid}")
        rename_at(wb, at, 7, "mcq-improvement-opportunities")
        message = ("Cannot rename 'mcq-potential-problem' to 'mcq-improvement-opportunities': another prompt has "
                   "the id 'mcq-improvement-opportunities'")
        wb.wait(lambda: message in wb.page_text(), "the refusal on screen")
        wb.press("Escape")
        assert wb.text_lines().get(at) == f"- id: {pid}"
        assert not wb.page.locator(".tab.active.dirty").count()
        assert path.read_text() == after
    except BaseException:
        save_artefacts(wb, session.server, request.node.name, step)
        raise


def test_the_problems_panel_lists_a_file_never_opened_and_follows_it_on_disk(
        session: Session, request: pytest.FixtureRequest) -> None:
    ws, wb = session.ws, session.wb
    path = ws / "checks" / "unopened.weval.yml"
    step = "the Problems panel"
    try:
        assert "unopened.weval.yml" not in wb.page.locator(".tabs-container").inner_text()
        wb.command("Problems: Focus on Problems View")
        typo = "Unknown key 'shuld' in a prompt; did you mean 'should'?"
        rows = wb.wait(lambda: [p for p in wb.problems() if typo in p], "the unopened file's finding")
        assert "[Ln 6, Col 3]" in rows[0]
        assert any("unopened.weval.yml" in p for p in wb.problems())

        step = "the file changed on disk"
        path.write_text(UNOPENED.replace("shuld", "should").replace("models: [echo]", "modles: [echo]"))
        wb.wait(lambda: not [p for p in wb.problems() if typo in p], "the fixed typo gone from the panel")
        rows = wb.wait(lambda: [p for p in wb.problems() if "'modles'" in p], "the new finding in the panel")
        assert "[Ln 2, Col 1]" in rows[0]
        assert "unopened.weval.yml" not in wb.page.locator(".tabs-container").inner_text()
    except BaseException:
        save_artefacts(wb, session.server, request.node.name, step)
        raise


def agentv_results(out: Path, old: str = "", new: str = "") -> list[dict[str, Any]]:
    """A run's records, keyed by what it decided (the timings and dates left out; `old` ids read as `new`)."""
    [found] = list(out.rglob("*.jsonl"))
    keep = ("test_id", "answer", "score", "verdict", "scores", "hits", "misses", "error", "execution_status")
    records = [json.loads(line) for line in found.read_text().splitlines() if line.strip()]
    out_records = [{k: r.get(k) for k in keep} for r in records]
    for r in out_records:
        if old and r["test_id"] == old:
            r["test_id"] = new
    return sorted(out_records, key=lambda r: str(r["test_id"]))


def test_renaming_a_test_id_in_a_suites_tests_file(session: Session, tmp_path: Path,
                                                   request: pytest.FixtureRequest) -> None:
    """F2 on a test id in the tests file a real AgentV suite includes (`tests: ./cases.yaml`): renamed there,
    the suite checks as before and runs the same; a clash with another of the suite's tests is refused."""
    ws, wb = session.ws, session.wb
    cases, suite = ws / "evals" / "cases.yaml", ws / "evals" / "dataset.eval.yaml"
    before = cases.read_text()
    lines = before.splitlines()
    step = "F2 on the test id"
    try:
        wb.open_file("cases.yaml")
        at = lines.index("- id: iceland-northern-lights")
        wb.wait(lambda: wb.text_lines().get(at) == lines[at], "the tests file on screen")
        rename_at(wb, at, 8, "iceland-aurora")
        wb.wait(lambda: wb.text_lines().get(at) == "- id: iceland-aurora", "the id renamed in the editor")
        wb.save()
        step = "the files on disk"
        after = wb.wait(lambda: (text := cases.read_text()) != before and text, "the tests file saved")
        assert after == before.replace("iceland-northern-lights", "iceland-aurora")
        original = tmp_path / "before" / "evals"
        shutil.copytree(AGENTV, original)
        check = evalspec("check", "evals/dataset.eval.yaml", cwd=ws)
        assert "0 error(s)" in check.stderr, check.stderr
        assert check.stdout == evalspec("check", "evals/dataset.eval.yaml", cwd=original.parent).stdout

        step = "the runs before and after"
        evalspec("run", str(original / "dataset.eval.yaml"), "-m", "echo", "--no-report", "-o", str(tmp_path / "r1"),
                 cwd=tmp_path, ok=(0, 1))
        evalspec("run", str(suite), "-m", "echo", "--no-report", "-o", str(tmp_path / "r2"), cwd=tmp_path, ok=(0, 1))
        first = agentv_results(tmp_path / "r1", "iceland-northern-lights", "iceland-aurora")
        assert first == agentv_results(tmp_path / "r2")
        assert [r["test_id"] for r in first] == ["iceland-aurora", "japan-spring", "skip-suite-input"]

        step = "a clash refused"
        at = lines.index("- id: japan-spring")
        rename_at(wb, at, 8, "skip-suite-input")
        message = "Cannot rename 'japan-spring' to 'skip-suite-input': another test has the id 'skip-suite-input'"
        wb.wait(lambda: message in wb.page_text(), "the refusal on screen")
        wb.press("Escape")
        assert wb.text_lines().get(at) == "- id: japan-spring"
        assert cases.read_text() == after
    except BaseException:
        save_artefacts(wb, session.server, request.node.name, step)
        raise
