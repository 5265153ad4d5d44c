"""The blank lines holding a tab that AgentV's YAML parser refuses, as errors of an AgentV file.

evalspec reads a YAML text as js-yaml (Weval's parser) does (yaml_feed.py): a blank line holding a tab is a
blank line. AgentV's `yaml` package (2.8.2) throws on one inside a multi-line scalar or after a block
scalar's content, before the indentation there (source.tab_lines_agentv_refuses), so its loader refuses
the file: an eval file, a tests file or a targets file."""

from __future__ import annotations

from collections.abc import Sequence

from ..findings import Findings, Span
from ..source import tab_lines_agentv_refuses

MESSAGE = ("AgentV's YAML parser refuses this line: a tab before the indentation of the text around it (the "
           "yaml package's BAD_INDENT), so AgentV cannot load the file; Weval's parser reads it as a blank "
           "line. Remove the tab, or indent it with spaces.")


def tab_line_errors(text: str, lines: Sequence[str], out: Findings | None = None) -> Findings:
    """A `yaml-syntax` error at each such line of `text` (`lines`: its lines), added to `out`."""
    out = out if out is not None else Findings()
    if "\t" in text:
        for n in tab_lines_agentv_refuses(text):
            out.error("yaml-syntax", Span(n, 0, n, len(lines[n])), MESSAGE)
    return out
