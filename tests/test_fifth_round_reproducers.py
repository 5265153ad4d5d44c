"""The fifth attack run's reproducers (`bench/attack.py` areas args, streams, filenames, judges, report,
journal, batch, lsp5). Each test failed before its fix.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from evalspec.cli import main

BLUEPRINT = "title: t\nmodels: [echo]\n---\n- id: p1\n  prompt: hello\n  should: [hello]\n"


@pytest.mark.parametrize("option", [
    ["--max-response-mb", "1e999"],  # was an OverflowError traceback (int(inf))
    ["--max-response-mb", "inf"],
    ["--max-response-mb", "1e308"],  # finite, but not once made bytes
    ["--batch-max-mb", "1e308"],
    ["--batch-max-mb", "inf"],  # the same, in batch mode
    ["--timeout", "nan"],  # a per-call limit that never fires: NaN compares false with everything
    ["--timeout", "inf"],
    ["--batch-poll", "nan"],
    ["--batch-poll", "inf"],  # a poll interval that never ends: the run would wait for good
    ["--provider-concurrency", "=3"],  # a limit on no provider, accepted without a word
])
def test_run_options_that_are_not_finite_numbers_are_usage_errors(tmp_path: Path, option: list[str],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "b.yml").write_text(BLUEPRINT)
    code = main(["run", str(tmp_path / "b.yml"), "-m", "echo", "-o", str(tmp_path / "out"), "--no-report", *option])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("evalspec run: --"), err
    assert not (tmp_path / "out").exists()


def _evalspec(args: list[str], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evalspec.cli", *args], cwd=cwd, text=True, timeout=60,
                          **kw)  # type: ignore[call-overload,no-any-return]


def _project(tmp_path: Path) -> Path:
    (tmp_path / "b.yml").write_text(BLUEPRINT)
    (tmp_path / "w.yml").write_text("title: t\nmodels: [nope:x]\nfoo: 1\n---\n- prompt: hi\n")
    return tmp_path


@pytest.mark.parametrize("args", [["check", "."], ["run", "b.yml", "-m", "echo", "-o", "out", "--no-report"]])
def test_standard_output_on_a_full_device_is_one_line_not_a_traceback(tmp_path: Path, args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        ran = _evalspec(args, _project(tmp_path), stdout=full, stderr=subprocess.PIPE)
    assert "Traceback" not in ran.stderr and "Exception ignored" not in ran.stderr, ran.stderr
    assert ran.returncode == 2 and "No space left on device" in ran.stderr


@pytest.mark.parametrize("args", [["check", "."], ["run", "b.yml", "-m", "echo", "-o", "out", "--no-report"]])
def test_a_closed_standard_output_is_not_a_crash(tmp_path: Path, args: list[str]) -> None:
    # Python leaves sys.stdout None when descriptor 1 is closed: every print was an AttributeError
    ran = _evalspec(args, _project(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    preexec_fn=lambda: os.close(1))
    assert "Traceback" not in ran.stderr, ran.stderr
    assert ran.returncode == 0
    if args[0] == "run":
        assert list((tmp_path / "out").rglob("*_comparison.json"))


OPENAI_BLUEPRINT = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n- id: p1\n  prompt: hello\n  should: [hello]\n"


@pytest.mark.parametrize("variable, value", [
    ("OPENAI_BASE_URL", "http://[::1"),  # httpx.InvalidURL tracebacks, the run stopped with no results
    ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1\r\nX-Injected: 1"),
    ("OPENAI_BASE_URL", "http://127.0.0.1:9/" + "a" * 70_000),
    ("OPENAI_BASE_URL", "http://user:sk-secret-in-url-0123456789@127.0.0.1:9/v1"),  # aiohttp's ValueError
    ("HTTP_PROXY", "http://[::1"),
    ("HTTPS_PROXY", "http://[::1"),
])
def test_an_endpoint_or_proxy_url_that_cannot_be_used_fails_the_cells_not_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        variable: str, value: str) -> None:
    (tmp_path / "b.yml").write_text(OPENAI_BLUEPRINT)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-attack-key-0123456789abcdef")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv(variable, value)
    # --keep-going: an endpoint known bad before any call refuses the run (exit 2) without it.
    code = main(["run", str(tmp_path / "b.yml"), "-o", str(tmp_path / "out"), "--retries", "0", "--no-report",
                 "--keep-going"])
    captured = capsys.readouterr()
    assert code == 3, captured.err  # every call failed, nothing scored: a clear line, results written
    assert "URL" in captured.err and "sk-secret" not in captured.out + captured.err
    [results] = (tmp_path / "out").rglob("*_comparison.json")
    assert "sk-secret" not in results.read_text()


def test_every_bidi_control_is_shown_as_an_escape_by_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # U+061C (Arabic letter mark) is in Unicode's Bidi_Control set with U+200E/F, U+202A-E, U+2066-9,
    # and reorders what follows it like them: it was printed raw (file names, keys, ids).
    (tmp_path / "b\u061c.weval.yml").write_text("title: t\nmodels: [echo]\nfo\u061co: 1\n---\n- prompt: hi\n")
    main(["check", str(tmp_path)])
    out = capsys.readouterr().out
    assert "\u061c" not in out and "\\u061c" in out


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_a_price_file_that_is_a_device_or_a_fifo_is_refused_without_reading(tmp_path: Path, kind: str) -> None:
    # `--prices /dev/zero` was read until memory ran out; a FIFO waited for a writer for good
    prices = "/dev/zero"
    if kind == "fifo":
        prices = str(tmp_path / "prices.json")
        os.mkfifo(prices)
    ran = _evalspec(["run", "b.yml", "-m", "echo", "-o", "out", "--prices", prices], _project(tmp_path),
                    capture_output=True)
    assert ran.returncode == 2 and "not a regular file" in ran.stderr, ran.stderr


@pytest.mark.parametrize("args", [["check", "."], ["run", "b.yml", "-m", "echo", "-o", "out", "--no-report"]])
def test_a_pipe_closed_before_the_output_is_flushed_is_not_an_error_at_exit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    # `evalspec run … | head -c 10`: the table was still buffered when the command returned, and the
    # interpreter's own flush at exit failed: "Exception ignored … BrokenPipeError", exit status 120.
    # Here the command's standard output is a pipe whose reader is gone: whatever the command leaves
    # buffered must be flushable at exit (its descriptor pointed at /dev/null once the pipe broke).
    read_end, write_end = os.pipe()
    os.close(read_end)
    out = io.TextIOWrapper(open(write_end, "wb", buffering=1 << 16), encoding="utf-8")  # noqa: SIM115
    monkeypatch.chdir(_project(tmp_path))
    monkeypatch.setattr(sys, "stdout", out)
    try:
        assert main(args) == 0
        out.flush()  # what the interpreter does at exit
    finally:
        monkeypatch.undo()
        with contextlib.suppress(OSError):
            out.close()


def test_check_in_a_working_folder_deleted_under_it(tmp_path: Path) -> None:
    # `getcwd` fails once the working folder is gone: printing each finding's path relative to it was
    # a FileNotFoundError traceback (a shell left in a folder another process removed)
    (tmp_path / "p").mkdir()
    project = _project(tmp_path / "p")
    gone = tmp_path / "gone"
    gone.mkdir()
    ran = _evalspec(["check", str(project)], gone, capture_output=True, preexec_fn=lambda: os.rmdir(gone))
    assert "Traceback" not in ran.stderr, ran.stderr
    assert "unknown-provider" in ran.stdout and str(project / "w.yml") in ran.stdout


@pytest.mark.parametrize("hostile", ["results-url-unparsable", "results-url-crlf", "batch-id-crlf"])
def test_a_batch_service_naming_urls_that_do_not_parse_fails_no_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    hostile: str) -> None:
    # Anthropic's batch status names `results_url`, and every batch id goes into the next URL: one that
    # httpx cannot parse (`http://[::1`, a CR LF) was an InvalidURL traceback that stopped the run.
    from .fakebatch import FakeBatchServer

    class Hostile(FakeBatchServer):
        def _anthropic_json(self, b: Any) -> dict[str, Any]:
            out = super()._anthropic_json(b)
            if hostile == "results-url-unparsable":
                out["results_url"] = "http://[::1/results"
            elif hostile == "results-url-crlf":
                out["results_url"] = self.url("/x\r\nX-Injected: 1")
            else:
                out["id"] = str(out["id"]) + "\r\nX-Injected: 1"
            return out

    (tmp_path / "b.yml").write_text("title: t\nmodels: [anthropic:claude-3-5-haiku-latest]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: question number {i}\n  should: [{{$contains: question}}]\n" for i in range(3)))
    with Hostile() as server:
        for k, v in server.env().items():
            monkeypatch.setenv(k, v)
        code = main(["run", str(tmp_path / "b.yml"), "-o", str(tmp_path / "out"), "--no-report", "--batch",
                     "--batch-poll", "0.02", "--retries", "0"])
    assert code == 0  # answered: from the batch by its documented results path, or asked again one by one
    [comparison] = (tmp_path / "out").rglob("*_comparison.json")
    assert len(json.loads(comparison.read_text())["promptIds"]) == 3
    assert not any("X-Injected" in path for _, path in server.log)


def _echo_shards(tmp_path: Path) -> tuple[list[Path], list[Path]]:
    """Two finished shards of a 6-prompt echo run: their manifests and comparison files."""
    bp = tmp_path / "b.yml"
    bp.write_text("title: t\nmodels: [echo]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: hello {i}\n  should: [{{$contains: hello}}]\n" for i in range(6)))
    for shard in ("1/2", "2/2"):
        assert main(["run", str(bp), "-o", str(tmp_path / "shards"), "--shard", shard, "--no-report"]) == 0
    manifests = sorted((tmp_path / "shards").rglob("*.shard.json"))
    return manifests, [m.with_name(m.name.replace(".shard.json", ".json")) for m in manifests]


@pytest.mark.parametrize("field, value", [
    ("output_folder", ["..", "..", "escaped"]),  # the merged results were written two folders above -o
    ("output_folder", ["ABSOLUTE"]),  # an absolute folder (the test's own, below)
    ("run_label", "../../escaped"),
    ("timestamp", "/../../escaped"),
    ("results", "../../../../../../etc/passwd"),  # read (a ValueError traceback when it did not parse)
    ("results", "/dev/zero"),
    ("items", [None, 5, {}]),  # a TypeError traceback
    ("runLabel", "../../../escaped"),  # in the comparison file itself
    ("config", [1]),  # an AttributeError traceback
])
def test_a_shard_manifest_cannot_send_the_merge_outside_its_folders(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: Any) -> None:
    manifests, comparisons = _echo_shards(tmp_path)
    if value == ["ABSOLUTE"]:
        value = [str(tmp_path / "abs-escaped")]
    for path in comparisons if field in ("runLabel", "config") else manifests:
        data = json.loads(path.read_text())
        data[field] = value
        path.write_text(json.dumps(data))
    if field in ("runLabel", "config"):  # the merge reads the comparison's fields from each shard's database
        for db_path in (tmp_path / "shards").rglob("*.shard-*.run.db"):
            with sqlite3.connect(db_path) as conn:
                body = json.loads(zlib.decompress(conn.execute("SELECT body FROM exports").fetchone()[0]))
                body["head"][field] = value
                conn.execute("UPDATE exports SET body = ?", (zlib.compress(json.dumps(body).encode()),))
    capsys.readouterr()
    code = main(["merge", str(tmp_path / "shards"), "-o", str(tmp_path / "deep" / "er" / "merged"), "--no-report"])
    err = capsys.readouterr().err
    assert code == 2 and ("plain" in err or "not lists of ids" in err or "not a Weval comparison" in err), err
    assert not (tmp_path / "deep" / "escaped").exists() and not (tmp_path / "escaped").exists()
    assert not (tmp_path / "abs-escaped").exists()
    assert not (tmp_path / "deep").exists() or not list((tmp_path / "deep").rglob("*.json"))


def test_a_merge_into_a_folder_a_merge_is_writing_is_told_who_holds_it(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # Two merges of the same shards into one output folder removed each other's half-written artefact
    # folder: "cannot write the merged results: No such file or directory". They take the run's lock.
    from evalspec.run.journal import database

    manifests, _ = _echo_shards(tmp_path)
    manifest = json.loads(manifests[0].read_text())
    folder = (tmp_path / "merged").joinpath(*manifest["output_folder"])
    path = database.db_path(folder, manifest["run_label"])
    holder = database.connect(path, create=True)
    database.acquire(holder, path, manifest["run_label"])
    try:
        capsys.readouterr()
        assert main(["merge", str(tmp_path / "shards"), "-o", str(tmp_path / "merged"), "--no-report"]) == 2
        assert f"is being written (PID {os.getpid()}" in capsys.readouterr().err
    finally:
        database.release(holder, path)
        holder.close()
    assert main(["merge", str(tmp_path / "shards"), "-o", str(tmp_path / "merged"), "--no-report"]) == 0
