"""The ledger as the JSON chat client's `CallRecorder`: each call a row of `llm_calls`, written in a
transaction of its own (a call that was made stays recorded when the work that made it rolls back), and
counted for Prometheus."""

from __future__ import annotations

import logging
from dataclasses import asdict

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.repositories import usage as repo
from app.metrics import LLM_CALLS, LLM_LATENCY, LLM_TOKENS
from app.providers.metering import LLMCall

log = logging.getLogger(__name__)


class Ledger:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self._sessionmaker = sessionmaker

    @classmethod
    def beside(cls, db: AsyncSession) -> Ledger:
        """A ledger on `db`'s database that writes outside `db`'s transaction."""
        return cls(async_sessionmaker(db.bind, expire_on_commit=False))

    async def record(self, call: LLMCall) -> None:
        """Count the call and store it; a failed write is logged, never raised (the call happened)."""
        LLM_CALLS.labels(call.operation, call.model, call.outcome).inc()
        LLM_TOKENS.labels(call.operation, call.model, "prompt").inc(call.prompt_tokens)
        LLM_TOKENS.labels(call.operation, call.model, "completion").inc(call.completion_tokens)
        LLM_LATENCY.labels(call.operation).observe(call.latency_ms / 1000)
        try:
            async with self._sessionmaker() as db, db.begin():
                await repo.insert_call(db, asdict(call))
        except (SQLAlchemyError, OSError):  # the bank deleted meanwhile, the database away
            log.warning("LLM call not recorded in the ledger: %s", call, exc_info=True)
