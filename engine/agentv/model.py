"""The normalized AgentV suite: aliases and shorthands resolved, defaults applied, spans kept.

This is what the runner, code lenses and hover read. `check.py` builds it from the located tree with
`Located.build`: the checker has already validated every value.

Expansion rules (as AgentV v2.19 expands them): `input` string → one user message; `expected_output`
string → one assistant message, a mapping without `role` → an assistant message with that object as
content; canonical `input_messages`/`expected_messages` win over the aliases; test-level `rubrics` →
a `type: rubrics` assertion; a rubric string → `{id: rubric-<i+1>, outcome}`; a `score_ranges` map →
a list of ranges. A test's effective assertions are its own, then the suite's unless `skip_defaults`;
the suite's `input` is prepended to the test's unless `skip_defaults`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..findings import Span
from ..located import Located
from ..registry.agentv_assertions import ASSERTION_TYPES, AssertionType


@dataclass(kw_only=True)
class ContentBlock(Located):
    type: str  # text | file | image | json
    value: Any
    span: Span
    resolved_path: Path | None = None  # for file/image blocks whose file exists


@dataclass(kw_only=True)
class ToolCall(Located):
    tool: str
    input: Any = None
    output: Any = None
    id: str | None = None
    span: Span


@dataclass(kw_only=True)
class Message(Located):
    """A conversation message. `content` is a string, a list of `ContentBlock`s (plain strings in a
    list become text blocks), a structured object (dict/list), or None (tool calls only)."""

    role: str
    content: Any = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    name: str | None = None
    tool_call_id: str | None = None
    span: Span

    def text(self) -> str:
        """The message as plain text: text blocks joined, structured content as JSON."""
        import json

        if isinstance(self.content, str):
            return self.content
        if isinstance(self.content, list) and all(isinstance(b, ContentBlock) for b in self.content):
            return "\n".join(str(b.value) for b in self.content if b.type == "text")
        if self.content is None:
            return ""
        return json.dumps(self.content, ensure_ascii=False)


@dataclass(kw_only=True)
class Assertion(Located):
    """One effective assertion. `type` is kebab-case (`code-judge`), `config` the type's own fields,
    normalized (rubric criteria expanded, `score_ranges` as lists, `command` as argv), `children` the
    inner assertions of a composite."""

    type: str
    name: str
    weight: float = 1.0
    required: bool | float = False
    negate: bool = False
    config: dict[str, Any] = field(default_factory=dict)
    children: list[Assertion] = field(default_factory=list)
    custom: bool = False  # a custom type from .agentv/assertions/<type>.ts
    span: Span
    source_path: Path | None = None  # the file the assertion is written in

    @property
    def registered(self) -> AssertionType | None:
        """Its type's registry entry; None for a custom type (.agentv/assertions) or one the registry lacks."""
        return None if self.custom else ASSERTION_TYPES.get(self.type)

    @property
    def threshold(self) -> float | None:
        """The gate's minimum score: 0.8 for `required: true`, the number itself, None when not a gate."""
        if self.required is True:
            return 0.8
        if self.required is False:
            return None
        return float(self.required)


@dataclass(kw_only=True)
class AgentvTest(Located):
    id: str
    id_span: Span | None = None
    span: Span
    source_path: Path | None = None  # the file the test is written in (an external tests file or the suite)
    criteria: str | None = None
    criteria_span: Span | None = None
    input_messages: list[Message] = field(default_factory=list)  # suite input first, unless skip_defaults
    expected_messages: list[Message] = field(default_factory=list)
    assertions: list[Assertion] = field(default_factory=list)  # own, then the suite's unless skip_defaults
    skip_defaults: bool = False
    execution: dict[str, Any] = field(default_factory=dict)
    workspace: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    conversation_id: str | None = None
    description: str | None = None
    note: str | None = None
    dataset: str | None = None

    @property
    def uses_default_judge(self) -> bool:
        """AgentV grades a test without assertions with its default LLM judge (against `criteria`)."""
        return not self.assertions

    @property
    def reference_answer(self) -> str:
        """The content of the last expected message, as AgentV's judges see it (`reference_answer`)."""
        return reference_answer(self.expected_messages)


def reference_answer(expected_messages: list[Message]) -> str:
    """The content of the last expected message, as AgentV's judges see it (yaml-parser.ts): text as
    written, structured content (an object, a list of values) as `JSON.stringify(content, null, 2)`."""
    if not expected_messages:
        return ""
    last = expected_messages[-1]
    content = last.content
    if isinstance(content, dict) or (isinstance(content, list) and not any(
            isinstance(b, ContentBlock) for b in content)):
        import json

        return json.dumps(_js_numbers(content), indent=2, ensure_ascii=False)
    return last.text()


def _js_numbers(value: Any) -> Any:
    """Integral floats as ints (JavaScript writes `1.0` as `1`), through lists and objects."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return int(value)
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_numbers(v) for v in value]
    return value


@dataclass(kw_only=True)
class AgentvSuite(Located):
    path: Path | None = None
    name: str | None = None
    description: str | None = None
    version: str | None = None
    author: str | None = None
    license: str | None = None
    tags: list[str] = field(default_factory=list)
    requires: dict[str, Any] = field(default_factory=dict)
    tests: list[AgentvTest] = field(default_factory=list)
    execution: dict[str, Any] = field(default_factory=dict)
    target: str | None = None  # execution.target, or the legacy top-level target
    targets: list[str] = field(default_factory=list)  # execution.targets
    trials: dict[str, Any] | None = None  # {count, strategy, cost_limit_usd}, strategy defaulted
    assert_defaults: list[Assertion] = field(default_factory=list)
    input_defaults: list[Message] = field(default_factory=list)
    workspace: Any = None
    tests_files: list[Path] = field(default_factory=list)  # external files the tests came from
    span: Span

    def to_dict(self) -> dict[str, Any]:
        # a big suite's tests may be a store (test_store.py): as plain data, the list it stands for
        return dataclasses.asdict(self.evolve(tests=list(self.tests)))

