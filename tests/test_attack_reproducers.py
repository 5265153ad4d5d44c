"""The third attack run's reproducers (issue 15, `bench/attack.py`): each broke something before
its fix, and each must end here as a value, a finding or an error cell, never an exception or a hang.

Durations are never asserted; where a fix removed a quadratic or exponential cost, the bound is a
ratio (the larger input against the smaller, or against a linear scan).
"""

from __future__ import annotations

import math
import os
import random
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evalspec.agentv.tests_files import jsonl_tests
from evalspec.analysis import analyze
from evalspec.findings import Findings
from evalspec.jsonio import bounded_int, loads
from evalspec.run.plan.replay import without_suffixes
from evalspec.scoring.agentv_assertions import NotScored, evaluate_assertion
from evalspec.scoring.js_regex import JsRegexTimeout, js_regex_test, regex_findings
from evalspec.scoring.tagged_text import all_tagged, fenced_blocks, first_tagged
from evalspec.scoring.weval_points import PointContext, evaluate_point
from evalspec.source import resolve_plain

WEVAL = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n"
AGENTV = "name: s\ndescription: d\ntests:\n"


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    # The thread's CPU time, not the wall: on a loaded CI machine a 15 ms call preempted in all three
    # tries made a linear parse look quadratic ("16x the text cost 272x the time").
    best = math.inf
    for _ in range(repeat):
        start = time.thread_time()
        fn()
        best = min(best, time.thread_time() - start)
    return best


# --- numbers no double holds ---------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("9" * 10_000, math.inf), ("-" + "9" * 10_000, -math.inf), ("1" + "0" * 400, math.inf),
    ("0x" + "f" * 5_000, math.inf), ("0o" + "7" * 5_000, math.inf), ("0" * 5_000 + "12", 12),
    ("12345678901234567890123", 12345678901234567890123), ("-17", -17),
])
def test_an_integer_no_double_holds_is_infinite(text: str, value: float) -> None:
    assert resolve_plain(text) == value


def test_bounded_int_keeps_every_double_sized_integer_exact() -> None:
    big = int(1.7e308)
    assert bounded_int(str(big)) == big
    assert bounded_int(str(big * 10)) == math.inf


@pytest.mark.parametrize("number", ["9" * 10_000, "1" + "0" * 400, "0x" + "f" * 5_000])
@pytest.mark.parametrize("template", [
    WEVAL + "- prompt: hi\n  should:\n    - point: x\n      weight: {n}\n",
    "title: t\nmodels: [a:b]\ntemperature: {n}\n---\n- prompt: hi\n",
    WEVAL + "- id: {n}\n  prompt: hi\n",
    "{n}: x\ntitle: t\n",
    AGENTV + "  - id: a\n    input: hi\n    criteria: c\n    assert: [{{type: contains, value: x, weight: {n}}}]\n",
    "name: s\ndescription: d\nexecution: {{threshold: {n}}}\ntests: {n}\n",
], ids=["weval-weight", "temperature", "weval-id", "key", "agentv-weight", "agentv-threshold"])
def test_huge_integers_are_findings_not_exceptions(template: str, number: str) -> None:
    # Before: ValueError (int-str conversion limit) in the parser, OverflowError in `math.isfinite`.
    for path in ("/p/b.weval.yml", "/p/s.eval.yaml"):
        analysis = analyze(template.format(n=number), path)
        assert analysis.findings is not None


def test_json_with_huge_integers_reads_them_as_infinite() -> None:
    assert loads('{"a": ' + "9" * 5_000 + "}") == {"a": math.inf}


@pytest.mark.parametrize(("line", "message"), [
    ('{"id": "a", "input": "hi", "criteria": "c", "weight": ' + "9" * 5_000 + "}", None),
    ("[" * 100_000, "nested too deeply"),
    ('{"id": "a", "input": ' + "[" * 900 + "]" * 900 + ', "criteria": "c"}', "nested deeper than 200"),
    ('{"id": "a", "input": ' + '{"a":' * 900 + "1" + "}" * 900 + ', "criteria": "c"}', "nested deeper than 200"),
])
def test_jsonl_tests_lines_that_broke_the_parser_are_findings(line: str, message: str | None) -> None:
    out = Findings()
    nodes = jsonl_tests(line, [line], out)
    if message is None:
        assert len(nodes) == 1 and not list(out)
    else:
        assert nodes == [] and [f.code for f in out] == ["invalid-jsonl"] and message in next(iter(out)).message


# --- quadratic checks ----------------------------------------------------------------------------------

def test_many_unknown_keys_in_a_suite_cost_linear_time() -> None:
    # Each unknown key's finding looked its key up by scanning every key: 5,000 took 6 s.
    runs = iter(range(1_000))

    def suite(n: int) -> str:  # new names each time: "did you mean" answers are cached by name
        r = next(runs)
        return "".join(f"a{r}x{i}: &a{i} x\n" for i in range(n))

    ratio = best_of(lambda: analyze(suite(16_000), "/p/s.eval.yaml")) / \
        best_of(lambda: analyze(suite(2_000), "/p/s.eval.yaml"))
    assert ratio < 24, f"8x the keys cost {ratio:.0f}x the time"  # linear: ~8, quadratic: ~64


# --- regexes from the file run on model answers --------------------------------------------------------

def test_deeply_nested_groups_are_not_a_recursion_error() -> None:
    # The lint's parser stops past 100 levels (it recursed into a RecursionError at 5,000); a pattern
    # this long is not compiled by the lint, and scoring leaves it to QuickJS (past 255 groups: not scored).
    deep = "(a" * 5_000 + ")" * 5_000
    assert [p for p in regex_findings(deep) if p.severity == "error"] == []
    analysis = analyze(WEVAL + "- prompt: hi\n  should:\n    - $matches: '" + deep + "'\n", "/p/b.weval.yml")
    assert not any(f.code == "invalid-regex" for f in analysis.findings)
    result = evaluate_point("matches", deep, "a", PointContext(messages=[], model_id="m", prompt_id="p"))
    assert result.score is None and "too many captures" in (result.error or "")


CATASTROPHIC = ["(a+)+$", "^(a|a)*$", "(\\w+\\s?)+$"]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_a_backtracking_pattern_stops_at_its_time_limit(pattern: str) -> None:
    with pytest.raises(JsRegexTimeout, match="longer than"):
        js_regex_test(pattern, "a" * 5_000 + "!", time_limit_s=0.2)


@pytest.mark.parametrize("fn", ["matches", "imatches", "matches_all_of", "not_matches"])
def test_a_weval_regex_point_that_times_out_is_not_scored(fn: str) -> None:
    arg: object = ["(a+)+$"] if fn.endswith("_of") else "(a+)+$"
    result = evaluate_point(fn, arg, "a" * 5_000 + "!", PointContext(messages=[], model_id="m", prompt_id="p"))
    assert result.score is None and result.error is not None and "longer than" in result.error


@pytest.mark.parametrize("negate", [False, True])
def test_an_agentv_regex_assertion_that_times_out_is_not_scored(negate: bool) -> None:
    # A match past its deadline checked nothing: neither a fail (score 0) nor, negated, a pass.
    result = evaluate_assertion({"type": "regex", "value": "(a+)+$", "negate": negate}, "a" * 5_000 + "!")
    assert isinstance(result, NotScored) and "longer than" in result.reason


# --- answers parsed in linear time ---------------------------------------------------------------------

def _lazy_findall(tag: str, text: str) -> list[str]:
    return re.findall(rf"<{tag}>([\s\S]*?)</{tag}>", text, re.I)


def test_tagged_text_finds_what_the_lazy_regexes_found() -> None:
    rng = random.Random(3)
    units = ["<k>", "</k>", "<K>", "</K>", "x", " ", "\n", "<", "k>", "```", "```json", "JSON", "{}", "`"]
    for _ in range(5_000):
        text = "".join(rng.choice(units) for _ in range(rng.randint(0, 12)))
        assert all_tagged(text, "k") == _lazy_findall("k", text), text
        found = re.search(r"<k>([\s\S]*?)</k>", text, re.I)
        assert first_tagged(text, "k") == (found.group(1) if found else None), text
        fenced = [m.group(1).strip() for m in re.finditer(r"```(?:json)?\s*\n?(.*?)```", text, re.S | re.I)]
        assert [b.strip() for b in fenced_blocks(text)] == fenced, text


@pytest.mark.parametrize(("parse", "unit"), [
    (lambda t: all_tagged(t, "key_point"), "<key_point>"),
    (lambda t: first_tagged(t, "classification"), "<classification>"),
    (fenced_blocks, "``` "),
    (lambda t: fenced_blocks("```" + t), " "),
], ids=["key-points", "classification", "fences", "blanks-after-a-fence"])
def test_judge_answers_are_parsed_in_linear_time(parse: Callable[[str], object], unit: str) -> None:
    # 8,000 unclosed <key_point> tags took 10 s; 20,000 blanks after a fence 6 s.
    small, large = unit * 2_000, unit * 32_000
    ratio = best_of(lambda: parse(large)) / max(best_of(lambda: parse(small)), 1e-6)
    assert ratio < 100, f"16x the text cost {ratio:.0f}x the time"  # linear ~16, quadratic ~256


def test_model_id_suffixes_are_stripped_as_the_regex_did_in_linear_time() -> None:
    lazy = re.compile(r"(\[[a-z_]+:[^\]]*\])+$")
    rng = random.Random(0)
    for _ in range(20_000):
        s = "".join(rng.choice("[]:ab_1x") for _ in range(rng.randint(0, 14)))
        assert without_suffixes(s) == lazy.sub("", s), s
    assert without_suffixes("gpt-4o[temp:0.5][sp_idx:1]") == "gpt-4o"
    ratio = best_of(lambda: without_suffixes("[a:]" * 64_000 + "x")) / best_of(lambda: without_suffixes("[a:]" * 4_000 + "x"))
    assert ratio < 100


def test_json_in_a_judge_answer_after_a_fence_of_blanks() -> None:
    from evalspec.run.score.agentv_judge import JudgeReplyError, parse_json_reply
    assert parse_json_reply('```json\n{"score": 1}\n```') == {"score": 1}
    with pytest.raises(JudgeReplyError):
        parse_json_reply("```" + " " * 200_000)


# --- files that are not regular files ------------------------------------------------------------------

@pytest.fixture
def special_files(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / "pipe.jsonl")
    os.mkfifo(tmp_path / "pipe.txt")
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "dir.jsonl").mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock.txt"))
    yield tmp_path
    server.close()


def test_read_regular_bytes_refuses_fifos_devices_sockets_and_folders_without_blocking(special_files: Path) -> None:
    from evalspec.file_source import read_regular_bytes
    (special_files / "ok.txt").write_text("hello")
    assert read_regular_bytes(special_files / "ok.txt", 10) == b"hello"
    assert read_regular_bytes(special_files / "ok.txt", 4) is None  # larger than the limit
    assert read_regular_bytes(special_files / "pipe.txt", 10) is None  # before: blocked until a writer came
    assert read_regular_bytes("/dev/zero", 10) is None  # before: read until memory ran out
    assert read_regular_bytes(special_files / "dir.jsonl", 10) is None
    with pytest.raises(OSError):
        read_regular_bytes(special_files / "sock.txt", 10)


def test_a_run_with_a_fifo_in_a_content_block_ends(special_files: Path) -> None:
    """Before: `evalspec run` blocked forever reading the FIFO (stat said 0 bytes, then read waited)."""
    suite = special_files / "s.eval.yaml"
    suite.write_text("name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n    input:\n      - role: user\n"
                     "        content: [{type: text, value: hi}, {type: file, value: pipe.txt}]\n"
                     "    assert: [{type: contains, value: hi}]\n")
    done = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(suite), "-m", "echo", "-o",
                           str(special_files / "out"), "--no-report"], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr
    assert list((special_files / "out").rglob("*.jsonl"))


def test_checking_files_that_name_fifos_ends(special_files: Path) -> None:
    from evalspec.analysis import analyze_file
    (special_files / "a.eval.yaml").write_text("name: s\ndescription: d\ntests: pipe.jsonl\n")
    analysis = analyze_file(special_files / "a.eval.yaml")
    assert [f.code for f in analysis.findings] == ["missing-tests-file"]
    fifo = analyze_file(special_files / "pipe.yaml")
    assert [f.code for f in fifo.findings] == ["unreadable"] and "not a regular file" in fifo.findings[0].message


def test_finding_the_suites_that_include_a_dataset_skips_fifos(special_files: Path) -> None:
    from evalspec.agentv.including_suites import suites_including
    (special_files / "data.jsonl").write_text('{"id": "a", "input": "hi", "criteria": "c"}\n')
    (special_files / "s.eval.yaml").write_text("name: s\ndescription: d\ntests: data.jsonl\n")
    assert suites_including(special_files / "data.jsonl") == [special_files / "s.eval.yaml"]


# --- run labels ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("label", ["../../escaped", "/tmp/abs-label", "..", "a/b", "a\\b", "x\x01", "x" * 101])
def test_a_label_that_is_not_a_file_name_is_refused_before_anything_runs(tmp_path: Path, label: str) -> None:
    """Before: `--label ../../escaped` wrote the results two folders above the output folder."""
    bp = tmp_path / "b.yml"
    bp.write_text("title: t\nmodels: [echo]\n---\n- id: a\n  prompt: hello\n")
    done = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", str(tmp_path / "deep" / "out"),
                           "--no-report", "--label", label], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--label" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.yml"]


# --- interpolation that multiplies ---------------------------------------------------------------------

def test_interpolation_that_would_build_gigabytes_is_a_finding() -> None:
    """Before: 20,000 `${{ A }}` of a 100 KB variable built a 2 GB string in `check` and the editor."""
    text = AGENTV + "  - id: a\n    criteria: c\n    input: '" + "${{ A }}" * 20_000 + "'\n"
    analysis = analyze(text, "/p/s.eval.yaml", env={"A": "x" * 100_000})
    assert [f.code for f in analysis.findings if f.severity == "error"] == ["interpolation-too-large"]


def test_many_values_each_small_stop_at_the_file_budget() -> None:
    line = "  - {id: a%d, criteria: c, input: '" + "${{ A }}" * 10 + "'}\n"
    text = AGENTV + "".join(line % i for i in range(400))
    analysis = analyze(text, "/p/s.eval.yaml", env={"A": "x" * 100_000})  # 400 MB if all were built
    too_large = [f for f in analysis.findings if f.code == "interpolation-too-large"]
    assert 0 < len(too_large) < 400
    small = analyze(AGENTV + line % 0, "/p/s.eval.yaml", env={"A": "x" * 100_000})
    assert not [f for f in small.findings if f.code == "interpolation-too-large"]


# --- journals: partial writes, resumes of a changed file -----------------------------------------------

def test_an_append_is_written_whole_when_the_system_writes_part_of_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """At a file-size limit (or on a full disk) `os.write` writes part and returns; the journal's header
    was left cut in half and the run went on calling models whose answers it could not keep."""
    from evalspec import appendlog
    real = os.write
    monkeypatch.setattr(appendlog.os, "write", lambda fd, data: real(fd, bytes(data[:3])))
    log = appendlog.AppendLog(tmp_path / "j.jsonl", fresh=True)
    log.write(b'{"a": 1, "b": "' + b"x" * 100 + b'"}\n')
    log.close()
    assert list(appendlog.read_records(tmp_path / "j.jsonl")) == [{"a": 1, "b": "x" * 100}]


def _blueprint_file(tmp_path: Path, n: int = 5) -> Path:
    bp = tmp_path / "b.yml"
    bp.write_text("title: t\nmodels: [echo]\n---\n" + "".join(f"- id: p{i}\n  prompt: question {i}\n  should: [$contains: question]\n"
                                                                 for i in range(n)))
    return bp


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evalspec.cli", "run", *args, "--no-report"], capture_output=True,
                          text=True, timeout=120)


def test_resuming_after_a_prompt_was_reworded_runs_that_prompt_again(tmp_path: Path) -> None:
    """A Weval run label hashes ids and points, not prompt texts: `--resume` after a reworded prompt
    resumed the old run and kept the old prompt's answer in the results."""
    import json
    bp = _blueprint_file(tmp_path)
    out = str(tmp_path / "out")
    assert _run(str(bp), "-o", out).returncode == 0
    bp.write_text(bp.read_text().replace("question 3\n", "question 3 reworded\n"))
    assert "question 3 reworded" in bp.read_text()
    resumed = _run(str(bp), "-o", out, "--resume")
    assert resumed.returncode == 0 and "4 already done" in resumed.stdout + resumed.stderr
    comparison = sorted((tmp_path / "out").rglob("*_comparison.json"))[-1]
    answers = json.loads(comparison.read_text())["allFinalAssistantResponses"]
    assert list(answers["p3"].values()) == ["question 3 reworded"]
    again = _run(str(bp), "-o", out, "--resume")  # the new answer is kept from now on
    assert "5 already done" in again.stdout + again.stderr


def test_resume_says_when_there_is_nothing_to_resume(tmp_path: Path) -> None:
    bp = _blueprint_file(tmp_path)
    out = str(tmp_path / "out")
    first = _run(str(bp), "-o", out, "--resume")
    assert "no earlier run of this file" in first.stderr + first.stdout
    bp.write_text(bp.read_text() + "- id: p99\n  prompt: new\n  should: [$contains: new]\n")  # a new label
    second = _run(str(bp), "-o", out, "--resume")
    assert second.returncode == 0 and "the file changed since run" in second.stderr + second.stdout
