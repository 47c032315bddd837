"""The events a bank's webhooks receive, each written by one call from the service that makes the
change, in its transaction. The body a receiver gets is `{type, timestamp, data}`; `data` always has
`bank_id`, and per type:

- `memory.created`: `memory` {id, content, tags, confidence, importance, layer, session_id, valid_from,
  claim, supersedes} — a unit became active after resolution (a new value's unit too, before its
  `memory.superseded`);
- `memory.superseded`: `memory_id` (the old unit), `superseded_by` (the new one), `reason`;
- `memory.merged`: `memory_id` (merged away), `merged_into` (the unit that keeps it);
- `memory.forgotten`: `memory_id`, `status` (deleted, archived; active for a downweight) and
  `action` (deleted, purged, downweighted, expired, decayed, redistilled);
- `session.distilled`: `session_id`, `job_id`, `distilled_seq` and counts (`events`, `units`,
  `dropped_low_confidence`) for each batch of a session's events;
- `job.failed`: `job_id`, `kind`, `attempts`, `error`;
- `budget.exhausted`: `budget` (`bank` or `global`), `day`, `resets_at`, the window's `tokens` and
  `cost` (null without prices) against the `limit_tokens` / `limit_cost` that ran out — once a UTC day,
  when the bank's LLM calls first find a budget spent.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.claims.stored import contract_claim
from app.db.models import Job, MemoryUnit
from app.webhooks.outbox import emit, emit_many, forget_content


async def memory_created(db: AsyncSession, unit: MemoryUnit, supersedes: uuid.UUID | None = None) -> None:
    """`supersedes`: the unit it replaces, when the caller links them (the row is updated by then,
    the loaded `unit` may not be)."""
    supersedes = supersedes or unit.supersedes
    memory = {
        "id": str(unit.id),
        "content": unit.content,
        "tags": list(unit.tags),
        "confidence": unit.confidence,
        "importance": unit.importance,
        "layer": unit.layer,
        "session_id": unit.session_id,
        "valid_from": unit.valid_from.isoformat() if unit.valid_from else None,
        "claim": contract_claim(unit.claims),
        "supersedes": str(supersedes) if supersedes else None,
    }
    await emit(db, unit.bank_id, "memory.created", {"memory": memory})


async def memory_superseded(
    db: AsyncSession, bank_id: str, memory_id: uuid.UUID, superseded_by: uuid.UUID, reason: str
) -> None:
    data = {"memory_id": str(memory_id), "superseded_by": str(superseded_by), "reason": reason}
    await emit(db, bank_id, "memory.superseded", data)


async def memory_merged(db: AsyncSession, bank_id: str, memory_id: uuid.UUID, merged_into: uuid.UUID) -> None:
    await emit(db, bank_id, "memory.merged", {"memory_id": str(memory_id), "merged_into": str(merged_into)})


async def memories_forgotten(
    db: AsyncSession, bank_id: str, memory_ids: list[uuid.UUID], *, status: str, action: str
) -> None:
    """An event per unit of a batch forgotten together (a maintenance batch, or one unit)."""
    data = [{"memory_id": str(i), "status": status, "action": action} for i in memory_ids]
    await emit_many(db, bank_id, "memory.forgotten", data)


async def session_distilled(
    db: AsyncSession,
    bank_id: str,
    session_id: str,
    job_id: uuid.UUID,
    distilled_seq: int,
    counts: dict[str, int],
) -> None:
    data: dict[str, Any] = {
        "session_id": session_id,
        "job_id": str(job_id),
        "distilled_seq": distilled_seq,
        **counts,
    }
    await emit(db, bank_id, "session.distilled", data)


async def memory_purged(db: AsyncSession, bank_id: str, memory_id: uuid.UUID) -> None:
    """A purge erases the unit's content for good, from the outbox's earlier payloads too."""
    await forget_content(db, bank_id, memory_id)
    await memories_forgotten(db, bank_id, [memory_id], status="deleted", action="purged")


async def job_failed(db: AsyncSession, job: Job, error: str) -> None:
    if job.bank_id is not None:  # bank-less maintenance runs have no hooks to tell
        data = {"job_id": str(job.id), "kind": job.kind, "attempts": job.attempts, "error": error}
        await emit(db, job.bank_id, "job.failed", data)


async def budget_exhausted(db: AsyncSession, bank_id: str, data: dict[str, Any]) -> None:
    await emit(db, bank_id, "budget.exhausted", data)
