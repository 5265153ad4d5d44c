"""Go to definition and document links."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from evalspec.findings import Span
from evalspec.ide.navigation import definition, document_links

from .helpers import at, cursor, load

DEFS = """\
point_defs:
  polite: {$icontains: please}
  brief: "r.length < 200"
---
- prompt: x
  should:
    - $ref: brief‸
"""


def test_ref_value_goes_to_its_point_def() -> None:
    analysis, line, col = cursor(DEFS, "weval")
    [loc] = definition(analysis, line, col - 2)
    assert loc.path == analysis.path and loc.span == Span(2, 2, 2, 7)


def test_ref_key_goes_there_too_and_unknown_names_go_nowhere() -> None:
    analysis, line, _ = cursor(DEFS, "weval")
    [loc] = definition(analysis, line, 7)  # on `$ref`
    assert loc.span == Span(2, 2, 2, 7)
    other, line, col = cursor(DEFS.replace("brief‸", "missing‸"), "weval")
    assert definition(other, line, col - 1) == []


def test_ref_while_the_prompt_is_broken() -> None:
    text = DEFS.replace("$ref: brief‸", "$ref: pol‸ite\n  shou")
    analysis, line, col = cursor(text, "weval")
    assert not analysis.parsed.ok
    [loc] = definition(analysis, line, col)
    assert loc.span == Span(1, 2, 1, 8)


def project(tmp_path: Path) -> Path:
    files = {
        "cases/basic.jsonl": "{}\n",
        "judges/tone.md": "Rate {{ answer }}",
        "judges/check.py": "print('{\"score\": 1}')",
        "docs/spec.pdf": "x",
        "workspace.yaml": "template: ./tpl\n",
    }
    for rel, content in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    return tmp_path / "suite.eval.yaml"


SUITE = """\
workspace: ./workspace.yaml
tests:
  - file://cases/basic.jsonl
  - id: a
    input:
      - role: user
        content:
          - type: file
            value: docs/spec.pdf
          - type: text
            value: judges/tone.md
    assert:
      - type: llm-judge
        prompt: ./judges/tone.md
      - type: code-judge
        command: [uv, run, check.py]
        cwd: judges
      - type: contains
        value: judges/tone.md
      - type: llm-judge
        prompt: ./judges/missing.md
"""


def test_document_links(tmp_path: Path) -> None:
    path = project(tmp_path)
    analysis = load(SUITE, "agentv", path)
    links = {(link.span.start_line, link.target.name) for link in document_links(analysis)}
    assert links == {
        (0, "workspace.yaml"),
        (2, "basic.jsonl"),
        (8, "spec.pdf"),  # a file content block; the text block with a path-like text is not a link
        (13, "tone.md"),
        (15, "check.py"),  # relative to the code judge's cwd
    }
    # A contains value that looks like a path, and a judge prompt that does not exist, are not links.
    targets = [link for link in document_links(analysis) if link.span.start_line == 15]
    assert targets[0].target == (tmp_path / "judges" / "check.py").resolve()
    assert targets[0].span == Span(15, 27, 15, 35)


def test_tests_path_links(tmp_path: Path) -> None:
    path = project(tmp_path)
    analysis = load("tests: cases/basic.jsonl\n", "agentv", path)
    [link] = document_links(analysis)
    assert link.span == Span(0, 7, 0, 24) and link.target.name == "basic.jsonl"


def test_definition_of_file_references(tmp_path: Path) -> None:
    path = project(tmp_path)
    clean, line, col = at(SUITE.replace("prompt: ./judges/tone.md", "prompt: ./judges/to‸ne.md"))
    [loc] = definition(load(clean, "agentv", path), line, col)
    assert loc.path == (tmp_path / "judges" / "tone.md").resolve() and loc.span == Span(0, 0, 0, 0)
    clean, line, col = at(SUITE.replace("file://cases/basic.jsonl", "file://cases/ba‸sic.jsonl"))
    [loc] = definition(load(clean, "agentv", path), line, col)
    assert loc.path is not None and loc.path.name == "basic.jsonl"
    clean, line, col = at(SUITE.replace("prompt: ./judges/missing.md", "prompt: ./judges/mis‸sing.md"))
    assert definition(load(clean, "agentv", path), line, col) == []


def test_collection_links(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "CORE.json").write_text(json.dumps(["openai:gpt-4.1"]))
    (tmp_path / ".git").mkdir()
    text = textwrap.dedent("""\
        models:
          - CORE
          - openai:gpt-4o
        ---
        - prompt: x
        """)
    analysis = load(text, "weval", tmp_path / "blueprints" / "b.yml")
    [link] = document_links(analysis)
    assert link.span == Span(1, 4, 1, 8) and link.target == tmp_path / "models" / "CORE.json"
    [loc] = definition(analysis, 1, 5)
    assert loc.path == tmp_path / "models" / "CORE.json"
    flow = load("models: [openai:gpt-4o, CORE]\n---\n- prompt: x\n", "weval", tmp_path / "blueprints" / "b.yml")
    [loc] = definition(flow, 0, 26)  # inside `[…]`
    assert loc.path == tmp_path / "models" / "CORE.json"


def test_no_links_without_a_path() -> None:
    from evalspec.analysis import analyze
    from evalspec.detect import FileKind

    analysis = analyze("tests: cases/basic.jsonl\n", None, kind=FileKind.AGENTV)
    assert document_links(analysis) == []


def test_content_files_resolve_from_parent_folders_like_agentv(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "policy.md").write_text("x")
    (tmp_path / "evals").mkdir()
    text = ("tests:\n  - id: a\n    criteria: c\n    input:\n      - role: user\n        content:\n"
            "          - type: file\n            value: shared/policy.md\n")
    analysis = load(text, "agentv", tmp_path / "evals" / "x.eval.yaml")
    [link] = document_links(analysis)
    assert link.target == (tmp_path / "shared" / "policy.md").resolve()
