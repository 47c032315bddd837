"""Re-embedding after `HINDSIGHT_EMBEDDING_MODEL` changes. Vectors live in `memory_embeddings` keyed by
model, each model with its own partial HNSW index on `embedding::vector(dim)`: a new model — even of
another dimension — is new rows and a new index, never a schema change. Queries use only the current
model's vectors, so units not yet re-embedded are found by the other channels meanwhile."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories import embeddings as embeddings_repo
from app.maintenance.lifecycle import MaintenanceRun
from app.maintenance.tuning import REEMBED_BATCH
from app.providers.embeddings import Embedder


async def ensure_index(run: MaintenanceRun, model: str, dim: int) -> None:
    """The model's partial HNSW index, built CONCURRENTLY (writes go on meanwhile)."""
    async with run.sessionmaker() as db:
        await embeddings_repo.ensure_hnsw_index(db, model, dim)


async def reembed(run: MaintenanceRun, embedder: Embedder) -> dict[str, Any]:
    await ensure_index(run, embedder.model, embedder.dim)

    async def step(db: AsyncSession) -> int:
        units = await embeddings_repo.without_vector(
            db, embedder.model, run.batch, bank_id=run.job.params.get("bank_id")
        )
        if units:
            vectors = await embedder.embed([content for _, _, content in units])
            by_bank: dict[str, dict[Any, list[float]]] = {}
            for (memory_id, bank_id, _), vector in zip(units, vectors, strict=True):
                by_bank.setdefault(bank_id, {})[memory_id] = vector
            for bank_id, rows in by_bank.items():
                await embeddings_repo.insert_embeddings(db, bank_id, embedder.model, rows)
            await embeddings_repo.set_embedding_model(
                db, [memory_id for memory_id, _, _ in units], embedder.model
            )
        return len(units)

    run.batch = min(run.batch, REEMBED_BATCH)
    done = await run.batches(step, {"task": "reembed", "model": embedder.model})
    return {"model": embedder.model, "dim": embedder.dim, "reembedded": done}
