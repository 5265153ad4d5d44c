// activate() against a stubbed `vscode` API and language client: the commands it contributes, the
// status-bar item fed by the server's run notifications, and the message when no server is found.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";

// eslint-disable-next-line @typescript-eslint/no-var-requires
const Module = require("module");

interface Recorded {
  commands: Map<string, (...args: unknown[]) => unknown>;
  executed: Array<{ command: string; args: unknown[] }>;
  errors: string[];
  item: { text: string; command?: unknown; visible: boolean };
  clients: FakeClient[];
  settings: Record<string, unknown>;
  panels: Array<{ title: string; options: any; webview: { html: string; cspSource: string } }>;
  opened: string[];
  external: string[];
  choice?: string; // the button the user clicks in an error message
  errorButtons: string[][];
  watchers: Array<{ pattern: string; created?: () => unknown; disposed: boolean }>;
}

class FakeClient {
  static recorded: Recorded;
  handlers = new Map<string, (params: unknown) => void>();
  started = false;
  constructor(public id: string, public name: string, public serverOptions: any, public clientOptions: any) {
    FakeClient.recorded.clients.push(this);
  }
  features: any[] = [];
  onNotification(method: string, handler: (params: unknown) => void): void {
    this.handlers.set(method, handler);
  }
  registerFeature(feature: unknown): void {
    this.features.push(feature);
  }
  async start(): Promise<void> {
    this.started = true;
  }
  async stop(): Promise<void> {
    this.started = false;
  }
}

function install(settings: Record<string, unknown>, folders: string[] = [], choice?: string): Recorded {
  const recorded: Recorded = {
    commands: new Map(), executed: [], errors: [], clients: [], settings, panels: [], opened: [], external: [],
    choice, errorButtons: [], watchers: [],
    item: { text: "", visible: false },
  };
  FakeClient.recorded = recorded;
  const item = {
    text: "", tooltip: undefined as unknown, command: undefined as unknown,
    show() { recorded.item.visible = true; recorded.item.text = this.text; recorded.item.command = this.command; },
    hide() { recorded.item.visible = false; },
    dispose() {},
  };
  const editor = { document: { uri: { toString: () => "file:///w/a.weval.yml" } }, selection: { active: { line: 7 } } };
  const vscode = {
    StatusBarAlignment: { Left: 1 },
    ViewColumn: { Beside: -2 },
    Uri: {
      file: (p: string) => ({ fsPath: p, scheme: "file", toString: () => `file://${p}` }),
      parse: (u: string) => ({ toString: () => u }),
    },
    env: { openExternal: async (uri: { toString(): string }) => { recorded.external.push(uri.toString()); return true; } },
    window: {
      activeTextEditor: editor,
      createStatusBarItem: () => item,
      showErrorMessage: async (message: string, ...buttons: string[]) => {
        recorded.errors.push(message);
        recorded.errorButtons.push(buttons);
        return recorded.choice;
      },
      showWarningMessage: async (message: string) => { recorded.errors.push(message); return undefined; },
      onDidChangeActiveTextEditor: () => ({ dispose() {} }),
      createWebviewPanel: (_type: string, title: string, _column: unknown, options: unknown) => {
        const panel = { title, options, webview: { html: "", cspSource: "vscode-webview:" } };
        recorded.panels.push(panel);
        return panel;
      },
      showTextDocument: async (doc: { path: string }) => { recorded.opened.push(doc.path); },
    },
    workspace: {
      workspaceFolders: folders.map((folder) => ({ uri: { fsPath: folder, scheme: "file", toString: () => `file://${folder}` } })),
      getWorkspaceFolder: () => undefined,
      createFileSystemWatcher: (pattern: string) => {
        const watcher = {
          pattern, created: undefined as undefined | (() => unknown), disposed: false,
          onDidCreate(fn: () => unknown) { watcher.created = fn; return { dispose() {} }; },
          dispose() { watcher.disposed = true; },
        };
        recorded.watchers.push(watcher);
        return watcher;
      },
      getConfiguration: () => ({ get: (key: string) => recorded.settings[key] }),
      onDidChangeConfiguration: () => ({ dispose() {} }),
      openTextDocument: async (uri: { fsPath: string }) => ({ path: uri.fsPath }),
    },
    commands: {
      registerCommand: (name: string, fn: (...args: unknown[]) => unknown) => {
        recorded.commands.set(name, fn);
        return { dispose() {} };
      },
      executeCommand: async (command: string, ...args: unknown[]) => {
        recorded.executed.push({ command, args });
        return { ok: true };
      },
    },
    extensions: { getExtension: () => undefined },
  };
  const languageClient = { LanguageClient: FakeClient, TransportKind: { stdio: 0 }, WorkDoneProgress: { type: {} },
    RevealOutputChannelOn: { Info: 1, Warn: 2, Error: 3, Never: 4 } };
  const load = Module._load;
  Module._load = function (request: string, ...rest: unknown[]) {
    if (request === "vscode") {
      return vscode;
    }
    if (request === "vscode-languageclient/node") {
      return languageClient;
    }
    return load.call(this, request, ...rest);
  };
  for (const key of Object.keys(require.cache)) {
    if (key.includes(`${path.sep}src${path.sep}`)) {
      delete require.cache[key];
    }
  }
  return recorded;
}

function fakeServer(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "evalspec-ext-"));
  const file = path.join(dir, "evalspec-lsp");
  fs.writeFileSync(file, "#!/bin/sh\n", { mode: 0o755 });
  return file;
}

test("activate contributes the commands, starts the server and follows runs in the status bar", async () => {
  const server = fakeServer();
  const recorded = install({ serverPath: server, serverArgs: [], run: { models: ["echo"] } });
  const extension = require("../src/extension");
  await extension.activate({ subscriptions: [] });

  for (const name of ["evalspec.runActiveFile", "evalspec.runAtCursor", "evalspec.planActiveFile",
    "evalspec.cancelActiveRun", "evalspec.showResultsActiveFile", "evalspec.restartServer"]) {
    assert.ok(recorded.commands.has(name), name);
  }
  const [client] = recorded.clients;
  assert.ok(client.started);
  // The server's cancellable progress is shown by the extension's own feature (a notification with Cancel).
  const caps: any = {};
  client.features[0].fillClientCapabilities(caps);
  assert.equal(caps.window.workDoneProgress, true);
  assert.equal(client.serverOptions.run.command, server);
  assert.deepEqual(client.clientOptions.initializationOptions.run, { models: ["echo"] });
  // A request answered "still checking" is no error toast (the server asks for the views again).
  assert.equal(client.clientOptions.revealOutputChannelOn, 4);

  // The server's run notifications drive the item; clicking it while running cancels the run.
  client.handlers.get("evalspec/runState")!({ uri: "file:///w/a.weval.yml", running: true, done: 1, total: 4 });
  assert.equal(recorded.item.visible, true);
  assert.equal(recorded.item.text, "$(sync~spin) evalspec 1/4");
  assert.equal(recorded.item.command, "evalspec.cancelActiveRun");
  await recorded.commands.get("evalspec.cancelActiveRun")!();
  assert.deepEqual(recorded.executed.at(-1), { command: "evalspec.cancelRun", args: [{ uri: "file:///w/a.weval.yml" }] });
  client.handlers.get("evalspec/runState")!({ uri: "file:///w/a.weval.yml", running: false, mean: 0.5 });
  assert.equal(recorded.item.text, "$(beaker) evalspec mean 0.50");

  // "Run the prompt at the cursor" sends the cursor's line; the server finds the prompt around it.
  await recorded.commands.get("evalspec.runAtCursor")!();
  assert.deepEqual(recorded.executed.at(-1), { command: "evalspec.run", args: [{ uri: "file:///w/a.weval.yml", line: 7 }] });

  // The results lens goes through the client's middleware: the server is asked not to open anything.
  const next = async (command: string, args: unknown[]) => {
    recorded.executed.push({ command: `server:${command}`, args });
    return { ok: false, error: "this file has no finished run yet" };
  };
  await client.clientOptions.middleware.executeCommand("evalspec.showResults", [{ uri: "file:///w/a.weval.yml" }], next);
  assert.deepEqual(recorded.executed.at(-1), {
    command: "server:evalspec.showResults", args: [{ uri: "file:///w/a.weval.yml", open: false }],
  });
  assert.equal(recorded.errors.at(-1), "evalspec: this file has no finished run yet");
  await extension.deactivate();
});

function withPath<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const saved = process.env.PATH;
  process.env.PATH = dir;
  return fn().finally(() => { process.env.PATH = saved; });
}

test("no server anywhere: one message naming what was tried, with buttons to set the path or read the docs", async () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "evalspec-ws-"));
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), "evalspec-empty-"));
  for (const [choice, expected] of [["Set evalspec.serverPath", "settings"], ["Install instructions", "docs"]]) {
    const recorded = install({ serverPath: "", serverArgs: [] }, [workspace], choice);
    await withPath(empty, async () => {
      const extension = require("../src/extension");
      await extension.activate({ subscriptions: [] });
    });
    assert.equal(recorded.clients.length, 0);
    assert.equal(recorded.errors.length, 1);
    assert.match(recorded.errors[0], /evalspec-lsp language server was not found/);
    assert.ok(recorded.errors[0].includes(path.join(workspace, ".venv", "bin")), recorded.errors[0]);
    assert.ok(recorded.errors[0].includes(path.join(workspace, "venv", "bin")), recorded.errors[0]);
    assert.match(recorded.errors[0], /PATH/);
    assert.deepEqual(recorded.errorButtons[0], ["Set evalspec.serverPath", "Install instructions"]);
    await new Promise((resolve) => setImmediate(resolve));
    if (expected === "settings") {
      assert.deepEqual(recorded.executed.at(-1), { command: "workbench.action.openSettings", args: ["evalspec.serverPath"] });
    } else {
      assert.equal(recorded.external.length, 1);
      assert.match(recorded.external[0], /^https:\/\/.*#finding-the-server$/);
    }
  }
});

test("no server yet: a .venv made afterwards (pip install of evalspec there) starts it, no reload needed", async () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "evalspec-ws-"));
  const recorded = install({ serverPath: "", serverArgs: [] }, [workspace]);
  await withPath(fs.mkdtempSync(path.join(os.tmpdir(), "evalspec-empty-")), async () => {
    const extension = require("../src/extension");
    await extension.activate({ subscriptions: [] });
    assert.equal(recorded.clients.length, 0);
    const [watcher] = recorded.watchers;
    assert.equal(watcher.pattern, "**/{.venv,venv}{,/**}");
    fs.mkdirSync(path.join(workspace, ".venv", "bin"), { recursive: true });
    await watcher.created!();  // the folder first: still no server, still watching
    assert.equal(watcher.disposed, false);
    assert.equal(recorded.clients.length, 0);
    const server = path.join(workspace, ".venv", "bin", "evalspec-lsp");
    fs.writeFileSync(server, "#!/bin/sh\n", { mode: 0o755 });
    await watcher.created!();
    assert.equal(watcher.disposed, true);
    assert.equal(recorded.clients.length, 1);
    assert.equal(recorded.clients[0].serverOptions.run.command, server);
    await extension.deactivate();
  });
});

test("the workspace's venv server is started when PATH has none (the extension host's PATH is not the shell's)", async () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "evalspec-ws-"));
  fs.mkdirSync(path.join(workspace, ".venv", "bin", "evalspec-lsp"), { recursive: true });  // a folder is no server
  fs.mkdirSync(path.join(workspace, "venv", "bin"), { recursive: true });
  const server = path.join(workspace, "venv", "bin", "evalspec-lsp");
  fs.writeFileSync(server, "#!/bin/sh\n", { mode: 0o755 });
  const recorded = install({ serverPath: "", serverArgs: [] }, [workspace]);
  await withPath(fs.mkdtempSync(path.join(os.tmpdir(), "evalspec-empty-")), async () => {
    const extension = require("../src/extension");
    await extension.activate({ subscriptions: [] });
    await extension.deactivate();
  });
  assert.deepEqual(recorded.errors, []);
  assert.equal(recorded.clients[0].serverOptions.run.command, server);
});

test("show results opens the run's report in a panel, or the results file when there is no report", async () => {
  const server = fakeServer();
  const recorded = install({ serverPath: server, serverArgs: [] });
  const extension = require("../src/extension");
  await extension.activate({ subscriptions: [] });
  const [client] = recorded.clients;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "evalspec-report-"));
  const report = path.join(dir, "run_comparison.report.html");
  const page = `<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; ` +
    `script-src 'sha256-abc='; style-src 'unsafe-inline'"></head><body><div id="app"></div><script>1</script></body></html>`;
  fs.writeFileSync(report, page);
  const answer = { ok: true, file: path.join(dir, "run_comparison.json"), report };
  await client.clientOptions.middleware.executeCommand("evalspec.showResults", [{ uri: "file:///w/a.weval.yml" }],
    async () => answer);
  const [panel] = recorded.panels;
  assert.equal(panel.title, "evalspec: run_comparison.report.html");
  assert.equal(panel.options.enableScripts, true);  // its own policy pins its one script
  assert.equal(panel.webview.html, page);
  // No report (the report could not be made): the results file opens in an editor instead.
  await client.clientOptions.middleware.executeCommand("evalspec.showResults", [{ uri: "file:///w/a.weval.yml" }],
    async () => ({ ok: true, file: answer.file, report: null }));
  assert.deepEqual(recorded.opened, [answer.file]);
  assert.equal(recorded.panels.length, 1);
  await extension.deactivate();
});
