"""Walking Weval's own answers (../shared/vectors/weval) through evalspec's code: what the tests compare.

Each `*_outcome` function runs one vector through the functions `check` and `run` use (the checker,
the point scorers, the judge consensus, the aggregation, the results' prompt form) and returns None when
evalspec answers as the reference did, else a short description of the difference.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalspec.analysis import analyze
from evalspec.detect import FileKind
from evalspec.findings import Severity
from evalspec.registry.weval_functions import resolve_function
from evalspec.run.plan.weval import DEFAULT_JUDGES
from evalspec.run.score.functions import base_assessment, function_assessment
from evalspec.run.score.judges import judged_assessment
from evalspec.run.score.weval_judge import BACKUP_JUDGE, judge_label
from evalspec.run.write.weval_results import _prompt_object
from evalspec.scoring.weval_aggregate import (
    CoveragePoint,
    aggregate_coverage,
    avg_coverage_extent,
    reference_order,
)
from evalspec.scoring.weval_points import PointContext, evaluate_point
from evalspec.weval.model import Point

from ..conftest import SHARED

VECTORS = SHARED / "vectors" / "weval"
UNDEFINED_MARK = object()


def decode(v: Any) -> Any:
    """The vectors' `{"$$": "NaN"|"undefined"|…}` values as Python's (undefined: UNDEFINED_MARK)."""
    if isinstance(v, dict):
        if set(v) == {"$$"}:
            return {"NaN": math.nan, "undefined": UNDEFINED_MARK, "Infinity": math.inf, "-Infinity": -math.inf}[v["$$"]]
        return {k: decode(x) for k, x in v.items()}
    if isinstance(v, list):
        return [decode(x) for x in v]
    return v


def vectors(name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    with open(VECTORS / name, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            yield n, json.loads(line)


def _is_nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def _args(v: Any) -> Any:
    return None if v is UNDEFINED_MARK else v


# --- points.jsonl -----------------------------------------------------------------------------------

def point_outcome(d: dict[str, Any]) -> str | None:
    """A function point as the runner scores it: the name resolved as the checker does, the scorer,
    then function_assessment (should_not inverts)."""
    fn = resolve_function(d["fn"])
    ref = decode(d["reference"])
    name = fn.name if fn is not None else d["fn"]  # an unknown name is kept on the point, as the checker does
    context = d.get("context") or {}
    ctx = PointContext(messages=context.get("messages") or [], model_id=context.get("modelId") or "")
    point = Point.build(kind="fn", fn=name, fn_written=d["fn"], fn_args=_args(decode(d["args"])),
                        inverted=bool(d.get("inverted")), span=(0, 0, 0, 0))
    assessment = function_assessment(point, evaluate_point(name, point.fn_args, d["answer"], ctx))
    got, error = assessment["coverageExtent"], assessment.get("error")
    if isinstance(ref, dict):
        return None if got is None else f"reference: error ({ref.get('message')}); evalspec: {got}"
    if got is None:
        return f"reference: {ref}; evalspec: error ({error})"
    if _is_nan(ref) or got != ref:
        return f"reference: {ref}; evalspec: {got}"
    return None


# --- aggregate.jsonl --------------------------------------------------------------------------------

def _coverage(a: dict[str, Any]) -> float | None:
    score = a.get("coverageExtent")
    # a scorer's NaN is an error in evalspec (weval_points._ok): the point is not scored
    return None if score is UNDEFINED_MARK or score is None or _is_nan(score) else score


def assessments_outcome(d: dict[str, Any]) -> str | None:
    assessments = decode(d["assessments"])
    ref = decode(d["reference"])
    points = [CoveragePoint(_coverage(a), a.get("multiplier", 1.0), a.get("pathId")) for a in assessments]
    final, rounded = aggregate_coverage(points), avg_coverage_extent(points)
    want_rounded = None if ref["rounded"] is UNDEFINED_MARK else ref["rounded"]
    if final is None and want_rounded is None:
        return None  # nothing to score: no result, as the reference writes none
    if rounded != want_rounded or final != ref["final"]:
        return f"reference: {ref['final']} → {ref['rounded']}; evalspec: {final} → {rounded}"
    return None


def prompt_outcome(d: dict[str, Any]) -> str | None:
    """One prompt scored as a run scores it, with the judges' answers the vector gives."""
    analysis = analyze(d["blueprint"], "blueprints/vector.yml", kind=FileKind.WEVAL)
    errors = [f for f in analysis.findings if f.severity is Severity.ERROR]
    ref = decode(d["reference"])
    if not d["answer"].strip():
        # an empty or whitespace-only answer fails the cell before scoring, in the reference's pipeline
        # (comparison-pipeline-service) and in evalspec (generate/answers.EMPTY_ANSWER) alike
        return None
    if "error" in ref:
        return None if errors else f"reference: evaluate() fails ({ref['error']}); evalspec runs it"
    # The checker refuses some blueprints the reference runs (an unknown function, a bad argument: findings
    # that fail the run before it starts); the points are scored here all the same, as the reference does.
    bp = analysis.weval.blueprint  # type: ignore[union-attr]
    prompt = bp.prompt("p1")
    judges = list(bp.judges) or list(DEFAULT_JUDGES)
    defaults = not bp.judges
    answers: dict[str, dict[str, float | None]] = d["judges"]
    ctx = PointContext(messages=[{"role": "user", "content": "Q"}, {"role": "assistant", "content": d["answer"]}],
                       model_id="m")
    made = []
    for point in prompt.points:  # type: ignore[union-attr]
        if point.kind == "fn":
            made.append(function_assessment(point, evaluate_point(point.fn or "", point.fn_args, d["answer"], ctx)))
            continue
        said = answers.get(point.text or "", {})

        def verdict(judge: Any, key: str, said: dict[str, float | None] = said) -> dict[str, Any]:
            score = said.get(key)
            return {"judge": judge_label(judge), "score": score, "reflection": "r",
                    "error": None if score is not None else "failed"}

        verdicts = [verdict(j, j.id or j.model) for j in judges]
        backup = (verdict(BACKUP_JUDGE, BACKUP_JUDGE.id or "")
                  if defaults and any(v["error"] for v in verdicts) else None)
        made.append(judged_assessment(base_assessment(point), point, judges, verdicts, backup))
    ordered = reference_order(made, [p.kind == "fn" for p in prompt.points])  # type: ignore[union-attr]
    cps = [CoveragePoint(a.get("coverageExtent"), a.get("multiplier", 1.0), a.get("pathId")) for a in ordered]
    score = avg_coverage_extent(cps)
    want = ref["avgCoverageExtent"]
    if _is_nan(want) or score != want:
        return f"avgCoverageExtent: reference {want}, evalspec {score}"
    fields = ("keyPointText", "multiplier", "isInverted", "pathId", "citation")
    for ours, theirs in zip(ordered, ref["points"], strict=False):
        for k in fields:
            if ours.get(k) != theirs.get(k):
                return f"point {theirs['keyPointText']!r}: {k} reference {theirs.get(k)!r}, evalspec {ours.get(k)!r}"
        if _coverage(ours) != _coverage(theirs):
            return (f"point {theirs['keyPointText']!r}: coverageExtent reference {theirs.get('coverageExtent')}, "
                    f"evalspec {ours.get('coverageExtent')}")
    if len(ordered) != len(ref["points"]):
        return f"{len(ref['points'])} points in the reference, {len(ordered)} in evalspec"
    return None


def aggregate_outcome(d: dict[str, Any]) -> str | None:
    return assessments_outcome(d) if d["kind"] == "assessments" else prompt_outcome(d)


# --- normalize.jsonl --------------------------------------------------------------------------------

def normalize_outcome(d: dict[str, Any]) -> str | None:
    """The blueprint checked as `check` does; its prompts as a results file's config writes them."""
    analysis = analyze(d["blueprint"], d["path"], kind=FileKind.WEVAL)
    errors = [f for f in analysis.findings if f.severity is Severity.ERROR]
    ref = d["reference"]
    if not ref["accepted"]:
        return None if errors else f"the reference refuses it ({ref['stage']}: {ref['error'][:120]}); evalspec accepts it"
    bp = analysis.weval.blueprint if analysis.weval else None
    if bp is None:
        return "evalspec has no blueprint"
    ours = [json.loads(json.dumps(_prompt_object(p))) for p in bp.prompts]
    theirs = ref["prompts"]
    if [o.get("id") for o in ours] != [t.get("id") for t in theirs]:
        return f"ids: reference {[t.get('id') for t in theirs]}, evalspec {[o.get('id') for o in ours]}"
    if ours != theirs:
        return "prompts differ: " + next(f"{t}\nevalspec: {o}" for o, t in zip(ours, theirs, strict=True) if o != t)
    if bp.tags != ref["header"].get("tags", []):
        return f"tags: reference {ref['header'].get('tags')}, evalspec {bp.tags}"
    # The blueprint id comes from the path: the reference's CLI takes the path as typed (`vx/n0.yaml` →
    # `vx__n0`), evalspec the path below the nearest `blueprints/` folder, else the file name (as Weval's
    # site names the blueprints of its repository); the header is compared with the reference's id.
    header = dict(bp.reference or {})
    if header.get("title") == header.get("id"):
        header["title"] = ref["header"].get("id")
    header["id"] = ref["header"].get("id")
    if header != ref["header"]:
        return f"header: reference {ref['header']}, evalspec {header}"
    return None


# --- tests/weval/data/parser-vectors.jsonl (scripts/weval_parser_vectors.py) -------------------------

PARSER_VECTORS = Path(__file__).parent / "data" / "parser-vectors.jsonl"


def parser_outcome(d: dict[str, Any]) -> str | None:
    """A random blueprint: its prompts as Weval's parser leaves them (auto ids included), or an error
    finding where the parser throws."""
    analysis = analyze(d["blueprint"], "blueprints/f.yml", kind=FileKind.WEVAL)
    ref = d["reference"]
    if not ref["ok"]:
        if any(f.severity is Severity.ERROR for f in analysis.findings):
            return None
        return f"the reference's parser refuses it ({ref['error'][:120]}); evalspec reports no error"
    bp = analysis.weval.blueprint if analysis.weval else None
    ours = [p.reference for p in bp.prompts] if bp is not None else []
    if ours != ref["prompts"]:
        return f"prompts: reference {ref['prompts']}, evalspec {ours}"
    errors = any(f.severity is Severity.ERROR for f in analysis.findings)
    for prompt, read in zip(bp.prompts if bp is not None else [], ref["points"], strict=True):
        if isinstance(read, dict):  # the evaluator throws on it: no answer would be scored
            if not errors:
                return f"Weval's evaluator stops on prompt {prompt.id} ({read['error'][:100]}); evalspec reports no error"
            continue
        scored = [_as_assessed(pt) for pt in prompt.points]
        wanted = [{"keyPointText": js_text(r["keyPointText"]), "multiplier": r["multiplier"],
                   "citation": r.get("citation"), "isInverted": r["isInverted"], "pathId": r.get("pathId"),
                   "functionName": r.get("functionName"), "functionArgs": r.get("functionArgs")} for r in read]
        if scored != wanted:
            return f"prompt {prompt.id} scored as {scored}; Weval's evaluator reads {wanted}"
    return None


def js_text(value: Any) -> Any:
    """A numeric key point text (`{point: 5}`) is the number to the reference, its text to evalspec."""
    return value if isinstance(value, str) or value is None else json.dumps(value)


def _as_assessed(pt: Point) -> dict[str, Any]:
    base = base_assessment(pt)
    return {"keyPointText": base["keyPointText"], "multiplier": pt.weight, "citation": pt.citation,
            "isInverted": pt.inverted, "pathId": pt.path_id,
            "functionName": pt.fn_written if pt.kind == "fn" else None,
            "functionArgs": pt.fn_args if pt.kind == "fn" else None}
