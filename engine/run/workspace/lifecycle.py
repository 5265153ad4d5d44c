"""AgentV workspaces in a run: the folder a test's agent works in, and the scripts around it.

`workspace` (the suite's, or a test's own, which wins; an object or a path to a YAML file holding
one; a target's `workspace_template` is refused, as v2.19 refuses it):

- `template`: a folder copied into a fresh temporary workspace (no template: an empty folder);
- `isolation: shared` (default): one workspace for the whole run; `per_test`: a fresh copy per test;
- `setup` / `teardown` `{script | command: argv, timeout_ms, cwd}`: after a workspace is created /
  before it is removed;
- `hooks` `{before_all, before_each, after_each, after_all: {command: argv, timeout_ms, cwd}}`
  (`enabled: false` turns them off; `reset: fast | strict` on a hook resets the `repos` after each test
  in a shared workspace);
- `repos`: git repositories cloned into each new workspace (see workspace/repos.py);
- `mode: static` with `path`: that folder is the workspace, used as it is and never removed
  (`temp` and `pooled` both get a fresh folder: pooling only saves AgentV time, results are the same).

Scripts run in the folder of the file that declares them (or their `cwd`, relative to it), so that
their own paths resolve as written; they find the workspace in `{workspace_path, test_id, eval_file,
hook}` (JSON on stdin) and in `AGENTV_WORKSPACE_PATH` / `AGENTV_TEST_ID` in their environment, 60 s unless `timeout_ms` says otherwise. A failing creation,
setup or before-hook fails the test's row with the reason (the target is not called); a failing
after-hook or teardown is reported on the row and as a warning. Only an explicit run gets here.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...file_source import MAX_READ, read_regular_bytes
from ...jsonio import dumps_bytes
from ...script_process import run_script
from ..score.code_judge import missing_program, shell_argv
from .repos import RepoError, RepoSpec, clone, diff, parse_repos, reset

DEFAULT_SCRIPT_TIMEOUT = 60.0
HOOKS = ("before_all", "before_each", "after_each", "after_all")


class WorkspaceError(Exception):
    """A workspace could not be made ready; the message is the row's error."""


@dataclass(frozen=True)
class Script:
    what: str  # "setup", "hooks.before_each", … (for messages)
    argv: tuple[str, ...]
    timeout: float
    cwd: Path  # the declaring file's folder, or the script's own `cwd` relative to it


@dataclass(frozen=True)
class WorkspaceSpec:
    template: Path | None
    per_test: bool
    setup: Script | None = None
    teardown: Script | None = None
    hooks: dict[str, Script] = field(default_factory=dict)
    repos: tuple[RepoSpec, ...] = ()
    reset: str = "none"  # after each test in a shared workspace: none, fast or strict
    static: Path | None = None  # mode: static: this folder, as it is


def _script(what: str, raw: Any, base: Path) -> Script:
    if isinstance(raw, str | list):
        raw = {"command": raw}
    if not isinstance(raw, Mapping):
        raise WorkspaceError(f"workspace {what}: expected {{command: [argv…], timeout_ms}}")
    command = raw.get("command", raw.get("script"))
    if isinstance(command, str) and command.strip():
        argv = shell_argv(command)
    elif isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        argv = list(command)
    else:
        raise WorkspaceError(f"workspace {what}: 'command' must be a non-empty argv list")
    timeout = DEFAULT_SCRIPT_TIMEOUT
    ms = raw.get("timeout_ms")
    if isinstance(ms, int | float) and not isinstance(ms, bool) and ms > 0:
        timeout = float(ms) / 1000
    cwd = raw.get("cwd")
    return Script(what, tuple(argv), timeout, (base / cwd) if isinstance(cwd, str) and cwd else base)


def parse_workspace(raw: Any, base: Path, inside: Callable[[Path], bool] | None = None, *,
                    root: Path | None = None) -> WorkspaceSpec | None:
    """The workspace as written (an object, or a path to a YAML file of one), relative to `base`.
    `inside`: whether a path is inside the project; a workspace file, template, static folder, local
    repository or script cwd that is not is refused (a workspace file's content was never checked, so
    this is where its references are confined). None: anything goes (--allow-outside-files). `root`:
    the project's folder, which the workspace file opened must lie in (checked on the open file)."""
    if raw is None:
        return None

    def confined(path: Path, what: str) -> Path:
        if inside is not None and not inside(path):
            raise WorkspaceError(f"the workspace {what} {path} is outside the project; nothing was copied or run "
                                 "(--allow-outside-files allows it)")
        return path

    if isinstance(raw, str):
        path = confined(base / raw, "file")
        try:
            from ...agentv.yaml_file import agentv_yaml_value

            data = read_regular_bytes(path, MAX_READ, inside=root)  # never a FIFO, a device, a link out
            if data is None:
                raise OSError("not a regular file of at most 10 MB")
            raw = agentv_yaml_value(data.decode("utf-8"))  # as AgentV: the `yaml` package, YAML 1.2
        except (OSError, ValueError) as exc:  # YamlFileError: `line:col: problem`
            raise WorkspaceError(f"cannot read the workspace file {path}: {exc}") from None
        base = path.parent
    if not isinstance(raw, Mapping):
        raise WorkspaceError("workspace must be an object (template, isolation, setup, teardown, hooks)")
    template = raw.get("template")
    template_path = confined(base / template, "template") if isinstance(template, str) and template else None
    if template_path is not None and not template_path.is_dir():
        raise WorkspaceError(f"workspace template {template_path} is not a folder")
    hooks: dict[str, Script] = {}
    reset_mode = "none"
    raw_hooks = raw.get("hooks")
    if isinstance(raw_hooks, Mapping) and raw_hooks.get("enabled") is not False:
        for name in HOOKS:
            hook = raw_hooks.get(name)
            if isinstance(hook, Mapping) and hook.get("reset") in ("fast", "strict"):
                reset_mode = "strict" if "strict" in (reset_mode, hook["reset"]) else "fast"
                if hook.get("command", hook.get("script")) is None:
                    continue  # a hook that only asks for a reset
            if hook is not None:
                hooks[name] = _script(f"hooks.{name}", hook, base)
    static: Path | None = None
    if raw.get("mode") == "static":
        where = raw.get("path")
        if not isinstance(where, str) or not where:
            raise WorkspaceError("workspace mode static needs a 'path': the folder to use as the workspace")
        static = confined(base / where, "folder")
        if not static.is_dir():
            raise WorkspaceError(f"workspace path {static} is not a folder")
    try:
        repos = parse_repos(raw.get("repos"), base)
    except RepoError as exc:
        raise WorkspaceError(str(exc)) from None
    from ...agentv.workspace import local_git_path

    for repo in repos:
        local = local_git_path(repo.url)
        if local is not None:
            confined(base / local, "repository")
    setup = _script("setup", raw["setup"], base) if raw.get("setup") is not None else None
    teardown = _script("teardown", raw["teardown"], base) if raw.get("teardown") is not None else None
    for script in (*hooks.values(), setup, teardown):
        if script is not None:
            confined(script.cwd, f"{script.what} folder")
    return WorkspaceSpec(
        template=template_path, per_test=raw.get("isolation") == "per_test" and static is None,
        setup=setup, teardown=teardown, hooks=hooks, repos=repos, reset=reset_mode, static=static)


class Workspaces:
    """The workspaces of one run. `acquire(key, spec, test_id)` → the folder for a test; `release` after
    it was scored; `close()` at the end of the run (after_all, teardown, folders removed)."""

    def __init__(self, eval_file: Path, env: Mapping[str, str] | None) -> None:
        self.eval_file = eval_file
        self.env = dict(env) if env is not None else None
        self._shared: dict[int, tuple[WorkspaceSpec, Path]] = {}
        self._started: dict[int, WorkspaceSpec] = {}
        self._lock = asyncio.Lock()
        self._folders: list[Path] = []
        # A shared workspace whose repos are reset after each test serves one test at a time: a reset
        # under a test still running would pull its files away.
        self._turns: dict[int, asyncio.Lock] = {}

    def _turn(self, spec: WorkspaceSpec) -> asyncio.Lock | None:
        if spec.per_test or spec.reset == "none" or not spec.repos:
            return None
        return self._turns.setdefault(id(spec), asyncio.Lock())

    async def acquire(self, spec: WorkspaceSpec, test_id: str) -> Path:
        """A ready workspace for one test (before_each done). Raises WorkspaceError."""
        key = id(spec)
        async with self._lock:
            if key not in self._started:
                self._started[key] = spec
                base = await self._create(spec, "") if not spec.per_test else None
                if base is not None:
                    self._shared[key] = (spec, base)
                if "before_all" in spec.hooks:
                    await self._run(spec.hooks["before_all"], base or self.eval_file.parent, "")
            elif not spec.per_test and key not in self._shared:
                raise WorkspaceError("the shared workspace could not be created (see the first test's error)")
        folder = await self._create(spec, test_id) if spec.per_test else self._shared[key][1]
        turn = self._turn(spec)
        if turn is not None:
            await turn.acquire()
        try:
            if "before_each" in spec.hooks:
                await self._run(spec.hooks["before_each"], folder, test_id)
        except BaseException:
            if turn is not None:
                turn.release()
            raise
        return folder

    async def release(self, spec: WorkspaceSpec, folder: Path, test_id: str) -> list[str]:
        """after_each (and, per test, teardown and removal); the failures, as messages."""
        try:
            return await self._release(spec, folder, test_id)
        finally:
            turn = self._turn(spec)
            if turn is not None and turn.locked():
                turn.release()

    async def _release(self, spec: WorkspaceSpec, folder: Path, test_id: str) -> list[str]:
        problems: list[str] = []
        if "after_each" in spec.hooks:
            problems += await self._try(spec.hooks["after_each"], folder, test_id)
        if spec.per_test:
            if spec.teardown is not None:
                problems += await self._try(spec.teardown, folder, test_id)
            self._remove(folder)
        elif spec.reset != "none" and spec.static is None:
            for repo in spec.repos:
                try:
                    await reset(repo, folder, self.env, strict=spec.reset == "strict")
                except RepoError as exc:
                    problems.append(str(exc))
        return problems

    async def close(self) -> list[str]:
        problems: list[str] = []
        started, self._started = self._started, {}
        for key, spec in started.items():
            shared = self._shared.pop(key, None)
            folder = shared[1] if shared is not None else self.eval_file.parent
            if "after_all" in spec.hooks:
                problems += await self._try(spec.hooks["after_all"], folder, "")
            if shared is not None:
                if spec.teardown is not None:
                    problems += await self._try(spec.teardown, folder, "")
                if spec.static is None:
                    self._remove(folder)
        for folder in list(self._folders):
            self._remove(folder)
        return problems

    # ---------------------------------------------------------------------------------------------
    async def _create(self, spec: WorkspaceSpec, test_id: str) -> Path:
        if spec.static is not None:
            if spec.setup is not None:
                await self._run(spec.setup, spec.static, test_id)
            return spec.static
        folder = Path(tempfile.mkdtemp(prefix="evalspec-ws-"))
        self._folders.append(folder)
        target = folder / "workspace"
        try:
            if spec.template is not None:
                await asyncio.to_thread(shutil.copytree, spec.template, target, symlinks=True)
            else:
                target.mkdir()
        except OSError as exc:
            self._remove(target)
            raise WorkspaceError(f"cannot copy the workspace template {spec.template}: {exc}") from None
        for repo in spec.repos:
            try:
                await clone(repo, target, self.env)
            except RepoError as exc:
                raise WorkspaceError(str(exc)) from None
        if spec.setup is not None:
            await self._run(spec.setup, target, test_id)
        return target

    async def _run(self, script: Script, folder: Path, test_id: str) -> None:
        cwd = script.cwd
        env = dict(self.env or {})
        env.update({"AGENTV_WORKSPACE_PATH": str(folder), "AGENTV_TEST_ID": test_id})
        why = missing_program(script.argv, cwd, env) if cwd.is_dir() else f"its folder {cwd} does not exist"
        if why is not None:
            raise WorkspaceError(f"workspace {script.what} cannot run: {why}")
        payload = dumps_bytes({"workspace_path": str(folder), "test_id": test_id or None,
                               "eval_file": str(self.eval_file), "hook": script.what})
        done = await run_script(script.argv, payload, cwd=cwd, timeout=script.timeout, env=env)
        failure = done.failure(f"workspace {script.what}", script.timeout)
        if failure is not None:
            raise WorkspaceError(failure)

    async def _try(self, script: Script, folder: Path, test_id: str) -> list[str]:
        try:
            await self._run(script, folder, test_id)
        except WorkspaceError as exc:
            return [str(exc)]
        return []

    def _remove(self, folder: Path) -> None:
        root = folder.parent if folder.name == "workspace" else folder
        with contextlib.suppress(OSError):
            shutil.rmtree(root, ignore_errors=True)
        with contextlib.suppress(ValueError):
            self._folders.remove(root)


FILE_CHANGES_LIMIT = 256 * 1024  # characters of diff kept for the judges
_FILE_LIMIT = 256 * 1024  # bytes: larger files are listed as changed, not diffed


async def workspace_changes(spec: WorkspaceSpec | None, folder: Path, env: Mapping[str, str] | None) -> str | None:
    """What the agent changed in its workspace (AgentV's `file_changes`): the diff against the template,
    then git's diff of each cloned repository. None when there is nothing to compare with."""
    if spec is None or (spec.template is None and not spec.repos):
        return None
    repo_paths = tuple(r.path for r in spec.repos)
    parts: list[str] = []
    if spec.template is not None:
        template_diff: str | None = await asyncio.to_thread(file_changes, spec.template, folder, repo_paths)
        parts.append(template_diff or "")
    for repo in spec.repos:
        try:
            parts.append(await diff(repo, folder, env))
        except RepoError as exc:
            parts.append(f"(no diff of '{repo.path}': {exc})\n")
    text = "".join(parts)
    if len(text) > FILE_CHANGES_LIMIT:
        text = text[:FILE_CHANGES_LIMIT] + f"… (diff cut at {FILE_CHANGES_LIMIT} characters)\n"
    return text


def file_changes(template: Path | None, folder: Path, skip: tuple[str, ...] = ()) -> str | None:
    """What the agent changed in its workspace, as a unified diff against the template (AgentV's
    `file_changes`): edited, created and deleted text files; binary or large files by name only.
    None when there is no template to compare with. `skip`: folders left out (cloned repositories)."""
    import difflib

    if template is None or not template.is_dir() or not folder.is_dir():
        return None
    before = _files(template, skip)
    after = _files(folder, skip)
    out: list[str] = []
    size = 0
    for rel in sorted(set(before) | set(after)):
        old, new = before.get(rel), after.get(rel)
        if old is not None and new is not None and _same(old, new):
            continue
        a_text, b_text = _text(old), _text(new)
        if (old is not None and a_text is None) or (new is not None and b_text is None):
            chunk = f"Binary or large file {rel} {'created' if old is None else 'deleted' if new is None else 'changed'}\n"
        else:
            chunk = "".join(difflib.unified_diff(
                (a_text or "").splitlines(keepends=True), (b_text or "").splitlines(keepends=True),
                fromfile="/dev/null" if old is None else f"a/{rel}", tofile="/dev/null" if new is None else f"b/{rel}"))
            if chunk and not chunk.endswith("\n"):
                chunk += "\n"
        if size + len(chunk) > FILE_CHANGES_LIMIT:
            out.append(f"… (diff cut at {FILE_CHANGES_LIMIT} characters)\n")
            break
        out.append(chunk)
        size += len(chunk)
    return "".join(out)


def _files(root: Path, skip: tuple[str, ...] = ()) -> dict[str, Path]:
    found: dict[str, Path] = {}
    prefixes = tuple(f"{s}/" for s in skip)
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and ".git" not in path.relative_to(root).parts:
            rel = path.relative_to(root).as_posix()
            if not rel.startswith(prefixes):
                found[rel] = path
    return found


def _same(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def _text(path: Path | None) -> str | None:
    if path is None:
        return ""
    try:
        if path.stat().st_size > _FILE_LIMIT:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in data[:4096]:
        return None
    return data.decode("utf-8", errors="replace")
