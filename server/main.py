"""`evalspec-lsp`: the language server over stdio (default) or TCP. This process keeps the open texts
and answers; engine worker processes (`python -m evalspec_lsp.worker`) analyse."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import logs

if TYPE_CHECKING:
    from .server import EvalspecServer


def build_server(worker: list[str] | None = None) -> EvalspecServer:
    from . import features
    from .features import (  # noqa: F401 (importing a feature declares the requests its jobs answer)
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
        signature_help,
        symbols,
        workspace_diagnostics,
    )
    from .server import EvalspecServer

    server = EvalspecServer(worker)
    for feature in (lifecycle, diagnostics, run, code_lens, inlay_hints, workspace_diagnostics):
        feature.register(server)
    for method, options, empty, job in features.ANSWERED:
        server.forward(method, options, empty, job)
    return server


def _address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, e.g. 127.0.0.1:2087")
    return host or "127.0.0.1", int(port)


def main(argv: Sequence[str] | None = None, worker: list[str] | None = None) -> int:
    """`worker`: the command that starts a worker process (tests start a faulty one)."""
    parser = argparse.ArgumentParser(prog="evalspec-lsp",
                                     description="Language server for Weval blueprints and AgentV eval files.")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    parser.add_argument("--tcp", type=_address, metavar="HOST:PORT", help="listen on a TCP socket instead")
    parser.add_argument("--log-file", help="write the server's log to this file (stderr otherwise)")
    parser.add_argument("--log-level", default=None, type=str.upper,
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="INFO with --log-file (methods and timings), WARNING otherwise; DEBUG also "
                             "logs every message, document text and model answers included")
    from .server import __version__

    parser.add_argument("--version", action="version", version=f"evalspec-lsp {__version__}")
    args = parser.parse_args(argv)

    level = args.log_level or ("INFO" if args.log_file else "WARNING")
    logs.configure(level, args.log_file)
    from .engine_workers import worker_command
    from .protocol import Stdin

    server = build_server(worker or worker_command(level, args.log_file))
    try:
        if args.tcp:
            server.start_tcp(*args.tcp)
        else:
            stdin = server.protocol.unreadable = Stdin(sys.stdin.buffer)
            server.start_io(stdin)  # type: ignore[arg-type]
    finally:
        server.workers.shutdown()
    # LSP: exit code 0 only when `shutdown` came first; 1 otherwise (`exit` alone, or the input closed).
    return 0 if server.protocol._shutdown else 1


if __name__ == "__main__":
    raise SystemExit(main())
