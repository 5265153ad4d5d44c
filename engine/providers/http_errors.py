"""What an exception of the HTTP stack (aiohttp's, httpx's, the socket's, the HTTP process's) was: a timeout or
a connection failure, and one line naming it without the URL (which for a custom model may carry a key).
http.py makes its ProviderErrors of these; the HTTP process (http_process.py) describes its failures so.
"""

from __future__ import annotations

import sys

from evalspec.providers.base import CONNECTION, TIMEOUT


def transport_failure(exc: BaseException) -> str | None:
    """TIMEOUT or CONNECTION for an exception of the HTTP stack (httpx's, aiohttp's, the socket's), None
    for anything else (a bug, to be raised as it is)."""
    if isinstance(exc, TimeoutError):  # asyncio.timeout's deadline
        return TIMEOUT
    httpx = sys.modules.get("httpx")  # loaded only when a proxy or httpx's API is used: no exceptions of it otherwise
    if httpx is not None and isinstance(exc, httpx.TimeoutException):
        # httpx-aiohttp maps every aiohttp ClientConnectionError (a refused connection, a server that
        # hung up) to httpx.ConnectTimeout: only a real timeout underneath is one.
        cause = exc.__cause__
        return TIMEOUT if cause is None or isinstance(cause, TimeoutError) else CONNECTION
    if isinstance(exc, OSError) or (httpx is not None and isinstance(exc, httpx.TransportError | httpx.DecodingError)):
        return CONNECTION
    aiohttp = sys.modules.get("aiohttp")  # errors the transport does not map (a malformed status line)
    if aiohttp is not None and isinstance(exc, aiohttp.ClientError):
        return CONNECTION
    return None


def describe_failure(exc: BaseException) -> str:
    """One line naming what failed underneath (aiohttp's exception, which httpx-aiohttp chains)."""
    remote = sys.modules.get("evalspec.providers.http_process")
    if remote is not None and isinstance(exc, remote.RemoteConnectionError):
        return exc.description  # as the HTTP process described what it saw
    httpx = sys.modules.get("httpx")
    cause = exc.__cause__ if httpx is not None and isinstance(exc, httpx.HTTPError) and exc.__cause__ is not None \
        else exc
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is not None and isinstance(cause, aiohttp.ClientResponseError):
        text = cause.message  # its str() adds the URL, which for a custom model may carry a key
    elif aiohttp is not None and isinstance(cause, aiohttp.InvalidURL):
        text = "the URL is not valid"  # its str() is the URL itself
    else:
        text = str(cause)
    return f"{type(cause).__name__}: {' '.join(text.split()) or 'no detail'}"
