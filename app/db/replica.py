"""Reads on a streaming replica (`HINDSIGHT_READ_DATABASE_URL`), the primary when it does not answer.

Read routes (queries, lists, gets, history, timeline, entities, stats) take their session from
`ReadRouting.replica_session()`, the export its engine from `read_engine()`; writes, `?wait=true`,
jobs and the caller's key and bank stay on the primary, so a key revoked or a bank created a moment
ago is seen at once. A replica that fails to connect is marked down: reads go to the primary,
`/readyz` says so, and a background probe brings the replica back once it answers again."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from app.db.engine import autocommit, create_sessionmaker
from app.db.repositories import replication

log = logging.getLogger(__name__)

# What a replica that is stopped, restarting or unreachable raises on connect or on a statement.
UNREACHABLE = (SQLAlchemyError, OSError, TimeoutError)


class ReadRouting:
    def __init__(self, replica: AsyncEngine | None, retry_seconds: float) -> None:
        self._engine = replica
        self._sessions = create_sessionmaker(autocommit(replica)) if replica is not None else None
        self._retry_seconds = retry_seconds
        self.down_since: float | None = None
        self.last_error: str | None = None
        self._probe: asyncio.Task[None] | None = None
        if replica is not None:
            event.listen(replica.sync_engine, "handle_error", self._on_error)

    @property
    def configured(self) -> bool:
        return self._engine is not None

    @property
    def reads_from(self) -> str:
        return "replica" if self._sessions is not None and self.down_since is None else "primary"

    async def replica_session(self) -> AsyncSession | None:
        """A session on the replica, already connected; None when reads go to the primary (no
        replica configured, or it is down, or it failed to connect just now)."""
        if self._sessions is None:
            return None
        if self.down_since is not None:
            self._start_probe()
            return None
        db = self._sessions()
        try:
            await db.connection()
        except UNREACHABLE as exc:
            await db.close()
            self.mark_down(exc)
            self._start_probe()
            return None
        return db

    async def read_engine(self, primary: AsyncEngine) -> AsyncEngine:
        """The engine for a read that opens its own connection (the export's snapshot): the
        replica's when it answers now, else `primary`."""
        replica = await self.replica_session()
        if replica is None or self._engine is None:
            return primary
        await replica.close()  # it connected: the replica answers; the connection goes back to the pool
        return self._engine

    def _on_error(self, context: ExceptionContext) -> None:
        # A statement lost its connection (the replica stopped mid-request): that request fails
        # with 503 as on the primary, the next ones read the primary until the probe succeeds.
        if context.is_disconnect:
            self.mark_down(context.original_exception)

    def mark_down(self, exc: BaseException) -> None:
        if self.down_since is None:
            log.warning("read replica unreachable, reading from the primary: %s", exc)
            self.down_since = time.monotonic()
        self.last_error = type(exc).__name__

    def mark_up(self) -> None:
        if self.down_since is not None:
            log.warning("read replica answers again; reads go back to it")
        self.down_since = None
        self.last_error = None

    async def _answers(self) -> float | None:
        """The replica's replay lag, from a fresh connection (raises when it does not answer)."""
        assert self._sessions is not None
        async with self._sessions() as db:
            return await replication.replay_lag_seconds(db)

    def _start_probe(self) -> None:
        if self._probe is None or self._probe.done():
            self._probe = asyncio.create_task(self._probe_until_up(), name="read-replica-probe")

    async def _probe_until_up(self) -> None:
        assert self._engine is not None
        while self.down_since is not None:
            await asyncio.sleep(self._retry_seconds)  # a retry interval, not a synchronisation
            await self._engine.dispose()  # connections from before the outage are dead
            try:
                await self._answers()
            except UNREACHABLE as exc:
                self.last_error = type(exc).__name__
                continue
            self.mark_up()

    async def status(self) -> dict[str, Any] | None:
        """The replica's line of `/readyz` (a live check; it also marks the replica up or down)."""
        if self._engine is None:
            return None
        try:
            lag = await self._answers()
        except UNREACHABLE as exc:
            self.mark_down(exc)
            self._start_probe()
            return {"status": f"down: {type(exc).__name__}", "reads": "primary", "lag_seconds": None}
        self.mark_up()
        return {"status": "ok", "reads": "replica", "lag_seconds": lag}

    async def aclose(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._probe
        if self._engine is not None:
            await self._engine.dispose()
