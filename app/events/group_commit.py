"""Group commit: the appends an API process receives at once share one transaction and one
multi-row INSERT.

A request hands its prepared events to `AppendGroups.append` and waits. One task per process takes
what is waiting (a group: every waiting request, up to `max_events` events, after at most
`wait_seconds` more for company), and in one unit of work appends it all (one statement; the
locked path for a session another process moved meanwhile), schedules the distillations it
started, commits, pushes every session's turns onto working memory in one Redis round trip and
sends the jobs; only then does each request get its outcome. So a 202 still follows the commit
holding its events, and while one group commits the next one gathers. Per session, seqs follow the
order the requests arrived in; a repeated external id is appended once, for the first request.

If a group's transaction fails, each of its requests is appended again alone: one bad request fails
alone, the others commit. The seam with the request: `app.events.service.append_grouped`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.commit_hooks import after_commit, on_commit_of
from app.db.models import Job
from app.db.repositories import events as repo
from app.db.repositories.event_groups import SessionAppended, SessionKey, append_group
from app.errors import Invalid, NotFound
from app.events.working_memory import WorkingMemory
from app.jobs.schedule import schedule_distills
from app.jobs.unit_of_work import UnitOfWork
from app.metrics import APPEND_GROUP_REQUESTS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """What one request's append did: `kept` indexes its events appended (a repeated external id's
    are not), with seqs `first_seq`..`last_seq`; `job` is the distillation they started, if any."""

    kept: list[int]
    first_seq: int
    last_seq: int
    distilled_seq: int
    job: Job | None


def _new_future() -> asyncio.Future[Outcome]:
    return asyncio.get_running_loop().create_future()


@dataclass(eq=False)
class Submission:
    bank_id: str
    session_id: str
    events: list[repo.NewEvent]
    distill_every: int  # the bank's distill_every_n_turns
    author: repo.Author  # the appending agent (shared memory), the same for the request's events
    buffer: WorkingMemory
    turns: list[dict[str, Any]]  # the events as working memory holds them, seqs filled in at commit
    future: asyncio.Future[Outcome] = field(default_factory=_new_future)

    @property
    def key(self) -> SessionKey:
        return (self.bank_id, self.session_id)


class AppendGroups:
    """One per API process (made by the lifespan): appends committed in groups."""

    def __init__(self, work: UnitOfWork, *, max_events: int = 5000, wait_seconds: float = 0.0) -> None:
        self._work = work
        self._max_events = max_events
        self._wait = wait_seconds
        self._waiting: list[Submission] = []
        self._runner: asyncio.Task[None] | None = None

    async def append(self, submission: Submission) -> Outcome:
        """Append in the next group; the outcome once that group has committed (or the error of this
        request's own append, when the group's failed and it was tried alone)."""
        self._waiting.append(submission)
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(self._run(), name="append-groups")
        # Shielded: a client that goes away does not cancel its append, already part of a group.
        return await asyncio.shield(submission.future)

    async def aclose(self) -> None:
        """Let the waiting appends commit (the lifespan's end)."""
        if self._runner is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner

    async def _run(self) -> None:
        while self._waiting:
            if self._wait:
                await asyncio.sleep(self._wait)
            group: list[Submission] = []
            events = 0
            while self._waiting and (not group or events + len(self._waiting[0].events) <= self._max_events):
                events += len(self._waiting[0].events)
                group.append(self._waiting.pop(0))
            APPEND_GROUP_REQUESTS.observe(len(group))
            try:
                await self._commit(group)
            except Exception as exc:
                if len(group) == 1:
                    _settle(group[0], exc)
                    continue
                log.warning("a group of %d appends failed (%s); each is appended alone", len(group), exc)
                for submission in group:
                    try:
                        await self._commit([submission])
                    except Exception as alone:
                        _settle(submission, alone)

    async def _commit(self, group: list[Submission]) -> None:
        """Append, commit, push, send; then settle each request. Raises only what came before the
        commit was asked for (then nothing was stored): a failed COMMIT, which may have stored the
        events all the same, is each request's error, never a reason to append them again."""
        outcomes: list[Outcome] = []
        stage = "append"

        def committed() -> None:
            nonlocal stage
            stage = "committed"

        try:
            async with self._work.session() as db:  # commits at its end, then pushes and sends
                outcomes = await _append(db, group)

                async def pushed() -> None:
                    await _push(group, outcomes)

                after_commit(db, pushed)
                on_commit_of(db, committed)
                stage = "commit"
        except Exception as exc:
            if stage == "append":
                raise
            if stage == "commit":
                for submission in group:
                    _settle(submission, exc)
                return
            log.exception("after the commit of a group of %d appends", len(group))  # jobs: the sweep
        for submission, outcome in zip(group, outcomes, strict=True):
            _settle(submission, outcome)


def _settle(submission: Submission, result: Outcome | BaseException) -> None:
    if submission.future.done():
        return
    if isinstance(result, BaseException):
        submission.future.set_exception(_as_request_error(submission, result))
    else:
        submission.future.set_result(result)


def _as_request_error(submission: Submission, exc: BaseException) -> BaseException:
    if isinstance(exc, IntegrityError):
        # Seqs and external ids are kept unique under the session row's lock, so this is the bank's
        # foreign key: the bank was deleted while we appended.
        return NotFound(f"Bank {submission.bank_id!r} not found.")
    if isinstance(exc, DataError):
        return Invalid(f"The events could not be stored: {exc.orig}")
    return exc


async def _append(db: AsyncSession, group: list[Submission]) -> list[Outcome]:
    """The group's events in one statement (and the locked path for the sessions it could not
    advance), then a distillation per session that some request's events started."""
    rows: list[tuple[SessionKey, repo.NewEvent, repo.Author]] = []
    owner: list[tuple[int, int]] = []  # per row: (submission, index of the event in it)
    seen: dict[SessionKey, set[str]] = defaultdict(set)
    for s, submission in enumerate(group):
        ids = seen[submission.key]
        for i, event in enumerate(submission.events):
            if event.external_id is not None:
                if event.external_id in ids:
                    continue  # an earlier request of the group has it: a duplicate of that one's
                ids.add(event.external_id)
            rows.append((submission.key, event, submission.author))
            owner.append((s, i))
    appended = await append_group(db, rows)
    for key in sorted({k for k, _, _ in rows} - appended.keys()):  # moved by another process meanwhile
        kept: list[int] = []
        for s in dict.fromkeys(owner[r][0] for r, row in enumerate(rows) if row[0] == key):
            mine = [r for r, row in enumerate(rows) if row[0] == key and owner[r][0] == s]
            locked = await repo.append_locked(db, *key, [rows[r][1] for r in mine], group[s].author)
            kept += [mine[i] for i in locked.kept]  # request after request: their seqs follow on
        appended[key] = SessionAppended(locked.last_seq, locked.distilled_seq, kept)
    seq_of = {  # the group's rows appended, each with its seq
        r: state.last_seq - len(state.kept) + 1 + n
        for state in appended.values()
        for n, r in enumerate(state.kept)
    }
    kept_by: dict[int, list[int]] = defaultdict(list)
    for r in sorted(seq_of):
        kept_by[owner[r][0]].append(r)
    spans = []  # per request: its rows appended, their first and last seqs, whether they start a distillation
    for s, submission in enumerate(group):
        mine, state = kept_by.get(s, []), appended[submission.key]
        first, last = (seq_of[mine[0]], seq_of[mine[-1]]) if mine else (state.last_seq + 1, state.last_seq)
        spans.append(
            (mine, first, last, bool(mine) and last - state.distilled_seq >= submission.distill_every)
        )
    started = sorted({submission.key for submission, span in zip(group, spans, strict=True) if span[3]})
    jobs = await schedule_distills(db, started) if started else {}
    outcomes = []
    for submission, (mine, first, last, starts) in zip(group, spans, strict=True):
        job = jobs[submission.key] if starts else None
        outcomes.append(
            Outcome([owner[r][1] for r in mine], first, last, appended[submission.key].distilled_seq, job)
        )
    return outcomes


async def _push(group: list[Submission], outcomes: list[Outcome]) -> None:
    """Every session's new turns onto working memory: one pipeline per buffer (one in a process)."""
    by_buffer: dict[int, tuple[WorkingMemory, list[tuple[str, str, list[dict[str, Any]]]]]] = {}
    for submission, outcome in zip(group, outcomes, strict=True):
        turns = [{**submission.turns[i], "seq": outcome.first_seq + n} for n, i in enumerate(outcome.kept)]
        if turns:
            entry = by_buffer.setdefault(id(submission.buffer), (submission.buffer, []))
            entry[1].append((submission.bank_id, submission.session_id, turns))
    for buffer, pushes in by_buffer.values():
        await buffer.push_many(pushes)
