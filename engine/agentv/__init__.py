"""AgentV eval files: checking, normalizing, external tests, interpolation and targets files."""

from .check import AgentvResult, check_agentv
from .model import AgentvSuite, AgentvTest, Assertion, ContentBlock, Message, ToolCall
from .targets import check_agentv_targets

__all__ = [
    "AgentvResult",
    "AgentvSuite",
    "AgentvTest",
    "Assertion",
    "ContentBlock",
    "Message",
    "ToolCall",
    "check_agentv",
    "check_agentv_targets",
]
