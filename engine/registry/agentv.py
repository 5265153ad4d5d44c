"""Every AgentV eval-file and targets-file object and field, declared once.

Source: AgentV v2.19 (its eval spec v2, test schema and YAML schema, and what its code does). Assertion types live in `agentv_assertions.py`; their specs and
the objects only they use are registered here too, so `REGISTRY` is the whole format.
"""

from __future__ import annotations

from .agentv_assertions import (
    ASSERTION_LIST,
    ASSERTION_OBJECTS,
    ASSERTION_SPELLINGS,
    ASSERTION_TYPES,
    COMMON_FIELDS,
    AssertionType,
    normalize_assertion_type,
)
from .fields import F, ObjectSpec, Registry

__all__ = [
    "ASSERTION_SPELLINGS",
    "ASSERTION_TYPES",
    "CLI_PLACEHOLDERS",
    "CONTENT_TYPES",
    "EVAL_SCHEMA_ID",
    "KNOWN_PROVIDERS",
    "MESSAGE_ROLES",
    "REGISTRY",
    "TARGETS_SCHEMA_ID",
    "TESTS_FILE_EXTENSIONS",
    "AssertionType",
    "normalize_assertion_type",
]

EVAL_SCHEMA_ID = "agentv-eval-v2"
TARGETS_SCHEMA_ID = "agentv-targets-v2.2"
TESTS_FILE_EXTENSIONS = (".yaml", ".yml", ".jsonl")  # AgentV v2.19 refuses a `.csv` tests file
MESSAGE_ROLES = ("system", "user", "assistant", "tool")
CONTENT_TYPES = ("text", "file", "image", "json")

_ASSERT_LIST = {"type": "array", "items": {"$ref": "#/$defs/assertion"}}
_MESSAGES = {"type": "array", "items": {"$ref": "#/$defs/message"}}
_ARGV = {"anyOf": [{"type": "array", "items": {"type": "string"}, "minItems": 1}, {"type": "string"}]}

SUITE = ObjectSpec("suite", "an eval file", "An AgentV eval file (eval spec v2): metadata, defaults and tests.", (
    F("$schema", "Marks the file as an AgentV eval file: `agentv-eval-v2` (an identifier, not a URL).",
      "string", enum=(EVAL_SCHEMA_ID,), example=f"$schema: {EVAL_SCHEMA_ID}", lenient=True),
    F("name", "The eval pack's name: lowercase letters, digits and hyphens, 1–64 characters. When "
      "present, `description` should be too.", "string", example="name: export-screening"),
    F("description", "What this eval measures (1–1024 characters).", "string",
      example="description: Evaluates export screening accuracy"),
    F("version", "The eval pack's version, e.g. \"1.0\" (quote it so YAML keeps it a string).", "string",
      example='version: "1.0"'),
    F("author", "The author or organization.", "string"),
    F("license", "An SPDX license identifier, e.g. Apache-2.0.", "string", example="license: MIT"),
    F("tags", "Tags for discovery and filtering.", "array", items="string", example="tags: [compliance, agents]"),
    F("requires", "Compatibility constraints, e.g. `{agentv: \">=0.6.0\"}`.", "object", object="requires"),
    F("input", "Input prepended to every test's input unless the test sets `skip_defaults`: a string "
      "(one user message) or a message list.", "string", "array",
      schema={"anyOf": [{"type": "string"}, _MESSAGES]},
      example="input:\n  - role: system\n    content: You are a support agent."),
    F("tests", "The tests: a list (items may be `file://path` or `file://glob` references), or a path to "
      "a .yaml, .yml, .jsonl or .csv file, relative to this file.", "array", "string", required=True,
      deprecated_aliases=("eval_cases", "evalcases"),
      schema={"anyOf": [{"type": "string"}, {"type": "array", "items": {
          "anyOf": [{"type": "string", "pattern": "^file://"}, {"$ref": "#/$defs/test"}]}}]},
      example="tests: ./cases.jsonl"),
    F("target", "The target to run (legacy location).", "string", deprecated="use 'execution.target'."),
    F("execution", "How to run the tests: target(s), trials, cache, budget.", "object", object="execution"),
    F("assert", "Default assertions, appended after each test's own unless the test sets `skip_defaults`.",
      "array", schema=_ASSERT_LIST, example="assert:\n  - type: latency\n    max_ms: 10000"),
    F("workspace", "The workspace the agent works in: an object, or a path to a YAML file with one.",
      "object", "string", object="workspace", file_ref=True),
    F("dataset", "A dataset name for results (defaults to the file name).", "string"),
    F("evaluator", "Legacy (AgentV v2.19 still reads it): the evaluator of tests that have no assertions; "
      "`llm_judge` (the default) grades them with the judge against `criteria`.", "string",
      example="evaluator: llm_judge"),
))

REQUIRES = ObjectSpec("requires", "requires", "Compatibility constraints.", (
    F("agentv", "The AgentV versions this eval needs, as a semver range.", "string", example='agentv: ">=0.6.0"'),
))

EXECUTION = ObjectSpec("execution", "an execution block", "How to run tests: targets, trials, caching, budget.", (
    F("target", "The target (from targets.yaml) to run the tests against.", "string", example="target: default"),
    F("targets", "Several targets: every test runs against each (a comparison matrix).", "array",
      items="string", example="targets: [claude, copilot]"),
    F("assert", "Default assertions (prefer the top-level `assert`).", "array",
      deprecated_aliases=("evaluators",), schema=_ASSERT_LIST),
    F("skip_defaults", "Do not apply the suite's default `assert` and `input` to this test.", "boolean",
      lenient=True),  # AgentV tests `=== true`: any other value applies the defaults
    F("cache", "Reuse cached target responses.", "boolean"),
    F("cache_path", "Where the response cache lives.", "string", deprecated_aliases=("cachePath",)),
    F("trials", "Run each test several times: `{count, strategy, cost_limit_usd}`.", "object", object="trials",
      lenient=True),
    F("total_budget_usd", "Stop the run once it has cost this much (US dollars, > 0).", "number",
      exclusive_minimum=0, lenient=True, deprecated_aliases=("totalBudgetUsd",)),
    F("fail_on_error", "Fail the run when a target or judge errors.", "boolean", lenient=True,
      deprecated_aliases=("failOnError",)),
    F("timeout_seconds", "The longest a test may run, in seconds.", "number", exclusive_minimum=0),
    F("workers", "How many tests run at once (1–50).", "integer", minimum=1, maximum=50),
))

TRIALS = ObjectSpec("trials", "trials", "Repeated runs of each test, to measure non-determinism.", (
    F("count", "How many times to run each test (≥ 1).", "integer", minimum=1, required=True, example="count: 3",
      lenient=True),
    F("strategy", "How trial scores combine: pass_at_k (the best score; stops at the first pass), mean, or "
      "confidence_interval (the lower bound of the 95% interval).", "string",
      enum=("pass_at_k", "mean", "confidence_interval"), default="pass_at_k", lenient=True),
    F("cost_limit_usd", "Stop trying once the trials of a test have cost this much (US dollars).", "number",
      minimum=0, deprecated_aliases=("costLimitUsd",), lenient=True),
))

WORKSPACE = ObjectSpec("workspace", "a workspace", "The folder the agent works in, and its lifecycle.", (
    F("template", "A folder copied as the agent's workspace (relative to the eval file).", "string",
      file_ref=True, folder=True, example="template: ./workspace-template"),
    F("isolation", "shared: one workspace for all tests; per_test: a fresh copy for each.", "string",
      enum=("shared", "per_test"), lenient=True),
    F("mode", "How workspaces are provided: pooled, temp or static.", "string", enum=("pooled", "temp", "static")),
    F("path", "For static mode: the folder to use as is.", "string"),
    F("repos", "Git repositories to clone into the workspace.", "array", items_object="workspace_repo"),
    F("hooks", "Commands run before and after tests.", "object", object="workspace_hooks"),
    F("setup", "A script run before the tests.", "object", object="workspace_script"),
    F("teardown", "A script run after the tests.", "object", object="workspace_script"),
))

WORKSPACE_HOOKS = ObjectSpec("workspace_hooks", "workspace hooks", "Commands around the tests.", (
    F("enabled", "Turn the hooks off with false.", "boolean"),
    F("before_all", "Runs once before all tests.", "object", object="workspace_hook"),
    F("before_each", "Runs before each test.", "object", object="workspace_hook"),
    F("after_each", "Runs after each test.", "object", object="workspace_hook"),
    F("after_all", "Runs once after all tests.", "object", object="workspace_hook"),
))

WORKSPACE_HOOK = ObjectSpec("workspace_hook", "a workspace hook", "One hook command.", (
    F("command", "The command, as an argv list.", "array", "string", schema=_ARGV,
      example='command: ["bash", "./scripts/setup.sh"]'),
    F("script", "Older name of `command`.", "array", "string", schema=_ARGV, deprecated="use 'command'."),
    F("timeout_ms", "The longest the hook may run, in milliseconds.", "number", minimum=0,
      deprecated_aliases=("timeoutMs",)),
    F("cwd", "The hook's working directory (relative to the eval file).", "string", file_ref=True, folder=True),
    F("reset", "How the repositories are reset after a test: none, fast or strict.", "string",
      enum=("none", "fast", "strict")),
))

WORKSPACE_SCRIPT = ObjectSpec("workspace_script", "a workspace script", "A setup or teardown script.", (
    F("script", "The script, as an argv list.", "array", "string", schema=_ARGV,
      example="script: [bun, run, setup.ts]"),
    F("command", "The script, as an argv list.", "array", "string", schema=_ARGV),
    F("timeout_ms", "The longest the script may run, in milliseconds.", "number", minimum=0),
    F("cwd", "The script's working directory.", "string", file_ref=True, folder=True),
))

WORKSPACE_REPO = ObjectSpec("workspace_repo", "a workspace repository", "A repository in the workspace.", (
    F("path", "Where the repository goes in the workspace.", "string"),
    F("source", "Where the repository comes from: `{type: git | local, url | path}`.", "object"),
    F("checkout", "What to check out: `{ref, base_commit, ancestor, resolve}`.", "object"),
    F("clone", "Clone options, e.g. `{depth}`.", "object"),
    F("repo", "The repository URL.", "string"),
    F("commit", "The commit to check out.", "string"),
    F("base_commit", "The commit the agent's changes are compared with.", "string"),
    F("ancestor", "Check out this many commits before `commit`.", "integer", minimum=0),
    F("sparse", "Paths for a sparse checkout.", "array", items="string"),
), open=True)  # repository settings changed between releases; only the checker's own rules apply

TEST = ObjectSpec("test", "a test", "One test: an input, what a good answer looks like, and how to grade it.", (
    F("id", "A unique id for the test in this file.", "string", required=True, example="id: greeting"),
    F("criteria", "What a good answer does, in natural language; LLM judges grade against it.", "string",
      deprecated_aliases=("expected_outcome",), example="criteria: Greets the user by name"),
    F("input_messages", "The input: a string (one user message) or a message list "
      "`{role: system | user | assistant | tool, content}`.", "string", "array",
      aliases=("input",), schema={"anyOf": [{"type": "string"}, _MESSAGES]},
      example='input: "Hello, my name is Alice!"'),
    F("expected_messages", "The reference answer: a string (one assistant message), a mapping (an "
      "assistant message whose content is that object), or a message list; assistant messages may carry "
      "`tool_calls`.", "string", "object", "array", aliases=("expected_output",),
      schema={"anyOf": [{"type": "string"}, {"type": "object"}, _MESSAGES]},
      example='expected_output: "Hello Alice!"'),
    F("assert", "This test's assertions; the suite's `assert` is appended unless `skip_defaults` is set.",
      "array", deprecated_aliases=("evaluators",), schema=_ASSERT_LIST),
    F("rubrics", "Rubric criteria for this test.", "array", deprecated="use an `assert` item with "
      "`type: rubrics` and `criteria`.",
      schema={"type": "array", "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/rubric_criterion"}]}}),
    F("execution", "Per-test execution overrides (targets, skip_defaults, timeout_seconds).", "object",
      object="execution"),
    F("skip_defaults", "Do not apply the suite's default `assert` and `input` to this test.", "boolean",
      lenient=True),  # AgentV tests `=== true`: any other value applies the defaults
    F("workspace", "A workspace for this test only.", "object", "string", object="workspace", file_ref=True),
    F("metadata", "Free-form values kept with the test and its results.", "object"),
    F("conversation_id", "Groups tests that are turns of one conversation.", "string"),
    F("description", "A human-readable description of the test.", "string"),
    F("note", "Test-specific context given to the judges.", "string"),
    F("dataset", "The dataset name for this test's results.", "string"),
))

MESSAGE = ObjectSpec("message", "a message", "One message of an input conversation.", (
    F("role", "Who speaks: system, user, assistant or tool.", "string", enum=MESSAGE_ROLES, required=True),
    F("content", "The text, a list of content blocks `{type: text | file | image | json, value}`, or a "
      "structured object.", "string", "array", "object",
      schema={"anyOf": [{"type": "string"}, {"type": "object"},
                        {"type": "array", "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/content_block"}]}}]}),
    F("tool_calls", "For assistant messages: the tools called, `{tool, input?, output?}`.", "array",
      items_object="tool_call"),
    F("name", "For tool messages: the tool's name.", "string"),
    F("tool_call_id", "For tool messages: the call this message answers.", "string"),
))

EXPECTED_MESSAGE = ObjectSpec("expected_message", "an expected message", "One message of the reference "
                              "answer, usually from the assistant, with the tool calls it should make.",
                              MESSAGE.fields)

CONTENT_BLOCK = ObjectSpec("content_block", "a content block", "One part of a message's content.", (
    F("type", "text (inline text), file (a path relative to the eval file), image (a path or base64) or "
      "json (a structured value).", "string", enum=CONTENT_TYPES, required=True),
    F("value", "The text, path, image or JSON value.", "string", "object", "array", "number", "boolean",
      required=True),
))

TOOL_CALL = ObjectSpec("tool_call", "a tool call", "A tool call in an expected assistant message.", (
    F("tool", "The tool's name.", "string", required=True, example="tool: knowledgeSearch"),
    F("input", "The call's arguments: any JSON value (not `args`).", "string", "number", "boolean", "array",
      "object", "null", example='input: { query: "branch deactivation" }'),
    F("output", "The tool's result, when it matters.", "string", "number", "boolean", "array", "object", "null"),
    F("id", "An id pairing the call with its tool message.", "string"),
))

ASSERTION = ObjectSpec("assertion", "an assertion", "One item of `assert`: what the answer must satisfy "
                       "and how it is scored.", COMMON_FIELDS, open=True)

TARGETS_FILE = ObjectSpec("targets_file", "a targets file", "`.agentv/targets.yaml`: the targets tests "
                          "and judges run against.", (
                              F("$schema", "Marks the file: `agentv-targets-v2.2`.", "string"),
                              F("targets", "The targets.", "array", items_object="target", required=True),
                          ))

KNOWN_PROVIDERS = (
    "azure", "anthropic", "gemini", "openai", "openrouter", "cli", "mock",
    "codex", "copilot-cli", "copilot-sdk", "claude", "claude-cli", "claude-sdk", "pi-coding-agent", "pi-cli",
    "vscode", "vscode-insiders", "copilot-log", "agentv", "transcript",
    # aliases AgentV accepts
    "azure-openai", "google", "google-gemini", "codex-cli", "copilot", "copilot_sdk", "pi", "claude-code",
    "bedrock", "vertex",
)

# Placeholders the cli provider substitutes in `command` (every release's set, so none is flagged wrongly).
CLI_PLACEHOLDERS = ("PROMPT", "PROMPT_FILE", "GUIDELINES", "EVAL_ID", "ATTEMPT", "FILES", "OUTPUT_FILE")

TARGET = ObjectSpec("target", "a target", "A model or agent to run tests against, with its settings. "
                    "Provider settings beyond these are accepted as they are.", (
                        F("name", "The name tests and `judge_target` refer to; unique in the file.", "string",
                          required=True, example="name: default"),
                        F("provider", "azure, anthropic, gemini, openai, cli (a command), mock (a fixed "
                          "response), or a coding agent (codex, claude, copilot-cli, …).", "string",
                          example="provider: azure"),
                        F("judge_target", "The target that judges this target's answers.", "string",
                          aliases=("grader_target",)),
                        F("use_target", "Resolve this target as another named target.", "string"),
                        F("api_key", "An API key: always `${{ VAR }}`, never the key itself.", "string",
                          example="api_key: ${{ AZURE_OPENAI_API_KEY }}"),
                        F("endpoint", "The service endpoint.", "string"),
                        F("model", "The model or deployment name.", "string"),
                        F("version", "The API version (Azure).", "string"),
                        F("command", "For cli: the command line, with {PROMPT}, {PROMPT_FILE}, {OUTPUT_FILE}, "
                          "{FILES}, {EVAL_ID}, {ATTEMPT} placeholders.", "string"),
                        F("cwd", "For cli: the command's working directory.", "string"),
                        F("response", "For mock: the fixed answer.", "string"),
                        F("timeout_seconds", "The longest a call may take, in seconds.", "number",
                          exclusive_minimum=0),
                        F("healthcheck", "For cli: a command or URL checked before the run.", "object"),
                        F("batch", "evalspec: send this target's calls through its provider's batch API "
                          "(openai, anthropic) when the suite is run; as `evalspec run --batch-model NAME`.",
                          "boolean", example="batch: true"),
                    ), open=True)

REGISTRY = Registry(SUITE, REQUIRES, EXECUTION, TRIALS, WORKSPACE, WORKSPACE_HOOKS, WORKSPACE_HOOK,
                    WORKSPACE_SCRIPT, WORKSPACE_REPO, TEST, MESSAGE, EXPECTED_MESSAGE, CONTENT_BLOCK, TOOL_CALL,
                    ASSERTION, TARGETS_FILE, TARGET, *ASSERTION_OBJECTS,
                    *(t.spec for t in ASSERTION_LIST))
