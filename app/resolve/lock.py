"""The bank's lock: one transaction at a time decides on a bank's unit statuses, so two workers can never
both activate two units that contradict each other. Resolution takes it, and so does every other change
of a unit's status by a user or a job (PATCH, a direct write with `?wait=true`, DELETE, restore, purge,
a redistill, a merge), first, before the units' rows in id order: one order, so none waits for another."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories.locks import xact_lock
from app.errors import Unavailable
from app.jobs.service import RetryableError
from app.keys import composite_key
from app.resolve.tuning import LOCK_WAIT_SECONDS


class BankBusy(RetryableError, Unavailable):
    """The bank's units are being decided on by someone else: a job retries later, a request answers
    503 with `Retry-After` (never a 500)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.headers["Retry-After"] = "2"


async def lock_bank(db: AsyncSession, bank_id: str) -> None:
    """Serialise changes of one bank's unit statuses for this transaction; taken before any of its
    rows is locked or written (a 503 with `Retry-After` when it stays busy past LOCK_WAIT_SECONDS)."""
    if not await xact_lock(db, composite_key("resolve", bank_id), LOCK_WAIT_SECONDS):
        raise BankBusy(f"Bank {bank_id!r} is busy resolving its memory; retry shortly.")
