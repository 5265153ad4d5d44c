"""How to run: everything the CLI's flags (or the language server) decide, as one plain object."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .plan.shard import Shard

EVAL_METHODS = ("llm-coverage", "embedding")
DEFAULT_EVAL_METHODS = ("llm-coverage",)
DEFAULT_OUTPUT = Path("evalspec-results")
DEFAULT_TIMEOUT = 30.0  # seconds per call, the reference client's default
DEFAULT_MAX_RETRIES = 2  # the reference client retries twice
DEFAULT_MAX_RATE_LIMIT_RETRIES = 6  # retries of a rate-limit answer (429, 529, 503 + Retry-After)
DEFAULT_MAX_WAIT = 300.0  # seconds of back-off per call; and of nothing but 429s before a provider is given up
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024  # the same as providers.http's (not imported: it loads the HTTP stack)
DEFAULT_BATCH_POLL = 30.0  # seconds between two looks at a provider batch (they take minutes to hours)


def parse_eval_methods(text: str | None) -> tuple[str, ...]:
    """`embedding,llm-coverage` | `all` | `none` → the methods, in a fixed order. Raises ValueError."""
    if text is None:
        return DEFAULT_EVAL_METHODS
    wanted = [t.strip().lower() for t in text.split(",") if t.strip()]
    if not wanted:
        raise ValueError("--eval-method needs a value: embedding, llm-coverage, all or none")
    if "none" in wanted:
        if len(wanted) > 1:
            raise ValueError("--eval-method none cannot be combined with other methods")
        return ()
    if "all" in wanted:
        return EVAL_METHODS
    unknown = [w for w in wanted if w not in EVAL_METHODS]
    if unknown:
        raise ValueError(f"unknown --eval-method {', '.join(unknown)} (choose embedding, llm-coverage, all, none)")
    return tuple(m for m in EVAL_METHODS if m in wanted)


@dataclass
class RunOptions:
    models: list[str] = field(default_factory=list)  # -m: overrides the file's models / targets
    select: list[str] = field(default_factory=list)  # --prompt / --test globs
    output: Path = DEFAULT_OUTPUT
    concurrency: int | None = None  # None: the blueprint's `concurrency`, else 30
    provider_concurrency: dict[str, int] = field(default_factory=dict)  # per-provider caps
    cache: bool | None = None  # None: the eval file decides (AgentV `execution.cache`), else no cache
    resume: bool = False
    retry_errors: bool = False
    eval_methods: tuple[str, ...] = DEFAULT_EVAL_METHODS
    judges: list[str] = field(default_factory=list)  # --judge: overrides the file's judges
    label: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    max_rate_limit_retries: int = DEFAULT_MAX_RATE_LIMIT_RETRIES
    max_wait: float = DEFAULT_MAX_WAIT
    # Lower the concurrency per provider and key on 429s and low rate-limit headers (providers/rate_limits.py);
    # False (--fixed-concurrency): fixed limits, Retry-After still honoured per call.
    adaptive_concurrency: bool = True
    models_dir: Path | None = None
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    transport: str = "aiohttp"  # the shared HTTP client's transport (providers/http.py)
    prices: Path | None = None  # --prices: a user price file over the shipped table (pricing.py)
    # Write the results files of a run that is stopped before the end (the editor's Cancel), for what
    # finished; the CLI leaves an interrupted run to --resume instead.
    partial_results: bool = False
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES  # a bigger provider answer is an error
    allow_outside_files: bool = False  # send files from outside the project (file-outside-project findings)
    max_cost: float | None = None  # --max-cost: US dollars the run may spend (cost/budget.py)
    # Batch mode (run/generate/batch_stage.py): every model with a batch API (`batch`), or the models matching
    # `batch_models` (globs of model ids / target names); seconds between polls; the run's own caps on a
    # batch (below the provider's limits: 50,000 requests / 200 MB OpenAI, 100,000 / 256 MB Anthropic).
    batch: bool = False
    batch_models: list[str] = field(default_factory=list)
    batch_poll: float = DEFAULT_BATCH_POLL
    batch_max_requests: int | None = None
    batch_max_bytes: int | None = None
    shard: Shard | None = None  # --shard I/N: run only this share of the items (plan/shard.py)
    # --artefacts: Weval's artefact folder beside the comparison file (core.json, a file per prompt and model:
    # 300,000 files at 100,000 prompts); off, the run database and the comparison file hold it all
    artefacts: bool = False
    # --processes: how many processes run the cells (run/split.py); None: more than one for a run of 1,000
    # cells or more on a machine with the cores (and nothing that keeps it in one), 1: this process only
    processes: int | None = None

    @property
    def cache_path(self) -> Path:
        return self.output / ".cache" / "responses.jsonl"
