"""The public corpus: every regex is judged as JavaScript judges it, and every `$js` script runs."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from evalspec.scoring.js_regex import regex_findings
from evalspec.scoring.weval_points import PointContext, evaluate_point

from .test_js_regex import js_compiles

_SINGLE = {"matches", "imatches", "match", "imatch"}
_LISTS = {"matches_all_of", "imatches_all_of", "match_all_of", "imatch_all_of"}
_N_OF = {"matches_at_least_n_of", "imatches_at_least_n_of", "match_at_least_n_of", "imatch_at_least_n_of"}


def _collect(node: Any, where: str, out: list[tuple[str, str, str]]) -> None:
    """(pattern, flags, file) for Weval `$matches…` points and AgentV `type: regex` assertions."""
    if isinstance(node, dict):
        if node.get("type") == "regex" and isinstance(node.get("value"), str):
            out.append((node["value"], node.get("flags") or "", where))
        for key, value in node.items():
            name = key.lstrip("$").removeprefix("not_") if isinstance(key, str) else ""
            flags = "i" if name.startswith("i") else ""
            if name in _SINGLE and isinstance(value, str):
                out.append((value, flags, where))
            elif name in _LISTS and isinstance(value, list):
                out += [(p, flags, where) for p in value if isinstance(p, str)]
            elif name in _N_OF and isinstance(value, list) and len(value) == 2 and isinstance(value[1], list):
                out += [(p, flags, where) for p in value[1] if isinstance(p, str)]
            _collect(value, where, out)
    elif isinstance(node, list):
        for item in node:
            _collect(item, where, out)


@lru_cache(maxsize=1)  # both tests read the same files
def _documents(corpus: Path) -> list[tuple[str, Any]]:
    documents = []
    for path in sorted(corpus.rglob("*")):
        if path.suffix in (".yml", ".yaml"):
            try:
                loaded = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
            except yaml.YAMLError:
                continue  # broken files are the checker's business, not this test's
            documents += [(str(path.relative_to(corpus)), document) for document in loaded]
    return documents


def _scripts(node: Any, out: list[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("$js", "$expr") and isinstance(value, str):
                out.append(value)
            _scripts(value, out)
    elif isinstance(node, list):
        for item in node:
            _scripts(item, out)


def test_corpus_regexes_agree_with_javascript(corpus: Path) -> None:
    found: list[tuple[str, str, str]] = []
    for where, document in _documents(corpus):
        _collect(document, where, found)
    unique = list(dict.fromkeys(found))
    assert len(unique) > 100  # the corpus really was read

    disagreements, invalid = [], []
    for pattern, flags, where in unique:
        errors = [p for p in regex_findings(pattern, flags) if p.severity == "error"]
        if (not errors) != js_compiles(pattern, flags):
            disagreements.append((pattern, flags, where))
        elif errors:
            invalid.append(pattern)
    assert disagreements == []
    # The corpus's only patterns JavaScript rejects: Perl code blocks in a tool-use blueprint.
    assert sorted(invalid) == ["\\b(??)", "\\b(??{(312*49)-777})"]


def test_corpus_js_scripts_run(corpus: Path) -> None:
    scripts: list[str] = []
    for _, document in _documents(corpus):
        _scripts(document, scripts)
    assert len(scripts) >= 10
    ctx = PointContext(messages=[{"role": "user", "content": "Pick one."}], model_id="openai:gpt-4o", prompt_id="p")
    response = "I choose B.\n1. Amsterdam\n2. Berlin\nSCORE=75"
    results = [evaluate_point("js", script, response, ctx) for script in scripts]
    assert [r.error for r in results if r.error] == []
    assert all(0.0 <= r.score <= 1.0 for r in results)  # type: ignore[operator]
