"""The real eval files of ../shared/corpus: every file loads, and the findings are the reviewed golden set.

Regenerate after a deliberate change with `EVALSPEC_UPDATE_GOLDEN=1 pytest tests/test_corpus.py`, then
read the diff: every line of tests/golden/corpus-findings.txt must be a true finding.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalspec.analysis import analyze_file
from evalspec.detect import FileKind

from .conftest import CORPUS

GOLDEN = Path(__file__).parent / "golden" / "corpus-findings.txt"
EXTENSIONS = (".yml", ".yaml", ".json", ".jsonl")


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in EXTENSIONS)


def render() -> tuple[str, dict[str, FileKind]]:
    lines: list[str] = []
    kinds: dict[str, FileKind] = {}
    for path in corpus_files():
        analysis = analyze_file(path, env={})  # must not raise; a fixed, empty environment
        rel = path.relative_to(CORPUS).as_posix()
        kinds[rel] = analysis.kind
        for f in analysis.findings:
            where = Path(f.path).resolve().relative_to(CORPUS.resolve()).as_posix() if f.path else rel
            lines.append(f"{where}:{f.span.start_line + 1}:{f.span.start_col + 1}: {f.severity}[{f.code}]: {f.message}")
    return "\n".join(lines) + "\n", kinds


def test_corpus_findings_match_the_reviewed_golden_file() -> None:
    text, _ = render()
    if os.environ.get("EVALSPEC_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_corpus_kinds() -> None:
    _, kinds = render()
    weval = [k for p, k in kinds.items() if p.startswith("weval-configs/blueprints/")]
    assert weval and all(k is FileKind.WEVAL for k in weval)
    assert all(k is FileKind.NONE for p, k in kinds.items() if p.startswith("weval-configs/models/"))
    evals = [k for p, k in kinds.items() if p.endswith(".eval.yaml")]
    assert evals and all(k is FileKind.AGENTV for k in evals)


def test_known_facts_about_the_corpus() -> None:
    """The facts ../shared/corpus/README.md states, each on its line."""
    text, _ = render()
    rows = text.splitlines()

    def codes(name: str) -> list[str]:
        return [r for r in rows if r.startswith(f"weval-configs/blueprints/{name}:")]

    for name, line in (("eu-ai-act-202401689.yml", 3), ("maternal-health-uttar-pradesh.yml", 2)):
        found = codes(name)
        assert len(found) == 1 and f"{name}:{line}:" in found[0] and "yaml-syntax" in found[0], found
    assert any("invalid-tool-mode" in r for r in codes("tool-use-native-test.yml"))
    quoted = [r for r in rows if "quoted-function" in r]
    assert len(quoted) >= 50
