"""What scores an entry of the registry: its stage, and its scorer as a lazy reference.

Every Weval point function and every AgentV assertion type names, in its one entry, the `Stage` that
scores it and its `scorer` (a callable, or `"module:attribute"` imported on first use, so checking a
file never imports the scorers). The runner dispatches on the stage and calls the scorer; completion,
hover, the docs and the schemas read the same entry. `registry.extend.registered` adds entries for a
while (a test registry).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from enum import StrEnum
from typing import Any


class Stage(StrEnum):
    """Which stage of a run scores an entry (run/score/): what it needs and how it is called."""

    FUNCTION = "function"  # a pure function of the answer, scored at once (score/functions.py)
    TRACE = "trace"  # a function of what the run measured: the trace, tokens, cost, duration
    SANDBOX = "sandbox"  # the user's JavaScript in QuickJS, off the event loop (`$js`)
    SERVICE = "service"  # an HTTP service the run calls (`$call`)
    JUDGE = "judge"  # an LLM judge: the scorer makes the prompt and reads the reply (score/judges.py)
    AGENT_JUDGE = "agent-judge"  # a judge with file tools over the test's workspace (score/agent_judge.py)
    SCRIPT = "script"  # the user's script, a subprocess (score/scripts.py)
    GROUP = "group"  # child assertions, aggregated (scoring/composite.py)

    @property
    def deterministic(self) -> bool:
        """Scored from the answer and the run's measurements alone: no judge, code, script or service."""
        return self in (Stage.FUNCTION, Stage.TRACE)

    @property
    def judged(self) -> bool:
        """Needs the judge target (or its own target)."""
        return self in (Stage.JUDGE, Stage.AGENT_JUDGE)

    @property
    def runs_code(self) -> bool:
        """Runs the user's code or calls out: only ever inside an explicit run, never while checking."""
        return self in (Stage.SANDBOX, Stage.SERVICE, Stage.SCRIPT)


ScorerRef = str | Callable[..., Any] | object
_RESOLVED: dict[str, Any] = {}
_GENERATION = [0]
_ON_CHANGE: list[Callable[[], None]] = []


def generation() -> int:
    """How many times entries were added or removed since start: what is derived from the registry and
    kept (completion's templates) is made again when it changes."""
    return _GENERATION[0]


def on_change(forget: Callable[[], None]) -> None:
    """Call `forget` whenever entries are added or removed (a scorer cache clears itself)."""
    _ON_CHANGE.append(forget)


def changed() -> None:
    _GENERATION[0] += 1
    for forget in _ON_CHANGE:
        forget()


def resolve_scorer(ref: ScorerRef) -> Any:
    """The scorer a reference names: `"evalspec.scoring.weval_points:contains"` imported once, or the
    object itself when the entry holds it (a test registry's callable)."""
    if not isinstance(ref, str):
        return ref
    got = _RESOLVED.get(ref)
    if got is None:
        module, _, attribute = ref.partition(":")
        got = importlib.import_module(module)
        for part in attribute.split("."):
            got = getattr(got, part)
        _RESOLVED[ref] = got
    return got
