"""`${{ VAR }}` (AgentV) and `${VAR}` references in settings, resolved from the environment.

Values expanded into a secret setting (an api key, a header) are registered for redaction; model names
and endpoints are not, so error messages can still name them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from evalspec.providers.base import MISSING_KEY, ProviderError
from evalspec.providers.redact import register_secret

_REF = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def references(value: str) -> list[str]:
    return [a or b for a, b in _REF.findall(value)]


def expand(value: str, env: Mapping[str, str], what: str, *, secret: bool = False) -> str:
    """Replace every reference; a variable that is unset or empty is an error naming it (AgentV's words)."""

    def sub(m: re.Match[str]) -> str:
        var = m.group(1) or m.group(2)
        got = env.get(var)
        if got is None or not got.strip():
            raise ProviderError(MISSING_KEY, f"Environment variable '{var}' required for {what} is not set")
        if secret:
            register_secret(got)
        return got

    return _REF.sub(sub, value)
