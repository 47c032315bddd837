"""After-commit hooks: a service notes a key in its session's transaction (`note`); once the transaction
commits, the callback configured on the sessionmaker for that hook gets the keys noted (`on_commit`); a
rollback forgets them. The outbox patterns use it to nudge a worker only for work that really committed."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from app.db.models import Job

log = logging.getLogger(__name__)

Callback = Callable[[set[str]], None]


def _callback_key(hook: str) -> str:
    return f"hindsight.after_commit.{hook}"


def _pending_key(hook: str) -> str:
    return f"hindsight.after_commit.{hook}.pending"


def note(db: AsyncSession, hook: str, key: str) -> None:
    """Hand `key` to `hook`'s callback once `db`'s transaction commits."""
    pending: set[str] | None = db.info.get(_pending_key(hook))
    if pending is None:
        pending = db.info[_pending_key(hook)] = set()

        def after_commit(session: Session) -> None:
            callback: Callback | None = session.info.get(_callback_key(hook))
            if not pending or callback is None:
                pending.clear()
                return
            keys = set(pending)
            pending.clear()
            try:
                callback(keys)
            except Exception:  # never fail a commit that happened
                log.exception("after-commit hook %s failed for %s", hook, sorted(keys))

        event.listen(db.sync_session, "after_commit", after_commit)
        event.listen(db.sync_session, "after_rollback", lambda _session: pending.clear())
    pending.add(key)


def on_commit(sessionmaker: async_sessionmaker[AsyncSession], hook: str, callback: Callback) -> None:
    """Sessions of `sessionmaker` call `callback` with the keys noted for `hook` after each commit."""
    sessionmaker.configure(info={_callback_key(hook): callback})


_CALLBACKS = "hindsight.after_commit.callbacks"


def on_commit_of(db: AsyncSession, callback: Callable[[], None]) -> None:
    """Call `callback` once `db`'s outermost transaction commits; a rollback of it forgets the callback.
    A savepoint's release or rollback is not the end of the transaction: nothing runs nor is forgotten."""
    callbacks: list[Callable[[], None]] | None = db.info.get(_CALLBACKS)
    if callbacks is None:
        callbacks = db.info[_CALLBACKS] = []

        def committed(session: Session) -> None:
            if session.in_nested_transaction():
                return
            due = list(callbacks)
            callbacks.clear()
            for call in due:
                call()

        def rolled_back(session: Session) -> None:
            if not session.in_nested_transaction():
                callbacks.clear()

        event.listen(db.sync_session, "after_commit", committed)
        event.listen(db.sync_session, "after_rollback", rolled_back)
    callbacks.append(callback)


AfterCommit = Callable[[], Awaitable[None]]


@dataclass
class Committed:
    """What the unit of work's committed transactions left to do: jobs to send, actions to run."""

    jobs: dict[uuid.UUID, Job] = field(default_factory=dict)
    actions: list[AfterCommit] = field(default_factory=list)


# The unit of work running in this context (a request's, a job's). A contextvar, not the session's
# info, because a job's service may commit batches in sessions of its own (a distillation's).
_CURRENT: ContextVar[Committed | None] = ContextVar("hindsight_unit_of_work", default=None)


def enqueue(db: AsyncSession, job: Job) -> None:
    """Send `job` once `db`'s transaction commits; a rollback drops it. Outside a unit of work (a
    script, a test driving a service) nothing sends it: the sweep does, as for a lost message."""
    committed = _CURRENT.get()
    if committed is None:
        return

    def send_later() -> None:
        committed.jobs[job.id] = job

    on_commit_of(db, send_later)


def after_commit(db: AsyncSession, action: AfterCommit) -> None:
    """Run `action` once `db`'s transaction has committed (before the unit of work's jobs are sent);
    a rollback drops it. For side effects outside the database that must follow the data, never lead it."""
    committed = _CURRENT.get()
    if committed is None:
        raise RuntimeError("after_commit is only for code running in a unit of work")
    on_commit_of(db, lambda: committed.actions.append(action))


@asynccontextmanager
async def collect() -> AsyncIterator[Committed]:
    """Collect what the transactions committed in this context leave to do (a job's handler may commit
    sessions of its own); the unit of work (`app.jobs.unit_of_work`) does it."""
    committed = Committed()
    token = _CURRENT.set(committed)
    try:
        yield committed
    finally:
        _CURRENT.reset(token)
