"""Appending to the raw event log, and reading a session's working memory."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.db.commit_hooks import after_commit
from app.db.models import ChatSession, Job
from app.db.repositories import events as repo
from app.errors import NotFound
from app.events.group_commit import AppendGroups, Submission
from app.events.working_memory import WorkingMemory
from app.jobs.schedule import schedule_distill
from app.metrics import EVENTS_APPENDED, EVENTS_DUPLICATE
from app.redact import redact, redact_json
from app.schemas.common import as_aware
from app.schemas.events import AppendRequest, AppendResult, EventIn


def _turn(seq: int, role: str, content: str, speaker: str | None, occurred_at: datetime) -> dict[str, Any]:
    """A turn as the working-memory buffer holds it."""
    return {
        "seq": seq,
        "role": role,
        "content": content,
        "speaker": speaker,
        "occurred_at": occurred_at.isoformat(),
    }


def _dedupe(events: list[EventIn]) -> tuple[list[EventIn], int]:
    """The batch without the repeats of an external id within it (the log's are the statement's)."""
    seen: set[str] = set()
    kept: list[EventIn] = []
    for event in events:
        if event.external_id is not None:
            if event.external_id in seen:
                continue
            seen.add(event.external_id)
        kept.append(event)
    return kept, len(events) - len(kept)


@dataclass(frozen=True)
class Appending:
    """One append: a batch of turns for a session of the bank, the session's working memory (`buffer`,
    which the turns go onto once committed) and the appending agent's `agent_id` and `proposed`
    (shared memory: its turns' units are its, and wait for a review when it may only propose)."""

    bank: ConfiguredBank
    session_id: str
    request: AppendRequest
    buffer: WorkingMemory
    agent_id: str | None = None
    proposed: bool = False

    @property
    def author(self) -> repo.Author:
        return repo.Author(self.agent_id, self.proposed)


def _prepare(bank: ConfiguredBank, request: AppendRequest) -> tuple[list[repo.NewEvent], int]:
    """The request's events as stored (read in the bank's timezone, redacted when the bank says so),
    less its repeats of an external id, and how many those were."""
    tz = bank.timezone
    now = datetime.now(UTC)
    unique, repeated = _dedupe(request.events)
    masked = bank.config.redact_raw_events  # then the original text is never stored, nor buffered in Redis
    batch = [
        repo.NewEvent(
            role=e.role,
            content=redact(e.content) if masked else e.content,
            speaker=e.speaker,
            occurred_at=as_aware(e.occurred_at, tz) if e.occurred_at else now,
            external_id=e.external_id,
            metadata=redact_json(e.metadata) if masked else e.metadata,
        )
        for e in unique
    ]
    return batch, repeated


def _result(
    session_id: str, appended: int, first_seq: int, last_seq: int, duplicates: int, job: Job | None
) -> AppendResult:
    """Answer an append: the seqs its turns took (none when all were repeats), its repeats, its job."""
    return AppendResult(
        session_id=session_id,
        appended=appended,
        first_seq=first_seq if appended else None,
        last_seq=last_seq if appended else None,
        duplicates=duplicates,
        distill_job_id=job.id if job else None,
    )


async def append_grouped(groups: AppendGroups, appending: Appending) -> AppendResult:
    """Append a batch in the process's next group commit (all of it or none); answers once the group
    has committed, its turns are on working memory and the distillation it started is sent."""
    bank, session_id = appending.bank, appending.session_id
    batch, repeated = _prepare(bank, appending.request)
    turns = [_turn(0, e.role, e.content, e.speaker, e.occurred_at) for e in batch]
    every = bank.config.distill_every_n_turns
    submission = Submission(bank.id, session_id, batch, every, appending.author, appending.buffer, turns)
    outcome = await groups.append(submission)
    duplicates = repeated + len(batch) - len(outcome.kept)
    EVENTS_APPENDED.inc(len(outcome.kept))
    EVENTS_DUPLICATE.inc(duplicates)
    return _result(
        session_id, len(outcome.kept), outcome.first_seq, outcome.last_seq, duplicates, outcome.job
    )


async def append(db: AsyncSession, appending: Appending) -> AppendResult:
    """Append a batch in the caller's transaction (all or nothing). Once it commits, the turns are
    pushed onto the session's working memory, and the distillation it started (when the session now
    holds `distill_every_n_turns` undistilled events) is sent; the job is created in the same
    transaction, so a crash between commit and send loses nothing: the sweep sends it."""
    bank, session_id = appending.bank, appending.session_id
    batch, repeated = _prepare(bank, appending.request)
    config = bank.config
    distilled_by: Job | None = None  # the distillation these turns started or joined
    try:
        appended = await repo.append(db, bank.id, session_id, batch, appending.author)
    except IntegrityError as exc:
        # The session row lock rules out seq and external_id races, so this is the bank's
        # foreign key: the bank was deleted while we appended.
        await db.rollback()
        raise NotFound(f"Bank {bank.id!r} not found.") from exc
    rows = [batch[i] for i in appended.kept]
    if rows and appended.last_seq - appended.distilled_seq >= config.distill_every_n_turns:
        distilled_by, _ = await schedule_distill(db, bank.id, session_id)
    duplicates = repeated + len(batch) - len(rows)
    first_seq = appended.first_seq
    turns = [_turn(first_seq + i, r.role, r.content, r.speaker, r.occurred_at) for i, r in enumerate(rows)]

    async def appended_for_good() -> None:
        EVENTS_APPENDED.inc(len(rows))
        EVENTS_DUPLICATE.inc(duplicates)
        await appending.buffer.push(bank.id, session_id, turns)

    after_commit(db, appended_for_good)
    return _result(session_id, len(rows), first_seq, appended.last_seq, duplicates, distilled_by)


async def working_memory(
    db: AsyncSession, buffer: WorkingMemory, session: ChatSession, limit: int
) -> tuple[list[dict[str, Any]], Literal["redis", "events"]]:
    """The session's newest `limit` turns not yet distilled, and where they came from: the Redis
    buffer, or the event log when the buffer does not hold them all (Redis down, evicted, expired)."""
    wanted = min(session.last_seq - session.distilled_seq, limit)
    if wanted <= 0:
        return [], "redis"
    first = session.last_seq - wanted + 1
    buffered = await buffer.recent(session.bank_id, session.session_id, first - 1)
    if [t["seq"] for t in buffered] == list(range(first, session.last_seq + 1)):
        return buffered, "redis"
    rows = await repo.list_events(db, session.bank_id, session.session_id, after_seq=first - 1, limit=wanted)
    return [_turn(e.seq, e.role, e.content, e.speaker, e.occurred_at) for e in rows], "events"
