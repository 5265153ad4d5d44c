"""The agent judge's file tools: read-only, confined to the workspace (no absolute paths, no `..`, no
symlink out of it), bounded per read and per judgement."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalspec.run.score import agent_judge
from evalspec.run.score.agent_judge import OutsideWorkspace, WorkspaceReader, tools_for


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.ts").write_text("export const add = (a, b) => a + b;\n")
    (root / "README.md").write_text("hello\n")
    (tmp_path / "secret.txt").write_text("TOP SECRET\n")
    os.symlink(tmp_path / "secret.txt", root / "leak.txt")
    os.symlink(tmp_path, root / "up")
    os.symlink(root / "README.md", root / "inside-link.md")
    return root


def test_list_and_read_inside(ws: Path) -> None:
    r = WorkspaceReader(ws)
    listing = r.list_files(".")
    assert "src/" in listing and "README.md (6 bytes)" in listing
    assert "leak.txt (link out of the workspace, not readable)" in listing
    assert r.read_file("src/main.ts") == "export const add = (a, b) => a + b;\n"
    assert r.read_file("inside-link.md") == "hello\n"  # a link that stays inside is fine
    assert r.list_files("src") == "main.ts (36 bytes)"


@pytest.mark.parametrize("path", ["/etc/passwd", "../secret.txt", "src/../../secret.txt", "leak.txt",
                                  "up/secret.txt", "~/x"])
def test_nothing_outside_is_reachable(ws: Path, path: str) -> None:
    r = WorkspaceReader(ws)
    with pytest.raises(OutsideWorkspace):
        r.resolve(path)
    assert r.call("read_file", {"path": path}).startswith("error:")
    assert "TOP SECRET" not in r.call("read_file", {"path": path})
    assert r.call("list_files", {"path": path}).startswith("error:")


def test_reads_are_bounded(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "big.txt").write_text("x" * 100)
    monkeypatch.setattr(agent_judge, "READ_LIMIT", 40)
    monkeypatch.setattr(agent_judge, "READ_BUDGET", 70)
    r = WorkspaceReader(ws)
    first = r.read_file("big.txt")
    assert first.startswith("x" * 40) and "offset 40" in first
    second = r.read_file("big.txt", 40)
    assert second.startswith("x" * 30) and "offset 70" in second  # the budget cut it at 70 bytes in all
    assert "read budget" in r.read_file("big.txt", 70)


def test_binary_files_and_unknown_tools(ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02")
    r = WorkspaceReader(ws)
    assert "binary" in r.read_file("blob.bin")
    assert "no tool named" in r.call("write_file", {"path": "x"})


def test_tools_in_each_providers_shape() -> None:
    assert tools_for("openai")["tools"][0]["function"]["name"] == "list_files"
    assert tools_for("anthropic")["tools"][1]["input_schema"]["required"] == ["path"]
    assert [d["name"] for d in tools_for("gemini")["tools"][0]["functionDeclarations"]] == ["list_files", "read_file"]
