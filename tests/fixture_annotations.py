"""Expected findings written inside fixture files, next to the lines they belong to.

    - shuld: ["x"]
    # ^^^^^ warning[unknown-key]: did you mean 'should'

Carets sit under the exact columns where the finding starts on the nearest line above that is not an
annotation. `# <- error[code]: text` names only the line (for findings at column 0). The text after
the colon must occur in the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CARETS = re.compile(r"^\s*#(\s*)(\^+)\s+(error|warning|info|hint)\[([\w-]+)\](?::\s*(.*))?$")
_ARROW = re.compile(r"^\s*#\s*<-\s+(error|warning|info|hint)\[([\w-]+)\](?::\s*(.*))?$")


@dataclass(frozen=True)
class Expected:
    line: int  # 0-based
    col: int | None
    severity: str
    code: str
    text: str
    annotation_line: int

    def describe(self) -> str:
        where = f"{self.line + 1}:{self.col + 1}" if self.col is not None else f"{self.line + 1}"
        return f"{where} {self.severity}[{self.code}]: {self.text}"


def read_annotations(text: str) -> list[Expected]:
    out: list[Expected] = []
    target = -1
    for i, line in enumerate(text.split("\n")):
        m = _CARETS.match(line)
        a = _ARROW.match(line) if m is None else None
        if m is None and a is None:
            target = i
            continue
        if target < 0:
            raise ValueError(f"annotation on line {i + 1} has no line above it")
        if m is not None:
            out.append(Expected(target, line.index("^"), m.group(3), m.group(4), (m.group(5) or "").strip(), i))
        else:
            assert a is not None
            out.append(Expected(target, None, a.group(1), a.group(2), (a.group(3) or "").strip(), i))
    return out
