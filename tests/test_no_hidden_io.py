"""`analyze` reads the disk and the environment only through the `FileSource` its caller gives.

Every corpus file and test fixture is analysed, full and streamed (`analyze(streamed=True)`, what `check`
and `run` do), and through the editor's `DocumentAnalyzer` (its caches, an edit that moves every item),
with the process's ways to the disk and the environment patched to fail: `open`, `os.stat`/`lstat`,
`os.scandir`/`listdir`, `os.open`, `os.environ`/`getenv`. The source given is the disk, allowed through
while one of its own methods runs. A check that reads a file or a variable any other way fails here.
(Imports are not reads of the user's disk: importlib reads modules through its own handles, not these.)
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import evalspec.agentv.check  # noqa: F401  (imported lazily by analyze; pytest's rewrite hook stats `test_store.py`)
from evalspec.analysis import analyze
from evalspec.file_source import DiskSource
from evalspec.incremental import DocumentAnalyzer
from evalspec.spill_file import SpillFile
from evalspec.weval import prompt_store

from .conftest import CORPUS

HERE = Path(__file__).parent
FILES = sorted(p for root in (CORPUS, HERE / "fixtures") for p in root.rglob("*")
               if p.is_file() and p.suffix in (".yml", ".yaml", ".json", ".jsonl", ".csv"))

_inside_source = 0  # > 0 while a method of the source runs
_armed = False  # the guard is on (only around the analyses: pytest itself reads files)
_seen: list[str] = []  # every hidden read, also one a check caught and ignored


class HiddenIO(AssertionError):
    pass


class GuardedDisk(DiskSource):
    """The disk, through which reads are allowed; a fixed environment."""


def _through_source(name: str) -> Callable[..., Any]:
    method = getattr(DiskSource, name)

    def call(self: GuardedDisk, *args: Any, **kw: Any) -> Any:
        global _inside_source
        _inside_source += 1
        try:
            return method(self, *args, **kw)
        finally:
            _inside_source -= 1

    return call


for _name in ("read_text", "links", "size", "exists", "is_file", "is_dir", "glob", "list_folder", "mtime", "resolve",
              "scratch_file"):
    setattr(GuardedDisk, _name, _through_source(_name))


class GuardedEnviron(MutableMapping[str, str]):
    """`os.environ` while an analysis runs: any read of it is a hidden read."""

    def __init__(self, real: MutableMapping[str, str]) -> None:
        self.real = real

    def _check(self, what: str) -> None:
        if _armed and not _inside_source:
            _seen.append(what)
            raise HiddenIO(f"{what} read outside the FileSource")

    def __getitem__(self, key: str) -> str:
        self._check(f"os.environ[{key!r}]")
        return self.real[key]

    def __iter__(self) -> Iterator[str]:
        self._check("os.environ listed")
        return iter(self.real)

    def __len__(self) -> int:
        self._check("len(os.environ)")
        return len(self.real)

    def __setitem__(self, key: str, value: str) -> None:  # pytest notes the current test there
        self.real[key] = value

    def __delitem__(self, key: str) -> None:
        del self.real[key]

    def get(self, key: str, default: Any = None) -> Any:
        self._check(f"os.environ.get({key!r})")
        return self.real.get(key, default)


def _path_of(arg: Any) -> Path | None:
    if isinstance(arg, int):  # a descriptor: the open that made it was checked
        return None
    try:
        return Path(os.fsdecode(arg))
    except TypeError:
        return None


def _guard(real: Callable[..., Any], what: str) -> Callable[..., Any]:
    def guarded(*args: Any, **kw: Any) -> Any:
        path = _path_of(args[0]) if args else None
        if not _armed or _inside_source or path is None:
            return real(*args, **kw)
        _seen.append(f"{what}({str(path)!r})")
        raise HiddenIO(f"{what}({str(path)!r}) outside the FileSource")

    return guarded


@pytest.fixture
def no_hidden_io(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for module, name in ((builtins, "open"), (io, "open"), (os, "stat"), (os, "lstat"), (os, "scandir"),
                         (os, "listdir"), (os, "open"), (os, "readlink")):
        monkeypatch.setattr(module, name, _guard(getattr(module, name), f"{module.__name__}.{name}"))
    monkeypatch.setattr(os, "environ", GuardedEnviron(os.environ))
    yield


@contextmanager
def armed() -> Iterator[None]:
    """The guard on for the block; what it saw is asserted after (a check may have swallowed the error)."""
    global _armed
    _seen.clear()
    _armed = True
    try:
        yield
    finally:
        _armed = False
    assert not _seen, f"read around the FileSource: {_seen}"


ENV = {"HOME": "/nonexistent-home", "OPENAI_API_KEY": "sk-test-not-a-real-key-000000"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_analyze_reads_nothing_but_through_its_source(path: Path, no_hidden_io: None) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    with armed():
        for streamed in (False, True):
            analyze(text, path, source=GuardedDisk(ENV), streamed=streamed)
        # The editor's way: caches kept between analyses, then every item moved by a line added on top.
        editor = DocumentAnalyzer(path, source=GuardedDisk(ENV))
        editor.analyze(text)
        editor.analyze("# moved\n" + text)


def test_a_big_blueprint_keeps_its_prompts_in_memory_and_opens_no_file(no_hidden_io: None, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A streamed check keeps a big blueprint's prompts as deflated records in memory
    (weval/prompt_store.py): no scratch file is made, nothing opens a file or reads TMPDIR, and every
    prompt reads back equal to the one the editor's check makes."""
    monkeypatch.setattr(prompt_store, "DEFAULT_BOUND", 2)  # 6 prompts: past the bound, as 4,097 would be
    made: list[SpillFile] = []

    class Scratching(GuardedDisk):
        def scratch_file(self, prefix: str) -> SpillFile:
            made.append(super().scratch_file(prefix))
            return made[-1]

    text = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{n}\n  prompt: hi {n}\n  should: [greets, $contains: '{n}']\n" for n in range(6))
    with armed():
        a = analyze(text, tmp_path / "big.yml", source=Scratching({**ENV, "TMPDIR": str(tmp_path)}), streamed=True)
    assert a.blueprint is not None and isinstance(a.blueprint.prompts, prompt_store.PromptStore)
    whole = analyze(text, tmp_path / "big.yml", source=GuardedDisk(ENV))
    assert whole.blueprint is not None and not isinstance(whole.blueprint.prompts, prompt_store.PromptStore)
    assert list(a.blueprint.prompts) == list(whole.blueprint.prompts)  # read back from the records
    assert made == []


@pytest.mark.parametrize("read", [
    lambda: FILES[0].read_text(encoding="utf-8"),
    lambda: FILES[0].exists(),
    lambda: FILES[0].resolve(),
    lambda: os.listdir(FILES[0].parent),
    lambda: sorted(FILES[0].parent.glob("*")),
    lambda: os.environ.get("HOME"),
    lambda: os.getenv("HOME"),
    lambda: dict(os.environ),
    lambda: Path("~").expanduser(),
], ids=["read_text", "exists", "resolve", "listdir", "glob", "environ.get", "getenv", "dict(environ)", "expanduser"])
def test_the_guard_sees_a_read_around_the_source(read: Callable[[], Any], no_hidden_io: None) -> None:
    """The guard would see a checker that read a file, a folder or a variable itself, even if the check
    caught the error."""
    # armed() asserts on leaving; suppress() stands for a check that swallows the error: still seen
    with pytest.raises(AssertionError, match="read around the FileSource"), armed(), contextlib.suppress(Exception):
        read()
    with armed():
        assert GuardedDisk(ENV).read_text(FILES[0]) is not None  # the source itself may read
