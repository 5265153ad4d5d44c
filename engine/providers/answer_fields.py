"""Reading a provider's JSON answer, which is untrusted: each reader returns the field in the shape the API
documents, or raises ProviderError(BAD_RESPONSE) naming the field and what it held.

A 200 answer of the wrong shape (`{"choices": [{"message": "a string"}]}`, `"usage": {"prompt_tokens":
"abc"}`) is a bad answer like malformed JSON: an error cell with the reason, never a crash of the run.
Fields an API documents as optional read as empty when they are missing or null.
"""

from __future__ import annotations

import math
from typing import Any

from evalspec.providers.base import BAD_RESPONSE, ProviderError, Usage
from evalspec.providers.redact import clip


def bad(provider: str, what: str, value: Any) -> ProviderError:
    shown = repr(value)
    if len(shown) > 120:
        shown = clip(shown, 117) + "..."
    return ProviderError(BAD_RESPONSE, f"{provider}: malformed answer: {what} is {shown}", 200, False,
                         provider=provider)


def obj(provider: str, value: Any, where: str) -> dict[str, Any]:
    """An optional JSON object: {} when missing or null."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad(provider, f"{where} (expected an object)", value)
    return value


def items(provider: str, value: Any, where: str) -> list[Any]:
    """An optional JSON array: [] when missing or null."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad(provider, f"{where} (expected a list)", value)
    return value


def text(provider: str, value: Any, where: str) -> str:
    """Optional text: "" when missing or null."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise bad(provider, f"{where} (expected text)", value)
    return value


def joined_text(provider: str, blocks: list[Any], where: str, *, keep: Any = None) -> str:
    """The `text` of every block (an object) that `keep(block)` accepts, joined."""
    out = []
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise bad(provider, f"{where}[{i}] (expected an object)", block)
        if keep is None or keep(block):
            out.append(text(provider, block.get("text"), f"{where}[{i}].text"))
    return "".join(out)


def count(provider: str, value: Any, where: str) -> int:
    """A token count: a non-negative whole number; 0 when missing or null."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or value < 0 or value != int(value):
        raise bad(provider, f"{where} (expected a token count)", value)
    return int(value)


def usage(provider: str, value: Any, where: str, input_key: str, output_key: str) -> Usage:
    """The answer's token counts; not reported unless both are given (AgentV: the AI SDK's usage
    counts only when inputTokens and outputTokens are both present)."""
    u = obj(provider, value, where)
    given_in, given_out = u.get(input_key), u.get(output_key)
    if type(given_in) is int and type(given_out) is int and given_in >= 0 and given_out >= 0:
        return Usage(given_in, given_out)  # the usual answer: two counts, read as `count` reads them
    input_tokens = count(provider, given_in, f"{where}.{input_key}")
    output_tokens = count(provider, given_out, f"{where}.{output_key}")
    return Usage(input_tokens, output_tokens, reported=given_in is not None and given_out is not None)


def model_name(value: Any) -> str | None:
    """The model the provider says it used: informative only, so anything but text is dropped."""
    return value if isinstance(value, str) else None
