"""A run's `targets.yaml`, read as AgentV v2.19 reads it (`readTargetDefinitions`): the `yaml` package's
`parse` (YAML 1.2 core schema: `yes`/`on` are text, `0o17` is 15, `1:30` and `1_000` are text, `1e3` is
1000) through the project's located reader (source.parse_yaml), so a file AgentV refuses is refused at
its place (`path:line:col: message`).

Refused as AgentV refuses them: a YAML syntax error, a key twice in one mapping ("Map keys must be
unique"), more than one document, a root that is not a mapping, no `targets` list, an entry that is not a
mapping, without a `name` text or without a `provider` text. `read_targets(path, text)` gives the
targets by name, their values plain (aliases expanded; `${{ VAR }}` left for providers/targets.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...agentv.yaml_file import YamlFileError, parse_agentv_yaml
from ...source import Mapping, Node, Scalar, Sequence, Span, to_python
from .error import PlanError


def _at(path: Path, span: Span, message: str) -> PlanError:
    return PlanError(f"{path}:{span.start_line + 1}:{span.start_col + 1}: {message}")


def _text(node: Node | None) -> str | None:
    if isinstance(node, Scalar) and isinstance(node.value, str) and node.value.strip():
        return node.value
    return None


def read_targets(path: Path, text: str) -> dict[str, dict[str, Any]]:
    """The targets of a targets file by name; PlanError (located) where AgentV refuses the file."""
    try:
        _, root = parse_agentv_yaml(text)
    except YamlFileError as err:
        raise _at(path, err.span, err.problem) from None
    if not isinstance(root, Mapping):
        raise _at(path, root.span if root is not None else Span(0, 0, 0, 0),
                  "targets.yaml must be a YAML object with a 'targets' field")
    items = root.get("targets")
    if not isinstance(items, Sequence):
        raise _at(path, items.span if items is not None else root.span, "targets.yaml must have a 'targets' array")
    out: dict[str, dict[str, Any]] = {}
    for index, item in enumerate(items.items):
        if not isinstance(item, Mapping):
            raise _at(path, item.span, f"targets.yaml entry at index {index} must be an object")
        name = _text(item.get("name"))
        if name is None:
            raise _at(path, (item.get("name") or item).span,
                      f"targets.yaml entry at index {index} is missing a valid 'name'")
        if _text(item.get("provider")) is None:
            raise _at(path, (item.get("provider") or item).span,
                      f"targets.yaml entry '{name}' is missing a valid 'provider'")
        value = to_python(item)
        out.setdefault(name, value)  # AgentV's lookup (`find`) takes the first of a name
    return out
