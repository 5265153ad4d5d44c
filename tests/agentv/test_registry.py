"""The AgentV registry: every declaration is complete and its examples check clean."""

from __future__ import annotations

import pytest

from evalspec.registry.agentv import ASSERTION_SPELLINGS, ASSERTION_TYPES, REGISTRY, normalize_assertion_type
from evalspec.registry.agentv_assertions import COMMON_FIELDS
from evalspec.source import parse_yaml, to_python

from .helpers import check

SPEC_TYPES = {"contains", "icontains", "starts-with", "ends-with", "equals", "contains-any", "contains-all",
              "icontains-any", "icontains-all", "regex", "is-json", "rubrics", "llm-judge", "code-judge",
              "agent-judge", "composite", "tool-trajectory", "field-accuracy", "latency", "cost", "token-usage",
              "execution-metrics"}


def test_every_type_of_the_compat_notes_is_declared() -> None:
    assert set(ASSERTION_TYPES) == SPEC_TYPES


def test_runner_support_flags() -> None:
    not_yet: set[str] = set()  # every type of the compat notes runs
    assert {n for n, t in ASSERTION_TYPES.items() if not t.runnable} == not_yet


def test_common_fields_are_declared_once() -> None:
    assert [f.name for f in COMMON_FIELDS] == ["type", "name", "weight", "required", "negate"]
    for t in ASSERTION_TYPES.values():
        assert not {f.name for f in t.fields} & {"type", "name", "weight", "required", "negate"}, t.name


def test_spellings_and_normalization() -> None:
    assert ASSERTION_SPELLINGS["code_judge"] == "code-judge" and ASSERTION_SPELLINGS["is-json"] == "is-json"
    assert normalize_assertion_type("tool_trajectory") == "tool-trajectory"
    assert normalize_assertion_type("word_count") == "word-count"


@pytest.mark.parametrize("name", sorted(SPEC_TYPES))
def test_each_example_is_one_clean_assert_item(name: str) -> None:
    t = ASSERTION_TYPES[name]
    assert t.doc.endswith(".") and t.scoring and t.example
    items = to_python(parse_yaml(t.example).documents[0].root)
    assert isinstance(items, list) and len(items) == 1 and items[0]["type"] == name
    indented = "\n".join("      " + line for line in t.example.split("\n"))
    result = check("tests:\n  - id: t\n    input: hi\n    criteria: ok\n    assert:\n" + indented + "\n")
    allowed = {"missing-prompt-file", "missing-script", "judge-prompt-variables"}  # files the examples name
    assert [f for f in result.findings if f.code not in allowed] == []


def test_object_references_resolve() -> None:
    for spec in REGISTRY.objects.values():
        for f in spec.fields:
            for ref in (f.object, f.items_object):
                assert ref is None or ref in REGISTRY.objects, (spec.name, f.name, ref)
            assert f.doc, (spec.name, f.name)


@pytest.mark.parametrize("name", sorted(SPEC_TYPES))
def test_one_flag_says_what_is_scored(name: str) -> None:
    """Completion, hover and the runner read the same `runnable` flag: none calls a type scored
    unless the runner scores it."""
    from evalspec.agentv.model import Assertion
    from evalspec.findings import Span
    from evalspec.ide import completion, docs
    from evalspec.run.score.agentv_scorable import unscorable

    t = ASSERTION_TYPES[name]
    tmpl = completion._type_tmpl(t, t.name, "0", None)
    assert ("not scored yet" in tmpl.detail) is (not t.runnable)
    assert ("does not score it yet" in docs.assertion_markdown(t, t.name)) is (not t.runnable)
    why = unscorable(Assertion(type=name, name=name, span=Span(0, 0, 0, 0)), judge=True)
    assert (why is not None and "does not score" in why) is (not t.runnable)
