"""The Weval comparison file against weval-output-format.md and the reference's own output.

Each test names the reference behaviour it matches (weval-org/app: comparison-pipeline-service.ts,
embedding-evaluator.ts, llm-coverage-evaluator.ts, blueprint-parser.ts) and, where evalspec departs from
it, why.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from .conftest import SmartFake, comparison, env_for, options, run_events, write
from .weval_format import Spec, problems

CANDIDATE = "openai:candidate[temp:0]"

DASHBOARD_FIELDS = """title: Dashboard fields
models: [openai:candidate]
render_as: html
noCache: true
tools:
  - name: search
    description: Search the web
    schema: {type: object, properties: {q: {type: string}}}
toolUse: {enabled: true, mode: trace-only, maxSteps: 3}
citation: "Some Act 1990"
---
- id: p1
  prompt: Show a table.
  render_as: plaintext
  noCache: false
  tags: [tables, html]
  citation: "Section 4"
  should:
    - $contains: "ECHO"
    - text: mentions tables
      citation: "Section 4(b)"
- id: p2
  prompt: Plain.
  should: [$contains: "Plain"]
"""


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def test_config_keeps_every_field_the_dashboard_reads(tmp_path: Path, smart: SmartFake) -> None:
    """The reference writes `config: config`, the whole parsed blueprint: the header as written and each
    prompt as blueprint-parser.ts normalizes it. Prompt `tags` are dropped by the reference, and so by evalspec
    (issue 25: the prompts are the reference's own form, weval/reference_form.py)."""
    bp = write(tmp_path / "d.weval.yml", DASHBOARD_FIELDS)
    run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge"]))
    cfg = comparison(tmp_path / "out")["config"]
    assert cfg["render_as"] == "html"
    assert cfg["noCache"] is True
    assert cfg["tools"] == [{"name": "search", "description": "Search the web",
                             "schema": {"type": "object", "properties": {"q": {"type": "string"}}}}]
    assert cfg["toolUse"] == {"enabled": True, "mode": "trace-only", "maxSteps": 3}
    assert cfg["references"] == [{"title": "Some Act 1990"}]
    p1, p2 = cfg["prompts"]
    assert p1["render_as"] == "plaintext" and p2["render_as"] == "html"  # a prompt inherits the header's
    assert p1["noCache"] is False and p2["noCache"] is True  # noCache is inherited (compat notes §4)
    assert "tags" not in p1 and "tags" not in p2
    assert p1["citation"] == "Section 4"
    assert p1["points"][1] == {"text": "mentions tables", "multiplier": 1, "citation": "Section 4(b)"}


def test_source_commit_sha_from_the_blueprints_git_repository(tmp_path: Path, smart: SmartFake) -> None:
    """The reference writes `sourceCommitSha` (run-config.ts: the commit of the blueprint's repository) and
    `sourceBlueprintFileName`, which the dashboard links as <repo>/blob/<sha>/blueprints/<file name>."""
    repo = tmp_path / "configs"
    bp = write(repo / "blueprints" / "sub" / "b.weval.yml", DASHBOARD_FIELDS)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "first")
    sha = _git(repo, "rev-parse", "HEAD")
    _git(repo, "pack-refs", "--all")  # the branch now lives in packed-refs only
    run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge"]))
    data = comparison(tmp_path / "out")
    assert data["sourceCommitSha"] == sha
    assert data["sourceBlueprintFileName"] == "sub/b.weval.yml"

    # A linked worktree (a `.git` file) names the same kind of commit: its own HEAD.
    _git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    second = _git(repo, "rev-parse", "HEAD")
    _git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"), sha)
    run_events(tmp_path / "wt" / "blueprints" / "sub" / "b.weval.yml",
               options(tmp_path, env_for(smart), judges=["openai:judge"], output=tmp_path / "out-wt"))
    assert comparison(tmp_path / "out-wt")["sourceCommitSha"] == sha != second


def test_no_commit_sha_outside_git(tmp_path: Path, smart: SmartFake) -> None:
    bp = write(tmp_path / "plain" / "b.weval.yml", DASHBOARD_FIELDS)
    run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge"]))
    data = comparison(tmp_path / "out")
    assert "sourceCommitSha" not in data
    assert data["sourceBlueprintFileName"] == "b.weval.yml"


def test_prompt_without_points_says_why_it_has_no_score(tmp_path: Path, smart: SmartFake) -> None:
    """llm-coverage-evaluator.ts writes `{keyPointsCount: 0, avgCoverageExtent: undefined, pointAssessments:
    []}` for a prompt with no points and no ideal: JSON drops the undefined, so the dashboard finds no
    score and no reason. evalspec keeps the reference's fields and adds the format's own marker for a
    result without a score, `error`, saying why (a made-up score would be worse)."""
    bp = write(tmp_path / "n.weval.yml", "models: [openai:candidate]\n---\n- id: bare\n  prompt: Hi\n")
    run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge"]))
    cov = comparison(tmp_path / "out")["evaluationResults"]["llmCoverageScores"]["bare"][CANDIDATE]
    assert cov["keyPointsCount"] == 0 and cov["pointAssessments"] == []
    assert "avgCoverageExtent" not in cov
    assert "no points" in cov["error"]


def test_similarity_matrix_holds_no_null_for_a_failed_model(tmp_path: Path, smart: SmartFake) -> None:
    """embedding-evaluator.ts keeps a model whose every answer failed in the matrix with NaN, which
    JSON.stringify writes as null: a value the format's SimilarityScore (numbers) does not allow and the
    dashboard cannot place. evalspec leaves out every pair without a similarity, and a model with none at
    all (the issue's first option); the pairs that exist keep the reference's values."""
    bp = write(tmp_path / "e.weval.yml", """models: [openai:a, anthropic:no-key]
embeddingModel: openai:text-embedding-3-small
---
- id: p
  prompt: Hi
  ideal: Hello
  should: [$contains: Hi]
""")
    run_events(bp, options(tmp_path, env_for(smart), eval_methods=("llm-coverage", "embedding")))
    data = comparison(tmp_path / "out")
    raw = json.dumps(data["evaluationResults"])
    assert "null" not in raw and "NaN" not in raw
    sim = data["evaluationResults"]["similarityMatrix"]
    assert set(sim) == {"IDEAL_BENCHMARK", "openai:a[temp:0]"}
    assert "anthropic:no-key[temp:0]" not in sim["openai:a[temp:0]"]
    assert 0 < sim["openai:a[temp:0]"]["IDEAL_BENCHMARK"] < 1
    assert set(data["evaluationResults"]["perPromptSimilarities"]["p"]) == {"IDEAL_BENCHMARK", "openai:a[temp:0]"}
    assert data["errors"]["p"]["anthropic:no-key[temp:0]"]


def test_prompt_contexts_keep_the_reference_form_of_generated_turns(tmp_path: Path, smart: SmartFake) -> None:
    """blueprint-parser.ts maps `- assistant: null` to `{role: 'assistant', content: null}` and
    comparison-pipeline-service.ts stores those normalized messages as `promptContexts` (and in
    `config.prompts[].messages`): evalspec writes the same null there, and the generated text only in the
    conversation history."""
    bp = write(tmp_path / "m.weval.yml", """models: [openai:candidate]
---
- id: chat
  messages:
    - system: Be brief.
    - user: first
    - assistant: null
    - user: second
  should: [$contains: ECHO]
""")
    run_events(bp, options(tmp_path, env_for(smart)))
    data = comparison(tmp_path / "out")
    expected = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "first"},
                {"role": "assistant", "content": None}, {"role": "user", "content": "second"}]
    assert data["promptContexts"]["chat"] == expected
    assert data["config"]["prompts"][0]["messages"] == expected
    history = data["fullConversationHistories"]["chat"][CANDIDATE]
    assert all(isinstance(m["content"], str) for m in history)


def test_a_produced_file_is_valid_field_by_field(tmp_path: Path, smart: SmartFake) -> None:
    """Everything a run can write at once: judged and function points, paths, should_not, an ideal
    without points (key points), a prompt without points, a failed model, embeddings, generated turns."""

    def decide(req: dict[str, Any]) -> str | None:
        text = json.dumps(req)
        if "key_point" in text or "key points" in text.lower():
            return "<key_point>says hello</key_point>"
        if "CRITERION" in text:
            return "<reflection>ok</reflection><classification>CLASS_MAJOR</classification>"
        return None

    smart.decide = decide
    bp = write(tmp_path / "all.weval.yml", DASHBOARD_FIELDS.replace(
        "models: [openai:candidate]", "models: [openai:candidate, anthropic:no-key]\n"
        "embeddingModel: openai:text-embedding-3-small") + """- id: judged
  messages:
    - user: a
    - assistant: null
    - user: b
  should:
    - is polite
    - - $contains: ECHO
      - is short
    - - $icontains: nothing
  should_not:
    - is rude
- id: from-ideal
  prompt: Say hello.
  ideal: Hello there.
- id: nothing
  prompt: Hi.
""")
    run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge"],
                           eval_methods=("llm-coverage", "embedding")))
    data = comparison(tmp_path / "out")
    spec = Spec()
    assert {"keyPointsCount", "avgCoverageExtent", "pointAssessments"} <= set(spec.coverage)
    assert {"keyPointText", "coverageExtent", "multiplier", "pathId"} <= set(spec.assessment)
    assert problems(data, spec) == []
    assert data["extractedKeyPoints"] == {"from-ideal": ["says hello"]}


def test_the_validator_finds_what_the_format_forbids(tmp_path: Path, smart: SmartFake) -> None:
    """The validator itself: each kind of mistake in a valid file is reported at its path."""
    bp = write(tmp_path / "v.weval.yml", DASHBOARD_FIELDS)
    run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge"]))
    good = comparison(tmp_path / "out")
    assert problems(good) == []
    bad = json.loads(json.dumps(good))
    del bad["runLabel"]
    bad["unknownTopLevel"] = 1
    bad["promptContexts"]["p1"][0]["content"] = None
    cov = bad["evaluationResults"]["llmCoverageScores"]["p1"][CANDIDATE]
    cov["keyPointsCount"] = 7
    cov["pointAssessments"][0]["coverageExtent"] = "high"
    del cov["avgCoverageExtent"]
    bad["evaluationResults"]["similarityMatrix"] = {"a": {"b": None}}
    found = "\n".join(problems(bad))
    for needle in ("$.runLabel: missing", "$.unknownTopLevel: not in the format",
                   "promptContexts['p1'][0].content: not a string", "keyPointsCount: 7 points counted",
                   "pointAssessments[0].coverageExtent: not number", "neither avgCoverageExtent nor an error",
                   "similarityMatrix: present exactly when 'embedding' is used",
                   "similarityMatrix['a']['b']: not a number"):
        assert needle in found, needle


def test_eval_method_none_scores_function_points_only(tmp_path: Path, smart: SmartFake) -> None:
    """The reference has no `none` (an unknown method falls back to embedding), so evalspec defines it:
    function points cost nothing and are scored; judged points, key-point extraction and embeddings are
    skipped, each marked not scored, and the run says what it skipped."""
    from .conftest import of_type

    bp = write(tmp_path / "n.weval.yml", """models: [openai:candidate]
embeddingModel: openai:text-embedding-3-small
---
- id: mixed
  prompt: Hello
  should:
    - $contains: Hello
    - $contains: Absent
    - is friendly
- id: ideal-only
  prompt: Say hi.
  ideal: Hi there.
""")
    events = run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge"], eval_methods=()))
    data = comparison(tmp_path / "out")
    cov = data["evaluationResults"]["llmCoverageScores"]["mixed"][CANDIDATE]
    assert cov["avgCoverageExtent"] == 0.5  # the two function points; the judged one is left out
    judged = cov["pointAssessments"][2]
    assert judged["coverageExtent"] is None and "--eval-method none" in judged["error"]
    ideal = data["evaluationResults"]["llmCoverageScores"]["ideal-only"][CANDIDATE]
    assert "avgCoverageExtent" not in ideal and "key points" in ideal["error"]
    assert "similarityMatrix" not in data["evaluationResults"]
    assert [r["model"] for r in smart.chat_requests()] == ["candidate", "candidate"]  # no judge, no extraction
    assert not any(r.path.endswith("/embeddings") for r in smart.requests)
    [finished] = of_type(events, "run_finished")
    assert finished.summary.notes == ("--eval-method none: function points were scored; skipped 1 judged "
                                      "point(s), key-point extraction for 1 prompt(s) and embeddings",)
    assert problems(data) == []
