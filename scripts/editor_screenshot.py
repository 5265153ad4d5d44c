#!/usr/bin/env python3
"""The README's editor picture (docs/editor.png): Neovim with the evalspec plugin, after a real run.

Neovim (Debian's, with editors/nvim) runs in a tmux pane of a fixed size; it opens a small blueprint, runs
it with the offline `echo` model (`:EvalspecRunAll`), and the pane is captured with its colours
(`tmux capture-pane -e`). The captured text is turned into HTML (the terminal's SGR colours as styles) and
Debian's Chromium (through Playwright) saves it as a PNG. Nothing leaves this machine.

usage: scripts/editor_screenshot.py [--out docs/editor.png]
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLS, ROWS = 128, 19

BLUEPRINT = """\
title: Capitals
models:
  - openai:gpt-4o-mini
---
- id: france
  prompt: What is the capital of France?
  should:
    - $icontains: paris
    - $word_count_between: [1, 50]
    - Names the city without hedging
- id: japan
  prompt: What is the capital of Japan?
  shuld:
    - $icontains: tokyo
"""

INIT = """\
vim.opt.runtimepath:append({plugin!r})
vim.o.termguicolors = true
vim.o.number = true
vim.o.signcolumn = "yes"
vim.o.shortmess = vim.o.shortmess .. "I"
vim.o.background = "dark"
vim.cmd("syntax on")
vim.cmd("hi SignColumn guibg=NONE | hi LineNr guifg=#6e7681 | hi NonText guifg=#3b3b3b")
require("evalspec").setup({{ cmd = {{ {server!r} }}, init_options = {{ run = {{ models = {{ "echo" }} }} }} }})
"""

_BASIC = ["#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
          "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff"]


def _xterm(n: int) -> str:
    if n < 16:
        return _BASIC[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return f"#{steps[n // 36]:02x}{steps[n // 6 % 6]:02x}{steps[n % 6]:02x}"
    v = 8 + (n - 232) * 10
    return f"#{v:02x}{v:02x}{v:02x}"


def ansi_to_html(text: str, fg0: str = "#d4d4d4", bg0: str = "#1e1e1e") -> str:
    """Terminal text with SGR escapes as HTML spans."""
    state: dict[str, object] = {}
    out: list[str] = []
    for piece in re.split(r"(\x1b\[[0-9;:]*m)", text):
        if piece.startswith("\x1b["):
            params = [p for p in piece[2:-1].replace(":", ";").split(";")] or ["0"]
            i = 0
            while i < len(params):
                p = int(params[i] or 0)
                if p == 0:
                    state = {}
                elif p == 1:
                    state["bold"] = True
                elif p == 3:
                    state["italic"] = True
                elif p == 4:
                    state["underline"] = True
                elif p == 7:
                    state["reverse"] = True
                elif p in (22, 23, 24, 27):
                    state.pop({22: "bold", 23: "italic", 24: "underline", 27: "reverse"}[p], None)
                elif p in (38, 48, 58) and i + 1 < len(params):
                    key = {38: "fg", 48: "bg", 58: "ul"}[p]
                    if params[i + 1] == "2" and i + 4 < len(params):
                        state[key] = "#" + "".join(f"{int(c or 0):02x}" for c in params[i + 2:i + 5])
                        i += 4
                    elif params[i + 1] == "5" and i + 2 < len(params):
                        state[key] = _xterm(int(params[i + 2]))
                        i += 2
                elif p in (39, 49, 59):
                    state.pop({39: "fg", 49: "bg", 59: "ul"}[p], None)
                elif 30 <= p <= 37 or 90 <= p <= 97:
                    state["fg"] = _BASIC[p - 30 if p < 90 else p - 82]
                elif 40 <= p <= 47 or 100 <= p <= 107:
                    state["bg"] = _BASIC[p - 40 if p < 100 else p - 92]
                i += 1
            continue
        if not piece:
            continue
        fg, bg = state.get("fg", fg0), state.get("bg", bg0)
        if state.get("reverse"):
            fg, bg = bg, fg
        style = [f"color:{fg}", f"background:{bg}"]
        if state.get("bold"):
            style.append("font-weight:bold")
        if state.get("italic"):
            style.append("font-style:italic")
        if state.get("underline"):
            style.append(f"text-decoration:underline wavy {state.get('ul', fg)}")
        out.append(f'<span style="{";".join(style)}">{html.escape(piece)}</span>')
    return "".join(out)


def capture(work: Path) -> str:
    for tool in ("tmux", "nvim"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is needed")
    (work / "blueprints").mkdir()
    (work / "blueprints" / "capitals.yml").write_text(BLUEPRINT, encoding="utf-8")
    server = str(Path(sys.executable).parent / "evalspec-lsp")
    (work / "init.lua").write_text(INIT.format(plugin=str(ROOT / "editors" / "nvim"), server=server),
                                   encoding="utf-8")
    (work / ".git").mkdir()  # the project's root
    session = f"evalspec-shot-{time.time_ns()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", str(COLS), "-y", str(ROWS),
                    f"cd {work} && TERM=xterm-256color nvim -u init.lua blueprints/capitals.yml"], check=True)
    try:
        time.sleep(4)
        subprocess.run(["tmux", "send-keys", "-t", session, ":EvalspecRunAll", "Enter"], check=True)
        for _ in range(60):
            time.sleep(0.5)
            text = subprocess.run(["tmux", "capture-pane", "-t", session, "-p"], capture_output=True,
                                  text=True, check=True).stdout
            if "last run: mean" in text and "run finished" in text:
                break
        else:
            raise SystemExit("the run's results did not appear in Neovim:\n" + text)
        subprocess.run(["tmux", "send-keys", "-t", session, "13G"], check=True)
        time.sleep(1)
        return subprocess.run(["tmux", "capture-pane", "-t", session, "-p", "-e"], capture_output=True,
                              text=True, check=True).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


def render(screen: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    page_html = ('<html><body style="margin:0;background:#1e1e1e"><pre style="margin:0;padding:10px;'
                 'font:14px/1.35 \'DejaVu Sans Mono\',monospace;color:#d4d4d4;background:#1e1e1e">'
                 + ansi_to_html(screen.rstrip("\n")) + "</pre></body></html>")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page(viewport={"width": 1200, "height": 600}, device_scale_factor=1)
        page.set_content(page_html)
        page.locator("pre").screenshot(path=str(out))
        browser.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "editor.png")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="evalspec-editor-") as tmp:
        screen = capture(Path(tmp))
    render(screen, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
