"""LoCoMo retrieval evaluation, over the public HTTP API only (`hindsight eval locomo`).

The protocol is the one of `data/locomo/README.md`: every turn of a conversation becomes an event of
its session (`external_id` = the turn's `dia_id`), the service distils them, and each question of
categories 1-4 is asked with `top_k = k`; its evidence recall@k is the share of its evidence turns
found among the source events of the returned units. `--baseline dense` measures plain RAG instead:
each raw turn written as one unit, retrieved by the semantic channel alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import os
import platform
import re
import shlex
import sys
import time
import uuid
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import httpx

logger = logging.getLogger("hindsight.eval.locomo")

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SESSION_KEY = re.compile(r"^session_(\d+)$")
DATE_TIME_KEY = re.compile(r"^session_(\d+)_date_time$")
DIA_ID = re.compile(r"^D(\d+):(\d+)$")
EVIDENCE_SEPARATORS = re.compile(r"[;,\s]+")
SESSION_STAMP_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
TURN_SPACING = timedelta(seconds=5)
MAX_EVENTS_PER_APPEND = 1000
MAX_UNIT_CHARS = 4000
PAGE_LIMIT = 500
POLL_SECONDS = 0.5
RETRY_STATUSES = frozenset({429, 502, 503, 504})  # 429: the per-key rate limit; Retry-After honoured

PRODUCT_BANK_CONFIG: dict[str, Any] = {
    "distill_every_n_turns": 1000,
    "idle_distill_seconds": 86400,
    "timezone": "UTC",
}
DENSE_BANK_CONFIG: dict[str, Any] = {
    "distill_every_n_turns": 1000,
    "idle_distill_seconds": 86400,
    "dedupe_threshold": 1.0,
}
# Plain RAG through the query API: the semantic channel alone, no time filter inferred from the
# question's words ("recently" would keep only the last week), and `now` far ahead so that every unit's
# age decay sits at its floor (the same factor for all): the ranking is then cosine alone.
DENSE_QUERY: dict[str, Any] = {
    "weights": {"semantic": 1, "keyword": 0, "entity": 0, "temporal": 0, "tag": 0, "recency": 0},
    "time_range": {"from": "1900-01-01T00:00:00+00:00", "to": "2200-01-01T00:00:00+00:00"},
    "now": "2200-01-01T00:00:00+00:00",
}

T = TypeVar("T")


class EvalError(Exception):
    """The evaluation cannot go on: bad data, a refused key, a failed job, a timeout."""


# --------------------------------------------------------------------------- the data set


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    occurred_at: datetime


@dataclass(frozen=True)
class Session:
    session_id: str
    number: int
    stamp: str  # the data set's own date-time text, "1:56 pm on 8 May, 2023"
    started_at: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    index: int
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    notes: tuple[str, ...] = ()

    @property
    def turns(self) -> list[Turn]:
        return [turn for session in self.sessions for turn in session.turns]

    @property
    def now(self) -> datetime:
        """The end of the conversation (its last turn): the `now` its questions are asked at."""
        return max(turn.occurred_at for turn in self.turns)


def parse_session_datetime(text: str) -> datetime:
    """A LoCoMo session stamp ("1:56 pm on 8 May, 2023") as an aware UTC datetime."""
    cleaned = " ".join(text.split())
    try:
        return datetime.strptime(cleaned, SESSION_STAMP_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        pass
    import dateparser

    parsed = dateparser.parse(cleaned, settings={"TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True})
    if parsed is None:
        raise EvalError(f"cannot read the session date-time {text!r}")
    result: datetime = parsed.astimezone(UTC)
    return result


def normalise_dia_id(raw: str) -> str | None:
    """Normalise a turn id: "D1:3", " d1 : 03 " → "D1:3"; anything else (a bare "D") → None."""
    match = DIA_ID.match(re.sub(r"\s+", "", raw).upper())
    return f"D{int(match[1])}:{int(match[2])}" if match else None


def split_evidence(raw: Iterable[object]) -> tuple[list[str], list[str]]:
    """The evidence list of a question as normalised dia_ids (in order, once each), and the
    entries that are no dia_id at all. Entries may hold several ids ("D10:8; D10:9")."""
    ids: list[str] = []
    malformed: list[str] = []
    for entry in raw:
        for token in EVIDENCE_SEPARATORS.split(str(entry).strip()):
            if not token:
                continue
            dia_id = normalise_dia_id(token)
            if dia_id is None:
                malformed.append(token)
            elif dia_id not in ids:
                ids.append(dia_id)
    return ids, malformed


def normalise_evidence(raw: Iterable[object]) -> list[str]:
    return split_evidence(raw)[0]


def turn_text(turn: Mapping[str, Any]) -> str:
    """The turn's text, with its image caption appended as " (image: …)"."""
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    if caption:
        text = f"{text} (image: {caption})" if text else f"(image: {caption})"
    return text


def _session(number: int, turns: Sequence[Mapping[str, Any]], stamp: str) -> Session:
    started_at = parse_session_datetime(stamp)
    converted: list[Turn] = []
    for turn in turns:
        text = turn_text(turn)
        if not text:
            continue
        raw_id = str(turn["dia_id"])
        converted.append(
            Turn(
                dia_id=normalise_dia_id(raw_id) or raw_id.strip(),
                speaker=str(turn.get("speaker") or "").strip(),
                text=text,
                occurred_at=started_at + TURN_SPACING * len(converted),
            )
        )
    return Session(f"session_{number}", number, " ".join(stamp.split()), started_at, tuple(converted))


def _sessions(sample_id: str, conversation: Mapping[str, Any]) -> tuple[list[Session], list[str]]:
    numbers = sorted(int(m[1]) for key in conversation if (m := SESSION_KEY.match(key)) and conversation[key])
    stamps = {int(m[1]): key for key in conversation if (m := DATE_TIME_KEY.match(key))}
    notes = []
    orphans = sorted(set(stamps) - set(numbers))
    if orphans:
        notes.append(
            f"{sample_id}: {len(orphans)} session date-times without turns ignored"
            f" (session_{orphans[0]} … session_{orphans[-1]})"
        )
    sessions = []
    for number in numbers:
        if number not in stamps:
            raise EvalError(f"{sample_id}: session_{number} has no session_{number}_date_time")
        sessions.append(_session(number, conversation[f"session_{number}"], conversation[stamps[number]]))
    return sessions, notes


def _questions(
    sample_id: str, qa: Sequence[Mapping[str, Any]], known: set[str]
) -> tuple[list[Question], list[str]]:
    questions = []
    notes = []
    for index, item in enumerate(qa):
        category = int(item.get("category", 0))
        if category not in CATEGORIES:
            continue
        ids, malformed = split_evidence(item.get("evidence") or [])
        unknown = [i for i in ids if i not in known]
        evidence = tuple(i for i in ids if i in known)
        where = f"{sample_id} q{index} ({item.get('question')!r})"
        if malformed:
            notes.append(f"{where}: malformed evidence {malformed} dropped")
        if unknown:
            notes.append(f"{where}: evidence {unknown} names no turn of the conversation, dropped")
        if not evidence:
            notes.append(f"{where}: no usable evidence, question skipped")
            continue
        questions.append(Question(index, str(item["question"]), category, evidence))
    return questions, notes


def load_conversation(sample: Mapping[str, Any]) -> Conversation:
    sample_id = str(sample.get("sample_id") or "conversation")
    sessions, notes = _sessions(sample_id, sample["conversation"])
    if not sessions:
        raise EvalError(f"{sample_id}: no session with turns")
    known = {turn.dia_id for session in sessions for turn in session.turns}
    questions, question_notes = _questions(sample_id, sample.get("qa") or [], known)
    return Conversation(sample_id, tuple(sessions), tuple(questions), tuple(notes + question_notes))


def load_dataset(path: Path) -> list[Conversation]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EvalError(f"cannot read {path}: {exc}") from exc
    samples = data if isinstance(data, list) else [data]
    return [load_conversation(sample) for sample in samples]


# --------------------------------------------------------------------------- request bodies


def turn_event(turn: Turn) -> dict[str, Any]:
    return {
        "role": "user",  # two people talk; neither is an assistant
        "content": turn.text,
        "speaker": turn.speaker or None,
        "occurred_at": turn.occurred_at.isoformat(),
        "external_id": turn.dia_id,
    }


def session_batches(session: Session) -> list[list[dict[str, Any]]]:
    events = [turn_event(turn) for turn in session.turns]
    return [events[i : i + MAX_EVENTS_PER_APPEND] for i in range(0, len(events), MAX_EVENTS_PER_APPEND)]


def dense_memory(session: Session, turn: Turn) -> dict[str, Any]:
    """The plain-RAG baseline's unit: one raw turn prefixed with its session's date-time as the data
    set writes it and the speaker (the form the README's reference numbers were measured with)."""
    return {
        "content": f"[{session.stamp}] {turn.speaker}: {turn.text}"[:MAX_UNIT_CHARS],
        "tags": ["episode"],
        "occurred_at": turn.occurred_at.isoformat(),
        "session_id": session.session_id,
        "metadata": {"dia_id": turn.dia_id},
    }


def query_body(question: str, k: int, now: datetime, dense: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "query": question,
        "top_k": k,
        "min_score": 0,
        "now": now.isoformat(),
        "timezone": "UTC",
    }
    if dense:
        body.update(json.loads(json.dumps(DENSE_QUERY)))
    return body


def query_settings(dense: bool) -> dict[str, Any]:
    """The fixed part of every query body, for the report (`query` and `top_k` vary)."""
    body = query_body("<question>", 1, datetime(2000, 1, 1, tzinfo=UTC), dense)
    fixed = {key: value for key, value in body.items() if key not in ("query", "top_k")}
    return fixed if dense else {**fixed, "now": "the time of the conversation's last turn"}


def bank_id_for(sample_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._:-]+", "-", sample_id).strip("-")[:100] or "conversation"
    return f"locomo-{slug}-{uuid.uuid4().hex[:8]}"


# --------------------------------------------------------------------------- metrics


def unit_dia_ids(unit: Mapping[str, Any], event_map: Mapping[int, str]) -> list[str]:
    """The turns a returned unit stands for: its source events, or the baseline's `metadata.dia_id`."""
    source = unit.get("source") or {}
    ids = [event_map[e] for e in source.get("event_ids") or [] if e in event_map]
    tagged = (unit.get("metadata") or {}).get("dia_id")
    if isinstance(tagged, str):
        ids.append(normalise_dia_id(tagged) or tagged)
    return list(dict.fromkeys(ids))


def retrieved_dia_ids(units: Sequence[Mapping[str, Any]], event_map: Mapping[int, str]) -> list[str]:
    return list(dict.fromkeys(d for unit in units for d in unit_dia_ids(unit, event_map)))


def recall(evidence: Sequence[str], retrieved: Iterable[str]) -> float:
    if not evidence:
        raise ValueError("a question without evidence has no recall")
    found = set(retrieved)
    return sum(1 for e in set(evidence) if e in found) / len(set(evidence))


def context_words(units: Sequence[Mapping[str, Any]]) -> int:
    return sum(len(str(unit.get("content") or "").split()) for unit in units)


def percentile(values: Sequence[float], p: float) -> float | None:
    """The p-th percentile with linear interpolation between ranks (numpy's default); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _mean(values: Sequence[float], digits: int = 4) -> float | None:
    return round(sum(values) / len(values), digits) if values else None


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def latency_summary(values_ms: Sequence[float]) -> dict[str, float | None]:
    return {
        "p50": _round(percentile(values_ms, 50)),
        "p95": _round(percentile(values_ms, 95)),
        "mean": _mean(values_ms, 1),
    }


@dataclass(frozen=True)
class QueryOutcome:
    sample_id: str
    question: Question
    k: int
    dia_ids: tuple[str, ...]
    recall: float
    context_words: int
    units: int
    client_ms: float
    server_ms: float | None
    time_filter: str | None = None  # the phrase the server read as a time filter ("recently")


def summarize(outcomes: Sequence[QueryOutcome]) -> dict[str, Any]:
    """Mean recall overall and per category, context size and latency of one k's queries."""
    by_category = {}
    for category, name in CATEGORIES.items():
        group = [o.recall for o in outcomes if o.question.category == category]
        by_category[str(category)] = {"name": name, "questions": len(group), "recall": _mean(group)}
    filtered = [o.recall for o in outcomes if o.time_filter is not None]  # read a time in the question
    return {
        "questions": len(outcomes),
        "recall": _mean([o.recall for o in outcomes]),
        "by_category": by_category,
        "context_words": _mean([o.context_words for o in outcomes], 1),
        "units_returned": _mean([o.units for o in outcomes], 2),
        "with_time_filter": {"questions": len(filtered), "recall": _mean(filtered)},
        "latency_ms": {
            "client": latency_summary([o.client_ms for o in outcomes]),
            "server": latency_summary([o.server_ms for o in outcomes if o.server_ms is not None]),
        },
    }


def aggregate(outcomes: Sequence[QueryOutcome], ks: Sequence[int]) -> dict[str, dict[str, Any]]:
    return {str(k): summarize([o for o in outcomes if o.k == k]) for k in ks}


def question_details(outcomes: Sequence[QueryOutcome]) -> list[dict[str, Any]]:
    """One entry per question with what each k returned, for error analysis."""
    grouped: dict[tuple[str, int], list[QueryOutcome]] = {}
    for outcome in outcomes:
        grouped.setdefault((outcome.sample_id, outcome.question.index), []).append(outcome)
    details = []
    for (sample_id, _), group in grouped.items():
        question = group[0].question
        details.append(
            {
                "sample_id": sample_id,
                "index": question.index,
                "question": question.text,
                "category": question.category,
                "evidence": list(question.evidence),
                "results": {
                    str(o.k): {
                        "recall": round(o.recall, 4),
                        "dia_ids": list(o.dia_ids),
                        "context_words": o.context_words,
                        "client_ms": round(o.client_ms, 1),
                        "server_ms": o.server_ms,
                        "time_filter": o.time_filter,
                    }
                    for o in sorted(group, key=lambda o: o.k)
                },
            }
        )
    return details


# --------------------------------------------------------------------------- the HTTP API


def _problem_detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:500]
    if isinstance(body, dict):
        return str(body.get("detail") or body.get("title") or body)[:500]
    return str(body)[:500]


def raise_for_status(response: httpx.Response, method: str, path: str) -> None:
    status = response.status_code
    if status < 400:
        return
    where = f"{method} {path} answered {status}"
    detail = _problem_detail(response)
    if status == 401:
        raise EvalError(f"{where}: the API key was refused (check --api-key). {detail}")
    if status == 403:
        raise EvalError(f"{where}: the key may not do this (creating banks needs the admin key). {detail}")
    if status == 404:
        raise EvalError(f"{where}: {detail} (check --url; does this server have the endpoint?)")
    raise EvalError(f"{where}: {detail}")


def _dropped(exc: httpx.TransportError) -> bool:
    """The connection broke before an answer came (e.g. a keep-alive connection the server closed)."""
    return isinstance(exc, httpx.ReadError | httpx.WriteError | httpx.RemoteProtocolError)


class Api:
    """The service's public HTTP API: retries a 429/502/503/504 (after its Retry-After, at most 10 s) or
    a refused connection with a short backoff, and turns any other error into an EvalError that says
    what went wrong."""

    def __init__(self, client: httpx.AsyncClient, *, attempts: int = 6, backoff: float = 0.25) -> None:
        self.client = client
        self.attempts = attempts
        self.backoff = backoff

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after and retry_after.isdigit():
            return min(float(retry_after), 10.0)
        return float(min(self.backoff * 2**attempt, 5.0))

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        *,
        idempotent: bool | None = None,
    ) -> tuple[Any, float]:
        """The decoded reply and the client-measured seconds of the request that answered. A
        connection dropped mid-request is retried only when sending twice is harmless (`idempotent`;
        by default GET and DELETE)."""
        resend = method in ("GET", "DELETE") if idempotent is None else idempotent
        for attempt in range(self.attempts):
            last = attempt == self.attempts - 1
            started = time.perf_counter()
            try:
                response = await self.client.request(method, path, json=body, params=params)
            except httpx.TransportError as exc:
                if last or not (isinstance(exc, httpx.ConnectError) or (resend and _dropped(exc))):
                    raise EvalError(
                        f"{method} {path}: no answer from {self.client.base_url}: {exc!r}"
                    ) from exc
                await asyncio.sleep(self._delay(attempt, None))
                continue
            seconds = time.perf_counter() - started
            if response.status_code in RETRY_STATUSES and not last:
                await asyncio.sleep(self._delay(attempt, response.headers.get("retry-after")))
                continue
            raise_for_status(response, method, path)
            return (response.json() if response.content else None), seconds
        raise AssertionError("unreachable")

    async def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return (await self.request("GET", path, params=params))[0]

    async def post(self, path: str, body: Any = None, *, idempotent: bool = False) -> Any:
        return (await self.request("POST", path, body, idempotent=idempotent))[0]

    async def delete(self, path: str) -> None:
        await self.request("DELETE", path)

    async def pages(self, path: str, key: str, params: Mapping[str, Any] | None = None) -> list[Any]:
        """Every item of a cursor-paginated list."""
        items: list[Any] = []
        cursor = None
        while True:
            query = {**(params or {}), "limit": PAGE_LIMIT, **({"cursor": cursor} if cursor else {})}
            page = await self.get(path, query)
            items.extend(page[key])
            cursor = page.get("next_cursor")
            if not cursor:
                return items


def make_client(url: str, api_key: str, concurrency: int) -> httpx.AsyncClient:
    base = url.rstrip("/")
    base = base.removesuffix("/v1")
    return httpx.AsyncClient(
        base_url=base,
        headers={"Authorization": f"Bearer {api_key}"},
        timeout=httpx.Timeout(120.0, connect=10.0),
        limits=httpx.Limits(max_connections=concurrency + 4),
    )


async def run_all(coroutines: Iterable[Coroutine[Any, Any, T]]) -> list[T]:
    """Run together; the first failure cancels the rest and is raised as itself."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(c) for c in coroutines]
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


# --------------------------------------------------------------------------- one conversation


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
    command: str = ""

    @property
    def dense(self) -> bool:
        return self.baseline == "dense"

    @property
    def mode(self) -> str:
        return self.baseline or "product"


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
) -> QueryOutcome:
    body = query_body(question.text, k, conversation.now, dense)
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


async def evaluate_conversation(api: Api, conversation: Conversation, options: Options) -> ConversationRun:
    semaphore = asyncio.Semaphore(options.concurrency)
    deadline = time.monotonic() + options.timeout
    if options.dense:
        prepared = await prepare_dense(api, conversation, semaphore, deadline)
    else:
        prepared = await prepare_product(api, conversation, deadline)
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
        ask(api, prepared, conversation, q, k, options.dense, semaphore)
        for q in conversation.questions
        for k in options.ks
    )
    if not options.keep_banks:
        await api.delete(f"/v1/banks/{prepared.bank_id}")
    return ConversationRun(
        sample_id=conversation.sample_id,
        prepared=prepared,
        sessions=len(conversation.sessions),
        units_by_status={str(k): int(v) for k, v in (stats.get("memories_by_status") or {}).items()},
        outcomes=tuple(outcomes),
    )


# --------------------------------------------------------------------------- the report


def machine_info() -> dict[str, Any]:
    import psutil

    return {
        "cores": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def _conversation_entry(run: ConversationRun, keep_banks: bool) -> dict[str, Any]:
    prepared = run.prepared
    return {
        "sample_id": run.sample_id,
        "bank_id": prepared.bank_id,
        "bank_kept": keep_banks,
        "sessions": run.sessions,
        "items": prepared.items,
        "ingest_seconds": round(prepared.ingest_seconds, 3),
        "distill_wait_seconds": round(prepared.wait_seconds, 3),
        "units_by_status": run.units_by_status,
        "questions": len({o.question.index for o in run.outcomes}),
    }


def build_report(
    options: Options,
    conversations: Sequence[Conversation],
    runs: Sequence[ConversationRun],
    started: datetime,
) -> dict[str, Any]:
    outcomes = [o for run in runs for o in run.outcomes]
    items = sum(run.prepared.items for run in runs)
    ingest_seconds = sum(run.prepared.ingest_seconds for run in runs)
    by_status: dict[str, int] = {}
    for run in runs:
        for status, count in run.units_by_status.items():
            by_status[status] = by_status.get(status, 0) + count
    return {
        "benchmark": "locomo",
        "mode": options.mode,
        "date": started.isoformat(timespec="seconds"),
        "command": options.command,
        "url": options.url,
        "data": str(options.data),
        "machine": machine_info(),
        "ks": list(options.ks),
        "concurrency": options.concurrency,
        "bank_config": DENSE_BANK_CONFIG if options.dense else PRODUCT_BANK_CONFIG,
        "query_settings": query_settings(options.dense),
        "conversations": len(runs),
        "sessions": sum(run.sessions for run in runs),
        "questions": len({(o.sample_id, o.question.index) for o in outcomes}),
        "ingest": {
            "items": items,
            "unit": "units" if options.dense else "events",
            "seconds": round(ingest_seconds, 3),
            "per_second": round(items / ingest_seconds, 1) if ingest_seconds else None,
        },
        "distill_wait_seconds": round(sum(run.prepared.wait_seconds for run in runs), 3),
        "units": {"active": by_status.get("active", 0), "by_status": by_status},
        "results": aggregate(outcomes, options.ks),
        "per_conversation": [_conversation_entry(run, options.keep_banks) for run in runs],
        "data_notes": [note for c in conversations for note in c.notes],
        "question_details": question_details(outcomes),
    }


def _cell(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def format_results_table(report: Mapping[str, Any]) -> list[str]:
    categories = "".join(f"{name:>13}" for name in CATEGORIES.values())
    lines = [f"{'k':>4}{'recall':>9}{categories}{'ctx words':>11}{'p50 ms':>9}{'p95 ms':>9}{'srv p50':>9}"]
    for k, row in report["results"].items():
        cats = "".join(f"{_cell(c['recall']):>7} ({c['questions']:>3})" for c in row["by_category"].values())
        client, server = row["latency_ms"]["client"], row["latency_ms"]["server"]
        lines.append(
            f"{k:>4}{_cell(row['recall']):>9}{cats}{_cell(row['context_words'], 1):>11}"
            f"{_cell(client['p50'], 1):>9}{_cell(client['p95'], 1):>9}{_cell(server['p50'], 1):>9}"
        )
    return lines


def _time_filter_line(report: Mapping[str, Any]) -> str:
    rows = report["results"]
    counts = {row["with_time_filter"]["questions"] for row in rows.values()}
    recalls = ", ".join(f"@{k} {_cell(row['with_time_filter']['recall'])}" for k, row in rows.items())
    return (
        f"questions the server read a time filter in: {'/'.join(map(str, sorted(counts)))} (recall {recalls})"
    )


def format_report(report: Mapping[str, Any]) -> str:
    ingest = report["ingest"]
    lines = [
        f"LoCoMo retrieval ({report['mode']}): {report['conversations']} conversations, "
        f"{report['sessions']} sessions, {report['questions']} questions (categories 1-4)",
        *format_results_table(report),
        f"ingest: {ingest['items']} {ingest['unit']} in {ingest['seconds']:.1f} s "
        f"({_cell(ingest['per_second'], 1)}/s); distill wait {report['distill_wait_seconds']:.1f} s; "
        f"units {report['units']['by_status']}",
        _time_filter_line(report),
    ]
    if report["data_notes"]:
        lines.append(f"data notes ({len(report['data_notes'])}):")
        lines.extend(f"  - {note}" for note in report["data_notes"])
    return "\n".join(lines)


def _metric_rows(report: Mapping[str, Any], k: str) -> dict[str, tuple[Any, int]]:
    """Name → (value, decimals) of one k's row, for the comparison."""
    row = report["results"].get(k)
    if row is None:
        return {}
    rows: dict[str, tuple[Any, int]] = {"recall": (row["recall"], 3)}
    rows.update({f"  {c['name']}": (c["recall"], 3) for c in row["by_category"].values()})
    rows["context words"] = (row["context_words"], 1)
    rows["client p50 ms"] = (row["latency_ms"]["client"]["p50"], 1)
    rows["client p95 ms"] = (row["latency_ms"]["client"]["p95"], 1)
    rows["server p50 ms"] = (row["latency_ms"]["server"]["p50"], 1)
    return rows


def _ratio(a: Any, b: Any) -> float | None:
    numbers = isinstance(a, int | float) and isinstance(b, int | float)
    return a / b if numbers and b else None


def format_comparison(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """Side by side per k, then recall@10 of A over B."""
    label_a, label_b = f"A: {a['mode']}", f"B: {b['mode']}"
    lines = [f"{'':<22}{label_a:>14}{label_b:>14}{'A/B':>8}"]
    for k in dict.fromkeys([*a["results"], *b["results"]]):
        lines.append(f"@{k}")
        rows_a, rows_b = _metric_rows(a, k), _metric_rows(b, k)
        for name in dict.fromkeys([*rows_a, *rows_b]):
            (va, digits), (vb, _) = rows_a.get(name, (None, 3)), rows_b.get(name, (None, 3))
            lines.append(
                f"  {name:<20}{_cell(va, digits):>14}{_cell(vb, digits):>14}{_cell(_ratio(va, vb), 2):>8}"
            )
    recall_a = (a["results"].get("10") or {}).get("recall")
    recall_b = (b["results"].get("10") or {}).get("recall")
    if recall_a is not None and recall_b:
        lines.append(f"recall@10 ratio A/B = {recall_a / recall_b:.3f} ({recall_a:.3f} / {recall_b:.3f})")
    else:
        lines.append("recall@10 ratio A/B: not available (both reports need k=10)")
    return "\n".join(lines)


# --------------------------------------------------------------------------- entry points


async def run_eval(options: Options, client: httpx.AsyncClient | None = None) -> dict[str, Any]:
    """Evaluate every conversation of the file (one fresh bank each) and build the report.
    `client` may be injected (its base URL and auth are used as they are)."""
    conversations = load_dataset(options.data)[: options.limit_conversations]
    started = datetime.now(UTC)
    async with contextlib.AsyncExitStack() as stack:
        if client is None:
            client = await stack.enter_async_context(
                make_client(options.url, options.api_key, options.concurrency)
            )
        api = Api(client)
        runs = [await evaluate_conversation(api, c, options) for c in conversations]
    return build_report(options, conversations, runs, started)


def parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a comma list of integers: {text!r}") from exc
    if not ks or not all(1 <= k <= 100 for k in ks):
        raise argparse.ArgumentTypeError("each k must be within 1..100")
    return ks


def redacted_command(argv: Sequence[str]) -> str:
    """The command line as typed, with the API key's value hidden."""
    words = list(argv)
    for i, word in enumerate(words):
        if word == "--api-key" and i + 1 < len(words):
            words[i + 1] = "***"
        elif word.startswith("--api-key="):
            words[i] = "--api-key=***"
    return shlex.join(["hindsight", *words])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="the service's base URL, e.g. http://localhost:8000")
    parser.add_argument("--api-key", help="the admin key (one bank is created per conversation)")
    parser.add_argument("--data", type=Path, help="a file in the public locomo10.json format")
    parser.add_argument("--k", dest="ks", type=parse_ks, default=(5, 10, 20), help="e.g. 5,10,20")
    parser.add_argument("--out", type=Path, help="write the JSON report here")
    parser.add_argument("--baseline", choices=["dense"], help="plain RAG: raw turns, semantic channel only")
    parser.add_argument("--limit-conversations", type=int, metavar="N")
    parser.add_argument("--concurrency", type=int, default=4, help="queries in flight (default 4)")
    parser.add_argument(
        "--timeout", type=float, default=3600.0, help="seconds to wait for one conversation's distillation"
    )
    parser.add_argument("--keep-banks", action="store_true", help="keep the banks (default: delete them)")
    parser.add_argument(
        "--compare", nargs=2, type=Path, metavar=("A.json", "B.json"), help="compare two reports and exit"
    )


def _read_report(path: Path) -> dict[str, Any]:
    try:
        report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EvalError(f"cannot read the report {path}: {exc}") from exc
    return report


def _options(args: argparse.Namespace) -> Options:
    missing = [
        flag
        for flag, value in (("--url", args.url), ("--api-key", args.api_key), ("--data", args.data))
        if not value
    ]
    if missing:
        raise EvalError(f"missing {', '.join(missing)} (or use --compare A.json B.json)")
    if args.concurrency < 1:
        raise EvalError("--concurrency must be at least 1")
    return Options(
        url=args.url,
        api_key=args.api_key,
        data=args.data,
        ks=args.ks,
        out=args.out,
        baseline=args.baseline,
        limit_conversations=args.limit_conversations,
        concurrency=args.concurrency,
        timeout=args.timeout,
        keep_banks=args.keep_banks,
        command=redacted_command(sys.argv[1:]),
    )


def run_cli(args: argparse.Namespace) -> int:
    """`hindsight eval locomo`: print the table, write `--out`; or `--compare A.json B.json`."""
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request is noise here
    try:
        if args.compare:
            print(format_comparison(_read_report(args.compare[0]), _read_report(args.compare[1])))
            return 0
        options = _options(args)
        report = asyncio.run(run_eval(options))
    except EvalError as exc:
        print(f"hindsight eval locomo: {exc}", file=sys.stderr)
        return 1
    print(format_report(report))
    if options.out:
        options.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"report written to {options.out}")
    return 0
