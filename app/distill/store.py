"""What a distillation stage stores and how: the worker's runtime, the session's lock, and candidates
written as pending units through the write path of every unit (app/memory/write.py, which masks
secrets). The session stage (`service`) and the task stage (`episodes`) both write through here."""

from __future__ import annotations

import uuid
from datetime import datetime, time, timedelta, tzinfo
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.banks.config import ConfiguredBank
from app.banks.service import configured_bank
from app.db.models import ChatSession, Event, Job
from app.db.repositories import events as events_repo
from app.db.repositories.locks import xact_lock
from app.distill.types import Candidate, Distiller, Turn
from app.events.working_memory import WorkingMemory
from app.jobs import service as jobs
from app.keys import composite_key
from app.memory.write import UnitWrite, Writer, stored_form, write_units
from app.providers.embeddings import Embedder
from app.schemas.banks import BankConfig
from app.usage.budget import Budget

LOCK_WAIT_SECONDS = 30.0  # a follow-up job waits this long for the session's running distillation


class DistillRuntime(Protocol):
    """What a distillation uses of the worker process that runs it (`worker.runtime.WorkerRuntime`)."""

    @property
    def sessionmaker(self) -> async_sessionmaker[AsyncSession]: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def working_memory(self) -> WorkingMemory | None: ...

    @property
    def budget(self) -> Budget:
        """The service's LLM budget and prices."""
        ...

    @property
    def job_deadline(self) -> timedelta:
        """How long a running job holds its claim without reporting progress."""
        ...

    def distiller(self, name: str | None) -> Distiller:
        """The distiller of this name; None: the configured default."""
        ...


def to_turns(events: list[Event]) -> list[Turn]:
    return [Turn(e.seq, e.id, e.role, e.content, e.speaker, e.occurred_at, e.metadata_) for e in events]


def as_stored(config: BankConfig, candidate: Candidate) -> Candidate:
    """Return the candidate as the write path stores it in a bank of this config (app/memory/write.py)."""
    content, entities, relations = stored_form(
        config, candidate.content, candidate.entities, candidate.relations
    )
    return candidate.model_copy(update={"content": content, "entities": entities, "relations": relations})


def identity(session_id: str, version: str, candidate: Candidate) -> str:
    """Session + cited turns + distiller version, which the write completes with a digest of what the
    unit says: the same job run twice, or two workers on the same batch, produce the same keys and
    the second insert adds nothing."""
    seqs = ",".join(map(str, sorted(candidate.source_seqs)))
    return f"{session_id}:{seqs}:{version}:"


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
    """Write the candidates citing turns of `events` as new units (app/memory/write.py); a unit whose
    identity exists already is skipped. Returns the new ids. Shared memory: a unit is its source turns'
    agent's, and waits as `proposed` when one of them was proposed."""
    by_seq = {e.seq: e for e in events}
    writes = []
    for c in candidates:
        sources = [by_seq[s] for s in sorted(set(c.source_seqs)) if s in by_seq]
        if not sources:
            continue
        seqs = [e.seq for e in sources]
        writes.append(
            UnitWrite(
                content=c.content,
                tags=c.tags,
                confidence=c.confidence,
                importance=c.importance,
                valid_from=valid_from(c, min(e.occurred_at for e in sources), bank.timezone),
                status="proposed" if any(e.proposed for e in sources) else "pending",
                agent_id=sources[-1].agent_id,
                session_id=session_id,
                metadata=c.metadata,
                entities=c.entities,
                relations=c.relations,
                source_seqs=seqs,
                source_event_ids=[e.id for e in sources],
                supersedes=c.supersedes,
                identity=identity(session_id, distiller.version, c),
                details={"job_id": str(job.id), "session_id": session_id, "seqs": seqs},
                claims=c.claims,
            )
        )
    writer = Writer(distiller.version, f"distiller:{distiller.version}", salt=salt)
    return await write_units(db, distill_runtime.embedder, bank, writes, writer)


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
