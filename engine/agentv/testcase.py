"""One test: its fields checked, AgentV's completeness rule applied, and its normalized form built.

AgentV runs a test only when it has a non-empty string `id` (spaces will do), an `input` that gives at
least one message (an empty string does), and at least one of `criteria`, `expected_output` (`''` and
`[]` count) or `assert`; otherwise it logs "Skipping incomplete test" and moves on. We report that on
the test instead, and leave the test out of the model (it would not run).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..findings import Edit, Finding, Fix, Span, replace
from ..source import BrokenItem, Mapping, Node, Scalar, findings_within, moved_finding, node_type_name
from ..validation.yaml_text import space_before
from .assertions import check_assert_list, rubrics_entry
from .context import Context, kept_key
from .messages import check_expected, check_input
from .model import AgentvTest, Assertion, Message
from .workspace import check_workspace

_INCOMPLETE = ("Skipping incomplete test: {id}. Missing required fields: id, input, and at least one of "
               "criteria/expected_output/assert")


@dataclass
class SuiteDefaults:
    """What the suite gives every test unless it sets `skip_defaults`."""

    input: list[Message] = field(default_factory=list)
    assertions: list[Assertion] = field(default_factory=list)


class RepeatedTests:
    """`check_test`, or for a test whose text was checked before in the same file and gave no test (an
    incomplete or invalid one), that check's findings moved to its place: what checking it again would
    give. A 4 MB file holds 840,000 `- {}`, each ~10 µs to check, most of the analysis.

    Only a check that depends on nothing but the test's text (and its file and the suite's defaults, the
    same for every test of a suite's file) is kept: no alias, no block scalar, no `${{ VAR }}` (its value
    is the node's), no read of the file's lines (a fix may edit around the test), no file taken from the
    suite's budget (a second reference would find less left), and every place of its findings within the
    test. A check that gives a test is not kept (the test's places would have to move too)."""

    SAME_ITEMS = 256  # distinct texts kept, the last ones checked

    def __init__(self) -> None:
        # the checks kept for one file's tests (its context), by their text; the file of the last test
        self.ctx: Context | None = None
        self.items: dict[object, tuple[Span, list[Finding]]] = {}

    def check(self, ctx: Context, node: Node, defaults: SuiteDefaults) -> AgentvTest | None:
        if type(node) is not Mapping:
            return check_test(ctx, node, defaults)
        span = node.span
        sl, sc, el, _ = span
        if el - sl > 8:
            return check_test(ctx, node, defaults)
        if ctx is not self.ctx:  # another file's tests (a suite's tests files come one after another)
            self.ctx, self.items = ctx, {}
        key: object = None
        if self.items:  # (a suite of valid tests keeps none: its tests' texts are not even made)
            key = kept_key(ctx.lines, span)
            hit = self.items.get(key)
            if hit is not None:
                first, found = hit
                line, dl, dc = first[0], sl - first[0], sc - first[1]
                if len(found) == 1:  # (most often: 840,000 `- {}` each miss their fields)
                    ctx.out.append(moved_finding(found[0], line, dl, dc))
                else:
                    ctx.out.extend([moved_finding(f, line, dl, dc) for f in found])
                return None
        mark, budget = len(ctx.out), ctx.budget_state()
        ctx.lines_read = False
        test = check_test(ctx, node, defaults)
        if test is not None or ctx.lines_read or budget != ctx.budget_state():
            return test
        if key is None:
            key = kept_key(ctx.lines, span)
            if key is None:
                return None
        found = ctx.out[mark:]
        if self.SAME_ITEMS > 0 and findings_within(span, found):
            if len(self.items) >= self.SAME_ITEMS:
                del self.items[next(iter(self.items))]  # the oldest
            self.items[key] = (span, found)
        return None


def check_test(ctx: Context, node: Node, defaults: SuiteDefaults) -> AgentvTest | None:
    if isinstance(node, BrokenItem):  # its YAML syntax error is reported already
        return None
    if not isinstance(node, Mapping):
        ctx.out.error("invalid-test", node.span, "A test must be a mapping with 'id', 'input' and 'criteria' "
                      f"(or a 'file://…' reference); found {node_type_name(node)}.")
        return None
    entries = ctx.object(node, "test", missing={"id": None}, fixes=_rubrics_fix(ctx, node), handled=(
        "id", "criteria", "input_messages", "expected_messages", "assert", "rubrics", "execution", "workspace"))
    if entries is None:
        return None

    # each field's value by name: a dict's own get, not Entries.get (a dozen times a test)
    get = {name: pair[1] for name, pair in entries.found.items()}.get
    id_node = get("id")
    str_of = ctx.values.str_of  # (ctx.str_of without its call)
    test_id = str_of(id_node)
    if id_node is not None and test_id and not test_id.strip():
        # AgentV's validator reports it, but its loader runs the test under that id (asString: non-empty)
        ctx.out.warning("blank-test-id", id_node.span,
                        f"The test's 'id' is only white space ({test_id!r}): AgentV's validator rejects it (must be a "
                        "non-empty string), but `agentv eval` runs the test under it, as evalspec's run does.")
    elif id_node is not None and not test_id:
        fix = None
        if isinstance(id_node, Scalar) and isinstance(id_node.value, (int, float)) and not isinstance(id_node.value, bool):
            fix = replace(f'Quote it: "{id_node.raw}"', id_node.span, f'"{id_node.raw}"')
        ctx.out.error("invalid-test-id", id_node.span,
                      f"Missing or invalid 'id' field (must be a non-empty string); found {node_type_name(id_node)}. "
                      "AgentV skips this test.",
                      fix=fix)
        test_id = None

    criteria_node = get("criteria")
    criteria = str_of(criteria_node)
    if criteria_node is not None:
        if criteria is None:
            ctx.out.error("wrong-type", criteria_node.span,
                          f"'criteria' must be a string; found {node_type_name(criteria_node)}.")
        elif not criteria.strip() and "${{" not in str(getattr(criteria_node, "value", "")):
            # AgentV reads an empty criteria as none (the test then needs expected_output or assert)
            ctx.out.warning("invalid-criteria", criteria_node.span,
                            "Invalid 'criteria' field (must be a non-empty string if provided); AgentV reads it as "
                            "no criteria.")

    own_input = check_input(ctx, get("input_messages"))
    expected = check_expected(ctx, get("expected_messages"))

    execution: dict[str, Any] = {}
    exec_assert_node: Node | None = None
    exec_assert_key: Scalar | None = None
    exec_skip = False
    exec_node = get("execution")
    if exec_node is not None:
        ex = ctx.object(exec_node, "execution", handled=("assert",))
        if ex is not None:
            exec_assert_node, exec_assert_key = ex.get("assert"), ex.key("assert")
            execution = {name: ctx.values.plain(v) for name, (_, v) in ex.found.items() if name != "assert"}
            exec_skip = execution.get("skip_defaults") is True

    assert_node = get("assert")
    own: list[Assertion] = []
    if assert_node is not None:
        own = check_assert_list(ctx, assert_node)
        if exec_assert_node is not None and exec_assert_key is not None:
            check_assert_list(ctx, exec_assert_node, field=str(exec_assert_key.value))
            ctx.out.warning("ignored-field", exec_assert_key.span,
                            f"'execution.{exec_assert_key.value}' is ignored because the test sets "
                            f"'{entries.key('assert').value}'.")  # type: ignore[union-attr]
    elif exec_assert_node is not None:
        own = check_assert_list(ctx, exec_assert_node, field=str(exec_assert_key.value))  # type: ignore[union-attr]

    rubrics_node = get("rubrics")
    if rubrics_node is not None:
        entry = rubrics_entry(ctx, entries.key("rubrics"), rubrics_node)  # type: ignore[arg-type]
        if entry is not None:
            own = [entry, *own]

    workspace = None
    if get("workspace") is not None:
        workspace = check_workspace(ctx, get("workspace"))  # type: ignore[arg-type]

    # AgentV reads `skip_defaults` under `execution:` only (evaluator-parser.ts, yaml-parser.ts); a test-level
    # one is ignored there, and dropping the suite's assertions on it would leave checks out.
    skip = exec_skip
    if ctx.values.value(get("skip_defaults")) is True and not exec_skip:
        key = entries.key("skip_defaults")
        ctx.out.warning("ignored-field", key.span if key is not None else entries.span,  # type: ignore[attr-defined]
                        "AgentV reads 'skip_defaults' only under 'execution:'; here it is ignored: the suite's "
                        "assert and input apply to this test.")

    # AgentV's completeness rule counts the literal `assert` key only, not `evaluators` or `rubrics`.
    assert_key = entries.key("assert")
    has_spec = bool(criteria) or bool(expected) or (assert_key is not None and assert_key.value == "assert")
    missing = [w for w, ok in (("id", bool(test_id) or id_node is not None), ("input", bool(own_input)),
                               ("criteria, expected_output or assert", has_spec)) if not ok]
    if not test_id and not missing:
        return None  # the invalid id is reported above, with the skip
    if missing:
        span = id_node.span if id_node is not None else node.pairs[0][0].span if node.pairs else node.span
        detail = "; ".join(f"no {m}" for m in missing)
        ctx.out.error("incomplete-test", span, _INCOMPLETE.format(id=test_id or "unknown") + f" ({detail}).")
        return None

    return AgentvTest.build(
        id=test_id, id_span=id_node.span if id_node is not None else None, span=node.span, source_path=ctx.path,
        criteria=criteria, criteria_span=criteria_node.span if criteria_node is not None else None,
        input_messages=(own_input if skip else [*defaults.input, *own_input]),
        expected_messages=expected,
        assertions=(own if skip else [*own, *defaults.assertions]),
        skip_defaults=skip, execution=execution, workspace=workspace,
        metadata=(ctx.values.plain(metadata) or {}) if (metadata := get("metadata")) is not None else {},
        # (None for a field not written, without two calls to say so: most tests write none of these)
        conversation_id=str_of(get("conversation_id")), description=str_of(get("description")),
        note=str_of(get("note")), dataset=str_of(get("dataset")))


def _rubrics_fix(ctx: Context, node: Mapping) -> dict[str, object]:
    """Test-level `rubrics: [...]` → `assert: [{type: rubrics, criteria: [...]}]`, when there is no `assert`."""
    for k, v in node.pairs:  # node.key_node("rubrics") and node.get("rubrics") in one pass (most tests: none)
        if isinstance(k, Scalar) and k.value == "rubrics" and isinstance(k.value, str):
            key, value = k, v
            break
    else:
        return {}
    if value is None or node.has("assert") or node.has("evaluators") or node.flow:
        return {}
    line = ctx.line(key.span.start_line)
    if not space_before(line, key.span.start_col):
        return {}  # `- rubrics:` starts the item: rewriting it is not a minimal edit
    indent = " " * key.span.start_col
    edits = [Edit(key.span, f"assert:\n{indent}  - type: rubrics\n{indent}    criteria")]
    if value.span.start_line > key.span.start_line:  # a block list below the key: indent it under criteria
        for n in range(value.span.start_line, value.span.end_line + 1):
            if ctx.line(n).strip():
                edits.append(Edit(Span.point(n, 0), "    "))
    return {"rubrics": Fix("Move into 'assert' as a 'type: rubrics' item", tuple(edits))}
