import * as assert from "node:assert/strict";
import { test } from "node:test";

import { findServer, Lookup } from "../src/serverCommand";

function lookup(files: string[], extra: Partial<Lookup> = {}): Lookup {
  return {
    setting: "",
    args: [],
    pathEnv: "/usr/local/bin:/usr/bin",
    platform: "linux",
    exists: (file) => files.includes(file),
    ...extra,
  };
}

test("the setting wins when it names an existing file", () => {
  const found = findServer(lookup(["/opt/venv/bin/evalspec-lsp", "/usr/bin/evalspec-lsp"],
    { setting: "/opt/venv/bin/evalspec-lsp", args: ["--log-file", "/tmp/l"] }));
  assert.deepEqual(found, { command: "/opt/venv/bin/evalspec-lsp", args: ["--log-file", "/tmp/l"], source: "setting" });
});

test("a setting that names a missing file is an error naming it", () => {
  const found = findServer(lookup(["/usr/bin/evalspec-lsp"], { setting: "/nowhere/evalspec-lsp" }));
  assert.ok("error" in found && found.error.includes("/nowhere/evalspec-lsp"));
});

test("a bare name in the setting is looked up on PATH", () => {
  const found = findServer(lookup(["/usr/bin/my-lsp"], { setting: "my-lsp" }));
  assert.deepEqual(found, { command: "/usr/bin/my-lsp", args: [], source: "setting" });
});

test("the server beside the selected Python interpreter comes before PATH", () => {
  const found = findServer(lookup(["/proj/.venv/bin/evalspec-lsp", "/usr/bin/evalspec-lsp"],
    { pythonPath: "/proj/.venv/bin/python" }));
  assert.deepEqual(found, { command: "/proj/.venv/bin/evalspec-lsp", args: [], source: "python" });
});

test("on Windows the interpreter's Scripts folder and .exe are used", () => {
  const found = findServer(lookup(["C:\\proj\\.venv\\Scripts\\evalspec-lsp.exe"], {
    pythonPath: "C:\\proj\\.venv\\Scripts\\python.exe", platform: "win32", pathEnv: "C:\\Windows",
  }));
  assert.deepEqual(found, { command: "C:\\proj\\.venv\\Scripts\\evalspec-lsp.exe", args: [], source: "python" });
});

test("PATH is the last place looked", () => {
  const found = findServer(lookup(["/usr/bin/evalspec-lsp"], { pythonPath: "/proj/.venv/bin/python", workspaceFolders: ["/w"] }));
  assert.deepEqual(found, { command: "/usr/bin/evalspec-lsp", args: [], source: "path" });
});

test("the workspace's .venv comes before the selected interpreter and PATH", () => {
  const found = findServer(lookup(["/w/.venv/bin/evalspec-lsp", "/w/venv/bin/evalspec-lsp", "/other/bin/evalspec-lsp",
    "/usr/bin/evalspec-lsp"], { workspaceFolders: ["/w"], pythonPath: "/other/bin/python" }));
  assert.deepEqual(found, { command: "/w/.venv/bin/evalspec-lsp", args: [], source: "workspace" });
});

test("venv/ is looked at after .venv/, folder by folder in the order given (the active file's first)", () => {
  const files = ["/a/venv/bin/evalspec-lsp", "/b/.venv/bin/evalspec-lsp"];
  assert.deepEqual(findServer(lookup(files, { workspaceFolders: ["/a", "/b"] })),
    { command: "/a/venv/bin/evalspec-lsp", args: [], source: "workspace" });
  assert.deepEqual(findServer(lookup(files, { workspaceFolders: ["/b", "/a"] })),
    { command: "/b/.venv/bin/evalspec-lsp", args: [], source: "workspace" });
});

test("a workspace venv on Windows: Scripts\\evalspec-lsp.exe", () => {
  const found = findServer(lookup(["C:\\w\\.venv\\Scripts\\evalspec-lsp.exe"], {
    workspaceFolders: ["C:\\w"], platform: "win32", pathEnv: "C:\\Windows",
  }));
  assert.deepEqual(found, { command: "C:\\w\\.venv\\Scripts\\evalspec-lsp.exe", args: [], source: "workspace" });
});

test("the setting wins over a workspace venv; a relative setting is taken from the workspace folder", () => {
  const files = ["/w/.venv/bin/evalspec-lsp", "/w/tools/evalspec-lsp"];
  assert.deepEqual(findServer(lookup(files, { workspaceFolders: ["/w"], setting: "tools/evalspec-lsp" })),
    { command: "/w/tools/evalspec-lsp", args: [], source: "setting" });
  const missing = findServer(lookup(files, { workspaceFolders: ["/w"], setting: "nope/evalspec-lsp" }));
  assert.ok("error" in missing && missing.error.includes("/w/nope/evalspec-lsp"), JSON.stringify(missing));
});

test("nothing found: one message naming every place tried and how to fix it", () => {
  const found = findServer(lookup([], { workspaceFolders: ["/w"], pythonPath: "/usr/bin/python3" }));
  assert.ok("error" in found);
  assert.deepEqual(found.tried, ["/w/.venv/bin", "/w/venv/bin", "/usr/bin (the selected Python interpreter's)", "PATH"]);
  for (const place of found.tried) {
    assert.ok(found.error.includes(place), place);
  }
  assert.match(found.error, /evalspec-lsp distribution \(`pip install \.` in a checkout/);
  assert.match(found.error, /evalspec\.serverPath/);
  const bare = findServer(lookup([]));
  assert.ok("error" in bare && /Python extension's interpreter \(none selected/.test(bare.error));
});
