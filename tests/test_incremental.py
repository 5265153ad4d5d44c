"""The editor's re-analysis gives exactly what a fresh analysis gives, whatever the edit."""

from __future__ import annotations

import pytest

from evalspec.analysis import analyze
from evalspec.detect import FileKind
from evalspec.incremental import DocumentAnalyzer

BASE = """title: t
models: [openai:gpt-4o-mini]
point_defs:
  long: "r.length > 5"
---
- id: a
  prompt: first
  should:
    - $ref: long
- id: b
  prompt: second
  should:
    - $contains: x
- id: c
  prompt: third
"""

EDITS = [
    ("typo in a prompt", lambda t: t.replace("    - $contains: x", "    - $contian: x")),
    ("line inserted above prompts", lambda t: t.replace("  prompt: first\n", "  prompt: first\n  ideal: one\n")),
    ("line removed above prompts", lambda t: t.replace("  should:\n    - $ref: long\n", "")),
    ("header change that prompts depend on", lambda t: t.replace("  long:", "  longer:")),
    ("header change they do not depend on", lambda t: t.replace("title: t", "title: changed")),
    ("duplicate id appears", lambda t: t.replace("- id: c", "- id: a")),
    ("syntax error in one prompt", lambda t: t.replace("  prompt: second", "  prompt: [second")),
    ("prompt deleted", lambda t: t.replace("- id: b\n  prompt: second\n  should:\n    - $contains: x\n", "")),
]


def facts(text: str, result: object) -> tuple[object, ...]:
    a = result
    return ([(f.code, f.span, f.message, [(e.span, e.new_text) for x in f.fixes for e in x.edits]) for f in a.findings],
            [p.to_dict() for p in a.blueprint.prompts] if a.blueprint else None)


@pytest.mark.parametrize(("name", "edit"), EDITS, ids=[e[0] for e in EDITS])
def test_incremental_equals_fresh(name: str, edit: object) -> None:
    doc = DocumentAnalyzer("blueprints/x.yml")
    doc.analyze(BASE)
    text = edit(BASE)  # type: ignore[operator]
    assert facts(text, doc.analyze(text)) == facts(text, analyze(text, "blueprints/x.yml"))
    # and back again: the caches must not keep stale results
    assert facts(BASE, doc.analyze(BASE)) == facts(BASE, analyze(BASE, "blueprints/x.yml"))


def test_format_is_kept_while_the_text_is_broken() -> None:
    doc = DocumentAnalyzer("notes.yml")
    good = "- prompt: hi\n  should: [greets]\n"
    assert doc.analyze(good).kind is FileKind.WEVAL
    broken = good + "- prompt: [\n"
    result = doc.analyze(broken)
    assert result.kind is FileKind.WEVAL
    assert [f.code for f in result.findings] == ["yaml-syntax"]


def test_one_broken_prompt_does_not_hide_the_others() -> None:
    text = BASE.replace("  prompt: first", "  prompt: [first").replace("- id: c", "- id: c\n  shuld: []")
    codes = [f.code for f in analyze(text, "blueprints/x.yml").findings]
    assert codes == ["yaml-syntax", "unknown-key"]


def tree_facts(result: object) -> list[object]:
    """Every node of the parsed tree with its span, in order."""
    from evalspec.source import Mapping, Sequence

    out: list[object] = []
    stack = [d.root for d in result.parsed.documents if d.root is not None]  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        kind = "mapping" if isinstance(node, Mapping) else "list" if isinstance(node, Sequence) else "scalar"
        out.append((kind, node.span, getattr(node, "value", None)))
        if isinstance(node, Mapping):
            for k, v in node.pairs:
                stack += [v, k]
        elif isinstance(node, Sequence):
            stack += reversed(node.items)
    return out


@pytest.mark.parametrize(("name", "edit"), [
    *EDITS,
    ("lines inserted at the top", lambda t: "# one\n# two\n" + t),
    ("a prompt moved to another document", lambda t: t.replace("- id: b", "---\n- id: b")),
], ids=[*(e[0] for e in EDITS), "lines inserted at the top", "a prompt moved to another document"])
def test_an_analysis_handed_out_never_changes(name: str, edit: object) -> None:
    """The editor's caches reuse what did not change, but never by changing an analysis already handed
    out: after a later edit's analysis, the earlier one still describes its own text."""
    doc = DocumentAnalyzer("blueprints/x.yml")
    doc.analyze(BASE)  # the caches now hold BASE's items
    first = doc.analyze(BASE + "- id: d\n  prompt: fourth\n")
    before = (facts("", first), tree_facts(first))
    text = edit(BASE + "- id: d\n  prompt: fourth\n")  # type: ignore[operator]
    later = doc.analyze(text)
    assert (facts("", first), tree_facts(first)) == before
    fresh = analyze(text, "blueprints/x.yml")
    assert (facts("", later), tree_facts(later)) == (facts("", fresh), tree_facts(fresh))
    doc.analyze(BASE)  # and once more: the later one is left alone too
    assert (facts("", later), tree_facts(later)) == (facts("", fresh), tree_facts(fresh))


def test_memoised_data_is_per_analysis() -> None:
    doc = DocumentAnalyzer("blueprints/x.yml")
    a = doc.analyze(BASE)
    assert a.memoised("n", lambda an: len(an.text)) == len(BASE)
    assert a.memoised("n", lambda an: -1) == len(BASE)  # computed once
    b = doc.analyze(BASE + "\n")
    assert "n" not in b.memo


def test_the_range_guard_corrects_a_copy_never_the_finding_itself() -> None:
    """The last guard (a range outside the text pulled inside, a fix out of range dropped) must not
    change the finding it was given: the caches hand the same finding to the next analysis, and an
    analysis already returned holds it."""
    from evalspec.analysis import _inside_the_text
    from evalspec.findings import Edit, Finding, Fix, Severity, Span

    lines = ["one", "two"]
    bad = Finding("X", Severity.ERROR, "m", Span(7, 0, 9, 4), fixes=(Fix("f", (Edit(Span(8, 0, 8, 1), ""),)),))
    good = Finding("Y", Severity.ERROR, "m", Span(1, 0, 1, 3))
    given = [bad, good]
    out = _inside_the_text(given, lines)
    assert (bad.span, len(bad.fixes)) == (Span(7, 0, 9, 4), 1)  # untouched
    assert given == [bad, good] and given[0] is bad
    assert out[1] is good
    assert out[0] is not bad and out[0].fixes == () and out[0].span.end_line <= 1
