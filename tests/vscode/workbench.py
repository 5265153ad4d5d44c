"""A real VS Code for tests: code-server (the workbench served to a browser) with the packaged extension,
driven in Debian's Chromium by Playwright's Python package as a person drives it (keys, clicks, what the
page shows). Nothing is downloaded: `.ci/run` installs code-server from npm and builds the .vsix.

    with CodeServer(workspace, home) as server, Workbench.open(server.url_for(workspace), artefacts) as wb:
        wb.open_file("capitals.weval.yml")
        wb.wait(lambda: "▶ Run" in wb.lenses().get(8, []), "the run lens")

The workbench's DOM is VS Code's own, not an API: these helpers keep the selectors in one place.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[2]
CODE_SERVER = Path(os.environ.get("EVALSPEC_CODE_SERVER")
                   or REPO / ".ci" / "tools" / "code-server" / "node_modules" / ".bin" / "code-server")
VSIX = REPO / "editors" / "vscode" / "evalspec.vsix"
CHROMIUM = "/usr/bin/chromium"
ARTEFACTS = Path(os.environ.get("EVALSPEC_CI_ARTEFACTS") or REPO / ".ci" / "artefacts")
T = TypeVar("T")

# What a new user's settings would not have but a test needs: no welcome page, no trust prompt, no
# telemetry or update checks (nothing leaves 127.0.0.1), no minimap to cover the lenses.
SETTINGS: dict[str, Any] = {
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "workbench.tips.enabled": False,
    "editor.minimap.enabled": False,
    "workbench.enableExperiments": False,
}


def readme_settings() -> dict[str, Any]:
    """The settings the extension's README tells users to set (its json block after the marker)."""
    text = (REPO / "editors" / "vscode" / "README.md").read_text()
    after = text[text.index("<!-- settings:"):]
    block = after[after.index("```json\n") + len("```json\n"):]
    return dict(json.loads(block[:block.index("```")]))


def workspace_venv(ws: Path) -> Path:
    """The workspace's virtual environment as the README's quick start makes it: `.venv/bin/evalspec-lsp`,
    the script of this interpreter (which has evalspec installed). Its bin folder."""
    script = Path(sys.executable).with_name("evalspec-lsp")
    assert script.exists(), f"{script}: pip install -e . first"
    venv_bin = ws / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "evalspec-lsp").write_text(script.read_text())
    (venv_bin / "evalspec-lsp").chmod(0o755)
    return venv_bin


def missing() -> str | None:
    """Why the real VS Code cannot run here, or None."""
    if not CODE_SERVER.exists():
        return f"code-server is not installed at {CODE_SERVER}: run `bash .ci/run` (it installs it offline)"
    if not VSIX.exists():
        return f"the extension is not packaged: {VSIX} (cd editors/vscode && npm ci && npm run package)"
    if not Path(CHROMIUM).exists():
        return "Debian's Chromium is required: apt-get install -y chromium"
    return None


class CodeServer:
    """code-server on 127.0.0.1 (a free port), its user data, extensions and home in `home`, the packaged
    extension installed with --install-extension. `path` is the PATH the editor (and so the extension
    host) gets: the test leaves evalspec-lsp off it, as a desktop launcher does."""

    def __init__(self, home: Path, settings: dict[str, Any], path: str) -> None:
        self.home = home
        self.user_data = home / "user-data"
        self.extensions = home / "extensions"
        self.log = home / "code-server.log"
        self.env = {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8",
                    "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
                    "XDG_CACHE_HOME": str(home / "cache"), "XDG_STATE_HOME": str(home / "state"),
                    "EVALSPEC_CACHE_KEY": os.environ.get("EVALSPEC_CACHE_KEY", "evalspec tests: not a secret")}
        (self.user_data / "User").mkdir(parents=True, exist_ok=True)
        (self.user_data / "User" / "settings.json").write_text(json.dumps({**SETTINGS, **settings}, indent=2))
        self.config = home / "code-server.yaml"
        self.config.write_text("bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n")
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def _cmd(self, *args: str) -> list[str]:
        node = shutil.which("node")
        assert node, "Node.js is required (apt-get install -y nodejs)"
        return [node, str(CODE_SERVER.resolve()), "--config", str(self.config), "--user-data-dir", str(self.user_data),
                "--extensions-dir", str(self.extensions), *args]

    def install(self, vsix: Path) -> str:
        proc = subprocess.run(self._cmd("--install-extension", str(vsix), "--force"), env=self.env,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0 and "successfully installed" in proc.stdout, proc.stdout + proc.stderr
        return proc.stdout

    def __enter__(self) -> CodeServer:
        log = self.log.open("wb")
        self.proc = subprocess.Popen(self._cmd("--auth", "none", "--bind-addr", "127.0.0.1:0", "--disable-telemetry",
                                               "--disable-update-check", "--disable-workspace-trust",
                                               "--disable-getting-started-override"),
                                     env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = re.search(r"HTTP server listening on (http://127\.0\.0\.1:\d+)/", self.log.read_text("utf-8", "replace"))
            if found:
                self.url = found.group(1)
                return self
            assert self.proc.poll() is None, f"code-server exited: {self.log.read_text()}"
            time.sleep(0.1)
        raise AssertionError(f"code-server did not start in 60 s: {self.log.read_text()}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(10)

    def url_for(self, folder: Path) -> str:
        return f"{self.url}/?folder={folder}"


class Workbench:
    """One browser page on the workbench. Every wait names what it waits for; a failed one raises with
    that name (the test saves a screenshot and the page's text beside it)."""

    def __init__(self, page: Any) -> None:
        self.page = page

    @classmethod
    @contextlib.contextmanager
    def open(cls, url: str) -> Iterator[Workbench]:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(url)
                page.wait_for_selector(".monaco-workbench .part.editor", timeout=60_000)
                yield cls(page)
            finally:
                browser.close()

    # --- waiting -----------------------------------------------------------------------------------------

    def wait(self, check: Callable[[], T], what: str, timeout: float = 60.0) -> T:
        deadline = time.monotonic() + timeout
        last: Any = None
        while True:
            try:
                last = check()
            except Exception as exc:  # the DOM changed under the query: ask again
                last = exc
            if last and not isinstance(last, Exception):
                return last
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout:.0f} s for {what}; last seen: {last!r}")
            self.page.wait_for_timeout(150)

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path))

    # --- keys and commands -------------------------------------------------------------------------------

    def press(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)

    def type(self, text: str) -> None:
        self.page.keyboard.type(text, delay=30)

    def command(self, title: str) -> None:
        """Run a command from the palette (F1) by its title, as a person types it."""
        box = self.quick_input("F1")
        box.fill(">" + title)
        self.wait(lambda: any(title.lower() in t.lower() for t in self.quick_pick_rows()), f"'{title}' in the palette", 15)
        self.press("Enter")

    def quick_input(self, key: str) -> Any:
        """Open a quick input (F1, Ctrl+P, Ctrl+G) from the editor: its text box, once visible."""
        box = self.page.locator(".quick-input-widget .quick-input-box input")
        for attempt in range(3):
            self.press("Escape")
            self.editor_focus()
            self.press(key)
            try:
                box.wait_for(state="visible", timeout=5000)
                return box
            except Exception:
                if attempt == 2:
                    raise
        return box

    def focused_row(self) -> list[str]:
        return self.page.locator(".quick-input-widget .monaco-list-row.focused").all_inner_texts()

    def quick_pick_rows(self) -> list[str]:
        return self.page.locator(".quick-input-widget .monaco-list-row").all_inner_texts()

    def code_actions(self) -> list[str]:
        """Ctrl+. at the cursor: the titles in the menu (the menu stays open)."""
        self.press("Control+.")
        return self.wait(lambda: self.page.locator(".action-widget .monaco-list-row").all_inner_texts(),
                         "the code action menu", 15)

    def pick(self, title: str) -> None:
        """Choose the menu entry (code actions, completion) that contains `title`, with the arrow keys."""
        for _ in range(40):
            focused = self.page.locator(".action-widget .monaco-list-row.focused, "
                                        ".suggest-widget .monaco-list-row.focused").all_inner_texts()
            if focused and title in focused[0]:
                self.press("Enter")
                return
            self.press("ArrowDown")
            self.page.wait_for_timeout(50)
        raise AssertionError(f"no '{title}' in the menu")

    def editor_focus(self) -> None:
        """Ctrl+1: the keyboard into the editor (a click could land on a lens and run it)."""
        self.press("Control+1")

    def open_file(self, name: str) -> None:
        """Quick Open (Ctrl+P), as a person opens a file by name (a file made a moment ago may take the
        file search a few seconds to list: asked again)."""
        tab = self.page.locator(".tabs-container .tab", has=self.page.locator(".label-name", has_text=name))
        if tab.count():  # open already: its tab is clicked
            tab.first.click()
            self.wait(lambda: self.active_tab() == name, f"{name} open in the editor", 15)
            return
        for attempt in range(6):
            box = self.quick_input("Control+p")
            box.fill(name)
            try:
                self.wait(lambda: any(name in t for t in self.focused_row()),
                          f"{name} in Quick Open", 5)
                break
            except AssertionError:
                if attempt == 5:
                    raise
        self.press("Enter")
        self.wait(lambda: self.active_tab() == name, f"{name} open in the editor", 15)

    def active_tab(self) -> str:
        return self.page.locator(".tab.active .label-name").first.inner_text(timeout=2000).strip()

    def goto(self, line: int, column: int = 1) -> None:
        """Ctrl+G to a 1-based line and column."""
        box = self.quick_input("Control+g")
        box.fill(f":{line}:{column}")
        self.press("Enter")
        self.wait(lambda: self.cursor() == (line, column), f"the cursor at {line}:{column}", 10)

    def cursor(self) -> tuple[int, int] | None:
        text = self.page.locator(".statusbar-item[id='status.editor.selection']").first.inner_text(timeout=2000)
        found = re.search(r"Ln (\d+), Col (\d+)", text)
        return (int(found.group(1)), int(found.group(2))) if found else None

    def save(self) -> None:
        self.press("Control+s")
        self.wait(lambda: not self.page.locator(".tab.active.dirty").count(), "the file saved", 15)

    # --- what the workbench shows ------------------------------------------------------------------------

    def lines(self) -> dict[int, str]:
        """The editor's visible lines by 0-based number, as shown (non-breaking spaces made plain; inlay
        hints, which VS Code draws as text of the line, included)."""
        return {n: text for n, text in self._lines("text")}

    def hints(self) -> dict[int, list[str]]:
        """The inlay hints drawn on each visible 0-based line, in order: VS Code draws a hint as injected
        text (a span with a generated `dyn-rule-…` class, beside a padding span of a hair space)."""
        return {n: found for n, found in self._lines("hints") if found}

    def text_lines(self) -> dict[int, str]:
        """The visible lines as the file has them: what `lines` shows without the hints' spans."""
        return {n: text for n, text in self._lines("bare")}

    def all(self, read: Callable[[], dict[int, T]], count: int) -> dict[int, T]:
        """`read` (lines, hints…) over a file of `count` lines: the editor only draws what is in view, so the
        cursor goes down the file (Ctrl+G) and what each screen shows is merged."""
        out: dict[int, T] = {}
        for line in [*range(1, count + 1, 20), count]:
            self.goto(line)
            self.page.wait_for_timeout(200)
            out.update(read())
        return out

    def _lines(self, what: str) -> list[tuple[int, Any]]:
        raw = self.page.evaluate("""(what) => {
            const ed = document.querySelector('.part.editor .editor-instance .monaco-editor');
            const injected = (s) => [...s.classList].some(c => c.startsWith('dyn-rule-'));
            const read = (e) => {
                if (what === 'text') return e.textContent;
                const spans = [...e.querySelectorAll('span span')];
                if (what === 'hints') return spans.filter(s => injected(s) && s.textContent.trim()).map(s => s.textContent);
                return spans.filter(s => !injected(s)).map(s => s.textContent).join('');
            };
            const lines = [...ed.querySelectorAll('.view-lines .view-line')].map(e => [e.getBoundingClientRect().top, read(e)]);
            const numbers = [...ed.querySelectorAll('.margin-view-overlays .line-numbers')].map(e => [e.getBoundingClientRect().top, e.textContent]);
            return {lines, numbers};
        }""", what)
        numbers = {round(top): int(text) for top, text in raw["numbers"] if text.strip().isdigit()}
        out = []
        for top, found in raw["lines"]:
            n = numbers.get(round(top))
            if n is not None:
                out.append((n - 1, [_plain(s) for s in found] if isinstance(found, list) else _plain(found)))
        return sorted(out)

    def lenses(self, *, costs: bool = False) -> dict[int, list[str]]:
        """The code lenses above each 0-based line (each lens's commands, in order); a Run lens's cost estimate
        (`▶ Run · ≈ $0.01, 4 calls`, issue 31) is left out unless `costs`."""
        raw = self.page.evaluate("""() => {
            const ed = document.querySelector('.part.editor .editor-instance .monaco-editor');
            const lenses = [...ed.querySelectorAll('.codelens-decoration')].map(e => [e.getBoundingClientRect().bottom,
                [...e.querySelectorAll('a, span.codicon-placeholder, span:not(.codicon)')].filter(a => a.tagName === 'A').map(a => a.textContent)]);
            const numbers = [...ed.querySelectorAll('.margin-view-overlays .line-numbers')].map(e => [e.getBoundingClientRect().top, e.textContent]);
            return {lenses, numbers};
        }""")
        tops = sorted((top, int(text)) for top, text in raw["numbers"] if text.strip().isdigit())
        out: dict[int, list[str]] = {}
        for bottom, titles in raw["lenses"]:
            # The line right under the lens (a lens scrolled off the top has no line of its own on screen).
            below = next((n for top, n in tops if top >= bottom - 2 and top - bottom < 8), None)
            if below is not None:
                out.setdefault(below - 1, []).extend((t if costs else bare(t)) for t in (t.replace("\u00a0", " ") for t in titles))
        return out

    def click_lens(self, line: int, title: str) -> None:
        """Click the lens `title` above the 0-based `line`, with the mouse."""
        box = self.page.evaluate("""([line, title]) => {
            const ed = document.querySelector('.part.editor .editor-instance .monaco-editor');
            const numbers = [...ed.querySelectorAll('.margin-view-overlays .line-numbers')]
                .filter(e => e.textContent.trim() === String(line + 1));
            if (!numbers.length) return null;
            const top = numbers[0].getBoundingClientRect().top;
            const found = [...ed.querySelectorAll('.codelens-decoration a')].filter(a =>
                (a.textContent.replace(/\u00a0/g, ' ') === title || a.textContent.replace(/\u00a0/g, ' ').startsWith(title + ' · '))
                && Math.abs(a.closest('.codelens-decoration')
                    .getBoundingClientRect().bottom - top) < 8);
            if (!found.length) return null;
            const r = found[0].getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2];
        }""", [line, title])
        assert box, f"no lens '{title}' above line {line}: {self.lenses()}"
        self.page.mouse.click(box[0], box[1])

    def status_items(self) -> list[str]:
        return [t.strip() for t in self.page.locator(".statusbar .statusbar-item").all_inner_texts() if t.strip()]

    def notifications(self) -> list[str]:
        return self.page.locator(".notifications-toasts .notification-toast").all_inner_texts()

    def hover_text(self) -> str:
        hover = self.page.locator(".monaco-hover:not(.hidden)")
        return "\n".join(hover.all_inner_texts())

    def suggestions(self) -> list[str]:
        return self.page.locator(".suggest-widget .monaco-list-row .label-name").all_inner_texts()

    def problems(self) -> list[str]:
        return self.page.locator(".markers-panel .monaco-list-row").all_inner_texts()

    def outline(self) -> list[str]:
        return self.page.locator(".outline-pane .monaco-list-row .label-name").all_inner_texts() or \
            self.page.locator("[id='outline'] .monaco-list-row .monaco-icon-label").all_inner_texts()

    def page_text(self) -> str:
        return str(self.page.evaluate("() => document.body.innerText"))


def _plain(text: str) -> str:
    return text.replace("\u00a0", " ")


def bare(title: str) -> str:
    """A Run lens's title without its cost estimate: `▶ Run · ≈ $0.01, 4 calls` -> `▶ Run`."""
    return title.split(" · ", 1)[0] if title.startswith("▶") else title
