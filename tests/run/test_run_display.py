"""The run display as a person sees it (issue 30, item 5): `evalspec run` in a real terminal (tmux) is
live before the first answer (done/total, cells in progress, ETA, elapsed), rate limiting stays in the
status line instead of scrolling, and the closing table is coloured on a terminal, not when piped or
with NO_COLOR."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ..fakeprovider import FakeProvider, Reply
from .conftest import env_for, write

pytestmark = pytest.mark.timeout(90)


def _blueprint(folder: Path, n: int) -> Path:
    lines = ["title: display", "models: [openai:gpt-4o-mini]", "---"]
    for i in range(n):
        lines += [f"- id: p{i:02d}", f"  prompt: question {i}", "  should:", "    - $contains: Paris"]
    return write(folder / "d.weval.yml", "\n".join(lines) + "\n")


class Tmux:
    """A terminal: one session on a tmux server of its own (its socket in a folder of its own, removed at
    the end). On the shared default server, a session another process (another test run on the machine)
    ended last stopped the server under this one's next command ("server exited unexpectedly")."""

    def __init__(self, name: str, width: int = 200) -> None:
        assert shutil.which("tmux"), "tmux is required (.ci/run installs it)"
        self.name = name
        self.folder = tempfile.mkdtemp(prefix="evalspec-tmux-")
        self.tmux = ["tmux", "-S", os.path.join(self.folder, "socket")]
        subprocess.run([*self.tmux, "-f", os.devnull, "new-session", "-d", "-s", name, "-x", str(width),
                        "-y", "50"], check=True)

    def type(self, command: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, command, "Enter"], check=True)

    def screen(self, *, escapes: bool = False) -> str:
        args = [*self.tmux, "capture-pane", "-p", "-t", self.name] + (["-e"] if escapes else [])
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout

    def wait_until(self, test: Callable[[str], bool], what: str, timeout: float = 40) -> str:
        """The first screen `test` accepts, polled until `timeout` (a busy machine draws late)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if test(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{what} never showed:\n{self.screen()}")

    def wait_for(self, text: str, timeout: float = 40) -> str:
        return self.wait_until(lambda screen: text in screen, repr(text), timeout)

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], check=False, capture_output=True)
        shutil.rmtree(self.folder, ignore_errors=True)


def _status(screen: str, *parts: str) -> str:
    """The screen's line holding every one of `parts` ('' when none does)."""
    return next((line for line in screen.splitlines() if all(p in line for p in parts)), "")


def _command(env: dict[str, str], args: str) -> str:
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    return f"env {exports} {shlex.quote(sys.executable)} -m evalspec.cli run {args}"


def test_the_run_is_live_before_the_first_answer_and_its_table_is_coloured(tmp_path: Path) -> None:
    bp = _blueprint(tmp_path, 6)
    term = Tmux(f"evalspec-display-{os.getpid()}")
    try:
        with FakeProvider() as fake:
            # The first answers take 3 s; one isolated 429 on the way.
            fake.then(Reply.rate_limited(0), *[Reply.ok("Paris", delay=3.0) for _ in range(6)])
            env = {**env_for(fake), "PYTHONPATH": os.pathsep.join(sys.path), "TERM": "xterm-256color"}
            env.pop("NO_COLOR", None)
            term.type(_command(env, f"{bp} -o {tmp_path / 'out'} -j 3 --no-report"))
            screen = term.wait_for("0/6")  # drawn as the run starts, before any call
            # calls started, no answer yet
            screen = term.wait_until(lambda screen: bool(_status(screen, "0/6", "in progress")), "calls in progress")
            status = _status(screen, "0/6", "in progress")
            assert "ETA —" in status and status.rstrip().endswith(" s")
            first = status.rsplit(" ", 2)[-2]
            # the clock moves with no event: a later clock while the line still says 0/6 (no answer yet)
            later = term.wait_until(lambda screen: "0/6" not in screen or _status(screen, "0/6").rsplit(" ", 2)[-2]
                                    != first, "a redraw")
            assert "0/6" in later and _status(later, "0/6").rsplit(" ", 2)[-2] != first, later
            done = term.wait_for("results: ")
            assert "rate limit:" not in done  # the 429 stayed in the status line
            coloured = term.screen(escapes=True)
            mean_line = next(line for line in coloured.splitlines() if line.startswith("openai:gpt-4o-mini"))
            assert "\x1b[" in mean_line and "1.000" in mean_line
    finally:
        term.close()


def test_no_colour_when_piped_or_with_no_color(tmp_path: Path) -> None:
    bp = _blueprint(tmp_path, 2)
    for extra in ({}, {"NO_COLOR": "1", "FORCE_COLOR": ""}):
        with FakeProvider() as fake:
            fake.then(Reply.ok("Paris"), Reply.ok("Paris"))
            env = {**os.environ, **env_for(fake), "PYTHONPATH": os.pathsep.join(sys.path), **extra}
            env.pop("FORCE_COLOR", None) if not extra else None
            done = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", str(tmp_path / "o"),
                                   "--no-report"], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "\x1b" not in done.stdout and "\x1b" not in done.stderr
        assert "openai:gpt-4o-mini[temp:0]" in done.stdout


def test_the_status_lines_cost_is_the_answers_cost_in_the_results(tmp_path: Path) -> None:
    """The live line's "answers $… so far", once every cell is done, is the cost file's answers lines
    added up (the judges' calls are the closing table's, not the line's)."""
    import json

    bp = _blueprint(tmp_path, 4)
    out = tmp_path / "out"
    term = Tmux(f"evalspec-cost-{os.getpid()}")
    try:
        with FakeProvider() as fake:
            fake.latency = 0.2
            env = {**env_for(fake), "PYTHONPATH": os.pathsep.join(sys.path), "TERM": "xterm-256color"}
            term.type(_command(env, f"{bp} -o {out} -j 2 --no-report"))
            screen = term.wait_for("results: ")
    finally:
        term.close()
    status = next(line for line in screen.splitlines() if "4/4" in line)
    shown = status.split("answers $", 1)[1].split(" so far", 1)[0]
    lines = json.loads(next(out.glob("live/blueprints/*/*_cost.json")).read_text())["lines"]
    answers = sum(x["usd"] for x in lines if x["role"] == "answers")
    assert answers > 0 and shown == f"{answers:.6f}", (status, lines)


def test_the_status_line_stays_one_line_on_an_80_column_terminal(tmp_path: Path) -> None:
    """Too long for the terminal, the line drops its least useful parts (cells in progress, the clock)
    instead of wrapping: a wrapped line is not erased by the redraw, and each redraw scrolled a new one."""
    bp = _blueprint(tmp_path, 8)
    term = Tmux(f"evalspec-narrow-{os.getpid()}", width=80)
    try:
        with FakeProvider() as fake:
            fake.latency = 0.4
            env = {**env_for(fake), "PYTHONPATH": os.pathsep.join(sys.path), "TERM": "xterm-256color"}
            term.type(_command(env, f"{bp} -o {tmp_path / 'out'} -j 2 --no-report"))
            seen = []
            deadline = time.monotonic() + 40
            while time.monotonic() < deadline:
                screen = term.screen()
                seen.append([line for line in screen.splitlines() if "/8" in line])
                if "results: " in screen:
                    break
                time.sleep(0.2)
    finally:
        term.close()
    assert any(lines and "answers $" in lines[0] for lines in seen)  # the cost shown when it fits
    assert all(len(lines) <= 1 for lines in seen), next(lines for lines in seen if len(lines) > 1)
    assert max(len(lines) for lines in seen) == 1
