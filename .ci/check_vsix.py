"""Check the packaged VS Code extension: the bundle and the manifest are in it, nothing else is.

    python .ci/check_vsix.py editors/vscode/evalspec.vsix
"""

from __future__ import annotations

import json
import sys
import zipfile

REQUIRED = {"extension/package.json", "extension/dist/extension.js", "extension/LICENSE.txt", "extension/readme.md",
            "extension.vsixmanifest", "[Content_Types].xml"}


def main(path: str) -> int:
    with zipfile.ZipFile(path) as vsix:
        names = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
        bundle = vsix.read("extension/dist/extension.js").decode("utf-8")
    problems = [f"missing {name}" for name in sorted(REQUIRED - names)]
    problems += [f"unexpected {name} (sources, tests and node_modules stay out)" for name in sorted(names - REQUIRED)]
    if manifest.get("main") != "./dist/extension.js":
        problems.append(f"main is {manifest.get('main')!r}, not the bundle")
    for field in ("license", "repository", "publisher", "engines"):
        if not manifest.get(field):
            problems.append(f"package.json has no {field}")
    commands = {c["command"] for c in manifest.get("contributes", {}).get("commands", [])}
    for needed in ("evalspec.runActiveFile", "evalspec.runAtCursor", "evalspec.planActiveFile",
                   "evalspec.cancelActiveRun", "evalspec.showResultsActiveFile"):
        if needed not in commands:
            problems.append(f"command {needed} is not contributed")
    # The language client is bundled in; only VS Code's own module is left to require at run time.
    if 'require("vscode-languageclient' in bundle:
        problems.append("the bundle still requires vscode-languageclient")
    if "activate" not in bundle or "evalspec/runState" not in bundle:
        problems.append("the bundle is not the extension")
    for p in problems:
        print(f"check_vsix: {p}", file=sys.stderr)
    if not problems:
        print(f"check_vsix: {path}: {len(names)} files, {len(bundle) // 1024} KiB bundle, {len(commands)} commands: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
