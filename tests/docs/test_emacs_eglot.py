"""The Emacs snippets of the README and of docs/guide/editors.md work as written: Debian's Emacs (with its
elpa-eglot and elpa-yaml-mode packages) loads the snippet as a user's init file would, opens a blueprint,
and eglot starts evalspec-lsp and shows its diagnostic (.ci/run installs those packages)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLUEPRINT = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  shuld: [$icontains: hi]\n"

DRIVER = """
(find-file {path})
(message "mode: %s" major-mode)
(run-hooks 'post-command-hook)  ; eglot-ensure connects after the first command
(let ((n 0)) (while (and (< n 120) (null (flymake-diagnostics))) (accept-process-output nil 0.25) (setq n (1+ n))))
(dolist (d (flymake-diagnostics))
  (message "DIAG %d %s" (line-number-at-pos (flymake-diagnostic-beg d)) (flymake-diagnostic-text d)))
"""


def _snippet(path: Path) -> str:
    return re.search(r"```elisp\n(.*?)```", path.read_text(encoding="utf-8"), re.S).group(1)  # type: ignore[union-attr]


@pytest.mark.parametrize("doc", ["README.md", "docs/guide/editors.md"])
def test_the_eglot_snippet_starts_evalspec_lsp(doc: str, tmp_path: Path) -> None:
    if shutil.which("emacs") is None:
        pytest.fail("emacs (Debian's emacs-nox, elpa-eglot, elpa-yaml-mode) is needed: .ci/run installs it")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "blueprints").mkdir()
    blueprint = project / "blueprints" / "capitals.yml"
    blueprint.write_text(BLUEPRINT, encoding="utf-8")
    init = tmp_path / "init.el"
    init.write_text("(package-initialize)\n" + _snippet(ROOT / doc)
                    + DRIVER.format(path='"' + str(blueprint) + '"'), encoding="utf-8")
    bin_dir = str(Path(sys.executable).parent)  # where evalspec-lsp is, as on a user's PATH
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    done = subprocess.run(["emacs", "--batch", "-l", str(init)], capture_output=True, text=True, env=env,
                          timeout=120, cwd=project)
    log = done.stdout + done.stderr
    assert "mode: yaml-mode" in log, log
    assert "Server `evalspec-lsp' now managing" in log, log
    assert "DIAG 6 evalspec [unknown-key]: Unknown key 'shuld' in a prompt; did you mean 'should'?" in log, log
