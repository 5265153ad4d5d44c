"""A real Neovim (0.7+, headless) with the editors/nvim plugin: diagnostics, completion, an edit."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

BLUEPRINT = """\
title: Capitals
models:
  - openai:gpt-4o-mini
---
- id: france
  prompt: What is the capital of France?
  shuld:
    - Mentions Paris
- id: greeting
  prompt: Say hello
  should:
    - $contains: hello
"""


def run_neovim(tmp_path: Path) -> dict:
    nvim = shutil.which("nvim")
    assert nvim, "Neovim is required: apt-get install -y neovim"
    blueprint = tmp_path / "capitals.weval.yml"
    blueprint.write_text(BLUEPRINT)
    out = tmp_path / "result.json"
    home = tmp_path / "home"
    env = {
        **os.environ,
        "EVALSPEC_PLUGIN": str(REPO / "editors" / "nvim"),
        "EVALSPEC_PYTHON": sys.executable,
        "EVALSPEC_NVIM_FILE": str(blueprint),
        "EVALSPEC_NVIM_OUT": str(out),
        "EVALSPEC_NVIM_TIMEOUT_MS": "150000",
        "EVALSPEC_NVIM_RESULTS": str(tmp_path / "results"),
        # Keep Neovim away from the user's configuration, state and logs.
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
    }
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(HERE / "init.lua")],
                          env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=180)
    assert out.exists(), f"Neovim wrote no results (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads(out.read_text())


def test_neovim_gets_diagnostics_and_completions(tmp_path):
    result = run_neovim(tmp_path)
    assert "error" not in result, f"{result['error']}\n{result}"
    assert result["client"] == "evalspec"
    # The README's complete setup ran (tests/nvim/harness.lua): its keymaps on the buffer, diagnostics
    # while typing, the completion options.
    assert result["readme"] == {"hover_key_buffer": 1, "code_action_key_buffer": 1, "update_in_insert": True,
                                "completeopt": "menuone,noselect,preview"}
    assert result["filetype"] == "yaml"

    [typo] = [d for d in result["diagnostics_on_open"] if d["code"] == "unknown-key"]
    assert (typo["lnum"], typo["col"], typo["end_col"]) == (6, 2, 7)  # the `shuld` key
    assert typo["source"] == "evalspec"
    assert "should" in typo["message"]

    # :EvalspecExplain follows the diagnostic's link: the code's page (the one `evalspec rule` prints).
    assert result["explain_page"].endswith("/codes/unknown-key.md")
    assert result["explain_lines"][0] == "# unknown-key"
    assert "## Why it matters" in result["explain_lines"]

    assert "$contains" in result["completion_labels"]
    assert not [d for d in result["diagnostics_after_edit"] if d["code"] == "unknown-key"]

    # Run lenses: the file's and each prompt's, then the greeting prompt run from the cursor
    # (:EvalspecRun) with the offline `echo` model, its result shown as a lens on its first line.
    before = {(t["line"], t["title"]) for t in result["lenses_before_run"]}
    assert (0, "▶ Run all (2 prompts)") in before and (4, "▶ Run") in before and (8, "▶ Run") in before
    after = {(t["line"], t["title"]) for t in result["lenses_after_run"]}
    assert (8, "✓ 1.00 echo[temp:0]") in after
    assert not any(line == 4 and title.startswith("✓") for line, title in after)  # only greeting ran
    assert list((tmp_path / "results").rglob("*_comparison.json"))


RUN_BLUEPRINT = """\
title: Capitals & cities
models:
  - id: local:fake
    url: {url}
    modelName: fake-1
    inherit: openai
---
- id: greet
  prompt: Say hello
  should:
    - $contains: hello
- id: count
  prompt: Count to three
  should:
    - $contains: one
    - $contains: four
"""


def run_session(tmp_path: Path, blueprint: Path, session: str) -> dict:
    nvim = shutil.which("nvim")
    assert nvim, "Neovim is required: apt-get install -y neovim"
    out = tmp_path / f"{session}.json"
    home = tmp_path / "home"
    env = {
        **os.environ,
        "EVALSPEC_PLUGIN": str(REPO / "editors" / "nvim"),
        "EVALSPEC_PYTHON": sys.executable,
        "EVALSPEC_NVIM_FILE": str(blueprint),
        "EVALSPEC_NVIM_OUT": str(out),
        "EVALSPEC_NVIM_SESSION": session,
        "EVALSPEC_NVIM_TIMEOUT_MS": "270000",
        "EVALSPEC_NVIM_RESULTS": str(tmp_path / "results"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
    }
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(HERE / "runs.lua")],
                          env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)
    assert out.exists(), f"Neovim wrote no results (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text())
    assert "error" not in result, f"{result['error']}\n{result}"
    return result


def by_line(titles: list[dict]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for t in titles:
        out.setdefault(t["line"], []).append(t["title"])
    return out


def test_runs_in_neovim_survive_a_restart(tmp_path):
    from tests.fakeprovider import FakeProvider, Reply

    with FakeProvider() as fake:
        # One answer for the prompt run alone, two for the whole file, then a run cancelled after its
        # first answer (the next call hangs until the run is cancelled).
        fake.then(*[Reply.ok("hello: one, two, three") for _ in range(4)], *[Reply.hang(30) for _ in range(4)])
        blueprint = tmp_path / "capitals.weval.yml"
        blueprint.write_text(RUN_BLUEPRINT.format(url=fake.url("/v1")))
        first = run_session(tmp_path, blueprint, "first")

        # Completion accepted in the editor: the line reads right (no `$$contains`), and typing part of
        # the name first still offers and inserts it.
        assert first["omnifunc"] == "v:lua.vim.lsp.omnifunc"
        assert first["readme"]["hover_key_buffer"] == 1
        # The completion's documentation opened in a preview window while choosing; accepting closed it.
        assert first["previews_while_choosing"] == 1 and first["previews_after_accept"] == 0
        assert first.get("accepted_after_dollar") == "    - $contains: ", first
        assert first["labels_after_wor"] == ["$word_count_between"]
        assert first["accepted_after_wor"] == "    - $word_count_between: "

        model = "local:fake[temp:0]"
        assert by_line(first["after_one"])[7] == ["▶ Run", f"✓ 1.00 {model}"]
        after_all = by_line(first["after_all"])
        assert after_all[11] == ["▶ Run", f"✗ 0.50 {model}"]
        assert after_all[0][2] == "last run: mean 0.75 · 1 pass · 1 fail"
        # The failed point, at its own line, with its score, model and reason; its hover per model.
        [failed] = first["run_diagnostics"]
        assert failed["lnum"] == first["four_line"] == 15
        assert failed["severity"] == 3 and failed["code"] == "run-point-failed"  # Information
        assert failed["message"].startswith(f"$contains failed on {model}: 0.00")
        assert f"**{model}**: 0.00" in first["point_hover"]
        # Cancelled after greet's answer: count's call in flight is marked, the summary lens stays.
        cancelled = by_line(first["after_cancel"])
        assert cancelled[7] == ["▶ Run", f"✓ 1.00 {model}"]
        assert cancelled[11] == ["▶ Run", f"⊘ cancelled {model}"]
        assert cancelled[0][2].startswith("cancelled: mean 1.00")
        calls = len(fake.requests)

        second = run_session(tmp_path, blueprint, "second")
        restored = by_line(second["restored"])
        # As the first session left them (issue 29: the state after a restart is the state before it):
        # greet from the cancelled run, count cancelled in flight, the cancelled run's summary; their age added.
        assert {line: [re.sub(r" \((just now|\d+ min ago)\)", "", t) for t in ts] for line, ts in restored.items()} \
            == cancelled
        assert restored[7][1].startswith(f"✓ 1.00 {model} (")
        assert restored[11][1].startswith(f"⊘ cancelled {model} (")
        assert restored[0][2].startswith("cancelled (")
        assert second["run_diagnostics"] == first["diagnostics_after_cancel"]
        assert len(fake.requests) == calls
        # :EvalspecResults without a display: the run's report as Markdown in a split.
        report = "\n".join(second["report_lines"])
        assert second["report_name"].startswith("evalspec://report/")
        assert report.startswith("## evalspec report: Capitals") and "local:fake[temp:0]" in report
        # A Markdown buffer renders no HTML: the text is as written, never `&amp;` (issue 29).
        assert report.startswith("## evalspec report: Capitals & cities") and "&amp;" not in report
        # :EvalspecPlan: every line of the plan is shown, not only its last one.
        plan = [line for line in second["plan_messages"] if line.strip()]
        first_line = next(i for i, line in enumerate(plan) if line.startswith("LSP[evalspec] weval "))
        assert "run label" in plan[first_line]
        shown = plan[first_line:]
        assert any(line.startswith("model ") for line in shown) and any(line.startswith("total: ") for line in shown)


def test_neovim_with_old_mac_line_endings(tmp_path):
    # A buffer with `fileformat=mac`: Neovim sends its text and edits with a bare CR between lines.
    # Every position the server sends lands on Neovim's own lines.
    nvim = shutil.which("nvim")
    assert nvim, "Neovim is required: apt-get install -y neovim"
    blueprint = tmp_path / "capitals.weval.yml"
    blueprint.write_bytes(BLUEPRINT.replace("\n", "\r").encode())
    out = tmp_path / "result.json"
    home = tmp_path / "home"
    env = {**os.environ, "EVALSPEC_PLUGIN": str(REPO / "editors" / "nvim"), "EVALSPEC_PYTHON": sys.executable,
           "EVALSPEC_NVIM_FILE": str(blueprint), "EVALSPEC_NVIM_OUT": str(out),
           **{f"XDG_{d}_HOME": str(home / d.lower()) for d in ("CONFIG", "DATA", "STATE", "CACHE")}}
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(HERE / "bare_cr.lua")],
                          env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=180)
    assert out.exists(), f"Neovim wrote no results (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text())
    assert "error" not in result, f"{result['error']}\n{result}"
    assert result["fileformat"] == "mac"
    assert result["lines"] == BLUEPRINT.split("\n")[:-1]
    [typo] = [d for d in result["diagnostics_on_open"] if d["code"] == "unknown-key"]
    assert (typo["lnum"], typo["col"], typo["end_col"]) == (result["shuld_line"], 2, 7) == (6, 2, 7)
    assert "**models**" in result["hover"]
    [idael] = result["diagnostics_after_edit"]
    assert (idael["code"], idael["lnum"], idael["col"], idael["end_col"]) == ("unknown-key", result["idael_line"], 2, 7)


FEATURES_BLUEPRINT = """\
title: Features
models: [echo]
point_defs:
  greets: {$icontains: hello}
---
- prompt: Say hello
  should:
    - $ref: greets
    - text: is warm
      weight: 3
- id: second
  prompt: Say hello again
  should:
    - $ref: greets
"""


def test_neovim_shows_inlay_hints_and_renames_a_point_definition(tmp_path):
    """Real Neovim: the hints its client gets (ids, shares) and a rename applied to the buffer by Neovim."""
    from evalspec.analysis import analyze

    nvim = shutil.which("nvim")
    assert nvim, "Neovim is required: apt-get install -y neovim"
    blueprint = tmp_path / "blueprints" / "features.yml"
    blueprint.parent.mkdir()
    blueprint.write_text(FEATURES_BLUEPRINT)
    out, home = tmp_path / "result.json", tmp_path / "home"
    env = {**os.environ, "EVALSPEC_PLUGIN": str(REPO / "editors" / "nvim"), "EVALSPEC_PYTHON": sys.executable,
           "EVALSPEC_NVIM_FILE": str(blueprint), "EVALSPEC_NVIM_OUT": str(out),
           **{f"XDG_{d}_HOME": str(home / d.lower()) for d in ("CONFIG", "DATA", "STATE", "CACHE")}}
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(HERE / "editor_features.lua")],
                          env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=180)
    assert out.exists(), f"Neovim wrote no results (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text())
    assert "error" not in result, f"{result['error']}\n{result}"
    generated = analyze(FEATURES_BLUEPRINT, blueprint).blueprint.prompts[0].id
    hints = {(h["line"], h["label"]) for h in result["hints"]}
    assert hints == {(5, f"id: {generated}"), (7, "25 %"), (8, "75 %"), (13, "100 %")}
    renamed = "\n".join(result["renamed"]) + "\n"
    assert renamed == FEATURES_BLUEPRINT.replace("greets", "welcomes")
    after = analyze(renamed, blueprint)
    assert not after.errors
    assert after.blueprint.prompts[1].points[0].reference_form() == \
        analyze(FEATURES_BLUEPRINT, blueprint).blueprint.prompts[1].points[0].reference_form()
