"""Where a blueprint's model collections (`models/*.json`) are looked for: walking up from it, never past
its project (SECURITY.md). Outside a repository the walk went up to `/`, so a parent folder's models/
chose the models a blueprint from elsewhere would call (found by the eighth attack round's fuzzer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.analysis import analyze_file

BLUEPRINT = "title: t\nmodels: [CORE]\n---\n- prompt: hi\n  should: [greets]\n"


def _collection(folder: Path, *ids: str) -> Path:
    (folder / "models").mkdir(parents=True, exist_ok=True)
    core = folder / "models" / "CORE.json"
    core.write_text(json.dumps(list(ids)), encoding="utf-8")
    return core


def _blueprint(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BLUEPRINT, encoding="utf-8")
    return path


def _resolved(path: Path) -> tuple[list[str], list[str], set[Path]]:
    a = analyze_file(path)
    assert a.blueprint is not None
    return a.blueprint.models_resolved, [f.code for f in a.findings], set(a.dependencies)


def test_a_parent_folder_s_models_are_not_read_outside_a_repository(tmp_path: Path) -> None:
    planted = _collection(tmp_path, "openai:planted")
    resolved, codes, read = _resolved(_blueprint(tmp_path / "downloads" / "eval" / "b.weval.yml"))
    assert "openai:planted" not in resolved and "unresolved-collection" in codes
    assert planted not in read


def test_weval_s_configs_layout_outside_a_repository(tmp_path: Path) -> None:
    """A copy of weval-org/configs without its .git (the shared corpus): models/ beside blueprints/ is
    found from any depth under blueprints/, and nothing above that folder is read."""
    planted = _collection(tmp_path, "openai:planted")
    core = _collection(tmp_path / "configs", "openai:gpt-4o-mini")
    for where in ("blueprints/b.yml", "blueprints/health/deep/b.yml"):
        resolved, codes, read = _resolved(_blueprint(tmp_path / "configs" / where))
        assert resolved == ["openai:gpt-4o-mini"] and "unresolved-collection" not in codes, where
        assert core in read and planted not in read
    (tmp_path / "configs" / "models" / "CORE.json").unlink()
    resolved, codes, read = _resolved(tmp_path / "configs" / "blueprints" / "b.yml")
    assert "openai:planted" not in resolved and "unresolved-collection" in codes and planted not in read


def test_a_blueprint_s_own_folder_and_its_repository(tmp_path: Path) -> None:
    own = _collection(tmp_path / "loose", "openai:own")
    assert _resolved(_blueprint(tmp_path / "loose" / "b.yml"))[0] == ["openai:own"]
    own.unlink()
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    _collection(repo, "openai:repo")
    _collection(tmp_path, "openai:planted")  # above the repository: never
    assert _resolved(_blueprint(repo / "evals" / "x" / "b.yml"))[0] == ["openai:repo"]
    (repo / "models" / "CORE.json").unlink()
    assert "openai:planted" not in _resolved(repo / "evals" / "x" / "b.yml")[0]


@pytest.mark.parametrize(("content", "what"), [
    ('{"model": "not-an-array"}', "is a JSON object, not an array of model ids"),
    ('[1, "openai:x"]', "is an array holding a value that is not a string"),
    ('[1,', "is not readable as JSON"),
])
def test_a_collection_file_of_the_wrong_shape_is_named_not_called_missing(tmp_path: Path, content: str,
                                                                           what: str) -> None:
    """Weval refuses such a file ("Invalid format for local model collection …"); the check said "Unknown
    model collection 'CORE'. Known: GOOD." and the run "no models/<NAME>.json found"."""
    _collection(tmp_path / "repo", "x")
    (tmp_path / "repo" / "models" / "CORE.json").write_text(content, encoding="utf-8")
    (tmp_path / "repo" / "models" / "GOOD.json").write_text('["openai:a"]', encoding="utf-8")
    (tmp_path / "repo" / ".git").mkdir()
    a = analyze_file(_blueprint(tmp_path / "repo" / "blueprints" / "b.yml"))
    [finding] = [f for f in a.findings if f.code.endswith("collection")]
    assert finding.code == "unresolved-collection"
    assert f"models/CORE.json {what}" in finding.message and "Known" not in finding.message
