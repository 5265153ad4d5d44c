"""Entries added to the registry for a while: a test registry, or a plug-in's types for one session.

`with registered(PointFunction(...), AssertionType(...)):` puts the entries where the built-in ones
are (`POINT_FUNCTIONS`, `ASSERTION_TYPES`, the AgentV object registry), so check, completion, hover,
the generated schemas and a run see them exactly as they see a built-in entry; on leaving, they are
removed. Single-threaded, as the engine is: not for use while another analysis or run is going on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from . import agentv_assertions, weval_functions
from .agentv import REGISTRY as AGENTV
from .agentv_assertions import AssertionType
from .weval_functions import PointFunction


@contextmanager
def registered(*entries: PointFunction | AssertionType) -> Iterator[None]:
    """Each entry (a point function, with its `not_` form when negatable; an assertion type) in the
    registry for the duration of the block."""
    done: list[PointFunction | AssertionType] = []
    try:
        for e in entries:
            if isinstance(e, PointFunction):
                weval_functions.register(e)
            else:
                AGENTV.add(e.spec)  # refuses a name declared twice before anything is changed
                try:
                    agentv_assertions.register(e)
                except ValueError:
                    AGENTV.remove(e.spec.name)
                    raise
            done.append(e)
        yield
    finally:
        for e in reversed(done):
            if isinstance(e, PointFunction):
                weval_functions.unregister(e)
            else:
                agentv_assertions.unregister(e)
                AGENTV.remove(e.spec.name)
