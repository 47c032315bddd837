"""After-commit hooks: a service notes a key in its session's transaction (`note`); once the transaction
commits, the callback configured on the sessionmaker for that hook gets the keys noted (`on_commit`); a
rollback forgets them. The outbox patterns use it to nudge a worker only for work that really committed."""

from __future__ import annotations

import logging
from collections.abc import Callable

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

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
