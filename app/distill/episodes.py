"""The task stage of a distillation: when a close, a reflect or the idle sweep ended a task of the session
(`sessions.metadata.task_ends`), the stretch of turns since the previous end is read again as a whole
and the distiller's task episode, if it holds one, becomes an `episode.task` unit (see
app/distill/task_episode.py). Idempotent like every unit: the same stretch gives the same identity; a replay
(`redistill`) rebuilds the episodes from the same stretches."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.banks.config import ConfiguredBank
from app.banks.service import configured_bank
from app.db.models import ChatSession, Event, Job
from app.db.repositories import events as events_repo
from app.db.repositories import task_ends as task_ends_repo
from app.db.repositories.locks import xact_lock
from app.distill import budgeted, store
from app.distill.task_episode import domain_tags, to_candidate
from app.distill.taxonomy import bank_taxonomy
from app.distill.types import Candidate, DistillContext, Distiller
from app.jobs import service as jobs
from app.jobs.schedule import schedule_resolve
from app.keys import composite_key
from app.redact import redact

TASK_WINDOW = 200  # turns before a task's end that are read for it: a task is the stretch's tail

TagsOf = Callable[[list[int]], Awaitable[list[list[str]]]]


def stretches(ends: Sequence[int], done: int, distilled_seq: int) -> list[tuple[int, int]]:
    """`(after_seq, end)` of each ended task not written yet (ends past `done`, already distilled)."""
    out, start = [], done
    for end in sorted(set(ends)):
        if done < end <= distilled_seq:
            out.append((max(start, end - TASK_WINDOW), end))
            start = end
    return out


async def task_candidates(
    distiller: Distiller,
    bank: ConfiguredBank,
    session_id: str,
    events: list[Event],
    spans: list[tuple[int, int]],
    tags_of: TagsOf,
    usage: Counter[str],
) -> list[Candidate]:
    """One `episode.task` candidate per stretch that holds a task with enough steps."""
    config = bank.config
    found = []
    for start, end in spans:
        turns = store.to_turns([e for e in events if start < e.seq <= end])
        if config.redact:
            turns = [replace(t, content=redact(t.content)) for t in turns]
        if not turns:
            continue
        context = DistillContext(
            bank_id=bank.id,
            session_id=session_id,
            turns=turns,
            timezone=bank.timezone,
            taxonomy=bank_taxonomy(config.tags),
        )
        result = await distiller.task(context, config.episode_min_steps)
        usage.update(result.usage)
        if result.episode is None:
            continue
        seqs = [t.seq for t in turns]
        tags = domain_tags(await tags_of(sorted(set(result.episode.source_seqs) & set(seqs))))
        candidate = to_candidate(result.episode, seqs, min_steps=config.episode_min_steps, extra_tags=tags)
        if candidate is None:
            continue
        if config.redact:
            candidate = store.redact_candidate(candidate)
        if candidate.confidence >= config.min_confidence:
            found.append(candidate)
    return found


async def replayed_task_candidates(
    distiller: Distiller,
    bank: ConfiguredBank,
    session: ChatSession,
    events: list[Event],
    candidates: list[Candidate],
    usage: Counter[str],
) -> list[Candidate]:
    """A replay's task episodes: every ended task of the session again, filed under the bank's own tags
    of the replay's other `candidates` (their units are not stored yet)."""
    kept = list(candidates)

    async def tags_of(seqs: list[int]) -> list[list[str]]:
        return [c.tags for c in kept if set(c.source_seqs) & set(seqs)]

    spans = stretches(task_ends_repo.task_ends(dict(session.metadata_)), 0, session.distilled_seq)
    return await task_candidates(distiller, bank, session.session_id, events, spans, tags_of, usage)


@dataclass
class TaskStage:
    units: list[uuid.UUID] = field(default_factory=list)
    usage: Counter[str] = field(default_factory=Counter)
    fallback: dict[str, Any] | None = None  # why the heuristic distiller wrote them (a spent budget)


async def write_task_episodes(
    distill_runtime: store.DistillRuntime, job: Job, bank_id: str, session_id: str
) -> TaskStage:
    """The task episodes of the session's ended, not yet written tasks, by the configured distiller
    (`budgeted.choose`), in one transaction under the session's distillation lock; the session's
    `task_seq` moves with them (a failure moves nothing, so the next distillation of the session tries
    again)."""
    stage = TaskStage()
    async with distill_runtime.sessionmaker() as db, db.begin():
        key = composite_key("distill", bank_id, session_id)
        if not await xact_lock(db, key, store.LOCK_WAIT_SECONDS):
            raise jobs.RetryableError(f"session {session_id!r} is being distilled by another job")
        bank = await configured_bank(db, bank_id)
        session = await events_repo.get_session(db, bank_id, session_id)
        if bank is None or session is None:
            return stage
        meta = dict(session.metadata_)
        spans = stretches(
            task_ends_repo.task_ends(meta), task_ends_repo.task_seq(meta), session.distilled_seq
        )
        if not spans:
            return stage
        distiller, stage.fallback = await budgeted.choose(db, distill_runtime, bank, None)
        events = await events_repo.list_events(
            db, bank_id, session_id, after_seq=spans[0][0], limit=spans[-1][1] - spans[0][0]
        )

        async def tags_of(seqs: list[int]) -> list[list[str]]:
            return await task_ends_repo.tags_of_turns(db, bank_id, session_id, seqs)

        candidates = await task_candidates(distiller, bank, session_id, events, spans, tags_of, stage.usage)
        stage.units = await store.store_units(
            db, distill_runtime, bank, session_id, events, candidates, distiller=distiller, job=job
        )
        await task_ends_repo.link_task_episodes(db, bank_id, session_id)
        await task_ends_repo.set_task_seq(db, bank_id, session_id, spans[-1][1])
        if stage.units:
            await schedule_resolve(db, bank_id)
    return stage
