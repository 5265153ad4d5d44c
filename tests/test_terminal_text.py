"""No control character from a file, a model or a provider reaches the terminal raw (bench/attack.py,
fourth round): `ESC ] 52` writes the clipboard, `ESC ] 0` the window title, `CR ESC [ K` erases a
finding's line, U+202E shows text reversed. Before, `check` printed a key's escapes as they were."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from evalspec.cli import main
from evalspec.terminal_text import SafeStream, shown

from .fakeprovider import FakeProvider, Reply

HOSTILE = "\x1b]52;c;SGVsbG8=\x07\x1b]0;PWNED\x07\r\x1b[K\x1b[8m\u202e\x9b"


def _raw_controls(text: str) -> list[str]:
    """Control characters other than newline and tab, and the CSI/OSC openers evalspec does not use."""
    allowed = ("\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[1;31m", "\x1b[1;33m", "\x1b[1;34m", "\x1b[1;36m", "\r\x1b[K",
               "\x1b[K")
    for seq in allowed:
        text = text.replace(seq, "")
    return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f or c == "\u202e"]


def test_shown_writes_control_characters_as_visible_escapes() -> None:
    assert shown("a\x1b]0;t\x07b\u202ec\n\x9b") == "a\\x1b]0;t\\x07b\\u202ec\\n\\u009b"
    assert shown("two\nlines\ttab", newlines=True) == "two\nlines\ttab"


def test_the_safe_stream_keeps_only_evalspecs_own_styling() -> None:
    out = io.StringIO()
    SafeStream(out).write("\x1b[1;31merror\x1b[0m " + HOSTILE + "\r\x1b[K")
    assert _raw_controls(out.getvalue()) == []
    assert out.getvalue().startswith("\x1b[1;31merror\x1b[0m \\x1b]52;") and out.getvalue().endswith("\r\x1b[K")


def _blueprint(tmp_path: Path) -> Path:
    bp = tmp_path / "b.weval.yml"
    # YAML double-quoted escapes put the raw characters into a key and an id, both quoted by findings.
    bp.write_text('title: t\nmodels: [openai:gpt-4o-mini]\n---\n- id: "p\\e]0;PWNED\\a"\n  prompt: hi\n'
                  '  "\\e]52;c;SGVsbG8=\\a\\r\\e[K\\e[8m\\u202e": 1\n')
    return bp


@pytest.mark.parametrize("fmt", ["concise", "full", "github", "json"])
def test_check_output_shows_a_files_control_characters_as_escapes(tmp_path: Path, fmt: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", str(_blueprint(tmp_path)), "--format", fmt, "--color", "always"])
    out = capsys.readouterr()
    assert "unknown-key" in out.out
    assert _raw_controls(out.out + out.err) == []
    if fmt in ("concise", "full"):
        assert "\\x1b]52;c;SGVsbG8=\\x07" in out.out
    if fmt == "json":  # still JSON: C1 and bidi characters became \u escapes, which JSON reads back
        assert any("\u202e" in f["message"] for f in json.loads(out.out))


def test_a_github_annotations_file_property_cannot_add_properties(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    bp = tmp_path / "x,title=owned:y.weval.yml"
    bp.write_text("title: t\nmodels: [openai:gpt-4o-mini]\n---\n- id: p\n  prompt: hi\n  shuld: 1\n")
    main(["check", str(bp), "--format", "github"])
    [line] = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("::")]
    assert "x%2Ctitle=owned%3Ay.weval.yml,line=6" in line and line.count(",title=") == 1


def test_run_output_shows_a_providers_control_characters_as_escapes(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bp = tmp_path / "b.weval.yml"
    bp.write_text('title: t\nmodels: [openai:candidate]\n---\n- id: p\n  prompt: hi\n  should: [$contains: x]\n')
    with FakeProvider() as fake:
        fake.then(*[Reply.error(400, "bad " + HOSTILE)] * 4)
        env = {"OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_BASE_URL": fake.url("/v1")}
        with pytest.MonkeyPatch.context() as mp:
            for k, v in env.items():
                mp.setenv(k, v)
            main(["run", str(bp), "-o", str(tmp_path / "out"), "--retries", "0", "--no-report"])
    out = capsys.readouterr()
    assert "bad" in out.err + out.out
    assert _raw_controls(out.out + out.err) == []
