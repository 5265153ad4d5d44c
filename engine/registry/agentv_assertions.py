"""Every AgentV assertion type, declared once (AgentV eval spec v2, as AgentV v2.19 runs it).

An `AssertionType` holds the canonical kebab-case name, its snake_case spelling, the documentation,
the type's own fields (`FieldSpec`s, its argument shape, next to the common ones declared once in
`COMMON_FIELDS`), how it scores, an example, the `stage` that scores it and its `scorer`. The checker
validates `assert` items from these records, completion offers the names and fields, hover shows
`doc`/`scoring`/`example`, the JSON Schema is generated from `spec`, and the runner dispatches on the
entry's stage and calls its scorer (registry/stages.py). `registry.extend.registered` adds entries for a while.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from .fields import F, FieldSpec, ObjectSpec
from .stages import ScorerRef, Stage, changed

# Fields every assertion accepts, whatever its type.
COMMON_FIELDS: tuple[FieldSpec, ...] = (
    F("type", "The assertion type, e.g. `contains`, `regex`, `rubrics`, `llm-judge`. Kebab-case and "
      "snake_case spell the same type (`code_judge` = `code-judge`); any other name is a custom "
      "assertion loaded from `.agentv/assertions/<type>.ts`.", "string", required=True,
      example="type: contains"),
    F("name", "A name for this assertion in results, and the key composite `weights` refer to. "
      "Defaults to the type.", "string", example="name: mentions-denial"),
    F("weight", "How much this assertion counts in the test's weighted average: a finite number ≥ 0 "
      "(default 1). Weight 0 reports the score without counting it.", "number", minimum=0, default=1,
      example="weight: 2"),
    F("required", "A gate: `true` means this assertion must score at least 0.8, a number in (0, 1] is "
      "its own minimum score. If any gate fails, the whole test scores 0 and fails.", "boolean", "number",
      default=False, example="required: true",
      schema={"anyOf": [{"type": "boolean"}, {"type": "number", "exclusiveMinimum": 0, "maximum": 1}]}),
    F("negate", "Invert the result: the score becomes 1 − score and pass and fail swap (borderline "
      "stays borderline).", "boolean", default=False, example="negate: true"),
)

ARGS_MATCH_MODES = ("exact", "ignore", "subset", "superset")
TRAJECTORY_MODES = ("any_order", "in_order", "exact", "subset", "superset")
AGGREGATOR_TYPES = ("weighted_average", "threshold", "code_judge", "code-judge", "llm_judge", "llm-judge")

_ARGS_MATCH_SCHEMA = {"anyOf": [{"enum": list(ARGS_MATCH_MODES)}, {"type": "array", "items": {"type": "string"}}]}
_ARGV_SCHEMA = {"anyOf": [{"type": "array", "items": {"type": "string"}, "minItems": 1}, {"type": "string"}]}

_ARGS_MATCH_DOC = ("How a call's arguments are compared with `args`: `exact` (default: deep equality, no "
                   "extra keys), `superset` (actual has every expected key, extras allowed), `subset` "
                   "(actual has no keys beyond the expected ones), `ignore`, or a list of fields to "
                   "compare (dot paths allowed).")


@dataclass(frozen=True)
class AssertionType:
    name: str  # canonical kebab-case
    doc: str
    scoring: str  # how the score is computed, in one or two sentences
    example: str  # a YAML snippet: one `assert` item
    fields: tuple[FieldSpec, ...] = ()
    # Does our runner score it? The ONE flag the runner (run/score/agentv_scorable.py), completion and hover
    # read: a type not runnable is reported "not scored" by a run and "not scored yet" by the editor.
    runnable: bool = False
    # Which stage of a run scores it, and with what (registry/stages.py):
    # FUNCTION / TRACE: `scorer(spec, answer, RunMetrics, expected) -> AssertionScore | NotScored`
    #   (scoring/agentv_assertions.py); spec is the assertion's fields, expected the test's (role, content) pairs.
    # JUDGE: a `run.score.judged_types.JudgedType`: the judge prompt it makes, how it reads the reply.
    # AGENT_JUDGE, SCRIPT, GROUP: the stage's own scorer (score/judges.py, score/scripts.py, the composite); None.
    stage: Stage = Stage.FUNCTION
    scorer: ScorerRef | None = None
    # What the checker checks beyond the fields' declarations: an agentv.assertions.TypeRule, or None (a
    # `value` type's value rule, else the fields alone).
    check: ScorerRef | None = None
    kind: str = ""  # shown by completion, hover, the docs: deterministic | llm | code | trace | metrics | group
    row_type: str | None = None  # the type a result row names, when AgentV reports another (rubrics: llm-judge)
    open: bool = False  # extra keys are passed through to the judge (code-judge `config`)
    value: str | None = None  # "string" or "strings" for the `value` types
    needs_one_of: tuple[str, ...] = ()  # at least one of these fields must be set
    _extra: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    @property
    def at_once(self) -> bool:
        """A run scores it as soon as the answer is there: runnable, and its stage deterministic (no judge,
        script or service to wait for: run/agentv_stages.py, and the plan's reading of a stored test)."""
        return self.runnable and self.stage.deterministic

    def __post_init__(self) -> None:
        if not self.kind:
            object.__setattr__(self, "kind", _KINDS[self.stage])
        if self.scorer is None and self.stage in _SCORED_BY_ENTRY:
            raise ValueError(f"assertion type {self.name!r} (stage {self.stage}) declares no scorer")

    @property
    def snake(self) -> str:
        """The snake_case spelling (`code_judge`); the same type, accepted without a warning."""
        return self.name.replace("-", "_")

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.name,) if self.snake == self.name else (self.name, self.snake)

    @cached_property
    def spec(self) -> ObjectSpec:
        """The whole assertion object: common fields, then the type's own."""
        return ObjectSpec(f"assertion:{self.name}", f"a '{self.name}' assertion", self.doc,
                          COMMON_FIELDS + self.fields, open=self.open)


_KINDS = {Stage.FUNCTION: "deterministic", Stage.TRACE: "metrics", Stage.JUDGE: "llm", Stage.AGENT_JUDGE: "llm",
          Stage.SCRIPT: "code", Stage.GROUP: "group", Stage.SANDBOX: "code", Stage.SERVICE: "service"}
_SCORED_BY_ENTRY = (Stage.FUNCTION, Stage.TRACE, Stage.JUDGE)
_SCORING = "evalspec.scoring.agentv_assertions"  # the deterministic scorers, one per type (snake_case names)
_JUDGED = "evalspec.run.score.judged_types"  # the judged types' prompts and readers
_RULES = "evalspec.agentv.assertions"  # the checker's rules beyond the fields


def _scorer(name: str) -> str:
    return f"{_SCORING}:{name.replace('-', '_')}"


def _value_type(name: str, doc: str, scoring: str, example: str, many: bool = False) -> AssertionType:
    if many:
        value = F("value", "The strings to look for (a non-empty list).", "array", items="string",
                  required=True, example='value: ["Hello", "Hi"]')
    else:
        value = F("value", "The text to compare the answer with.", "string", required=True,
                  example="value: DENIED")
    return AssertionType(name, doc, scoring, example, (value,), runnable=True, scorer=_scorer(name),
                         value="strings" if many else "string")


_BINARY = "1 when it holds, else 0."

ASSERTION_LIST: tuple[AssertionType, ...] = (
    _value_type("contains", "Passes when the answer contains `value` (case-sensitive).", _BINARY,
                "- type: contains\n  value: DENIED\n  required: true"),
    _value_type("icontains", "Passes when the answer contains `value`, ignoring case.", _BINARY,
                "- type: icontains\n  value: error"),
    _value_type("starts-with", "Passes when the answer, trimmed, starts with `value`.", _BINARY,
                "- type: starts-with\n  value: Dear"),
    _value_type("ends-with", "Passes when the answer, trimmed, ends with `value`.", _BINARY,
                "- type: ends-with\n  value: Best regards"),
    _value_type("equals", "Passes when the answer, trimmed, equals `value` exactly.", _BINARY,
                '- type: equals\n  value: "4"'),
    _value_type("contains-any", "Passes when the answer contains at least one of the strings in `value` "
                "(case-sensitive).", _BINARY, '- type: contains-any\n  value: ["Hello", "Hi", "Welcome"]',
                many=True),
    _value_type("contains-all", "Passes when the answer contains every string in `value` (case-sensitive).",
                _BINARY, '- type: contains-all\n  value: ["Alice", "alice@example.com"]', many=True),
    _value_type("icontains-any", "Passes when the answer contains at least one of the strings in `value`, "
                "ignoring case.", _BINARY, '- type: icontains-any\n  value: ["rule code", "rule codes"]',
                many=True),
    _value_type("icontains-all", "Passes when the answer contains every string in `value`, ignoring case.",
                _BINARY, '- type: icontains-all\n  value: ["country code", "rule codes"]', many=True),
    AssertionType(
        "regex", "Passes when the JavaScript regular expression `value` matches somewhere in the answer.",
        _BINARY, '- type: regex\n  value: "Good (morning|afternoon|evening)"\n  flags: i',
        (F("value", "The pattern, in JavaScript regular-expression syntax (quote it in YAML).", "string",
           required=True, example='value: "[A-Z]{3}-\\\\d+"'),
         F("flags", "JavaScript regex flags, e.g. `i` for case-insensitive (`d g i m s u v y`).", "string",
           example="flags: i")),
        runnable=True, scorer=_scorer("regex"), check=f"{_RULES}:REGEX", value="string"),
    AssertionType(
        "is-json", "Passes when the whole answer parses as JSON.", _BINARY, "- type: is-json\n  required: true",
        runnable=True, scorer=_scorer("is-json")),
    AssertionType(
        "rubrics", "An LLM judge grades the answer against a list of criteria (a checklist, or 0–10 "
        "score ranges per criterion).",
        "Checklist: satisfied weight / total weight, and a missed required criterion fails the verdict. "
        "With `score_ranges`: the weighted mean of each criterion's 0–10 score / 10; a criterion below its "
        "`required_min_score` fails the verdict.",
        "- type: rubrics\n  criteria:\n    - Mentions divide-and-conquer\n    - id: complexity\n"
        "      outcome: States the time complexity correctly\n      weight: 2",
        (F("criteria", "The criteria, a non-empty list. A string is shorthand for `{id: rubric-<n>, "
           "outcome: <string>}`.", "array", required=True,
           schema={"type": "array", "minItems": 1,
                   "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/rubric_criterion"}]}}),
         F("model", "The model the judge uses, when it should differ from the judge target's default.",
           "string")),
        runnable=True, stage=Stage.JUDGE, scorer=f"{_JUDGED}:RUBRICS", check=f"{_RULES}:RUBRICS",
        row_type="llm-judge"),
    AssertionType(
        "llm-judge", "An LLM judge scores the answer with a custom prompt (or AgentV's default judge "
        "prompt), optionally against rubric criteria.",
        "The judge's score (0–1).",
        "- type: llm-judge\n  name: tone\n  prompt: ./judges/tone.md",
        (F("prompt", "The judge prompt: a path to a template file (relative to the eval file; it must "
           "use `{{ answer }}` or `{{ expected_output }}`), inline text, or `{command: argv}` for a "
           "script that prints the prompt. Omit it for the default judge prompt.", "string", "object",
           object="prompt_script", file_ref=True, example="prompt: ./judges/compliance.md"),
         F("rubrics", "Rubric criteria the judge checks, as in `type: rubrics` but objects only ({id, outcome}: "
           "AgentV skips a string here).", "array",
           schema={"type": "array", "items": {"$ref": "#/$defs/rubric_criterion"}}),
         F("model", "The model the judge uses, when it should differ from the judge target's default.",
           "string"),
         F("config", "Extra values passed to a prompt script.", "object")),
        runnable=True, stage=Stage.JUDGE, scorer=f"{_JUDGED}:LLM_JUDGE", check=f"{_RULES}:JUDGE"),
    AssertionType(
        "code-judge", "Runs a script that reads the test and answer as JSON on stdin and prints "
        "`{score, hits?, misses?, reasoning?}`. Extra keys are passed to the script as `config`.",
        "The script's `score`, clamped to 0–1; a failing script scores 0 with the reason.",
        "- type: code-judge\n  name: format\n  command: [bun, run, ./judges/check.ts]",
        (F("command", "The script to run, as an argv list (`[bun, run, check.ts]`); paths are relative "
           "to `cwd`. A string is split by the platform shell, with a warning.", "array", "string",
           items="string", schema=_ARGV_SCHEMA, example="command: [uv, run, check.py]"),
         F("script", "Older name of `command`.", "array", "string", schema=_ARGV_SCHEMA,
           deprecated="use 'command' with an argv list."),
         F("cwd", "The working directory for the script (relative to the eval file; default: the eval "
           "file's folder).", "string", file_ref=True, folder=True, example="cwd: ../judges"),
         F("target", "Let the script call the judge target: `true`, or `{max_calls: n}` to cap the calls.",
           "boolean", "object", object="code_judge_target", lenient=True),
         F("config", "Values passed to the script as `config`, next to any extra keys.", "object")),
        runnable=True, stage=Stage.SCRIPT, check=f"{_RULES}:CODE_JUDGE", open=True),
    AssertionType(
        "agent-judge", "An agent with file-system tools audits the workspace the agent under test left "
        "behind, freely or against rubric criteria.",
        "The agent judge's score (0–1), or the rubric score when `rubrics` are given.",
        "- type: agent-judge\n  max_steps: 5\n  rubrics:\n    - id: tests-exist\n"
        "      outcome: A tests/ folder exists",
        (F("prompt", "Instructions for the agent judge: a file path or inline text.", "string",
           file_ref=True),
         F("rubrics", "Rubric criteria the agent checks, as in `type: rubrics` but objects only ({id, outcome}: "
           "AgentV skips a string here).", "array",
           schema={"type": "array", "items": {"$ref": "#/$defs/rubric_criterion"}}),
         F("max_steps", "The most tool-using steps the agent may take (1–50, default 10).", "integer",
           minimum=1, maximum=50, default=10, deprecated_aliases=("maxSteps",)),
         F("temperature", "The judge's sampling temperature (0–2).", "number", minimum=0, maximum=2),
         F("target", "A target from targets.yaml to delegate the audit to (e.g. a coding agent); "
           "default: the built-in agent on the judge target.", "string")),
        runnable=True, stage=Stage.AGENT_JUDGE, check=f"{_RULES}:JUDGE"),
    AssertionType(
        "composite", "Groups assertions and combines their scores with an aggregator. Inner weights "
        "never mix with the test's outer weights.",
        "`weighted_average` of the children (using `weights` by child name), `threshold` (share of "
        "children passing, borderline counts as passing; passes when ≥ threshold), or a code or LLM "
        "judge over the children's results.",
        "- type: composite\n  assert:\n    - {name: safety, type: llm-judge, prompt: ./judges/safety.md}\n"
        "    - {name: facts, type: llm-judge, prompt: ./judges/facts.md}\n"
        "  aggregator:\n    type: weighted_average\n    weights: {safety: 0.7, facts: 0.3}",
        (F("assert", "The child assertions.", "array", deprecated_aliases=("evaluators",), required=True,
           schema={"type": "array", "items": {"$ref": "#/$defs/assertion"}}),
         F("aggregator", "How the children's scores combine: `{type: weighted_average, weights?}`, "
           "`{type: threshold, threshold}`, `{type: code-judge, path}` or `{type: llm-judge, prompt?}`.",
           "object", object="aggregator", required=True)),
        runnable=True, stage=Stage.GROUP, check=f"{_RULES}:COMPOSITE"),
    AssertionType(
        "tool-trajectory", "Checks the tools the agent called, from its trace.",
        "any_order: the share of `minimums` met; in_order: expected calls found in order (gaps allowed); "
        "exact: the same sequence, length included; superset: every expected call appears; subset: "
        "every actual call is among the expected ones.",
        "- type: tool-trajectory\n  mode: in_order\n  expected:\n    - tool: search\n    - tool: fetch",
        (F("mode", "How calls are matched: any_order (needs `minimums`), in_order, exact, subset or "
           "superset (these need `expected`).", "string", enum=TRAJECTORY_MODES, required=True),
         F("minimums", "For any_order: the least number of calls per tool, e.g. `{search: 2}`.", "object",
           schema={"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}),
         F("expected", "For the other modes: the expected calls `{tool, args?, max_duration_ms?, "
           "args_match?}`.", "array", items_object="tool_expectation"),
         F("args_match", _ARGS_MATCH_DOC + " Applies to every expected call without its own.", "string",
           "array", deprecated_aliases=("argsMatch",), enum=ARGS_MATCH_MODES, items="string",
           schema=_ARGS_MATCH_SCHEMA, lenient=True)),
        runnable=True, stage=Stage.TRACE, scorer=_scorer("tool-trajectory"), check=f"{_RULES}:TRAJECTORY",
        kind="trace"),
    AssertionType(
        "field-accuracy", "Compares fields of a structured (JSON) answer with the expected output.",
        "The weighted share of fields that match, or all-or-nothing.",
        "- type: field-accuracy\n  fields:\n    - {path: invoice.total, match: numeric_tolerance, "
        "tolerance: 0.01}\n    - {path: invoice.date, match: date}",
        (F("fields", "The fields to compare (a non-empty list).", "array", items_object="accuracy_field",
           required=True),
         F("aggregation", "How field results combine (default weighted_average).", "string",
           enum=("weighted_average", "all_or_nothing"), default="weighted_average", lenient=True)),
        runnable=True, scorer=_scorer("field-accuracy"), check=f"{_RULES}:ACCURACY"),
    AssertionType(
        "latency", "Passes when the run took at most `max_ms` milliseconds.", _BINARY,
        "- type: latency\n  max_ms: 10000",
        (F("max_ms", "The longest acceptable duration in milliseconds.", "number", aliases=("threshold",),
           minimum=0),),
        runnable=True, stage=Stage.TRACE, scorer=_scorer("latency"), needs_one_of=("max_ms",)),
    AssertionType(
        "cost", "Passes when the run cost at most `max_usd` US dollars.", _BINARY,
        "- type: cost\n  max_usd: 0.10",
        (F("max_usd", "The highest acceptable cost in US dollars.", "number", aliases=("budget",), minimum=0),),
        runnable=True, stage=Stage.TRACE, scorer=_scorer("cost"), needs_one_of=("max_usd",)),
    AssertionType(
        "token-usage", "Passes when the run's token counts stay within the limits given.", _BINARY,
        "- type: token-usage\n  max_total: 4000",
        (F("max_total", "The most tokens in total.", "number", minimum=0, deprecated_aliases=("maxTotal",)),
         F("max_input", "The most input (prompt) tokens.", "number", minimum=0, deprecated_aliases=("maxInput",)),
         F("max_output", "The most output (completion) tokens.", "number", minimum=0,
           deprecated_aliases=("maxOutput",))),
        runnable=True, stage=Stage.TRACE, scorer=_scorer("token-usage"), needs_one_of=("max_total", "max_input", "max_output")),
    AssertionType(
        "execution-metrics", "Checks thresholds on the agent's execution: tool and LLM calls, tokens, "
        "cost, duration and exploration ratio.",
        "The share of the configured checks that are met.",
        "- type: execution-metrics\n  max_tool_calls: 10\n  max_duration_ms: 60000",
        (F("max_tool_calls", "The most tool calls.", "number", minimum=0, deprecated_aliases=("maxToolCalls",)),
         F("max_llm_calls", "The most LLM calls.", "number", minimum=0, deprecated_aliases=("maxLlmCalls",)),
         F("max_tokens", "The most tokens in total.", "number", minimum=0, deprecated_aliases=("maxTokens",)),
         F("max_cost_usd", "The highest cost in US dollars.", "number", minimum=0,
           deprecated_aliases=("maxCostUsd",)),
         F("max_duration_ms", "The longest duration in milliseconds.", "number", minimum=0,
           deprecated_aliases=("maxDurationMs",)),
         F("target_exploration_ratio", "The expected share of exploration (read/search) calls among all "
           "tool calls (0–1; AgentV takes any number ≥ 0, and one above 1 is never met).", "number", minimum=0, deprecated_aliases=("targetExplorationRatio",)),
         F("exploration_tolerance", "How far the exploration ratio may be from the target.", "number",
           minimum=0, deprecated_aliases=("explorationTolerance",))),
        runnable=True, stage=Stage.TRACE, scorer=_scorer("execution-metrics"),
        needs_one_of=("max_tool_calls", "max_llm_calls", "max_tokens", "max_cost_usd", "max_duration_ms",
                      "target_exploration_ratio")),
)

ASSERTION_TYPES: dict[str, AssertionType] = {t.name: t for t in ASSERTION_LIST}

# Every accepted spelling, to the canonical name.
ASSERTION_SPELLINGS: dict[str, str] = {s: t.name for t in ASSERTION_LIST for s in t.spellings}


def register(t: AssertionType) -> None:
    """Add an assertion type to these tables (registry.extend.registered also adds its object spec)."""
    if any(s in ASSERTION_SPELLINGS for s in t.spellings):
        raise ValueError(f"assertion type {t.name!r} is declared twice")
    ASSERTION_TYPES[t.name] = t
    for s in t.spellings:
        ASSERTION_SPELLINGS[s] = t.name
    changed()


def unregister(t: AssertionType) -> None:
    """Remove what `register(t)` added."""
    ASSERTION_TYPES.pop(t.name, None)
    for s in t.spellings:
        ASSERTION_SPELLINGS.pop(s, None)
    changed()


def normalize_assertion_type(name: str) -> str:
    """The kebab-case spelling of a type name (`code_judge` → `code-judge`), as AgentV normalizes it.

    Unknown (custom) names are normalized the same way, so `.agentv/assertions/word-count.ts` is found
    for `word_count` too.
    """
    return name.replace("_", "-")  # not trimmed: AgentV reads " contains" as a custom type


# Objects that only assertions use; registered in the AgentV registry next to the assertion specs.
ASSERTION_OBJECTS: tuple[ObjectSpec, ...] = (
    ObjectSpec("prompt_script", "a prompt script", "A judge prompt produced by a script: the script's "
               "stdout is the prompt.", (
                   F("command", "The script, as an argv list.", "array", "string", items="string",
                     schema=_ARGV_SCHEMA, example="command: [bun, run, ../prompts/judge.ts]"),
                   F("script", "Older name of `command`.", "array", "string", schema=_ARGV_SCHEMA,
                     deprecated="use 'command'."),
                   F("config", "Values passed to the script.", "object"),
               )),
    ObjectSpec("code_judge_target", "a code-judge target setting", "Lets a code judge call the judge "
               "target through AgentV.", (
                   F("max_calls", "The most target calls the script may make.", "integer", minimum=1),
               )),
    ObjectSpec("aggregator", "a composite aggregator", "How a composite combines its children's scores.", (
        F("type", "weighted_average, threshold, code-judge or llm-judge.", "string", enum=AGGREGATOR_TYPES,
          required=True),
        F("weights", "For weighted_average: a weight per child `name` (children not listed weigh 1).",
          "object", schema={"type": "object", "additionalProperties": {"type": "number", "minimum": 0}}),
        F("threshold", "For threshold: the share of children that must pass (0–1).", "number", minimum=0,
          maximum=1),
        F("path", "For code-judge: the aggregator script (a path or a command line).", "string", file_ref=True),
        F("cwd", "For code-judge: the script's working directory.", "string"),
        F("prompt", "For llm-judge: the aggregation prompt (file path or inline text).", "string",
          file_ref=True),
        F("model", "For llm-judge: the model to use.", "string"),
    )),
    ObjectSpec("tool_expectation", "an expected tool call", "One tool call a trajectory expects.", (
        F("tool", "The tool's name.", "string", required=True, example="tool: search"),
        F("args", "The expected arguments (a mapping), or `any` to ignore them.", "string", "object",
          enum=("any",), schema={"anyOf": [{"const": "any"}, {"type": "object"}]}),
        F("max_duration_ms", "The longest the call may take, in milliseconds.", "number", minimum=0,
          deprecated_aliases=("maxDurationMs",), lenient=True),
        F("args_match", _ARGS_MATCH_DOC, "string", "array", deprecated_aliases=("argsMatch",),
          enum=ARGS_MATCH_MODES, items="string", schema=_ARGS_MATCH_SCHEMA, lenient=True),
    )),
    ObjectSpec("accuracy_field", "a field-accuracy field", "One field of a structured answer to compare.", (
        F("path", "Where the field is, as a dot path (`invoice.total`, `items[0].sku`).", "string",
          required=True),
        F("match", "How to compare: exact, numeric_tolerance or date.", "string",
          enum=("exact", "numeric_tolerance", "date"), required=True),
        F("weight", "The field's weight (default 1).", "number", minimum=0),
        F("required", "Fail the assertion when this field does not match.", "boolean"),
        F("tolerance", "For numeric_tolerance: the allowed difference.", "number", minimum=0),
        F("relative", "For numeric_tolerance: `tolerance` is a fraction of the expected value.", "boolean"),
        F("formats", "For date: the accepted date formats.", "array", items="string"),
    )),
    ObjectSpec("rubric_criterion", "a rubric criterion", "One criterion of a rubric. A plain string is "
               "shorthand for `{id: rubric-<n>, outcome: <string>}`.", (
                   F("id", "A unique id for the criterion in results (default rubric-<n>).", "string"),
                   F("outcome", "What the answer must do to satisfy this criterion.", "string",
                     example="outcome: Cites the correct regulation"),
                   F("weight", "The criterion's weight inside this rubric (default 1).", "number",
                     minimum=0, default=1),
                   F("required", "A missed required criterion fails the verdict (default true).", "boolean",
                     default=True),
                   F("required_min_score", "With score_ranges: the lowest acceptable 0–10 score; below it "
                     "the verdict fails.", "integer", minimum=0, maximum=10),
                   F("score_ranges", "Analytic scoring: `[{score_range: [min, max], outcome}]` covering "
                     "0–10, or the shorthand map `{0: Bad, 5: OK, 10: Great}` (each key starts a range "
                     "that ends where the next begins).", "array", "object",
                     schema={"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/score_range"}},
                                       {"type": "object", "propertyNames": {"pattern": "^(10|[0-9])$"},
                                        "additionalProperties": {"type": "string"}}]}),
               )),
    ObjectSpec("score_range", "a score range", "One band of 0–10 scores and what it means.", (
        F("score_range", "The band `[min, max]`: integers 0–10, min ≤ max.", "array", required=True,
          items="integer", schema={"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 10},
                                   "minItems": 2, "maxItems": 2}),
        F("outcome", "What an answer in this band looks like.", "string", required=True),
    )),
)
