"""Reads its payload, then dies with a traceback."""
import sys

sys.stdin.read()
raise RuntimeError("the judge fell over: boom")
