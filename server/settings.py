"""The server's settings: `initializationOptions` or `workspace/didChangeConfiguration`, optionally
under an `evalspec` key; unknown keys and values out of range are ignored."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _number(options: dict[str, Any], key: str, low: float, high: float, kind: type = float) -> Any:
    """`options[key]` when it is a number of `kind` (int or float, never a bool) within [low, high]."""
    value = options.get(key)
    kinds = (int,) if kind is int else (int, float)
    return value if isinstance(value, kinds) and not isinstance(value, bool) and low <= value <= high else None


@dataclass
class RunSettings:
    """How the run lenses run (`run` in the settings). API keys are never settings: the server reads
    them from its environment, as the CLI does."""

    models: list[str] = field(default_factory=list)  # replaces the file's models / targets, e.g. ["echo"]
    judges: list[str] = field(default_factory=list)  # replaces the file's judges
    output: str = "evalspec-results"  # relative to the workspace folder of the file
    # On by default in the editor: re-running a prompt after editing its rubric re-scores the same
    # answer instead of paying for a new one. Errors are never cached.
    cache: bool = True
    concurrency: int | None = None
    eval_methods: str | None = None  # "llm-coverage" | "embedding" | "all" | "none"
    timeout_s: float | None = None
    diagnostics: bool = True  # failed points as Information diagnostics at their lines
    # Batch mode (`--batch-model`): the model ids / target names (globs) whose calls go through their
    # provider's batch API; ["*"] for every model that has one (`--batch`).
    batch_models: list[str] = field(default_factory=list)
    max_cost: float | None = None  # `--max-cost`: US dollars a run from the editor may spend
    max_wait_s: float | None = None  # `--max-wait`: seconds of back-off per call before a provider is given up

    @classmethod
    def of(cls, options: Any) -> RunSettings:
        out = cls()
        if not isinstance(options, dict):
            return out
        for key, attr in (("models", "models"), ("judges", "judges"), ("batchModels", "batch_models")):
            value = options.get(key)
            if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
                setattr(out, attr, [v.strip() for v in value])
        if isinstance(options.get("output"), str) and options["output"].strip():
            out.output = options["output"].strip()
        if isinstance(options.get("cache"), bool):
            out.cache = options["cache"]
        out.concurrency = _number(options, "concurrency", 1, 1000, int)
        if isinstance(options.get("evalMethods"), str):
            out.eval_methods = options["evalMethods"]
        if isinstance(options.get("diagnostics"), bool):
            out.diagnostics = options["diagnostics"]
        if (t := _number(options, "timeoutSeconds", 0, 3600)) is not None and t > 0:
            out.timeout_s = float(t)
        if (cap := _number(options, "maxCost", 0, float("inf"))) is not None and cap < float("inf"):
            out.max_cost = float(cap)
        if (wait := _number(options, "maxWaitSeconds", 0, 86_400)) is not None:
            out.max_wait_s = float(wait)
        return out


@dataclass
class Settings:
    """`initializationOptions` or `workspace/didChangeConfiguration` settings, optionally under an
    `evalspec` key; unknown keys are ignored so editors can pass extra configuration."""

    debounce_s: float = 0.075  # didChange → check, after this quiet period
    request_budget_s: float = 0.4  # then "still checking"; well under the 1 s promise
    workers: int = 2  # engine worker processes
    worker_timeout_s: float = 30.0  # a worker busy with one job longer than this is killed and replaced
    worker_memory_mb: int = 2048  # a worker past this is replaced between jobs
    run: RunSettings = field(default_factory=RunSettings)
    inlay_hints: bool = True  # `inlayHints: false` turns textDocument/inlayHint off (features/inlay_hints.py)
    run_costs: bool = True  # `runCosts: false`: the Run lenses say nothing of cost (features/code_lens.py)
    docs_url: str | None = None  # `docsUrl`: where diagnostics' codes link (evalspec.finding_docs.doc_url)

    @classmethod
    def of(cls, options: Any) -> Settings:
        if not isinstance(options, dict):
            return cls()
        if isinstance(options.get("evalspec"), dict):  # editors that namespace their options
            options = options["evalspec"]
        settings = cls()
        if (debounce := _number(options, "debounceMs", 0, 5000)) is not None:
            settings.debounce_s = debounce / 1000
        # For slow machines (CI); the default keeps the 1 s promise.
        if (budget := _number(options, "requestBudgetMs", 50, 600_000)) is not None:
            settings.request_budget_s = budget / 1000
        settings.workers = _number(options, "workers", 1, 8, int) or settings.workers
        if (timeout := _number(options, "workerTimeoutMs", 500, 3_600_000)) is not None:
            settings.worker_timeout_s = timeout / 1000
        settings.worker_memory_mb = _number(options, "workerMemoryMb", 64, float("inf"), int) or settings.worker_memory_mb
        settings.run = RunSettings.of(options.get("run"))
        if isinstance(options.get("inlayHints"), bool):
            settings.inlay_hints = options["inlayHints"]
        if isinstance(options.get("runCosts"), bool):
            settings.run_costs = options["runCosts"]
        if isinstance(options.get("docsUrl"), str):
            settings.docs_url = options["docsUrl"]
        return settings
