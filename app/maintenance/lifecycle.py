"""Scheduled forgetting and promotion: expire (per-tag TTL), decay (importance fading without use) and
promote (L2 → L3). Each works bank by bank in bounded batches, one transaction per batch, taking rows
with SKIP LOCKED: a run killed half-way resumes where it stopped, a second run changes nothing more,
and two runs at once split the work."""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.banks.config import NEVER_DECAY, VALID_TIME_KINDS
from app.db.models import Job
from app.db.repositories import banks as banks_repo
from app.db.repositories import history as history_repo
from app.db.repositories import jobs as jobs_repo
from app.db.repositories import lifecycle as lifecycle_repo
from app.db.repositories import units as units_repo
from app.db.repositories.lifecycle import Expiry, Fading
from app.maintenance.tuning import (
    GUARD_MIN_UNITS,
    LIFECYCLE_BATCH,
    PROMOTE_CONFIDENCE,
    PROMOTE_IMPORTANCE,
    PROMOTE_SOURCES,
)
from app.schemas.banks import DEFAULT_TTL_DAYS, BankConfig
from app.webhooks import emit as webhooks

log = logging.getLogger(__name__)


def job_now(job: Job) -> datetime:
    """The job's clock: `params.now` when an admin (or a test) sets it, else the real time."""
    raw = job.params.get("now")
    return datetime.fromisoformat(raw) if raw else datetime.now(UTC)


def bank_failure(exc: BaseException) -> bool:
    """An error of one bank's own data (a value its SQL cannot compute, a stored config that no longer
    validates), as opposed to the database or the broker being away: recorded for that bank, and the
    run goes on with the others."""
    if isinstance(exc, ValidationError):
        return True
    sqlstate = str(getattr(getattr(exc, "orig", None), "sqlstate", "") or "")
    return isinstance(exc, DBAPIError) and sqlstate[:2] in ("22", "23")


@dataclass
class MaintenanceRun:
    """One maintenance task over every bank (or the one in `params.bank_id`). A bank whose own data
    makes the task fail is recorded in `failed` and skipped; the other banks proceed."""

    sessionmaker: async_sessionmaker[AsyncSession]
    job: Job
    now: datetime
    batch: int = LIFECYCLE_BATCH
    failed: dict[str, str] = field(default_factory=dict)
    refused: dict[str, dict[str, Any]] = field(default_factory=dict)

    def fail(self, bank_id: str, exc: BaseException) -> None:
        log.warning("maintenance %s: bank %s failed: %s", self.job.kind, bank_id, exc)
        self.failed[bank_id] = f"{type(exc).__name__}: {exc}"[:500]

    async def banks(self) -> list[tuple[str, BankConfig]]:
        only = self.job.params.get("bank_id")
        async with self.sessionmaker() as db:
            rows = await banks_repo.bank_configs(db, only)
        banks = []
        for bank_id, config in rows:
            try:
                banks.append((bank_id, BankConfig.model_validate(config)))
            except ValidationError as exc:
                self.fail(bank_id, exc)
        return banks

    async def batches(self, step: Callable[[AsyncSession], Awaitable[int]], progress: dict[str, Any]) -> int:
        """Run `step` (one batch, returns rows changed) in its own transaction until it changes nothing."""
        total = 0
        while True:
            try:
                async with self.sessionmaker() as db, db.begin():
                    changed = await step(db)
                    total += changed
                    if changed:
                        await jobs_repo.set_progress(db, self.job.id, {**progress, "changed": total})
            except Exception as exc:
                if not bank_failure(exc):
                    raise
                # (a step over every bank, the re-embedding, is recorded under its task)
                self.fail(str(progress.get("bank_id", progress.get("task", self.job.kind))), exc)
                return total
            if not changed:  # a short batch may only mean rows locked by others: look again
                return total

    def summary(self, per_bank: dict[str, Counter[str]]) -> dict[str, Any]:
        totals: Counter[str] = Counter()
        for counts in per_bank.values():
            totals.update(counts)
        result: dict[str, Any] = {
            "totals": dict(+totals),
            "banks": {b: dict(+c) for b, c in per_bank.items() if +c},
        }
        if self.refused:
            result["refused_banks"] = dict(self.refused)
        if self.failed:
            result["failed_banks"] = dict(self.failed)
        return result


async def _guarded(run: MaintenanceRun, bank_id: str, config: BankConfig, would: int, active: int) -> bool:
    """True when the run must leave this bank alone: it would forget too much of it at once."""
    if run.job.params.get("force") or would < GUARD_MIN_UNITS or would <= config.max_forget_share * active:
        return False
    run.refused[bank_id] = {"would_archive": would, "active": active, "max_share": config.max_forget_share}
    log.warning("maintenance %s: bank %s refused: %s", run.job.kind, bank_id, run.refused[bank_id])
    return True


async def _retire(
    db: AsyncSession,
    bank_id: str,
    units: list[tuple[uuid.UUID, str]],
    to: str,
    *,
    action: str,
    actor: str,
    details: dict[uuid.UUID, dict[str, Any]],
    changed_at: datetime | None = None,
    told_as: str | None = None,
) -> int:
    """`units` (id, current status) → `to`, one history row each as `action`, and the hooks told they
    were forgotten (as `told_as`, else `action`). Returns how many."""
    await history_repo.transition(
        db,
        bank_id,
        [(uid, status, to) for uid, status in units],
        action=action,
        actor=actor,
        details=details,
        changed_at=changed_at,
    )
    ids = [uid for uid, _ in units]
    await webhooks.memories_forgotten(db, bank_id, ids, status=to, action=told_as or action)
    return len(units)


async def _delete_past_grace(
    run: MaintenanceRun, bank_id: str, config: BankConfig, counts: Counter[str]
) -> None:
    """Policy `delete`: archived units are deleted once their grace period is over."""
    if config.forgetting_policy != "delete":
        return

    async def step(db: AsyncSession) -> int:
        units = await lifecycle_repo.lock_archived_past_grace(
            db, bank_id, run.now, config.expiry_grace_days, run.batch
        )
        return await _retire(
            db,
            bank_id,
            units,
            "deleted",
            action="deleted",
            actor=f"maintenance:{run.job.kind.split('.')[-1]}",
            details={uid: {"policy": "delete", "grace_days": config.expiry_grace_days} for uid, _ in units},
        )

    counts["deleted"] += await run.batches(step, {"task": run.job.kind, "bank_id": bank_id})


Step = Callable[[AsyncSession], Awaitable[int]]


async def _forget(
    run: MaintenanceRun,
    task: str,
    count: Callable[[AsyncSession, str, BankConfig], Awaitable[int]],
    steps: Callable[[str, BankConfig], list[Step]],
) -> dict[str, Any]:
    """Bank by bank (policy `never` skipped): unless the guard refuses what `count` says would be
    archived, run each of `steps` in batches (each returns the units it archived); then policy
    `delete`'s deletions past the grace period."""
    per_bank: dict[str, Counter[str]] = {}
    for bank_id, config in await run.banks():
        if config.forgetting_policy == "never":
            continue
        counts = per_bank.setdefault(bank_id, Counter())
        async with run.sessionmaker() as db:
            would = await count(db, bank_id, config)
            active = await lifecycle_repo.count_active(db, bank_id)
        if not await _guarded(run, bank_id, config, would, active):
            for step in steps(bank_id, config):
                counts["archived"] += await run.batches(step, {"task": task, "bank_id": bank_id})
        await _delete_past_grace(run, bank_id, config, counts)
    return run.summary(per_bank)


def _expiry_rules(config: BankConfig) -> list[Expiry]:
    """Past `expires_at`, then each tag kind's TTL (the bank's over the defaults; None: kept)."""
    ttl = {**DEFAULT_TTL_DAYS, **config.ttl_days}
    return [
        Expiry(),
        *(Expiry(kind, days, _valid_time(kind)) for kind, days in ttl.items() if days is not None),
    ]


def _valid_time(tag: str) -> bool:
    """Whether units under `tag` age in valid time: a time-bound kind, or a tag under one."""
    return any(tag == kind or tag.startswith(kind + ".") for kind in VALID_TIME_KINDS)


async def expire(run: MaintenanceRun) -> dict[str, Any]:
    """Units older than their tag's TTL (or past `expires_at`) → `expired`, then `archived`:
    restorable, out of the default context, found by queries about their time. Ages count in bank
    time except for time-bound kinds (see `lifecycle_repo`). Policy `delete` deletes archived units
    after `expiry_grace_days`; policy `never` keeps everything."""

    async def count(db: AsyncSession, bank_id: str, config: BankConfig) -> int:
        return await lifecycle_repo.count_expired(db, bank_id, _expiry_rules(config), run.now)

    def steps(bank_id: str, config: BankConfig) -> list[Step]:
        def step_for(rule: Expiry) -> Step:
            async def step(db: AsyncSession) -> int:
                units = await lifecycle_repo.lock_expired(db, bank_id, rule, run.now, run.batch)
                reason = {"ttl": rule.tag or "expires_at"}
                await history_repo.transition(
                    db,
                    bank_id,
                    [(uid, status, "expired") for uid, status in units],
                    action="expired",
                    actor="maintenance:expire",
                    details=dict.fromkeys((uid for uid, _ in units), reason),
                )
                return await _retire(
                    db,
                    bank_id,
                    [(uid, "expired") for uid, _ in units],
                    "archived",
                    action="archived",
                    actor="maintenance:expire",
                    details=dict.fromkeys((uid for uid, _ in units), reason),
                    changed_at=run.now,
                    told_as="expired",
                )

            return step

        return [step_for(rule) for rule in _expiry_rules(config)]

    return await _forget(run, "expire", count, steps)


async def decay(run: MaintenanceRun) -> dict[str, Any]:
    """Episodic units (facts excepted) whose `importance · exp(-λ · days since the bank last used or
    heard them)` fell under the bank's threshold → `archived` (out of retrieval unless asked for).
    Policy `never` keeps them."""

    def fading(config: BankConfig) -> Fading:
        return Fading(run.now, config.decay_lambda, config.decay_threshold, NEVER_DECAY)

    async def count(db: AsyncSession, bank_id: str, config: BankConfig) -> int:
        return await lifecycle_repo.count_faded(db, bank_id, fading(config))

    def steps(bank_id: str, config: BankConfig) -> list[Step]:
        async def step(db: AsyncSession) -> int:
            units = await lifecycle_repo.lock_faded(db, bank_id, fading(config), run.batch)
            return await _retire(
                db,
                bank_id,
                units,
                "archived",
                action="decayed",
                actor="maintenance:decay",
                details={uid: {"lambda": config.decay_lambda} for uid, _ in units},
                changed_at=run.now,
            )

        return [step]

    return await _forget(run, "decay", count, steps)


async def promote(run: MaintenanceRun) -> dict[str, Any]:
    """Active L2 units confirmed by ≥ 3 sources, or with confidence ≥ 0.9 and importance ≥ 0.7,
    become L3 (semantic-layer) knowledge."""
    per_bank: dict[str, Counter[str]] = {}
    for bank_id, _ in await run.banks():
        counts = per_bank.setdefault(bank_id, Counter())

        async def step(db: AsyncSession, bank_id: str = bank_id) -> int:
            units = await lifecycle_repo.lock_promotable(
                db,
                bank_id,
                sources=PROMOTE_SOURCES,
                confidence=PROMOTE_CONFIDENCE,
                importance=PROMOTE_IMPORTANCE,
                limit=run.batch,
            )
            ids: list[uuid.UUID] = [uid for uid, _ in units]
            await units_repo.set_layer(db, ids, "semantic")
            await history_repo.add_history(
                db,
                [
                    {
                        "bank_id": bank_id,
                        "memory_id": uid,
                        "action": "promoted",
                        "actor": "maintenance:promote",
                        "details": {"layer": "semantic", "from": status, "to": status},
                    }
                    for uid, status in units
                ],
            )
            return len(units)

        counts["promoted"] += await run.batches(step, {"task": "promote", "bank_id": bank_id})
    return run.summary(per_bank)
