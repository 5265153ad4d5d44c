"""The packaged extension in a real VS Code (code-server 4.100), used as a person uses it: the server
found in the workspace's .venv (it is on no PATH the editor has), a typo in the Problems panel and its
quick fix, completions that leave the exact line, hover and outline, a Run lens with `echo` and its
result on the line and in the status bar, a run cancelled from its progress notification, and after
reloading the window the same results, file summary and status bar.

Assertions read what the workbench shows (its DOM) and the saved files. When a step fails, a screenshot
and the page's text are saved under .ci/artefacts/vscode/ (EVALSPEC_CI_ARTEFACTS) with code-server's
and the extension host's logs.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..fakeprovider import FakeProvider, Reply
from .workbench import ARTEFACTS, VSIX, CodeServer, Workbench, missing, readme_settings, workspace_venv

CAPITALS = """\
title: Capitals
models:
  - openai:gpt-4o-mini
---
- id: france
  prompt: What is the capital of France?
  shuld:
    - Mentions Paris
- id: greeting
  prompt: Say hello
  should:
    - $contains: hello
"""

SUITE = """\
name: demo
tests:
  - id: hello
    input: say hello
    criteria: says hello
    assert:
      - type: contains
        value: hello
      - type:
"""

SLOW = """\
title: Slow
models:
  - id: local:fake
    url: {url}
    modelName: fake-1
    inherit: openai
  - echo
---
- id: greet
  prompt: Say hello
  should:
    - $contains: hello
"""

AGE = re.compile(r" \((just now|\d+ min ago)\)")
EDITOR_PATH = "/usr/local/bin:/usr/bin:/bin"  # the extension host's PATH: no evalspec-lsp on it


def without_age(lenses: dict[int, list[str]]) -> dict[int, list[str]]:
    return {line: [AGE.sub("", t) for t in titles] for line, titles in lenses.items()}


def save_artefacts(wb: Workbench, server: CodeServer, test: str, step: str) -> None:
    """What a failed step left on screen, the page's text and the logs, under .ci/artefacts/vscode/<test>/."""
    out = ARTEFACTS / "vscode" / test
    shutil.rmtree(out, ignore_errors=True)
    wb.screenshot(out / f"{step.replace(' ', '-').replace('`', '')[:60]}.png")
    (out / "page.txt").write_text(f"step: {step}\n\n{wb.page_text()}")
    shutil.copy(server.log, out / "code-server.log")
    for log in (server.user_data / "logs").rglob("*.log"):
        if "exthost" in str(log) or "evalspec" in log.name:
            shutil.copy(log, out / f"{log.parent.name}-{log.name}")


def saved(wb: Workbench, path: Path, line: int, expected: str) -> None:
    """The editor shows `expected` on the 0-based `line`; saved (Ctrl+S), the file on disk has it too."""
    wb.wait(lambda: wb.lines().get(line) == expected, f"the editor's line {line + 1} to read {expected!r}", 15)
    wb.save()
    wb.wait(lambda: path.read_text().splitlines()[line] == expected, f"{path.name} saved with {expected!r}", 15)


def evalspec_status(wb: Workbench) -> str | None:
    return next((t for t in wb.status_items() if t.startswith("evalspec ")), None)


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[tuple[Path, FakeProvider]]:
    why = missing()
    assert why is None, why
    assert shutil.which("evalspec-lsp", path=EDITOR_PATH) is None, "evalspec-lsp must not be on the editor's PATH"
    ws = tmp_path / "ws"
    workspace_venv(ws)
    (ws / "capitals.weval.yml").write_text(CAPITALS)
    (ws / "suite.eval.yaml").write_text(SUITE)
    with FakeProvider() as fake:
        fake.then(Reply.hang(90), Reply.hang(90))
        (ws / "slow.weval.yml").write_text(SLOW.format(url=fake.url("/v1")))
        yield ws, fake


def test_a_person_uses_the_extension_in_vscode(workspace: tuple[Path, FakeProvider], tmp_path: Path,
                                               request: pytest.FixtureRequest) -> None:
    ws, fake = workspace
    settings = readme_settings()  # the user's settings, as the extension's README gives them
    assert settings["evalspec.run.models"] == ["echo"]
    # The typed lines are read from the editor's DOM, where VS Code draws inlay hints (issue 31: `50 %`
    # before a point) as text of the line: hints off in VS Code's own setting for this session.
    server = CodeServer(tmp_path / "home", {**settings, "editor.inlayHints.enabled": "off"}, EDITOR_PATH)
    server.install(VSIX)
    step = "starting"
    with server, Workbench.open(server.url_for(ws)) as wb:
        try:
            step = "the server starts from the workspace's .venv"
            wb.open_file("capitals.weval.yml")
            lenses = wb.wait(lambda: (found := wb.lenses()).get(8) and found, "the run lenses")
            assert lenses == {0: ["▶ Run all (2 prompts)", "Plan"], 4: ["▶ Run"], 8: ["▶ Run"]}
            # Each Run lens shows the run's estimate before it runs (issue 31), as `--dry-run` makes it.
            def estimated() -> dict[int, list[str]] | None:
                found = wb.lenses(costs=True)
                return found if found and all(" · " in titles[0] for titles in found.values()) else None

            costs = wb.wait(estimated, "the run lenses' estimates")
            assert re.fullmatch(r"▶ Run · (≈ \$[0-9.]+|cost unknown.*), \d+ calls?", costs[4][0]), costs[4]

            step = "the typo in the Problems panel"
            wb.command("Problems: Focus on Problems View")
            problems = wb.wait(lambda: [p for p in wb.problems() if "shuld" in p], "the typo in the Problems panel")
            assert "Unknown key 'shuld' in a prompt; did you mean 'should'?" in problems[0]
            assert "[Ln 7, Col 3]" in problems[0]

            step = "the quick fix"
            wb.goto(7, 4)
            assert "Rename 'shuld' to 'should'" in wb.code_actions()
            wb.pick("Rename 'shuld' to 'should'")
            saved(wb, ws / "capitals.weval.yml", 6, "  should:")
            wb.wait(lambda: not [p for p in wb.problems() if "shuld" in p], "the Problems panel cleared")
            # The header offers no code action (no lightbulb following the cursor there).
            wb.goto(2, 1)
            wb.press("Control+.")
            wb.wait(lambda: "No code actions available" in wb.page_text(), "no code actions on the header")
            wb.press("Escape")

            step = "`- $` completion"
            wb.goto(12, 1)
            wb.press("End", "Enter")
            wb.type("- $con")
            assert wb.wait(lambda: wb.suggestions(), "the completion list")[0] == "$contains"
            wb.pick("$contains")
            wb.type("Say")  # the snippet's placeholder
            wb.press("Escape")
            saved(wb, ws / "capitals.weval.yml", 12, '    - $contains: "Say"')

            step = "hover and outline"
            wb.goto(12, 9)
            wb.press("Control+k", "Control+i")
            hover = wb.wait(lambda: wb.hover_text(), "the hover")
            assert "$contains" in hover
            wb.press("Escape")
            wb.command("Explorer: Focus on Outline View")
            outline = wb.wait(lambda: "greeting" in (found := wb.outline()) and found, "the outline")
            assert [n for n in outline if n in ("Capitals", "france", "greeting")] == ["Capitals", "france", "greeting"]
            assert '$contains: "Say"' in outline or "$contains: Say" in outline

            step = "the Run lens with echo"
            wb.click_lens(8, "▶ Run")
            result = wb.wait(lambda: (found := wb.lenses()).get(8, [None])[-1] == "✓ 1.00 echo[temp:0]"
                             and found.get(0, [None])[-1].startswith("last run") and found, "the result lens")
            assert result[0] == ["▶ Run all (2 prompts)", "Plan", "last run: mean 1.00 · 1 pass · 0 fail"]
            assert result[4] == ["▶ Run"]  # only greeting ran
            assert wb.wait(lambda: evalspec_status(wb), "the status bar") == "evalspec mean 1.00"
            assert list((ws / "evalspec-results").rglob("*_comparison.json"))
            capitals_before, capitals_status = result, evalspec_status(wb)

            step = "AgentV `type:` completion and an empty type in the outline"
            wb.open_file("suite.eval.yaml")
            wb.wait(lambda: "contains" in wb.outline(), "the AgentV outline")
            assert "None" not in wb.outline() and "(no type)" in wb.outline()
            wb.goto(9, 14)
            wb.type(" con")
            assert wb.wait(lambda: wb.suggestions(), "the type completions")[0] == "contains"
            wb.pick("contains")
            saved(wb, ws / "suite.eval.yaml", 8, "      - type: contains")

            step = "a run cancelled from its progress notification"
            wb.open_file("slow.weval.yml")
            wb.wait(lambda: wb.lenses().get(8), "the slow file's lenses")
            wb.goto(9, 3)
            assert "Run prompt greet with local:fake" in wb.code_actions()
            wb.pick("Run prompt greet with local:fake")
            toast = wb.wait(lambda: [t for t in wb.notifications() if "evalspec: running greet" in t],
                            "the run's progress notification")
            assert "Cancel" in toast[0]
            wb.wait(lambda: fake.requests, "the call to the model")
            wb.page.locator(".notifications-toasts .notification-toast .monaco-button", has_text="Cancel").first.click()
            slow_before = wb.wait(lambda: (found := wb.lenses()).get(8, [None])[-1] == "⊘ cancelled local:fake[temp:0]"
                                  and found.get(0, [None])[-1].startswith("cancelled") and found, "⊘ cancelled")
            assert slow_before[0][-1] == "cancelled: nothing scored · 0 pass · 0 fail"
            slow_status = wb.wait(lambda: evalspec_status(wb), "the status bar after the cancel")
            assert slow_status == "evalspec nothing scored"

            step = "reloading the window"
            wb.command("Developer: Reload Window")
            wb.page.wait_for_timeout(2000)
            wb.page.wait_for_selector(".monaco-workbench .part.editor", timeout=60_000)
            wb.wait(lambda: wb.active_tab() == "slow.weval.yml", "the slow file open again")
            slow_after = wb.wait(lambda: len((found := wb.lenses()).get(8, [])) > 1 and len(found.get(0, [])) > 2
                                 and found, "the slow file's results after the reload")
            assert without_age(slow_after) == slow_before
            assert wb.wait(lambda: evalspec_status(wb), "the status bar after the reload") == slow_status
            wb.open_file("capitals.weval.yml")
            capitals_after = wb.wait(lambda: len((found := wb.lenses()).get(8, [])) > 1 and len(found.get(0, [])) > 2
                                     and found, "the capitals results after the reload")
            assert without_age(capitals_after) == capitals_before
            assert capitals_after[8][-1] == "✓ 1.00 echo[temp:0] (just now)"
            assert wb.wait(lambda: evalspec_status(wb) == capitals_status and capitals_status,
                           "the capitals status bar after the reload")
            assert len(fake.requests) == 1  # nothing ran again
        except BaseException:
            save_artefacts(wb, server, request.node.name, step)
            raise


def test_no_server_then_a_workspace_venv_starts_it(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Where evalspec-lsp is on no PATH and the workspace has no .venv yet: one message naming every place
    tried, with its two buttons; an install into a new .venv then starts the server, no reload."""
    why = missing()
    assert why is None, why
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "capitals.weval.yml").write_text(CAPITALS)
    server = CodeServer(tmp_path / "home", readme_settings(), EDITOR_PATH)
    server.install(VSIX)
    step = "starting"
    with server, Workbench.open(server.url_for(ws)) as wb:
        try:
            step = "the message"
            wb.open_file("capitals.weval.yml")
            [toast] = wb.wait(lambda: [t for t in wb.notifications() if "was not found" in t], "the not-found message")
            for tried in (f"{ws}/.venv/bin", f"{ws}/venv/bin", "the Python extension's interpreter", "PATH"):
                assert tried in toast, tried
            assert "Set evalspec.serverPath" in toast and "Install instructions" in toast
            assert wb.lenses() == {}

            step = "a .venv made afterwards"
            workspace_venv(ws)
            lenses = wb.wait(lambda: (found := wb.lenses()).get(8) and found, "the run lenses once the .venv has the server")
            assert lenses == {0: ["▶ Run all (2 prompts)", "Plan"], 4: ["▶ Run"], 8: ["▶ Run"]}
        except BaseException:
            save_artefacts(wb, server, request.node.name, step)
            raise
