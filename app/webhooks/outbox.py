"""The webhook outbox: an event is written, one delivery row per subscribed hook, in the same
transaction as the change it tells of (`emit`), so a change never goes untold and nothing is told of
a change that rolled back. After the commit the worker is nudged to deliver (`attach`); a nudge lost
with the broker is made up by beat's tick (`webhooks.deliver` every few seconds).

The services call `emit` in one line; a bank without hooks costs one indexed statement per transaction."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, get_args

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import commit_hooks
from app.db.repositories import webhooks as repo
from app.schemas.webhooks import EventType

EVENT_TYPES: tuple[str, ...] = get_args(EventType)  # what each carries: app/webhooks/emit.py
DELIVER = "webhooks.deliver"  # the Celery task: deliver what is due (of one bank, or of all)

_SUBSCRIBED = "hindsight.webhooks.subscribed"  # session info: (transaction, {bank: its hooks' events})
_HOOK = "webhooks"  # the after-commit hook: the banks whose delivery rows committed


class Publisher(Protocol):
    """What the nudge needs of `app.jobs.queue.TaskQueue` (the jobs package emits `job.failed` here, so
    this package must not import it back)."""

    def publish_sync(self, kind: str, args: list[str], countdown: float | None = None) -> bool: ...

    async def publish(self, kind: str, args: list[str]) -> bool: ...


async def emit(db: AsyncSession, bank_id: str, event_type: str, data: dict[str, Any]) -> None:
    """Write `event_type` with `data` for every hook of the bank subscribed to it, in `db`'s transaction."""
    await emit_many(db, bank_id, event_type, [data])


async def emit_many(db: AsyncSession, bank_id: str, event_type: str, items: Sequence[dict[str, Any]]) -> None:
    """`emit` for several events of one type (a maintenance batch), in one statement."""
    if not items:
        return
    assert event_type in EVENT_TYPES, event_type
    if event_type not in await _subscribed(db, bank_id):
        return
    at = datetime.now(UTC).isoformat()
    payloads = [{"type": event_type, "timestamp": at, "data": {"bank_id": bank_id, **item}} for item in items]
    if await repo.enqueue(db, bank_id, event_type, payloads):
        commit_hooks.note(db, _HOOK, bank_id)


async def _subscribed(db: AsyncSession, bank_id: str) -> frozenset[str]:
    """The bank's subscribed event types, read once per transaction: resolution tells of every unit it
    decides on, and a bank without hooks then costs one statement per transaction, not one per unit."""
    cached: tuple[object, dict[str, frozenset[str]]] | None = db.info.get(_SUBSCRIBED)
    if cached is not None and cached[0] is db.sync_session.get_transaction() and bank_id in cached[1]:
        return cached[1][bank_id]
    events = await repo.subscribed_events(db, bank_id)
    transaction = db.sync_session.get_transaction()  # begun by that read, if it was the first
    if cached is None or cached[0] is not transaction:
        cached = db.info[_SUBSCRIBED] = (transaction, {})
    cached[1][bank_id] = events
    return events


async def forget_content(db: AsyncSession, bank_id: str, memory_id: uuid.UUID) -> None:
    """A purge erases a unit's content for good: from the outbox's payloads too."""
    await repo.scrub_memory_content(db, bank_id, memory_id)


def attach(sessionmaker: async_sessionmaker[AsyncSession], queue: Publisher, *, blocking: bool) -> None:
    """Sessions of `sessionmaker` nudge the webhook worker after a commit that wrote deliveries.
    `blocking`: publish before the commit returns (a worker process, whose event loop stops between
    tasks); else on a task of the running loop (the API)."""
    background: set[asyncio.Task[bool]] = set()

    def notify(bank_ids: set[str]) -> None:
        for bank_id in sorted(bank_ids):
            if blocking:
                queue.publish_sync(DELIVER, [bank_id])
                continue
            task = asyncio.get_running_loop().create_task(queue.publish(DELIVER, [bank_id]))
            background.add(task)
            task.add_done_callback(background.discard)

    commit_hooks.on_commit(sessionmaker, _HOOK, notify)
