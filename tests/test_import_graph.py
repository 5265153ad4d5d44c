"""The import graph of engine/ and server/, read from the source: no import circles, and the engine
never imports the language server (ARCHITECTURE.md's layers).

Every import statement counts, also the ones inside functions (a lazy import hides a circle from the
interpreter, not from a reader); only `if TYPE_CHECKING:` blocks are left out, since they never run.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"evalspec": ROOT / "engine", "evalspec_lsp": ROOT / "server"}


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node except what sits under `if TYPE_CHECKING:`."""
    out: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                stack.extend(child.orelse)
                continue
            stack.append(child)
    return out


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """What `name` imports: `from X import Y` names the module X.Y when there is one, else X (so
    `from . import edits` is an edge to the submodule, not to the package's __init__)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    targets: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for alias in node.names:
                targets.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source)
    return targets


def graph() -> dict[str, set[str]]:
    """Module → the modules of engine/ and server/ it imports, and the packages those sit in: importing
    `a.b.c` runs `a/__init__.py` and `a/b/__init__.py` first, so a circle through a package's __init__ is
    a circle too. (The importer's own packages are left out: they are loaded before it.)"""
    known = modules()
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = set()
        for t in imports_of(name, path, known):
            parts = t.split(".")
            for i in range(1, len(parts) + 1):
                package = ".".join(parts[:i])
                if package in known and package != name and not name.startswith(package + "."):
                    targets.add(package)
        edges[name] = targets
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_is_read():
    edges = graph()
    assert "evalspec.run.cli" in edges["evalspec.cli"]  # a lazy import inside a function counts
    assert "evalspec.analysis" in edges["evalspec.incremental"]
    assert "evalspec.agentv.edits" in edges["evalspec.agentv.assertions"]  # `from . import edits`
    assert "evalspec.agentv" not in edges["evalspec.agentv.assertions"]  # its own package: loaded first
    assert "evalspec.providers" in edges["evalspec.run.generate.calls"]  # `from ..providers.x import` runs providers/__init__


def test_the_circle_finder_finds_circles():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles():
    assert circles(graph()) == []


def test_the_engine_never_imports_the_server():
    known = modules()
    for name, path in known.items():
        if name == "evalspec" or name.startswith("evalspec."):
            bad = {t for t in imports_of(name, path, known) if t.split(".")[0] in ("evalspec_lsp", "pygls", "lsprotocol")}
            assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_editor_features_do_not_load_the_http_clients():
    """Completion and hover list providers from the catalog; the clients (httpx, every provider) load
    only when a run needs them."""
    code = ("import sys, evalspec.ide.completion, evalspec.ide.hover; "
            "print(sorted(m for m in sys.modules if m == 'httpx' or m.startswith('evalspec.providers.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['evalspec.providers.base', 'evalspec.providers.catalog', 'evalspec.providers.redact', 'evalspec.providers.tool_calls']"


def test_the_providers_package_still_exports_its_names():
    import evalspec.providers as providers

    for name in providers.__all__:
        assert getattr(providers, name) is not None
    assert set(providers.__all__) <= set(dir(providers))
