// Where evalspec-lsp is, in this order: the `evalspec.serverPath` setting; the workspace's own
// virtual environment (`.venv/`, then `venv/`, in the active file's folder first); beside the Python
// interpreter selected in VS Code (the Python extension); on PATH. The extension host's PATH is often
// not the shell's (a launcher, Remote-SSH, WSL, a container), so PATH comes last. Pure: the file
// system and environment come in; when nothing is found the answer lists every place tried.
import * as path from "path";

export interface Lookup {
  setting: string; // evalspec.serverPath ("" = find it)
  args: string[]; // evalspec.serverArgs
  workspaceFolders?: string[]; // file-system paths, the active file's folder first
  pythonPath?: string; // the selected interpreter, when the Python extension says
  pathEnv: string; // process.env.PATH
  platform: string; // process.platform
  exists(file: string): boolean;
}

export type Source = "setting" | "workspace" | "python" | "path";

export type Found =
  | { command: string; args: string[]; source: Source }
  | { error: string; tried: string[] };

export const INSTALL_DOCS = "https://github.com/evalspec/evalspec/tree/main/editors/vscode#finding-the-server";
export const SET_PATH = "Set evalspec.serverPath";
export const OPEN_DOCS = "Install instructions";

export function notFound(tried: string[]): string {
  return (
    "evalspec: the evalspec-lsp language server was not found. Tried: " + tried.join("; ") + ". " +
    "Install the evalspec-lsp distribution (`pip install .` in a checkout of evalspec) in the workspace's .venv, or set `evalspec.serverPath` to its full path."
  );
}

function executableNames(platform: string): string[] {
  return platform === "win32" ? ["evalspec-lsp.exe", "evalspec-lsp.cmd", "evalspec-lsp"] : ["evalspec-lsp"];
}

function p(platform: string): path.PlatformPath {
  return platform === "win32" ? path.win32 : path.posix;
}

/** The first of the server's names that exists in `dir`. */
function inDir(dir: string, lookup: Lookup): string | undefined {
  for (const n of executableNames(lookup.platform)) {
    const candidate = p(lookup.platform).join(dir, n);
    if (lookup.exists(candidate)) {
      return candidate;
    }
  }
  return undefined;
}

function onPath(name: string, lookup: Lookup): string | undefined {
  const sep = lookup.platform === "win32" ? ";" : ":";
  const names = name === "evalspec-lsp" ? executableNames(lookup.platform) : [name];
  for (const dir of lookup.pathEnv.split(sep)) {
    if (!dir) {
      continue;
    }
    for (const n of names) {
      const candidate = p(lookup.platform).join(dir, n);
      if (lookup.exists(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** A virtual environment's scripts folder: bin/ (Scripts\ on Windows). */
function scripts(platform: string): string {
  return platform === "win32" ? "Scripts" : "bin";
}

function fromSetting(setting: string, lookup: Lookup): Found {
  const tried = [`evalspec.serverPath = ${setting}`];
  const paths = p(lookup.platform);
  if (setting.includes("/") || setting.includes("\\")) {
    // A relative path is taken from each workspace folder (e.g. `.venv/bin/evalspec-lsp`).
    const candidates = paths.isAbsolute(setting)
      ? [setting]
      : (lookup.workspaceFolders ?? []).map((folder) => paths.join(folder, setting));
    for (const candidate of candidates) {
      if (lookup.exists(candidate)) {
        return { command: candidate, args: lookup.args, source: "setting" };
      }
    }
    const where = candidates.length ? candidates.join(", ") : "no workspace folder to resolve it from";
    return { error: `evalspec: evalspec.serverPath is ${setting}, which does not exist (${where}).`, tried };
  }
  const found = onPath(setting, lookup);
  return found
    ? { command: found, args: lookup.args, source: "setting" }
    : { error: `evalspec: evalspec.serverPath is '${setting}', which is not on PATH.`, tried };
}

export function findServer(lookup: Lookup): Found {
  const setting = lookup.setting.trim();
  if (setting) {
    return fromSetting(setting, lookup);
  }
  const tried: string[] = [];
  const paths = p(lookup.platform);
  for (const folder of lookup.workspaceFolders ?? []) {
    for (const venv of [".venv", "venv"]) {
      const dir = paths.join(folder, venv, scripts(lookup.platform));
      tried.push(dir);
      const found = inDir(dir, lookup);
      if (found) {
        return { command: found, args: lookup.args, source: "workspace" };
      }
    }
  }
  if (lookup.pythonPath) {
    // A virtual environment's scripts sit beside its python (bin/ or Scripts\).
    const dir = paths.dirname(lookup.pythonPath);
    tried.push(`${dir} (the selected Python interpreter's)`);
    const found = inDir(dir, lookup);
    if (found) {
      return { command: found, args: lookup.args, source: "python" };
    }
  } else {
    tried.push("the Python extension's interpreter (none selected or no Python extension)");
  }
  tried.push("PATH");
  const found = onPath("evalspec-lsp", lookup);
  return found ? { command: found, args: lookup.args, source: "path" } : { error: notFound(tried), tried };
}
