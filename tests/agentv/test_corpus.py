"""AgentV's own example files (v2.19): every one checks without raising, fast, and every finding is true.

Each expected finding below was reviewed against the file. Most are `missing-script`: the corpus copy
keeps the eval files, prompts and docs but not the judges' scripts (`.ts`, `.py`, `.sh`), so on this disk
those references really do not resolve; in AgentV's repository they do. The rest are real problems
AgentV itself reports or silently works around.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalspec.agentv import check_agentv
from evalspec.source import parse_yaml

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "agentv-examples" / "examples"


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    names = {*CORPUS.rglob("*.eval.yaml"), *CORPUS.rglob("eval.yaml"), *CORPUS.rglob("cases*.yaml"),
             *CORPUS.rglob("cases/*.yaml"), *CORPUS.rglob("cases/*.jsonl"), *CORPUS.rglob(".agentv/targets.yaml"),
             *CORPUS.rglob("tool-eval-demo.yaml")}
    return sorted(names)


EXPECTED = """
# name with spaces and capitals: AgentV's validator warns with the same message and its loader refuses the file.
features/benchmark-tooling/evals/benchmark.eval.yaml:1 invalid-name
# A target-level `workspace_template`: v2.19's own targets resolver refuses the target ("target-level
# workspace_template has been removed. Use eval-level workspace.template.").
features/agent-judge/.agentv/targets.yaml:13 removed-field
features/file-changes-judges/.agentv/targets.yaml:11 removed-field
features/file-changes/.agentv/targets.yaml:16 removed-field
features/functional-grading/.agentv/targets.yaml:11 removed-field
# `name` without `description`: AgentV warns "When 'name' is present, 'description' should also be provided."
features/external-datasets/evals/dataset.eval.yaml:1 missing-description
# top-level `target: default` is the legacy location of execution.target.
features/external-datasets/evals/dataset.eval.yaml:4 deprecated-field
# `reference_answer` is not read from a test: AgentV derives it from the last expected message, and these
# tests have no expected_output, so the judge's {{ reference_answer }} is empty.
features/prompt-template-sdk/evals/dataset.eval.yaml:21 unknown-key
features/prompt-template-sdk/evals/dataset.eval.yaml:40 unknown-key
# `word-count` is a custom assertion; its .agentv/assertions/word-count.ts is not in the corpus copy.
features/sdk-custom-assertion/evals/dataset.eval.yaml:18 unknown-assertion-type
features/sdk-custom-assertion/evals/dataset.eval.yaml:27 unknown-assertion-type
features/sdk-custom-assertion/evals/dataset.eval.yaml:40 unknown-assertion-type
# Judge scripts named in `command` that the corpus copy does not include (see the module docstring).
features/basic/evals/dataset.eval.yaml:80 missing-script
features/batch-cli/evals/dataset.eval.yaml:48 missing-script
features/batch-cli/evals/dataset.eval.yaml:87 missing-script
features/batch-cli/evals/dataset.eval.yaml:126 missing-script
features/batch-cli/evals/dataset.eval.yaml:165 missing-script
features/code-judge-with-llm-calls/evals/contextual-precision.eval.yaml:23 missing-script
features/code-judge-with-llm-calls/evals/contextual-recall.eval.yaml:27 missing-script
features/file-changes/evals/dataset.eval.yaml:33 missing-script
features/file-changes/evals/dataset.eval.yaml:53 missing-script
features/functional-grading/evals/dataset.eval.yaml:30 missing-script
features/nlp-metrics/evals/dataset.eval.yaml:25 missing-script
features/nlp-metrics/evals/dataset.eval.yaml:41 missing-script
features/nlp-metrics/evals/dataset.eval.yaml:57 missing-script
features/nlp-metrics/evals/dataset.eval.yaml:73 missing-script
features/nlp-metrics/evals/dataset.eval.yaml:89 missing-script
features/nlp-metrics/evals/dataset.eval.yaml:92 missing-script
features/nlp-metrics/evals/dataset.eval.yaml:95 missing-script
# A prompt script that is not there: AgentV's loader skips the test ("prompt command file not found").
features/prompt-template-sdk/evals/dataset.eval.yaml:29 missing-prompt-script
features/prompt-template-sdk/evals/dataset.eval.yaml:48 missing-prompt-script
features/rubric/evals/dataset.eval.yaml:149 missing-script
features/tool-evaluation-plugins/evals/dataset.eval.yaml:32 missing-script
features/tool-evaluation-plugins/evals/dataset.eval.yaml:50 missing-script
features/tool-evaluation-plugins/evals/dataset.eval.yaml:79 missing-script
showcase/cross-repo-sync/evals/dataset.eval.yaml:38 missing-script
showcase/cross-repo-sync/evals/dataset.eval.yaml:38 missing-script
showcase/cross-repo-sync/evals/dataset.eval.yaml:58 missing-script
showcase/cross-repo-sync/evals/dataset.eval.yaml:58 missing-script
showcase/cross-repo-sync/evals/dataset.eval.yaml:79 missing-script
showcase/cross-repo-sync/evals/dataset.eval.yaml:79 missing-script
showcase/export-screening/evals/dataset.eval.yaml:26 missing-script
showcase/psychotherapy/evals/encouragement.eval.yaml:12 missing-script
showcase/psychotherapy/evals/listening.eval.yaml:11 missing-script
showcase/psychotherapy/evals/routing.eval.yaml:10 missing-script
showcase/tool-evaluation-plugins/tool-eval-demo.yaml:43 missing-script
showcase/tool-evaluation-plugins/tool-eval-demo.yaml:64 missing-script
showcase/tool-evaluation-plugins/tool-eval-demo.yaml:97 missing-script
showcase/tool-evaluation-plugins/tool-eval-demo.yaml:102 missing-script
showcase/tool-evaluation-plugins/tool-eval-demo.yaml:132 missing-script
"""

# With an empty environment, these `${{ VAR }}` references are unset (info findings, as AgentV uses "").
UNSET = {"AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "AZURE_DEPLOYMENT_NAME", "AZURE_OPENAI_API_VERSION",
         "EVAL_CRITERIA", "CUSTOM_SYSTEM_PROMPT", "VAR"}


def _run() -> tuple[list[str], set[str], dict[str, int]]:
    rows: list[str] = []
    unset: set[str] = set()
    counts: dict[str, int] = {}
    for path in corpus_files():
        text = path.read_text(encoding="utf-8")
        # Speed is measured in bench/check_speed.py, not asserted here (a loaded CI machine made it flaky).
        # The copy stands for AgentV's repository, whose root (holding .git) is this examples folder's
        # parent: references between examples stay inside it.
        result = check_agentv(parse_yaml(text), path, env={}, project=CORPUS.parent)
        rel = path.relative_to(CORPUS).as_posix()
        counts[rel] = len(result.suite.tests) if result.suite is not None else -1
        for f in result.findings:
            if f.code == "unset-variable":
                unset.add(f.message.split("'")[1])
                continue
            where = Path(f.path).relative_to(CORPUS).as_posix() if f.path else rel
            rows.append(f"{where}:{f.span.start_line + 1} {f.code}")
    return sorted(rows), unset, counts


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside the repository")
def test_corpus_findings_are_the_reviewed_ones() -> None:
    rows, unset, _ = _run()
    expected = sorted(line for line in EXPECTED.strip().splitlines() if not line.startswith("#"))
    assert rows == expected
    assert unset == UNSET


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside the repository")
def test_corpus_tests_load() -> None:
    _, _, counts = _run()
    assert counts["features/external-datasets/evals/dataset.eval.yaml"] == 5  # inline + yaml + jsonl
    assert counts["features/suite-level-input/evals/dataset.eval.yaml"] == 3
    assert counts["showcase/export-screening/evals/dataset.eval.yaml"] == 22
    assert counts["features/tool-trajectory-simple/evals/dataset.eval.yaml"] == 11
    assert all(n != 0 for p, n in counts.items() if p.endswith("eval.yaml")), counts
