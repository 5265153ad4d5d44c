#!/usr/bin/env python3
"""A mock batch `cli` runner, as AgentV's batch-cli example has one: it answers every id it knows with
one JSONL record `{id, text, output: [{role, tool_calls}]}`, whichever test asked (the runner picks the
record of its test by id). Ids not in KNOWN get no record."""

import json
import sys

KNOWN = {"aml-001": "CLEAR", "aml-002": "REVIEW"}

with open(sys.argv[1], "w", encoding="utf-8") as f:
    for test_id, decision in KNOWN.items():
        record = {"id": test_id, "text": json.dumps({"decision": decision}),
                  "output": [{"role": "assistant", "tool_calls": [
                      {"tool": "aml_screening", "input": {"id": test_id}, "output": {"decision": decision}}]}]}
        f.write(json.dumps(record) + "\n")
