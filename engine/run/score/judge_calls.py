"""What both formats' judge calls share: the tokens a judge may answer with, and where a judge's call sits in
batch mode, beside a cell's generated turns."""

from __future__ import annotations

# Weval's judges' (weval_judge.py); AgentV's judges send none (score/agentv_judges.py), as AgentV
JUDGE_MAX_TOKENS = 500


def judge_slot(index: int, label: str) -> str:
    """A judge call's place beside a cell's generated turns in batch mode: point index and judge."""
    return f"judge:{index}:{label}"


def extract_slot(model: str) -> str:
    """A key-point extraction's place in batch mode: the prompt's cell (model "") and the extracting model."""
    return f"extract:{model}"
