"""What a distillation stage stores and how: the worker's runtime, the session's lock, candidates made
safe (redaction) and written as pending units with their embeddings, graph and history. The session
stage (`service`) and the task stage (`episodes`) both write through here."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, time, tzinfo
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.banks.config import ConfiguredBank
from app.banks.service import configured_bank
from app.db.models import ChatSession, Event, Job
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import events as events_repo
from app.db.repositories import history as history_repo
from app.db.repositories import units as units_repo
from app.db.repositories.locks import xact_lock
from app.distill.types import Candidate, Distiller, Turn
from app.events.working_memory import WorkingMemory
from app.jobs import service as jobs
from app.keys import composite_key
from app.memory.graph import store_graph
from app.providers.embeddings import Embedder
from app.redact import is_redacted, redact
from app.text import search_text

LOCK_WAIT_SECONDS = 30.0  # a follow-up job waits this long for the session's running distillation


@dataclass
class DistillRuntime:
    """What a distillation needs from the worker process that runs it."""

    sessionmaker: async_sessionmaker[AsyncSession]
    embedder: Embedder
    distiller: Callable[[str | None], Distiller]  # by name; None is the configured default
    working_memory: WorkingMemory | None = None


def to_turns(events: list[Event]) -> list[Turn]:
    return [Turn(e.seq, e.id, e.role, e.content, e.speaker, e.occurred_at, e.metadata_) for e in events]


def redact_candidate(candidate: Candidate) -> Candidate:
    """Secrets masked in what is stored (content, and so its embedding and search text) and in the
    graph: an entity or relation end that was nothing but a secret is left out, not stored masked."""
    entities = [e.model_copy(update={"name": redact(e.name)}) for e in candidate.entities]
    relations = [
        r.model_copy(update={"subject": redact(r.subject), "object": redact(r.object)})
        for r in candidate.relations
    ]
    return candidate.model_copy(
        update={
            "content": redact(candidate.content),
            "entities": [e for e in entities if not is_redacted(e.name)],
            "relations": [r for r in relations if not (is_redacted(r.subject) or is_redacted(r.object))],
        }
    )


def identity(session_id: str, version: str, candidate: Candidate, salt: str = "") -> str:
    """Session + source seqs + distiller version + what was said: the same job run twice, or two
    workers on the same batch, produce the same keys and the second insert adds nothing."""
    digest = hashlib.sha256(f"{candidate.content}\x00{'|'.join(candidate.tags)}".encode()).hexdigest()[:20]
    seqs = ",".join(map(str, sorted(candidate.source_seqs)))
    return f"{session_id}:{seqs}:{version}:{digest}{salt}"


async def store_units(
    db: AsyncSession,
    distill_runtime: DistillRuntime,
    bank: ConfiguredBank,
    session_id: str,
    events: list[Event],
    candidates: list[Candidate],
    *,
    distiller: Distiller,
    job: Job,
    salt: str = "",
) -> list[uuid.UUID]:
    """Insert candidates as `pending` units with embeddings, entities, relations and a history
    row each. Units whose identity exists already are skipped. Returns the new ids. Shared memory: a
    unit is its source turns' agent's, and waits as `proposed` when one of them was proposed."""
    by_seq = {e.seq: e for e in events}
    prepared: dict[str, tuple[dict[str, Any], Candidate]] = {}
    for c in candidates:
        sources = [by_seq[s] for s in sorted(set(c.source_seqs)) if s in by_seq]
        key = identity(session_id, distiller.version, c, salt)
        if not sources or key in prepared:  # identical candidates of one batch are one unit
            continue
        row = {
            "id": uuid.uuid4(),
            "bank_id": bank.id,
            "content": c.content,
            "search_text": search_text(c.content),
            "tags": c.tags,
            "confidence": c.confidence,
            "importance": c.importance,
            "status": "proposed" if any(e.proposed for e in sources) else "pending",
            "agent_id": sources[-1].agent_id,
            "session_id": session_id,
            "source_seqs": [e.seq for e in sources],
            "source_event_ids": [e.id for e in sources],
            "supersedes": c.supersedes,
            "valid_from": valid_from(c, min(e.occurred_at for e in sources), bank.timezone),
            "distiller": distiller.version,
            "identity_key": key,
            "embedding_model": distill_runtime.embedder.model,
            "metadata": c.metadata,
        }
        prepared[key] = (row, c)
    if not prepared:
        return []
    # The embedder (a thread, or a remote service) works while the units, their graph and history
    # are written; only a retried batch's already stored units are embedded for nothing.
    keys = list(prepared)
    embedding = asyncio.ensure_future(
        distill_runtime.embedder.embed([prepared[k][0]["content"] for k in keys])
    )
    try:
        inserted = await units_repo.insert_units(db, [row for row, _ in prepared.values()])
        new = [(inserted[key], row, c) for key, (row, c) in prepared.items() if key in inserted]
        if not new:
            await embedding
            return []
        await store_graph(db, bank.id, [(mid, c.entities, c.relations, c.confidence) for mid, _, c in new])
    except BaseException:
        embedding.cancel()
        with contextlib.suppress(BaseException):
            await embedding
        raise
    ids = [mid for mid, _, _ in new]
    by_key = dict(zip(keys, await embedding, strict=True))
    vectors = [by_key[key] for key in prepared if key in inserted]
    await embeddings_repo.insert_embeddings(
        db, bank.id, distill_runtime.embedder.model, dict(zip(ids, vectors, strict=True))
    )
    await history_repo.add_history(
        db,
        [
            {
                "bank_id": bank.id,
                "memory_id": mid,
                "action": "created",
                "actor": f"distiller:{distiller.version}",
                "agent_id": r["agent_id"],
                "details": {
                    "job_id": str(job.id),
                    "session_id": session_id,
                    "seqs": r["source_seqs"],
                    "to": r["status"],
                },
            }
            for mid, r, _ in new
        ],
    )
    return ids


async def locked_session(
    db: AsyncSession, bank_id: str, session_id: str
) -> tuple[ConfiguredBank | None, ChatSession | None]:
    """Take the session's distillation lock for this transaction (retryable when another job holds
    it), then read the bank and the session (None when deleted meanwhile)."""
    if not await xact_lock(db, composite_key("distill", bank_id, session_id), LOCK_WAIT_SECONDS):
        raise jobs.RetryableError(f"session {session_id!r} is being distilled by another job")
    return await configured_bank(db, bank_id), await events_repo.get_session(db, bank_id, session_id)


def valid_from(candidate: Candidate, said_at: datetime, tz: tzinfo) -> datetime:
    """When the unit's statement holds from: the day it names when that day is past ("I moved to
    Denver last May" holds from May), else when it was said (a plan holds from when it was made)."""
    if candidate.occurred_on is None:
        return said_at
    day = datetime.combine(candidate.occurred_on, time(), tz)
    return day if day <= said_at else said_at
