"""Appending to and reading the raw event log."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Bank, Job
from app.db.repositories import events as repo
from app.distill.triggers import schedule_distill
from app.errors import NotFound
from app.metrics import EVENTS_APPENDED, EVENTS_DUPLICATE
from app.schemas.banks import BankConfig
from app.schemas.events import AppendRequest, AppendResult, EventIn


def bank_timezone(bank: Bank) -> tzinfo:
    return ZoneInfo(str(bank.config.get("timezone") or "UTC"))


def as_aware(value: datetime, tz: tzinfo) -> datetime:
    """A timestamp without an offset is read in the bank's time zone (CONTRACT §3)."""
    return value.replace(tzinfo=tz) if value.tzinfo is None else value


def _dedupe(events: list[EventIn], already: set[str]) -> tuple[list[EventIn], int]:
    seen = set(already)
    kept: list[EventIn] = []
    for event in events:
        if event.external_id is not None:
            if event.external_id in seen:
                continue
            seen.add(event.external_id)
        kept.append(event)
    return kept, len(events) - len(kept)


async def append(
    db: AsyncSession, bank: Bank, session_id: str, request: AppendRequest
) -> tuple[AppendResult, list[dict[str, Any]], Job | None]:
    """Append a batch in one transaction (all or nothing) and commit it.

    Returns the result, the appended turns for the working-memory buffer, and the distillation
    job to send when the session now holds `distill_every_n_turns` undistilled events (created in
    the same transaction, so a crash between commit and send loses nothing: the sweep sends it).
    Nothing after the commit can fail the append.
    """
    tz = bank_timezone(bank)
    now = datetime.now(UTC)
    last_seq, distilled_seq = await repo.lock_session_for_append(db, bank.id, session_id)
    external_ids = [e.external_id for e in request.events if e.external_id is not None]
    already = (
        await repo.existing_external_ids(db, bank.id, session_id, external_ids) if external_ids else set()
    )
    kept, duplicates = _dedupe(request.events, already)
    rows = [
        repo.NewEvent(
            role=e.role,
            content=e.content,
            speaker=e.speaker,
            occurred_at=as_aware(e.occurred_at, tz) if e.occurred_at else now,
            external_id=e.external_id,
            metadata=e.metadata,
        )
        for e in kept
    ]
    first_seq = last_seq + 1
    job: Job | None = None
    if rows:
        await repo.insert_events(db, bank.id, session_id, first_seq, rows)
        await repo.advance_session(
            db, bank.id, session_id, last_seq + len(rows), max(r.occurred_at for r in rows)
        )
        every = BankConfig.model_validate(bank.config).distill_every_n_turns
        if last_seq + len(rows) - distilled_seq >= every:
            job, created = await schedule_distill(db, bank.id, session_id)
            job = job if created else None
    try:
        await db.commit()
    except IntegrityError as exc:
        # The session row lock rules out seq and external_id races, so this is the bank's
        # foreign key: the bank was deleted while we appended.
        await db.rollback()
        raise NotFound(f"Bank {bank.id!r} not found.") from exc
    EVENTS_APPENDED.inc(len(rows))
    EVENTS_DUPLICATE.inc(duplicates)
    turns: list[dict[str, Any]] = [
        {
            "seq": first_seq + i,
            "role": r.role,
            "content": r.content,
            "speaker": r.speaker,
            "occurred_at": r.occurred_at.isoformat(),
        }
        for i, r in enumerate(rows)
    ]
    result = AppendResult(
        session_id=session_id,
        appended=len(rows),
        first_seq=first_seq if rows else None,
        last_seq=last_seq + len(rows) if rows else None,
        duplicates=duplicates,
    )
    return result, turns, job
