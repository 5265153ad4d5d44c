"""`evalspec rule CODE`: print a finding code's page (why it matters, an example, the fix), as `ruff rule` does;
`evalspec rule --all` lists every code. The pages are engine/finding_docs.py's."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_rule_parser(sub: Any) -> None:
    rule = sub.add_parser("rule", help="explain a finding code (why it matters, an example, the fix)",
                          description="Print the page of a finding code, as the docs site has it.")
    rule.add_argument("code", nargs="?", metavar="CODE", help="a code from a finding, e.g. unknown-key")
    rule.add_argument("--all", action="store_true", help="list every code with its severity and title")
    rule.set_defaults(func=cmd_rule)


def cmd_rule(args: argparse.Namespace) -> int:
    from .registry.finding_codes import CODE_LIST, CODES  # here: every command's parser is built, `run`'s too

    if args.all or not args.code:
        for c in sorted(CODE_LIST, key=lambda c: c.code):
            print(f"{c.code:28} {c.severity:8} {c.title}")
        return 0
    entry = CODES.get(args.code)
    if entry is None:
        import difflib

        close = difflib.get_close_matches(args.code, list(CODES), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else " (`evalspec rule --all` lists them)"
        print(f"evalspec: unknown finding code '{args.code}'{hint}", file=sys.stderr)
        return 2
    from .finding_docs import page

    sys.stdout.write(page(entry))
    return 0
