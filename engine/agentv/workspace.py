"""`workspace`: an object (template, isolation, repos, hooks, setup/teardown) or a path to one."""

from __future__ import annotations

from typing import Any

from ..findings import replace
from ..source import Mapping, Node, Sequence
from .context import Context


def check_workspace(ctx: Context, node: Node) -> Any:
    """The workspace as plain data (a path string stays a string); reports missing folders and files."""
    path_text = ctx.str_of(node)
    if path_text is not None:
        if ctx.folder is not None and ctx.fs.resolve(path_text, [ctx.folder]) is None:
            ctx.out.error("missing-file", node.span,
                          f"Workspace file '{path_text}' not found (relative to the eval file's folder).")
        return path_text
    entries = ctx.object(node, "workspace")
    if entries is None:
        return None
    template = entries.get("template")
    text = ctx.str_of(template)
    if text is not None and ctx.folder is not None and ctx.fs.resolve(text, [ctx.folder]) is None:
        ctx.out.warning("missing-file", template.span,  # type: ignore[union-attr]
                        f"Workspace template '{text}' not found (relative to the eval file's folder).")
    hooks = entries.get("hooks")
    if isinstance(hooks, Mapping):
        for _, hook in hooks.pairs:
            if not isinstance(hook, Mapping):
                continue
            _argv_not_empty(ctx, hook.get("command") or hook.get("script"), "command")
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
    return ctx.values.plain(node)


def _argv_not_empty(ctx: Context, node: Node | None, field: str) -> None:
    if isinstance(node, Sequence) and not node.items:
        ctx.out.error("invalid-command", node.span, f"'{field}' cannot be empty.")
