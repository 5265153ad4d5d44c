import * as assert from "node:assert/strict";
import { test } from "node:test";

import { findServer, Lookup, NOT_FOUND } from "../src/serverCommand";

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
  const found = findServer(lookup(["/usr/bin/evalspec-lsp"], { pythonPath: "/proj/.venv/bin/python" }));
  assert.deepEqual(found, { command: "/usr/bin/evalspec-lsp", args: [], source: "path" });
});

test("nothing found: a message that says how to fix it", () => {
  const found = findServer(lookup([]));
  assert.deepEqual(found, { error: NOT_FOUND });
  assert.match(NOT_FOUND, /pip install evalspec-lsp/);
  assert.match(NOT_FOUND, /evalspec\.serverPath/);
});
