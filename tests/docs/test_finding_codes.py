"""Every finding code is declared once (engine/registry/finding_codes.py) with a page, and the pages tell the
truth: each example raises its code when checked, and each fixed example does not.

Codes are found three ways, so a code added anywhere without its declaration fails here: read from the
source (the first argument of `findings.error/warning/info/hint(...)` and `Finding(...)`, and the
`("code", "Message…")` pairs rule tables hold), from the annotations of tests/fixtures, and by checking
every fixture and every file of the shared corpus and collecting what comes out.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from evalspec.analysis import analyze_file
from evalspec.finding_docs import checked, doc_url, page, set_docs_url
from evalspec.ide import run_notes
from evalspec.registry.finding_codes import CODE_LIST, CODES

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$|^[a-z]+$")
ANNOTATION = re.compile(r"#.*?(?:error|warning|info|hint)\[([a-z0-9-]+)\]")


def _message_like(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value[:1].isupper()
    if isinstance(node, ast.JoinedStr) and node.values:
        return _message_like(node.values[0])
    return isinstance(node, ast.BinOp) and _message_like(node.left)


def codes_in_source() -> dict[str, str]:
    """code -> where it is emitted, read from engine/ and server/."""
    found: dict[str, str] = {}
    for path in sorted([*(ROOT / "engine").rglob("*.py"), *(ROOT / "server").rglob("*.py")]):
        if path.name == "finding_codes.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            first: ast.AST | None = None
            if isinstance(node, ast.Call) and len(node.args) >= 3:
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if name in ("error", "warning", "info", "hint", "Finding", "report"):
                    first = node.args[0]
            elif isinstance(node, ast.Tuple) and len(node.elts) >= 2 and _message_like(node.elts[1]):
                first = node.elts[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and CODE.match(first.value) \
                    and ("-" in first.value or first.value == "unreadable"):
                found.setdefault(str(first.value), f"{path.relative_to(ROOT)}:{node.lineno}")  # type: ignore[attr-defined]
    for code in (run_notes.FAILED, run_notes.NOT_SCORED, run_notes.NO_ANSWER):  # the editor's run notes
        found.setdefault(code, "engine/ide/run_notes.py")
    return found


def codes_in_fixtures() -> set[str]:
    out: set[str] = set()
    for path in (ROOT / "tests" / "fixtures").rglob("*"):
        if path.is_file():
            out.update(ANNOTATION.findall(path.read_text(encoding="utf-8", errors="replace")))
    return out


def test_every_code_in_the_source_is_declared() -> None:
    found = codes_in_source()
    assert len(found) > 120  # the scan sees the checkers (a broken scan would pass everything)
    missing = {code: where for code, where in found.items() if code not in CODES}
    assert not missing, f"codes without a declaration in engine/registry/finding_codes.py: {missing}"


def test_every_code_annotated_in_the_fixtures_is_declared() -> None:
    annotated = codes_in_fixtures()
    assert len(annotated) > 60
    assert annotated <= set(CODES), sorted(annotated - set(CODES))


def test_every_declared_code_is_emitted_somewhere() -> None:
    """No page for a code nothing reports (a renamed code leaves its old declaration behind)."""
    emitted = set(codes_in_source()) | codes_in_fixtures()
    assert set(CODES) <= emitted, sorted(set(CODES) - emitted)


def test_codes_are_declared_once_with_their_parts() -> None:
    assert len(CODE_LIST) == len(CODES)
    for entry in CODE_LIST:
        assert entry.severity in ("error", "warning", "info"), entry.code
        assert entry.title and entry.why.rstrip(")").endswith("."), entry.code
        assert entry.example is not None or entry.fix, f"{entry.code}: neither an example nor a fix"


def _checked_files(corpus: Path) -> set[str]:
    seen: set[str] = set()
    paths = [p for p in (ROOT / "tests" / "fixtures").rglob("*") if p.is_file()]
    paths += [p for p in corpus.rglob("*") if p.is_file() and p.suffix in (".yml", ".yaml", ".json", ".jsonl", ".csv")]
    for path in paths:
        seen.update(f.code for f in analyze_file(path).findings)
    return seen


def test_every_code_reported_on_the_fixtures_and_the_corpus_is_declared(corpus: Path) -> None:
    seen = _checked_files(corpus)
    assert len(seen) > 60
    assert seen <= set(CODES), sorted(seen - set(CODES))


@pytest.mark.parametrize("entry", [c for c in CODE_LIST if c.example is not None], ids=lambda c: c.code)
def test_the_example_raises_its_code_and_the_fix_removes_it(entry) -> None:  # type: ignore[no-untyped-def]
    assert entry.code in {f.code for _, f in checked(entry, entry.example)}
    if entry.fixed is not None:
        after = checked(entry, entry.fixed)
        assert entry.code not in {f.code for _, f in after}
        # The fixed file is clean: no other error or warning either (a fix that trades one mistake for another).
        assert [line for line, f in after if f.severity in ("error", "warning")] == []


def test_most_codes_have_a_tried_example() -> None:
    with_example = [c for c in CODE_LIST if c.example is not None]
    assert len(with_example) >= 115, len(with_example)


def test_a_page_shows_what_check_really_says() -> None:
    text = page(CODES["unknown-key"])
    assert text.startswith("# unknown-key\n")
    assert "blueprints/example.yml:2:3: warning[unknown-key]: Unknown key 'shuld' in a prompt; did you mean 'should'?" in text
    assert "quick fix: *Rename 'shuld' to 'should'*" in text
    assert "## Fix" in text and "  should:" in text


def test_links_go_to_the_docs_site_when_set_else_to_a_local_page(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALSPEC_DOCS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("EVALSPEC_DOCS_URL", raising=False)
    set_docs_url(None)  # links are worked out again, from this environment
    try:
        url = doc_url("unknown-key")
        assert url is not None and url.startswith("file://") and url.endswith("/codes/unknown-key.md")
        local = Path(url.removeprefix("file://"))
        assert local.is_relative_to(tmp_path) and local.read_text(encoding="utf-8") == page(CODES["unknown-key"], check=False)
        assert doc_url("no-such-code") is None
        monkeypatch.setenv("EVALSPEC_DOCS_URL", "https://docs.example.org/evalspec/")
        set_docs_url(None)
        assert doc_url("unknown-key") == "https://docs.example.org/evalspec/codes/unknown-key/"
        set_docs_url("http://127.0.0.1:8000")  # the editor's setting wins over the environment
        assert doc_url("yaml-syntax") == "http://127.0.0.1:8000/codes/yaml-syntax/"
    finally:
        set_docs_url(None)


def test_evalspec_rule_prints_a_codes_page(capsys: pytest.CaptureFixture[str]) -> None:
    from evalspec.cli import main

    assert main(["rule", "duplicate-key"]) == 0
    assert capsys.readouterr().out == page(CODES["duplicate-key"])
    assert main(["rule", "unknwn-key"]) == 2
    assert "did you mean 'unknown-key'?" in capsys.readouterr().err
    assert main(["rule", "--all"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == len(CODES) and listed[0].split()[0] == min(CODES)
    assert main(["--help"]) == 0
    assert "docs: the guide and reference are docs/" in capsys.readouterr().out
