// Where evalspec-lsp is: the `evalspec.serverPath` setting, else next to the Python interpreter selected
// in VS Code (the Python extension), else on PATH. Pure: the file system and environment come in.
import * as path from "path";

export interface Lookup {
  setting: string; // evalspec.serverPath ("" = find it)
  args: string[]; // evalspec.serverArgs
  pythonPath?: string; // the selected interpreter, when the Python extension says
  pathEnv: string; // process.env.PATH
  platform: string; // process.platform
  exists(file: string): boolean;
}

export type Found =
  | { command: string; args: string[]; source: "setting" | "python" | "path" }
  | { error: string };

export const NOT_FOUND =
  "evalspec: the evalspec-lsp language server was not found. Install it (`pip install evalspec-lsp`) in the " +
  "Python interpreter selected in VS Code or on PATH, or set `evalspec.serverPath` to its full path.";

function executableNames(platform: string): string[] {
  return platform === "win32" ? ["evalspec-lsp.exe", "evalspec-lsp.cmd", "evalspec-lsp"] : ["evalspec-lsp"];
}

function join(platform: string, dir: string, name: string): string {
  return platform === "win32" ? path.win32.join(dir, name) : path.posix.join(dir, name);
}

function dirname(platform: string, file: string): string {
  return platform === "win32" ? path.win32.dirname(file) : path.posix.dirname(file);
}

function onPath(name: string, lookup: Lookup): string | undefined {
  const sep = lookup.platform === "win32" ? ";" : ":";
  const names = name === "evalspec-lsp" ? executableNames(lookup.platform) : [name];
  for (const dir of lookup.pathEnv.split(sep)) {
    if (!dir) {
      continue;
    }
    for (const n of names) {
      const candidate = join(lookup.platform, dir, n);
      if (lookup.exists(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

export function findServer(lookup: Lookup): Found {
  const setting = lookup.setting.trim();
  if (setting) {
    if (setting.includes("/") || setting.includes("\\")) {
      return lookup.exists(setting)
        ? { command: setting, args: lookup.args, source: "setting" }
        : { error: `evalspec: evalspec.serverPath is ${setting}, which does not exist.` };
    }
    const found = onPath(setting, lookup);
    return found
      ? { command: found, args: lookup.args, source: "setting" }
      : { error: `evalspec: evalspec.serverPath is '${setting}', which is not on PATH.` };
  }
  if (lookup.pythonPath) {
    // A virtual environment's scripts sit beside its python (bin/ or Scripts\).
    const dir = dirname(lookup.platform, lookup.pythonPath);
    for (const n of executableNames(lookup.platform)) {
      const candidate = join(lookup.platform, dir, n);
      if (lookup.exists(candidate)) {
        return { command: candidate, args: lookup.args, source: "python" };
      }
    }
  }
  const found = onPath("evalspec-lsp", lookup);
  return found ? { command: found, args: lookup.args, source: "path" } : { error: NOT_FOUND };
}
