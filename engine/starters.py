"""`evalspec init weval|agentv [PATH]`: a small, valid, commented starter file that runs offline.

Each starter passes `evalspec check` with no finding and runs with `-m echo` (the offline model that
answers with the prompt), so a new user sees a whole loop (write, check, run, report) before choosing a
provider. The points are chosen to pass against echo; the comments say what to change for a real model.
"""

from __future__ import annotations

WEVAL = """\
# A Weval blueprint: a header (title, models, …), then `---`, then the prompts.
# Try it offline (no key, no network; `echo` answers with the prompt itself):
#   evalspec check {name}
#   evalspec run {name} -m echo
# Then run it for real: set OPENAI_API_KEY (or another provider's key) and drop `-m echo`.
title: My first blueprint
description: What this blueprint checks, in a sentence.
models:
  - openai:gpt-4o-mini          # provider:model; repeat for more models
# Judged points (plain-language criteria) need a judge model and its key, e.g.:
# evaluationConfig:
#   llm-coverage:
#     judges:
#       - {model: "openai:gpt-4o-mini", approach: holistic}
---
- id: capital-of-france
  prompt: What is the capital of France? Answer with the city name, Paris, in one sentence.
  should:
    - $icontains: paris                 # case-insensitive substring
    - $word_count_between: [3, 60]
  should_not:
    - $contains: As an AI

- id: polite-greeting
  prompt: Say hello to the reader in one short, friendly sentence.
  should:
    # Alternative paths: the best-scoring list counts.
    - - $icontains: hello
    - - $icontains: hi
  # A judged point reads like a rubric line (scored only when a judge is configured):
  #  - greets the reader warmly
"""

AGENTV = """\
# An AgentV eval file: a suite of tests, each with an input and assertions.
# Try it offline (no key, no network; `echo` answers with the last user message):
#   evalspec check {name}
#   evalspec run {name} -m echo
# Then run it for real against a target from .agentv/targets.yaml (or -m openai:gpt-4o-mini with
# OPENAI_API_KEY set).
$schema: agentv-eval-v2
name: my-first-suite
description: What this suite checks, in a sentence.

tests:
  - id: greeting
    criteria: The answer greets Alice by name.
    input: Hello, my name is Alice!
    assert:
      - type: contains
        value: Alice
        required: true          # a required assertion that fails makes the test fail
      - type: regex
        value: "^Hello"

  - id: json-status
    criteria: The answer contains a JSON status field.
    input: 'Reply with {"status": "ok"} exactly.'
    assert:
      - type: contains
        value: '"status"'
      - type: contains
        value: sorry
        negate: true            # passes when the answer does NOT contain it
    # An LLM-judged rubric (needs a judge target or --judge MODEL):
    # rubrics:
    #   - The answer is valid JSON with status "ok"
"""

STARTERS = {"weval": (WEVAL, "blueprint.weval.yml"), "agentv": (AGENTV, "suite.eval.yaml")}


def starter_text(kind: str, name: str) -> str:
    return STARTERS[kind][0].replace("{name}", name)


def default_name(kind: str) -> str:
    return STARTERS[kind][1]
