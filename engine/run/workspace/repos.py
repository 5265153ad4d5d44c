"""Git repositories cloned into an AgentV workspace (`workspace.repos`), reset and diffed.

Each entry names where the repository goes in the workspace and where it comes from:

    repos:
      - path: app                                  # inside the workspace (default: the URL's last part)
        source: {type: git, url: https://…/app.git}   # or {type: local, path: ../app} (relative to the file)
        checkout: {ref: v1.2, ancestor: 1}         # a branch, tag or commit; then N commits back
        clone: {depth: 50}                         # a shallow clone
        sparse: [src/, docs/]                      # a sparse checkout

(the older flat keys `repo`, `commit`, `ancestor` are read too). git runs as a subprocess with no
terminal prompt and a timeout, only in an explicit run, through the same bounded runner as hooks. The
diff a judge reads (`file_changes`) comes from git itself: tracked changes and new files against the
checked-out commit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ...script_process import run_script

CLONE_TIMEOUT = 300.0  # seconds for one git command (a clone of a large repository takes minutes)
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
            "GIT_CONFIG_NOSYSTEM": "1"}


class RepoError(Exception):
    """A repository could not be declared, cloned or reset; the message is the row's error."""


@dataclass(frozen=True)
class RepoSpec:
    path: str  # where the repository goes, relative to the workspace (POSIX, no "..")
    url: str  # what git clones: a URL, or a local folder made absolute
    ref: str | None = None
    ancestor: int = 0
    depth: int | None = None
    sparse: tuple[str, ...] = ()


def parse_repos(raw: Any, base: Path) -> tuple[RepoSpec, ...]:
    """`workspace.repos` as written; local sources relative to `base` (the declaring file's folder)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise RepoError("workspace repos must be a list of {path, source, checkout}")
    repos = [_repo(i, entry, base) for i, entry in enumerate(raw)]
    seen: set[str] = set()
    for repo in repos:
        if repo.path in seen:
            raise RepoError(f"workspace repos: two repositories go to '{repo.path}'")
        seen.add(repo.path)
    return tuple(repos)


def _repo(index: int, raw: Any, base: Path) -> RepoSpec:
    where = f"workspace repos[{index}]"
    if not isinstance(raw, Mapping):
        raise RepoError(f"{where} must be an object {{path, source, checkout}}")
    source = raw.get("source")
    url: Any = None
    if isinstance(source, str):
        url = source
    elif isinstance(source, Mapping):
        kind = source.get("type", "git")
        if kind == "local":
            local = source.get("path")
            if not isinstance(local, str) or not local:
                raise RepoError(f"{where}: a local source needs a 'path'")
            url = str((base / local).resolve())
        elif kind == "git":
            url = source.get("url")
        else:
            raise RepoError(f"{where}: source type '{kind}' is neither git nor local")
    elif raw.get("repo") is not None:
        url = raw.get("repo")
    if not isinstance(url, str) or not url.strip():
        raise RepoError(f"{where} needs a source (source: {{type: git, url}} or {{type: local, path}})")
    url = url.strip()
    if url.startswith("-"):
        raise RepoError(f"{where}: the source '{url}' starts with '-'")
    checkout: Mapping[str, Any] = raw["checkout"] if isinstance(raw.get("checkout"), Mapping) else {}
    clone: Mapping[str, Any] = raw["clone"] if isinstance(raw.get("clone"), Mapping) else {}
    ref = checkout.get("ref", checkout.get("commit", raw.get("commit")))
    if ref is not None and (not isinstance(ref, str) or not ref or ref.startswith("-")):
        raise RepoError(f"{where}: checkout ref must be a branch, tag or commit")
    ancestor = checkout.get("ancestor", raw.get("ancestor", 0)) or 0
    if not isinstance(ancestor, int) or isinstance(ancestor, bool) or ancestor < 0:
        raise RepoError(f"{where}: ancestor must be a whole number ≥ 0")
    depth = clone.get("depth", raw.get("depth"))
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 1):
        raise RepoError(f"{where}: clone depth must be a whole number ≥ 1")
    sparse_raw = raw.get("sparse", clone.get("sparse"))
    sparse: tuple[str, ...] = ()
    if sparse_raw is not None:
        if not isinstance(sparse_raw, list) or not all(isinstance(s, str) and s for s in sparse_raw):
            raise RepoError(f"{where}: sparse must be a list of paths")
        sparse = tuple(sparse_raw)
    path = raw.get("path")
    if path is None:
        path = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or "repo"
    if not isinstance(path, str) or not _inside(path):
        raise RepoError(f"{where}: path '{path}' must be a folder inside the workspace")
    return RepoSpec(PurePosixPath(path).as_posix(), url, ref, ancestor, depth, sparse)


def _inside(path: str) -> bool:
    p = PurePosixPath(path.replace("\\", "/"))
    return bool(path) and not p.is_absolute() and ".." not in p.parts and p.as_posix() not in ("", ".")


def _env(env: Mapping[str, str] | None) -> dict[str, str]:
    out = dict(os.environ if env is None else env)
    for key in [k for k in out if k.startswith("GIT_")]:
        del out[key]  # a GIT_DIR or GIT_WORK_TREE from the caller would point git elsewhere
    out.update(_GIT_ENV)
    return out


async def _git(args: Sequence[str], cwd: Path, env: Mapping[str, str] | None, what: str) -> bytes:
    done = await run_script(["git", *args], b"", cwd=cwd, timeout=CLONE_TIMEOUT, env=_env(env),
                            stdout_limit=64 * 1024 * 1024)
    failure = done.failure(what, CLONE_TIMEOUT)
    if failure is not None:
        raise RepoError(failure)
    return done.stdout


async def clone(repo: RepoSpec, workspace: Path, env: Mapping[str, str] | None) -> None:
    """Clone `repo` into the workspace and check out its ref (then `ancestor` commits back)."""
    target = workspace / repo.path
    if target.exists() and any(target.iterdir()):
        raise RepoError(f"workspace repo '{repo.path}': the folder is not empty (the template has it)")
    target.parent.mkdir(parents=True, exist_ok=True)
    what = f"git clone of {repo.url} into '{repo.path}'"
    args = ["clone", "--quiet", "--no-checkout"]
    url = repo.url
    if repo.depth is not None:
        args += ["--depth", str(repo.depth)]
        if Path(url).is_absolute():
            url = Path(url).as_uri()  # git ignores --depth for a plain local path
    await _git([*args, "--", url, str(target)], workspace, env, what)
    if repo.sparse:
        await _git(["sparse-checkout", "set", "--no-cone", "--", *repo.sparse], target, env,
                   f"sparse checkout in '{repo.path}'")
    ref = repo.ref or "HEAD"
    if repo.ref is not None and repo.depth is None and not await _resolves(target, repo.ref, env):
        ref = f"origin/{repo.ref}"  # a branch other than the default exists only as a remote branch
    if repo.ref is not None and repo.depth is not None:
        # A shallow clone holds only the default branch's tip: fetch the ref asked for.
        await _git(["fetch", "--quiet", "--depth", str(repo.depth + repo.ancestor), "origin", "--", repo.ref],
                   target, env, f"git fetch of {repo.ref} in '{repo.path}'")
        ref = "FETCH_HEAD"
    if repo.ancestor:
        ref = f"{ref}~{repo.ancestor}"
    await _git(["-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", ref, "--"], target, env,
               f"git checkout of {ref} in '{repo.path}'")


async def _resolves(target: Path, ref: str, env: Mapping[str, str] | None) -> bool:
    done = await run_script(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", "--"], b"",
                            cwd=target, timeout=CLONE_TIMEOUT, env=_env(env))
    return done.ok


async def reset(repo: RepoSpec, workspace: Path, env: Mapping[str, str] | None, *, strict: bool) -> None:
    """Back to the checked-out commit after a test (`reset: fast`); `strict` also removes ignored files."""
    target = workspace / repo.path
    await _git(["reset", "--quiet", "--hard"], target, env, f"git reset in '{repo.path}'")
    await _git(["clean", "-q", "-ffdx" if strict else "-ffd"], target, env, f"git clean in '{repo.path}'")


async def diff(repo: RepoSpec, workspace: Path, env: Mapping[str, str] | None) -> str:
    """What the agent changed in the repository: a unified diff (paths prefixed with the repo's folder)
    of tracked changes and new files against the checked-out commit."""
    target = workspace / repo.path
    if not (target / ".git").exists():
        return ""
    # New files count as changes: mark them intent-to-add so that `git diff` shows their content.
    await _git(["add", "--intent-to-add", "--all", "--", "."], target, env, f"git add -N in '{repo.path}'")
    out = await _git(["-c", "core.quotepath=false", "diff", "--no-color", "--no-ext-diff",
                      f"--src-prefix=a/{repo.path}/", f"--dst-prefix=b/{repo.path}/", "HEAD", "--"],
                     target, env, f"git diff in '{repo.path}'")
    return out.decode("utf-8", errors="replace")
