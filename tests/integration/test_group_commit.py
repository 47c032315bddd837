"""Group commit (app/events/group_commit.py): concurrent appends share a transaction and one INSERT,
and each still gets exactly what it would alone: its own seqs, in arrival order and without gaps, its
external ids appended once, its own error when it is the bad one, a 202 only after its commit."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from prometheus_client import REGISTRY
from sqlalchemy import text

from app.db.repositories.events import Author, NewEvent
from app.errors import NotFound
from app.events.group_commit import AppendGroups, Outcome, Submission
from app.keys import composite_key
from tests.conftest import ADMIN_KEY, make_client, wait_for


def groups_so_far() -> tuple[float, float]:
    """(groups committed, requests in them) by this process, from the group-size histogram."""
    count = REGISTRY.get_sample_value("hindsight_append_group_requests_count") or 0.0
    total = REGISTRY.get_sample_value("hindsight_append_group_requests_sum") or 0.0
    return count, total


def event(content: str, external_id: str | None = None) -> NewEvent:
    return NewEvent("user", content, None, datetime.now(UTC), external_id, {})


def submission(app: Any, bank_id: str, session_id: str, *events: NewEvent, every: int = 1000) -> Submission:
    turns = [{"role": e.role, "content": e.content} for e in events]
    return Submission(bank_id, session_id, list(events), every, Author(), app.state.working_memory, turns)


async def stored(app: Any, bank_id: str, session_id: str) -> list[tuple[int, str, str | None]]:
    async with app.state.engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT seq, content, external_id FROM events"
                " WHERE bank_id = :b AND session_id = :s ORDER BY seq"
            ),
            {"b": bank_id, "s": session_id},
        )
        return [(r.seq, r.content, r.external_id) for r in rows]


async def test_concurrent_appends_share_groups_and_each_gets_its_own_seqs(
    app: Any, client: httpx.AsyncClient, bank_id: str
) -> None:
    before = groups_so_far()

    async def one(n: int, writer: httpx.AsyncClient) -> dict[str, Any]:
        session = f"s{n % 4}"  # four sessions, eight requests each
        events = [
            {"role": "user", "content": f"r{n} e{i}", "external_id": f"r{n}-{i}"} for i in range(1 + n % 3)
        ]
        response = await writer.post(
            f"/v1/banks/{bank_id}/sessions/{session}/events", json={"events": events}
        )
        assert response.status_code == 202, response.text
        return {"session": session, "events": events, **response.json()}

    async with make_client(app, ADMIN_KEY) as writer:
        results = await asyncio.gather(*(one(n, writer) for n in range(32)))
    groups, requests = (a - b for a, b in zip(groups_so_far(), before, strict=True))
    assert requests == 32
    assert groups < 32  # some requests shared a transaction
    for session in ("s0", "s1", "s2", "s3"):
        rows = await stored(app, bank_id, session)
        assert [seq for seq, _, _ in rows] == list(range(1, len(rows) + 1))  # gapless
        for result in (r for r in results if r["session"] == session):
            assert result["appended"] == len(result["events"])
            mine = rows[result["first_seq"] - 1 : result["last_seq"]]
            assert [content for _, content, _ in mine] == [e["content"] for e in result["events"]]


async def test_a_repeated_external_id_within_a_group_is_appended_once(app: Any, bank_id: str) -> None:
    groups: AppendGroups = app.state.append_groups
    first = submission(app, bank_id, "dup", event("a", "x1"), event("b", "x2"))
    second = submission(app, bank_id, "dup", event("b again", "x2"), event("c", "x3"), event("d"))
    one, two = await asyncio.gather(groups.append(first), groups.append(second))
    assert (one.kept, one.first_seq, one.last_seq) == ([0, 1], 1, 2)
    assert (two.kept, two.first_seq, two.last_seq) == ([1, 2], 3, 4)  # x2 was the first request's
    assert await stored(app, bank_id, "dup") == [
        (1, "a", "x1"),
        (2, "b", "x2"),
        (3, "c", "x3"),
        (4, "d", None),
    ]


async def test_one_bad_request_fails_alone_and_the_rest_of_its_group_commits(app: Any, bank_id: str) -> None:
    groups: AppendGroups = app.state.append_groups
    before = groups_so_far()
    missing = f"gone-{uuid.uuid4().hex[:8]}"  # no such bank: its session row breaks the foreign key
    good = [submission(app, bank_id, f"ok{n}", event(f"fine {n}")) for n in range(3)]
    bad = submission(app, missing, "s", event("lost"))
    results = await asyncio.gather(
        *(groups.append(s) for s in [good[0], bad, *good[1:]]), return_exceptions=True
    )
    assert isinstance(results[1], NotFound)
    assert all(isinstance(r, Outcome) and r.kept == [0] for i, r in enumerate(results) if i != 1)
    for n in range(3):
        assert await stored(app, bank_id, f"ok{n}") == [(1, f"fine {n}", None)]
    groups_count, requests = (a - b for a, b in zip(groups_so_far(), before, strict=True))
    assert (groups_count, requests) == (1, 4)  # one group, whose failure was then retried request by request


async def test_a_session_another_transaction_advanced_meanwhile_takes_the_locked_path(
    app: Any, bank_id: str
) -> None:
    """The group's snapshot misses the other writer's event, so the statement locks the session
    without advancing it and the group appends it with fresh reads: after the other's seq, no gap."""
    groups: AppendGroups = app.state.append_groups
    await groups.append(submission(app, bank_id, "hot", event("first")))
    async with app.state.engine.connect() as other:
        await other.execute(
            text("SELECT last_seq FROM sessions WHERE bank_id = :b AND session_id = 'hot' FOR UPDATE"),
            {"b": bank_id},
        )
        await other.execute(
            text(
                "INSERT INTO events (bank_id, session_id, seq, role, content, occurred_at)"
                " VALUES (:b, 'hot', 2, 'user', 'other', now())"
            ),
            {"b": bank_id},
        )
        await other.execute(
            text("UPDATE sessions SET last_seq = 2 WHERE bank_id = :b AND session_id = 'hot'"), {"b": bank_id}
        )
        pending = asyncio.ensure_future(
            groups.append(submission(app, bank_id, "hot", event("grouped"))),
        )

        async def blocked() -> bool:
            async with app.state.engine.connect() as probe:
                waiting = await probe.execute(
                    text(
                        "SELECT count(*) FROM pg_stat_activity"
                        " WHERE wait_event_type = 'Lock' AND query LIKE '%WITH batch AS%'"
                    )
                )
                return bool(waiting.scalar_one())

        await wait_for(blocked, within=30)
        await other.commit()
    outcome = await pending
    assert (outcome.first_seq, outcome.last_seq) == (3, 3)
    assert await stored(app, bank_id, "hot") == [(1, "first", None), (2, "other", None), (3, "grouped", None)]


async def test_each_request_of_a_group_gets_the_distillation_it_started(app: Any, bank_id: str) -> None:
    groups: AppendGroups = app.state.append_groups
    below = submission(app, bank_id, "d", event("one"), every=3)
    crosses = submission(app, bank_id, "d", event("two"), event("three"), every=3)
    after = submission(app, bank_id, "d", event("four"), every=3)
    one, two, three = await asyncio.gather(*(groups.append(s) for s in (below, crosses, after)))
    assert one.job is None  # 1 undistilled turn
    assert two.job is not None  # 3
    assert three.job is not None
    assert three.job.id == two.job.id  # 4: the same pending distillation


async def test_a_group_joins_queued_distillations_and_queues_one_behind_a_running_one(
    app: Any, bank_id: str
) -> None:
    before = {"queued": uuid.uuid4(), "running": uuid.uuid4()}  # never sent: no worker claims them
    async with app.state.engine.begin() as conn:
        for session_id, job_id in before.items():
            await conn.execute(
                text(
                    "INSERT INTO jobs (id, kind, bank_id, params, dedupe_key, status)"
                    " VALUES (:id, 'distill.session', :b, '{}', :key, :status)"
                ),
                {
                    "id": job_id,
                    "b": bank_id,
                    "key": composite_key("distill", bank_id, session_id),
                    "status": session_id,
                },
            )
    groups: AppendGroups = app.state.append_groups
    names = ("fresh", "queued", "running")
    outcomes = await asyncio.gather(
        *(groups.append(submission(app, bank_id, n, event(n), every=1)) for n in names)
    )
    jobs = {n: o.job.id for n, o in zip(names, outcomes, strict=True) if o.job is not None}
    async with app.state.engine.connect() as conn:
        rows = await conn.execute(text("SELECT id, dedupe_key FROM jobs WHERE bank_id = :b"), {"b": bank_id})
        keys = {r.id: r.dedupe_key for r in rows}
    assert len(keys) == 4  # the two before, one new for `fresh`, one behind the running one
    assert jobs["queued"] == before["queued"]  # joined
    assert keys[jobs["fresh"]] == composite_key("distill", bank_id, "fresh")
    assert keys[jobs["running"]] == composite_key("distill", bank_id, "running", "next")
