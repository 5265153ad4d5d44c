"""`evalspec run` refuses files outside the project unless --allow-outside-files, and masks secrets that a
provider echoes or that `${{ VAR }}` put into an input (issue 15 item 10), through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from fakeprovider import Reply

from evalspec.cli import main

from .conftest import AGENTV_TARGETS, KEY, SmartFake, env_for, write


def _suite(project: Path, body: str) -> Path:
    write(project / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    return write(project / "evals" / "s.eval.yaml", body)


def _everything_written(out: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file())


def test_an_outside_file_is_refused_unless_allowed(tmp_path: Path, smart: SmartFake, monkeypatch, capsys) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    write(tmp_path / "private.txt", "PRIVATE CONTENT 42\n")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    suite = _suite(project, "name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n    input:\n"
                            "      - role: user\n        content:\n"
                            "          - {type: file, value: ../../private.txt}\n"
                            "    assert: [{type: contains, value: PRIVATE}]\n")
    out = tmp_path / "out"
    assert main(["run", str(suite), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "outside its project" in err and "--allow-outside-files" in err and "nothing was run" in err
    assert smart.count == 0 and not out.exists()

    assert main(["run", str(suite), "--output", str(out), "--allow-outside-files"]) == 0
    assert "PRIVATE CONTENT 42" in json.dumps(smart.chat_requests()[0])


def test_secrets_never_reach_results_journal_or_output(tmp_path: Path, smart: SmartFake, monkeypatch,
                                                       capsys) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    project = tmp_path / "proj"
    suite = _suite(project, "name: s\ndescription: d\ntests:\n"
                            "  - id: interpolated\n    criteria: c\n    input: 'use ${{ OPENAI_API_KEY }} please'\n"
                            "    assert: [{type: contains, value: please}]\n"
                            "  - id: echoed\n    criteria: c\n    input: hello\n"
                            "    assert: [{type: contains, value: hello}]\n")
    smart.then(Reply.ok(), Reply.ok(f"hello, your key is {KEY}"))
    out = tmp_path / "out"
    assert main(["check", str(suite)]) == 0
    assert "secret-in-input" in capsys.readouterr().out
    assert main(["run", str(suite), "--output", str(out), "--concurrency", "1", "--json"]) == 0
    printed = capsys.readouterr()
    written = _everything_written(out)
    assert KEY in json.dumps(smart.chat_requests()[0])  # the model was sent what the file asked for
    for text in (written, printed.out, printed.err):
        assert KEY not in text
    assert "use *** please" in written and "your key is ***" in written


def test_a_workspace_file_inside_cannot_copy_a_template_from_outside(tmp_path: Path, smart: SmartFake,
                                                                     monkeypatch, capsys) -> None:
    """The checker does not read a workspace file, so the run confines its references itself: the test
    is an error row, the outside folder is never copied (its marker reaches no workspace, row or call)."""
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    write(tmp_path / "outside" / "tpl" / "seed.txt", "OUTSIDE TEMPLATE 99")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    write(project / "evals" / "ws.yaml", "template: ../../outside/tpl\n")
    suite = _suite(project, "name: s\ndescription: d\nworkspace: ws.yaml\n"
                            "tests:\n  - id: a\n    criteria: c\n    input: hi\n"
                            "    assert: [{type: contains, value: hi}]\n")
    out = tmp_path / "out"
    assert main(["check", str(suite)]) == 0
    main(["run", str(suite), "--output", str(out)])
    written = _everything_written(out)
    assert "outside the project" in written and "--allow-outside-files" in written
    assert "OUTSIDE TEMPLATE" not in written + capsys.readouterr().out
    assert smart.count == 0  # the target was never called without its workspace


def test_a_code_judge_outside_is_never_run(tmp_path: Path, smart: SmartFake, monkeypatch, capsys) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    ran = tmp_path / "judge-ran"
    write(tmp_path / "outside" / "judge.py", f"open({str(ran)!r}, 'w').write('x')\nprint('{{\"score\": 1}}')\n")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    for command in ("[python3, ../../outside/judge.py]", "[python3, judge.py]\n        cwd: ../../outside"):
        suite = _suite(project, "name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n    input: hi\n"
                                f"    assert:\n      - type: code-judge\n        command: {command}\n")
        assert main(["run", str(suite), "--output", str(tmp_path / "out")]) == 2
        assert "outside its project" in capsys.readouterr().err
        assert not ran.exists() and smart.count == 0
    assert main(["run", str(suite), "--output", str(tmp_path / "out"), "--allow-outside-files"]) == 0
    assert ran.exists()
