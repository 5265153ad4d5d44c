"""Prints a valid answer but exits with code 3: a non-zero exit is a failure whatever it printed."""
import json
import sys

sys.stdin.read()
print(json.dumps({"score": 1}))
print("exit three", file=sys.stderr)
sys.exit(3)
