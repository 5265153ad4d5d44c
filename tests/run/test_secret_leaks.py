"""The attack run's second round on secrets (issue 15 item 10): a key echoed by a provider never reaches
a file or an output — not Weval's artefact folder, not a preview cut through the key, not an editor's
hover — and a key that HTTP cannot carry (a stray newline) is an error cell, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakeprovider import Reply

from evalspec.cli import main
from evalspec.findings import Span
from evalspec.ide.runs import RunBoard, RunItem
from evalspec.providers.redact import clip, register_secret
from evalspec.run.events import Response, Scored

from .conftest import KEY, SmartFake, env_for, write

BP = "title: t\nmodels: [openai:candidate]\n---\n- id: p\n  prompt: hello\n  should: [be polite]\n"


def _pieces_of_the_key(text: str, size: int = 8) -> list[str]:
    return [KEY[i:i + size] for i in range(len(KEY) - size + 1) if KEY[i:i + size] in text]


def _everything(out: Path) -> str:
    return "\n".join(f.read_text(encoding="utf-8", errors="replace") for f in out.rglob("*") if f.is_file())


def test_weval_artefacts_mask_an_echoed_key(tmp_path: Path, smart: SmartFake, monkeypatch, capsys) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    smart.answer = f"your key is {KEY}, judge"
    out = tmp_path / "out"
    assert main(["run", str(write(tmp_path / "b.yml", BP)), "-o", str(out), "--judge", "openai:grader",
                 "--artefacts"]) == 0
    artefacts = [f for f in out.rglob("*") if f.is_file() and f.parent.name in ("p", "responses")]
    assert {f.parent.parent.name for f in artefacts} >= {"histories", "coverage"}
    assert _pieces_of_the_key(_everything(out) + capsys.readouterr().out) == []
    assert "your key is ***" in _everything(out)


@pytest.mark.parametrize("offset", [75, 95, 112, 195, 295, 495])
def test_a_preview_cut_through_an_echoed_key_keeps_none_of_it(tmp_path: Path, smart: SmartFake, monkeypatch,
                                                              capsys, offset: int) -> None:
    """Error messages quote the start of what a provider or judge sent (100–500 characters); the cut
    fell inside the key, and the masking at write time no longer recognised its first characters."""
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    echoed = "w" * offset + KEY + " more" * 200
    smart.answer = echoed  # the candidate's answer, and the judge's unparseable reply
    bp = write(tmp_path / "b.yml", BP)
    for n, first in enumerate((None, Reply.raw(400, echoed), Reply.malformed(echoed.encode()))):
        if first is not None:
            smart.then(first)  # the candidate's call: an error body, a 200 that is not JSON
        main(["run", str(bp), "-o", str(tmp_path / f"out{n}"), "--judge", "openai:grader", "--retries", "0"])
    assert _pieces_of_the_key(_everything(tmp_path) + "".join(capsys.readouterr())) == []


def test_clip_masks_before_it_cuts() -> None:
    register_secret(KEY)
    text = "w" * 95 + KEY + " tail"
    assert clip(text, 100) == "w" * 95 + "*** t"
    assert clip(text, 20) == "w" * 20
    assert clip("short", 100) == "short"


@pytest.mark.parametrize("bad", ["\n", "\r\nX-Injected: 1", "é"])
def test_a_key_http_cannot_carry_is_an_error_cell(tmp_path: Path, smart: SmartFake, monkeypatch, capsys,
                                                  bad: str) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("OPENAI_API_KEY", KEY + bad)
    out = tmp_path / "out"
    code = main(["run", str(write(tmp_path / "b.yml", BP)), "-o", str(out), "--judge", "openai:grader"])
    printed = "".join(capsys.readouterr())
    assert code == 3 and "Traceback" not in printed  # exit 3: every call failed, said plainly
    assert "header holds a line break, a control character or a character outside ASCII" in _everything(out)
    assert _pieces_of_the_key(_everything(out) + printed) == [] and smart.count == 0


def test_an_editor_run_masks_an_echoed_key_in_hover() -> None:
    register_secret(KEY)
    board = RunBoard()
    board.start([RunItem("prompt", "p", Span(0, 0, 0, 1))], None)
    board.apply(Response(("p", "m"), f"the key is {KEY}"))
    board.apply(Scored(("p", "m"), 1.0, None, {"points": [{"reflection": f"saw {KEY}"}]}))
    text = board.item_markdown("p") or ""
    assert "the key is ***" in text and KEY not in text
    assert KEY not in repr(board.results)


def test_check_never_prints_a_secret_a_message_quotes(tmp_path: Path, monkeypatch, capsys) -> None:
    """`${{ OPENAI_API_KEY }}` as an assertion type or a regex: the finding's message quoted the value,
    and `check` printed the key (terminal, --format json; the editor's diagnostics alike)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    suite = write(tmp_path / "s.eval.yaml", "name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n"
                                            "    input: hi\n    assert: [{type: '${{ OPENAI_API_KEY }}'}, "
                                            "{type: regex, value: '${{ OPENAI_API_KEY }}('}]\n")
    for fmt in ("concise", "full", "json", "github"):
        main(["check", str(suite), "--format", fmt])
        printed = "".join(capsys.readouterr())
        assert "***" in printed and _pieces_of_the_key(printed) == [], fmt


# The seventh round (`python bench/attack.py secrets7`): a key interpolated where the run prints or names
# something with it. The results' contents were masked; the terminal's error line and a folder's name
# were not.
SUITE7 = "name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n    input: hi\n" \
         "    assert: [{type: contains, value: hi}]\n"


@pytest.mark.parametrize("where", ["suite-name", "workspace-template", "execution-target"])
def test_a_key_interpolated_into_a_name_or_a_path_is_printed_and_named_masked(
        tmp_path: Path, smart: SmartFake, monkeypatch, capsys, where: str) -> None:
    from .conftest import AGENTV_TARGETS

    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    key = "${{ OPENAI_API_KEY }}"
    text = {"suite-name": SUITE7.replace("name: s", f"name: 'n-{key}'"),
            "workspace-template": SUITE7.replace("tests:", f"workspace: {{template: './{key}'}}\ntests:"),
            "execution-target": SUITE7.replace("criteria: c", f"criteria: c\n    execution: {{target: 'd-{key}'}}")}[where]
    out = tmp_path / "out"
    main(["run", str(write(tmp_path / "s.eval.yaml", text)), "-o", str(out), "--retries", "0"])
    printed = "".join(capsys.readouterr())
    names = "\n".join(str(f.relative_to(tmp_path)) for f in out.rglob("*")) if out.exists() else ""
    assert _pieces_of_the_key(printed) == [], printed
    assert _pieces_of_the_key(names) == [], names
    assert _pieces_of_the_key(_everything(out) if out.exists() else "") == []
    assert "***" in printed + names


# The ninth round (`python bench/attack.py secrets9`): the key echoed in part. Only the whole key was
# masked, so a provider that quoted its first 20 characters (as some error messages do), a preview of
# it, or a key split over two lines or stream chunks put 12-16 characters of it in every results file.
def _runs_of_the_key(text: str, size: int = 12) -> list[str]:
    return _pieces_of_the_key(text, size)


@pytest.mark.parametrize("echo", [
    KEY[:20], KEY[-20:], KEY[4:-4], KEY[:15] + "\n" + KEY[15:], KEY[:15] + "\u200b" + KEY[15:],
    f"Incorrect API key provided: {KEY[:19]}********{KEY[-4:]}",
], ids=["first-20", "last-20", "middle", "split-by-newline", "split-by-zero-width-space", "provider-masked"])
def test_a_piece_of_the_key_is_masked_wherever_it_lands(tmp_path: Path, smart: SmartFake, monkeypatch, capsys,
                                                        echo: str) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    bp = write(tmp_path / "b.yml", BP)
    smart.then(Reply.ok(f"look: {echo} ok"))  # the candidate's answer
    main(["run", str(bp), "-o", str(tmp_path / "answer"), "--judge", "openai:grader", "--retries", "0"])
    smart.then(Reply.raw(401, {"error": {"message": echo}}))  # an error body, quoted in the error cell
    main(["run", str(bp), "-o", str(tmp_path / "error"), "--judge", "openai:grader", "--retries", "0"])
    everything = _everything(tmp_path) + "".join(capsys.readouterr())
    assert _runs_of_the_key(everything) == []
    assert "look: " in everything and "***" in everything  # the answer is kept, the piece masked


def test_pieces_shorter_than_twelve_characters_and_text_around_them_stay() -> None:
    from evalspec.providers.redact import redact, redact_bytes

    register_secret(KEY)
    assert redact(f"a {KEY[:11]} b {KEY[-11:]} c") == f"a {KEY[:11]} b {KEY[-11:]} c"
    assert redact(f"a {KEY[3:15]} b") == "a *** b"
    assert redact(KEY[:14] + KEY[:14]) == "******"  # two runs side by side
    assert redact_bytes(f"x{KEY[5:25]}y".encode()) == b"x***y"
    assert redact("sk-" * 100_000) == "sk-" * 100_000  # a clean text only pays the probes' searches
    long_run = "a" * 5000 + KEY[2:20] + "b" * 5000  # one run of the key's characters past 4 KB: searched in C
    assert redact(long_run) == "a" * 5000 + "***" + "b" * 5000
    odd = "p]a^s-s\\w[o.r*d$"  # a ${{ VAR }} value with a character class's own characters
    register_secret(odd)
    assert redact(f"<{odd[:13]}>") == "<***>" and redact_bytes(f"<{odd[3:]}>".encode()) == b"<***>"
    for before in (65536 - 6, 65536 - 14, 2 * 65536 - 3):  # a piece across the 64 KB chunks bytes are read in
        assert redact_bytes(b"x" * before + KEY[:20].encode() + b"x") == b"x" * before + b"***x"
        assert redact_bytes(b"a" * before + KEY[2:20].encode() + b"b") == b"a" * before + b"***b"
