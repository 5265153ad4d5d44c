"""Prints the score given as its first argument (may be out of range, to test clamping)."""
import json
import sys

sys.stdin.read()
print(json.dumps({"score": float(sys.argv[1]), "hits": ["fixed"], "reasoning": "fixed score"}))
