"""Files an eval file names are read only inside its project, checked on the file actually opened.

`check` refuses references that point out of the project (file-outside-project); these tests are
about what happens after it looked: a file swapped for a symlink pointing out between the check and
the run's read (a TOCTOU race), a hard link whose other name lies outside, and a FIFO named where a
file is expected.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from evalspec.analysis import analyze_file
from evalspec.file_source import ReadRefused, read_regular_bytes

from .conftest import AGENTV_TARGETS, SmartFake, env_for, options, run_events, write

SECRET = "OUTSIDE-SECRET-5d1c"


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """A project (a repository) and a folder outside it holding a secret."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    return project, outside


# --- the one function every confined read goes through ------------------------------------------------------

def test_a_file_inside_is_read_and_one_leading_out_is_refused_on_the_open_file(tmp_path: Path) -> None:
    project, outside = _project(tmp_path)
    (project / "ok.txt").write_text("fine")
    (project / "link-in.txt").symlink_to(project / "ok.txt")
    (project / "link-out.txt").symlink_to(outside / "secret.txt")
    (project / "sub").symlink_to(outside)  # a folder link: the path's last part is no link at all
    assert read_regular_bytes(project / "ok.txt", 100, inside=project) == b"fine"
    assert read_regular_bytes(project / "link-in.txt", 100, inside=project) == b"fine"
    for name in ("link-out.txt", "sub/secret.txt"):
        with pytest.raises(ReadRefused, match="outside the project"):
            read_regular_bytes(project / name, 100, inside=project)
        assert read_regular_bytes(project / name, 100) == SECRET.encode()  # --allow-outside-files


def test_a_hard_linked_file_is_refused_inside_the_project_too(tmp_path: Path) -> None:
    project, outside = _project(tmp_path)
    os.link(outside / "secret.txt", project / "data.txt")
    with pytest.raises(ReadRefused, match="2 hard links"):
        read_regular_bytes(project / "data.txt", 100, inside=project)


def test_a_refused_or_irregular_file_leaves_no_descriptor_open(tmp_path: Path) -> None:
    project, outside = _project(tmp_path)
    (project / "out.txt").symlink_to(outside / "secret.txt")
    os.mkfifo(project / "pipe.txt")
    (project / "big.txt").write_text("x" * 200)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        with pytest.raises(ReadRefused):
            read_regular_bytes(project / "out.txt", 100, inside=project)
        assert read_regular_bytes(project / "pipe.txt", 100, inside=project) is None
        assert read_regular_bytes(project / "big.txt", 100) is None
    assert len(os.listdir("/proc/self/fd")) == before


# --- check --------------------------------------------------------------------------------------------------

def _suite_with_block(project: Path, value: str) -> Path:
    write(project / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    return write(project / "evals" / "s.eval.yaml", f"""name: s
description: d
execution:
  target: default
tests:
  - id: t
    criteria: c
    input:
      - role: user
        content:
          - {{type: file, value: {value}}}
          - {{type: text, value: hello}}
""")


def test_check_warns_about_a_fifo_named_in_a_content_block(tmp_path: Path) -> None:
    project, _ = _project(tmp_path)
    suite = _suite_with_block(project, "pipe.txt")
    os.mkfifo(project / "evals" / "pipe.txt")
    (project / "evals" / "folder.txt").mkdir()
    found = analyze_file(suite)
    [fifo] = [f for f in found.findings if f.code == "file-not-regular"]
    assert "'pipe.txt' is not a regular file" in fifo.message and "name" in fifo.message
    suite = _suite_with_block(project, "folder.txt")
    [folder] = [f for f in analyze_file(suite).findings if f.code == "file-not-regular"]
    assert "'folder.txt' is a folder" in folder.message


def test_check_refuses_a_hard_linked_content_block_like_one_outside(tmp_path: Path) -> None:
    project, outside = _project(tmp_path)
    suite = _suite_with_block(project, "data.txt")
    os.link(outside / "secret.txt", project / "evals" / "data.txt")
    [finding] = [f for f in analyze_file(suite).findings if f.code == "file-outside-project"]
    assert "2 hard links" in finding.message and "--allow-outside-files" in finding.message
    assert not [f for f in analyze_file(suite, allow_outside_files=True).findings if f.code == "file-outside-project"]


# --- run: the file swapped after the check ------------------------------------------------------------------

def _sent(fake: SmartFake) -> str:
    return json.dumps(fake.chat_requests())


def test_a_content_block_swapped_for_a_link_out_after_the_check_is_not_sent(tmp_path: Path) -> None:
    project, outside = _project(tmp_path)
    data = project / "evals" / "data.txt"
    write(data, "inside text")
    write(project / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    suite = write(project / "evals" / "s.eval.yaml", """name: s
description: d
execution:
  target: default
tests:
  - id: first
    criteria: c
    input: go
    assert: [{type: contains, value: ok}]
  - id: second
    criteria: c
    input:
      - role: user
        content: [{type: file, value: data.txt}]
    assert: [{type: contains, value: ok}]
""")
    swapped: list[bool] = []

    def answer(req: dict[str, Any]) -> str:
        if not swapped:  # the first test's call: the check is long done, the second test's read not yet
            data.unlink()
            data.symlink_to(outside / "secret.txt")
            swapped.append(True)
        return "ok"

    with SmartFake(answer) as fake:
        run_events(suite, options(tmp_path, env_for(fake), concurrency=1))
        sent = _sent(fake)
    assert swapped and "data.txt" in sent  # the second test was asked, with the block's name only
    assert SECRET not in sent
    assert SECRET not in "".join(p.read_text(errors="replace") for p in (tmp_path / "out").rglob("*") if p.is_file())


@pytest.mark.parametrize("swap", ["symlink", "hardlink"])
def test_a_judge_prompt_file_swapped_for_a_link_out_is_not_read(tmp_path: Path, swap: str) -> None:
    project, outside = _project(tmp_path)
    prompt = write(project / "evals" / "judge.md", "Grade {{ answer }} against {{ expected_output }}.")
    (outside / "judge.md").write_text(f"{SECRET} {{{{ answer }}}} {{{{ expected_output }}}}")
    write(project / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    suite = write(project / "evals" / "s.eval.yaml", """name: s
description: d
execution:
  target: default
tests:
  - id: t
    criteria: c
    input: go
    assert: [{type: llm-judge, name: graded, prompt: judge.md}]
""")
    analysis = analyze_file(suite)
    assert not analysis.errors and not [f for f in analysis.findings if f.code == "file-outside-project"]
    from evalspec.run.runner import plan_for, run

    prompt.unlink()
    # After the check, before the judge reads it. The judge looks at the path again (the symlink); only
    # the open file says it has another name (the hard link).
    (prompt.symlink_to if swap == "symlink" else prompt.hardlink_to)(outside / "judge.md")

    with SmartFake(lambda req: "ok") as fake:
        opts = options(tmp_path, env_for(fake))
        plan = plan_for(analysis, opts)
        events = asyncio.run(_collect(run(plan, opts)))
        sent = _sent(fake)
    assert SECRET not in sent
    [row] = [e.details for e in events if type(e).__name__ == "Scored"]
    [entry] = row["scores"]
    assert entry["score"] is None
    assert ("outside the project" if swap == "symlink" else "cannot be read") in entry["reasoning"]


async def _collect(events: Any) -> list[Any]:
    return [e async for e in events]
