"""A real Neovim (0.7+, headless) with the editors/nvim plugin: diagnostics, completion, an edit."""

from __future__ import annotations

import json
import os
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
        "EVALSPEC_NVIM_TIMEOUT_MS": "40000",
        "EVALSPEC_NVIM_RESULTS": str(tmp_path / "results"),
        # Keep Neovim away from the user's configuration, state and logs.
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
    }
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(HERE / "init.lua")],
                          env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=90)
    assert out.exists(), f"Neovim wrote no results (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads(out.read_text())


def test_neovim_gets_diagnostics_and_completions(tmp_path):
    result = run_neovim(tmp_path)
    assert "error" not in result, result
    assert result["client"] == "evalspec"
    assert result["filetype"] == "yaml"

    [typo] = [d for d in result["diagnostics_on_open"] if d["code"] == "unknown-key"]
    assert (typo["lnum"], typo["col"], typo["end_col"]) == (6, 2, 7)  # the `shuld` key
    assert typo["source"] == "evalspec"
    assert "should" in typo["message"]

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
