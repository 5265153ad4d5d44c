"""`evalspec merge`: the results of `evalspec run --shard I/N` runs combined into what one run writes.

Each shard run leaves a manifest beside its results (plan/shard.py). Merging checks that the shards belong
together — one format, one N, the same sources, selection, models and evaluation methods, no shard
twice, no item in two shards, no shard with items missing — and then writes the results a single run
of the whole plan writes, byte for byte except the run's time: the Weval comparison file (and its
artefact folder) or the AgentV JSONL, under the same output layout, named with the latest shard's
time. What differs from a single run of the same plan on a deterministic provider:

- Weval: `timestamp` (and the file names that carry it).
- AgentV: each row's `timestamp` and `duration_ms` (and the file name's time).

What the shards paid is merged into the cost file beside the results (cost/cost_file.py): calls, tokens and
dollars added up per role, model and way of sending.

What each shard ran is read from its run database beside the manifest (`<label>.shard-I-of-N.run.db`):
an AgentV shard's rows (`scores`, `not_run`), a Weval shard's comparison object rebuilt from its cells and
its `exports` head (write/weval_rebuild.py). A shard's results file is read only when its database does
not hold its run (one of an evalspec before schema 2, a replay's, one a later run of the label took over).

Every prompt's models, key points, histories and scores come from the shard that ran the prompt;
the overall embedding similarity matrix is recomputed from the per-prompt similarities in the plan's
order, exactly as the runner averages them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..file_source import read_regular_bytes
from ..jsonio import loads
from ..own_files import folder_name
from .plan.shard import MANIFEST_SUFFIX, MANIFEST_VERSION, Shard, manifest_path, shard_of

WEVAL_KEYS = ("configId", "configTitle", "runLabel", "timestamp", "description", "sourceCommitSha",
              "sourceBlueprintFileName", "config", "evalMethodsUsed", "effectiveModels", "modelSystemPrompts",
              "promptIds", "promptContexts", "extractedKeyPoints", "allFinalAssistantResponses",
              "fullConversationHistories", "evaluationResults", "errors", "evalspecCost")
# Keyed by prompt id: each prompt's entry comes from the shard that ran it.
WEVAL_BY_PROMPT = ("promptContexts", "extractedKeyPoints", "allFinalAssistantResponses", "fullConversationHistories",
                   "errors")
# The same in every shard of one plan.
WEVAL_SHARED = ("configId", "configTitle", "runLabel", "description", "sourceCommitSha", "sourceBlueprintFileName",
                "evalMethodsUsed")
SHOWN = 5  # items named in a message; the rest are counted


class MergeError(Exception):
    """Shards that cannot be merged, or unreadable input; the message says which and why."""


@dataclass(frozen=True)
class ShardResult:
    manifest_path: Path
    manifest: dict[str, Any]

    @property
    def shard(self) -> Shard:
        s = self.manifest["shard"]
        return Shard(int(s["index"]), int(s["count"]))

    @property
    def results(self) -> Path:
        return self.manifest_path.with_name(str(self.manifest["results"]))

    @property
    def name(self) -> str:
        return f"shard {self.shard} ({self.manifest_path})"


@dataclass(frozen=True)
class Merged:
    kind: str
    files: list[Path]
    shards: int
    items: int


def find_shards(paths: Sequence[str | Path]) -> list[ShardResult]:
    """The shard manifests the arguments name: a manifest, a results file with its manifest beside it,
    or a folder (every manifest below it). Each manifest once, however often it is named."""
    found: dict[Path, None] = {}
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            inside = sorted(p.rglob(f"*{MANIFEST_SUFFIX}"))
            if not inside:
                raise MergeError(f"{p} holds no shard results (no *{MANIFEST_SUFFIX}: a shard run writes one beside "
                                 "its results when it finishes)")
            found.update(dict.fromkeys(m.resolve() for m in inside))
        elif p.name.endswith(MANIFEST_SUFFIX):
            if not p.is_file():
                raise MergeError(f"no such file: {p}")
            found[p.resolve()] = None
        elif p.is_file():
            m = manifest_path(p)
            if not m.is_file():
                raise MergeError(f"{p} is not the result of a finished shard run: no {m.name} beside it "
                                 "(`evalspec run --shard I/N` writes it when the shard finishes; an interrupted "
                                 "shard is finished with --resume)")
            found[m.resolve()] = None
        else:
            raise MergeError(f"no such file or folder: {p}")
    return [ShardResult(m, _read_manifest(m)) for m in found]


# Shard results come from elsewhere (a CI job's artefacts, a colleague's folder): read as regular files
# only, never past this.
_MAX_SHARD_FILE = 1 << 36


def _read_regular(path: Path) -> bytes:
    """A shard's file, if it is a regular file: a FIFO named like a manifest waited for good, `/dev/zero`
    would have been read until memory ran out. Raises OSError or MergeError."""
    data = read_regular_bytes(path, _MAX_SHARD_FILE)
    if data is None:
        raise MergeError(f"{path} is not a regular file (a folder, a FIFO or a device)")
    return data


def _plain_name(value: Any) -> bool:
    """A name a manifest gives for a file or folder is used as one, below the output folder or beside the
    manifest: only a plain name (no `/`, `\\`, `..`, leading dot or NUL) may be. `output_folder`
    `["..", "..", "x"]` or `/tmp/x` wrote the merged results outside the output folder; `results`
    `../../../etc/passwd` was read."""
    return isinstance(value, str) and "\x00" not in value and folder_name(value) == value


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        data = loads(_read_regular(path))
    except (OSError, ValueError) as exc:
        raise MergeError(f"{path}: cannot read the shard manifest: {exc}") from None
    needed = ("format", "shard", "results", "timestamp", "source", "run_label", "output_folder", "models",
              "items", "shard_items")
    if not isinstance(data, dict) or data.get("evalspec_shard") != MANIFEST_VERSION or any(k not in data for k in needed):
        raise MergeError(f"{path} is not a shard manifest this evalspec reads (version {MANIFEST_VERSION})")
    s = data["shard"]
    if not (isinstance(s, dict) and isinstance(s.get("index"), int) and isinstance(s.get("count"), int)
            and 1 <= s["index"] <= s["count"]):
        raise MergeError(f"{path}: the shard is not I/N")
    if not (isinstance(data["items"], list) and isinstance(data["shard_items"], list)
            and all(isinstance(i, str) for i in data["items"]) and all(isinstance(i, str) for i in data["shard_items"])):
        raise MergeError(f"{path}: the items are not lists of ids")
    folders = data["output_folder"]
    if not (isinstance(folders, list) and folders and all(_plain_name(p) for p in folders)):
        raise MergeError(f"{path}: output_folder is not a list of plain folder names")
    for key in ("results", "run_label", "timestamp"):
        if not _plain_name(data[key]):
            raise MergeError(f"{path}: {key} is not a plain file name")
    return data


def check_together(shards: list[ShardResult]) -> None:
    """Raise MergeError unless the shards are the whole of one plan, each once."""
    if not shards:
        raise MergeError("no shard results given")
    first = shards[0]

    def differ(what: str, key: Any, show: Any = None) -> None:
        values = {repr(key(s)): s for s in shards}
        if len(values) > 1:
            listed = "; ".join(f"{s.name}: {show(s) if show else key(s)}" for s in values.values())
            raise MergeError(f"the shards are of {what}, so they cannot be merged ({listed})")

    differ("different formats", lambda s: s.manifest["format"])
    differ("different shard counts (N)", lambda s: s.shard.count)
    differ("different eval files", lambda s: (s.manifest["file"], s.manifest["source"]),
           lambda s: f"{s.manifest['file']}, sources {str(s.manifest['source'])[:12]}")
    differ("different models", lambda s: s.manifest["models"], lambda s: ", ".join(map(str, s.manifest["models"])))
    differ("different evaluation methods", lambda s: s.manifest.get("eval_methods"),
           lambda s: ", ".join(s.manifest.get("eval_methods") or ()) or "none")
    differ("different selections (--prompt / --test)", lambda s: s.manifest["items"],
           lambda s: f"{len(s.manifest['items']):,} items")
    if first.manifest["format"] == "weval":
        differ("different runs (run labels)", lambda s: s.manifest["run_label"])
    by_index: dict[int, ShardResult] = {}
    for s in shards:
        if s.shard.index in by_index:
            raise MergeError(f"shard {s.shard} is given twice: {by_index[s.shard.index].manifest_path} and "
                             f"{s.manifest_path}")
        by_index[s.shard.index] = s
    owner: dict[str, ShardResult] = {}
    for s in shards:
        for item in s.manifest["shard_items"]:
            other = owner.get(item)
            if other is not None:
                raise MergeError(f"the shards overlap: {item!r} was run by {other.name} and by {s.name}")
            owner[item] = s
    n = first.shard.count
    missing: dict[int, list[str]] = {}
    for item in first.manifest["items"]:
        if item not in owner:
            missing.setdefault(shard_of(str(item), n), []).append(str(item))
    if missing:
        parts = []
        for index in sorted(missing):
            ids = missing[index]
            more = f", … ({len(ids):,} in all)" if len(ids) > SHOWN else ""
            given = f" (given: {by_index[index].manifest_path}, which does not hold them)" if index in by_index else ""
            parts.append(f"shard {index}/{n}{given}: {', '.join(ids[:SHOWN])}{more}")
        raise MergeError("shards are missing, so the merge would not be the whole run: " + "; ".join(parts))


def merge(paths: Sequence[str | Path], output: Path) -> Merged:
    """Merge the shards the paths name into `output` (the run's results folder). Raises MergeError."""
    shards = find_shards(paths)
    check_together(shards)
    shards.sort(key=lambda s: s.shard.index)
    first = shards[0].manifest
    folder = output.joinpath(*[str(p) for p in first["output_folder"]])
    stamp = max(str(s.manifest["timestamp"]) for s in shards)
    if first["format"] not in ("weval", "agentv"):
        raise MergeError(f"{shards[0].manifest_path}: unknown format {first['format']!r}")
    # The lock a run of this label takes in this folder: two merges of the same shards into one output
    # folder (or a merge beside a run of the label) cleared each other's half-written artefact folder and
    # failed with "No such file or directory"; the second is now told who holds it.
    from .journal import database as db

    label = str(first["run_label"])
    path = db.db_path(folder, label)
    created = not os.path.lexists(path)
    try:
        conn = db.connect(path, create=True)
    except (OSError, db.NotADatabase) as exc:
        raise MergeError(f"cannot take the lock of run {label} in {path}: {exc}") from None
    try:
        db.acquire(conn, path, label)
    except db.RunLocked as exc:
        conn.close()
        raise MergeError(str(exc).replace(f"run {label} is already running", f"run {label} is being written")
                         .replace("; a run that was stopped continues with --resume", "")) from None
    # One a merge killed before its end left (no run in it) is the merge's too: removed when done, not kept
    created = created or conn.execute("SELECT 1 FROM run LIMIT 1").fetchone() is None
    try:
        files = _merge_weval(shards, folder, stamp) if first["format"] == "weval" else \
            _merge_agentv(shards, folder, stamp)
    finally:
        db.release(conn, path)
        conn.close()
        if created:  # the lock's database, made for the merge alone
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.unlink(f"{path}{suffix}")
    return Merged(kind=str(first["format"]), files=files, shards=len(shards), items=len(first["items"]))


def _read_json(path: Path) -> Any:
    try:
        return loads(_read_regular(path))
    except OSError as exc:
        raise MergeError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise MergeError(f"{path} is not valid JSON: {exc}") from None


# --- Weval --------------------------------------------------------------------------------------------
def _merge_weval(shards: list[ShardResult], folder: Path, stamp: str) -> list[Path]:
    from .write.weval_results import write_comparison

    files = [_weval_comparison(s) for s in shards]
    for s, data in zip(shards, files, strict=True):
        if not isinstance(data, dict) or "promptIds" not in data or not isinstance(data.get("config"), dict) \
                or not isinstance(data["config"].get("prompts") or [], list) \
                or not all(isinstance(p, dict) for p in data["config"].get("prompts") or []):
            raise MergeError(f"{s.results} is not a Weval comparison file")
        unknown = [k for k in data if k not in WEVAL_KEYS]
        if unknown:
            raise MergeError(f"{s.results}: cannot merge the field(s) {', '.join(unknown)} (written by another "
                             "version of evalspec?)")
    items = [str(i) for i in shards[0].manifest["items"]]
    order = {str(m): n for n, m in enumerate(shards[0].manifest.get("effective_models") or [])}
    owner = {str(i): n for n, s in enumerate(shards) for i in s.manifest["shard_items"]}

    for key in WEVAL_SHARED:
        _same(shards, files, key, lambda d, k=key: d.get(k))
    _same(shards, files, "config", lambda d: {k: v for k, v in d["config"].items() if k != "prompts"})

    def by_prompt(get: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for item in items:
            row = get(files[owner[item]])
            if isinstance(row, dict) and item in row:
                out[item] = row[item]
        return out

    merged: dict[str, Any] = {}
    head = files[0]
    for key in WEVAL_KEYS:
        if key == "timestamp":
            merged[key] = stamp
        elif key in WEVAL_SHARED:
            if key in head:
                merged[key] = head[key]
        elif key == "config":
            prompts: dict[str, Any] = {}
            for data in files:
                for p in data["config"].get("prompts") or []:
                    prompts[str(p.get("id"))] = p
            merged[key] = {k: ([prompts[i] for i in items if i in prompts] if k == "prompts" else v)
                           for k, v in head["config"].items()}
        elif key == "effectiveModels":
            merged[key] = sorted({str(m) for data in files for m in data.get(key) or []})
        elif key == "modelSystemPrompts":
            merged[key] = _system_prompts(shards, files, order)
        elif key == "promptIds":
            merged[key] = sorted({str(i) for data in files for i in data.get(key) or []})
        elif key in WEVAL_BY_PROMPT:
            if any(key in data for data in files):
                merged[key] = by_prompt(lambda d, k=key: d.get(k))
        elif key == "evaluationResults":
            merged[key] = _evaluation(files, items, by_prompt)
    if not _plain_name(head.get("runLabel")):
        raise MergeError(f"{shards[0].results}: runLabel is not a plain file name")
    # The artefact folder when the shards wrote theirs (--artefacts), as a single such run would
    artefacts = all((s.results.parent / s.results.name.removesuffix("_comparison.json")).is_dir() for s in shards)
    written = write_comparison(folder, str(head["runLabel"]), stamp, merged, artefacts=artefacts)
    # What each shard paid: its cost file, or (an earlier evalspec's shard) the comparison's evalspecCost.
    return written + _merge_cost_files(shards, written[0], [d.get("evalspecCost") for d in files])


def _weval_comparison(s: ShardResult) -> Any:
    """The shard's comparison object: rebuilt from its run database (write/weval_rebuild.py), or, when that
    holds none of this run (a shard of an earlier evalspec, a replay), read from its comparison file."""
    import sqlite3

    from .journal import database as db
    from .write.weval_rebuild import Unreadable, weval_comparison

    path = shard_database(s)
    if path.is_file():
        if db.holder(path) is not None:
            raise MergeError(f"{path}: run {s.manifest['run_label']} ({s.name}) is running again; merge once it ends")
        try:
            held = weval_comparison(path, s.manifest)
        except (OSError, db.NotADatabase, sqlite3.Error, Unreadable) as exc:
            raise MergeError(f"cannot read the shard's run database {path}: {exc}") from None
        if held is not None:
            return held
    return _read_json(s.results)


def _same(shards: list[ShardResult], files: list[Any], what: str, get: Any) -> None:
    values = [get(d) for d in files]
    for s, v in zip(shards[1:], values[1:], strict=True):
        if v != values[0]:
            raise MergeError(f"the shards are of different blueprints or runs: `{what}` differs between "
                             f"{shards[0].results} and {s.results}")


def _system_prompts(shards: list[ShardResult], files: list[Any], order: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s, data in zip(shards, files, strict=True):
        for model, system in (data.get("modelSystemPrompts") or {}).items():
            if model in out and out[model] != system:
                raise MergeError(f"the shards give {model} different system prompts ({s.results})")
            out[model] = system
    return dict(sorted(out.items(), key=lambda kv: order.get(kv[0], len(order))))


def _evaluation(files: list[Any], items: list[str], by_prompt: Any) -> dict[str, Any]:
    heads = [d.get("evaluationResults") or {} for d in files]
    out: dict[str, Any] = {}
    if any("similarityMatrix" in h or "perPromptSimilarities" in h for h in heads):
        per_prompt = by_prompt(lambda d: (d.get("evaluationResults") or {}).get("perPromptSimilarities"))
        out["similarityMatrix"] = _overall_similarity(per_prompt, items)
        out["perPromptSimilarities"] = per_prompt
    if any("llmCoverageScores" in h for h in heads):
        out["llmCoverageScores"] = by_prompt(lambda d: (d.get("evaluationResults") or {}).get("llmCoverageScores"))
    return out


def _overall_similarity(per_prompt: dict[str, Any], items: Iterable[str]) -> dict[str, dict[str, float]]:
    """The mean of each pair's per-prompt similarities, summed in prompt order (as score_embeddings does, so
    the floats are the same to the last bit); a model with no pair is left out, every model kept is 1.0
    with itself."""
    models = sorted({str(m) for matrix in per_prompt.values() if isinstance(matrix, dict) for m in matrix})
    sums: dict[tuple[str, str], list[float]] = {}
    for item in items:
        matrix = per_prompt.get(item)
        if not isinstance(matrix, dict):
            continue
        for a in models:
            row = matrix.get(a)
            if not isinstance(row, dict):
                continue
            for b in models:
                if a != b and isinstance(row.get(b), int | float):
                    sums.setdefault((a, b), []).append(float(row[b]))
    overall = {pair: sum(v) / len(v) for pair, v in sums.items()}
    out: dict[str, dict[str, float]] = {}
    for a in models:
        row_out = {b: 1.0 if a == b else overall[(a, b)] for b in models if a == b or (a, b) in overall}
        if len(row_out) > 1:
            out[a] = row_out
    return out


def merge_costs(costs: list[dict[str, Any]]) -> dict[str, Any]:
    """The shards' costs (cost files) as one run's (cost/spend.py's shape and order): calls and tokens added up,
    USD too (a line's cost stays unknown if any shard's is). A cap or a stop of any shard is kept."""
    from .cost.spend import line_order

    lines: dict[tuple[str, str, str], dict[str, Any]] = {}
    for cost in costs:
        for line in cost.get("lines") or []:
            key = (str(line.get("role")), str(line.get("model")), str(line.get("via") or "interactive"))
            got = lines.get(key)
            if got is None:
                lines[key] = dict(line)
                continue
            for k in ("calls", "cached", "input_tokens", "output_tokens"):
                got[k] = int(got.get(k) or 0) + int(line.get(k) or 0)
            usd, more = got.get("usd"), line.get("usd")
            got["usd"] = None if usd is None or more is None else usd + more
            if got.get("priced_as") is None:
                got["priced_as"] = line.get("priced_as")
    ordered = [lines[k] for k in sorted(lines, key=lambda k: line_order(*k))]
    out: dict[str, Any] = {
        "currency": "USD", "lines": ordered,
        "input_tokens": sum(int(line.get("input_tokens") or 0) for line in ordered),
        "output_tokens": sum(int(line.get("output_tokens") or 0) for line in ordered),
        # Each shard's total (its priced calls, as spend.Spend.total adds its lines' USD).
        "usd": sum(c["usd"] if isinstance(c.get("usd"), int | float) else 0 for c in costs),
        "unpriced": list(dict.fromkeys(line.get("priced_as") or line.get("model") for line in ordered
                                       if line.get("usd") is None)),
    }
    caps = next((c["caps"] for c in costs if c.get("caps")), None)
    if caps:
        out["caps"] = caps
    stopped = [c for c in costs if c.get("stopped")]
    if stopped:
        out["stopped"] = stopped[0]["stopped"]
        out["not_run"] = sum(int(c.get("not_run") or 0) for c in stopped)
    return out


# --- AgentV -------------------------------------------------------------------------------------------
def shard_database(s: ShardResult) -> Path:
    """The shard's run database, beside its manifest: `<run label>.shard-I-of-N.run.db`."""
    from .journal import database as db

    return s.manifest_path.with_name(f"{s.manifest['run_label']}{s.shard.suffix}{db.SUFFIX}")


def _agentv_rows_from_database(s: ShardResult, mine: set[str]) -> dict[str, list[bytes]] | None:
    """The shard's rows by test, each test's in the plan's order of its targets, as its run database holds
    them: a finished cell's row is its `scores.result`, a cell a cost cap kept from starting its `not_run`
    row (a score of the cell wins). None when there is no database to read them from (the shard's results
    file is read instead): none beside the manifest, or one of an evalspec before `not_run` (schema 1), or
    one of a later run of the label (its header names another results file). Raises MergeError."""
    import sqlite3

    from .journal import database as db

    path = shard_database(s)
    if not path.is_file():
        return None
    if db.holder(path) is not None:
        raise MergeError(f"{path}: run {s.manifest['run_label']} ({s.name}) is running again; merge once it ends")
    try:
        with db.reading(path) as conn:
            head = db.header(conn, fingerprints=False)
            if not db.has_not_run(conn) or head is None or head.kind != "agentv" \
                    or head.results != s.manifest["results"] or not db.finished(conn)[0]:
                return None
            scored = {(item, model): row for item, model, row in db.score_rows(conn)}
            left = {(item, model): row for item, model, row in db.not_run_rows(conn)
                    if row is not None and (item, model) not in scored}
    except (OSError, db.NotADatabase, sqlite3.Error) as exc:
        raise MergeError(f"cannot read the shard's run database {path}: {exc}") from None
    targets = [str(m) for m in s.manifest["models"]]
    found = head.extra.get("target_order")
    orders: dict[str, Any] = found if isinstance(found, dict) else {}
    by_item: dict[str, dict[str, bytes]] = {}
    for (item, model), row in (*scored.items(), *left.items()):
        if item not in mine:
            raise MergeError(f"{path}: test {item!r} does not belong to shard {s.shard}")
        by_item.setdefault(item, {})[model] = row
    out: dict[str, list[bytes]] = {}
    for item, cells in by_item.items():
        own = orders.get(item) if isinstance(orders.get(item), list) else None
        rank = {str(m): n for n, m in enumerate(own or targets)}
        out[item] = [cells[m] for m in sorted(cells, key=lambda m: rank.get(m, len(rank)))]
    return out


def _merge_agentv(shards: list[ShardResult], folder: Path, stamp: str) -> list[Path]:
    from .write.files import write_atomic

    items = [str(i) for i in shards[0].manifest["items"]]
    rows: dict[str, list[bytes]] = {}
    for s in shards:
        mine = {str(i) for i in s.manifest["shard_items"]}
        held = _agentv_rows_from_database(s, mine)
        if held is not None:
            rows.update(held)
            continue
        try:
            lines = _read_regular(s.results).splitlines()
        except OSError as exc:
            raise MergeError(f"cannot read {s.results}: {exc.strerror or exc}") from None
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = loads(line)
            except ValueError:
                raise MergeError(f"{s.results}:{n}: not a JSON row") from None
            item = row.get("test_id") if isinstance(row, dict) else None
            if not isinstance(item, str):
                raise MergeError(f"{s.results}:{n}: a row without a test_id")
            if item not in mine:
                raise MergeError(f"{s.results}:{n}: test {item!r} does not belong to shard {s.shard}")
            rows.setdefault(item, []).append(line)  # the bytes the shard wrote
    label = str(shards[0].manifest["run_label"])
    path = folder / f"{label}_{stamp}.jsonl"
    write_atomic(path, b"".join(line + b"\n" for item in items for line in rows.get(item, ())))
    return [path, *_merge_cost_files(shards, path, [None] * len(shards))]


def _merge_cost_files(shards: list[ShardResult], results: Path, inline: list[Any]) -> list[Path]:
    """The shards' cost files (cost/cost_file.py) as the merged run's, beside `results`; nothing when no shard
    has one. `inline`: each shard's cost held in its results (earlier versions), used when it has no file."""
    from .cost.cost_file import cost_path, write_cost

    costs = []
    for s, held in zip(shards, inline, strict=True):
        path = cost_path(s.results)
        if path.is_file():
            data = _read_json(path)
            if not isinstance(data, dict) or not isinstance(data.get("lines"), list):
                raise MergeError(f"{path} is not an evalspec cost file")
            costs.append(data)
        elif isinstance(held, dict):
            costs.append(held)
    if not costs:
        return []
    written = write_cost(results, merge_costs(costs))
    return [written] if written is not None else []
