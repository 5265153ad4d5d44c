"""`evalspec run --skip-invalid`: the valid prompts run, each invalid one is named with its first error."""

from __future__ import annotations

import json
from pathlib import Path

from evalspec.cli import main

from .conftest import write

PROMPTS = "\n".join(f"- id: p{i}\n  prompt: Hello {i}\n  should: [$contains: Hello]" for i in range(1, 15))
BAD = """- id: broken
  prompt: Hello
  should:
    - $contian: x
    - $word_count_between: 5
"""


def _run(tmp_path: Path, bp: Path, *extra: str) -> int:
    return main(["run", str(bp), "-m", "echo", "-o", str(tmp_path / "out"), *extra])


def test_one_bad_prompt_of_fifteen(tmp_path: Path, capsys) -> None:
    bp = write(tmp_path / "b.weval.yml", "title: t\nmodels: [openai:x]\n---\n" + PROMPTS + "\n" + BAD)
    assert _run(tmp_path, bp) == 2
    err = capsys.readouterr().err
    assert "nothing was run (--skip-invalid runs the prompts without errors)" in err

    assert _run(tmp_path, bp, "--skip-invalid", "--json") == 0
    captured = capsys.readouterr()
    skipped = [line for line in captured.err.splitlines() if "(skipped" in line]
    # One line for the prompt, with its first error (not its second), at its place in the file.
    assert skipped == [f"{bp}:49:7: error[unknown-function]: Unknown point function '$contian'; did you mean "
                       "'$contains'? (skipped prompt 'broken')"]
    assert "running 14 of 15 prompt(s); 1 skipped" in captured.err
    events = [json.loads(line) for line in captured.out.splitlines()]
    scored = {e["cell"]["item"] for e in events if e["type"] == "scored"}
    assert scored == {f"p{i}" for i in range(1, 15)}
    [finished] = [e for e in events if e["type"] == "run_finished"]
    [comparison] = (tmp_path / "out").rglob("*_comparison.json")
    assert "broken" not in json.loads(comparison.read_text())["promptIds"]
    assert finished["summary"]["mean"] == 1


def test_prompts_that_cannot_be_read_are_skipped_too(tmp_path: Path, capsys) -> None:
    bp = write(tmp_path / "b.weval.yml", """models: [openai:x]
---
- id: ok
  prompt: Hello
- id: starts-with-assistant
  messages:
    - assistant: Hi
- id: ok
  prompt: the same id again
- prompt: [unclosed
""")
    assert _run(tmp_path, bp, "--skip-invalid") == 0
    err = capsys.readouterr().err
    assert "(skipped prompt 'starts-with-assistant')" in err
    assert f"{bp}:8:7: error[duplicate-prompt-id]" in err and "(skipped prompt 'ok')" in err
    assert f"{bp}:11:" in err and "(skipped a prompt)" in err
    assert "running 1 of 4 prompt(s); 3 skipped" in err


def test_header_errors_cannot_be_skipped(tmp_path: Path, capsys) -> None:
    bp = write(tmp_path / "b.weval.yml", """models: [openai:x]
systems: [a, 42]
---
- id: ok
  prompt: Hello
- id: bad
  prompt: Hello
  should: [$contian: x]
""")
    assert _run(tmp_path, bp, "--skip-invalid") == 2
    err = capsys.readouterr().err
    assert f"{bp}:2:14: error[wrong-type]" in err
    assert "1 error(s) outside any prompt, which --skip-invalid cannot skip; nothing was run" in err
    assert not (tmp_path / "out").exists()


def test_nothing_left_to_run(tmp_path: Path, capsys) -> None:
    bp = write(tmp_path / "b.weval.yml", "models: [openai:x]\n---\n" + BAD)
    assert _run(tmp_path, bp, "--skip-invalid") == 2
    assert "every prompt of" in capsys.readouterr().err
