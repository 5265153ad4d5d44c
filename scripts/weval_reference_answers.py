"""Ask Weval's own code (weval-org/app at 51dc4d3) for its answers: point functions, or loading blueprints.

Makes the `reference` of tests/weval/data/point-vectors.jsonl (`points`: evaluateFunctionPoints, the name
rewritten as the parser rewrites it) and normalize-vectors.jsonl (`normalize`: parseAndNormalizeBlueprint,
then loadAndValidateConfig's checks and defaults, without a collections folder), in the shared vectors'
forms (../shared/vectors/README.md). The reference's sources are read from its git mirror, bundled by
esbuild with stubs for what needs the network or a cache, and run by Node; nothing of it is committed.

    mkdir -p /tmp/weval_ref && cd /tmp/weval_ref && npm init -y && \\
        npm install js-yaml@4.1.0 json-stable-stringify@1.3.0 esbuild@0.24
    python scripts/weval_reference_answers.py points --mirror /work/.mirror/weval-org+app/repo \\
        --node-dir /tmp/weval_ref < cases.jsonl > answered.jsonl

Input lines: `{fn, args, answer, inverted?, context?}` (points) or `{group, path, blueprint}` (normalize);
each comes back with `reference` added. Values JSON cannot carry are `{"$$": "NaN"|"undefined"|…}`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

COMMIT = "51dc4d3"

STUBS = {
    "src/lib/cache-service.ts": "export function getCache(_n?: any): any { return { get: async () => undefined, "
                                "set: async () => {} }; }\nexport function generateCacheKey(..._a: any[]): string "
                                "{ return 'k'; }\n",
    "src/lib/background-function-client.ts": "export async function callBackgroundFunction(..._a: any[]): "
                                             "Promise<any> { throw new Error('no network'); }\n",
    "src/cli/config.ts": "const logger = { info: () => {}, warn: () => {}, error: () => {}, success: () => {}, "
                         "debug: () => {} };\nexport function getConfig(): any { return { logger }; }\n"
                         "export function configure(..._a: any[]) {}\n",
    "src/lib/blueprint-validator.ts": "export function validateBlueprintSchema(..._a: any[]): any "
                                      "{ return { valid: true }; }\n",
}

CODEC = r"""
import * as fs from 'fs';
function dec(v: any): any {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const ks = Object.keys(v);
    if (ks.length === 1 && ks[0] === '$$')
      return ({NaN: NaN, undefined: undefined, Infinity: Infinity, '-Infinity': -Infinity} as any)[v['$$']];
    const o: any = {};  // own keys, `__proto__` too, as js-yaml makes them
    for (const k of ks) Object.defineProperty(o, k, {value: dec(v[k]), enumerable: true, writable: true, configurable: true});
    return o;
  }
  return Array.isArray(v) ? v.map(dec) : v;
}
function enc(v: any): any {
  if (typeof v === 'number' && !isFinite(v)) return {'$$': isNaN(v) ? 'NaN' : (v > 0 ? 'Infinity' : '-Infinity')};
  return v === undefined ? {'$$': 'undefined'} : v;
}
const lines = fs.readFileSync(0, 'utf-8').split('\n').filter(Boolean);
"""

POINTS = CODEC + r"""
import { evaluateFunctionPoints } from './src/cli/evaluators/coverage-logic';
(async () => {
  for (const line of lines) {
    const d = JSON.parse(line);
    let fn: string = d.fn;  // the parser's rewrite
    if (fn.startsWith('contain') && !fn.startsWith('contains')) fn = fn.replace(/^contain/, 'contains');
    if (fn.startsWith('match') && !fn.startsWith('matches')) fn = fn.replace(/^match/, 'matches');
    const c = d.context || {};
    const context: any = { config: { id: 'b', prompts: [] }, prompt: { id: 'p1', messages: c.messages || [] },
                           modelId: c.modelId || 'm' };
    const point: any = { id: 'x', displayText: 'x', multiplier: 1, isFunction: true, functionName: fn,
                         functionArgs: dec(d.args), isInverted: !!d.inverted };
    const [a] = await evaluateFunctionPoints([point], d.answer, context);
    const reference = a.error !== undefined ? { error: true, message: a.error } : enc(a.coverageExtent);
    process.stdout.write('@@' + JSON.stringify({ ...d, reference }) + '\n');
  }
})();
"""

NORMALIZE_MAIN = r"""
(async () => {
  for (const line of lines) {
    const d = JSON.parse(line);
    const type = d.path.endsWith('.json') ? 'json' : 'yaml';
    let reference: any;
    try { parseAndNormalizeBlueprint(d.blueprint, type); }
    catch (e: any) { reference = { accepted: false, stage: 'parse', error: String(e.message) }; }
    if (!reference) {
      try {
        const cfg: any = await loadAndValidateConfig({ configContent: d.blueprint, blueprintPath: d.path, fileType: type });
        const { prompts, ...header } = cfg;
        reference = JSON.parse(JSON.stringify({ accepted: true, header, prompts }));
      } catch (e: any) { reference = { accepted: false, stage: 'load', error: String(e.message) }; }
    }
    process.stdout.write('@@' + JSON.stringify({ ...d, reference }) + '\n');
  }
})();
"""

NORMALIZE_HEAD = """
import fs_ from 'fs/promises';
import path from 'path';
import * as yaml from 'js-yaml';
import { parseAndNormalizeBlueprint } from './src/lib/blueprint-parser';
import { validateBlueprintSchema } from './src/lib/blueprint-validator';
import { normalizeTag } from './src/app/utils/tagUtils';
import { generateBlueprintIdFromPath, validateBlueprintId } from './src/app/utils/blueprintIdUtils';
import { getConfig } from './src/cli/config';
type Logger = any; type ComparisonConfig = any; type CustomModelDefinition = any; type SimpleLogger = any;
async function resolveModelsInConfig(..._a: any[]): Promise<any> { throw new Error('remote'); }
"""


def git_show(mirror: Path, path: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), "show", f"{COMMIT}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def build(kind: str, mirror: Path, node_dir: Path) -> Path:
    src = node_dir / "src"
    if not (src / "point-functions").is_dir():
        archive = subprocess.run(["git", "-C", str(mirror), "archive", COMMIT, "src", "tsconfig.json"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(node_dir)], input=archive, check=True)
    for rel, text in STUBS.items():
        (node_dir / rel).write_text(text)
    if kind == "points":
        harness = POINTS
    else:
        # run-config.ts's resolveModelCollections, validatePrompts and loadAndValidateConfig, without the
        # command's other imports (storage, pipelines)
        lines = git_show(mirror, "src/cli/commands/run-config.ts").split("\n")
        start = next(i for i, line in enumerate(lines) if line.startswith("export async function resolveModelCollections("))
        end = next(i for i, line in enumerate(lines) if line.startswith("export function parseEvalMethods("))
        harness = NORMALIZE_HEAD.replace("fs_", "fs") + "\n".join(lines[start:end]) + CODEC.replace(
            "import * as fs from 'fs';", "import * as fs0 from 'fs';").replace("fs.readFileSync", "fs0.readFileSync") \
            + NORMALIZE_MAIN
    entry = node_dir / f"{kind}_harness.ts"
    entry.write_text(harness)
    out = node_dir / f"{kind}_harness.js"
    subprocess.run([str(node_dir / "node_modules/.bin/esbuild"), entry.name, "--bundle", "--platform=node",
                    f"--outfile={out.name}", "--log-level=warning"], cwd=node_dir, check=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=("points", "normalize"))
    ap.add_argument("--mirror", type=Path, required=True)
    ap.add_argument("--node-dir", type=Path, required=True, help="where js-yaml, json-stable-stringify, esbuild are")
    args = ap.parse_args()
    harness = build(args.kind, args.mirror, args.node_dir)
    done = subprocess.run(["node", str(harness)], stdin=sys.stdin, capture_output=True, text=True, check=True)
    # the reference logs to stdout too: answers are the lines marked @@ (split on \n only: U+2028 is text)
    sys.stdout.write("".join(line[2:] + "\n" for line in done.stdout.split("\n") if line.startswith("@@")))


if __name__ == "__main__":
    main()
