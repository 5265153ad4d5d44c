"""`workspace`: an object (template, isolation, repos, hooks, setup/teardown) or a path to one."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..findings import replace
from ..source import Mapping, Node, Sequence
from .context import Context

# Fields v2.19's loader refuses a file for, with its messages (yaml-parser.ts parseWorkspaceConfig).
REMOVED_FIELDS = {
    "static_path": "workspace.static_path has been removed. Use workspace.path with workspace.mode=static.",
    "pool": "workspace.pool has been removed. Use workspace.mode='pooled' or 'temp'.",
    "static": "workspace.static has been removed. Use workspace.mode='static'.",
}


def check_workspace(ctx: Context, node: Node) -> Any:
    """The workspace as plain data (a path string stays a string); reports missing folders and files."""
    path_text = ctx.str_of(node)
    if path_text is not None:
        found = ctx.fs.resolve(path_text, [ctx.folder]) if ctx.folder is not None else None
        if ctx.folder is not None and found is None:
            ctx.out.error("missing-file", node.span,
                          f"Workspace file '{path_text}' not found (relative to the eval file's folder).")
        elif found is not None:
            ctx.outside_project(node, path_text, found, "read it")
        return path_text
    if isinstance(node, Mapping):
        for field_name, message in REMOVED_FIELDS.items():
            removed = node.key_node(field_name)
            if removed is not None:  # AgentV's loader throws: the file is refused
                ctx.out.error("removed-field", removed.span, message)
    entries = ctx.object(node, "workspace")
    if entries is None:
        return None
    template = entries.get("template")
    text = ctx.str_of(template)
    found = ctx.fs.resolve(text, [ctx.folder]) if text is not None and ctx.folder is not None else None
    if text is not None and ctx.folder is not None and found is None:
        ctx.out.warning("missing-file", template.span,  # type: ignore[union-attr]
                        f"Workspace template '{text}' not found (relative to the eval file's folder).")
    elif found is not None:
        ctx.outside_project(template, text, found, "copy it into the workspace")  # type: ignore[arg-type]
    if ctx.folder is not None:
        _folders_inside(ctx, entries.get("path"), ctx.folder, "use it as the workspace")
        repos = entries.get("repos")
        for repo in repos.items if isinstance(repos, Sequence) else ():
            _repo_inside(ctx, repo, ctx.folder)
    hooks = entries.get("hooks")
    if isinstance(hooks, Mapping):
        for _, hook in hooks.pairs:
            if not isinstance(hook, Mapping):
                continue
            _argv_not_empty(ctx, hook.get("command") or hook.get("script"), "command")
            _script_inside(ctx, hook)
            key = hook.key_node("script")
            if key is not None and not hook.has("command"):
                # check_object reported the deprecation; the repair is a rename.
                for f in ctx.out:
                    if f.code == "deprecated-field" and f.span == key.span and not f.fixes:
                        f.fixes = (replace("Rename 'script' to 'command'", key.span, "command"),)
    for name in ("setup", "teardown"):
        script = entries.get(name)
        if script is not None and hasattr(script, "get"):
            _argv_not_empty(ctx, script.get("script") or script.get("command"), "script")
            if isinstance(script, Mapping):
                _script_inside(ctx, script)
    return ctx.values.plain(node)


def _folders_inside(ctx: Context, node: Node | None, base: Path, use: str) -> Path | None:
    """The existing file or folder `node` names from `base`, reported when it is outside the project."""
    text = ctx.str_of(node)
    if node is None or text is None or not text.strip():
        return None
    found = ctx.fs.resolve(text, [base])
    if found is not None and ctx.outside_project(node, text, found, use):
        return None
    return found


def _repo_inside(ctx: Context, repo: Node, base: Path) -> None:
    """A repository cloned from the local disk (`source: {type: local, path}`, a `file://` URL or a
    plain path as the URL) must be inside the project: git would read it all into the workspace."""
    if not isinstance(repo, Mapping):
        return
    source = repo.get("source")
    if isinstance(source, Mapping):
        if ctx.str_of(source.get("type")) == "local":
            _folders_inside(ctx, source.get("path"), base, "clone it")
            return
        url_node = source.get("url")
    else:
        url_node = source if source is not None else repo.get("repo")
    url = ctx.str_of(url_node)
    if url_node is None or url is None:
        return
    local = local_git_path(url)
    if local is None:
        return
    found = ctx.fs.resolve(local, [base])
    if found is not None:
        ctx.outside_project(url_node, url, found, "clone it")


def local_git_path(url: str) -> str | None:
    """The folder a git URL names on this machine (`file:///x`, `/x`, `../x`), or None for a remote
    one (`https://…`, `git@host:x`)."""
    url = url.strip()
    if url.lower().startswith("file://"):
        return unquote(url[7:]) or None
    if "://" in url:
        return None
    colon, slash = url.find(":"), url.find("/")
    if colon > 0 and (slash < 0 or colon < slash):
        return None  # scp-like host:path
    return url or None


def _script_inside(ctx: Context, script: Mapping) -> None:
    """A hook or setup script's `cwd` and the scripts its command names must be inside the project."""
    if ctx.folder is None:
        return
    cwd: Path | None = ctx.folder
    cwd_node = script.get("cwd")
    if cwd_node is not None:
        cwd = _folders_inside(ctx, cwd_node, ctx.folder, "run scripts in it")
    argv = script.get("command") or script.get("script")
    if cwd is None or argv is None:
        return
    for item, token in ctx.script_tokens(argv):
        if ctx.fs.exists(cwd / token):
            ctx.outside_project(item, token, cwd / token, "run it")


def _argv_not_empty(ctx: Context, node: Node | None, field: str) -> None:
    if isinstance(node, Sequence) and not node.items:
        ctx.out.error("invalid-command", node.span, f"'{field}' cannot be empty.")
