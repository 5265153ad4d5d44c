"""`evalspec/workers`, our request: what the server's worker threads are doing (for tests and benchmarks).

Answers `{"running": jobs running, "foreground": requests' jobs among them (or results not yet back
on the loop), "threads": worker threads alive, "idle": idle ones, "computations": requests'
computations that requests wait for, "runStates": documents whose run lenses' state is kept (open ones,
and closed ones whose run goes on), "handlers": messages whose handlers pygls still keeps (this one's
included)}`. A computation nobody waits for any more stops at its next yield
point (`EvalspecServer.computed`): after a burst of requests past their budget, `running` falls back.
"""

from __future__ import annotations

from typing import Any

from .. import workers
from ..server import EvalspecServer

WORKERS = "evalspec/workers"


def register(server: EvalspecServer) -> None:
    @server.request(WORKERS, empty=None)
    async def worker_state(server: EvalspecServer, params: Any) -> dict[str, int]:
        return {**workers.state(), "computations": len(server.computing), "runStates": len(server.runs),
                "handlers": len(server.protocol._request_futures)}
