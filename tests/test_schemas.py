"""The JSON Schemas: generated from the registry, committed, shipped, and true to the corpus."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

from evalspec import schemas
from evalspec.schema_gen import FILES, SCHEMA_DIR, generate, render
from evalspec.source import parse_yaml, to_python

from .conftest import CORPUS


@pytest.mark.parametrize("kind", sorted(FILES))
def test_committed_schema_is_current(kind: str) -> None:
    committed = (SCHEMA_DIR / FILES[kind]).read_text(encoding="utf-8")
    assert committed == render(kind), f"schemas/{FILES[kind]} is stale: run `evalspec schema {kind} --write`"


@pytest.mark.parametrize("kind", sorted(FILES))
def test_schema_is_valid_draft7_with_descriptions(kind: str) -> None:
    schema = schemas.load(kind)
    jsonschema.Draft7Validator.check_schema(schema)
    for name, d in schema["$defs"].items():
        for prop, sub in d.get("properties", {}).items():
            assert sub.get("description"), f"{kind}: $defs.{name}.{prop} has no description"


def _documents(paths: list[Path]) -> list[tuple[Path, object]]:
    out = []
    for path in paths:
        parsed = parse_yaml(path.read_text(encoding="utf-8"))
        out += [(path, to_python(d.root)) for d in parsed.documents if d.root is not None]
    return out


def test_weval_schema_accepts_the_corpus() -> None:
    validator = jsonschema.Draft7Validator(schemas.load("weval"))
    files = sorted((CORPUS / "weval-configs" / "blueprints").rglob("*.yml"))
    rejected = sorted({p.name for p, doc in _documents(files) if not validator.is_valid(doc)})
    # The only corpus blueprint the reference rejects for its structure (toolUse.mode: auto).
    assert rejected == ["tool-use-native-test.yml"]


def test_weval_schema_rejects_typos() -> None:
    validator = jsonschema.Draft7Validator(schemas.load("weval"))
    assert validator.is_valid({"prompt": "hi", "should": ["x", {"$contains": "y"}]})
    assert not validator.is_valid({"prompt": "hi", "shuld": ["x"]})
    assert not validator.is_valid({"prompt": "hi", "should": [{"$word_count_between": "ten"}]})


def test_agentv_schema_rejects_only_what_the_checker_flags() -> None:
    """The schema cannot warn, so a key AgentV ignores (and we warn about) is an error there; it must
    never reject a file evalspec finds clean."""
    from evalspec.analysis import analyze_file

    validator = jsonschema.Draft7Validator(schemas.load("agentv"))
    files = sorted(CORPUS.glob("agentv-examples/**/*.eval.yaml"))
    rejected = {p for p, doc in _documents(files) if not validator.is_valid(doc)}
    assert len(rejected) < len(files) / 4
    for path in rejected:
        codes = {f.code for f in analyze_file(path, env={}).findings if f.severity in ("error", "warning")}
        assert codes & {"unknown-key", "unknown-assertion-type"}, path


def test_agentv_schema_accepts_deprecated_spellings() -> None:
    validator = jsonschema.Draft7Validator(schemas.load("agentv"))
    assert validator.is_valid({"eval_cases": [{"id": "a", "input": "hi", "criteria": "ok"}]})
    assert not validator.is_valid({"description": "no tests at all"})


def test_cli_prints_the_committed_schema() -> None:
    out = subprocess.run([sys.executable, "-m", "evalspec.cli", "schema", "weval"], capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out) == generate("weval")


def test_wheel_ships_the_schemas(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parent.parent
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(repo)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("evalspec_lsp-*.whl"))  # the distribution evalspec-lsp
    names = zipfile.ZipFile(wheel).namelist()
    for name in FILES.values():
        assert f"evalspec/schemas/{name}" in names
    assert "evalspec_lsp/__init__.py" in names and "evalspec/cli.py" in names
