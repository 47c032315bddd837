"""A maintenance run: a step failing on one bank's data is recorded, whether or not the step is one bank's
(the re-embedding runs over every bank); a bank busy past the lock's wait stops no other bank's merge; the
weekly merge's hour is the one it was scheduled in."""

from __future__ import annotations

import uuid
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import DBAPIError

from app.db.models import Job
from app.maintenance.lifecycle import MaintenanceRun


class _Orig(Exception):
    sqlstate = "22P02"  # invalid text representation: the bank's own data


class _Session:
    @asynccontextmanager
    async def begin(self) -> Any:
        yield self


@asynccontextmanager
async def _sessions() -> Any:
    yield _Session()


async def _bad_row(db: Any) -> int:
    raise DBAPIError("UPDATE …", {}, _Orig("bad value"))


async def test_a_data_error_in_a_step_over_every_bank_is_recorded_under_its_task() -> None:
    job = Job(id=uuid.uuid4(), kind="maintenance.reembed", params={})
    run = MaintenanceRun(_sessions, job, datetime.now(UTC))  # type: ignore[arg-type]
    assert await run.batches(_bad_row, {"task": "reembed", "model": "m"}) == 0
    assert list(run.failed) == ["reembed"]
    assert await run.batches(_bad_row, {"bank_id": "b1"}) == 0
    assert list(run.failed) == ["reembed", "b1"]


async def test_a_bank_busy_past_the_locks_wait_is_recorded_and_the_merge_goes_on(monkeypatch: Any) -> None:
    from collections import Counter

    from app.maintenance import merge
    from app.resolve.lock import BankBusy
    from app.schemas.banks import BankConfig

    class Run(MaintenanceRun):
        async def banks(self) -> list[tuple[str, BankConfig]]:
            return [(bank, BankConfig()) for bank in ("a", "b", "c")]

    async def merge_bank(run: Any, bank_id: str, config: Any, counts: Counter[str], *_: Any) -> None:
        if bank_id == "b":
            raise BankBusy("Bank b is busy")
        counts["merged"] += 1

    monkeypatch.setattr(merge, "_merge_bank", merge_bank)
    job = Job(id=uuid.uuid4(), kind="maintenance.merge", params={"force": True})
    result = await merge.merge(Run(_sessions, job, datetime.now(UTC)), embedder=None)  # type: ignore[arg-type]
    assert result["banks"] == {"a": {"merged": 1}, "c": {"merged": 1}}
    assert list(result["failed_banks"]) == ["b"]


def test_a_weekly_merge_that_starts_late_still_merges_the_banks_due_when_it_was_scheduled() -> None:
    from app.maintenance.merge import _due

    scheduled = datetime(2026, 12, 6, 3, 47, tzinfo=UTC)  # a Sunday, 03:47 UTC
    job = Job(id=uuid.uuid4(), kind="maintenance.merge", params={}, created_at=scheduled)
    late = MaintenanceRun(_sessions, job, datetime(2026, 12, 6, 4, 5, tzinfo=UTC))  # type: ignore[arg-type]
    assert _due(late, "UTC")
    assert not _due(late, "Asia/Tokyo")  # 12:47 there
    job.params = {"now": "2026-12-06T04:05:00+00:00"}  # a clock set by an admin is the clock
    assert not _due(late, "UTC")
