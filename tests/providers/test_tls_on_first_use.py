"""aiohttp imported through `load_aiohttp()` (providers/aiohttp_session.py): its default TLS contexts load
the system's trusted CAs at their first handshake, not on import, and then verify as before.

Each check runs in a fresh interpreter (aiohttp is imported once per process), with SSL_CERT_FILE as the
"system store": a trustme CA, so that a server on 127.0.0.1 is trusted through the default context.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import trustme

CHILD = textwrap.dedent(r'''
    import asyncio, ssl, sys
    from evalspec.providers.aiohttp_session import load_aiohttp
    from evalspec.providers.base import ProviderError
    from evalspec.providers.http import make_client, post_json

    aiohttp = load_aiohttp()
    from aiohttp import connector
    verified, unverified = connector._SSL_CONTEXT_VERIFIED, connector._SSL_CONTEXT_UNVERIFIED
    print("on import", verified.cert_store_stats()["x509_ca"], unverified.cert_store_stats()["x509_ca"])
    print("class restored", "set_default_verify_paths" not in ssl.SSLContext.__dict__,
          ssl.SSLContext.load_default_certs.__qualname__)
    print("settings kept", verified.verify_mode == ssl.CERT_REQUIRED and verified.check_hostname,
          unverified.verify_mode == ssl.CERT_NONE)

    async def serve(cert_chain, key):
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert_chain, key)

        async def one(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            await reader.readexactly(2)
            writer.write(b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok": "y"}')
            await writer.drain()
            writer.close()

        return await asyncio.start_server(one, "127.0.0.1", 0, ssl=tls)

    async def call(server, verify=True):
        client = make_client(2, timeout=5.0, verify=verify)
        port = server.sockets[0].getsockname()[1]
        try:
            data, _ = await post_json(client, "t", f"https://localhost:{port}/v1", {}, {}, 5.0)
            return data["ok"]
        except ProviderError as err:
            return f"{err.kind}: {err.message}"
        finally:
            await client.aclose()

    async def main():
        trusted = await serve(sys.argv[1], sys.argv[2])
        untrusted = await serve(sys.argv[3], sys.argv[4])
        print("untrusted CA", (await call(untrusted))[:10])
        print("after a handshake", verified.cert_store_stats()["x509_ca"])
        print("trusted CA", await call(trusted))
        print("verify off", await call(untrusted, verify=False))
        trusted.close()
        untrusted.close()

    asyncio.run(main())
''')


def test_the_default_tls_contexts_load_the_system_store_at_their_first_handshake(tmp_path: Path) -> None:
    ours, other = trustme.CA(), trustme.CA()
    paths = []
    for name, ca in (("ours", ours), ("other", other)):
        cert = ca.issue_cert("localhost")
        chain, key = tmp_path / f"{name}-chain.pem", tmp_path / f"{name}-key.pem"
        cert.private_key_and_cert_chain_pem.write_to_path(str(chain))
        cert.private_key_pem.write_to_path(str(key))
        paths += [str(chain), str(key)]
    store = tmp_path / "system-store.pem"
    ours.cert_pem.write_to_path(str(store))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PROXY") and not k.endswith("_proxy")}
    # EVALSPEC_HTTP_PROCESS=0: the handshakes in this process, whose contexts are looked into (through the HTTP
    # process: tests/providers/test_http_process.py)
    env.update(SSL_CERT_FILE=str(store), SSL_CERT_DIR=str(tmp_path / "no-dir"), EVALSPEC_HTTP_PROCESS="0")
    got = subprocess.run([sys.executable, "-c", CHILD, *paths], env=env, capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[:3] == ["on import 0 0", "class restored True SSLContext.load_default_certs", "settings kept True True"]
    assert lines[3] == "untrusted CA connection"  # still verified: a CA the store does not hold is refused
    assert lines[4] == "after a handshake 1"  # the store (SSL_CERT_FILE: one CA) was loaded for that handshake
    assert lines[5:] == ["trusted CA y", "verify off y"]
