"""An output folder someone else prepared (a cloned repository's `results/`): files planted where a
run writes or reads back its own are never written through, and never block it.

Before: a journal planted as a symlink to a file outside had `--resume` append JSON lines to that file,
a planted lock was truncated to the run's PID, a FIFO in the journal's place blocked the run for good,
and a link named like a temporary file was written through.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalspec.cli import main
from evalspec.own_files import NotOwnFile, create_fresh, open_own

BLUEPRINT = "title: t\nmodels: [echo]\n---\n- id: p\n  prompt: hi\n  should: [$contains: hi]\n"
PRECIOUS = "export PATH=/usr/bin  # the user's own file\n"


def _first_run(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A finished run: (blueprint, its results folder, its journal); and a file outside to protect."""
    bp = tmp_path / "b.yml"
    bp.write_text(BLUEPRINT)
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report"]) == 0
    [journal] = (tmp_path / "out").rglob("*.run.db")
    victim = tmp_path / "home" / ".bashrc"
    victim.parent.mkdir()
    victim.write_text(PRECIOUS)
    return bp, journal.parent, journal


@pytest.mark.parametrize("planted", ["journal", "-wal", "-shm"])
def test_a_link_planted_as_the_database_or_its_log_is_refused_and_its_target_untouched(
        tmp_path: Path, planted: str, capsys: pytest.CaptureFixture[str]) -> None:
    bp, _folder, journal = _first_run(tmp_path)
    victim = tmp_path / "home" / ".bashrc"
    target = journal if planted == "journal" else journal.with_name(journal.name + planted)
    target.unlink(missing_ok=True)
    target.symlink_to(victim)
    code = main(["run", str(bp), "-o", str(tmp_path / "out"), "--resume", "--no-report"])
    assert code == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert victim.read_text() == PRECIOUS


def test_a_fifo_planted_as_the_journal_ends_the_run_with_a_message(tmp_path: Path) -> None:
    bp, _folder, journal = _first_run(tmp_path)
    journal.unlink()
    os.mkfifo(journal)
    # In a child process: before the fix it blocked for good on the FIFO.
    done = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", str(tmp_path / "out"),
                           "--resume", "--no-report"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and "is not a regular file" in done.stderr


def test_a_link_named_like_a_temporary_file_is_replaced_not_written_through(tmp_path: Path) -> None:
    bp, folder, _journal = _first_run(tmp_path)
    victim = tmp_path / "home" / ".bashrc"
    # The report's temporary file is named after the writing process: this one (in-process run).
    (folder / f".report.html.{os.getpid()}.tmp").symlink_to(victim)
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--resume"]) == 0
    assert victim.read_text() == PRECIOUS
    assert (folder / "report.html").is_file() and not (folder / "report.html").is_symlink()


def test_open_own_and_create_fresh(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    (tmp_path / "link").symlink_to(outside)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    for name in ("link", "folder", "fifo"):
        with pytest.raises(NotOwnFile):
            os.close(open_own(tmp_path / name, os.O_WRONLY | os.O_APPEND))
    with pytest.raises(NotOwnFile):  # a dangling link is not created through either
        os.close(open_own(tmp_path / "dangling", os.O_WRONLY | os.O_CREAT))
    assert not (tmp_path / "nowhere").exists()
    for name in ("link", "dangling"):
        fd = create_fresh(tmp_path / name)
        os.write(fd, b"new")
        os.close(fd)
        assert not (tmp_path / name).is_symlink() and (tmp_path / name).read_text() == "new"
    assert outside.read_text() == "keep"


@pytest.mark.parametrize("folder", ["live", "live/blueprints", ".cache"])
def test_a_folder_planted_as_a_link_below_the_output_folder_is_refused(
        tmp_path: Path, folder: str, capsys: pytest.CaptureFixture[str]) -> None:
    bp = tmp_path / "b.yml"
    bp.write_text(BLUEPRINT)
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    planted = tmp_path / "out" / folder
    planted.parent.mkdir(parents=True)
    planted.symlink_to(elsewhere)
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report", "--cache"]) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []


def test_the_output_folder_itself_may_be_a_link(tmp_path: Path) -> None:
    bp = tmp_path / "b.yml"
    bp.write_text(BLUEPRINT)
    (tmp_path / "real").mkdir()
    (tmp_path / "out").symlink_to(tmp_path / "real")
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report"]) == 0
    assert list((tmp_path / "real").rglob("*.run.db"))
