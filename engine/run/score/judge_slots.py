"""Where a judge's call sits in batch mode, beside a cell's generated turns (both formats' judges)."""

from __future__ import annotations


def judge_slot(index: int, label: str) -> str:
    """A judge call's place beside a cell's generated turns in batch mode: point index and judge."""
    return f"judge:{index}:{label}"


def extract_slot(model: str) -> str:
    """A key-point extraction's place in batch mode: the prompt's cell (model "") and the extracting model."""
    return f"extract:{model}"
