"""SIGTERM that lands inside a running task of a batch run, with SIGINT ignored (as a script's background
job starts it, and CI is started so): the run ends as after Ctrl-C, exit 130, its last line the
`--resume` hint, no traceback (the race 9f350e0 fixed).

When the signal arrives while the event loop waits in `select`, an interrupt raised by the handler
leaves through the loop and the run unwinds cleanly; the old handler broke only when the signal landed
while a gathered task's own code ran (a polled batch's read): that task ended with KeyboardInterrupt as
its exception and the run printed a traceback after its last words. A kill from outside lands there by
chance (the old code passed the kill test 3 of 3 times), so here the run signals itself from inside
the poll: the batch API's `get` is wrapped in the child process, and on its first answer from the fake
server it raises SIGTERM, whose handler runs at once, inside the gathered poll task. Everything else
is the real run against the real fake batch server on loopback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evalspec.cli import main
from tests.batch.test_batch_run import blueprint, interactive, result_files
from tests.fakebatch import FakeBatchServer

# The CLI with the batch API's poll wrapped: its first answer raises SIGTERM in the polling task.
DRIVER = """
import signal, sys
from evalspec.batch import http_batches
real = http_batches.HttpBatches.get
fired = []

async def get(self, batch_id):
    status = await real(self, batch_id)
    if not fired:
        fired.append(batch_id)
        # raise_signal runs the Python handler before it returns: in this task's code, not the loop's select
        signal.raise_signal(signal.SIGTERM)
    return status

http_batches.HttpBatches.get = get
from evalspec.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_sigterm_inside_a_polling_task_with_sigint_ignored_ends_like_ctrl_c(tmp_path: Path, fake: FakeBatchServer,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    bp = blueprint(tmp_path, 25)
    expected = interactive(tmp_path, bp)
    fake.forget_calls()
    fake.hold = True  # every batch stays in progress: the run is polling when the signal comes
    out = tmp_path / "batch"
    env = {**os.environ, **fake.env(), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, "run", str(bp), "-o", str(out), "--no-report", "--batch", "--batch-poll",
         "0.05", "--retries", "0", "--batch-size", "10"],
        env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))  # a script's background job
    err = proc.stderr.decode()
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    assert "6 provider batch(es) left running" in err, err[-3000:]
    assert "--resume" in err.splitlines()[-1], err[-3000:]
    assert fake.creations == 6 and fake.chat_calls == 0 and fake.cancels == 0

    # The journal the interrupted run closed is whole: the resumed run polls the six batches, sends nothing twice.
    fake.hold = False
    capsys.readouterr()
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--batch", "--batch-poll", "0.01", "--retries", "0",
                 "--batch-size", "10", "--resume"]) == 0
    assert "resuming 6 batch(es) from the journal" in capsys.readouterr().err
    assert fake.creations == 6 + 2 and not fake.duplicates() and fake.chat_calls == 0
    assert result_files(out) == expected
