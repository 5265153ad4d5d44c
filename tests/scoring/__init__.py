"""Tests for the pure scoring layer (evalspec.scoring)."""
