"""`--shard i/n`: which share of a run's cells this process runs, and the manifest a shard run leaves.

The rule (stable on every machine, for a given n): an item — a Weval prompt, an AgentV test — goes to
shard `1 + blake2b-64(its id, UTF-8) mod n`, the first 8 bytes of the digest read big-endian. All
cells of an item (every model, temperature, system prompt or target) go with it, because they share
work that must happen once: key-point extraction and the embedding similarities of a prompt, a test's
trials. The share depends on nothing but the id and n: not on the order of the file, the other items,
the selection or the platform, so a prompt added to a blueprint moves no other prompt to another shard.
A shard may hold no item at all (more shards than items); it still runs, writes empty results and
its manifest, so `evalspec merge` knows it was not lost.

A finished shard run writes `<results base>.shard.json` beside its results file (`merge.py` reads it):
the format, the shard, the results file's name, every item of the whole plan in order with a digest
of the sources the plan came from (so shards of different files, versions or models cannot be
merged), and the models.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ...jsonio import dumps_bytes
from ..write.files import write_atomic

MANIFEST_SUFFIX = ".shard.json"
MANIFEST_VERSION = 1
_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
MAX_SHARDS = 10_000


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def suffix(self) -> str:
        """What a shard's file names carry after the run label: `.shard-2-of-3`."""
        return f".shard-{self.index}-of-{self.count}"

    def holds(self, item_id: str) -> bool:
        return shard_of(item_id, self.count) == self.index


def shard_of(item_id: str, count: int) -> int:
    """The shard (1-based) an item belongs to among `count`."""
    digest = hashlib.blake2b(item_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count + 1


def parse_shard(text: str) -> Shard:
    """`2/3` → Shard(2, 3). Raises ValueError with a message for the command line."""
    m = _SPEC.fullmatch(text)
    if not m:
        raise ValueError(f"--shard wants I/N (e.g. 2/3), got {text!r}")
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1 or count > MAX_SHARDS:
        raise ValueError(f"--shard {text}: N must be between 1 and {MAX_SHARDS:,}")
    if not 1 <= index <= count:
        raise ValueError(f"--shard {text}: I must be between 1 and N ({count})")
    return Shard(index, count)


def source_digest(text: str, dependencies: Any, base: Path | None) -> str:
    """A digest of the eval file's text and of every file its check read (AgentV tests files, targets),
    named relative to the eval file's folder: the same sources give the same digest on any machine."""
    h = hashlib.blake2b(digest_size=16)
    h.update(text.encode("utf-8", "surrogatepass"))
    for dep in sorted(Path(d) for d in dependencies or ()):
        try:
            data = dep.read_bytes() if dep.is_file() else None
        except OSError:
            data = None
        if data is None:
            continue
        try:
            name = str(dep.resolve().relative_to(base.resolve())) if base is not None else dep.name
        except ValueError:
            name = dep.name
        h.update(b"\0" + name.encode("utf-8", "surrogatepass") + b"\0")
        h.update(hashlib.blake2b(data, digest_size=16).digest())
    return h.hexdigest()


def manifest_path(results: Path) -> Path:
    """`x_comparison.json` → `x_comparison.shard.json`; `x.jsonl` → `x.shard.json`."""
    name = results.name
    for ext in (".json", ".jsonl"):
        if name.endswith(ext):
            name = name[: -len(ext)]
            break
    return results.with_name(name + MANIFEST_SUFFIX)


class ShardedPlan(Protocol):
    """What a manifest reads of a plan (WevalPlan, AgentvPlan)."""

    @property
    def kind(self) -> str: ...
    @property
    def shard(self) -> Shard | None: ...
    @property
    def path(self) -> Path: ...
    @property
    def source_digest(self) -> str: ...
    @property
    def run_label(self) -> str: ...
    @property
    def output_folder_parts(self) -> tuple[str, ...]: ...
    @property
    def all_items(self) -> list[str]: ...


def write_manifest(plan: ShardedPlan, results: Path, *, timestamp: str, models: list[str],
                   effective_models: Sequence[str] = (), eval_methods: Sequence[str] = ()) -> Path:
    """The manifest of a finished shard run, beside its results file. `models`: a blueprint's models or
    a suite's targets; `effective_models` and `eval_methods`: a blueprint's."""
    shard = plan.shard
    assert shard is not None
    data = {
        "evalspec_shard": MANIFEST_VERSION,
        "format": plan.kind,
        "shard": {"index": shard.index, "count": shard.count},
        "results": results.name,
        "timestamp": timestamp,
        "file": Path(plan.path).name,
        "source": plan.source_digest,
        "run_label": plan.run_label,
        "output_folder": list(plan.output_folder_parts),
        "models": list(models),
        "effective_models": list(effective_models),
        "eval_methods": list(eval_methods),
        "items": list(plan.all_items),
        "shard_items": [i for i in plan.all_items if shard.holds(i)],
    }
    path = manifest_path(results)
    write_atomic(path, dumps_bytes(data))
    return path
