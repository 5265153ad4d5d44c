"""A composite's code-judge aggregator: the lowest child score, with every child named."""

import json
import sys

results = json.load(sys.stdin)["results"]
low = min(r["score"] for r in results.values())
print(json.dumps({"score": low, "hits": [f"{name}={r['score']}" for name, r in sorted(results.items())],
                  "reasoning": "the weakest child decides"}))
