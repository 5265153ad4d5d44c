"""Small helpers for AgentV tests: check inline YAML, find findings, apply quick fixes."""

from __future__ import annotations

import textwrap
from pathlib import Path

from evalspec.agentv import AgentvResult, check_agentv, check_agentv_targets
from evalspec.findings import Finding, Findings, Fix
from evalspec.source import parse_yaml


def check(text: str, tmp: Path | None = None, *, name: str = "suite.eval.yaml", env: dict[str, str] | None = None,
          files: dict[str, str] | None = None) -> AgentvResult:
    """Check `text` (dedented). With `tmp`, the file and `files` are written there first."""
    text = textwrap.dedent(text).lstrip("\n")
    path = None
    if tmp is not None:
        for rel, content in (files or {}).items():
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return check_agentv(parse_yaml(text), path, env=env if env is not None else {})


def targets(text: str) -> Findings:
    return check_agentv_targets(parse_yaml(textwrap.dedent(text).lstrip("\n")), None)


def codes(result: AgentvResult | Findings) -> list[str]:
    findings = result.findings if isinstance(result, AgentvResult) else result
    return sorted(f.code for f in findings)


def one(result: AgentvResult | Findings, code: str) -> Finding:
    """The single finding with `code`."""
    findings = result.findings if isinstance(result, AgentvResult) else result
    hits = [f for f in findings if f.code == code]
    assert len(hits) == 1, f"expected one {code}, got {[(f.code, f.message) for f in findings]}"
    return hits[0]


def at(finding: Finding) -> tuple[int, int]:
    """1-based line and column of a finding's start, as editors show it."""
    return finding.span.start_line + 1, finding.span.start_col + 1


def apply(text: str, fix: Fix) -> str:
    """`text` (dedented, as `check` sees it) with the fix's edits applied."""
    text = textwrap.dedent(text).lstrip("\n")
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def pos(line: int, col: int) -> int:
        return offsets[line] + col if line < len(lines) else len(text)

    for edit in sorted(fix.edits, key=lambda e: (e.span.start_line, e.span.start_col), reverse=True):
        start, end = pos(edit.span.start_line, edit.span.start_col), pos(edit.span.end_line, edit.span.end_col)
        text = text[:start] + edit.new_text + text[end:]
    return text
