"""The docs site's reference pages, generated from the registry: point functions, assertion types, config
fields and one page per finding code.

`pages()` returns {path below docs/: Markdown}, from the registry as it is (entries a test registers
included); scripts/mkdocs_hooks.py adds them to the MkDocs build (nothing
generated is committed), tests/docs/test_docs_pages.py checks that every code, function and type has its
page. `python scripts/gen_docs.py OUT` writes them to OUT to read them without MkDocs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from evalspec.finding_docs import page
from evalspec.registry import agentv, weval
from evalspec.registry.agentv_assertions import ASSERTION_TYPES, COMMON_FIELDS
from evalspec.registry.fields import FieldSpec, ObjectSpec
from evalspec.registry.finding_codes import CODE_LIST
from evalspec.registry.weval_functions import POINT_FUNCTIONS


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _types(f: FieldSpec) -> str:
    out = " or ".join(f.types)
    if f.enum:
        out = " \\| ".join(f"`{e}`" for e in f.enum)
    return out


def _field_rows(fields: tuple[FieldSpec, ...]) -> list[str]:
    rows = ["| field | type | description |", "|---|---|---|"]
    for f in fields:
        name = f"`{f.name}`" + (" (required)" if f.required else "")
        extra = []
        if f.aliases:
            extra.append("also spelt " + ", ".join(f"`{a}`" for a in f.aliases))
        if f.deprecated_aliases:
            extra.append("deprecated spelling " + ", ".join(f"`{a}`" for a in f.deprecated_aliases))
        if f.deprecated:
            extra.append(f"deprecated: {f.deprecated}")
        if f.default is not None:
            extra.append(f"default `{f.default}`")
        doc = f.doc + (" (" + "; ".join(extra) + ")" if extra else "")
        rows.append(f"| {name} | {_cell(_types(f))} | {_cell(doc)} |")
    return rows


def _object(spec: ObjectSpec, level: str = "##") -> list[str]:
    lines = [f"{level} {spec.title} (`{spec.name}`)", "", spec.doc, ""]
    if spec.open:
        lines += ["Any key is accepted.", ""]
    if spec.fields:
        lines += [*_field_rows(spec.fields), ""]
    return lines


def config_page() -> str:
    lines = ["# Config fields", "",
             "Every object and field evalspec knows, as completion, hover, the checker and the JSON Schemas read "
             "them (generated from `engine/registry/`).", "", "## Weval blueprints", ""]
    for spec in weval.REGISTRY.objects.values():
        lines += _object(spec, "###")
    lines += ["## AgentV eval files and targets", ""]
    for spec in agentv.REGISTRY.objects.values():
        if spec.name.startswith("assertion:"):
            continue
        lines += _object(spec, "###")
    return "\n".join(lines).rstrip() + "\n"


def functions_page() -> str:
    lines = ["# Weval point functions", "",
             "A point `- $name: argument` under `should` (or `should_not`) runs a function on the model's "
             "answer. Binary functions score 0 or 1; graded ones a number in [0, 1]. The negated forms (`$not_…`) "
             "have their own entries. Generated from "
             "`engine/registry/weval_functions.py`.", "",
             "| function | argument | scores |", "|---|---|---|"]
    for f in POINT_FUNCTIONS.values():
        lines.append(f"| [`${f.name}`](#{f.name.replace('_', '_')}) | `{_cell(f.arg.value)}` | "
                     f"{'graded' if f.graded else 'binary'} |")
    lines.append("")
    for f in POINT_FUNCTIONS.values():
        lines += [f"## ${f.name} {{#{f.name}}}", "", f.doc, "",
                  f"Argument: `{f.arg.value}` · {'graded (0–1)' if f.graded else 'binary (0 or 1)'}"
                  + (" · runs only during `evalspec run`" if f.runs_code else ""), ""]
        if f.aliases:
            lines += ["Also spelt " + ", ".join(f"`${a}`" for a in f.aliases) + ".", ""]
        lines += ["```yaml", "should:", f"  - {f.example}", "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def assertions_page() -> str:
    lines = ["# AgentV assertion types", "",
             "An item of a test's `assert` list. Kebab-case and snake_case spell the same type. Generated from "
             "`engine/registry/agentv_assertions.py`; a type evalspec does not score yet is reported *not scored* "
             "by a run, never passed.", "", "## Fields every assertion accepts", "", *_field_rows(COMMON_FIELDS), "",
             "| type | kind | scored by `evalspec run` |", "|---|---|---|"]
    for a in ASSERTION_TYPES.values():
        lines.append(f"| [`{a.name}`](#{a.name}) | {a.kind} | {'yes' if a.runnable else 'not yet (reported not scored)'} |")
    lines.append("")
    for a in ASSERTION_TYPES.values():
        lines += [f"## {a.name} {{#{a.name}}}", "", a.doc, "", f"**Scores:** {a.scoring}", ""]
        if a.snake != a.name:
            lines += [f"Also spelt `{a.snake}`.", ""]
        if a.fields:
            lines += [*_field_rows(a.fields), ""]
        lines += ["```yaml", "assert:", *("  " + line for line in a.example.splitlines()), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def codes_index() -> str:
    lines = ["# Finding codes", "",
             "Every finding `evalspec check` and the editor report has a code, and each code a page: why it "
             "matters, an example (checked when these pages are built) and the fix. `evalspec rule CODE` prints "
             "the page in the terminal; in the editor the code in a diagnostic links to it.", "",
             "| code | severity | what |", "|---|---|---|"]
    for c in sorted(CODE_LIST, key=lambda c: c.code):
        lines.append(f"| [`{c.code}`]({c.code}.md) | {c.severity} | {_cell(c.title)} |")
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    out = {"reference/config.md": config_page(), "reference/functions.md": functions_page(),
           "reference/assertions.md": assertions_page(), "codes/index.md": codes_index()}
    for c in CODE_LIST:
        out[f"codes/{c.code}.md"] = page(c)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python scripts/gen_docs.py OUT_DIR", file=sys.stderr)
        return 2
    root = Path(argv[0])
    for rel, text in pages().items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"{len(pages())} pages written to {root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
