"""A batch run whose journal lost whole lines, resumed: nothing is submitted twice.

A kill cuts at most the journal's last line (test_batch_run covers it). A disk that filled up, a journal
deleted, or a run folder copied from another machine mid-run loses whole lines: the header, or every
line after the first batch's. A part's key is derived from what it holds (the run label, the model and
its requests' bytes), is sent with the batch (OpenAI metadata, Gemini displayName; Anthropic keeps it in
every request's custom_id), and a resumed run looks it up at the provider before creating anything:
the fake server counts every request body it is sent, so a request submitted twice shows.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evalspec.batch import batch_api_for
from evalspec.cli import main
from evalspec.providers.base import ChatRequest, ChatResult
from evalspec.providers.factory import provider_for_model
from evalspec.providers.http import make_client
from evalspec.run.events import Cell, Notice
from evalspec.run.generate.batch_stage import BatchRequest, BatchStage
from evalspec.run.generate.calls import Calls
from evalspec.run.journal.run_store import read_header
from evalspec.run.options import RunOptions
from tests.batch.test_batch_run import _start, _wait_for_batches, blueprint, interactive, result_files
from tests.fakebatch import FakeBatchServer
from tests.run_records import journal_at

MODELS = ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest", "google:gemini-2.5-flash"]
RESUME = ["--no-report", "--batch", "--batch-poll", "0.01", "--retries", "0", "--batch-size", "10", "--resume"]


def _header_lost(db: sqlite3.Connection) -> bool:
    db.execute("DELETE FROM run")
    return True


def _after_first_batch_line_lost(db: sqlite3.Connection) -> bool:
    """What the journal kept when it lost every line after its first batch's: the header and the first
    part planned, nothing after (no batch id, no other part)."""
    (first,) = db.execute("SELECT min(seq) FROM batches").fetchone()
    db.execute("DELETE FROM batch_items WHERE key NOT IN (SELECT key FROM batches WHERE seq = ?)", (first,))
    db.execute("DELETE FROM batches WHERE seq != ?", (first,))
    db.execute("UPDATE batches SET file_id = NULL, batch_id = NULL, status = NULL")
    for table in ("answers", "failures", "judgements", "key_points", "scores", "usage"):
        db.execute(f"DELETE FROM {table}")
    return True


def _deleted(db: sqlite3.Connection) -> bool:
    return False


LOSSES: dict[str, Callable[[sqlite3.Connection], bool]] = {
    "header-lost": _header_lost, "after-first-batch-line-lost": _after_first_batch_line_lost,
    "journal-deleted": _deleted}


def _killed_while_polling(tmp_path: Path, fake: FakeBatchServer, n: int = 25) -> tuple[Path, Path, dict, int]:
    """A batch run of `n` prompts on three providers, SIGKILLed while polling its batches."""
    bp = blueprint(tmp_path, n, models=MODELS)
    expected = interactive(tmp_path, bp)
    fake.forget_calls()
    fake.hold = True
    out = tmp_path / "batch"
    proc = _start(bp, out, fake, "--batch-size", "10")
    try:
        _wait_for_batches(proc, out, fake, 9)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    created = fake.creations
    assert created == 9 and not fake.duplicates()  # three parts of ≤ 10 per provider
    fake.hold = False
    return bp, out, expected, created


def _lose(out: Path, loss: Callable[[sqlite3.Connection], bool]) -> None:
    """The run database after a loss (rows removed by hand, as a full disk or a copy cut short loses
    what was written last), or deleted."""
    path = next(out.rglob("*.run.db"))
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        kept = loss(db)
    if not kept:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)


@pytest.mark.parametrize("loss", list(LOSSES), ids=list(LOSSES))
def test_a_journal_that_lost_lines_resumes_without_sending_anything_twice(tmp_path: Path, fake: FakeBatchServer,
                                                                          loss: str, capsys) -> None:
    bp, out, expected, created = _killed_while_polling(tmp_path, fake)
    _lose(out, LOSSES[loss])
    fake.page_cap = 2  # the lists come in pages of two: the client must follow them
    capsys.readouterr()
    assert main(["run", str(bp), "-o", str(out), *RESUME]) == 0
    assert not fake.duplicates(), fake.duplicates()
    assert fake.creations == created + 3  # the conversation's second turns, one batch per provider
    assert fake.chat_calls == 0
    assert result_files(out) == expected
    err = capsys.readouterr().err
    if loss == "header-lost":  # every part is in the journal: nothing to look for
        assert "found at the provider" not in err
        assert "lost its run row (the run's header); resuming from the rows it holds" in err
        path = next(out.rglob("*.run.db"))
        assert read_header(path) is not None  # written again
    else:
        assert err.count("found at the provider") >= 8, err[-3000:]
    if loss == "journal-deleted":
        assert "this is a new run (in batch mode the batches an earlier run of this label created are looked for" in err


def test_a_run_folder_copied_elsewhere_mid_run_resumes_there(tmp_path: Path, fake: FakeBatchServer) -> None:
    """The folder (blueprint and output) copied to another place while the run polled, its journal a
    snapshot taken just after the first batch was planned; resumed at the copy."""
    bp, out, expected, created = _killed_while_polling(tmp_path, fake)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(bp, elsewhere / bp.name)
    shutil.copytree(out, elsewhere / "batch")
    _lose(elsewhere / "batch", _after_first_batch_line_lost)
    assert main(["run", str(elsewhere / bp.name), "-o", str(elsewhere / "batch"), *RESUME]) == 0
    assert not fake.duplicates(), fake.duplicates()
    assert fake.creations == created + 3
    assert result_files(elsewhere / "batch") == expected


def test_concurrent_resumes_of_one_label_never_submit_twice(tmp_path: Path, fake: FakeBatchServer) -> None:
    """Four `--resume` runs of the same label at once, after the journal lost everything after its first
    batch line: one runs, the others are refused naming it (the run lock); nothing is sent twice, and
    the results are an uninterrupted run's."""
    bp, out, expected, created = _killed_while_polling(tmp_path, fake)
    _lose(out, _after_first_batch_line_lost)
    fake.hold = True  # the first resume polls until the others have tried
    procs = [_start(bp, out, fake, "--batch-size", "10", "--resume") for _ in range(4)]
    results: list[tuple[int, bytes]] = [(0, b"")] * 4

    def wait(i: int, proc: subprocess.Popen[bytes]) -> None:
        _, err = proc.communicate(timeout=300)
        results[i] = (proc.returncode, err)

    threads = [threading.Thread(target=wait, args=(i, p)) for i, p in enumerate(procs)]
    for t in threads:
        t.start()
    try:
        refused_by = lambda: [r for r in results if r[0] not in (0,) and b"is already running" in r[1]]  # noqa: E731
        deadline = time.monotonic() + 180
        while len(refused_by()) < 3:
            assert time.monotonic() < deadline, results
            time.sleep(0.05)
    finally:
        fake.hold = False
        for t in threads:
            t.join(300)
    codes = sorted(code for code, _ in results)
    assert codes.count(0) == 1, results
    winner = next(p.pid for p, (code, _) in zip(procs, results, strict=True) if code == 0)
    assert all(f"PID {winner}".encode() in err for code, err in results if code != 0)  # the holder, named
    assert not fake.duplicates(), fake.duplicates()
    assert fake.creations == created + 3
    assert result_files(out) == expected


ANTHROPIC = "anthropic:claude-3-5-haiku-latest"


def _requests(calls: Calls, n: int) -> Iterator[BatchRequest]:
    provider = calls.model(ANTHROPIC).provider
    for i in range(n):
        req = ChatRequest.of("claude-3-5-haiku-latest", f"question {i}", system="Answer briefly.")
        yield BatchRequest(Cell(f"p{i}", ANTHROPIC), 0, ANTHROPIC, ANTHROPIC, provider, req)


async def _stage(journal_path: Path, options: RunOptions, n: int, *,
                 parts: int | None = None) -> tuple[list[ChatResult | None], list[str]]:
    """The batch stage over `n` requests; `parts`: stopped (as by a kill) once that many batches exist."""
    calls = Calls(options, lambda event: None, concurrency=4)
    try:
        with journal_at(journal_path, fresh=not options.resume) as journal:
            stage = BatchStage(calls=calls, journal=journal, journal_path=journal_path, options=options)
            events = stage.run(_requests(calls, n))
            notes: list[str] = []
            if parts is not None:
                made = 0
                async for event in events:
                    made += type(event).__name__ == "BatchProgress"
                    if made == parts:
                        break
                await events.aclose()
                return [], notes
            notes = [e.message async for e in events if isinstance(e, Notice)]
            return [stage.take(Cell(f"p{i}", ANTHROPIC), 0) for i in range(n)], notes
    finally:
        await calls.aclose()


@pytest.mark.parametrize("ended", [False, True], ids=["running", "ended"])
async def test_anthropic_batches_the_journal_lost_are_told_apart_by_their_results(
        tmp_path: Path, fake: FakeBatchServer, ended: bool) -> None:
    """Anthropic's list gives sizes and times only. Two of three parts of 4 were created (the third never),
    the journal is gone, and another batch of 4 that is not the run's runs beside them (or has ended).
    The resumed stage waits for the running batches of that size to end (or reads the ended ones' first
    result), takes the two that are its by the tag in their custom ids, leaves the stranger alone, and
    sends the third part once no batch can be it: nothing twice, every answer right."""
    journal_path = tmp_path / "label.run.db"
    fake.hold = True
    first = RunOptions(batch=True, batch_poll=0.02, max_retries=0, batch_max_requests=4)
    await _stage(journal_path, first, 12, parts=2)
    assert fake.creations == 2
    # A batch of four that is someone else's (plain custom ids, other prompts).
    client = make_client(4)
    try:
        binding = provider_for_model(ANTHROPIC, client=client, env=fake.env())
        api = batch_api_for(binding.provider, model=binding.model_name)
        assert api is not None
        raw = api.provider  # type: ignore[attr-defined]
        theirs = [api.encode(f"x{i}", raw.body(ChatRequest.of(binding.model_name, f"other {i}"))) for i in range(4)]
        await api.create("theirs", theirs, None)
    finally:
        await client.aclose()
    journal_path.unlink()
    fake.forget_calls()
    fake.page_cap = 1
    if ended:
        fake.hold = False
        for b in list(fake.batches.values()):
            while b.state != "ended":
                fake._poll(b)
    else:
        fake.hold = False
    resumed = RunOptions(batch=True, batch_poll=0.02, max_retries=0, batch_max_requests=4, resume=True)
    answers, notes = await _stage(journal_path, resumed, 12)
    assert [a.text if a else None for a in answers] == [
        f"Answer (claude-3-5-haiku-latest) to: question {i}" for i in range(12)]
    assert fake.creations == 3 + 1 and not fake.duplicates() and fake.chat_calls == 0  # the third part alone
    assert sum("found at the provider" in n for n in notes) == 2, notes
    assert any("waiting for them to end" in n for n in notes) is not ended, notes


def test_tagged_custom_ids_are_kept_compact_and_read_back_from_the_journal(tmp_path: Path) -> None:
    from evalspec.run.generate.batch_journal import BatchPart, PartItems, load_parts, numbered, planned

    items = PartItems(10, prefix="0a1b2c3d4e-")
    for i in range(3):
        items.add(f"0a1b2c3d4e-r{10 + i}", Cell(f"p{i}", ANTHROPIC), 0)
    assert items._ids is None  # no list of ids: `<prefix>r<n>` is made from the number
    assert list(items) == ["0a1b2c3d4e-r10", "0a1b2c3d4e-r11", "0a1b2c3d4e-r12"]
    assert items.index("0a1b2c3d4e-r11") == 1
    # Another part's tag, a plain id, an id past the part or with a leading zero: not this part's.
    assert items.index("ffffffffff-r11") is None and items.index("r11") is None
    assert items.index("0a1b2c3d4e-r13") is None and items.index("0a1b2c3d4e-r011") is None
    assert numbered("r7") == ("", 7) and numbered("ab-r7") == ("ab-", 7) and numbered("abr7") is None
    path = tmp_path / "x.run.db"
    with journal_at(path, fresh=True) as journal:
        journal.write(planned(BatchPart("evalspec-k", ANTHROPIC, items, 1.0)))
    back = load_parts(path)["evalspec-k"].items
    assert back.prefix == "0a1b2c3d4e-" and back.first == 10 and list(back) == list(items)


@pytest.mark.parametrize("loss", ["after-first-batch-line-lost", "journal-deleted"])
def test_agentv_judges_round_the_journal_lost_is_found_not_sent_again(tmp_path: Path, fake: FakeBatchServer,
                                                                     loss: str) -> None:
    """AgentV: the answers' batch (OpenAI) ended, the first round of judges (Anthropic) polled when the run
    was killed, and the journal lost that round's lines (or everything). The resumed run finds the answers'
    batch by its metadata key and waits for the judges' running batch, which its results' custom ids name
    as the round's: every request is sent exactly as often as the interactive run sent it."""
    from tests.batch.test_batch_agentv_judges import _agentv_bytes, _wait_for, suite
    from tests.batch.test_batch_agentv_judges import _start as start_agentv
    from tests.batch.test_batch_agentv_judges import interactive as agentv_interactive

    path = suite(tmp_path, 6)
    expected, sent = agentv_interactive(tmp_path, path, fake)
    fake.hold_from = 2  # the answers' batch ends; the first round of judges stays in progress
    out = tmp_path / "batch"
    proc = start_agentv(path, out, fake)
    try:
        _wait_for(proc, fake, 2)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert fake.creations == 2
    _lose(out, LOSSES[loss])
    fake.hold_from = None
    assert main(["run", str(path), "-o", str(out), "--no-report", "--batch", "--batch-poll", "0.01", "--retries", "0",
                 "--resume"]) == 0
    assert fake.sent == sent  # each request as often as the interactive run sent it: none twice
    assert fake.chat_calls == 0
    assert _agentv_bytes(out) == expected
