"""Exits 0 but prints no JSON."""
import sys

sys.stdin.read()
print("<html>definitely not json</html>")
print("warning: something odd", file=sys.stderr)
