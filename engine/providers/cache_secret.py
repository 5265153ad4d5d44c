"""The secret the response cache's keys are made with, so that answers planted in a results folder are
never served.

A cache key is an HMAC of the request under a secret of this user's (a plain hash could be computed by
anyone who plants answers in a results folder):

- `EVALSPEC_CACHE_KEY`, when set: CI runners that share a cache give each the same value (from their
  secrets store);
- else 32 random bytes kept in `$XDG_CACHE_HOME/evalspec/cache-key` (`~/.cache/…`), made on first use,
  readable by its owner only, and read as a regular file not through a link;
- else (no home, a read-only one, a link in its place) a secret of this process's: the cache still
  serves repeated requests within the run, and is not reused after it.

An entry whose key was made with another secret matches no request: it is never read, only kept.
"""

from __future__ import annotations

import os
import secrets
import stat
from functools import cache
from pathlib import Path

ENV = "EVALSPEC_CACHE_KEY"
_SIZE = 32
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


@cache
def cache_secret() -> bytes:
    """This user's secret (see the module's text), found once per process."""
    given = os.environ.get(ENV, "")
    if given:
        return given.encode("utf-8", "surrogatepass")
    return _from_file(secret_path()) or secrets.token_bytes(_SIZE)


def secret_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "evalspec" / "cache-key"


def _from_file(path: Path) -> bytes | None:
    """The secret kept at `path`, made there first if there is none; None when it cannot be had."""
    for _ in range(2):  # made by another process between our read and our create: read it again
        found = _read(path)
        if found is not None:
            return found or None
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        except FileExistsError:
            continue
        except OSError:
            return None
        made = secrets.token_hex(_SIZE).encode()
        try:
            os.write(fd, made)
        except OSError:
            return None  # a full disk: the file is left short, and is made again next time
        finally:
            os.close(fd)
        return made
    return None


def _read(path: Path) -> bytes | None:
    """The file's secret; b"" when it is unusable (a link, not a regular file, too short, readable by
    others); None when there is no file."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError:
        return b""
    try:
        st = os.fstat(fd)
        if not _private(st):
            return b""
        data = os.read(fd, 4 * _SIZE).strip()
    except OSError:
        return b""
    finally:
        os.close(fd)
    # Shorter: cut by a full disk, or another process made it and has not written yet (this run then
    # keeps a secret of its own; the next one reads the file).
    return data if len(data) >= _SIZE else b""


def _private(st: os.stat_result) -> bool:
    """A regular file of this user's that nobody else may read (on POSIX)."""
    if not stat.S_ISREG(st.st_mode):
        return False
    return not hasattr(os, "getuid") or (st.st_uid == os.getuid() and not st.st_mode & 0o077)
