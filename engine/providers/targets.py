"""AgentV targets (`targets.yaml` entries) as providers.

A target is `{name, provider, …settings}`. Settings are read with AgentV's names and their camelCase /
alias forms; `${{ VAR }}` references still present are resolved from the environment, with AgentV's message
when one is missing ("Environment variable 'X' required for <target> api key is not set"). Supported:
openai (and the other OpenAI-compatible catalog providers, e.g. openrouter), azure, anthropic, gemini,
mock, cli. Coding agents (codex, claude-code, copilot, pi, vscode) are not run by evalspec; wrap one in a
`cli` target instead.

A provider built from a target is bound to the target's model (or Azure deployment): ChatRequest.model
is ignored. Target `temperature` / `max_output_tokens` become provider parameters.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalspec.providers import catalog
from evalspec.providers.azure import AZURE_KEY_ENV, azure_provider
from evalspec.providers.base import CONFIG, MISSING_KEY, ProviderError
from evalspec.providers.cache import ResponseCache
from evalspec.providers.command import DEFAULT_COMMAND_TIMEOUT, CommandProvider
from evalspec.providers.envvars import expand, references
from evalspec.providers.factory import http_provider, wrap
from evalspec.providers.http import DEFAULT_TIMEOUT
from evalspec.providers.mock import MockProvider
from evalspec.providers.redact import Secret
from evalspec.providers.retry import DEFAULT_POLICY, RetryPolicy

if TYPE_CHECKING:
    from evalspec.providers.http import HttpClient

DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"  # AgentV's default when a gemini target names no model
CODING_AGENTS = frozenset(
    {"codex", "codex-cli", "claude-code", "claude", "claude-cli", "claude-sdk", "copilot", "copilot-cli",
     "copilot-sdk", "pi", "pi-cli", "pi-coding-agent", "vscode", "vscode-insiders", "agentv"}
)
_ALIASES = {"azure-openai": "azure", "google": "gemini", "google-gemini": "gemini"}


class _Settings:
    """Reads one target's settings: first present alias wins, references expanded."""

    def __init__(self, target: Mapping[str, Any], env: Mapping[str, str]) -> None:
        self.t = target
        self.env = env
        self.name = str(target.get("name") or "(unnamed)")

    def raw(self, *keys: str) -> Any:
        for k in keys:
            v = self.t.get(k)
            if v is not None and not (isinstance(v, str) and not v.strip()):
                return v
        return None

    def text(self, what: str, *keys: str, required: bool = False, secret: bool = False) -> str | None:
        v = self.raw(*keys)
        if v is None:
            # Present but empty after the parser's own interpolation: a `${{ VAR }}` whose VAR is unset.
            present = next((k for k in keys if k in self.t), None)
            if required:
                kind = MISSING_KEY if secret else CONFIG
                hint = f" (`{present}` is empty: is its environment variable set?)" if present else ""
                raise ProviderError(kind, f"target '{self.name}': {what} is required{hint}")
            return None
        s = str(v).strip()
        if references(s):
            s = expand(s, self.env, f"{self.name} {what}", secret=secret)
        return s

    def number(self, what: str, *keys: str) -> float | None:
        v = self.raw(*keys)
        if v is None:
            return None
        if isinstance(v, str) and references(v):
            v = expand(v, self.env, f"{self.name} {what}")
        try:
            return float(v)
        except (TypeError, ValueError):
            raise ProviderError(CONFIG, f"target '{self.name}': {what} must be a number, got {v!r}") from None


def _parameters(s: _Settings) -> dict[str, Any]:
    params: dict[str, Any] = {}
    t = s.number("temperature", "temperature")
    if t is not None:
        params["temperature"] = t
    n = s.number("max output tokens", "max_output_tokens", "maxOutputTokens", "max_tokens", "maxTokens")
    if n is not None:
        params["max_tokens"] = int(n)
    return params


def retry_policy_from_target(target: Mapping[str, Any], default: RetryPolicy = DEFAULT_POLICY) -> RetryPolicy:
    """AgentV's retry settings (max_retries, retry_initial_delay_ms, retry_max_delay_ms) over `default`."""
    s = _Settings(target, os.environ)
    n = s.number("max retries", "max_retries", "maxRetries")
    first = s.number("retry initial delay", "retry_initial_delay_ms", "retryInitialDelayMs")
    cap = s.number("retry max delay", "retry_max_delay_ms", "retryMaxDelayMs")
    # The rate-limit budget and the wait bound stay the run's (AgentV's settings name no such thing).
    return dataclasses.replace(
        default,
        max_retries=default.max_retries if n is None else max(0, int(n)),
        base_delay=default.base_delay if first is None else first / 1000.0,
        max_delay=default.max_delay if cap is None else cap / 1000.0,
    )


def provider_from_target(
    target: Mapping[str, Any],
    *,
    client: HttpClient | None = None,
    env: Mapping[str, str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    retry: RetryPolicy | None = DEFAULT_POLICY,
    cache: ResponseCache | None = None,
) -> Any:
    """A provider for one AgentV target, taking `chat(req, on_retry=…)`. HTTP targets retry (the target's
    own retry settings win over `retry`) and use `cache` when given; mock and cli targets do neither.
    `base_dir` is where a relative cli `cwd` is resolved from (the eval file's folder, in AgentV)."""
    env = os.environ if env is None else env
    s = _Settings(target, env)
    kind = str(target.get("provider") or "").strip().lower()
    kind = _ALIASES.get(kind, kind)
    if not kind:
        raise ProviderError(CONFIG, f"target '{s.name}': provider is required")

    if kind == "mock":
        return wrap(MockProvider(
            s.text("response", "response"),
            name=s.name,
            delay_ms=s.number("delay", "delay_ms", "delayMs") or 0.0,
            delay_min_ms=s.number("minimum delay", "delay_min_ms", "delayMinMs") or 0.0,
            delay_max_ms=s.number("maximum delay", "delay_max_ms", "delayMaxMs") or 0.0,
        ), retry=None)
    if kind == "cli":
        template = s.raw("command_template", "commandTemplate", "command")
        if template is None:
            raise ProviderError(CONFIG, f"target '{s.name}': command_template is required for a cli target")
        if isinstance(template, str) and references(template):
            template = expand(template, env, f"{s.name} CLI command template")
        cwd = s.text("working directory", "cwd")
        if cwd and base_dir is not None and not Path(cwd).is_absolute():
            cwd = str(Path(base_dir) / cwd)
        elif not cwd and base_dir is not None:
            cwd = str(base_dir)
        seconds = s.number("timeout", "timeout_seconds", "timeoutSeconds")
        command = CommandProvider(template, name=s.name, cwd=cwd, timeout=seconds or DEFAULT_COMMAND_TIMEOUT)
        return wrap(command, retry=None)  # an agent's failure is not transient the way a 429 is
    if kind in CODING_AGENTS:
        raise ProviderError(
            CONFIG,
            f"target '{s.name}': provider '{kind}' is a coding agent, which evalspec does not drive; "
            "run it through a `cli` target (command_template with {PROMPT} / {OUTPUT_FILE})",
        )

    params = _parameters(s)
    policy = retry_policy_from_target(target, retry) if retry is not None else None

    if kind == "azure":
        endpoint = s.text("endpoint", "endpoint", "resource", "resourceName", "resource_name", required=True)
        deployment = s.text(
            "deployment", "deployment", "deployment_name", "deploymentName", "model", required=True
        )
        key = _key(s, "api key", AZURE_KEY_ENV)
        raw = azure_provider(
            endpoint=endpoint or "",
            deployment=deployment or "",
            api_key=key,
            api_version=s.text("api version", "version", "api_version", "apiVersion"),
            name=s.name,
            client=client,
            timeout=timeout,
            parameters=params,
        )
        return wrap(raw, retry=policy, cache=cache)

    spec = catalog.find("google" if kind == "gemini" else kind)
    if spec is None:
        known = ", ".join(["openai", "azure", "anthropic", "gemini", "mock", "cli", *sorted(catalog.PROVIDERS)])
        raise ProviderError(CONFIG, f"target '{s.name}': unknown provider '{kind}' (supported: {known})")
    model = s.text("model", "model", "deployment", "variant", required=kind != "gemini")
    if kind == "gemini" and not model:
        model = DEFAULT_GEMINI_MODEL
    key = _key(s, "api key", spec.key_env)
    base_url = s.text("endpoint", "endpoint", "base_url", "baseUrl", "baseURL") or spec.effective_base_url(env)
    raw = http_provider(
        spec,
        api_key=key,
        base_url=base_url,
        client=client,
        timeout=timeout,
        model=model,
        parameters=params,
        name=s.name,
    )
    return wrap(raw, retry=policy, cache=cache)


def _key(s: _Settings, what: str, fallback_env: str) -> Secret:
    """`api_key` setting (usually `${{ VAR }}`), else the provider's usual variable; missing → error."""
    keys = ("api_key", "apiKey")
    # A target that names its key but whose key came out empty must not fall back to another key.
    value = s.text(what, *keys, secret=True, required=any(k in s.t for k in keys))
    if value:
        return Secret(value)
    got = s.env.get(fallback_env)
    if got:
        return Secret(got)
    raise ProviderError(
        MISSING_KEY,
        f"target '{s.name}': no api key: set `api_key: ${{{{ {fallback_env} }}}}` in the target "
        f"and export {fallback_env}",
    )
