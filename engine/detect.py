"""Which format a file is in: a Weval blueprint, an AgentV eval file, an AgentV targets file, or none.

Explicit markers win (a first-line `# evalspec: weval|agentv|none` comment, AgentV's `$schema`), then
the usual names, then content. Content detection needs strong signals, so unrelated YAML (CI
workflows, compose files, Kubernetes manifests) is never mistaken for an eval file.
"""

from __future__ import annotations

import re
from enum import StrEnum
from itertools import pairwise
from pathlib import PurePath

from .source import Mapping, Node, ParsedFile, Scalar, Sequence, is_str


class FileKind(StrEnum):
    WEVAL = "weval"
    AGENTV = "agentv"
    AGENTV_TARGETS = "agentv-targets"
    NONE = "none"


_MARKER = re.compile(r"#\s*evalspec\s*:\s*(weval|agentv|none)\b", re.I)
_WEVAL_SUFFIXES = (".civic.yml", ".civic.yaml", ".weval.yml", ".weval.yaml")
_PROMPT_KEYS = ("prompt", "promptText", "messages")
_RUBRIC_KEYS = ("should", "should_not", "ideal", "idealResponse", "points", "expect", "expects", "expectations")
_HEADER_KEYS = ("models", "title", "configTitle", "evaluationConfig", "point_defs", "temperatures", "systems")
_TEST_KEYS = ("criteria", "expected_output", "expected_messages", "assert", "input_messages", "rubrics",
              "expected_outcome", "evaluators")


def marker_kind(text: str) -> FileKind | None:
    """A `# evalspec: …` marker on the first line."""
    end = text.find("\n")  # the first line alone: splitting or stripping the text would copy all of it
    first = (text if end < 0 else text[:end]).lstrip("\ufeff")
    m = _MARKER.search(first)
    return FileKind(m.group(1).lower()) if m else None


def kind_from_name(path: str | PurePath | None) -> FileKind | None:
    if path is None:
        return None
    p = PurePath(path)
    name = p.name
    lower = name.lower()
    if lower.endswith((".eval.yaml", ".eval.yml")) or name in ("EVAL.yaml", "EVAL.yml", "eval.yaml", "eval.yml"):
        return FileKind.AGENTV
    if name in ("targets.yaml", "targets.yml") and ".agentv" in p.parts:
        return FileKind.AGENTV_TARGETS
    if lower.endswith(_WEVAL_SUFFIXES):
        return FileKind.WEVAL
    if _is_results(p):
        return FileKind.NONE
    if "blueprints" in p.parts[:-1] and lower.endswith((".yml", ".yaml", ".json")):
        return FileKind.WEVAL
    return None


def _is_results(p: PurePath) -> bool:
    """A run's results, not a blueprint: Weval writes them under `<output>/live/blueprints/<id>/`
    (the comparison file, its artefact folder), which the `blueprints` folder rule would take in."""
    parts = p.parts[:-1]
    return p.name.endswith("_comparison.json") or any(
        a == "live" and b == "blueprints" for a, b in pairwise(parts))


def detect(text: str, path: str | PurePath | None, parsed: ParsedFile | None) -> FileKind:
    kind = marker_kind(text)
    if kind is not None:
        return kind
    root = parsed.documents[0].root if parsed is not None and parsed.documents else None
    if isinstance(root, Mapping):
        schema = root.get("$schema")
        if is_str(schema):
            value = str(schema.value)
            if value.startswith("agentv-eval"):
                return FileKind.AGENTV
            if value.startswith("agentv-targets"):
                return FileKind.AGENTV_TARGETS
            if value.startswith("agentv-"):
                return FileKind.NONE
    if path is not None and PurePath(path).suffix.lower() in DATASET_SUFFIXES:
        # A tests file (dataset) on its own: AgentV when its content looks like tests.
        return FileKind.AGENTV if looks_like_dataset(text, PurePath(path).suffix.lower()) else FileKind.NONE
    kind = kind_from_name(path)
    if kind is not None:
        return kind
    if parsed is None:
        return FileKind.NONE
    return kind_from_content(parsed)


DATASET_SUFFIXES = (".jsonl", ".csv")
_DATASET_LINES = 20  # enough to recognise a dataset, cheap on a 10 MB one


def looks_like_dataset(text: str, suffix: str) -> bool:
    """An AgentV tests file read alone: JSON lines with a test's fields, or a CSV whose header row names
    `input` (and usually `id`). One recognisable line is enough: the others may be the broken ones."""
    from .jsonio import loads  # a line nested 5,000 deep is not a test (the standard parser recursed out)

    lines = [line for line in text.splitlines()[:_DATASET_LINES * 5] if line.strip()][:_DATASET_LINES]
    if suffix == ".csv":
        header = [c.strip().strip('"').lower() for c in lines[0].split(",")] if lines else []
        return "input" in header and ("id" in header or any(k in header for k in ("criteria", "expected_output")))
    for line in lines:
        try:
            value = loads(line)
        except ValueError:  # a broken line that is plainly a test still makes it a tests file (invalid-jsonl)
            if _broken_test_line(line):
                return True
            continue
        if isinstance(value, dict) and ("input" in value or "input_messages" in value) and (
                "id" in value or any(k in value for k in _TEST_KEYS)):
            return True
    return False


_INPUT_KEY = re.compile(r'"input(?:_messages)?"\s*:')


def _broken_test_line(line: str) -> bool:
    """A JSON line that does not parse but is written as a test: an object with an `"input":` key and an
    `"id":` or another test key. A tests file whose only line is broken is still one (check reports the
    line), as it is to an editor that saw it valid before."""
    if not line.lstrip().startswith("{") or _INPUT_KEY.search(line) is None:
        return False
    return any(re.search(rf'"{k}"\s*:', line) for k in ("id", *_TEST_KEYS))


def kind_from_content(parsed: ParsedFile) -> FileKind:
    roots = [d.root for d in parsed.documents if d.root is not None]
    if not roots:
        return FileKind.NONE
    first = roots[0]
    if isinstance(first, Mapping):
        tests = first.get("tests") or first.get("eval_cases") or first.get("evalcases")
        if isinstance(tests, Sequence) and any(_looks_like_test(t) for t in tests.items):
            return FileKind.AGENTV
        if is_str(tests) and str(tests.value).endswith((".yaml", ".yml", ".jsonl", ".csv")):
            return FileKind.AGENTV
        targets = first.get("targets")
        if isinstance(targets, Sequence) and targets.items and all(
                isinstance(t, Mapping) and t.has("provider") and t.has("name") for t in targets.items):
            return FileKind.AGENTV_TARGETS
    prompts = _prompt_candidates(roots)
    if any(_looks_like_prompt(p) for p in prompts):
        return FileKind.WEVAL
    if isinstance(first, Mapping) and len(roots) > 1 and _looks_like_header(first):
        return FileKind.WEVAL
    return FileKind.NONE


def _looks_like_test(node: object) -> bool:
    return isinstance(node, Mapping) and node.has("id") and (node.has("input") or node.has("input_messages")) \
        and any(node.has(k) for k in _TEST_KEYS)


def _looks_like_prompt(node: object) -> bool:
    """A prompt carries its text and a rubric or ideal: `prompt` alone is too common a key."""
    if not isinstance(node, Mapping):
        return False
    return any(node.has(k) for k in _PROMPT_KEYS) and any(node.has(k) for k in _RUBRIC_KEYS)


def _looks_like_header(node: Mapping) -> bool:
    models = node.get("models")
    return isinstance(models, Sequence) and bool(models.items) and all(
        isinstance(m, Scalar) and isinstance(m.value, str) and (":" in m.value or m.value.isupper())
        for m in models.items)


def _prompt_candidates(roots: list[Node]) -> list[object]:
    out: list[object] = []
    for r in roots[:50]:
        if isinstance(r, Sequence):
            out += r.items[:50]
        elif isinstance(r, Mapping):
            out.append(r)
            prompts = r.get("prompts")
            if isinstance(prompts, Sequence):
                out += prompts.items[:50]
    return out
