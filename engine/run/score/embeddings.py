"""The embedding stage of a Weval run (`embedding` eval method): after every cell, each answer and each
prompt's ideal is embedded (journaled, so `--resume` embeds nothing twice), and the cosine similarity
of every pair of models (the ideal is one) is written per prompt and averaged over the prompts.
A text that cannot be embedded leaves its pairs out, with a notice; it never counts as similar."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator

from ...providers.base import ProviderError
from ..events import Cell, Event, Notice
from ..generate.calls import Calls, provider_key
from ..journal.records import Embedding
from ..journal.run_store import Journal
from ..plan.weval import WevalPlan
from ..pool import EventQueue
from ..write.weval import WevalWriter
from ..write.weval_results import IDEAL_MODEL_ID

EMBED_BATCH = 64


async def embedding_similarity(plan: WevalPlan, calls: Calls, journal: Journal, journaled: dict[str, list[float]],
                               writer: WevalWriter, failed: set[Cell],
                               queue: EventQueue[Event | None]) -> AsyncIterator[Event]:
    """Embed what the journal does not have yet (`journaled`: its vectors by key), then hand the
    similarity matrices to the writer. The calls' events are taken from `queue` as batches finish (the
    cells' pool no longer reads it)."""
    texts: dict[str, str] = {}
    models: set[str] = set()
    prompt_ids = [p.id for p in plan.prompts]
    for p in plan.prompts:
        if p.ideal:
            texts[f"{p.id}\x1f{IDEAL_MODEL_ID}"] = p.ideal
            models.add(IDEAL_MODEL_ID)
        for model, text in writer.answers(p.id).items():
            models.add(model)
            if Cell(p.id, model) not in failed and text.strip():
                texts[f"{p.id}\x1f{model}"] = text
    vectors = {k: v for k, v in journaled.items() if k in texts}
    missing = [k for k in texts if k not in vectors]
    embedding_model = plan.blueprint.embedding_model
    if missing:
        try:
            binding = calls.model(embedding_model)
        except ProviderError as err:
            yield Notice(f"Embedding similarity not computed: {err.message}", "warning")
            missing = []
        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start:start + EMBED_BATCH]
            try:
                got = await calls.embed(binding.provider, [texts[k] for k in batch], binding.model_name,
                                        limit_key=provider_key(embedding_model), cell=Cell("", embedding_model))
            except ProviderError as err:
                yield Notice(f"Embeddings failed ({len(batch)} texts): {err.message}", "warning")
                continue
            journal.write(*[Embedding(k, v) for k, v in zip(batch, got, strict=True)])
            vectors.update(zip(batch, got, strict=True))
            while not queue.empty():
                event = queue.get_nowait()
                if event is not None:
                    yield event
    all_models = sorted(models)
    per_prompt: dict[str, dict[str, dict[str, float]]] = {}
    sums: dict[tuple[str, str], list[float]] = {}
    for pid in prompt_ids:
        pairs: dict[tuple[str, str], float] = {}
        for a in all_models:
            for b in all_models:
                va, vb = vectors.get(f"{pid}\x1f{a}"), vectors.get(f"{pid}\x1f{b}")
                sim = _cosine(va, vb) if a != b and va is not None and vb is not None else math.nan
                if not math.isnan(sim):
                    pairs[(a, b)] = sim
                    sums.setdefault((a, b), []).append(sim)
        per_prompt[pid] = _matrix(all_models, pairs)
    overall = {pair: sum(v) / len(v) for pair, v in sums.items()}
    writer.similarity(_matrix(all_models, overall), per_prompt)


def _matrix(models: list[str], pairs: dict[tuple[str, str], float]) -> dict[str, dict[str, float]]:
    """A SimilarityScore with only the pairs that have a similarity. The reference writes NaN for the
    others (a failed model, a failed embedding), which JSON turns into null where the format says number;
    a model with no similarity at all is left out, and every model kept is 1.0 with itself."""
    out: dict[str, dict[str, float]] = {}
    for a in models:
        row = {b: 1.0 if a == b else pairs[(a, b)] for b in models if a == b or (a, b) in pairs}
        if len(row) > 1:
            out[a] = row
    return out


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else math.nan
