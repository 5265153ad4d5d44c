// evalspec for VS Code: starts evalspec-lsp for YAML and JSON files. No build step.
//
// The server itself decides which files are Weval blueprints or AgentV eval files and answers
// nothing for any other YAML/JSON, so it runs next to the YAML extension without noise.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function serverOptions(config) {
  const command = config.get("serverPath") || "evalspec-lsp";
  const args = config.get("serverArgs") || [];
  return {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args: [...args, "--log-level", "DEBUG"], transport: TransportKind.stdio },
  };
}

function clientOptions(config) {
  return {
    documentSelector: [
      { scheme: "file", language: "yaml" },
      { scheme: "file", language: "json" },
      { scheme: "untitled", language: "yaml" },
    ],
    initializationOptions: { debounceMs: config.get("diagnostics.debounceMs"), run: config.get("run") },
    // Changes to evalspec.run.* reach the server as workspace/didChangeConfiguration.
    synchronize: { configurationSection: "evalspec" },
    outputChannelName: "evalspec",
  };
}

async function start() {
  const config = vscode.workspace.getConfiguration("evalspec");
  client = new LanguageClient("evalspec", "evalspec", serverOptions(config), clientOptions(config));
  try {
    await client.start();
  } catch (err) {
    vscode.window.showErrorMessage(
      `evalspec: could not start '${config.get("serverPath")}' (${err.message}). ` +
        "Install it with `pip install evalspec` or set evalspec.serverPath."
    );
  }
}

async function stop() {
  if (client) {
    const running = client;
    client = undefined;
    await running.stop();
  }
}

// The server's commands take {uri, item?}; the lenses pass them, these palette entries pass the active file.
function forActiveFile(serverCommand) {
  return async () => {
    const editor = vscode.window.activeTextEditor;
    if (!client || !editor) {
      return;
    }
    // The server explains a refusal itself (window/showMessage).
    await vscode.commands.executeCommand(serverCommand, { uri: editor.document.uri.toString() });
  };
}

async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand("evalspec.runActiveFile", forActiveFile("evalspec.run")),
    vscode.commands.registerCommand("evalspec.planActiveFile", forActiveFile("evalspec.plan")),
    vscode.commands.registerCommand("evalspec.cancelActiveRun", forActiveFile("evalspec.cancelRun")),
    vscode.commands.registerCommand("evalspec.restartServer", async () => {
      await stop();
      await start();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("evalspec.serverPath") || event.affectsConfiguration("evalspec.serverArgs")) {
        await stop();
        await start();
      }
    })
  );
  await start();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate };
