"""A real code judge: scores the share of config.keywords found in the answer, reports what it read."""
import json
import sys

payload = json.load(sys.stdin)
words = (payload.get("config") or {}).get("keywords") or []
answer = payload["answer"]
hits = [w for w in words if w in answer]
misses = [w for w in words if w not in answer]
print("judging…", file=sys.stderr)
print(json.dumps({
    "score": len(hits) / len(words) if words else 0,
    "hits": hits,
    "misses": misses,
    "reasoning": f"{len(hits)}/{len(words)} keywords",
    "details": {"keys": sorted(payload), "question": payload["question"], "criteria": payload["criteria"],
                "reference_answer": payload["reference_answer"], "token_usage": payload["token_usage"],
                "cost_usd": payload["cost_usd"], "duration_ms": payload["duration_ms"], "trace": payload["trace"],
                "expected_output": payload["expected_output"], "output": payload["output"],
                "input": payload["input"], "cwd": __import__("os").getcwd()},
}))
