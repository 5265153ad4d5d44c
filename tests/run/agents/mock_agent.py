#!/usr/bin/env python3
"""A mock `cli` agent, as AgentV's tool-trajectory-simple example has one (mock-agent.ts): the prompt's
words pick a scenario, and the answer (pretty-printed JSON, `output_messages` with `tool_calls`) goes to
--output. `--jsonl` writes the same answer as JSONL events instead: one tool call a line, then the
final assistant message."""

import argparse
import json

SCENARIOS = [
    (("research", "search"), "Based on my research of the knowledge base, here is my analysis.",
     [("knowledgeSearch", {"query": "REST API characteristics"}),
      ("knowledgeSearch", {"query": "GraphQL characteristics"}),
      ("documentRetrieve", {"docId": "api-comparison"})]),
    (("load+customer", "load+normalize"), "Customer data loaded, normalized, and saved successfully.",
     [("load_data", {"source": "customers"}), ("transform", {"operation": "normalize"}),
      ("save_data", {"destination": "output"})]),
    (("process", "data", "pipeline"), "Data processing complete.",
     [("fetchData", {"endpoint": "/api/customers"}), ("validateSchema", {"schema": "customer-v2"}),
      ("transformData", {"format": "normalized"}), ("saveResults", {"destination": "processed_customers"})]),
    (("auth", "login", "credential"), "Authentication successful. Token generated for user.",
     [("checkCredentials", {"user": "user@example.com"}), ("generateToken", {"userId": "user@example.com", "ttl": 3600}),
      ("auditLog", {"event": "login", "user": "user@example.com"})]),
    (("metric", "cpu", "memory"), "CPU Usage: 45%. Memory Usage: 6.2GB / 16GB.",
     [("getCpuMetrics", {"server": "prod-1"}), ("getMemoryMetrics", {"server": "prod-1"})]),
    (("weather",), "The weather in Paris is currently sunny with a high of 22°C.",
     [("search", {"query": "weather Paris"}), ("get_weather", {"location": "Paris"})]),
]


def answer(prompt: str) -> tuple[str, list[tuple[str, dict]]]:
    low = prompt.lower()
    for words, text, calls in SCENARIOS:
        for word in words:
            if all(part in low for part in word.split("+")):
                return text, calls
    return "I processed your request.", []


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--jsonl", action="store_true")
    ap.add_argument("--duration", type=float, help="report this duration_ms for every tool call")
    args = ap.parse_args()
    text, calls = answer(args.prompt)
    tool_calls = [{"tool": name, "input": inp, **({"duration_ms": args.duration} if args.duration else {})}
                  for name, inp in calls]
    with open(args.output, "w", encoding="utf-8") as f:
        if args.jsonl:
            for call in tool_calls:
                f.write(json.dumps({"type": "tool_call", **call}) + "\n")
            f.write(json.dumps({"role": "assistant", "content": text}) + "\n")
        else:
            message = {"role": "assistant", "content": text, **({"tool_calls": tool_calls} if tool_calls else {})}
            json.dump({"output_messages": [message]}, f, indent=2)
    print(text)


if __name__ == "__main__":
    main()
