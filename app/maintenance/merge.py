"""The weekly merge: clusters of active units with the same first tag and cosine ≥ 0.90 that say
the same thing (same numbers, same negation) become one — the most complete member (the longest
text) keeps its id and gains the others' sources; the others become `merged`. With an LLM
configured, the survivor's text becomes the LLM's one-sentence summary of the cluster (and is
re-embedded). Runs for a bank in its local Sunday 03:00 hour (beat ticks hourly), or when an admin asks."""

from __future__ import annotations

from collections import Counter
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import MemoryUnit
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import history as history_repo
from app.db.repositories import units as units_repo
from app.maintenance.lifecycle import MaintenanceRun, bank_failure
from app.maintenance.tuning import MERGE_NEIGHBOURS, MERGE_SIMILARITY
from app.providers.embeddings import Embedder
from app.providers.metering import charging
from app.resolve.conflicts import same_statement
from app.resolve.lock import BankBusy, lock_bank
from app.resolve.service import merge as merge_into
from app.schemas.banks import BankConfig
from app.text import search_text
from app.usage.budget import Budget

LOCAL_WEEKDAY, LOCAL_HOUR = 6, 3  # Sunday, 03:00–04:00 in the bank's time zone


def _due(run: MaintenanceRun, timezone: str) -> bool:
    """Whether the bank's local Sunday 03:00 hour is the one the run was scheduled in (its `now` when
    set): a run that starts late or is retried still merges the banks that were due."""
    if run.job.params.get("bank_id") or run.job.params.get("force"):
        return True
    scheduled = run.now if run.job.params.get("now") or run.job.created_at is None else run.job.created_at
    local = scheduled.astimezone(ZoneInfo(timezone))
    return local.weekday() == LOCAL_WEEKDAY and local.hour == LOCAL_HOUR


def _completeness(unit: MemoryUnit) -> tuple[int, int, float]:
    return len(unit.content), len(unit.source_event_ids), -unit.created_at.timestamp()


class Summarizer(Protocol):
    budget: Budget  # past it, a bank's clusters merge without a summary

    async def summarize(self, statements: list[str], *, model: str | None = None) -> str | None: ...


async def merge(
    run: MaintenanceRun, embedder: Embedder, summarizer: Summarizer | None = None
) -> dict[str, Any]:
    per_bank: dict[str, Counter[str]] = {}
    for bank_id, config in await run.banks():
        if not _due(run, config.timezone):
            continue
        counts = per_bank.setdefault(bank_id, Counter())
        try:
            with charging(bank_id, run.job.id):
                await _merge_bank(run, bank_id, config, counts, embedder, summarizer)
        except Exception as exc:
            # one bank busy past the lock's wait (a long resolution) is recorded, as a bank's bad data
            # is: the banks after it in the run still merge
            if not (bank_failure(exc) or isinstance(exc, BankBusy)):
                raise
            run.fail(bank_id, exc)
    return run.summary(per_bank)


async def _merge_bank(
    run: MaintenanceRun,
    bank_id: str,
    config: BankConfig,
    counts: Counter[str],
    embedder: Embedder,
    summarizer: Summarizer | None,
) -> None:
    after = None
    while True:
        async with run.sessionmaker() as db, db.begin():
            await lock_bank(db, bank_id)  # merging races resolution otherwise
            writer = summarizer
            if writer is not None and await writer.budget.exhausted(db, bank_id, config, "summarise"):
                writer = None  # a spent budget: the most complete member keeps its own text
            model = config.llm_model("summarise")
            units = await units_repo.active_after(db, bank_id, after, run.batch)
            for unit in units:
                merged, summarized = await _merge_cluster(db, unit, embedder, writer, model)
                counts["merged"] += merged
                counts["summarized"] += summarized
            after = units[-1].id if units else None
        if len(units) < run.batch:
            break


async def _merge_cluster(
    db: AsyncSession, unit: MemoryUnit, embedder: Embedder, summarizer: Summarizer | None, model: str | None
) -> tuple[int, int]:
    """Returns (units merged away, 1 if the survivor was rewritten as a summary)."""
    await db.refresh(unit)
    if unit.status != "active" or not unit.tags:
        return 0, 0
    near = await embeddings_repo.neighbours(db, unit, embedder.model, MERGE_NEIGHBOURS, dim=embedder.dim)
    cluster = [unit] + [
        u
        for u, sim in near
        if sim >= MERGE_SIMILARITY and u.tags and u.tags[0] == unit.tags[0] and same_statement(u, unit)
    ]
    if len(cluster) < 2:
        return 0, 0
    survivor = max(cluster, key=_completeness)
    for member in cluster:
        if member.id != survivor.id:
            await db.refresh(survivor)
            similarity = next((sim for u, sim in near if u.id == member.id), 1.0)
            await merge_into(
                db, member, into=survivor, similarity=similarity, details={"by": "maintenance:merge"}
            )
    summary = await summarizer.summarize([m.content for m in cluster], model=model) if summarizer else None
    if not summary or summary == survivor.content:
        return len(cluster) - 1, 0
    [vector] = await embedder.embed([summary])
    await units_repo.rewrite(db, survivor, summary, search_text(summary), embedder.model, vector)
    await history_repo.add_history(
        db,
        [
            {
                "bank_id": survivor.bank_id,
                "memory_id": survivor.id,
                "action": "summarized",
                "actor": "maintenance:merge",
                "details": {"members": len(cluster), "from": "active", "to": "active"},
            }
        ],
    )
    return len(cluster) - 1, 1
