"""`.agentv/targets.yaml`: the targets tests and judges run against, read as AgentV v2.19 reads them.

Rules: a `targets` list; each target has a unique `name` and a known `provider` (an unknown one is a
warning with did-you-mean, as AgentV warns); `judge_target` names a target of the file; a cli target has
a `command` whose `{PLACEHOLDERS}` AgentV knows; and secrets appear only as `${{ VAR }}` — a literal
that looks like a key is a warning with a fix that moves it to an environment variable.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..findings import Findings, Related, replace
from ..registry.agentv import CLI_PLACEHOLDERS, KNOWN_PROVIDERS, REGISTRY
from ..source import Mapping, Node, ParsedFile, Scalar, Sequence, node_type_name
from ..validation.objects import check_object
from ..validation.suggest import closest
from .interpolate import PATTERN as VAR_PATTERN

_SECRET_KEY = re.compile(r"(^|_)(api_?key|apikey|token|secret|password|passwd|access_key|private_key)$", re.I)
_KEY_LOOKING = re.compile(
    r"^(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{20,}|"
    r"github_pat_[A-Za-z0-9_]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|[A-Fa-f0-9]{32,}|"
    r"[A-Za-z0-9+/_-]{40,}={0,2})$")
_PLACEHOLDER = re.compile(r"\{([A-Z_]+)\}")
_ENV_NAMES = {"azure": "AZURE_OPENAI_API_KEY", "azure-openai": "AZURE_OPENAI_API_KEY", "openai": "OPENAI_API_KEY",
              "anthropic": "ANTHROPIC_API_KEY", "gemini": "GOOGLE_GENERATIVE_AI_API_KEY",
              "google": "GOOGLE_GENERATIVE_AI_API_KEY", "openrouter": "OPENROUTER_API_KEY"}


def check_agentv_targets(parsed: ParsedFile, path: Path | None = None) -> Findings:
    """Findings for a targets file (YAML syntax findings stay in `parsed.findings`)."""
    out = Findings()
    roots = [d.root for d in parsed.documents if d.root is not None]
    if not roots:
        return out
    root = roots[0]
    entries = check_object(root, REGISTRY["targets_file"], out, None, handled=("targets",))
    if entries is None:
        return out
    if entries.get("targets") is None:
        for f in out:
            if f.code == "missing-field":
                f.code, f.message = "missing-targets", "Missing or invalid 'targets' field (must be an array)."
        return out
    targets = entries.get("targets")
    if not isinstance(targets, Sequence):
        out.error("missing-targets", targets.span,  # type: ignore[union-attr]
                  f"Missing or invalid 'targets' field (must be an array); found {node_type_name(targets)}.")
        return out
    names: dict[str, Scalar] = {}
    judges: list[Scalar] = []
    for item in targets.items:
        _check_target(item, out, names, judges)
    for ref in judges:
        if ref.value not in names and not VAR_PATTERN.search(str(ref.value)):
            best = closest(str(ref.value), names)
            out.warning("unknown-target", ref.span, f"No target named '{ref.value}' in this file"
                        + (f"; did you mean '{best}'?" if best else "."),
                        fix=replace(f"Change to '{best}'", ref.span, best) if best else None)
    return out


def _check_target(item: Node, out: Findings, names: dict[str, Scalar], judges: list[Scalar]) -> None:
    entries = check_object(item, REGISTRY["target"], out, None, handled=("name", "provider", "api_key"))
    if entries is None:
        return
    assert isinstance(item, Mapping)
    name = entries.get("name")
    if name is not None:
        if not (isinstance(name, Scalar) and isinstance(name.value, str) and name.value.strip()):
            out.error("invalid-target-name", name.span,
                      "Missing or invalid 'name' field (must be a non-empty string).")
        elif name.value in names:
            out.error("duplicate-target-name", name.span, f"Duplicate target name '{name.value}'.",
                      related=(Related(names[name.value].span, f"'{name.value}' first defined here"),))
        else:
            names[name.value] = name
    provider_node = entries.get("provider")
    provider = provider_node.value if isinstance(provider_node, Scalar) and isinstance(provider_node.value, str) else None
    if provider_node is None and "use_target" not in entries:
        out.error("missing-provider", item.pairs[0][0].span if item.pairs else item.span,
                  "Missing or invalid 'provider' field (must be a non-empty string, or use use_target for "
                  "delegation).")
    elif provider_node is not None and provider is None:
        out.error("missing-provider", provider_node.span,
                  f"'provider' must be a string; found {node_type_name(provider_node)}.")
    elif provider is not None and not VAR_PATTERN.fullmatch(provider.strip()) and provider not in KNOWN_PROVIDERS:
        best = closest(provider, KNOWN_PROVIDERS, cutoff=0.6)
        out.warning("unknown-provider", provider_node.span,  # type: ignore[union-attr]
                    f"Unknown provider '{provider}'" + (f"; did you mean '{best}'?" if best else
                                                        f". Known providers: {', '.join(KNOWN_PROVIDERS)}."),
                    fix=replace(f"Change to '{best}'", provider_node.span, best) if best else None)  # type: ignore[union-attr]
    judge = entries.get("judge_target")
    if isinstance(judge, Scalar) and isinstance(judge.value, str):
        judges.append(judge)
    if provider == "cli":
        _check_cli(item, entries.get("command"), out)
    for field_name in ("workspace_template", "workspaceTemplate"):
        removed = item.key_node(field_name)
        if removed is not None:  # v2.19 refuses such a target (targets.ts resolveTargetDefinition)
            out.error("removed-field", removed.span, "target-level workspace_template has been removed. Use "
                      "eval-level workspace.template.")
    for key, value in item.items():
        _check_secret(key, value, provider, out)


def _check_cli(item: Mapping, command: Node | None, out: Findings) -> None:
    if not (isinstance(command, Scalar) and isinstance(command.value, str) and command.value.strip()):
        span = command.span if command is not None else (item.pairs[0][0].span if item.pairs else item.span)
        out.error("missing-command", span, "CLI provider requires 'command' as a non-empty string.")
        return
    for m in _PLACEHOLDER.finditer(command.value):
        if m.group(1) not in CLI_PLACEHOLDERS:
            out.error("unknown-placeholder", command.span,
                      f"Unknown CLI placeholder '{{{m.group(1)}}}'. Supported placeholders: "
                      + ", ".join(f"{{{p}}}" for p in CLI_PLACEHOLDERS))


def _check_secret(key: Scalar, value: Node | None, provider: str | None, out: Findings) -> None:
    if not (isinstance(value, Scalar) and isinstance(value.value, str)):
        return
    text = value.value.strip()
    if not text or VAR_PATTERN.fullmatch(text):
        return
    by_name = bool(_SECRET_KEY.search(str(key.value)))
    if not by_name and not (_KEY_LOOKING.match(text) and not text.startswith(("http", "/", "."))
                            and any(c.isdigit() for c in text) and any(c.isalpha() for c in text)):
        return
    if not by_name and " " in text:
        return
    var = _ENV_NAMES.get(provider or "", f"{re.sub(r'[^A-Z0-9]+', '_', str(key.value).upper()).strip('_')}")
    out.warning("literal-secret", value.span,
                f"'{key.value}' holds a literal {'secret' if by_name else 'value that looks like an API key'}; "
                f"keep secrets out of the file: write '${{{{ {var} }}}}' and set {var} in the environment "
                "or a .env file.",
                fix=replace(f"Replace with ${{{{ {var} }}}}", value.span, f"${{{{ {var} }}}}"))
