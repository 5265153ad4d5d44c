"""The server's settings: `initializationOptions` or `workspace/didChangeConfiguration`, optionally
under an `evalspec` key; unknown keys and values of the wrong type or out of range are ignored."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def options_of(settings: Any) -> dict[str, Any]:
    """The settings as a dict, unwrapped from an `evalspec` key (editors that namespace their options)."""
    if isinstance(settings, dict) and isinstance(settings.get("evalspec"), dict):
        settings = settings["evalspec"]
    return settings if isinstance(settings, dict) else {}


def _get(options: dict[str, Any], key: str, kind: type, default: Any = None, low: float = 0,
         high: float = float("inf")) -> Any:
    """`options[key]` if it is a `kind`: a bool; a str (stripped, not blank); a list of such strings; an
    int, or a number for float (never a bool), within [low, high]. Else `default`."""
    value: Any = options.get(key)
    if kind is bool or isinstance(value, bool):
        return value if kind is bool and isinstance(value, bool) else default
    if kind is str:
        return value.strip() if isinstance(value, str) and value.strip() else default
    if kind is list:
        ok = isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)
        return [v.strip() for v in value] if ok else default
    if isinstance(value, int) or (kind is float and isinstance(value, float)):
        return value if low <= value <= high else default
    return default


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
        out.models = _get(options, "models", list, [])
        out.judges = _get(options, "judges", list, [])
        out.batch_models = _get(options, "batchModels", list, [])
        out.output = _get(options, "output", str, out.output)
        out.cache = _get(options, "cache", bool, out.cache)
        out.diagnostics = _get(options, "diagnostics", bool, out.diagnostics)
        out.concurrency = _get(options, "concurrency", int, None, 1, 1000)
        out.eval_methods = options["evalMethods"] if isinstance(options.get("evalMethods"), str) else None
        out.timeout_s = float(t) if (t := _get(options, "timeoutSeconds", float, None, 0, 3600)) else None
        if (cap := _get(options, "maxCost", float)) is not None and cap < float("inf"):
            out.max_cost = float(cap)
        out.max_wait_s = float(w) if (w := _get(options, "maxWaitSeconds", float, None, 0, 86_400)) is not None else None
        return out


@dataclass
class Settings:
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
    def of(cls, settings: Any) -> Settings:
        options = options_of(settings)
        out = cls()
        out.debounce_s = _get(options, "debounceMs", float, out.debounce_s * 1000, 0, 5000) / 1000
        # For slow machines (CI); the default keeps the 1 s promise.
        out.request_budget_s = _get(options, "requestBudgetMs", float, out.request_budget_s * 1000, 50, 600_000) / 1000
        out.workers = _get(options, "workers", int, out.workers, 1, 8)
        out.worker_timeout_s = _get(options, "workerTimeoutMs", float, out.worker_timeout_s * 1000, 500, 3_600_000) / 1000
        out.worker_memory_mb = _get(options, "workerMemoryMb", int, out.worker_memory_mb, 64)
        out.run = RunSettings.of(options.get("run"))
        out.inlay_hints = _get(options, "inlayHints", bool, out.inlay_hints)
        out.run_costs = _get(options, "runCosts", bool, out.run_costs)
        out.docs_url = options["docsUrl"] if isinstance(options.get("docsUrl"), str) else None
        return out
