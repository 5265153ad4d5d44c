// evalspec for VS Code: starts evalspec-lsp for YAML and JSON files, adds run commands, a status-bar
// item for runs, and shows a run's HTML report in a panel.
//
// The server itself decides which files are Weval blueprints or AgentV eval files and answers nothing
// for any other YAML/JSON, so it runs next to the YAML extension without noise.
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  StaticFeature,
  TransportKind,
  WorkDoneProgress,
} from "vscode-languageclient/node";

import { ProgressHost, ServerProgress } from "./progress";
import { ShowResultsAnswer, panelContent, panelTitle } from "./results";
import { Found, INSTALL_DOCS, Lookup, OPEN_DOCS, SET_PATH, findServer } from "./serverCommand";
import { CANCEL_COMMAND, RESULTS_COMMAND, RunState, RunStatus } from "./status";

let client: LanguageClient | undefined;

const ASK_AGAIN_MS = 500; // "still checking": asked again this often
const ASK_AGAIN_FOR_MS = 120_000; // and for this long at most

/** `ask()`'s answer, asked again while the server cancels it ("still checking") and VS Code has not. */
async function askedAgain<T>(ask: () => vscode.ProviderResult<T>, token: vscode.CancellationToken): Promise<T | null | undefined> {
  const until = Date.now() + ASK_AGAIN_FOR_MS;
  for (;;) {
    try {
      return await ask();
    } catch (err) {
      if (!(err instanceof vscode.CancellationError) || token.isCancellationRequested || Date.now() > until) {
        throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, ASK_AGAIN_MS));
      if (token.isCancellationRequested) {
        throw err;
      }
    }
  }
}
let status: RunStatus | undefined;
let extensionUri: vscode.Uri | undefined;

/** The interpreter selected in VS Code, when the Python extension is installed. */
async function selectedPython(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) {
    return undefined;
  }
  try {
    const api = (ext.isActive ? ext.exports : await ext.activate()) as any;
    const active = api?.environments?.getActiveEnvironmentPath?.(resource);
    if (active?.path) {
      return String(active.path);
    }
    const details = api?.settings?.getExecutionDetails?.(resource);
    return details?.execCommand?.[0];
  } catch {
    return undefined;
  }
}

async function openResults(answer: ShowResultsAnswer | undefined): Promise<void> {
  if (!answer || !answer.ok) {
    void vscode.window.showWarningMessage(`evalspec: ${answer?.error ?? "no results to show"}`);
    return;
  }
  if (answer.report && fs.existsSync(answer.report)) {
    const folder = vscode.Uri.file(path.dirname(answer.report));
    const html = fs.readFileSync(answer.report, "utf8");
    const probe = panelContent(html, "");
    const panel = vscode.window.createWebviewPanel("evalspecReport", panelTitle(answer.report),
      vscode.ViewColumn.Beside, { enableScripts: probe.scripts, localResourceRoots: [folder] });
    panel.webview.html = panelContent(html, panel.webview.cspSource).html;
    return;
  }
  if (answer.file) {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(answer.file));
    await vscode.window.showTextDocument(doc, { preview: true });
  }
}

/** The workspace folders' paths, the active file's folder first. */
function workspacePaths(resource: vscode.Uri | undefined): string[] {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file");
  const active = resource ? vscode.workspace.getWorkspaceFolder(resource) : undefined;
  const ordered = active ? [active, ...folders.filter((f) => f.uri.toString() !== active.uri.toString())] : folders;
  return ordered.map((f) => f.uri.fsPath);
}

/** Where the server is (see serverCommand.ts); the Python extension is asked only when the
 * setting and the workspace's virtual environments have not found it. */
async function locateServer(config: vscode.WorkspaceConfiguration): Promise<Found> {
  const resource = vscode.window.activeTextEditor?.document.uri;
  const lookup: Lookup = {
    setting: config.get<string>("serverPath") ?? "",
    args: config.get<string[]>("serverArgs") ?? [],
    workspaceFolders: workspacePaths(resource),
    pathEnv: process.env.PATH ?? "",
    platform: process.platform,
    exists: (file) => {
      try {
        return fs.statSync(file).isFile();
      } catch {
        return false;
      }
    },
  };
  const found = findServer(lookup);
  if ("error" in found ? lookup.setting.trim() === "" : found.source === "path") {
    const pythonPath = await selectedPython(resource);
    if (pythonPath) {
      return findServer({ ...lookup, pythonPath });
    }
  }
  return found;
}

/** The server's cancellable progress (runs) as a notification with Cancel (progress.ts). */
function progressFeature(started: LanguageClient): StaticFeature {
  const parts = new Set<ServerProgress>();
  const host: ProgressHost = {
    withProgress: (options, task) => {
      void vscode.window.withProgress({
        location: options.notification ? vscode.ProgressLocation.Notification : vscode.ProgressLocation.Window,
        title: options.title, cancellable: options.cancellable,
      }, (progress, token) => task(progress, token));
    },
    onProgress: (token, handler) => started.onProgress(WorkDoneProgress.type, token, handler),
    cancel: (token) => void started.sendNotification("window/workDoneProgress/cancel", { token }),
  };
  return {
    getState: () => ({ kind: "static" }),
    fillClientCapabilities: (capabilities) => {
      capabilities.window = { ...(capabilities.window ?? {}), workDoneProgress: true };
    },
    initialize: () => {
      // After the built-in progress feature: this handler replaces its status-bar-only one.
      started.onRequest("window/workDoneProgress/create", (params: { token: string | number }) => {
        parts.add(new ServerProgress(host, params.token, (part) => parts.delete(part)));
        return null;
      });
    },
    clear: () => {
      for (const part of parts) {
        part.end();
      }
      parts.clear();
    },
  };
}

let watcher: vscode.FileSystemWatcher | undefined;

/** No server yet: once a workspace .venv/ or venv/ has one (`pip install .` of an evalspec checkout there), it starts.
 * A folder made with its files at once may be reported as the folder alone: any creation under a
 * venv makes the extension look again (a few file checks). */
function watchForServer(): void {
  if (watcher) {
    return;
  }
  let looking = false;
  watcher = vscode.workspace.createFileSystemWatcher("**/{.venv,venv}{,/**}", false, true, true);
  watcher.onDidCreate(async () => {
    if (looking || client) {
      return;
    }
    looking = true;
    try {
      if (!("error" in (await locateServer(vscode.workspace.getConfiguration("evalspec"))))) {
        watcher?.dispose();
        watcher = undefined;
        await start();
      }
    } finally {
      looking = false;
    }
  });
}

export async function start(): Promise<void> {
  const config = vscode.workspace.getConfiguration("evalspec");
  const found = await locateServer(config);
  if ("error" in found) {
    watchForServer();
    const choice = await vscode.window.showErrorMessage(found.error, SET_PATH, OPEN_DOCS);
    if (choice === SET_PATH) {
      void vscode.commands.executeCommand("workbench.action.openSettings", "evalspec.serverPath");
    } else if (choice === OPEN_DOCS) {
      // The install steps ship with the extension: its own README, at "Finding the server".
      const readme = extensionUri ? vscode.Uri.joinPath(extensionUri, "README.md") : undefined;
      void (readme ? vscode.commands.executeCommand("markdown.showPreview", readme)
        : vscode.env.openExternal(vscode.Uri.parse(INSTALL_DOCS)));
    }
    return;
  }
  const serverOptions: ServerOptions = {
    run: { command: found.command, args: found.args, transport: TransportKind.stdio },
    debug: { command: found.command, args: [...found.args, "--log-level", "DEBUG"], transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "yaml" },
      { scheme: "file", language: "json" },
      { scheme: "untitled", language: "yaml" },
    ],
    initializationOptions: {
      debounceMs: config.get("diagnostics.debounceMs"), run: config.get("run"), inlayHints: config.get("inlayHints"),
      runCosts: config.get("runCosts"), docsUrl: config.get("docsUrl"),
    },
    // Changes to evalspec.run.* reach the server as workspace/didChangeConfiguration.
    synchronize: { configurationSection: "evalspec" },
    outputChannelName: "evalspec",
    // A request the server answers "still checking, ask again" (a file's first check outlasting the
    // request budget) is not an error to show: the failures are in the output channel, the server's
    // own messages still reach the user, and the server asks for the views again once the file is
    // checked. vscode-go and Microsoft's Python-tool extension template (the base of ruff's) do the same.
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    middleware: {
      // The outline and the links of a file still being checked: the server cancels the request
      // ("still checking", ServerCancelled, which the client makes a cancellation) and VS Code asks for
      // them again only when the file changes. Asked again here until answered.
      provideDocumentSymbols: (document, token, next) => askedAgain(() => next(document, token), token),
      provideDocumentLinks: (document, token, next) => askedAgain(() => next(document, token), token),
      // The results lens: the server finds the files, this extension shows them (a report panel
      // rather than raw JSON).
      executeCommand: async (command, args, next) => {
        if (command !== "evalspec.showResults") {
          return next(command, args);
        }
        const target = { ...(args[0] ?? {}), open: false };
        const answer = (await next(command, [target])) as ShowResultsAnswer | undefined;
        await openResults(answer);
        return answer;
      },
    },
  };
  const started = new LanguageClient("evalspec", "evalspec", serverOptions, clientOptions);
  started.registerFeature(progressFeature(started));
  started.onNotification("evalspec/runState", (state: RunState) => status?.update(state));
  try {
    await started.start();
    client = started;
  } catch (err) {
    void vscode.window.showErrorMessage(
      `evalspec: could not start ${found.command} (${(err as Error).message}). ` +
        "Install the evalspec-lsp distribution (`pip install .` in a checkout of evalspec) or set evalspec.serverPath.");
  }
}

export async function stop(): Promise<void> {
  watcher?.dispose();
  watcher = undefined;
  if (client) {
    const running = client;
    client = undefined;
    await running.stop();
  }
}

/** A server command for the active file: {uri} plus, for one prompt, the cursor's line. */
function forActiveFile(serverCommand: string, atCursor = false): () => Promise<unknown> {
  return async () => {
    const editor = vscode.window.activeTextEditor;
    if (!client || !editor) {
      void vscode.window.showWarningMessage("evalspec: open an eval file first (and check the server started).");
      return undefined;
    }
    const args: Record<string, unknown> = { uri: editor.document.uri.toString() };
    if (atCursor) {
      args.line = editor.selection.active.line;
    }
    // The server explains a refusal itself (window/showMessage).
    return vscode.commands.executeCommand(serverCommand, args);
  };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionUri = context.extensionUri;
  const item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status = new RunStatus(item);
  status.setActive(vscode.window.activeTextEditor?.document.uri.toString());
  context.subscriptions.push(
    item,
    vscode.commands.registerCommand("evalspec.runActiveFile", forActiveFile("evalspec.run")),
    vscode.commands.registerCommand("evalspec.runAtCursor", forActiveFile("evalspec.run", true)),
    vscode.commands.registerCommand("evalspec.planActiveFile", forActiveFile("evalspec.plan")),
    vscode.commands.registerCommand(CANCEL_COMMAND, forActiveFile("evalspec.cancelRun")),
    vscode.commands.registerCommand(RESULTS_COMMAND, forActiveFile("evalspec.showResults")),
    vscode.commands.registerCommand("evalspec.restartServer", async () => {
      await stop();
      await start();
    }),
    vscode.window.onDidChangeActiveTextEditor((editor) => status?.setActive(editor?.document.uri.toString())),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("evalspec.serverPath") || event.affectsConfiguration("evalspec.serverArgs")) {
        await stop();
        await start();
      }
    }),
  );
  await start();
}

export function deactivate(): Promise<void> {
  return stop();
}
