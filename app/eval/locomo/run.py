"""One conversation: a fresh bank, the turns appended and distilled (or, for the dense baseline, each
turn written as a unit), every question asked at every k."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.eval.locomo.api import Api, run_all
from app.eval.locomo.bodies import (
    DENSE_BANK_CONFIG,
    PRODUCT_BANK_CONFIG,
    bank_id_for,
    dense_memory,
    query_body,
    session_batches,
)
from app.eval.locomo.dataset import Conversation, Question, Session, Turn
from app.eval.locomo.errors import EvalError
from app.eval.locomo.metrics import QueryOutcome, context_words, recall, retrieved_dia_ids

logger = logging.getLogger("hindsight.eval.locomo")

POLL_SECONDS = 0.5


@dataclass(frozen=True)
class Options:
    url: str
    api_key: str
    data: Path
    ks: tuple[int, ...] = (5, 10, 20)
    out: Path | None = None
    baseline: str | None = None
    limit_conversations: int | None = None
    concurrency: int = 4
    timeout: float = 3600.0
    keep_banks: bool = False
    # Run one full maintenance cycle (expire, decay, promote, merge) on each bank before the questions,
    # with the clock this many days after the distillation: does forgetting keep what matters?
    maintain_after_days: float | None = None
    min_similarity: float | None = None  # the relevance floor asked for; None: the bank's default
    defaults: bool = False  # send the question and k alone: the bank's default query settings
    # A report of an earlier run with --keep-banks: ask its banks again instead of distilling anew.
    reuse_banks: Path | None = None
    command: str = ""

    @property
    def dense(self) -> bool:
        return self.baseline == "dense"

    @property
    def mode(self) -> str:
        return self.baseline or ("product-defaults" if self.defaults else "product")


@dataclass
class Prepared:
    """A bank that holds a conversation, settled and ready to query."""

    bank_id: str
    items: int = 0  # events appended (product) or units written (dense)
    ingest_seconds: float = 0.0
    wait_seconds: float = 0.0
    event_map: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ConversationRun:
    sample_id: str
    prepared: Prepared
    sessions: int
    units_by_status: dict[str, int]
    outcomes: tuple[QueryOutcome, ...]


def _check_deadline(deadline: float, waiting_for: str) -> None:
    if time.monotonic() > deadline:
        raise EvalError(f"timed out waiting for {waiting_for} (raise --timeout?)")


async def create_bank(api: Api, sample_id: str, dense: bool) -> str:
    bank_id = bank_id_for(sample_id)
    config = DENSE_BANK_CONFIG if dense else PRODUCT_BANK_CONFIG
    await api.post("/v1/banks", {"bank_id": bank_id, "name": f"LoCoMo {sample_id}", "config": config})
    return bank_id


async def append_session(api: Api, bank_id: str, session: Session) -> int:
    appended = 0
    for batch in session_batches(session):
        path = f"/v1/banks/{bank_id}/sessions/{session.session_id}/events"
        reply = await api.post(path, {"events": batch}, idempotent=True)  # external ids dedupe a resend
        appended += int(reply["appended"])
    return appended


async def wait_for_jobs(api: Api, jobs: Mapping[str, str], deadline: float) -> None:
    """Wait until every job (id → session) succeeded; a failed one stops the evaluation."""
    remaining = dict(jobs)
    while remaining:
        for job_id, session_id in list(remaining.items()):
            job = await api.get(f"/v1/jobs/{job_id}")
            if job["status"] == "failed":
                raise EvalError(f"distillation job {job_id} of {session_id} failed: {job.get('error')}")
            if job["status"] == "succeeded":
                del remaining[job_id]
        if remaining:
            _check_deadline(deadline, f"{len(remaining)} distillation job(s)")
            await asyncio.sleep(POLL_SECONDS)


async def maintenance_cycle(api: Api, bank_id: str, after_days: float, deadline: float) -> None:
    """The four scheduled tasks once on the bank, in beat's order, the clock `after_days` from now."""
    now = (datetime.now(UTC) + timedelta(days=after_days)).isoformat()
    for task in ("expire", "decay", "promote", "merge"):
        reply = await api.post(f"/v1/admin/maintenance/{task}", {"bank_id": bank_id, "now": now})
        await wait_for_jobs(api, {reply["job_id"]: f"maintenance.{task}"}, deadline)


async def lagging_sessions(api: Api, bank_id: str) -> list[str]:
    sessions = await api.pages(f"/v1/banks/{bank_id}/sessions", "sessions")
    return [s["session_id"] for s in sessions if s["distilled_seq"] < s["last_seq"]]


async def wait_no_pending(api: Api, bank_id: str, deadline: float) -> None:
    while (await api.get(f"/v1/banks/{bank_id}/memories", {"status": "pending", "limit": 1}))["memories"]:
        _check_deadline(deadline, "pending units to be resolved")
        await asyncio.sleep(POLL_SECONDS)


async def distill_and_settle(api: Api, bank_id: str, deadline: float) -> None:
    """Distil every session now, then wait until no event is undistilled and no unit pending."""
    while lagging := await lagging_sessions(api, bank_id):
        jobs = {}
        for session_id in lagging:
            reply = await api.post(f"/v1/banks/{bank_id}/sessions/{session_id}/distill", idempotent=True)
            jobs[str(reply["job_id"])] = session_id
        await wait_for_jobs(api, jobs, deadline)
        _check_deadline(deadline, "every session to be distilled")
    await wait_no_pending(api, bank_id, deadline)


async def fetch_event_map(api: Api, bank_id: str, sessions: Iterable[Session]) -> dict[int, str]:
    """Event id → dia_id (the `external_id` the harness gave each turn)."""
    mapping: dict[int, str] = {}
    for session in sessions:
        events = await api.pages(f"/v1/banks/{bank_id}/sessions/{session.session_id}/events", "events")
        mapping.update({int(e["id"]): str(e["external_id"]) for e in events if e.get("external_id")})
    return mapping


async def prepare_product(api: Api, conversation: Conversation, deadline: float) -> Prepared:
    prepared = Prepared(await create_bank(api, conversation.sample_id, dense=False))
    started = time.perf_counter()
    for session in conversation.sessions:
        prepared.items += await append_session(api, prepared.bank_id, session)
    prepared.ingest_seconds = time.perf_counter() - started
    started = time.perf_counter()
    await distill_and_settle(api, prepared.bank_id, deadline)
    prepared.wait_seconds = time.perf_counter() - started
    prepared.event_map = await fetch_event_map(api, prepared.bank_id, conversation.sessions)
    return prepared


async def prepare_dense(
    api: Api, conversation: Conversation, semaphore: asyncio.Semaphore, deadline: float
) -> Prepared:
    prepared = Prepared(await create_bank(api, conversation.sample_id, dense=True))
    path = f"/v1/banks/{prepared.bank_id}/memories"

    async def write(session: Session, turn: Turn) -> None:
        async with semaphore:
            await api.post(path, dense_memory(session, turn))

    started = time.perf_counter()
    await run_all(write(s, t) for s in conversation.sessions for t in s.turns)
    prepared.items = len(conversation.turns)
    prepared.ingest_seconds = time.perf_counter() - started
    started = time.perf_counter()
    await wait_no_pending(api, prepared.bank_id, deadline)
    prepared.wait_seconds = time.perf_counter() - started
    return prepared


def _time_filter_phrase(time_filter: Any) -> str | None:
    if not isinstance(time_filter, dict):
        return None
    return str(time_filter.get("phrase") or time_filter.get("source") or "time filter")


async def ask(
    api: Api,
    prepared: Prepared,
    conversation: Conversation,
    question: Question,
    k: int,
    dense: bool,
    semaphore: asyncio.Semaphore,
    options: Options,
) -> QueryOutcome:
    body = query_body(question.text, k, conversation.now, dense, options.min_similarity, options.defaults)
    async with semaphore:
        try:
            path = f"/v1/banks/{prepared.bank_id}/query"
            reply, seconds = await api.request("POST", path, body, idempotent=True)
        except EvalError as exc:
            raise EvalError(
                f"{exc}\n  (question {question.text!r} of {conversation.sample_id}, k={k})"
            ) from exc
    units = list(reply.get("memories") or [])[:k]
    dia_ids = retrieved_dia_ids(units, prepared.event_map)
    took = reply.get("took_ms")
    return QueryOutcome(
        sample_id=conversation.sample_id,
        question=question,
        k=k,
        dia_ids=tuple(dia_ids),
        recall=recall(question.evidence, dia_ids),
        context_words=context_words(units),
        units=len(units),
        client_ms=seconds * 1000,
        server_ms=float(took) if isinstance(took, int | float) else None,
        time_filter=_time_filter_phrase(reply.get("time_filter")),
    )


async def reused(api: Api, conversation: Conversation, bank_id: str | None) -> Prepared:
    """A bank kept by an earlier run, as it is (no ingest, no distillation)."""
    if bank_id is None:
        raise EvalError(f"the report to reuse has no bank of {conversation.sample_id}")
    prepared = Prepared(bank_id)
    prepared.event_map = await fetch_event_map(api, bank_id, conversation.sessions)
    prepared.items = len(prepared.event_map)
    return prepared


async def evaluate_conversation(
    api: Api, conversation: Conversation, options: Options, reuse: Mapping[str, str] | None = None
) -> ConversationRun:
    """`reuse`: sample id → the kept bank to ask (and keep) instead of a fresh one."""
    semaphore = asyncio.Semaphore(options.concurrency)
    deadline = time.monotonic() + options.timeout
    if reuse is not None:
        prepared = await reused(api, conversation, reuse.get(conversation.sample_id))
    elif options.dense:
        prepared = await prepare_dense(api, conversation, semaphore, deadline)
    else:
        prepared = await prepare_product(api, conversation, deadline)
    if options.maintain_after_days is not None:
        await maintenance_cycle(api, prepared.bank_id, options.maintain_after_days, deadline)
    stats = await api.get(f"/v1/banks/{prepared.bank_id}/stats")
    logger.info(
        "%s: bank %s holds %d items (ingest %.1fs, settle %.1fs); asking %d questions",
        conversation.sample_id,
        prepared.bank_id,
        prepared.items,
        prepared.ingest_seconds,
        prepared.wait_seconds,
        len(conversation.questions),
    )
    outcomes = await run_all(
        ask(api, prepared, conversation, q, k, options.dense, semaphore, options)
        for q in conversation.questions
        for k in options.ks
    )
    if not options.keep_banks and reuse is None:
        await api.delete(f"/v1/banks/{prepared.bank_id}")
    return ConversationRun(
        sample_id=conversation.sample_id,
        prepared=prepared,
        sessions=len(conversation.sessions),
        units_by_status={str(k): int(v) for k, v in (stats.get("memories_by_status") or {}).items()},
        outcomes=tuple(outcomes),
    )
