"""`${{ VAR }}` interpolation over an eval file's string values, as AgentV does it.

AgentV replaces every `${{ NAME }}` in every string value (not keys) from the environment, and an
unset variable becomes an empty string. We do the same, and report each unset variable as an info
finding on the exact `${{ … }}` text, so a silently empty criteria or prompt is visible.
"""

from __future__ import annotations

import re
from collections.abc import Mapping as MappingABC
from typing import Any

from ..findings import Findings, Span
from ..source import Mapping, Node, Scalar, Sequence, is_lazy, to_python
from ..text_lines import Lines

PATTERN = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
MARKER = "${{"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
# Fields where a secret is expected (a target's api_key, a header): no warning there.
_CREDENTIAL_KEY = re.compile(r"key|token|secret|password|auth|header|credential", re.I)


# What interpolation may make of one value, and of a whole file. A file from anyone chooses how often it
# names a variable: 20,000 `${{ A }}` of a 100 KB variable made a 2 GB string in `check` and in the
# editor (which interpolates as it checks), and a 4 MB file of `${{ PATH }}` would make ~400 MB.
MAX_VALUE_CHARS = 1 << 20
MAX_FILE_CHARS = 32 << 20


def expanded_size(text: str, env: MappingABC[str, str]) -> int:
    """How long `interpolate(text, env)` would be, without building it."""
    if MARKER not in text:
        return len(text)
    size = len(text)
    for m in PATTERN.finditer(text):
        size += len(env.get(m.group(1), "")) - (m.end() - m.start())
    return size


def interpolate(text: str, env: MappingABC[str, str]) -> str:
    """`text` with every `${{ VAR }}` replaced from `env` (unset → empty string)."""
    if MARKER not in text:
        return text
    return PATTERN.sub(lambda m: env.get(m.group(1), ""), text)


class Values:
    """Plain values of nodes with interpolation applied; built once per file by `scan`."""

    def __init__(self, env: MappingABC[str, str]) -> None:
        self.env: MappingABC[str, str] = env  # the analysis's FileSource.env
        self._strings: dict[int, str] = {}  # id(Scalar) -> interpolated value, only where it changed
        self._left = MAX_FILE_CHARS  # what interpolation may still add to this file

    def scan(self, root: Node | None, lines: list[str], out: Findings) -> None:
        """Interpolate every string value under `root`; report unset variables on their `${{ }}`."""
        if root is None:
            return
        stack: list[tuple[Node, bool]] = [(root, False)]
        push, pop = stack.append, stack.pop
        seen: set[int] = set()
        # Every node of the file passes here (a 2,000-test suite: 50,000), so the loop is kept lean: key
        # names repeat, and whether one names a credential field is looked up once per name.
        credential_keys: dict[str, bool] = {}
        while stack:
            node, credential = pop()
            if node.anchor is not None:  # an alias shares its target node (always anchored): report it once
                if id(node) in seen:
                    continue
                seen.add(id(node))
            if isinstance(node, Scalar):
                value = node.value
                if isinstance(value, str) and MARKER in value:
                    size = expanded_size(value, self.env)
                    if size > MAX_VALUE_CHARS or size - len(value) > self._left:
                        out.error("interpolation-too-large", node.span,
                                  f"'${{{{ … }}}}' would make this value {size:,} characters long "
                                  f"(at most {MAX_VALUE_CHARS:,} a value and {MAX_FILE_CHARS:,} added in a file); "
                                  "it is not interpolated.")
                    else:
                        self._left -= max(0, size - len(value))
                        self._strings[id(node)] = interpolate(value, self.env)
                    self._report_unset(node, lines, out)
                    self._secrets(node, out, warn=not credential)
            elif isinstance(node, Mapping):
                # Under a key or header field a secret is where it belongs: no warning below it.
                for k, v in node.pairs:
                    if v is None:
                        continue
                    if credential or not isinstance(k, Scalar):
                        push((v, credential))
                        continue
                    name = k.value if type(k.value) is str else str(k.value)
                    below = credential_keys.get(name)
                    if below is None:
                        below = credential_keys[name] = bool(_CREDENTIAL_KEY.search(name))
                    push((v, below))
            elif isinstance(node, Sequence):
                if is_lazy(node):
                    continue  # a streamed list (a big suite's tests): each item is scanned as it is checked
                stack.extend([(item, credential) for item in node.items])

    def scan_item(self, item: Node, lines: list[str], out: Findings) -> None:
        """`scan` for an item of a streamed list (source.LazyItems: parsed on its own, no anchors in the list,
        so its every value is written on its own lines): nothing to look at when no line of it holds a `$`
        (nor a `\\`, which could escape one into a quoted value)."""
        span = item.span
        start, end = span.start_line, min(span.end_line, len(lines) - 1) + 1
        # its lines in one piece (one slice of a big file's text: text_lines.Lines)
        text = lines.joined(start, end) if type(lines) is Lines else "\n".join(lines[start:end])
        if "$" in text or "\\" in text:
            self.scan(item, lines, out)

    def mark(self) -> int:
        """Where `forget` goes back to: the values interpolated so far."""
        return len(self._strings)

    def forget(self, mark: int) -> None:
        """Drop what was interpolated since `mark`: the values of nodes that are about to go (a streamed
        test's), which are keyed by the nodes' ids, and a later node may be given the same id."""
        if len(self._strings) > mark:
            for key in list(self._strings)[mark:]:
                del self._strings[key]

    def _secrets(self, node: Scalar, out: Findings, *, warn: bool) -> None:
        """A variable named like a secret (…_API_KEY, …TOKEN, …SECRET, …PASSWORD) put into a value: its
        value is masked in everything a run writes or prints (providers/redact.py), and outside a key or
        header field, where it goes to the model and into results, `check` warns."""
        for name in dict.fromkeys(m.group(1) for m in PATTERN.finditer(str(node.value))):
            if not _SECRET_NAME.search(name):
                continue
            value = self.env.get(name)
            if value:
                from ..providers.redact import register_secret

                register_secret(value)
            if warn:
                out.warning("secret-in-input", node.span,
                            f"'${{{{ {name} }}}}' puts a secret into text sent to the model; evalspec masks its value "
                            "(***) in results, journals and output, but the model sees it. Pass secrets to "
                            "targets (api_key, headers), not to inputs.")

    def _report_unset(self, node: Scalar, lines: list[str], out: Findings) -> None:
        s = node.span
        found = False
        for line_no in range(s.start_line, min(s.end_line, len(lines) - 1) + 1):
            text = lines[line_no]
            start = s.start_col if line_no == s.start_line else 0
            end = s.end_col if line_no == s.end_line else len(text)
            for m in PATTERN.finditer(text, start, max(start, end)):
                found = True
                if m.group(1) not in self.env:
                    out.info("unset-variable", Span(line_no, m.start(), line_no, m.end()),
                             f"Environment variable '{m.group(1)}' is not set; AgentV replaces "
                             f"'{m.group(0)}' with an empty string.")
        if not found:  # written with escapes the source search cannot see: report on the value
            for name in dict.fromkeys(m.group(1) for m in PATTERN.finditer(str(node.value))):
                if name not in self.env:
                    out.info("unset-variable", s, f"Environment variable '{name}' is not set; AgentV "
                             "replaces it with an empty string.")

    def str_of(self, node: Node | None) -> str | None:
        """The interpolated string value of a string scalar, else None."""
        if isinstance(node, Scalar) and isinstance(node.value, str):
            return self._strings.get(id(node), node.value)
        return None

    def value(self, node: Node | None) -> Any:
        """The scalar value of a node (interpolated for strings); None for collections."""
        if isinstance(node, Scalar):
            if isinstance(node.value, str):
                return self._strings.get(id(node), node.value)
            return node.value
        return None

    def plain(self, node: Node | None, budget: int = 1_000_000) -> Any:
        """The plain (JSON-like) value of a node with strings interpolated; mapping keys as strings."""
        return to_python(node, budget, scalar=self.value)
