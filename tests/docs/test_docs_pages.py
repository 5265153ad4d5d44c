"""The docs site's reference has a page (or a section) for every finding code, point function, assertion
type and config field the registry declares: a code, function or type without one fails here. The site
itself is built with `mkdocs build --strict` by .ci/run (broken links fail there)."""

from __future__ import annotations

import sys
from pathlib import Path

from evalspec.registry import agentv, weval
from evalspec.registry.agentv_assertions import ASSERTION_LIST
from evalspec.registry.finding_codes import CODES
from evalspec.registry.weval_functions import POINT_FUNCTIONS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from gen_docs import pages  # noqa: E402

PAGES = pages()


def test_every_finding_code_has_its_page_listed_in_the_index() -> None:
    index = PAGES["codes/index.md"]
    for code, entry in CODES.items():
        text = PAGES.get(f"codes/{code}.md")
        assert text is not None, f"no page for {code}"
        assert text.startswith(f"# {code}\n") and entry.why in text
        assert f"[`{code}`]({code}.md)" in index
    assert len([p for p in PAGES if p.startswith("codes/")]) == len(CODES) + 1


def test_every_point_function_has_a_section() -> None:
    text = PAGES["reference/functions.md"]
    for name, fn in POINT_FUNCTIONS.items():
        assert f"## ${name} {{#{name}}}" in text, name
        assert fn.example in text


def test_every_assertion_type_has_a_section() -> None:
    text = PAGES["reference/assertions.md"]
    for a in ASSERTION_LIST:
        assert f"## {a.name} {{#{a.name}}}" in text, a.name
        assert a.scoring in text


def test_every_config_field_is_listed() -> None:
    text = PAGES["reference/config.md"]
    for registry in (weval.REGISTRY, agentv.REGISTRY):
        for spec in registry.objects.values():
            if spec.name.startswith("assertion:"):
                continue
            assert f"(`{spec.name}`)" in text, spec.name
            for f in spec.fields:
                assert f"| `{f.name}`" in text, f"{spec.name}.{f.name}"


def test_the_nav_names_only_pages_that_exist() -> None:
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def leaves(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, list):
            return [x for item in node for x in leaves(item)]
        if isinstance(node, dict):
            return [x for value in node.values() for x in leaves(value)]
        return []

    for page in leaves(config["nav"]):
        assert (ROOT / "docs" / page).is_file() or page in PAGES, page
