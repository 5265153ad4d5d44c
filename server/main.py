"""`evalspec-lsp`: the language server over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evalspec.source import freeze_young_objects_over

from . import logs
from .features import (
    code_actions,
    code_lens,
    completion,
    diagnostics,
    hover,
    lifecycle,
    navigation,
    run,
    symbols,
    watched_files,
)
from .server import EvalspecServer, __version__

FREEZE_YOUNG_OVER = 20_000
FEATURES = (lifecycle, diagnostics, completion, hover, code_actions, symbols, navigation, run, code_lens, watched_files)


def build_server() -> EvalspecServer:
    server = EvalspecServer()
    for feature in FEATURES:
        feature.register(server)
    return server


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
    parser.add_argument("--version", action="version", version=f"evalspec-lsp {__version__}")
    args = parser.parse_args(argv)

    logs.configure(args.log_level or ("INFO" if args.log_file else "WARNING"), args.log_file)

    # Requests are answered on the event loop while worker threads analyse and build large answers:
    # the loop gets the GIL back after 1 ms instead of 5 (a hover needs it several times).
    sys.setswitchinterval(0.001)
    # Objects made while the collector is paused are frozen, not scanned in one long pass (see source.py).
    freeze_young_objects_over(FREEZE_YOUNG_OVER)
    server = build_server()
    if args.tcp:
        server.start_tcp(*args.tcp)
    else:
        server.start_io()  # a request nested too deeply to decode is still answered (stdio.read_messages)
    # LSP: exit code 0 only when `shutdown` came first; 1 otherwise (`exit` alone, or the input closed).
    return 0 if server.protocol._shutdown else 1


if __name__ == "__main__":
    raise SystemExit(main())
