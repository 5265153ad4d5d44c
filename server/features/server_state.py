"""`evalspec/workers`, our request: what the server holds, for tests and benchmarks.

Answers `{"runStates": documents whose run lenses' state is kept (open ones, and closed ones whose
run goes on), "handlers": messages whose handlers pygls still keeps (this one's included), "jobs": jobs
sent to workers and not answered yet, "workers": per worker process {"pid", "jobs", "rss", "assigned":
its documents, "documents": the texts it holds, "analyses": analyses alive in it (counted after a
collection)}, "spare": {"pid", "analysed": [uri, version] pairs it has analysed}}`.
"""

from __future__ import annotations

from typing import Any

from ..engine_workers import OK
from ..server import EvalspecServer

WORKERS = "evalspec/workers"


def register(server: EvalspecServer) -> None:
    @server.request(WORKERS, empty=None)
    async def worker_state(server: EvalspecServer, params: Any) -> dict[str, Any]:
        answer = server.workers.state()
        workers = answer["workers"]
        for slot, worker in enumerate(workers):
            status, value = await server.workers.call("state", None, None, slot=slot)
            if status == OK:
                worker.update(value)
        return {"runStates": len(server.runs), "handlers": len(server.protocol._request_futures),
                "jobs": sum(w["jobs"] for w in workers), **answer}
