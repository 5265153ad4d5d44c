"""Generate tests/weval/data/parser-vectors.jsonl: random blueprints and what Weval's own parser answers.

The answers come from weval-org/app's `parseAndNormalizeBlueprint` (src/lib/blueprint-parser.ts at 51dc4d3)
and its evaluator's reading of each prompt's points (LLMCoverageEvaluator.normalizePoints), bundled by esbuild and run by Node with js-yaml 4.1.0 and json-stable-stringify 1.3.0 (the versions the
shared vectors name). Nothing of the reference's code is committed: it is read from its git mirror.

    mkdir -p /tmp/weval_ref && cd /tmp/weval_ref && npm init -y && \
        npm install js-yaml@4.1.0 json-stable-stringify@1.3.0 esbuild@0.24
    python scripts/weval_parser_vectors.py --mirror /work/.mirror/weval-org+app/repo --node-dir /tmp/weval_ref

Each line: {"blueprint": YAML text, "reference": {"ok": true, "prompts": [...], "points": [[...] | {"error"}]}
| {"ok": false, "error": …}}; `points` holds, per prompt, what the evaluator scores (or what it throws).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
from pathlib import Path

HARNESS = """
import { parseAndNormalizeBlueprint } from './src/lib/blueprint-parser';
import { normalizePoints } from './src/normalize_points';
import * as fs from 'fs';
const out: string[] = [];
function read(p: any): any {
  try {
    const pts = [...normalizePoints(p.points || [], p.id, false), ...normalizePoints(p.should_not || [], p.id, true)];
    return pts.map((x: any) => ({ keyPointText: x.displayText, multiplier: x.multiplier, citation: x.citation,
      isFunction: x.isFunction, functionName: x.functionName, functionArgs: x.functionArgs,
      isInverted: x.isInverted, pathId: x.pathId }));
  } catch (e: any) { return { error: String(e.message).slice(0, 200) }; }
}
for (const line of fs.readFileSync(0, 'utf-8').split('\\n').filter(Boolean)) {
  const { text, type } = JSON.parse(line);
  try {
    const cfg: any = parseAndNormalizeBlueprint(text, type);
    out.push(JSON.stringify({ ok: true, prompts: cfg.prompts, points: cfg.prompts.map(read) }));
  } catch (e: any) {
    out.push(JSON.stringify({ ok: false, error: String(e.message).slice(0, 200) }));
  }
}
process.stdout.write(out.join('\\n') + '\\n');
"""

R = random.Random(0)

TEXTS = ["Hi", "'a: b'", '"multi\\nline"', "x", "'$contains'", '"$ js"', "Ünï 🎉", "Q2", "Text", "'yes'", "yes",
         "'0'", "$", "'#hash'", "''", "1e3", "1_000", "2024-01-02", "null", "0", ".nan", "true", "[a, b]", "{k: v}"]
FNS = ["contains", "contain", "icontains", "matches", "match", "imatch_all_of", "imatches_all_of", "js", "expr",
       "is_json", "contain_any_of", "not_start_with", "start_with", "word_count_between", "ref", "call", "unknown_fn",
       "Contains", "tool_called", "contains_at_least_n_of"]
ARGS = ["x", "'x'", "[a, b]", "[1, [a]]", "null", "5", "''", "{name: n}", "[3, 1]", "'r.length > 1'", "d1", "dobj",
        "dtext", "d1", "dobj", "dtext", "dlist", "true", "x", "[a, b]"]

def scalar():
    return R.choice(TEXTS)

def point(depth=0):
    c = R.random()
    if c < 0.25:
        return scalar()
    if c < 0.55:
        fn = R.choice(FNS)
        extra = ""
        if R.random() < 0.3:
            extra += f", weight: {R.choice(['2', '1', '1e0', '0.5', '2', '3', '0.05', 'null', 'x'])}"
        if R.random() < 0.2:
            extra += f", multiplier: {R.choice(['3', '0.5', 'null'])}"
        if R.random() < 0.2:
            extra += f", citation: {R.choice(['c', '5', 'null', '{title: t}'])}"
        if R.random() < 0.1:
            extra += ", $contains: second"
        return "{$" + fn + ": " + R.choice(ARGS) + extra + "}"
    if c < 0.65:
        return "{" + R.choice(["text", "point", "fn"]) + ": " + R.choice(["T", "''", "contains", "$contains", "5"]) + \
            R.choice(["", ", fnArgs: x", ", arg: y", ", weight: 2", ", multiplier: 4", ", citation: c", ", text: T2"]) + "}"
    if c < 0.72:
        return "{'" + R.choice(["Point", "Is kind", "1"]) + "': " + R.choice(["src", "src2", "5"]) + "}"
    if c < 0.9 and depth == 0:
        return "[" + ", ".join(point(1) for _ in range(R.randint(0, 3))) + R.choice(["", ", null", ", ''", ", []"]) + "]"
    return R.choice(["null", "5", "[]", "[[a]]", "true"]) if R.random() < 0.2 else "plain point"

def prompt():
    lines = []
    kind = R.random()
    if kind < 0.6:
        lines.append(f"prompt: {R.choice([*TEXTS[:9], 'Hi', 'Question'])}")
    elif kind < 0.85:
        msgs = []
        for _i in range(R.randint(1, 3)):
            c = R.random()
            if c < 0.6:
                msgs.append(f"{{{R.choice(['user', 'ai', 'assistant', 'system'])}: {R.choice(['Hi', 'Q', 'null', ''])}}}")
            else:
                msgs.append(f"{{role: {R.choice(['user', 'assistant'])}, content: {R.choice(['Hi', 'null', '5'])}"
                            + R.choice(["", ", extra: 1", ", name: n"]) + "}")
        if R.random() < 0.8:
            msgs.append("{user: Go}")
        lines.append("messages: [" + ", ".join(msgs) + "]")
    else:
        lines.append("promptText: " + R.choice(["Hi", "''"]))
    for key, p in (("id", 0.3), ("ideal", 0.2), ("idealResponse", 0.05), ("description", 0.1), ("citation", 0.1),
                   ("reference", 0.05), ("weight", 0.15), ("importance", 0.05), ("system", 0.1), ("noCache", 0.1),
                   ("render_as", 0.1), ("temperature", 0.1), ("tags", 0.05)):
        if R.random() < p:
            val = {"id": R.choice(["p1", "5", "0", "1e3", "''", "null", "true", "'x y'"]),
                   "weight": R.choice(["1", "2", "1.0", "null", "0.01", "1e0"]),
                   "importance": R.choice(["1", "3"]),
                   "system": R.choice(["null", "S", "''"]), "noCache": R.choice(["true", "false", "null", "0"]),
                   "render_as": R.choice(["html", "markdown", "bad", "''"]),
                   "temperature": R.choice(["0.5", "null", "x"]),
                   "citation": R.choice(["c", "{title: t, url: u}", "{name: n}", "{x: 1}", "''", "5"]),
                   "tags": "[a, b]"}.get(key, scalar())
            lines.append(f"{key}: {val}")
    for key, p in (("should", 0.7), ("points", 0.1), ("expect", 0.1), ("should_not", 0.3)):
        if R.random() < p:
            if R.random() < 0.1:
                lines.append(f"{key}: {R.choice(['[]', 'null', 'x', '{a: b}'])}")
            else:
                lines.append(f"{key}:")
                for _ in range(R.randint(1, 4)):
                    lines.append(f"  - {point()}")
    return lines

def blueprint():
    head = ["title: T"]
    if R.random() < 0.6:
        head.append("point_defs:\n  d1: 'r.length > 2'\n  dobj: {$contains: x, weight: 3, multiplier: 2, citation: dc}\n"
                    "  dtext: {text: T, multiplier: 0.5}\n  dbad: true\n  dlist: [a]")
    if R.random() < 0.2:
        head.append("render_as: " + R.choice(["html", "plaintext"]))
    if R.random() < 0.2:
        head.append("noCache: " + R.choice(["true", "false"]))
    out = "\n".join(head) + "\n---\n"
    for _ in range(R.randint(1, 3)):
        ls = prompt()
        out += "- " + ls[0] + "\n" + "".join("  " + line + "\n" for line in ls[1:])
    if R.random() < 0.1:
        out += "- <<: {prompt: Merged, should: [m]}\n  ideal: I\n"
    if R.random() < 0.1:
        out += "- prompt: Block\n  should:\n    - $js: |\n        return r.length > 1"
    return out



def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", type=Path, required=True)
    ap.add_argument("--node-dir", type=Path, required=True, help="where js-yaml, json-stable-stringify, esbuild are")
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "tests/weval/data/parser-vectors.jsonl")
    args = ap.parse_args()
    R.seed(args.seed)
    src = args.node_dir / "src/lib"
    src.mkdir(parents=True, exist_ok=True)
    parser = subprocess.run(["git", "-C", str(args.mirror), "show", "51dc4d3:src/lib/blueprint-parser.ts"],
                            capture_output=True, text=True, check=True).stdout
    (src / "blueprint-parser.ts").write_text(parser)
    # LLMCoverageEvaluator's private normalizePoints, taken out of its class as a function
    evaluator = subprocess.run(["git", "-C", str(args.mirror), "show",
                                "51dc4d3:src/cli/evaluators/llm-coverage-evaluator.ts"],
                               capture_output=True, text=True, check=True).stdout
    method = evaluator[evaluator.index("    private normalizePoints("):evaluator.index("    private async evaluateSinglePoint(")]
    method = (method.replace("private normalizePoints(", "export function normalizePoints(", 1)
              .replace("points: PointDefinition[]", "points: any[]").replace("): NormalizedPoint[] {", "): any[] {")
              .replace("const normalizedPoints: NormalizedPoint[] = [];", "const normalizedPoints: any[] = [];"))
    (args.node_dir / "src/normalize_points.ts").write_text(method)
    (args.node_dir / "harness.ts").write_text(HARNESS)
    subprocess.run([str(args.node_dir / "node_modules/.bin/esbuild"), "harness.ts", "--bundle", "--platform=node",
                    "--outfile=harness.js", "--log-level=warning"], cwd=args.node_dir, check=True)
    cases = [blueprint() for _ in range(args.count)]
    done = subprocess.run(["node", str(args.node_dir / "harness.js")], capture_output=True, text=True, check=True,
                          input="\n".join(json.dumps({"text": c, "type": "yaml"}) for c in cases))
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]  # (it logs too)
    assert len(answers) == len(cases)
    with open(args.out, "w", encoding="utf-8") as f:
        for text, answer in zip(cases, answers, strict=True):
            f.write(json.dumps({"blueprint": text, "reference": answer}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
