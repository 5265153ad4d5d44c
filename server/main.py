"""`evalspec-lsp`: the language server over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import gc
import os
import stat
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from . import logs

if TYPE_CHECKING:
    from .server import EvalspecServer

FREEZE_YOUNG_OVER = 20_000


def build_server() -> EvalspecServer:
    # Imported here, not above: the guard process (guard.py) needs none of it and starts in milliseconds.
    from .features import (
        code_actions,
        code_lens,
        completion,
        diagnostics,
        hover,
        inlay_hints,
        lifecycle,
        navigation,
        rename,
        run,
        semantic_tokens,
        server_state,
        signature_help,
        symbols,
        watched_files,
        workspace_diagnostics,
    )
    from .server import EvalspecServer

    server = EvalspecServer()
    for feature in (lifecycle, diagnostics, completion, hover, code_actions, symbols, navigation, run, code_lens,
                    watched_files, server_state):
        feature.register(server)
    # --- issue 31's editor features: inlay hints; rename, references, highlights; signature help;
    # semantic tokens; workspace findings.
    # The one place they are wired; each file's register(server) holds its handlers. ---
    for feature in (inlay_hints, rename, signature_help, semantic_tokens, workspace_diagnostics):
        feature.register(server)
    return server


def _log_long_collections(over_s: float = 0.02) -> None:
    """Each garbage collection longer than `over_s` logged (INFO): one holds the interpreter lock
    throughout, so every request waits for it."""
    import logging
    import time

    log = logging.getLogger("evalspec_lsp.gc")
    began = [0.0]

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        elif (took := time.perf_counter() - began[0]) > over_s:
            log.info("a collection of generation %d took %.0f ms (%d collected)", info.get("generation", -1),
                     took * 1000, info.get("collected", 0))

    gc.callbacks.append(watch)


def _piped(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, e.g. 127.0.0.1:2087")
    return host or "127.0.0.1", int(port)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="evalspec-lsp",
                                     description="Language server for Weval blueprints and AgentV eval files.")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    parser.add_argument("--tcp", type=_address, metavar="HOST:PORT", help="listen on a TCP socket instead")
    parser.add_argument("--log-file", help="write the server's log to this file (stderr otherwise)")
    parser.add_argument("--log-level", default=None, type=str.upper,
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="INFO with --log-file (methods and timings), WARNING otherwise; DEBUG also "
                             "logs every message, document text and model answers included")
    parser.add_argument("--no-guard", action="store_true",
                        help="serve in one process, without the guard process that answers every request "
                             "within a second and restarts a server that died (see ARCHITECTURE.md)")
    parser.add_argument("--backend", action="store_true", help=argparse.SUPPRESS)  # the guard's child
    try:
        release = version("evalspec-lsp")  # the distribution's name
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        release = "0.0.0"
    parser.add_argument("--version", action="version", version=f"evalspec-lsp {release}")
    args = parser.parse_args(argv)

    logs.configure(args.log_level or ("INFO" if args.log_file else "WARNING"), args.log_file)
    if not (args.tcp or args.backend or args.no_guard) and _piped(0) and _piped(1):
        # An editor's stdio: the guard serves it, and runs this program again as its child (--backend).
        from . import guard
        return guard.run()

    from evalspec.source import freeze_young_objects_over

    # Requests are answered on the event loop while worker threads analyse and build large answers:
    # the loop gets the GIL back after 1 ms instead of 5 (a hover needs it several times).
    sys.setswitchinterval(0.001)
    # Objects made while the collector is paused are frozen, not scanned in one long pass (see source.py).
    freeze_young_objects_over(FREEZE_YOUNG_OVER)
    _log_long_collections()
    # What is imported and built next lives as long as the server: frozen, it is left out of every later
    # full collection (~100 ms each at load 7 after start-up, 0 frozen) and not scanned while it is
    # imported either (a 0.3 s generation-2 pass during start-up at load 17).
    gc.disable()
    server = build_server()
    gc.freeze()
    gc.enable()
    if args.backend:
        from .protocol import EvalspecProtocol

        assert isinstance(server.protocol, EvalspecProtocol)
        server.protocol.guarded = True
    if args.tcp:
        server.start_tcp(*args.tcp)
    else:
        server.start_io()  # a request nested too deeply to decode is still answered (stdio.read_messages)
    # LSP: exit code 0 only when `shutdown` came first; 1 otherwise (`exit` alone, or the input closed).
    return 0 if server.protocol._shutdown else 1


if __name__ == "__main__":
    raise SystemExit(main())
