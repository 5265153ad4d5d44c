"""`evalspec check` as a ruff user expects it (issue 30, item 8): --select / --ignore codes and the same
in the eval repository's configuration, --statistics, the summary in the lines' own severity words, and
a note for a file named on the command line that is not an eval file. Read as the terminal shows it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.cli import main

BP = """title: t
models: [echo]
---
- id: a
  prompt: hi
  shuld: [x]
- id: b
  prompt: hi
  should:
    - $nosuchfunction: 1
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "b.weval.yml").write_text(BP)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = main(["check", "--format", "concise", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_select_and_ignore_choose_the_codes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = _run(capsys, str(repo))
    codes = {line.split("[")[1].split("]")[0] for line in lines}
    assert {"unknown-key", "unknown-function"} <= codes and code == 1  # the unknown function is an error
    code, lines, err = _run(capsys, str(repo), "--ignore", "unknown-function")
    assert all("unknown-function" not in line for line in lines) and code == 0  # an ignored error does not fail
    assert "ignored (--select/--ignore)" in err
    code, lines, err = _run(capsys, str(repo), "--select", "unknown-k*")
    assert lines and all("warning[unknown-key]" in line for line in lines) and code == 0


def test_an_unknown_code_is_refused_with_a_did_you_mean(repo: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    code, lines, err = _run(capsys, str(repo), "--select", "unknwn-key")
    assert code == 2 and not lines and "unknown finding code 'unknwn-key'; did you mean 'unknown-key'?" in err
    code, _, err = _run(capsys, str(repo), "--ignore", "nothing-like-it-*")
    assert code == 2 and "unknown finding code 'nothing-like-it-*'" in err
    (repo / "evalspec.toml").write_text('[check]\nignore = ["unknown-kee"]\n')
    monkeypatch.chdir(repo)
    code, _, err = _run(capsys, "b.weval.yml")
    assert code == 2 and "evalspec.toml" in err and "did you mean 'unknown-key'" in err


def test_the_repositorys_configuration_is_read(repo: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.evalspec.check]\nignore = ["unknown-key"]\n')
    monkeypatch.chdir(repo)
    code, lines, err = _run(capsys, "b.weval.yml")
    assert all("unknown-key" not in line for line in lines) and any("unknown-function" in line for line in lines)
    assert "pyproject.toml" in err
    # --select on the command line replaces the file's; --no-config reads none.
    _, lines, _ = _run(capsys, "b.weval.yml", "--no-config")
    assert any("unknown-key" in line for line in lines)
    (repo / "evalspec.toml").write_text('[check]\nselect = ["unknown-key"]\n')  # nearer than pyproject: first
    _, lines, _ = _run(capsys, "b.weval.yml")
    assert lines and all("unknown-key" in line for line in lines)
    (repo / "evalspec.toml").write_text('[check]\nselct = ["x"]\n')
    code, _, err = _run(capsys, "b.weval.yml")
    assert code == 2 and "unknown key(s) in the check table: selct" in err


def test_statistics_count_each_code(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "c.weval.yml").write_text(BP.replace("- id: b", "- id: c\n  prompt: x\n  shuld: [y]\n- id: b"))
    code = main(["check", str(repo), "--statistics"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["3", "warning", "unknown-key"]
    assert out[1].split() == ["2", "error", "unknown-function"] and code == 1
    main(["check", str(repo), "--statistics", "--format", "json"])
    assert {"code": "unknown-key", "severity": "warning", "count": 3} in json.loads(capsys.readouterr().out)


def test_the_summary_uses_the_lines_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.weval.yml").write_text("title: t\nmodels: [somewhere:x]\n---\n- prompt: hi\n")
    _, lines, err = _run(capsys, str(tmp_path / "m.weval.yml"))
    assert any("info[" in line for line in lines)
    assert "1 info" in err and "note(s)" not in err


def test_a_named_file_that_is_not_an_eval_file_gets_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "package.json").write_text('{"name": "x"}')
    (tmp_path / "notes.yml").write_text("just: config\n")
    code, lines, _ = _run(capsys, str(tmp_path / "package.json"), str(tmp_path / "notes.yml"))
    assert code == 0 and len(lines) == 2
    assert all("info[not-checked]: Not a Weval blueprint or an AgentV eval file" in line for line in lines)
    # In a folder, other files are passed over in silence, as before.
    _, lines, _ = _run(capsys, str(tmp_path))
    assert lines == []
