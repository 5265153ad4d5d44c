"""The `cli` target's process: started through the one bounded runner (script_process), with its own
errors: a missing or non-executable program, a timeout that kills everything it started, an answer
of any length up to 64 MB (an agent's transcript; past it, an error), stderr's tail in a failure."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from evalspec.providers import ChatRequest, ProviderError
from evalspec.providers.base import COMMAND, CONFIG, TIMEOUT, ChatMessage
from evalspec.providers.command import CommandProvider

REQ = ChatRequest(model="agent", messages=(ChatMessage("user", "hi"),))


def _chat(provider: CommandProvider) -> str:
    return asyncio.run(provider.chat(REQ)).text


def test_a_missing_program_is_named(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as err:
        _chat(CommandProvider([str(tmp_path / "no-such-agent"), "{PROMPT}"], name="agent"))
    assert err.value.kind == CONFIG and "agent: command not found:" in err.value.message


def test_a_program_that_is_not_executable_is_named(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    with pytest.raises(ProviderError) as err:
        _chat(CommandProvider([str(script)], name="agent"))
    assert err.value.kind == CONFIG and "agent: not executable:" in err.value.message


def test_a_timeout_kills_the_program_and_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    # The agent starts a grandchild that would outlive it, then hangs.
    code = (f"import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
            f" open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(60)")
    with pytest.raises(ProviderError) as err:
        _chat(CommandProvider([sys.executable, "-c", code], name="agent", timeout=1.0))
    assert err.value.kind == TIMEOUT and "gave no answer within 1 s" in err.value.message
    child = int(pid_file.read_text())
    assert _dies(child)


def _dies(pid: int) -> bool:
    """Whether `pid` is gone within 5 s: the kill is immediate, reaping by init may take a moment."""
    for _ in range(50):
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting to be reaped is dead
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_a_long_answer_is_kept_whole() -> None:
    size = 6 * 1024 * 1024  # past the 4 MB cap scripts have
    answer = _chat(CommandProvider([sys.executable, "-c", f"print('x' * {size})"], name="agent"))
    assert len(answer) == size


def test_a_failure_carries_the_stderr_tail() -> None:
    code = "import sys; sys.stderr.write('noise ' * 1000 + 'the real reason'); sys.exit(3)"
    with pytest.raises(ProviderError) as err:
        _chat(CommandProvider([sys.executable, "-c", code], name="agent"))
    assert err.value.kind == COMMAND and "exited with code 3" in err.value.message
    assert err.value.message.endswith("the real reason")


@pytest.mark.parametrize("redirect", ["", " >/dev/null 2>&1"])
def test_what_a_script_left_running_is_killed(tmp_path: Path, redirect: str) -> None:
    """The attack run's second round: a script that answers and exits, leaving a child behind in the
    background. With its output elsewhere, the child outlived the run as an orphan; holding the script's
    stdout, it was not killed at the timeout either (the script itself had exited). Now nothing is left."""
    from evalspec.script_process import run_script

    pid_file = tmp_path / "child.pid"
    command = f"sleep 120{redirect} & echo $! > {pid_file}; echo answered"
    done = asyncio.run(run_script(["sh", "-c", command], None, cwd=tmp_path, timeout=2))
    assert done.stdout == b"answered\n"
    if redirect:  # its pipes closed with the script: answered, then the group is killed
        assert (done.code, done.timed_out) == (0, False)
    child = int(pid_file.read_text())
    assert _dies(child)


def test_a_timeout_leaves_no_unretrieved_exception() -> None:
    """The pipes' readers, cancelled by the deadline, must not end as a future nobody read: asyncio
    logs those with a traceback ("_GatheringFuture exception was never retrieved")."""
    import gc

    from evalspec.script_process import run_script

    reported: list[dict[str, object]] = []

    async def go() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: reported.append(context))
        done = await run_script([sys.executable, "-c", "import time\nprint('x', flush=True)\ntime.sleep(60)"],
                                None, cwd=None, timeout=0.5)
        assert done.timed_out
        gc.collect()
        await asyncio.sleep(0)

    asyncio.run(go())
    assert reported == []


# The ninth attack round (atk9r): what an agent leaves where its answer is read. A cli target runs an
# agent, whose model decides what it writes: {OUTPUT_FILE} made a FIFO held the run for good (read in the
# event loop), a link to /dev/zero or a stdout that never ends grew the run until memory ran out. Each
# runs in a process of its own with 1.5 GB of address space, so the old behaviour fails, never hangs.
_IN_A_PROCESS = """
import asyncio, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024, 1536 * 1024 * 1024))
from evalspec.providers import ChatRequest, ProviderError
from evalspec.providers.base import ChatMessage
from evalspec.providers.command import CommandProvider
req = ChatRequest(model="agent", messages=(ChatMessage("user", "hi"),))
try:
    print("ANSWER", len(asyncio.run(CommandProvider(sys.argv[1:], name="agent", timeout=20).chat(req)).text))
except ProviderError as exc:
    print("ERROR", exc.kind, exc.message)
"""


@pytest.mark.parametrize(("argv", "says"), [
    (["sh", "-c", 'mkfifo "$1"', "sh", "{OUTPUT_FILE}"], "is not a regular file"),
    (["sh", "-c", 'ln -s /dev/zero "$1"', "sh", "{OUTPUT_FILE}"], "is not a regular file"),
    (["sh", "-c", 'truncate -s 100M "$1"', "sh", "{OUTPUT_FILE}"], "larger than 64 MB"),
    (["sh", "-c", "exec yes an-endless-answer"], "printed more than 64 MB"),
], ids=["output-file-a-fifo", "output-file-a-link-to-dev-zero", "output-file-100-mb", "stdout-without-end"])
def test_an_answer_the_agent_makes_endless_is_an_error(argv: list[str], says: str) -> None:
    import subprocess

    ran = subprocess.run([sys.executable, "-c", _IN_A_PROCESS, *argv], capture_output=True, text=True, timeout=90,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert ran.stdout.startswith("ERROR command agent: ") and says in ran.stdout, (ran.stdout, ran.stderr[-500:])
