"""The server's own log: methods and timings by default. Documents and model answers are private: below
DEBUG, pygls's lines that carry whole messages are dropped and any long argument of a line below ERROR
is replaced by its length."""

from __future__ import annotations

import logging
import sys

MAX_ARG = 120  # characters of one logged value kept below DEBUG


class Redact(logging.Filter):
    """Below DEBUG detail: no pygls line under WARNING, and no long value in any line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("pygls") and record.levelno < logging.WARNING:
            return False
        if record.args and record.levelno < logging.ERROR:  # failures keep their traceback
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            record.args = tuple(_short(a) for a in args)
        return True


def _short(value: object) -> object:
    if isinstance(value, int | float | bool) or value is None:
        return value
    text = str(value)
    return text if len(text) <= MAX_ARG else f"<{len(text)} characters not logged>"


def configure(level: str, log_file: str | None) -> None:
    handler: logging.Handler = (logging.FileHandler(log_file, encoding="utf-8") if log_file
                                else logging.StreamHandler(sys.stderr))  # never stdout: that is the protocol
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    if level != "DEBUG":
        handler.addFilter(Redact())
    logging.basicConfig(level=level, handlers=[handler], force=True)
