"""A big blueprint opened in a real VS Code (code-server 4.100, the packaged extension): its first check
outlasts the request budget, so the outline, folding, lenses, links, semantic tokens and hints VS Code
asks for on opening are answered "still checking". No error is shown or logged for them (no toast, no
`Request … failed` in the evalspec output channel, where vscode-languageclient writes a failed
request), and the answers come once the file is checked: its mistake in the Problems panel, its Run
lenses (the server asks for them again) and its outline (the extension asks again: VS Code would not).

The client's trace of the messages (`evalspec.trace.server`) is in the same channel: it shows that the
"still checking" answers did happen. A screenshot, the page's text and the logs are saved under
.ci/artefacts/vscode/ when a step fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from .test_vscode import EDITOR_PATH, save_artefacts
from .workbench import VSIX, CodeServer, Workbench, missing, readme_settings, workspace_venv


def big_blueprint(size: int) -> str:
    """A blueprint of about `size` bytes, with one mistake (`shuld`) in its last prompt."""
    parts = ["title: Big\nmodels: [openai:gpt-4o-mini]\n---\n"]
    total, i = len(parts[0]), 0
    while total < size:
        parts.append(f"- id: p{i}\n  prompt: Explain concept {i} in two sentences.\n  should:\n"
                     f"    - mentions concept {i}\n    - $contains: answer\n")
        total += len(parts[-1])
        i += 1
    parts.append("- id: last\n  prompt: Say hello\n  shuld:\n    - hello\n")
    return "".join(parts)


def channel(server: CodeServer) -> str:
    """What the evalspec output channel holds (VS Code keeps each extension's channel in a log file)."""
    return "\n".join(p.read_text("utf-8", "replace") for p in (server.user_data / "logs").rglob("*evalspec*.log"))


def channel_with_trace(server: CodeServer) -> Callable[[], str | None]:
    """The channel once the client has traced a request there."""

    def read() -> str | None:
        log = channel(server)
        return log if "textDocument/documentSymbol" in log else None

    return read


def test_a_big_file_still_checking_shows_no_error(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    why = missing()
    assert why is None, why
    ws = tmp_path / "ws"
    workspace_venv(ws)
    (ws / "big.weval.yml").write_text(big_blueprint(1 << 20))
    settings = {**readme_settings(), "evalspec.trace.server": "messages"}
    server = CodeServer(tmp_path / "home", settings, EDITOR_PATH)
    server.install(VSIX)
    step = "starting"
    with server, Workbench.open(server.url_for(ws)) as wb:
        try:
            step = "the big file opened"
            wb.open_file("big.weval.yml")
            toasts: list[str] = []

            def checked() -> bool:
                toasts.extend(t for t in wb.notifications() if t not in toasts)
                return any("shuld" in p for p in wb.problems())

            wb.command("Problems: Focus on Problems View")
            wb.wait(checked, "the mistake in the Problems panel", 50)

            step = "the answers once checked"
            wb.editor_focus()
            lenses = wb.wait(lambda: (found := wb.lenses()).get(0) and found, "the Run lenses", 20)
            assert lenses[0][0].startswith("▶ Run all ("), lenses
            wb.command("Explorer: Focus on Outline View")
            outline = wb.wait(lambda: wb.outline(), "the outline", 20)
            assert any(name in ("Big", "p0") or name.startswith("p") for name in outline), outline

            step = "no error shown or logged"
            toasts.extend(t for t in wb.notifications() if t not in toasts)
            assert not [t for t in toasts if "evalspec" in t.lower() or "failed" in t.lower()], toasts
            log = wb.wait(channel_with_trace(server), "the evalspec output channel", 10)
            still = re.findall(r"still checking big\.weval\.yml[^\n]*", log)
            assert still, "no request was answered 'still checking': the test did not see what it is about"
            assert "(-32802)" in log  # ServerCancelled: vscode-languageclient makes it a cancellation
            # Besides "still checking": requests VS Code itself cancelled (RequestCancelled, -32800).
            failed = [line for line in log.splitlines() if line.startswith("[Error") or (
                "Request failed" in line and "still checking" not in line and "(-32800)" not in line)]
            assert not failed, failed
        except Exception:
            save_artefacts(wb, server, request.node.name, step)
            raise

