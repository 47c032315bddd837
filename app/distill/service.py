"""Distillation jobs: a session's undistilled events become pending memory units, in batches,
one job per session at a time, idempotently; and replay (`redistill`) with a diff."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, time, tzinfo
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.banks.config import ConfiguredBank
from app.banks.service import configured_bank
from app.config import Settings
from app.db.models import Event, Job, MemoryUnit, Session
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import events as events_repo
from app.db.repositories import history as history_repo
from app.db.repositories import jobs as jobs_repo
from app.db.repositories import units as units_repo
from app.db.repositories.locks import xact_lock
from app.distill.taxonomy import bank_taxonomy
from app.distill.types import Candidate, DistillContext, Distiller, RelatedUnit, Turn
from app.events.working_memory import WorkingMemory
from app.jobs import service as jobs
from app.jobs.queue import TaskQueue
from app.jobs.schedule import schedule_resolve
from app.keys import composite_key
from app.memory.graph import store_graph
from app.providers.embeddings import Embedder
from app.redact import is_redacted, redact
from app.text import search_text
from app.webhooks import events as webhooks

log = logging.getLogger(__name__)

BATCH_EVENTS = 200  # events per transaction; a long backlog is distilled in several
RELATED_UNITS = 20
LOCK_WAIT_SECONDS = 30.0  # a follow-up job waits this long for the session's running distillation
LIVE_STATUSES = ("pending", "active")


@dataclass
class DistillRuntime:
    """What a distillation needs from the worker process that runs it."""

    sessionmaker: async_sessionmaker[AsyncSession]
    embedder: Embedder
    distiller: Callable[[str | None], Distiller]  # by name; None is the configured default
    queue: TaskQueue
    working_memory: WorkingMemory | None = None

    @property
    def sender(self) -> jobs.JobSender:
        return jobs.JobSender(self.sessionmaker, self.queue)


def create_distiller(settings: Settings, name: str | None = None) -> Distiller:
    if (name or settings.distiller) == "llm":
        from app.distill.llm import LLMDistiller

        return LLMDistiller.from_settings(settings)
    from app.distill.heuristic.distiller import HeuristicDistiller

    return HeuristicDistiller()


def llm_configured(settings: Settings) -> bool:
    return bool(settings.llm_base_url or settings.llm_api_key.get_secret_value())


def _turns(events: list[Event]) -> list[Turn]:
    return [Turn(e.seq, e.id, e.role, e.content, e.speaker, e.occurred_at) for e in events]


def redact_candidate(candidate: Candidate) -> Candidate:
    """Secrets masked in what is stored (content, and so its embedding and search text) and in the
    graph: an entity or relation end that was nothing but a secret is left out, not stored masked."""
    entities = [e.model_copy(update={"name": redact(e.name)}) for e in candidate.entities]
    relations = [
        r.model_copy(update={"subject": redact(r.subject), "object": redact(r.object)})
        for r in candidate.relations
    ]
    return candidate.model_copy(
        update={
            "content": redact(candidate.content),
            "entities": [e for e in entities if not is_redacted(e.name)],
            "relations": [r for r in relations if not (is_redacted(r.subject) or is_redacted(r.object))],
        }
    )


def _identity(session_id: str, version: str, candidate: Candidate, salt: str = "") -> str:
    """Session + source seqs + distiller version + what was said: the same job run twice, or two
    workers on the same batch, produce the same keys and the second insert adds nothing."""
    digest = hashlib.sha256(f"{candidate.content}\x00{'|'.join(candidate.tags)}".encode()).hexdigest()[:20]
    seqs = ",".join(map(str, sorted(candidate.source_seqs)))
    return f"{session_id}:{seqs}:{version}:{digest}{salt}"


async def _candidates(
    db: AsyncSession,
    rt: DistillRuntime,
    distiller: Distiller,
    bank: ConfiguredBank,
    session_id: str,
    events: list[Event],
) -> tuple[list[Candidate], int, dict[str, int]]:
    """Run the distiller over the events (with the bank's related active units when it wants
    them); drop units under the bank's `min_confidence`. Returns (kept, dropped, usage)."""
    config = bank.config
    turns = _turns(events)
    if config.redact:  # the distiller (an LLM provider too) never sees the secrets it would mask
        turns = [replace(t, content=redact(t.content)) for t in turns]
    related: list[RelatedUnit] = []
    if distiller.uses_related:
        probe = "\n".join(t.content for t in turns)[:2000]
        [vector] = await rt.embedder.embed([probe])
        units = await embeddings_repo.related_active_units(
            db, bank.id, rt.embedder.model, vector, RELATED_UNITS
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
    result = await distiller.distill(context)
    candidates = [redact_candidate(c) for c in result.candidates] if config.redact else result.candidates
    kept = [c for c in candidates if c.confidence >= config.min_confidence]
    return kept, len(result.candidates) - len(kept), result.usage


async def _store(
    db: AsyncSession,
    rt: DistillRuntime,
    bank: ConfiguredBank,
    session_id: str,
    events: list[Event],
    candidates: list[Candidate],
    *,
    distiller: Distiller,
    job: Job,
    salt: str = "",
) -> list[uuid.UUID]:
    """Insert candidates as `pending` units with embeddings, entities, relations and a history
    row each. Units whose identity exists already are skipped. Returns the new ids."""
    by_seq = {e.seq: e for e in events}
    prepared: dict[str, tuple[dict[str, Any], Candidate]] = {}
    for c in candidates:
        sources = [by_seq[s] for s in sorted(set(c.source_seqs)) if s in by_seq]
        key = _identity(session_id, distiller.version, c, salt)
        if not sources or key in prepared:  # identical candidates of one batch are one unit
            continue
        row = {
            "id": uuid.uuid4(),
            "bank_id": bank.id,
            "content": c.content,
            "search_text": search_text(c.content),
            "tags": c.tags,
            "confidence": c.confidence,
            "importance": c.importance,
            "status": "pending",
            "session_id": session_id,
            "source_seqs": [e.seq for e in sources],
            "source_event_ids": [e.id for e in sources],
            "supersedes": c.supersedes,
            "valid_from": _valid_from(c, min(e.occurred_at for e in sources), bank.timezone),
            "distiller": distiller.version,
            "identity_key": key,
            "embedding_model": rt.embedder.model,
        }
        prepared[key] = (row, c)
    if not prepared:
        return []
    # The embedder (a thread, or a remote service) works while the units, their graph and history
    # are written; only a retried batch's already stored units are embedded for nothing.
    keys = list(prepared)
    embedding = asyncio.ensure_future(rt.embedder.embed([prepared[k][0]["content"] for k in keys]))
    try:
        inserted = await units_repo.insert_units(db, [row for row, _ in prepared.values()])
        new = [(inserted[key], row, c) for key, (row, c) in prepared.items() if key in inserted]
        if not new:
            await embedding
            return []
        await store_graph(db, bank.id, [(mid, c.entities, c.relations, c.confidence) for mid, _, c in new])
    except BaseException:
        embedding.cancel()
        with contextlib.suppress(BaseException):
            await embedding
        raise
    ids = [mid for mid, _, _ in new]
    by_key = dict(zip(keys, await embedding, strict=True))
    vectors = [by_key[key] for key in prepared if key in inserted]
    await embeddings_repo.insert_embeddings(
        db, bank.id, rt.embedder.model, dict(zip(ids, vectors, strict=True))
    )
    await history_repo.add_history(
        db,
        [
            {
                "bank_id": bank.id,
                "memory_id": mid,
                "action": "created",
                "actor": f"distiller:{distiller.version}",
                "details": {
                    "job_id": str(job.id),
                    "session_id": session_id,
                    "seqs": r["source_seqs"],
                    "to": "pending",
                },
            }
            for mid, r, _ in new
        ],
    )
    return ids


async def _locked_session(
    db: AsyncSession, bank_id: str, session_id: str
) -> tuple[ConfiguredBank | None, Session | None]:
    """Take the session's distillation lock for this transaction (retryable when another job holds
    it), then read the bank and the session (None when deleted meanwhile)."""
    if not await xact_lock(db, composite_key("distill", bank_id, session_id), LOCK_WAIT_SECONDS):
        raise jobs.RetryableError(f"session {session_id!r} is being distilled by another job")
    return await configured_bank(db, bank_id), await events_repo.get_session(db, bank_id, session_id)


async def distill_session(rt: DistillRuntime, job: Job) -> dict[str, Any]:
    """Distil `(distilled_seq, last_seq]` of the job's session, a batch per transaction. The
    watermark moves in the same transaction as the batch's units; a failed batch moves nothing."""
    assert job.bank_id is not None
    bank_id, session_id = job.bank_id, str(job.params["session_id"])
    distiller = rt.distiller(None)
    totals: Counter[str] = Counter()
    usage: Counter[str] = Counter()
    resolve_jobs: list[Job] = []
    watermark = 0
    while True:
        async with rt.sessionmaker() as db, db.begin():
            bank, session = await _locked_session(db, bank_id, session_id)
            if bank is None or session is None:
                break  # deleted meanwhile: nothing to do
            events = await events_repo.list_events(
                db, bank_id, session_id, after_seq=session.distilled_seq, limit=BATCH_EVENTS
            )
            if not events:
                watermark = session.distilled_seq
                break
            candidates, dropped, batch_usage = await _candidates(db, rt, distiller, bank, session_id, events)
            ids = await _store(db, rt, bank, session_id, events, candidates, distiller=distiller, job=job)
            watermark = events[-1].seq
            await events_repo.advance_distilled(db, bank_id, session_id, watermark)
            if ids:
                resolve_job, created = await schedule_resolve(db, bank_id)
                if created:
                    resolve_jobs.append(resolve_job)
            batch = {"events": len(events), "units": len(ids), "dropped_low_confidence": dropped}
            totals.update(batch, batches=1)
            await webhooks.session_distilled(db, bank_id, session_id, job.id, watermark, batch)
            usage.update(batch_usage)
            await jobs_repo.set_progress(db, job.id, {**totals, "distilled_seq": watermark})
        if rt.working_memory is not None:
            await rt.working_memory.discard_through(bank_id, session_id, watermark)
        if len(events) < BATCH_EVENTS:
            break
    await rt.sender.send(resolve_jobs)
    result: dict[str, Any] = {
        "session_id": session_id,
        "distilled_seq": watermark,
        "distiller": distiller.version,
    }
    result.update(totals)
    if usage:
        result["usage"] = dict(usage)
    return result


def _valid_from(candidate: Candidate, said_at: datetime, tz: tzinfo) -> datetime:
    """When the unit's statement holds from: the day it names when that day is past ("I moved to
    Denver last May" holds from May), else when it was said (a plan holds from when it was made)."""
    if candidate.occurred_on is None:
        return said_at
    day = datetime.combine(candidate.occurred_on, time(), tz)
    return day if day <= said_at else said_at


def _signature(content: str, tags: list[str]) -> tuple[str, tuple[str, ...]]:
    return " ".join(content.split()), tuple(tags)


DIFF_LIMIT = 200  # items listed per diff section; the counts are always complete


async def redistill(rt: DistillRuntime, job: Job) -> dict[str, Any]:
    """Replay distillation over sessions' already distilled events with the current (or named)
    distiller and diff the result against their live units. Unless `dry_run`, new units are added
    (pending, then resolved) and live units the replay no longer produces are retired (`deleted`,
    history action `redistilled`)."""
    assert job.bank_id is not None
    bank_id = job.bank_id
    dry_run = bool(job.params.get("dry_run"))
    distiller = rt.distiller(job.params.get("distiller"))
    session_ids: list[str] | None = job.params.get("session_ids")
    if session_ids is None:
        async with rt.sessionmaker() as db:
            session_ids = await events_repo.all_session_ids(db, bank_id)
    diff: dict[str, list[dict[str, Any]]] = {"added": [], "removed": [], "unchanged": []}
    counts: Counter[str] = Counter()
    usage: Counter[str] = Counter()
    resolve_jobs: list[Job] = []
    for session_id in session_ids:
        async with rt.sessionmaker() as db, db.begin():
            bank, session = await _locked_session(db, bank_id, session_id)
            if bank is None or session is None:
                continue
            events = await events_repo.list_events(
                db, bank_id, session_id, after_seq=0, limit=max(session.distilled_seq, 1)
            )
            events = [e for e in events if e.seq <= session.distilled_seq]
            candidates: list[Candidate] = []
            for start in range(0, len(events), BATCH_EVENTS):
                batch = events[start : start + BATCH_EVENTS]
                kept, _, batch_usage = await _candidates(db, rt, distiller, bank, session_id, batch)
                candidates += kept
                usage.update(batch_usage)
            # Compared with everything the session's distillations stand by, whatever resolution or a
            # user did with it since: a unit resolution superseded or merged, or a user forgot, is
            # still this replay's output, not something to add again (a no-op replay changes nothing
            # and never resurrects an old value). Only live units the replay no longer produces go.
            old = await units_repo.session_units(db, bank_id, session_id)
            old_by_sig = {_signature(u.content, list(u.tags)): u for u in old}
            new_by_sig = {_signature(c.content, c.tags): c for c in candidates}
            added = [c for sig, c in new_by_sig.items() if sig not in old_by_sig]
            removed = [
                u for sig, u in old_by_sig.items() if sig not in new_by_sig and u.status in LIVE_STATUSES
            ]
            unchanged = [u for sig, u in old_by_sig.items() if sig in new_by_sig]
            counts.update(added=len(added), removed=len(removed), unchanged=len(unchanged), sessions=1)
            for name, items in (
                ("added", [{"session_id": session_id, "content": c.content, "tags": c.tags} for c in added]),
                ("removed", [_unit_summary(u) for u in removed]),
                ("unchanged", [_unit_summary(u) for u in unchanged]),
            ):
                diff[name] += items[: max(0, DIFF_LIMIT - len(diff[name]))]
            await jobs_repo.set_progress(db, job.id, {"sessions_done": counts["sessions"]})
            if dry_run:
                continue
            await _store(
                db, rt, bank, session_id, events, added, distiller=distiller, job=job, salt=f"/{job.id}"
            )
            # Retired, not superseded: nothing replaces them in a chain (they stay restorable).
            await history_repo.transition(
                db,
                bank_id,
                [(u.id, u.status, "deleted") for u in removed],
                action="redistilled",
                actor=f"distiller:{distiller.version}",
                details={u.id: {"job_id": str(job.id)} for u in removed},
            )
            ids = [u.id for u in removed]
            await webhooks.memories_forgotten(db, bank_id, ids, status="deleted", action="redistilled")
            if added:
                resolve_job, created = await schedule_resolve(db, bank_id)
                if created:
                    resolve_jobs.append(resolve_job)
    await rt.sender.send(resolve_jobs)
    result: dict[str, Any] = {
        **diff,
        "counts": dict(counts),
        "dry_run": dry_run,
        "distiller": distiller.version,
    }
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
