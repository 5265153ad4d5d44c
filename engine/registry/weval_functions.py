"""Every Weval point function, declared once: name, aliases, argument shape, graded or binary, docs,
the stage that scores it and its scorer.

The checker validates `$fn` arguments from `arg` (weval/functions_check.py, per shape); completion
offers the shape's snippet, signature help its parameters, the schema its JSON Schema (each `Arg`'s
`Shape` in `SHAPES`, declared once); hover shows `doc` and `example`; the runner scores a point in its
entry's `stage` with its entry's `scorer` (`"module:attribute"`, by default the function of the same
name in engine/scoring/weval_points.py: `(response, arg, PointContext) -> PointScore`). `not_X` forms
are generated from `negatable` (the same scorer, negated). `registry.extend.registered` adds entries
for a while.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from .stages import ScorerRef, Stage, changed


class Arg(StrEnum):
    """Argument shapes, as the checker understands them."""

    NONE = "none"  # `$is_json` or `$is_json: true`
    STRING = "string"
    STRINGS = "string[]"
    N_OF_STRINGS = "[n, string[]]"
    REGEX = "regex"
    REGEXES = "regex[]"
    N_OF_REGEXES = "[n, regex[]]"
    RANGE = "[min, max]"
    JS = "javascript"
    CALL = "{service | url, ...}"
    OPTIONAL_STRING = "string?"
    TOOL_NAME = "tool name"
    TOOL_ARGS = "{name, where, normalizeWhitespace?}"
    TOOL_COUNT = "[min, max, name?]"
    TOOL_ORDER = "tool name[]"


@dataclass(frozen=True)
class PointFunction:
    name: str
    arg: Arg
    graded: bool
    doc: str
    example: str
    aliases: tuple[str, ...] = ()
    negatable: bool = False
    negates: str | None = None  # for not_X: the X it negates
    stage: Stage = Stage.FUNCTION  # FUNCTION (at once), SANDBOX (`$js`, off the event loop), SERVICE (`$call`)
    scorer: ScorerRef = ""  # `(response, arg, PointContext) -> PointScore`, or "module:attribute" naming it

    def __post_init__(self) -> None:
        if not self.scorer:
            raise ValueError(f"point function {self.name!r} declares no scorer")

    @property
    def runs_code(self) -> bool:
        """Only ever evaluated by an explicit run (the user's JavaScript, an HTTP service)."""
        return self.stage.runs_code

    @property
    def snippet(self) -> str:
        """An LSP snippet for the argument (after `$name: `)."""
        return SHAPES[self.arg].snippet


@dataclass(frozen=True)
class Shape:
    """What an argument shape means outside the checker (weval/functions_check.py checks each shape):
    the snippet completion inserts after `$name: `, the JSON Schema of the argument, and how signature
    help writes it with its parameters' docs."""

    snippet: str
    schema: dict[str, Any]
    written: str
    params: tuple[tuple[str, str], ...]


_N_OF = {"type": "array", "minItems": 2, "maxItems": 2,
         "items": [{"type": "integer"}, {"type": "array", "items": {"type": "string"}}]}

# Every argument shape, declared once (a test checks that each Arg has one).
SHAPES: dict[Arg, Shape] = {
    Arg.NONE: Shape("true", {}, "true", (("true", "No argument: write `true`."),)),
    Arg.STRING: Shape('"${1:text}"', {"type": "string"}, "text", (("text", "The text to look for."),)),
    Arg.STRINGS: Shape('["${1:first}", "${2:second}"]', {"type": "array", "items": {"type": "string"}},
                       "[text, …]", (("[text, …]", "The texts, a list."),)),
    Arg.N_OF_STRINGS: Shape('[${1:2}, ["${2:first}", "${3:second}", "${4:third}"]]', _N_OF, "[n, [text, …]]",
                            (("n", "How many of the texts must be found for a full score."),
                             ("[text, …]", "The texts to look for."))),
    Arg.REGEX: Shape('"${1:^pattern}"', {"type": "string"}, "pattern",
                     (("pattern", "A JavaScript regular expression."),)),
    Arg.REGEXES: Shape('["${1:^first}", "${2:second\\$}"]', {"type": "array", "items": {"type": "string"}},
                       "[pattern, …]", (("[pattern, …]", "JavaScript regular expressions, a list."),)),
    Arg.N_OF_REGEXES: Shape('[${1:2}, ["${2:first}", "${3:second}", "${4:third}"]]', _N_OF, "[n, [pattern, …]]",
                            (("n", "How many of the patterns must match for a full score."),
                             ("[pattern, …]", "JavaScript regular expressions."))),
    Arg.RANGE: Shape("[${1:10}, ${2:200}]", {"type": "array", "minItems": 2, "maxItems": 2,
                                            "items": {"type": "number"}},
                     "[min, max]", (("min", "The least acceptable count."), ("max", "The greatest acceptable count."))),
    Arg.JS: Shape('"${1:r.length > 100}"', {"type": "string"}, "expression",
                  (("expression", "JavaScript, evaluated with the response as `r` (only during a run)."),)),
    Arg.CALL: Shape('{ service: "${1:name}" }', {"type": "object"}, "{service | url, …}",
                    (("service | url", "The external service's name (header `external_services`) or a URL to call."),
                     ("…", "Further keys are sent with the request."))),
    Arg.OPTIONAL_STRING: Shape('"${1:instruction}"', {"type": ["string", "null", "boolean"]}, "instruction?",
                               (("instruction?", "Optional text."),)),
    Arg.TOOL_NAME: Shape('"${1:tool_name}"', {"type": "string"}, "tool name",
                         (("tool name", "The name of the tool that must be called."),)),
    Arg.TOOL_ARGS: Shape('{ name: "${1:tool_name}", where: { ${2:key}: "${3:value}" } }',
                         {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                         "{name, where, normalizeWhitespace?}",
                         (("name", "The tool's name."), ("where", "The arguments the call must have (a mapping)."),
                          ("normalizeWhitespace?", "Compare text arguments with runs of spaces collapsed."))),
    Arg.TOOL_COUNT: Shape("[${1:1}, ${2:3}]", {"type": "array", "minItems": 2, "maxItems": 3}, "[min, max, name?]",
                          (("min", "The fewest tool calls."), ("max", "The most tool calls."),
                           ("name?", "Count only the calls of this tool."))),
    Arg.TOOL_ORDER: Shape('["${1:first_tool}", "${2:second_tool}"]', {"type": "array", "items": {"type": "string"}},
                          "[tool name, …]", (("[tool name, …]", "The tools, in the order they must be called."),)),
}


_POINTS = "evalspec.scoring.weval_points"


def _fn(name: str, arg: Arg, graded: bool, doc: str, example: str, *aliases: str, negatable: bool = False,
        stage: Stage = Stage.FUNCTION) -> PointFunction:
    """An entry scored by the function of the same name in scoring/weval_points.py."""
    return PointFunction(name, arg, graded, doc, example, aliases, negatable, stage=stage,
                         scorer=f"{_POINTS}:{name}")


_BASE = (
    _fn("contains", Arg.STRING, False, "True when the response contains the text (case-sensitive).",
        '$contains: "fiduciary duty"', "contain", negatable=True),
    _fn("icontains", Arg.STRING, False, "True when the response contains the text, ignoring case.",
        '$icontains: "fiduciary duty"', "icontain", negatable=True),
    _fn("starts_with", Arg.STRING, False, "True when the response starts with the text (case-sensitive).",
        '$starts_with: "Yes"', negatable=True),
    _fn("istarts_with", Arg.STRING, False, "True when the response starts with the text, ignoring case.",
        '$istarts_with: "yes"', "istart_with", negatable=True),
    _fn("ends_with", Arg.STRING, False, "True when the response ends with the text (case-sensitive).",
        '$ends_with: "."', negatable=True),
    _fn("iends_with", Arg.STRING, False, "True when the response ends with the text, ignoring case.",
        '$iends_with: "thank you."', "iend_with", negatable=True),
    _fn("contains_any_of", Arg.STRINGS, False, "True when the response contains at least one of the texts.",
        '$contains_any_of: ["fiduciary", "duty"]', negatable=True),
    _fn("icontains_any_of", Arg.STRINGS, False,
        "True when the response contains at least one of the texts, ignoring case.",
        '$icontains_any_of: ["fiduciary", "duty"]', "icontain_any_of", negatable=True),
    _fn("contains_all_of", Arg.STRINGS, True,
        "Graded: the share of the texts found in the response (0.5 when 1 of 2 is found; an empty list scores 1).",
        '$contains_all_of: ["fiduciary", "duty"]', "contain_all_of", negatable=True),
    _fn("icontains_all_of", Arg.STRINGS, True,
        "Graded, ignoring case: the share of the texts found in the response.",
        '$icontains_all_of: ["fiduciary", "duty"]', "icontain_all_of", negatable=True),
    _fn("contains_at_least_n_of", Arg.N_OF_STRINGS, True,
        "Graded: min(1, found / n) for the texts found in the response. The argument is [n, [texts…]].",
        '$contains_at_least_n_of: [2, ["apples", "oranges", "pears"]]', "contain_at_least_n_of"),
    _fn("icontains_at_least_n_of", Arg.N_OF_STRINGS, True,
        "Graded, ignoring case: min(1, found / n). The argument is [n, [texts…]].",
        '$icontains_at_least_n_of: [2, ["apples", "oranges", "pears"]]', "icontain_at_least_n_of"),
    _fn("matches", Arg.REGEX, False,
        "True when the JavaScript regular expression matches the response (case-sensitive).",
        '$matches: "^The ruling states"', "match", negatable=True),
    _fn("imatches", Arg.REGEX, False,
        "True when the JavaScript regular expression matches the response, ignoring case.",
        '$imatches: "^the ruling"', "imatch", negatable=True),
    _fn("matches_all_of", Arg.REGEXES, True, "Graded: the share of the regular expressions that match.",
        '$matches_all_of: ["^The ruling", "states that$"]', "match_all_of"),
    _fn("imatch_all_of", Arg.REGEXES, True,
        "Graded, ignoring case: the share of the regular expressions that match (Weval's name: "
        "`imatches_all_of` is not one).",
        '$imatch_all_of: ["^the ruling", "states that$"]'),
    _fn("matches_at_least_n_of", Arg.N_OF_REGEXES, True,
        "Graded: min(1, matching / n). The argument is [n, [patterns…]].",
        '$matches_at_least_n_of: [2, ["^A", "B$", "C"]]', "match_at_least_n_of"),
    _fn("imatch_at_least_n_of", Arg.N_OF_REGEXES, True,
        "Graded, ignoring case: min(1, matching / n). The argument is [n, [patterns…]] (Weval's name: "
        "`imatches_at_least_n_of` is not one).",
        '$imatch_at_least_n_of: [2, ["^a", "b$", "c"]]'),
    _fn("word_count_between", Arg.RANGE, True,
        "Graded on the number of words (runs of non-space): 1 inside [min, max]; n/min below; max/n above.",
        "$word_count_between: [50, 100]"),
    _fn("is_json", Arg.NONE, False, "True when the whole response parses as a JSON object or array.",
        "$is_json: true"),
    _fn("contains_word", Arg.STRING, False,
        "True when the text occurs as a whole word (Unicode word boundaries: 'ell' does not match 'Hello').",
        '$contains_word: "Paraná"', "contain_word", negatable=True),
    _fn("icontains_word", Arg.STRING, False, "Whole-word match, ignoring case.",
        '$icontains_word: "paraná"', "icontain_word", negatable=True),
    _fn("js", Arg.JS, True,
        "A JavaScript expression or function body, run in a sandbox with a 100 ms limit during a run only. "
        "`r` (or `response`) is the response text, `context.messages` and `context.modelId` are available. "
        "Returns true/false, a number in [0, 1], or {score, explain}.",
        '$js: "r.length > 100"', "expr", stage=Stage.SANDBOX),
    _fn("call", Arg.CALL, True,
        "POSTs {response, modelId, promptId, …} to an external service (from `externalServices` or a url) "
        "during a run; the service answers {score, explain}.",
        "$call: { service: grader, rubric: strict }", "external", stage=Stage.SERVICE),
    _fn("factcheck", Arg.OPTIONAL_STRING, True,
        "Weval's fact-check service; evalspec reports it as unavailable unless a service is configured.",
        '$factcheck: "Focus on dates"'),
    _fn("tool_called", Arg.TOOL_NAME, False,
        "True when the response contains a `TOOL_CALL {json}` line calling the named tool.",
        '$tool_called: "search"'),
    _fn("tool_args_match", Arg.TOOL_ARGS, False,
        "True when a call of the named tool has arguments matching `where`.",
        '$tool_args_match: { name: search, where: { query: "weather" } }'),
    _fn("tool_call_count_between", Arg.TOOL_COUNT, False,
        "True when the number of tool calls (of `name`, if given) is within [min, max].",
        "$tool_call_count_between: [1, 3, search]"),
    _fn("tool_call_order", Arg.TOOL_ORDER, False,
        "True when the tools were called in this order (other calls may come between).",
        '$tool_call_order: ["search", "summarize"]'),
)


def _negated(f: PointFunction) -> PointFunction:
    verb = "False" if not f.graded else "1 minus the score"
    return PointFunction(
        f"not_{f.name}", f.arg, f.graded,
        f"The negation of ${f.name}: {verb} where ${f.name} would be true. " + f.doc,
        f.example.replace(f"${f.name}:", f"$not_{f.name}:"),
        tuple(f"not_{a}" for a in f.aliases), negates=f.name, stage=f.stage, scorer=f.scorer)


# Weval registers these negated spellings though not their positive ones (`$start_with` is no function)
_NEGATED_ONLY_ALIASES = {"not_starts_with": ("not_start_with",), "not_ends_with": ("not_end_with",),
                         "not_contains_any_of": ("not_contain_any_of",)}

POINT_FUNCTIONS: dict[str, PointFunction] = {}
# Every accepted spelling → canonical name.
FUNCTION_NAMES: dict[str, str] = {}


def entries_of(f: PointFunction) -> tuple[PointFunction, ...]:
    """The registry entries one declaration makes: itself, and its `not_` form when negatable."""
    if not f.negatable:
        return (f,)
    n = _negated(f)
    if n.name in _NEGATED_ONLY_ALIASES:
        n = replace(n, aliases=n.aliases + _NEGATED_ONLY_ALIASES[n.name])
    return (f, n)


def register(f: PointFunction) -> tuple[PointFunction, ...]:
    """Add a point function (and its `not_` form) to the registry; returns the entries added."""
    added = entries_of(f)
    for e in added:
        for name in (e.name, *e.aliases):
            if name in FUNCTION_NAMES:
                raise ValueError(f"point function name {name!r} is declared twice")
    for e in added:
        POINT_FUNCTIONS[e.name] = e
        FUNCTION_NAMES[e.name] = e.name
        for a in e.aliases:
            FUNCTION_NAMES[a] = e.name
    changed()
    return added


def unregister(f: PointFunction) -> None:
    """Remove what `register(f)` added."""
    for e in entries_of(f):
        POINT_FUNCTIONS.pop(e.name, None)
        for name in (e.name, *e.aliases):
            FUNCTION_NAMES.pop(name, None)
    changed()


for _f in _BASE:
    register(_f)


# Names users bring from other eval tools (promptfoo assertion types, AgentV, common spellings) -> the
# Weval function that does that check. Only for "did you mean"; they are never accepted as functions.
# Keys are folded (lower case, `-` as `_`); `not_` forms of these are mapped to the negated function.
FOREIGN_NAMES: dict[str, str] = {
    "regex": "matches", "regexp": "matches", "regex_match": "matches", "match_regex": "matches",
    "iregex": "imatches", "regex_i": "imatches",
    "contains_any": "contains_any_of", "icontains_any": "icontains_any_of",
    "contains_all": "contains_all_of", "icontains_all": "icontains_all_of",
    "contains_none": "not_contains_any_of", "icontains_none": "not_icontains_any_of",
    "startswith": "starts_with", "endswith": "ends_with", "istartswith": "istarts_with",
    "iendswith": "iends_with", "includes": "contains", "contains_text": "contains",
    "is_valid_json": "is_json", "valid_json": "is_json", "json": "is_json",
    "javascript": "js", "javascript_fn": "js", "js_function": "js",
    "word_count": "word_count_between", "wordcount": "word_count_between", "words": "word_count_between",
    "length_between": "word_count_between",
    "tool_call": "tool_called", "called_tool": "tool_called", "is_tool_call": "tool_called",
    "fact_check": "factcheck",
    "webhook": "call",
}


def foreign_name(name: str) -> str | None:
    """The Weval function for a name from another tool (`regex` -> `matches`, `not-regex` ->
    `not_matches`), when there is one."""
    folded = name.lower().replace("-", "_")
    if folded in FOREIGN_NAMES:
        return FOREIGN_NAMES[folded]
    for prefix in ("not_", "not"):
        if folded.startswith(prefix):
            base = folded[len(prefix):]
            target = FOREIGN_NAMES.get(base) or (base if base in POINT_FUNCTIONS else None)
            if target and f"not_{target}" in POINT_FUNCTIONS:
                return f"not_{target}"
    return None


def resolve_function(name: str, *, rewrite: bool = True) -> PointFunction | None:
    """The function a `$name` / `fn: name` spelling means, as the reference finds it: its parser first
    rewrites a leading `contain…` to `contains…` and `match…` to `matches…` (`rewrite`; a point copied
    from `point_defs` by `$ref` is not rewritten), then looks the name up among its registered names
    (FUNCTION_NAMES holds exactly those: `$start_with`, `$imatches_all_of` are none)."""
    bare = name[1:] if name.startswith("$") else name
    if rewrite:
        if bare.startswith("contain") and not bare.startswith("contains"):
            bare = "contains" + bare[len("contain"):]
        if bare.startswith("match") and not bare.startswith("matches"):
            bare = "matches" + bare[len("match"):]
    canonical = FUNCTION_NAMES.get(bare)
    return POINT_FUNCTIONS.get(canonical) if canonical else None
