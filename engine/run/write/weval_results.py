"""Weval result files: the `FinalComparisonOutputV2` comparison file and its artefact folder.

Layout (Weval's published output format), under the output folder:

    live/blueprints/<configId>/<runLabel>_<timestamp>_comparison.json    the monolithic file
    live/blueprints/<configId>/<runLabel>_<timestamp>/core.json           light metadata, placeholders
        responses/<promptId>.json                                          final answers per model
        coverage/<promptId>/<safe model id>.json                           rubric results
        histories/<promptId>/<safe model id>.json                          {"history": [...]}

`timestamp` is the reference's safe form (`2024-01-01T12-30-00-123Z`), taken when the run completes.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...jsonio import dumps_bytes, loads
from ...own_files import bounded_file_part, create_fresh
from ...providers.redact import redact_bytes
from ...weval.ids import UNDEFINED, safe_file_part
from ...weval.model import Blueprint, Prompt, reference_points
from ...weval.prompt_store import ExportedPrompt, exported_prompt, exported_prompts, prompt_ids
from .cell_store import COVERAGE, FIELDS, HISTORY, ODD, RESPONSE, CellStore, Fields, piece
from .files import LazyList, LazyMap, compact_chunks, write_json

IDEAL_MODEL_ID = "IDEAL_BENCHMARK"


class WevalResults:
    """Everything a run learned, by prompt and effective model; filled as cells finish. Each cell's
    answer, conversation and coverage result are in `cells` (a CellStore: as the pieces the comparison file
    joins, in memory up to its bound, then on disk); errors, system prompts, key points and similarities,
    which stay small, here."""

    def __init__(self, cells: CellStore | None = None) -> None:
        self.cells = cells if cells is not None else CellStore(Path(tempfile.gettempdir()))
        self.models: dict[str, None] = {}  # every model a cell was recorded for, in order
        self.errors: dict[str, dict[str, str]] = {}
        self.system_prompts: dict[str, str | None] = {}
        self.key_points: dict[str, list[str]] = {}
        self.similarity: dict[str, dict[str, float]] | None = None
        self.per_prompt_similarity: dict[str, dict[str, dict[str, float]]] | None = None

        self._last: tuple[str, dict[str, Fields]] | None = None  # the prompt read last, its cells

    def record(self, item: str, model: str, *, cell: tuple[str, str] | None = None, last: bool = False,
               **fields: Any) -> None:
        """A cell's fields: `response` (its final answer or error marker), `history`, `coverage`. `cell`:
        the run's Cell of (item, model), kept by the store as its key; `last`: its last record."""
        for n, (name, value) in enumerate(fields.items(), 1):  # (the last only with the last field)
            self.put(item, model, FIELDS.index(name), piece(value), cell, last=last and n == len(fields))

    def put(self, item: str, model: str, field: int, encoded: bytes, cell: tuple[str, str] | None = None,
            field2: int = -1, encoded2: bytes | None = None, *, last: bool = False) -> None:
        """`record` of one field (`cell_store.RESPONSE`, `HISTORY`, `COVERAGE`), or two, as `cell_store.piece`
        encoded it. `last`: the cell's last record (CellStore.set)."""
        if model not in self.models:
            self.models[model] = None
        self._last = None
        self.cells.set(item, model, field, encoded, cell, field2, encoded2, last=last)

    def _row(self, item: str) -> dict[str, Fields]:
        """The prompt's cells: model → its pieces, in the order the models were first recorded."""
        if self._last is None or self._last[0] != item:
            row = {}
            get = self.cells.get
            for model in self.models:
                cell = get((item, model))
                if cell is not None:
                    row[model] = cell
            self._last = (item, row)
        return self._last[1]

    def field(self, item: str, name: str) -> dict[str, Any]:
        """One field of each of the prompt's cells that has it: model → value."""
        n = FIELDS.index(name)
        return {model: decoded(found) for model, cell in self._row(item).items() if (found := cell[n]) is not None}

    def pieces(self, item: str, field: int) -> dict[str, bytes]:
        """One field of each of the prompt's cells that has it, as its piece: model → piece."""
        if len(self.models) == 1:  # the usual run: one effective model, no row to make
            (model,) = self.models
            found = self.cells.field((item, model), field)
            return {} if found is None else {model: found}
        out: dict[str, bytes] = {}
        get = self.cells.field
        for model in self.models:
            if (found := get((item, model), field)) is not None:
                out[model] = found
        return out


def decoded(encoded: bytes) -> Any:
    """A piece's value (`cell_store.piece`)."""
    if encoded[:1] == ODD:
        import json

        return json.loads(encoded[1:])  # orjson reads a big integer as a float, and no lone surrogate
    return loads(encoded)


def joined(row: dict[str, bytes], keys: dict[str, bytes]) -> bytes:
    """`dumps_bytes` of the object whose members are `row`'s, each value given as its piece: the pieces
    joined, or, when one is in the standard encoder's form, the object encoded whole as `dumps_bytes` does
    (every string then ASCII-escaped). `keys`: the JSON of keys already encoded, filled as it goes."""
    if not row:
        return b"{}"
    parts = []
    for key, value in row.items():
        name = keys.get(key)
        if name is None:
            name = keys[key] = piece(key)
        parts.append(name + b":" + value)
    out = b"{" + b",".join(parts) + b"}"
    if ODD in out:  # no JSON text holds a NUL byte
        return dumps_bytes({key: decoded(value) for key, value in row.items()})
    return out


def responses_row(p: Prompt | ExportedPrompt, results: WevalResults) -> dict[str, str]:
    """allFinalAssistantResponses[prompt]: the ideal (when there is one), then every model's answer."""
    row: dict[str, str] = {IDEAL_MODEL_ID: p.ideal} if p.ideal else {}
    row.update(results.field(p.id, "response"))
    return row


def prompt_context(p: Prompt | ExportedPrompt) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": m.content} for m in p.messages]


class _HeldContexts:
    """Each prompt's `promptContexts` entry as compact JSON, kept while the config's prompts are written
    (they come first in the comparison file, and each prompt is read from its record there) and read back,
    a prompt at a time, as `promptContexts` is written: a big blueprint's prompts are records, and reading
    each again was a quarter of writing its comparison file. At most `BUDGET` bytes are kept (the entries
    of prompts past it are read from the prompt again); all of it goes once the last has been read."""

    BUDGET = 16 << 20  # ~75 bytes a prompt of bench/run_throughput.py's blueprint: 7.5 MB at 100,000

    def __init__(self) -> None:
        self._data = bytearray()
        self._ends = array("Q")
        self._open = True  # still taking entries (the config's first walk, within the budget)

    def keep(self, k: int, p: Prompt | ExportedPrompt) -> None:
        if self._open and k == len(self._ends):
            encoded = dumps_bytes(prompt_context(p))
            if len(self._data) + len(encoded) > self.BUDGET:
                self._open = False
                return
            self._data += encoded
            self._ends.append(len(self._data))

    def context(self, k: int, prompts: Sequence[Prompt]) -> Any:
        """Prompt k's entry: as kept (its JSON read back), else read from the prompt."""
        return loads(self.encoded(k, prompts))  # strings and nulls: the same value

    def encoded(self, k: int, prompts: Sequence[Prompt]) -> bytes:
        """Prompt k's entry as the file writes it: as kept, else read from the prompt and encoded."""
        ends = self._ends
        if k < len(ends):
            found = bytes(self._data[ends[k - 1] if k else 0:ends[k]])
            if k == len(ends) - 1:  # the last kept: promptContexts is written past them, let them go
                self.release()
            return found
        return dumps_bytes(prompt_context(exported_prompt(prompts, k)))

    def release(self) -> None:
        self._open = False
        self._data = bytearray()
        self._ends = array("Q")


def _prompt_objects(prompts: Sequence[Prompt], held: _HeldContexts | None) -> Iterator[dict[str, Any]]:
    for k, p in enumerate(exported_prompts(prompts)):
        if held is not None:
            held.keep(k, p)
        yield _prompt_object(p)


def config_object(bp: Blueprint, models: list[str], prompts: Sequence[Prompt],
                  held: _HeldContexts | None = None) -> dict[str, Any]:
    """The blueprint as the reference's normalized ComparisonConfig (what `config` holds): its header as
    Weval's parser and loader leave it (weval/reference_form.py), the models resolved, the prompts.
    `held`: where each prompt's promptContexts entry is kept as its prompt is written."""
    listed = LazyList(lambda: _prompt_objects(prompts, held),
                      summary=lambda: (_prompt_summary(p) for p in exported_prompts(prompts)), plain=True)
    if bp.reference is not None:
        cfg = dict(bp.reference)
        cfg["models"] = models
        if isinstance(cfg.get("externalServices"), dict):
            cfg["externalServices"] = _redacted_services(cfg["externalServices"])
        cfg["prompts"] = listed
        return cfg
    cfg = {"id": bp.id, "title": bp.title}
    if bp.description is not None:
        cfg["description"] = bp.description
    if bp.tags:
        cfg["tags"] = bp.tags
    if bp.author is not None:
        cfg["author"] = bp.author
    if bp.references:
        cfg["references"] = bp.references
    if "render_as" in bp.set_keys:
        cfg["render_as"] = bp.render_as
    if "noCache" in bp.set_keys:
        cfg["noCache"] = bp.no_cache
    cfg["models"] = models
    if bp.system is not None:
        cfg["system"] = bp.system
    if bp.systems:
        cfg["systems"] = bp.systems
    if bp.temperature is not None:
        cfg["temperature"] = bp.temperature
    if bp.temperatures:
        cfg["temperatures"] = bp.temperatures
    cfg["concurrency"] = bp.concurrency
    cfg["embeddingModel"] = bp.embedding_model
    if bp.judges or bp.judge_models:
        cov: dict[str, Any] = {}
        if bp.judges:
            cov["judges"] = [{k: v for k, v in (("id", j.id), ("model", j.model), ("approach", j.approach))
                              if v is not None} for j in bp.judges]
        if bp.judge_models:
            cov["judgeModels"] = bp.judge_models
        cfg["evaluationConfig"] = {"llm-coverage": cov}
    if bp.point_defs:
        cfg["point_defs"] = bp.point_defs
    if bp.tools:
        cfg["tools"] = bp.tools
    if bp.tool_use is not None:
        cfg["toolUse"] = bp.tool_use
    if bp.external_services:
        cfg["externalServices"] = _redacted_services(bp.external_services)
    cfg["prompts"] = listed
    return cfg


def _redacted_services(services: dict[str, Any]) -> dict[str, Any]:
    """Service definitions without their headers' values: those often hold keys."""
    from ...providers.redact import MASK, is_sensitive_header

    out: dict[str, Any] = {}
    for name, svc in services.items():
        if isinstance(svc, dict) and isinstance(svc.get("headers"), dict):
            svc = {**svc, "headers": {k: (MASK if is_sensitive_header(str(k)) else v)
                                      for k, v in svc["headers"].items()}}
        out[name] = svc
    return out


def _prompt_summary(p: Prompt | ExportedPrompt) -> dict[str, Any]:
    """A prompt as core.json's config lists it: its id, and its weight when `_prompt_object` writes one."""
    return {"id": p.id, "weight": p.weight} if p.weight != 1.0 else {"id": p.id}


def _prompt_object(p: Prompt | ExportedPrompt) -> dict[str, Any]:
    if p.reference is not None:
        return p.reference  # as Weval's parser leaves it (weval/reference_form.py)
    assert isinstance(p, Prompt)  # an ExportedPrompt has a reference form
    obj: dict[str, Any] = {"id": p.id, "messages": prompt_context(p)}
    if p.description is not None:
        obj["description"] = p.description
    if p.ideal is not None:
        obj["idealResponse"] = p.ideal
    if p.system_set:
        obj["system"] = p.system
    if p.citation is not None:
        obj["citation"] = p.citation
    if p.weight != 1.0:
        obj["weight"] = p.weight
    if p.temperature is not None:
        obj["temperature"] = p.temperature
    if p.no_cache is not None:
        obj["noCache"] = p.no_cache  # the prompt's own, else inherited from the header, as in the reference
    obj["render_as"] = p.render_as  # always: the reference's normalized prompt has it (default markdown)
    if p.tags:
        obj["tags"] = p.tags  # the reference drops prompt tags; evalspec keeps them
    if p.should:
        obj["points"] = _defined(reference_points(p.should))
    if p.should_not:
        obj["should_not"] = _defined(reference_points(p.should_not))
    return obj


def _defined(value: Any) -> Any:
    """Drop JavaScript-undefined members (JSON.stringify would not write them)."""
    if isinstance(value, dict):
        return {k: _defined(v) for k, v in value.items() if v is not UNDEFINED}
    if isinstance(value, list):
        return [_defined(v) for v in value]
    return value


def comparison_object(*, bp: Blueprint, models: list[str], prompts: Sequence[Prompt], run_label: str,
                      timestamp: str, eval_methods: list[str], effective_models: list[str],
                      results: WevalResults, positions: Mapping[str, int] | None = None,
                      ideals: bytes | bytearray | None = None) -> dict[str, Any]:
    """The comparison file's object. Its per-prompt maps (and the config's prompts) are LazyMap /
    LazyList: made a prompt at a time while the files are written (`write_comparison`), never whole.
    `positions`: each prompt id's place in `prompts`, when the caller has them (else a dict is made);
    `ideals`: a byte per prompt of `prompts`, non-zero where it has an ideal, when the caller knows (else
    the prompts are read: a big blueprint's one at a time, from disk)."""
    if ideals is not None and len(ideals) != len(prompts):
        ideals = None
    has_ideal = any(ideals) if ideals is not None else any(p.ideal for p in exported_prompts(prompts))
    # Cells finish in whatever order the providers answer (or a batch returns); every per-prompt map is
    # written in the plan's model order, so the same answers always make the same bytes.
    rank = {m: i for i, m in enumerate([IDEAL_MODEL_ID, *effective_models])}

    def ordered(by_model: dict[str, Any]) -> dict[str, Any]:
        if len(by_model) < 2:
            return dict(by_model)
        return dict(sorted(by_model.items(), key=lambda kv: rank.get(kv[0], len(rank))))

    # id → position: the prompt is read when its entry is written (kept as objects, a 100,000-prompt
    # blueprint's were ~500 MB)
    ids = prompt_ids(prompts)
    by_id = positions if positions is not None and len(positions) == len(ids) else \
        {pid: n for n, pid in enumerate(ids)}
    # Without a repeated id, the n-th id is the n-th prompt's: the maps are written in that order without
    # looking each id up (`LazyMap`'s `at`).
    by_place = len(by_id) == len(ids)
    if not by_place:  # an id twice (a file with findings run anyway): the first, as the dict kept it
        ids = list(dict.fromkeys(ids))

    def responses_at(k: int, pid: str) -> dict[str, Any]:
        if ideals is not None and not ideals[k]:  # no ideal: the prompt need not be read
            return ordered(results.field(pid, "response"))
        return ordered(responses_row(exported_prompt(prompts, k), results))

    # The files' rows are the cells' pieces joined (cell_store.py), in the same order as the values' maps
    keys: dict[str, bytes] = {}

    def in_order(by_model: dict[str, bytes]) -> dict[str, bytes]:
        if len(by_model) < 2:
            return by_model
        return dict(sorted(by_model.items(), key=lambda kv: rank.get(kv[0], len(rank))))

    def responses_encoded(k: int, pid: str) -> bytes:
        if not by_place:
            k = by_id[pid]
        if ideals is None or ideals[k]:  # (else the prompt has no ideal and need not be read)
            ideal = exported_prompt(prompts, k).ideal
            if ideal:
                return joined(in_order({IDEAL_MODEL_ID: piece(ideal), **results.pieces(pid, RESPONSE)}), keys)
        return answers(k, pid)

    def by_field(name: str, field: int) -> LazyMap:
        return LazyMap(ids, lambda pid: ordered(results.field(pid, name)), by_id, encoded=encoder(field))

    def encoder(field: int) -> Callable[[int, str], bytes]:
        if len(results.models) != 1:
            return lambda _, pid: joined(in_order(results.pieces(pid, field)), keys)
        (model,) = results.models  # the usual run: each row one cell's piece, or none
        head, get = b"{" + piece(model) + b":", results.cells.field

        def one(_: int, pid: str) -> bytes:
            found = get((pid, model), field)
            if found is None:
                return b"{}"
            out = head + found + b"}"
            return out if ODD not in out else joined({model: found}, keys)
        return one

    answers = encoder(RESPONSE)
    final_responses = LazyMap(ids, lambda pid: responses_at(by_id[pid], pid), by_id,
                              at=responses_at if by_place else None, encoded=responses_encoded)
    eff = sorted(set(effective_models) | ({IDEAL_MODEL_ID} if has_ideal else set()))
    evaluation: dict[str, Any] = {}
    if "embedding" in eval_methods:
        evaluation["similarityMatrix"] = results.similarity or {}
        evaluation["perPromptSimilarities"] = results.per_prompt_similarity or {}
    if "llm-coverage" in eval_methods:
        evaluation["llmCoverageScores"] = by_field("coverage", COVERAGE)
    out: dict[str, Any] = {
        "configId": bp.id,
        "configTitle": bp.title,
        "runLabel": run_label,
        "timestamp": timestamp,
    }
    if bp.description is not None:
        out["description"] = bp.description
    if bp.path:
        from .git_source import blueprint_file_name, head_commit

        sha = head_commit(Path(bp.path).parent)
        if sha is not None:
            out["sourceCommitSha"] = sha
        out["sourceBlueprintFileName"] = blueprint_file_name(Path(bp.path))
    held = _HeldContexts() if by_place else None
    out.update({
        "config": config_object(bp, models, prompts, held),
        "evalMethodsUsed": eval_methods,
        "effectiveModels": eff,
        "modelSystemPrompts": ordered(results.system_prompts),
        "promptIds": sorted(ids),
        "promptContexts": LazyMap(ids, lambda pid: prompt_context(exported_prompt(prompts, by_id[pid])), by_id,
                                  at=(lambda k, _: held.context(k, prompts)) if held is not None else None,
                                  encoded=(lambda k, _: held.encoded(k, prompts)) if held is not None else None,
                                  plain=True),
    })
    if results.key_points:
        out["extractedKeyPoints"] = {pid: results.key_points[pid] for pid in ids if pid in results.key_points}
    out["allFinalAssistantResponses"] = final_responses
    out["fullConversationHistories"] = by_field("history", HISTORY)
    out["evaluationResults"] = evaluation
    if results.errors:
        order = by_id
        out["errors"] = {pid: ordered(row) for pid, row in
                         sorted(results.errors.items(), key=lambda kv: order.get(kv[0], len(order)))}
    return out


def core_object(full: dict[str, Any]) -> dict[str, Any]:
    """core.json: the comparison without bulky fields (the reference's `buildCoreData`)."""
    core = dict(full)
    core["config"] = _core_config(full)
    placeholder = {pid: {m: None for m in full.get("effectiveModels", [])} for pid in full.get("promptIds", [])}
    core["allFinalAssistantResponses"] = placeholder
    core["fullConversationHistories"] = {pid: dict(row) for pid, row in placeholder.items()}
    coverage = (full.get("evaluationResults") or {}).get("llmCoverageScores") or {}
    stripped = {pid: {mid: _light(r) for mid, r in by_model.items()} for pid, by_model in coverage.items()}
    core["evaluationResults"] = {"similarityMatrix": (full.get("evaluationResults") or {}).get("similarityMatrix")
                                 or {}, "llmCoverageScores": stripped}
    return core


def core_chunks(full: dict[str, Any]) -> Iterator[bytes]:
    """`dumps_bytes(core_object(full))` in pieces, a prompt at a time, without building it: at 100,000
    prompts the placeholders and light results alone were ~150 MB of objects."""
    keys = list(full) + [k for k in ("config", "allFinalAssistantResponses", "fullConversationHistories",
                                     "evaluationResults") if k not in full]
    row = dumps_bytes({m: None for m in full.get("effectiveModels", [])})
    pids = full.get("promptIds", [])
    evaluation = full.get("evaluationResults") or {}
    yield b"{"
    for n, key in enumerate(keys):
        yield (b"," if n else b"") + dumps_bytes(key) + b":"
        if key == "config":
            yield from compact_chunks(_core_config(full))
        elif key in ("allFinalAssistantResponses", "fullConversationHistories"):
            # joined as they are made: orjson's result holds a 4 KB buffer however short it is, so
            # a list of 100,000 encoded ids was 400 MB; and a few hundred at a time (all of them joined
            # were a list of 100,000 short pieces, its joined copy and a redacted one: ~20 MB at once)
            yield b"{"
            for start in range(0, len(pids), _ENTRIES_PER_CHUNK):
                yield (b"," if start else b"") + b",".join(
                    dumps_bytes(str(pid)) + b":" + row for pid in pids[start:start + _ENTRIES_PER_CHUNK])
            yield b"}"
        elif key == "evaluationResults":
            yield b'{"similarityMatrix":' + dumps_bytes(evaluation.get("similarityMatrix") or {})
            yield b',"llmCoverageScores":{'
            for m, (pid, by_model) in enumerate((evaluation.get("llmCoverageScores") or {}).items()):
                yield ((b"," if m else b"") + dumps_bytes(str(pid)) + b":"
                       + dumps_bytes({mid: _light(r) for mid, r in by_model.items()}))
            yield b"}}"
        else:
            yield from compact_chunks(full[key])
    yield b"}"


_ENTRIES_PER_CHUNK = 512


def _core_config(full: dict[str, Any]) -> dict[str, Any]:
    cfg = dict(full.get("config") or {})
    if "prompts" in cfg:
        listed = cfg["prompts"]
        if isinstance(listed, LazyList) and listed.summary is not None:
            cfg["prompts"] = LazyList(listed.summary, plain=True)
        else:
            light = lambda: ({"id": p["id"], **({"weight": p["weight"]} if "weight" in p else {})}  # noqa: E731
                             for p in (listed.elements() if isinstance(listed, LazyList) else listed))
            cfg["prompts"] = LazyList(light) if isinstance(listed, LazyList) else list(light())
    return cfg


def _light(r: dict[str, Any]) -> dict[str, Any]:
    """A coverage result as core.json keeps it: the scores, not the texts."""
    light = None
    if isinstance(r.get("pointAssessments"), list):
        light = []
        for pa in r["pointAssessments"]:
            item = {"coverageExtent": pa.get("coverageExtent"), "multiplier": pa.get("multiplier"),
                    "isInverted": pa.get("isInverted")}
            scores = [j.get("coverageExtent") for j in pa.get("individualJudgements") or []
                      if isinstance(j.get("coverageExtent"), int | float)]
            if len(scores) > 1:
                mean = sum(scores) / len(scores)
                item["judgeStdDev"] = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5
            if pa.get("pathId") is not None:
                item["pathId"] = pa["pathId"]
            light.append(item)
    entry: dict[str, Any] = {k: r[k] for k in ("avgCoverageExtent", "keyPointsCount", "error") if k in r}
    if light is not None:
        entry["pointAssessments"] = light
    return entry


def file_id(item_id: str) -> str:
    """A prompt id as a file name: as is (the reference's layout), unless it could leave the folder or is
    no file name (too long, a NUL: bounded_file_part)."""
    if "/" in item_id or "\\" in item_id or item_id in (".", "..") or not item_id:
        return bounded_file_part(safe_file_part(item_id).replace(".", "_") or "_", digest_of=item_id)
    return bounded_file_part(item_id)


class ArtefactWriter:
    """Many small files, written plainly (no temporary file: nothing reads them while the run writes),
    each folder created once.

    One writer thread encodes and writes: the file-system calls release the GIL, so creating thousands
    of files overlaps with the caller walking the results, and the queue holds references to values
    rather than a backlog of encoded buffers (that backlog was 30 MB of peak memory). One thread only:
    several writers contend in the kernel and were measured slower on a VM disk.

    Files are handed over in batches of `BATCH`, at most `BATCHES` waiting: the values come from a lazy
    walk that is faster than creating files, and a backlog of them would be the whole run again, so the
    queue is bounded; but a queue bounded a file at a time made the walk and the writer take turns for
    every file once it filled (two lock hand-offs and a GIL switch each: +0.1 s of CPU at 6,000 files).
    """

    BATCH = 64
    BATCHES = 8  # at most BATCH * (BATCHES + 2) values held: the queue, the one filling, the one written
    MADE = 4096  # folders remembered as made

    def __init__(self, root: Path) -> None:
        import queue
        import threading

        self.root = root
        self._made: set[str] = set()
        self._batch: list[tuple[str, Any]] = []
        self._queue: queue.Queue[list[tuple[str, Any]] | None] = queue.Queue(maxsize=self.BATCHES)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name="artefacts", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while (jobs := self._queue.get()) is not None:
            if self._error is not None:
                continue
            try:
                for job in jobs:
                    self._write(*job)
            except BaseException as exc:  # reported by close()
                self._error = exc

    def _write(self, path: str, value: Any) -> None:
        data = redact_bytes(dumps_bytes(value))  # an answer or history may echo a key (providers/redact.py)
        parent = os.path.dirname(path)
        if parent not in self._made:
            try:
                os.mkdir(parent)  # the usual case: the parent of this folder exists already
            except FileExistsError:
                pass
            except FileNotFoundError:
                os.makedirs(parent, exist_ok=True)
            if len(self._made) >= self.MADE:  # a folder per prompt: remembering every one grew with the run
                self._made.clear()  # (~30 MB at 100,000 prompts); one made already is just made again
            self._made.add(parent)
        fd = create_fresh(path)  # a link planted in the run's folder is replaced, never written through
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def file(self, relative: str, value: Any) -> None:
        self._batch.append((f"{self.root}/{relative}", value))
        if len(self._batch) >= self.BATCH:
            self._queue.put(self._batch)
            self._batch = []

    def close(self) -> None:
        """Wait for every file; raise the first failure (a full disk must not pass silently)."""
        if self._batch:
            self._queue.put(self._batch)
            self._batch = []
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error


def write_comparison(folder: Path, run_label: str, timestamp: str, full: dict[str, Any], *,
                     artefacts: bool = True) -> list[Path]:
    """The monolithic file (pretty) and, with `artefacts`, the artefact folder. Returns the paths written.

    (Writing the artefacts in a forked child was tried and dropped: copy-on-write faults caused by
    Python's reference counts cost the child as much as the writes it took over.)"""
    base = f"{run_label}_{timestamp}"
    main = folder / f"{base}_comparison.json"
    folder.mkdir(parents=True, exist_ok=True)
    write_json(main, full, pretty=True)
    if not artefacts:
        return [main]
    run_dir = folder / base
    # The artefacts are thousands of files written plainly; a kill halfway left a folder of them with one
    # cut short, which no later run mended. They are written under a hidden name and the folder renamed
    # once whole; a run of this label clears what a killed write left.
    for left in folder.glob(f"{glob.escape(PARTIAL_PREFIX + run_label)}_*"):
        _remove(left)
    partial = folder / f"{PARTIAL_PREFIX}{base}"
    partial.mkdir()
    with os.fdopen(create_fresh(partial / "core.json"), "wb") as f:
        for chunk in core_chunks(full):
            f.write(redact_bytes(chunk))  # a chunk holds whole JSON strings, so a key is never split
    writer = ArtefactWriter(partial)
    try:
        for relative, value in _artefacts(full):
            writer.file(relative, value)
    finally:
        writer.close()
    if os.path.lexists(run_dir):  # the same label and millisecond: the newer write wins
        _remove(run_dir)
    os.rename(partial, run_dir)
    return [main, run_dir]


PARTIAL_PREFIX = ".partial-"  # an artefact folder being written (write_comparison)


def _remove(path: Path) -> None:
    """A folder of evalspec's own, or a link or file in its place (unlinked, never followed)."""
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _artefacts(full: dict[str, Any]) -> Any:
    for pid, row in (full.get("allFinalAssistantResponses") or {}).items():
        yield f"responses/{file_id(pid)}.json", row
    coverage = (full.get("evaluationResults") or {}).get("llmCoverageScores") or {}
    histories = full.get("fullConversationHistories") or {}
    for pid in full.get("promptIds") or []:
        by_cov, by_hist = coverage.get(pid) or {}, histories.get(pid) or {}
        for mid in sorted(set(by_cov) | set(by_hist)):
            if mid in by_cov:
                yield f"coverage/{file_id(pid)}/{safe_file_part(mid)}.json", by_cov[mid]
            if by_hist.get(mid):
                yield f"histories/{file_id(pid)}/{safe_file_part(mid)}.json", {"history": by_hist[mid]}
