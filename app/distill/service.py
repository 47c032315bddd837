"""Distillation jobs: a session's undistilled events become pending memory units, in batches,
one job per session at a time, idempotently; and replay (`redistill`) with a diff."""

from __future__ import annotations

import asyncio
import logging
import os
from collections import Counter
from dataclasses import replace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.config import Settings
from app.db.models import ChatSession, Event, Job, MemoryUnit
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import events as events_repo
from app.db.repositories import history as history_repo
from app.db.repositories import jobs as jobs_repo
from app.db.repositories import purge as purge_repo
from app.db.repositories import task_ends as task_ends_repo
from app.db.repositories import units as units_repo
from app.distill import budgeted, episodes, quarantine
from app.distill.store import DistillRuntime, as_stored, locked_session, store_units, to_turns
from app.distill.taxonomy import bank_taxonomy
from app.distill.types import Candidate, DistillContext, Distiller, RelatedUnit
from app.jobs.schedule import schedule_resolve
from app.providers.metering import CallRecorder
from app.redact import redact
from app.resolve.lock import lock_bank
from app.text import strip_invisible
from app.webhooks import emit as webhooks

log = logging.getLogger(__name__)

BATCH_EVENTS = 200  # events per transaction; a long backlog is distilled in several
RELATED_UNITS = 20
LIVE_STATUSES = ("pending", "active")


def create_distiller(
    settings: Settings, name: str | None = None, recorder: CallRecorder | None = None
) -> Distiller:
    """The named distiller (the configured one by default); an LLM one records its calls in `recorder`."""
    if (name or settings.distiller) == "llm":
        from app.distill.llm import LLMDistiller

        return LLMDistiller.from_settings(settings, recorder)
    from app.distill.heuristic.distiller import HeuristicDistiller

    return HeuristicDistiller()


def llm_configured(settings: Settings) -> bool:
    return bool(settings.llm_base_url or settings.llm_api_key.get_secret_value())


async def _candidates(
    db: AsyncSession,
    distill_runtime: DistillRuntime,
    distiller: Distiller,
    bank: ConfiguredBank,
    session_id: str,
    events: list[Event],
) -> tuple[list[Candidate], int, dict[str, int], list[dict[str, Any]]]:
    """Run the distiller over the events (with the bank's related active units when it wants
    them); drop units under the bank's `min_confidence`. Returns (kept, dropped, usage, the turns
    the distiller failed on: `[{seq, reason}]`, left out)."""
    config = bank.config
    # The distiller reads what a unit may say: no bidi overrides or zero-width characters (the raw
    # events keep them; a unit's content is cleaned again whichever distiller wrote it).
    turns = [replace(t, content=strip_invisible(t.content)) for t in to_turns(events)]
    if config.redact:  # the distiller (an LLM provider too) never sees the secrets it would mask
        turns = [replace(t, content=redact(t.content)) for t in turns]
    related: list[RelatedUnit] = []
    if distiller.uses_related:
        probe = "\n".join(t.content for t in turns)[:2000]
        [vector] = await distill_runtime.embedder.embed([probe])
        units = await embeddings_repo.related_active_units(
            db, bank.id, distill_runtime.embedder.model, vector, RELATED_UNITS
        )
        related = [RelatedUnit(u.id, u.content, list(u.tags)) for u in units]
    context = DistillContext(
        bank_id=bank.id,
        session_id=session_id,
        turns=turns,
        timezone=bank.timezone,
        related=related,
        taxonomy=bank_taxonomy(config.tags),
    )
    result, quarantined = await quarantine.distill_isolating(distiller, context)
    kept = [c for c in result.candidates if c.confidence >= config.min_confidence]
    return kept, len(result.candidates) - len(kept), result.usage, quarantined


async def _quarantine(
    db: AsyncSession, session: ChatSession, job: Job, turns: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Record the turns left out on the session (its view lists them); returns them with the job."""
    items = [{**turn, "job_id": str(job.id)} for turn in turns]
    if items:
        kept = quarantine.merged(list(session.quarantined or []), items)
        await events_repo.set_quarantined(db, session.bank_id, session.session_id, kept)
    return items


async def distill_session(distill_runtime: DistillRuntime, job: Job) -> dict[str, Any]:
    """Distil `(distilled_seq, last_seq]` of the job's session, a batch per transaction. The
    watermark moves in the same transaction as the batch's units; a failed batch moves nothing."""
    assert job.bank_id is not None
    bank_id, session_id = job.bank_id, str(job.params["session_id"])
    distiller = distill_runtime.distiller(None)
    fallback: dict[str, Any] | None = None  # why a batch ran on the heuristic distiller instead
    totals: Counter[str] = Counter()
    usage: Counter[str] = Counter()
    resolved_by: list[str] = []  # the resolution jobs that take this job's units (created or joined)
    quarantined: list[dict[str, Any]] = []
    watermark = 0
    while True:
        async with distill_runtime.sessionmaker() as db, db.begin():
            bank, session = await locked_session(db, bank_id, session_id)
            if bank is None or session is None:
                break  # deleted meanwhile: nothing to do
            events = await events_repo.list_events(
                db, bank_id, session_id, after_seq=session.distilled_seq, limit=BATCH_EVENTS
            )
            if not events:
                watermark = session.distilled_seq
                break
            distiller, fell_back = await budgeted.choose(db, distill_runtime, bank, None)
            if fell_back is not None:
                fallback = {**fell_back, "batches": (fallback or {}).get("batches", 0) + 1}
            candidates, dropped, batch_usage, left_out = await _candidates(
                db, distill_runtime, distiller, bank, session_id, events
            )
            # A turn the distiller failed on is left out (its reason kept), not a batch held back forever.
            quarantined += await _quarantine(db, session, job, left_out)
            ids = await store_units(
                db, distill_runtime, bank, session_id, events, candidates, distiller=distiller, job=job
            )
            watermark = events[-1].seq
            await events_repo.advance_distilled(db, bank_id, session_id, watermark)
            if ids:
                resolve_job, _ = await schedule_resolve(db, bank_id)
                resolved_by.append(str(resolve_job.id))
            batch = {"events": len(events), "units": len(ids), "dropped_low_confidence": dropped}
            totals.update(batch, batches=1)
            await webhooks.session_distilled(db, bank_id, session_id, job.id, watermark, batch)
            usage.update(batch_usage)
            await jobs_repo.set_progress(db, job.id, {**totals, "distilled_seq": watermark})
        if distill_runtime.working_memory is not None:
            await distill_runtime.working_memory.discard_through(bank_id, session_id, watermark)
        if len(events) < BATCH_EVENTS:
            break
        # Between batches, queries first: the core goes to whatever else is ready to run (with the
        # worker's lower priority, an API process) before the next batch takes it.
        os.sched_yield()
        await asyncio.sleep(0)
    tasks = await episodes.write_task_episodes(distill_runtime, job, bank_id, session_id)
    if tasks.units:
        totals.update(task_episodes=len(tasks.units))
    usage.update(tasks.usage)
    result: dict[str, Any] = {
        "session_id": session_id,
        "distilled_seq": watermark,
        "distiller": distiller.version,  # of the last batch; `fallback` says why it is not the LLM's
        # The job is `searchable` once these have resolved its units (GET /v1/jobs/{id}).
        "resolve_job_ids": list(dict.fromkeys(resolved_by)),
    }
    result.update(totals)
    if quarantined:
        result["quarantined"] = quarantined
    if usage:
        result["usage"] = dict(usage)
    if fallback is not None:
        result["fallback"] = fallback
    if tasks.fallback is not None and tasks.units:
        result["task_episodes_fallback"] = tasks.fallback
    return result


def _signature(content: str, tags: list[str]) -> tuple[str, tuple[str, ...]]:
    return " ".join(content.split()), tuple(tags)


DIFF_LIMIT = 200  # items listed per diff section; the counts are always complete


async def redistill(distill_runtime: DistillRuntime, job: Job) -> dict[str, Any]:
    """Replay distillation over sessions' already distilled events with the current (or named)
    distiller and diff the result against their live units. Unless `dry_run`, new units are added
    (pending, then resolved) and live units the replay no longer produces are retired (`deleted`,
    history action `redistilled`)."""
    assert job.bank_id is not None
    bank_id = job.bank_id
    dry_run = bool(job.params.get("dry_run"))
    name: str | None = job.params.get("distiller")
    distiller = distill_runtime.distiller(name)
    session_ids: list[str] | None = job.params.get("session_ids")
    if session_ids is None:
        async with distill_runtime.sessionmaker() as db:
            session_ids = await events_repo.all_session_ids(db, bank_id)
    diff: dict[str, list[dict[str, Any]]] = {"added": [], "removed": [], "unchanged": []}
    counts: Counter[str] = Counter()
    usage: Counter[str] = Counter()
    quarantined: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for session_id in session_ids:
        async with distill_runtime.sessionmaker() as db, db.begin():
            bank, session = await locked_session(db, bank_id, session_id)
            if bank is None or session is None:
                continue
            distiller = await budgeted.choose_for_replay(db, distill_runtime, bank, name)
            events = await events_repo.list_events(
                db, bank_id, session_id, after_seq=0, limit=max(session.distilled_seq, 1)
            )
            events = [e for e in events if e.seq <= session.distilled_seq]
            if len(events) < session.distilled_seq:
                # turns its units came from are not here (a bank imported without its events): a
                # replay would see none of them and retire those units, so the session is left as it is
                skipped.append({"session_id": session_id, "reason": "events missing"})
                counts["skipped"] += 1
                continue
            candidates: list[Candidate] = []
            for start in range(0, len(events), BATCH_EVENTS):
                batch = events[start : start + BATCH_EVENTS]
                kept, _, batch_usage, left_out = await _candidates(
                    db, distill_runtime, distiller, bank, session_id, batch
                )
                candidates += kept
                usage.update(batch_usage)
                if not dry_run:
                    left_out = await _quarantine(db, session, job, left_out)
                quarantined += [{"session_id": session_id, **item} for item in left_out]
            candidates += await episodes.replayed_task_candidates(
                distiller, bank, session, events, candidates, usage
            )
            # Compared and listed as they are stored: secrets masked (the write path masks the added).
            stored = [as_stored(bank.config, c) for c in candidates]
            # Compared with everything the session's distillations stand by, whatever resolution or a
            # user did with it since: a unit resolution superseded or merged, or a user forgot, is
            # still this replay's output, not something to add again (a no-op replay changes nothing
            # and never resurrects an old value). Only live units the replay no longer produces go.
            old = await units_repo.session_units(db, bank_id, session_id)
            old_by_sig = {_signature(u.content, list(u.tags)): u for u in old}
            new_by_sig = {
                _signature(s.content, s.tags): (s, c) for s, c in zip(stored, candidates, strict=True)
            }
            # A unit drawn only from turns a purged unit was drawn from is never added again: the purge
            # erased those words for good, and the replay cannot tell its own rewording of them apart.
            erased = await purge_repo.purged_turns(db, bank_id, session_id)
            added = [
                (s, c)
                for sig, (s, c) in new_by_sig.items()
                if sig not in old_by_sig and not set(c.source_seqs) <= erased
            ]
            removed = [
                u for sig, u in old_by_sig.items() if sig not in new_by_sig and u.status in LIVE_STATUSES
            ]
            unchanged = [u for sig, u in old_by_sig.items() if sig in new_by_sig]
            counts.update(added=len(added), removed=len(removed), unchanged=len(unchanged), sessions=1)
            for name, items in (
                (
                    "added",
                    [{"session_id": session_id, "content": s.content, "tags": s.tags} for s, _ in added],
                ),
                ("removed", [_unit_summary(u) for u in removed]),
                ("unchanged", [_unit_summary(u) for u in unchanged]),
            ):
                diff[name] += items[: max(0, DIFF_LIMIT - len(diff[name]))]
            progress = {"sessions_done": counts["sessions"]}
            await jobs_repo.set_progress(db, job.id, progress, lease=distill_runtime.job_deadline)
            if dry_run:
                continue
            await lock_bank(db, bank_id)  # before any row: retiring units is a status change like a DELETE
            await store_units(
                db,
                distill_runtime,
                bank,
                session_id,
                events,
                [c for _, c in added],
                distiller=distiller,
                job=job,
                salt=f"/{job.id}",
            )
            await task_ends_repo.link_task_episodes(db, bank_id, session_id)
            # Retired, not superseded: nothing replaces them in a chain (they stay restorable).
            retired = await history_repo.transition(
                db,
                bank_id,
                [(u.id, u.status, "deleted") for u in removed],
                action="redistilled",
                actor=f"distiller:{distiller.version}",
                details={u.id: {"job_id": str(job.id)} for u in removed},
            )
            ids = [u.id for u in removed if u.id in retired]  # not those a user changed meanwhile
            await webhooks.memories_forgotten(db, bank_id, ids, status="deleted", action="redistilled")
            if added:
                await schedule_resolve(db, bank_id)
    result: dict[str, Any] = {
        **diff,
        "counts": dict(counts),
        "dry_run": dry_run,
        "distiller": distiller.version,
    }
    if quarantined:
        result["quarantined"] = quarantined[:DIFF_LIMIT]
    if skipped:
        result["skipped"] = skipped[:DIFF_LIMIT]
    if usage:
        result["usage"] = dict(usage)
    return result


def _unit_summary(unit: MemoryUnit) -> dict[str, Any]:
    return {
        "id": str(unit.id),
        "session_id": unit.session_id,
        "content": unit.content,
        "tags": list(unit.tags),
    }
