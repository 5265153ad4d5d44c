"""Reading results into the report model: a Weval comparison file or its artefact folder, an AgentV
results JSONL, or a run journal (of a finished, unfinished or interrupted run).

What is in a file is read from its content, not its name. Facts a format does not keep are taken from
the run journal beside it when it is there (Weval comparison files record no tokens or durations;
AgentV rows record no prompt, so the prompt comes from the eval file the journal names). The eval file
is only parsed, never run. Every row is read defensively: a field this version does not know is kept
and shown as it is; a malformed row is skipped with a note, never a crash.
"""

from __future__ import annotations

import glob
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..appendlog import read_lines, read_records
from ..jsonio import loads
from ..model_store import item_ids
from ..results_kind import sniff
from . import costs
from .model import ERROR, NOT_SCORED, OK, PENDING, CellResult, Item, Point, RunResults, verdict_of
from .spool import MISSING, EntrySpool, SpooledCells, SpooledItems

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..run.journal.records import Generated, RunHeader  # loaded with the journal, when one is read

# Analyses of eval files already made, by resolved path: a run hands its own in (`evalspec run` writes
# its report right after the run), so the file is not parsed and checked a second time (a 2,000-test
# AgentV file: ~0.2 s). A path not in it is read as before.
Analyses = Mapping[Path, "Analysis"]


class OnlyThese(dict[Path, "Analysis"]):
    """Analyses given, and no other eval file read: for results in a folder that may be someone else's
    (the editor's "show results" of a cloned results folder), whose journal may name any file."""

IDEAL_MODELS = ("IDEAL_BENCHMARK", "ideal")
_NUMBERS = (int, float)  # exactly: JSON numbers (`type(x) in` is faster than isinstance and excludes bool)


class ResultsError(Exception):
    """A path that is not a results file evalspec can report (the message says what it is instead)."""


def load_results(raw: str | Path, *, analyses: Analyses | None = None) -> RunResults:
    """A results file or folder as the report model. `analyses`: eval files already analysed (see
    `Analyses`), used instead of reading them again."""
    run = _load(raw, analyses)
    if run.wall is None:
        run.wall = _wall_time(run)
    return run


_WRITTEN = re.compile(r"_(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z)(?:_comparison)?\.json")


def _wall_time(run: RunResults) -> tuple[float, ...] | None:
    """Each session's wall time, from the run's database: the results' source itself, or the
    `<runLabel>.run.db` beside the results it wrote, unless that database holds a later run of the label
    (it started after these results were written)."""
    from ..run.journal.run_store import read_header, wall_time

    source = Path(run.source)
    if source.name.endswith(".run.db"):
        return wall_time(source)
    if not run.run_label:
        return None
    database = source.with_name(f"{run.run_label}.run.db")
    header = read_header(database, fingerprints=False)
    if header is None:
        return None
    written = _WRITTEN.search(source.name)
    started = header.started.replace(":", "-").replace(".", "-")
    if written and started and written.group(1) < started:
        return None
    return wall_time(database)


def _load(raw: str | Path, analyses: Analyses | None) -> RunResults:
    path = Path(raw).expanduser()
    if path.is_dir():
        return _load_folder(path, analyses)
    if not path.is_file():
        raise ResultsError(f"no such file or folder: {path}")
    kind = _sniff(path)
    try:
        if kind == "weval-journal":
            return _weval_from_journal(path, analyses)
        if kind == "agentv-journal":
            return _agentv_from_journal(path, analyses)
        if kind == "agentv-results":
            return _agentv_from_rows(path, analyses)
        if kind == "comparison" or path.suffix == ".json":
            if path.stat().st_size >= STREAM_FROM_BYTES:
                try:
                    run = _weval_streamed(path)
                except _Unusual:
                    run = None  # read whole below
                except ValueError as exc:
                    raise ResultsError(f"{path} is not a results file (not JSON: {exc})") from None
                if run is not None:
                    return run
            try:
                data = _read_json(path)
            except ValueError as exc:
                raise ResultsError(f"{path} is not a results file (not JSON: {exc})") from None
            if isinstance(data, dict) and "allFinalAssistantResponses" in data:
                return _weval_from_comparison(data, path)
    except OSError as exc:
        raise ResultsError(f"cannot read {path}: {exc}") from None
    except (TypeError, AttributeError, KeyError) as exc:  # JSON of an unexpected shape
        raise ResultsError(f"{path} does not have the shape of a results file ({type(exc).__name__}: {exc})") from None
    raise ResultsError(f"{path} is not a results file: expected a Weval comparison file (…_comparison.json) or "
                       "artefact folder, an AgentV results file (…jsonl) or an evalspec run database "
                       "(….run.db, for an unfinished run)")


def _read_json(path: Path) -> Any:
    return loads(path.read_bytes())


def _sniff(path: Path) -> str:
    """What a file holds (see results_kind); a `.json` file is taken for a comparison file unread."""
    if path.suffix == ".json":
        return "comparison"
    try:
        return sniff(path)
    except OSError as exc:
        raise ResultsError(f"cannot read {path}: {exc}") from None


def _load_folder(folder: Path, analyses: Analyses | None) -> RunResults:
    """A Weval artefact folder (core.json), else the newest results file under the folder."""
    if (folder / "core.json").is_file():
        return _weval_from_artefacts(folder)
    found = [p for pattern in ("*_comparison.json", "*.jsonl") for p in folder.rglob(pattern)
             if not p.name.endswith((".journal.jsonl", ".prev.jsonl")) and ".cache" not in p.parts]
    if not found:
        journals = sorted([p for pattern in ("*.run.db", "*.journal.jsonl") for p in folder.rglob(pattern)],
                          key=lambda p: p.stat().st_mtime)
        if journals:
            return load_results(journals[-1], analyses=analyses)
        raise ResultsError(f"{folder} holds no results (no …_comparison.json, core.json, results .jsonl or journal)")
    return load_results(max(found, key=lambda p: p.stat().st_mtime), analyses=analyses)


# --- Weval ----------------------------------------------------------------------------------------

def _messages(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if isinstance(value, list):
        return [{"role": str(m.get("role", "")), "content": m.get("content")} for m in value if isinstance(m, dict)]
    return []


def _num(value: Any) -> float | None:
    return float(value) if type(value) in _NUMBERS else None


_PA_KNOWN = frozenset({"keyPointText", "coverageExtent", "reflection", "error", "multiplier", "isInverted", "pathId",
                       "judgeModelId", "judgeLog", "individualJudgements", "citation"})


def _weval_points(assessments: Any) -> list[Point]:
    """Point assessments as points. Kept lean: a 20,000-prompt × 5-model run has 300,000 of them."""
    if not isinstance(assessments, list):
        return []
    points: list[Point] = []
    for pa in assessments:
        if not isinstance(pa, dict):
            continue
        score = pa.get("coverageExtent")
        if type(score) not in _NUMBERS:
            score = None
        error = pa.get("error")
        reflection = pa.get("reflection")
        # (a subset test allocates nothing: most assessments hold only known fields)
        extra = {} if pa.keys() <= _PA_KNOWN else {k: pa[k] for k in pa.keys() - _PA_KNOWN}
        if pa.get("judgeModelId"):
            extra["judge"] = pa["judgeModelId"]
        if pa.get("citation"):
            extra["citation"] = pa["citation"]
        judged = pa.get("individualJudgements")
        if judged and isinstance(judged, list):  # each judge's own reflection says more than the consensus
            # Each judge by its model's short name (`gemini-2.5-flash`, not `holistic-gemini-2-5-flash(openrouter:
            # google/gemini-2.5-flash)` three times over); the lines name them, so the consensus id goes.
            extra.pop("judge", None)
            reflection = "\n".join(
                f"{_judge_short(str(j.get('judgeModelId') or 'judge'))}: {_score_text(j.get('coverageExtent'))}"
                f" — {j.get('reflection') or j.get('error') or ''}".rstrip(" —") for j in judged if isinstance(j, dict))
        weight = pa.get("multiplier")
        path = pa.get("pathId")
        points.append(Point(
            str(pa.get("keyPointText") or ""), score,
            float(weight) if type(weight) in _NUMBERS else 1.0,  # type: ignore[arg-type]
            "should_not" if pa.get("isInverted") else "should",
            str(reflection) if reflection is not None and reflection != error else None,
            _reason(str(error) if error else None) if score is None else None,
            [], [], None if path is None else str(path), True, None, extra))
    _mark_alternative_paths(points)
    return points


def _judge_short(judge_id: str) -> str:
    """`holistic-gemini-2-5-flash(openrouter:google/gemini-2.5-flash)` → `gemini-2.5-flash`."""
    inner = judge_id[judge_id.find("(") + 1:judge_id.rfind(")")] if judge_id.endswith(")") and "(" in judge_id else judge_id
    return inner.rsplit("/", 1)[-1].split(":", 1)[-1] if "/" in inner else inner.split(":", 1)[-1] or judge_id


def _reason(text: str | None) -> str:
    """Why a point was not scored, without the "not scored:" the page and the tables put before it."""
    if not text:
        return "no score recorded"
    return text[len("not scored:"):].strip() or text if text.lower().startswith("not scored:") else text


def _score_text(value: Any) -> str:
    x = _num(value)
    return "no score" if x is None else f"{x:.2f}"


def _mark_alternative_paths(points: list[Point]) -> None:
    """Weval's OR blocks: only the best path counts (the reference's two-halves aggregation)."""
    paths: dict[str, list[float]] = {}
    for p in points:
        if p.path is not None and p.score is not None:
            paths.setdefault(p.path, []).append(p.score)
    if len(paths) < 2:
        return
    best = max(paths, key=lambda k: sum(paths[k]) / len(paths[k]))
    for p in points:
        if p.path is not None and p.path != best:
            p.counted = False


def _weval_cell(answer: Any, error: Any, coverage: Any, history: Any, methods: list[str]) -> CellResult:
    """A cell from its parts as a results file holds them. `coverage` may be already digested (a
    tuple from `_coverage_digest`: the streamed reading keeps no raw coverage), `history` already
    reduced by `_long_history`."""
    cell = CellResult()
    if isinstance(answer, str):
        cell.answer = answer
    long_history = _long_history(history)
    if long_history is not None:
        cell.history = _messages(long_history)
    if error:
        cell.status, cell.error = ERROR, str(error)
        if cell.answer and cell.answer.startswith("<<error>>"):
            cell.answer = None
        return cell
    digest = coverage if isinstance(coverage, tuple) else _coverage_digest(coverage) if isinstance(coverage, dict) else None
    if digest is not None:
        cell.points, cell.score, message, extra = digest
        if message is not None:
            if message.startswith("Generation failed"):
                cell.status, cell.error = ERROR, message
                return cell
            cell.extra["coverage error"] = message
        cell.extra.update(extra)
    elif "llm-coverage" not in methods:
        cell.extra["not scored"] = "the run did not use llm-coverage (no points were scored)"
    if cell.score is None:
        cell.status = NOT_SCORED
    cell.verdict = verdict_of(cell.score)
    return cell


CoverageDigest = tuple[list[Point], float | None, str | None, dict[str, Any]]


def _coverage_digest(coverage: dict[str, Any]) -> CoverageDigest:
    """What a cell keeps of a coverage result: its points, score, error (when it has no score) and
    the fields this version does not know."""
    score = _num(coverage.get("avgCoverageExtent"))
    message = str(coverage["error"]) if coverage.get("error") and score is None else None
    extra = {k: v for k, v in coverage.items()
             if k not in ("pointAssessments", "avgCoverageExtent", "keyPointsCount", "error")}
    return _weval_points(coverage.get("pointAssessments")), score, message, extra


def _long_history(history: Any) -> list[Any] | None:
    """A conversation worth showing whole (more than one assistant turn), else None."""
    if isinstance(history, list) and sum(1 for m in history if isinstance(m, dict) and m.get("role") == "assistant") > 1:
        return history
    return None


def _ordered_prompts(data: dict[str, Any]) -> list[Item]:
    cfg = _dict(data.get("config"))
    by_id: dict[str, dict[str, Any]] = {}
    for p in cfg.get("prompts") or []:
        if isinstance(p, dict) and p.get("id") is not None:
            by_id[str(p["id"])] = p
    return _items(by_id, _dict(data.get("promptContexts")), data.get("promptIds"))


def _items(by_id: dict[str, dict[str, Any]], contexts: dict[str, Any], prompt_ids: Any) -> list[Item]:
    """The prompts in the config's order, then any other id the file lists."""
    ids = [*by_id] + [str(i) for i in prompt_ids or [] if str(i) not in by_id]
    items = []
    for pid in ids:
        p = by_id.get(pid, {})
        messages = _messages(contexts.get(pid)) or _messages(p.get("messages"))
        items.append(Item(pid, messages, _str(p.get("description")), _str(p.get("idealResponse"))))
    return items


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _weval_from_comparison(data: dict[str, Any], path: Path, *, responses: Any = None, coverage: Any = None,
                           histories: Any = None) -> RunResults:
    evaluation = _dict(data.get("evaluationResults"))
    return _weval_run(
        data, path, _ordered_prompts(data),
        responses=responses if responses is not None else data.get("allFinalAssistantResponses") or {},
        coverage=coverage if coverage is not None else evaluation.get("llmCoverageScores") or {},
        histories=histories if histories is not None else data.get("fullConversationHistories") or {},
        errors=_dict(data.get("errors")))


def blueprint_order(effective: list[str], config: Any) -> list[str]:
    """The effective models (`openai:x[temp:0.5][sp_idx:1]`…) in the order the run planned them and the
    terminal lists them: by the blueprint's `models`, then its `temperatures`, then the system prompt's
    index (the comparison file lists them sorted). Ids it cannot place keep their order, after the rest."""
    from ..run.plan.replay import without_suffixes

    config = config if isinstance(config, dict) else {}
    rank: dict[str, int] = {}
    for m in config.get("models") if isinstance(config.get("models"), list) else []:
        name = m.get("id") if isinstance(m, dict) else m
        if isinstance(name, str):
            rank.setdefault(name, len(rank))
    temps = config.get("temperatures") if isinstance(config.get("temperatures"), list) else []

    def key(model: str) -> tuple[int, int, int]:
        base = without_suffixes(model)
        temp_rank = sp_idx = 0
        for suffix in model[len(base) + 1:-1].split("]["):
            name, _, value = suffix.partition(":")
            try:
                if name == "temp":
                    temp_rank = next((n for n, t in enumerate(temps) if float(t) == float(value)), len(temps))
                elif name == "sp_idx":
                    sp_idx = int(value)
            except (TypeError, ValueError):
                pass
        return rank.get(base, len(rank)), temp_rank, sp_idx
    return sorted(effective, key=key)


def _weval_run(data: dict[str, Any], path: Path, items: list[Item] | SpooledItems, *, responses: Any = None,
               coverage: Any = None, histories: Any = None, errors: Any = None, spool: EntrySpool | None = None
               ) -> RunResults:
    """The run of a comparison file: `data` its fields (the big maps are read from the others), `items`
    its prompts; per prompt id, per model: `responses`, `coverage`, `histories`, `errors`, or all of
    them in `spool` (a streamed reading: the cells are made when read)."""
    models = blueprint_order([str(m) for m in data.get("effectiveModels") or [] if m not in IDEAL_MODELS],
                             data.get("config"))
    methods = [str(m) for m in data.get("evalMethodsUsed") or []]
    run = RunResults(kind="weval", title=str(data.get("configTitle") or data.get("configId") or path.name),
                     source=str(path), run_label=str(data.get("runLabel") or ""),
                     timestamp=str(data.get("timestamp") or ""), models=models, items=items,  # type: ignore[arg-type]
                     eval_file=_str(data.get("sourceBlueprintFileName")))
    run.system_prompts = {str(k): v for k, v in (data.get("modelSystemPrompts") or {}).items()}
    if spool is not None:
        assert isinstance(items, SpooledItems)
        run.cells = SpooledCells(items.ids(), models, _spooled_cell(spool, methods),  # type: ignore[assignment]
                                 numbers=spool.ids)
    else:
        for item in run.items:
            for model in models:
                cell = _weval_cell((responses.get(item.id) or {}).get(model), (errors.get(item.id) or {}).get(model),
                                   (coverage.get(item.id) or {}).get(model), (histories.get(item.id) or {}).get(model),
                                   methods)
                run.cells[(item.id, model)] = cell
    _usage_from_journal(run, path.parent)
    run.costs = costs.beside(path) or costs.from_comparison(data.get("evalspecCost"))
    return run


_CELL_MAPS = ("allFinalAssistantResponses", "errors", "coverage", "fullConversationHistories")


def _spooled_cell(spool: EntrySpool, methods: list[str]) -> Any:
    """Makes a cell from the spool's entries, as `_weval_run` makes it from the maps (the entries of the
    prompt read last are kept: the page reads a prompt's models one after the other)."""
    last: list[Any] = [None, ()]

    def make(pid: str, model: str) -> CellResult:
        if last[0] != pid:
            found = [spool.get(name, pid) for name in _CELL_MAPS]
            last[0], last[1] = pid, [v if v is not MISSING and v else {} for v in found]
        responses, errors, coverage, histories = last[1]
        return _weval_cell(responses.get(model), errors.get(model), coverage.get(model), histories.get(model),
                           methods)

    return make


# Comparison files from this size on are read entry by entry (`_weval_streamed`); smaller ones at once,
# which is faster (orjson) and, below this size, costs little memory.
STREAM_FROM_BYTES = 8 << 20

# The fields of a comparison file that grow with the run, read entry by entry.
_BIG = frozenset({"config", "promptContexts", "allFinalAssistantResponses", "fullConversationHistories",
                  "evaluationResults", "errors"})


class _Unusual(Exception):
    """A comparison file with a shape the streamed reading does not follow (read it whole instead)."""


def _weval_streamed(path: Path) -> RunResults | None:
    """`_weval_from_comparison(loads(file))` without holding the parsed file: each prompt's entries go to
    a spool on disk as they are read (report/spool.py), and the run's items and cells are made from it
    when read (a 100,000-prompt file parsed whole was ~1.5 GB, its entries and cells in memory ~1 GB).
    None for JSON that is not a comparison file; raises _Unusual for one this reading does not follow."""
    from ..json_stream import JsonReader
    from .spool import EntrySpool

    data: dict[str, Any] = {}
    spool = EntrySpool()
    config_ids: dict[str, None] = {}  # config.prompts' ids, in order (a repeated id keeps its first place)
    with path.open("rb") as f:
        reader = JsonReader(f)
        if reader.peek() != "{":
            reader.value()
            return None
        for key in reader.entries():
            if key not in _BIG:
                data[key] = reader.value()
            elif key == "config":
                config_ids, data["config"] = _streamed_config(reader, spool)
            elif key == "evaluationResults":
                data[key] = True  # present (what it holds is read here)
                spool.drop("coverage")
                if reader.peek() != "{":
                    reader.value()
                    continue
                for sub in reader.entries():
                    if sub == "llmCoverageScores" and reader.peek() == "{":
                        spool.drop("coverage")
                        for pid in reader.entries():
                            spool.put("coverage", pid, _by_model(reader))
                    else:
                        value = reader.value()
                        if sub == "llmCoverageScores":
                            if value:
                                raise _Unusual(key)
                            spool.drop("coverage")
            else:
                data[key] = True
                spool.drop(key)
                if reader.peek() != "{":
                    if reader.value() and key not in ("errors", "promptContexts"):  # (those two: taken as {})
                        raise _Unusual(key)  # the whole read would fail on it (or use it as a list)
                    continue
                for pid in reader.entries():
                    if key == "promptContexts":
                        spool.put(key, pid, _messages(reader.value()))
                    else:
                        spool.put(key, pid, _by_model(reader))
        reader.end()
    if "allFinalAssistantResponses" not in data:
        return None
    spool.flush()
    # (promptIds goes now: 100,000 ids were held through the rest of the reading)
    listed = [str(i) for i in data.pop("promptIds", None) or []]
    ids = list(config_ids) + [i for i in listed if i not in config_ids]
    del listed
    # (a repeated listed id that is not in the config: kept twice, as `_items` keeps it)

    def item(pid: str) -> Item:
        p = spool.get("config", pid)
        p = p if p is not MISSING else {}
        context = spool.get("promptContexts", pid)
        messages = _messages(context if context is not MISSING else None) or _messages(p.get("messages"))
        return Item(pid, messages, _str(p.get("description")), _str(p.get("idealResponse")))

    items = SpooledItems(ids, item)
    return _weval_run(data, path, items, spool=spool)


def _streamed_config(reader: Any, spool: Any) -> tuple[dict[str, None], dict[str, Any]]:
    """config.prompts into the spool ("config": what an item shows: description, ideal, messages);
    their ids in order, and the config's `models` and `temperatures`."""
    ids: dict[str, None] = {}
    rest: dict[str, Any] = {}
    if reader.peek() != "{":
        reader.value()
        return {}, rest
    for key in reader.entries():
        if key != "prompts" or reader.peek() != "[":
            value = reader.value()
            if key in ("models", "temperatures"):
                rest[key] = value
            if key == "prompts":
                ids = {}
                spool.drop("config")
            continue
        ids = {}
        spool.drop("config")
        for _ in reader.elements():
            p = reader.value()
            if isinstance(p, dict) and p.get("id") is not None:
                pid = str(p["id"])
                ids.setdefault(pid)
                spool.put("config", pid, {k: p[k] for k in ("description", "idealResponse") if k in p} | {
                    "messages": _messages(p.get("messages"))})
    return ids, rest


def _by_model(reader: Any) -> dict[str, Any]:
    """One prompt's entry of a per-prompt map: model → value."""
    value = reader.value()
    if not value:
        return {}
    if not isinstance(value, dict):
        raise _Unusual("an entry that is not an object")
    return value


def _weval_from_artefacts(folder: Path) -> RunResults:
    from ..run.write.weval_results import file_id
    from ..weval.ids import safe_file_part

    core = _read_json(folder / "core.json")
    if not isinstance(core, dict):
        raise ResultsError(f"{folder / 'core.json'} is not a Weval core.json")
    responses: dict[str, Any] = {}
    coverage: dict[str, Any] = {}
    histories: dict[str, Any] = {}
    models = [str(m) for m in core.get("effectiveModels") or []]
    for pid in [str(p) for p in core.get("promptIds") or []]:
        fid = file_id(pid)
        got = _optional_json(folder / "responses" / f"{fid}.json")
        if isinstance(got, dict):
            responses[pid] = got
        for model in models:
            part = safe_file_part(model)
            cov = _optional_json(folder / "coverage" / fid / f"{part}.json")
            if cov is not None:
                coverage.setdefault(pid, {})[model] = cov
            hist = _optional_json(folder / "histories" / fid / f"{part}.json")
            if isinstance(hist, dict):
                histories.setdefault(pid, {})[model] = hist.get("history")
    return _weval_from_comparison(core, folder, responses=responses, coverage=coverage, histories=histories)


def _optional_json(path: Path) -> Any:
    try:
        return _read_json(path)
    except (OSError, ValueError):
        return None


def _usage_from_journal(run: RunResults, folder: Path) -> None:
    """Tokens and durations: a comparison file has none, the run's journal beside it does."""
    if not run.run_label:
        return
    from ..run.journal.records import Generated
    from ..run.journal.run_store import read_header, records

    beside = [*folder.glob(f"{glob.escape(run.run_label)}*.run.db"),
              *folder.glob(f"{glob.escape(run.run_label)}*.journal.jsonl")]
    for journal in sorted(beside):
        for rec in records(journal, Generated):
            if not isinstance(rec, Generated):
                continue
            if isinstance(run.cells, SpooledCells):  # cells made when read: the sums wait beside them
                run.cells.add_usage(rec.cell.item, rec.cell.model, rec.usage, rec.ms, rec.cost_usd)
                continue
            cell = run.cells.get((rec.cell.item, rec.cell.model))
            if cell is None:
                continue
            _add_usage(cell, rec)
        if run.eval_file is None or "/" not in run.eval_file:
            header = read_header(journal, fingerprints=False)
            if header is not None and header.file:
                run.eval_file = header.file
        return


def _add_usage(cell: CellResult, rec: Generated) -> None:
    if rec.usage is not None:
        cell.tokens_in = (cell.tokens_in or 0) + rec.usage[0]
        cell.tokens_out = (cell.tokens_out or 0) + rec.usage[1]
    if rec.ms is not None:
        cell.duration_ms = (cell.duration_ms or 0.0) + rec.ms
    if rec.cost_usd is not None:  # journals that record a priced call's cost
        cell.cost_usd = (cell.cost_usd or 0.0) + rec.cost_usd


def _weval_from_journal(path: Path, analyses: Analyses | None = None) -> RunResults:
    from ..run.journal.run_store import load as load_journal

    state = load_journal(path)
    header = state.header
    eval_file = (header.file or None) if header is not None else None
    run = RunResults(kind="weval", title=(header.config_id if header else None) or path.name, source=str(path),
                     run_label=header.run_label if header else "", timestamp=header.started if header else "",
                     eval_file=eval_file, complete=state.done)
    items = _blueprint_items(eval_file, "weval", analyses)
    seen_items: dict[str, None] = {}
    seen_models: dict[str, None] = {}
    for done in [*state.turns, *state.failures, *state.scores]:
        seen_items.setdefault(done.item)
        seen_models.setdefault(done.model)
    systems = header.systems if header is not None else None
    if systems is not None:  # the plan's models, in the blueprint's order, first
        seen_models = dict.fromkeys([*map(str, systems), *seen_models])
        run.system_prompts = {str(k): v for k, v in systems.items()}
    run.models = list(seen_models)
    if items is None:
        items = [Item(i) for i in seen_items]
        run.notes.append(f"the blueprint {eval_file} could not be read: prompts are shown by id only")
    else:
        known = {i.id for i in items}
        items += [Item(i) for i in seen_items if i not in known]
    run.items = items
    for item in run.items:
        for model in run.models:
            key = (item.id, model)
            cell_key = _cell_key(item.id, model)
            turns = state.turns.get(cell_key) or {}
            failure = state.failures.get(cell_key)
            scored = state.scores.get(cell_key)
            if not turns and failure is None and scored is None:
                if not run.complete:  # an unfinished run: the cell is still to run (--resume), not absent
                    run.cells[key] = CellResult(status=PENDING)
                continue
            answer = turns[max(turns)].text if turns else None
            if failure is not None and not turns:
                cell = CellResult(status=ERROR, error=failure.error or "failed")
            elif scored is not None:
                cell = _weval_cell(answer, None, scored.result, None, ["llm-coverage"])
            else:
                cell = CellResult(status=PENDING, answer=answer)
            for n in sorted(turns):
                _add_usage(cell, turns[n])
            run.cells[key] = cell
    run.costs = costs.from_usage_records(state.usage)
    _note_unfinished(run)
    return run


def _cell_key(item: str, model: str) -> Any:
    from ..run.events import Cell

    return Cell(item, model)


def _note_unfinished(run: RunResults) -> None:
    if run.complete:
        return
    total = len(run.items) * len(run.models)
    done = sum(1 for c in run.cells.values() if c.status != PENDING)
    run.notes.insert(0, f"unfinished run (read from its journal): {done:,} of {total:,} cell(s) have a result")


# --- AgentV ---------------------------------------------------------------------------------------

_ROW_KNOWN = {"timestamp", "test_id", "dataset", "conversation_id", "score", "hits", "misses", "answer", "target",
              "reasoning", "token_usage", "cost_usd", "duration_ms", "scores", "error", "execution_status",
              "verdict", "eval_id", "input", "not_scored"}  # not_scored: each point says why
_SCORE_KNOWN = {"name", "type", "score", "weight", "verdict", "hits", "misses", "reasoning"}


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def agentv_cell(row: dict[str, Any]) -> CellResult:
    """One AgentV result row. Unknown fields (trials, tool traces, newer fields) are kept in `extra`."""
    cell = CellResult()
    answer = row.get("answer")
    cell.answer = answer if isinstance(answer, str) else (None if answer is None else json.dumps(answer))
    usage = row.get("token_usage")
    if isinstance(usage, dict):
        cell.tokens_in, cell.tokens_out = _int(usage.get("input")), _int(usage.get("output"))
    cell.cost_usd = _num(row.get("cost_usd"))
    cell.duration_ms = _num(row.get("duration_ms"))
    for s in row.get("scores") or []:
        if not isinstance(s, dict):
            continue
        score = _num(s.get("score"))
        reasoning = _str(s.get("reasoning"))
        skipped = score is None
        weight = _num(s.get("weight"))
        cell.points.append(Point(
            text=str(s.get("name") or s.get("type") or "assertion"), score=score,
            weight=1.0 if weight is None else weight, kind=str(s.get("type") or ""),
            note=None if skipped else reasoning,
            not_scored=_reason(reasoning) if skipped else None,
            hits=_strings(s.get("hits")), misses=_strings(s.get("misses")),
            verdict=_str(s.get("verdict")) if not skipped else None,
            extra={k: v for k, v in s.items() if k not in _SCORE_KNOWN}))
    if not cell.points and (row.get("hits") or row.get("misses")):
        cell.points.append(Point(text="result", score=_num(row.get("score")), hits=_strings(row.get("hits")),
                                 misses=_strings(row.get("misses")), note=_str(row.get("reasoning"))))
    cell.extra = {k: v for k, v in row.items() if k not in _ROW_KNOWN and v not in (None, [], {})}
    if row.get("execution_status") == "execution_error" or (row.get("error") and not cell.answer):
        cell.status, cell.error = ERROR, str(row.get("error") or "execution error (no message recorded)")
        return cell
    if row.get("error"):
        cell.error = str(row["error"])
    cell.score = _num(row.get("score"))
    verdict = _str(row.get("verdict"))
    cell.verdict = verdict if verdict in ("pass", "borderline", "fail") else verdict_of(cell.score)
    if cell.score is None:
        cell.status = NOT_SCORED
    return cell


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _agentv_run(path: Path, rows: list[dict[str, Any]], header: RunHeader | None,
                analyses: Analyses | None = None) -> RunResults:
    items: dict[str, None] = {}
    models: dict[str, None] = {}
    cells: dict[tuple[str, str], CellResult] = {}
    skipped = 0
    for row in rows:
        if row.get("test_id") is None or row.get("target") is None:
            skipped += 1
            continue
        key = (str(row["test_id"]), str(row["target"]))
        items.setdefault(key[0])
        models.setdefault(key[1])
        cells[key] = agentv_cell(row)  # a later row for the same cell wins, as in a journal
    dataset = next((str(r["dataset"]) for r in rows if r.get("dataset")), None)
    if header is None:
        header = _journal_header_beside(path)
    eval_file = (header.file or None) if header is not None else None
    run = RunResults(kind="agentv", title=dataset or path.stem, source=str(path),
                     run_label=header.run_label if header is not None else "",
                     timestamp=(header.started if header is not None else "") or
                     str((rows[0].get("timestamp") if rows else "") or ""),
                     eval_file=eval_file, models=list(models), cells=cells)
    run.costs = costs.beside(path) or costs.from_rows(rows)
    defined = _blueprint_items(eval_file, "agentv", analyses)
    if defined is None:
        run.items = [Item(i) for i in items]
        run.notes.append("the tests' inputs are not in AgentV result rows and the eval file was not found: "
                         "tests are shown by id only")
    else:
        known = {i.id for i in defined}
        run.items = [i for i in defined if i.id in items] + [Item(i) for i in items if i not in known]
    if skipped:
        run.notes.append(f"{skipped} row(s) without test_id or target were skipped")
    return run


def _journal_header_beside(results: Path) -> RunHeader | None:
    """`<runLabel>_<timestamp>.jsonl` → the run's `<runLabel>.run.db` in the same folder (or an earlier
    evalspec's `<runLabel>.journal.jsonl`)."""
    from ..run.journal.run_store import read_header

    label = results.stem.rsplit("_", 1)[0]
    return read_header(results.with_name(f"{label}.run.db"), fingerprints=False) or \
        read_header(results.with_name(f"{label}.journal.jsonl"), fingerprints=False)


def _agentv_from_rows(path: Path, analyses: Analyses | None = None) -> RunResults:
    if path.stat().st_size >= STREAM_FROM_BYTES:
        return _agentv_streamed(path, analyses)
    return _agentv_run(path, list(read_records(path)), None, analyses)


def _agentv_streamed(path: Path, analyses: Analyses | None = None) -> RunResults:
    """`_agentv_run` of a big results file, read a row at a time: each row goes to a spool on disk
    (report/spool.py: a map per target, keyed by test id, a later row for the same cell replacing the
    earlier one), and the run's items and cells are made from it and from the suite's tests (a big suite's
    on disk, agentv/test_store.py) when the page reads them. The same run, field for field."""
    spool = EntrySpool()
    models: dict[str, None] = {}
    skipped = 0
    dataset: str | None = None
    first: dict[str, Any] | None = None
    for line in read_lines(path):  # (read_records, keeping each row's line: the spool holds it as it is)
        try:
            row = loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict):
            continue
        if first is None:
            first = row
        if dataset is None and row.get("dataset"):
            dataset = str(row["dataset"])
        if row.get("test_id") is None or row.get("target") is None:
            skipped += 1
            continue
        target = str(row["target"])
        models.setdefault(target)
        spool.put_bytes(target, str(row["test_id"]), line)
    spool.flush()
    header = _journal_header_beside(path)
    eval_file = (header.file or None) if header is not None else None
    ids = list(spool.ids)  # the tests in the order of their first row
    run = RunResults(kind="agentv", title=dataset or path.stem, source=str(path),
                     run_label=header.run_label if header is not None else "",
                     timestamp=(header.started if header is not None else "") or
                     str(((first or {}).get("timestamp")) or ""),
                     eval_file=eval_file, models=list(models))
    run.costs = costs.beside(path) or costs.from_rows(read_records(path))
    tests = _suite_tests(eval_file, analyses)
    if tests is None:
        run.items = SpooledItems(ids, Item)  # type: ignore[assignment]
        run.notes.append("the tests' inputs are not in AgentV result rows and the eval file was not found: "
                         "tests are shown by id only")
    else:
        defined = item_ids(tests)
        known = set(defined)
        ids = [i for i in defined if i in spool.ids] + [i for i in ids if i not in known]
        del known
        run.items = SpooledItems(ids, _test_item(tests, defined))  # type: ignore[assignment]
    run.cells = _RowCells(ids, list(models), spool)  # type: ignore[assignment]
    if skipped:
        run.notes.append(f"{skipped} row(s) without test_id or target were skipped")
    return run


def _eval_analysis(eval_file: str | None, analyses: Analyses | None) -> Any:
    """The analysis of the eval file a run names (the one given, else parsed: nothing in it is run), or None."""
    if isinstance(analyses, OnlyThese):
        try:
            return analyses.get(Path(eval_file).resolve()) if eval_file else None
        except (OSError, ValueError, RuntimeError):  # a NUL, a link loop
            return None
    if not eval_file or not Path(eval_file).is_file():
        return None
    analysis = analyses.get(Path(eval_file).resolve()) if analyses else None
    if analysis is None:
        try:
            from ..analysis import analyze_file

            analysis = analyze_file(Path(eval_file))
        except (OSError, ValueError):
            return None
    return analysis


def _suite_tests(eval_file: str | None, analyses: Analyses | None) -> Sequence[Any] | None:
    """The tests of the suite a run names, as `_blueprint_items` finds them (a list or a TestStore)."""
    analysis = _eval_analysis(eval_file, analyses)
    return analysis.suite.tests if analysis is not None and analysis.suite is not None else None


def _agentv_item(t: Any) -> Item:
    return Item(t.id, [{"role": m.role, "content": m.text()} for m in t.input_messages], t.criteria,
                t.reference_answer or None)


def _test_item(tests: Sequence[Any], ids: list[str]) -> Any:
    """Makes the report's item of a test id from the suite's tests, reading them in order (the page's)
    without an index of 100,000 ids unless it reads out of order; an id the suite lacks: the id alone.
    A store's test (agentv/test_store.py) is read as what the item shows only, its assertions not decoded."""
    from ..agentv.test_store import TestStore

    last = [-1]
    index: dict[str, int] = {}
    shown = tests.shown if isinstance(tests, TestStore) else None

    def make(tid: str) -> Item:
        k = last[0] + 1
        if not (k < len(ids) and ids[k] == tid):
            if not index:
                index.update((i, n) for n, i in enumerate(ids))
            found = index.get(tid)
            if found is None:
                return Item(tid)
            k = found
        last[0] = k
        if shown is not None:
            t = shown(k)
            return Item(tid, [{"role": m.role, "content": m.text()} for m in t.input_messages], t.criteria,
                        t.reference_answer or None)
        return _agentv_item(tests[k])

    return make


class _RowCells(SpooledCells):
    """The cells of a streamed AgentV results file: those with a row only (a dict of the rows had no key
    for a test a target did not answer)."""

    def __init__(self, item_ids: list[str], models: list[str], spool: EntrySpool) -> None:
        super().__init__(item_ids, models, self._cell, numbers=spool.ids)
        self._spool = spool
        self._count: int | None = None

    def __getitem__(self, key: tuple[str, str]) -> CellResult:
        if not self.__contains__(key):
            raise KeyError(key)
        return super().__getitem__(key)

    def get(self, key: tuple[str, str], default: Any = None) -> Any:  # (Mapping.get: a KeyError a missing cell)
        return super().__getitem__(key) if self.__contains__(key) else default

    def _cell(self, tid: str, model: str) -> CellResult:
        line = self._spool.get_bytes(model, tid)
        if line is None:  # (only cells the spool has are made)
            raise KeyError((tid, model))
        return agentv_cell(loads(line))

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) and self._spool.has(key[1], key[0])  # type: ignore[index]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return (key for key in super().__iter__() if self._spool.has(key[1], key[0]))

    def __len__(self) -> int:
        if self._count is None:
            self._count = sum(1 for _ in self)
        return self._count


def _agentv_from_journal(path: Path, analyses: Analyses | None = None) -> RunResults:
    from ..run.journal.run_store import load as load_journal

    state = load_journal(path)
    rows = [rec.result for rec in state.scores.values()]
    run = _agentv_run(path, rows, state.header, analyses)
    run.costs = costs.from_usage_records(state.usage) or run.costs  # what was paid, batch prices included
    run.complete = state.done
    for cell_key, turns in state.turns.items():  # answered, not yet scored
        key = (cell_key.item, cell_key.model)
        if key in run.cells or not turns:
            continue
        if cell_key.item not in {i.id for i in run.items}:
            run.items.append(Item(cell_key.item))
        if cell_key.model not in run.models:
            run.models.append(cell_key.model)
        last = turns[max(turns)]
        cell = CellResult(status=PENDING, answer=last.text)
        _add_usage(cell, last)
        run.cells[key] = cell
    if not run.complete:
        defined = _blueprint_items(run.eval_file, "agentv", analyses)
        known = {i.id for i in run.items}
        run.items += [i for i in defined or [] if i.id not in known]
        for item in run.items:  # still to run (--resume), not absent from the run
            for model in run.models:
                run.cells.setdefault((item.id, model), CellResult(status=PENDING))
    _note_unfinished(run)
    return run


def _blueprint_items(eval_file: str | None, kind: str, analyses: Analyses | None = None) -> list[Item] | None:
    """The prompts or tests of the eval file a run names (parsed only, nothing in it is run), or None."""
    analysis = _eval_analysis(eval_file, analyses)
    if analysis is None:
        return None
    if kind == "weval" and analysis.blueprint is not None:
        return [Item(p.id, [{"role": m.role, "content": m.content} for m in p.messages], p.description, p.ideal)
                for p in analysis.blueprint.prompts]
    if kind == "agentv" and analysis.suite is not None:
        return [_agentv_item(t) for t in analysis.suite.tests]
    return None


def cell_from_details(kind: str, details: dict[str, Any], score: float | None = None) -> CellResult:
    """A cell from a run event's details (a Weval CoverageResult or an AgentV result row)."""
    if kind == "agentv":
        return agentv_cell(details)
    cell = _weval_cell(None, None, details, None, ["llm-coverage"])
    if cell.score is None and score is not None:
        cell.score, cell.status, cell.verdict = score, OK, verdict_of(score)
    return cell
