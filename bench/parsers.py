#!/usr/bin/env python3
"""Why libyaml events: parser speed on the generated 50,000-line blueprint, and agreement on the corpus.

Compares ruamel.yaml (round-trip and safe/C compose), PyYAML's C composer, and evalspec's own composer
over libyaml events (engine/source.py). On every corpus file, evalspec's tree must hold the same values
as ruamel.yaml's YAML 1.2 load, and the same node positions as PyYAML's C composer.
usage: python bench/parsers.py
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML

from evalspec.source import Mapping, Sequence, parse_yaml, to_python

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


def keys_as_text(value: Any) -> Any:
    """Mapping keys as JSON writes them (ruamel keeps `0:` an int; evalspec, like JSON, a string)."""
    if isinstance(value, dict):
        return {str(k): keys_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [keys_as_text(v) for v in value]
    return value


def seconds(fn: Any, text: str) -> float:
    start = time.perf_counter()
    fn(text)
    return round(time.perf_counter() - start, 3)


def positions_ours(node: Any, out: list[tuple[int, int]]) -> None:
    out.append((node.span.start_line, node.span.start_col))
    if isinstance(node, Mapping):
        for k, v in node.pairs:
            positions_ours(k, out)
            positions_ours(v, out)
    elif isinstance(node, Sequence):
        for i in node.items:
            positions_ours(i, out)


def positions_pyyaml(node: Any, out: list[tuple[int, int]]) -> None:
    out.append((node.start_mark.line, node.start_mark.column))
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            positions_pyyaml(k, out)
            positions_pyyaml(v, out)
    elif isinstance(node, yaml.SequenceNode):
        for i in node.value:
            positions_pyyaml(i, out)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "bp50k.yml"
        subprocess.run([sys.executable, str(SHARED / "bench" / "gen_blueprint.py"), "5000", str(big)], check=True)
        text = big.read_text()
    rt, safe = YAML(typ="rt"), YAML(typ="safe")
    speed = {
        "ruamel_roundtrip_load": seconds(lambda t: list(rt.load_all(io.StringIO(t))), text),
        "ruamel_safe_compose": seconds(lambda t: list(safe.compose_all(io.StringIO(t))), text),
        "pyyaml_c_compose": seconds(lambda t: list(yaml.compose_all(t, Loader=yaml.CSafeLoader)), text),
        "evalspec_events": seconds(parse_yaml, text),
    }
    files = sorted(p for p in (SHARED / "corpus").rglob("*") if p.suffix in (".yml", ".yaml"))
    same_values = same_positions = compared = 0
    differences: list[str] = []
    for path in files:
        source = path.read_text(encoding="utf-8")
        try:
            reference = keys_as_text(list(safe.load_all(source)))
            composed = list(yaml.compose_all(source, Loader=yaml.CSafeLoader))
        except Exception:
            assert parse_yaml(source).findings, f"{path} fails elsewhere but not in evalspec"
            continue
        ours = parse_yaml(source)
        compared += 1
        values = [to_python(d.root) for d in ours.documents]
        if json.dumps(values, sort_keys=True, default=str) == json.dumps(reference, sort_keys=True, default=str):
            same_values += 1
        else:
            differences.append(path.name)
        a: list[tuple[int, int]] = []
        b: list[tuple[int, int]] = []
        for d in ours.documents:
            if d.root is not None:
                positions_ours(d.root, a)
        for n in composed:
            if n is not None and not (isinstance(n, yaml.ScalarNode) and n.value == "" and n.tag.endswith("null")):
                positions_pyyaml(n, b)
        same_positions += a == b
    print(json.dumps({"blueprint_50k_seconds": speed, "corpus_files": compared,
                      "same_values_as_ruamel_yaml12": same_values, "same_positions_as_pyyaml": same_positions,
                      "value_differences": differences}))


if __name__ == "__main__":
    main()
