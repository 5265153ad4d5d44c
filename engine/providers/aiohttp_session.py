"""The aiohttp session a run's HTTP calls go through (providers/http.py's DirectClient, and under httpx's
client in httpx_client.py): its connector (pool size, keep-alive, TLS, no cookies), its per-call POST read
to a size cap. aiohttp is imported when a session is made, not with this module.

`load_aiohttp()` imports it with the trust store left for later: aiohttp's connector module builds two
TLS contexts as it is imported (each parses the system's CA bundle: ~35 ms, an eighth of a small run's
start), which a run calling http:// URLs never uses. Those contexts are made as aiohttp makes them, and
load the system's trusted CAs (what `load_default_certs` / `set_default_verify_paths` would have loaded
then) just before their first TLS handshake (`wrap_bio`, `wrap_socket`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import ssl
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any


async def post_aiohttp(session: Any, url: Any, body: bytes, headers: Mapping[str, str],
                       cap: int) -> tuple[int, str, Mapping[str, str], bytes]:
    """POST on an aiohttp session: (status, reason, headers, the decoded body, at most `cap` bytes).

    aiohttp arms no timer of its own: the caller bounds the whole exchange (post_json's one deadline).
    Per-phase timeouts as long as that deadline, started after it, could never fire first, and each
    read re-armed one (a timer set and cancelled per chunk)."""
    async with session.request("POST", url, data=body, headers=headers, allow_redirects=False,
                               timeout=_no_timeouts()) as resp:
        declared = resp.content_length
        if declared is not None and declared > cap and "content-encoding" not in resp.headers:
            raise TooLarge(resp.status, f"announced {describe_size(declared)}")
        chunks: list[bytes] = []
        size = 0
        readany = resp.content.readany  # what iter_any() awaits per chunk, without its iterator's frames
        while chunk := await readany():
            size += len(chunk)
            if size > cap:
                raise TooLarge(resp.status, f"more than {describe_size(cap)} received")
            chunks.append(chunk)
        content = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        return resp.status, resp.reason or "", resp.headers, content


_NO_TIMEOUTS: Any = None


def _no_timeouts() -> Any:
    """aiohttp's ClientTimeout with every phase unbounded (not the session's default of 5 minutes)."""
    global _NO_TIMEOUTS
    if _NO_TIMEOUTS is None:
        _NO_TIMEOUTS = load_aiohttp().ClientTimeout(total=None, connect=None, sock_connect=None, sock_read=None)
    return _NO_TIMEOUTS


def load_aiohttp() -> Any:
    """The aiohttp module, imported (the first time) with the trust store of the TLS contexts it makes as
    it is imported loaded on their first use (the module's docstring)."""
    module = sys.modules.get("aiohttp")
    if module is None:
        with _trust_on_first_use():
            import aiohttp as module
    return module


_TRUST_LOADERS = ("load_default_certs", "set_default_verify_paths")


@contextlib.contextmanager
def _trust_on_first_use() -> Iterator[None]:
    """While inside: loading the system's trusted CAs into an SSLContext is noted, not done; on leaving,
    each context that asked has it done just before its first handshake. Nothing else changes."""
    cls = ssl.SSLContext
    own = {name: cls.__dict__.get(name) for name in _TRUST_LOADERS}
    asked: dict[int, tuple[ssl.SSLContext, list[tuple[str, tuple[Any, ...], dict[str, Any]]]]] = {}

    def noted(name: str) -> Callable[..., None]:
        def note(context: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
            asked.setdefault(id(context), (context, []))[1].append((name, args, kwargs))
        return note

    for name in _TRUST_LOADERS:
        setattr(cls, name, noted(name))
    try:
        yield
    finally:
        for name, method in own.items():
            if method is None:
                delattr(cls, name)  # inherited from _ssl._SSLContext again
            else:
                setattr(cls, name, method)
        for context, calls in asked.values():
            _load_before_handshake(context, calls)


def _load_before_handshake(context: ssl.SSLContext, calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> None:
    """`context`'s `wrap_bio` (asyncio's TLS) and `wrap_socket` first make the noted calls, then are
    the class's own again."""

    def ready() -> None:
        for name in ("wrap_bio", "wrap_socket"):
            context.__dict__.pop(name, None)
        for name, args, kwargs in calls:
            getattr(ssl.SSLContext, name)(context, *args, **kwargs)

    def wrap_bio(*args: Any, **kwargs: Any) -> Any:
        ready()
        return context.wrap_bio(*args, **kwargs)

    def wrap_socket(*args: Any, **kwargs: Any) -> Any:
        ready()
        return context.wrap_socket(*args, **kwargs)

    context.wrap_bio = wrap_bio  # type: ignore[method-assign]
    context.wrap_socket = wrap_socket  # type: ignore[method-assign]


def session_factory(verify: Any, max_connections: int | None, keepalive_expiry: float | None) -> Callable[[], Any]:
    """The aiohttp session of one transport, made on its first request (it must be made in the loop)."""

    def make() -> Any:
        aiohttp = load_aiohttp()
        connector = aiohttp.TCPConnector(
            limit=max_connections or 0,
            keepalive_timeout=keepalive_expiry if keepalive_expiry is not None else 15.0,
            ssl=tls_setting(verify),
        )
        connector._factory = functools.partial(_pool_safe_handler(), loop=asyncio.get_running_loop())
        # No cookie jar; env proxies are httpx's (trust_env=False keeps aiohttp from applying them a
        # second time; DirectClient exists only where there are none).
        return aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False)

    return make


_HANDLER: type | None = None


def _pool_safe_handler() -> type:
    """aiohttp's connection protocol, but a connection that received bytes while idle in the pool is not
    reused. aiohttp parses such bytes into a queued response and hands it to the next request on the
    connection: a server (or a proxy) writing a second answer after the first made the next prompt
    scored on another's text. HTTP/1.1 has no unrequested answers: the connection is closed instead."""
    global _HANDLER
    if _HANDLER is None:
        load_aiohttp()
        from aiohttp.client_proto import ResponseHandler

        class PoolSafeHandler(ResponseHandler):
            def is_connected(self) -> bool:  # asked by the pool before it hands the connection out
                return super().is_connected() and not (self._buffer or self._tail)

        _HANDLER = PoolSafeHandler
    return _HANDLER


def tls_setting(verify: Any) -> ssl.SSLContext | bool:
    """What aiohttp's connector gets as `ssl`: a given context; False to switch verification off; True
    for aiohttp's own context on the system's trust store (SSL_CERT_FILE / SSL_CERT_DIR included, so
    corporate CAs work; built when aiohttp is imported); certifi's bundle where the system has no store
    at all (python.org builds on macOS)."""
    if isinstance(verify, ssl.SSLContext):
        return verify
    if verify is False:
        return False
    paths = ssl.get_default_verify_paths()
    if (paths.cafile and os.path.exists(paths.cafile)) or (paths.capath and os.path.isdir(paths.capath)
                                                          and any(os.scandir(paths.capath))):
        return True
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class TooLarge(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status


def describe_size(n: int) -> str:
    return f"{n / 1024 / 1024:.3g} MB" if n >= 1024 * 1024 else f"{n:,} bytes"
