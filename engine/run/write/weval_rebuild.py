"""A Weval shard's comparison object rebuilt from its run database, for `evalspec merge` (run/merge.py).

A shard run keeps in its database (`exports` row `weval`, written when it writes its results) what the
comparison file holds besides its cells: the blueprint-derived head (`config`, `promptContexts`,
`modelSystemPrompts`, the similarity matrices …), each prompt's ideal, and each cell's system prompt where
it is not its model's. `weval_comparison` puts the cells back from the tables (`answers`, `failures`,
`scores`, `not_run`, `key_points`) as the run's writer did (write/weval.py, weval_stages.py): the object
equals the one the shard's comparison file holds, parsed. None when the database has no such head (a
shard of an earlier evalspec, or a replay's): run/merge.py reads the results file then.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...jsonio import dumps_bytes, loads
from ...providers.redact import redact_bytes
from .files import compact_chunks
from .weval_results import IDEAL_MODEL_ID

HEAD = "weval"
# The comparison file's fields made of the cells (rebuilt from the tables), not kept in the head.
PER_CELL = ("extractedKeyPoints", "allFinalAssistantResponses", "fullConversationHistories", "errors")


def weval_head(plan: Any, full: dict[str, Any]) -> bytes:
    """The head of `full` (the comparison object just written) as the `exports` row keeps it."""
    systems: dict[str, dict[str, str | None]] = {}
    shown = full.get("modelSystemPrompts") or {}
    for t in plan.tasks:
        if t.system != shown.get(t.cell.model):
            systems.setdefault(t.cell.item, {})[t.cell.model] = t.system
    parts: list[bytes] = []
    for key, value in full.items():
        if key in PER_CELL:
            continue
        if key == "evaluationResults":
            value = {k: v for k, v in value.items() if k != "llmCoverageScores"}
        parts.append(dumps_bytes(key) + b":" + b"".join(compact_chunks(value)))
    head = b"{" + b",".join(parts) + b"}"
    ideals = {p.id: p.ideal for p in plan.prompts if p.ideal}
    body = b'{"head":' + head + b',"ideals":' + dumps_bytes(ideals) + b',"systems":' + dumps_bytes(systems) + b"}"
    return zlib.compress(redact_bytes(body), 6)


class Unreadable(Exception):
    """The database holds a head that does not read."""


def weval_comparison(path: Path, manifest: dict[str, Any]) -> dict[str, Any] | None:
    """The comparison object of the shard whose manifest is `manifest`, from its database at `path`; None
    when the database has no head of that run. Raises OSError, sqlite3.Error, NotADatabase, Unreadable."""
    from ..journal import database as db

    with db.reading(path) as conn:
        header = db.header(conn, fingerprints=False)
        if header is None or header.kind != "weval" or not db.finished(conn)[0]:
            return None
        body = db.export_head(conn, HEAD)
        if body is None:
            return None
        rows = list(db.cell_rows(conn))
        key_points = {kp.prompt_id: list(kp.points) for kp in db.key_points(conn) if kp.points}
    try:
        data = loads(zlib.decompress(body))
    except (zlib.error, ValueError) as exc:
        raise Unreadable(f"its export head does not read ({exc})") from None
    if not (isinstance(data, dict) and isinstance(data.get("head"), dict) and isinstance(data.get("ideals"), dict)
            and isinstance(data.get("systems"), dict)):
        raise Unreadable("its export head is not one")
    head: dict[str, Any] = data["head"]
    if head.get("timestamp") != manifest.get("timestamp") or head.get("runLabel") != manifest.get("run_label"):
        return None  # a later run of the label
    contexts = head.get("promptContexts")
    if not isinstance(contexts, dict):
        raise Unreadable("its export head has no promptContexts")
    return _rebuild(head, data["ideals"], data["systems"], rows, key_points,
                    [str(m) for m in manifest.get("effective_models") or []], list(contexts))


def _rebuild(head: dict[str, Any], ideals: dict[str, Any], systems: dict[str, Any],
             rows: Iterable[tuple[str, str, str, Any]], key_points: dict[str, list[str]],
             effective_models: list[str], ids: list[str]) -> dict[str, Any]:
    turns: dict[tuple[str, str], dict[int, str]] = {}
    failures: dict[tuple[str, str], str] = {}
    scores: dict[tuple[str, str], Any] = {}
    not_run: dict[tuple[str, str], str] = {}
    for table, item, model, value in rows:
        cell = (item, model)
        if table == "answers":
            turns.setdefault(cell, {})[value[0]] = value[1]
        elif table == "failures":
            failures[cell] = value
        elif table == "scores":
            scores[cell] = value
        else:
            not_run[cell] = value
    coverage = "llm-coverage" in (head.get("evalMethodsUsed") or [])
    shown = head.get("modelSystemPrompts") or {}
    contexts = head["promptContexts"]
    responses: dict[str, dict[str, Any]] = {}
    histories: dict[str, dict[str, Any]] = {}
    results: dict[str, dict[str, Any]] = {}
    errors: dict[str, dict[str, str]] = {}

    def system(item: str, model: str) -> Any:
        own = systems.get(item)
        return own[model] if isinstance(own, dict) and model in own else shown.get(model)

    for cell in dict.fromkeys([*scores, *failures, *not_run]):
        item, model = cell
        messages = [m for m in contexts.get(item) or [] if isinstance(m, dict)]
        sys_prompt = system(item, model)
        if cell in scores:
            by_turn = turns.get(cell, {})
            texts = [by_turn[n] for n in sorted(by_turn)]
            responses.setdefault(item, {})[model] = texts[-1] if texts else ""
            histories.setdefault(item, {})[model] = _history(sys_prompt, messages, texts or [""])
            result = scores[cell]
            if result and coverage:
                results.setdefault(item, {})[model] = result
            continue
        message = failures[cell] if cell in failures else not_run[cell]
        marked = f"<<error>>{message}<</error>>"
        errors.setdefault(item, {})[model] = message
        history = [{"role": "system", "content": sys_prompt}] if sys_prompt else []
        history += [{"role": m.get("role"), "content": m.get("content") or ""} for m in messages
                    if not (m.get("role") == "assistant" and m.get("content") is None)]
        history.append({"role": "assistant", "content": marked})
        responses.setdefault(item, {})[model] = marked
        histories.setdefault(item, {})[model] = history
        if coverage:
            results.setdefault(item, {})[model] = {"error": message[:1].upper() + message[1:] if cell not in failures
                                                   else f"Generation failed: {message}"}

    rank = {m: n for n, m in enumerate([IDEAL_MODEL_ID, *effective_models])}

    def ordered(by_model: dict[str, Any]) -> dict[str, Any]:
        return dict(sorted(by_model.items(), key=lambda kv: rank.get(kv[0], len(rank))))

    out: dict[str, Any] = {}
    for key, value in head.items():
        if key == "evaluationResults":
            continue
        out[key] = value
    kept = {pid: key_points[pid] for pid in ids if pid in key_points}
    if kept:
        out["extractedKeyPoints"] = kept
    out["allFinalAssistantResponses"] = {
        pid: ordered({**({IDEAL_MODEL_ID: ideals[pid]} if ideals.get(pid) else {}), **responses.get(pid, {})})
        for pid in ids}
    out["fullConversationHistories"] = {pid: ordered(histories.get(pid, {})) for pid in ids}
    evaluation = dict(head.get("evaluationResults") or {})
    if coverage:
        evaluation["llmCoverageScores"] = {pid: ordered(results.get(pid, {})) for pid in ids}
    out["evaluationResults"] = evaluation
    if errors:
        out["errors"] = {pid: ordered(errors[pid]) for pid in ids if pid in errors}
    return out


def _history(system: Any, messages: list[dict[str, Any]], texts: list[str]) -> list[dict[str, Any]]:
    """The whole exchange, as generate/answers.py's weval_history makes it from the plan's task."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    generated = iter(texts)
    for m in messages:
        if m.get("role") == "assistant" and m.get("content") is None:
            out.append({"role": "assistant", "content": next(generated, "")})
        else:
            out.append({"role": m.get("role"), "content": m.get("content") or ""})
    if messages and messages[-1].get("role") == "user":
        out.append({"role": "assistant", "content": next(generated, texts[-1] if texts else "")})
    return out

