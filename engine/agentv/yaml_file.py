"""A YAML file AgentV v2.19 reads with the `yaml` package's `parse` (targets.yaml, a workspace file): its
plain value under the YAML 1.2 core schema, through the project's located reader (source.parse_yaml), or
`YamlFileError` with `line:col` where `parse` would throw (a syntax error, a key twice in one mapping, more
than one document)."""

from __future__ import annotations

from typing import Any

from ..findings import Severity
from ..source import Mapping, Node, ParsedFile, Scalar, Sequence, Span, parse_yaml, to_python


class YamlFileError(ValueError):
    def __init__(self, span: Span, message: str) -> None:
        super().__init__(f"{span.start_line + 1}:{span.start_col + 1}: {message}")
        self.span = span
        self.problem = message


def repeated_key(node: Node | None, depth: int = 0) -> Scalar | None:
    """The first key repeated in a mapping of `node` (the `yaml` package refuses the file)."""
    if node is None or depth > 200:
        return None
    if isinstance(node, Mapping):
        seen: set[Any] = set()
        for k, v in node.pairs:
            if isinstance(k, Scalar):
                key = (type(k.value), k.value)
                if key in seen:
                    return k
                seen.add(key)
            found = repeated_key(v, depth + 1)
            if found is not None:
                return found
    elif isinstance(node, Sequence):
        for item in node.items:
            found = repeated_key(item, depth + 1)
            if found is not None:
                return found
    return None


def parse_agentv_yaml(text: str) -> tuple[ParsedFile, Node | None]:
    """The parse and its one document's root (None: empty); YamlFileError where AgentV's `parse` throws."""
    parsed = parse_yaml(text)
    errors = [f for f in parsed.findings if f.severity == Severity.ERROR]
    if errors:
        raise YamlFileError(errors[0].span, errors[0].message)
    if len(parsed.documents) > 1:
        raise YamlFileError(parsed.documents[1].span, "more than one YAML document (AgentV reads one)")
    root = parsed.documents[0].root if parsed.documents else None
    repeated = repeated_key(root)
    if repeated is not None:
        raise YamlFileError(repeated.span, f"the key '{repeated.raw}' appears twice in one mapping (AgentV's YAML "
                                           "parser refuses the file: map keys must be unique)")
    return parsed, root


def agentv_yaml_value(text: str) -> Any:
    """The file's plain value (aliases expanded), as AgentV's `parse` gives it."""
    return to_python(parse_agentv_yaml(text)[1])
