"""Every method of the client's surface (docs/guides/clients.md) once against the live stack over
HTTP, with the sync client and with the async one; a real Celery worker runs the jobs."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hindsight_memory import (
    AsyncHindsight,
    AuthenticationError,
    EventIn,
    EventItem,
    Hindsight,
    JobItem,
    MemoryItem,
    NotFoundError,
    QueryItem,
    ScoredMemory,
    WrittenMemory,
)

from tests.client.conftest import new_bank, poll, settled
from tests.conftest import ADMIN_KEY, wait_for

TURNS = [
    {"role": "user", "speaker": "Ana", "content": "I'm planning a trip to Lisbon in May."},
    {"role": "assistant", "content": "Great. What is your budget?"},
    {"role": "user", "speaker": "Ana", "content": "My budget is 1200 euros."},
]


def test_every_method_sync(hs: Hindsight, service: str, worker: Any) -> None:
    # banks
    bank_id = f"client-{uuid.uuid4().hex[:12]}"
    bank = hs.banks.create(bank_id, name="Ana's trips", config={"distill_every_n_turns": 1000})
    assert (bank.bank_id, bank.name, bank.config["distill_every_n_turns"]) == (bank_id, "Ana's trips", 1000)
    assert hs.banks.get(bank_id).created_at == bank.created_at
    assert bank_id in {b.bank_id for b in hs.banks.list()}
    renamed = hs.banks.update(bank_id, name="Trips", config={"timezone": "Europe/Lisbon"})
    assert (renamed.name, renamed.config["timezone"], renamed.config["distill_every_n_turns"]) == (
        "Trips",
        "Europe/Lisbon",
        1000,
    )

    # keys: a bank key works for its bank, and stops when revoked
    key = hs.keys.create(bank_id, scopes=["read", "write"], name="agent")
    assert key.key
    assert key.scopes == ["read", "write"]
    assert key.bank_id == bank_id
    with Hindsight(service, key.key) as scoped:
        assert [b.bank_id for b in scoped.banks.list()] == [bank_id]
        hs.keys.revoke(bank_id, key.id)
        with pytest.raises(AuthenticationError):
            scoped.banks.get(bank_id)

    # events and sessions
    appended = hs.events.append(bank_id, "lisbon", [*TURNS[:2], EventIn.model_validate(TURNS[2])])
    assert (appended.appended, appended.first_seq, appended.last_seq, appended.duplicates) == (3, 1, 3, 0)
    events = list(hs.events.list(bank_id, "lisbon"))
    assert [e.content for e in events] == [t["content"] for t in TURNS]
    assert all(e.external_id for e in events)  # given by the client
    assert [e.seq for e in hs.events.list(bank_id, "lisbon", after_seq=2)] == [3]
    session = hs.sessions.get(bank_id, "lisbon")
    assert (session.last_seq, session.distilled_seq, session.status) == (3, 0, "open")
    assert [s.session_id for s in hs.sessions.list(bank_id)] == ["lisbon"]

    # distillation, jobs
    job = hs.sessions.distill(bank_id, "lisbon")
    assert job.kind == "distill.session"
    assert hs.jobs.get(job.id).id == job.id
    done = hs.jobs.wait(job.id, timeout=60)
    assert done.status == "succeeded", done
    settled(hs, bank_id)
    assert hs.sessions.get(bank_id, "lisbon").distilled_seq == 3

    # query
    found = hs.query(bank_id, "What is Ana's budget?", top_k=5, tags=["constraint"], explain=True)
    assert isinstance(found.memories[0], ScoredMemory)
    assert "1200" in found.memories[0].content
    assert found.memories[0].score > 0
    assert found.memories[0].scores
    assert "1200" in found.context
    assert found.memories[0].why is not None
    assert found.memories[0].why.startswith("Said by Ana in lisbon, turn 3, on ")
    assert found.rerank == "skipped (not configured)"
    dated = hs.query(bank_id, "what did I say yesterday?", now="2026-06-10T12:00:00+00:00")
    assert dated.time_filter is not None
    assert dated.time_filter.from_.day == 9

    # memories
    written = hs.memories.write(
        bank_id,
        "Ana prefers window seats.",
        ["preference.travel"],
        wait=True,
        importance=0.8,
        entities=[{"name": "Ana", "type": "person"}],
    )
    assert isinstance(written, WrittenMemory)
    assert (written.status, written.importance, written.job_id) == ("active", 0.8, None)
    pending = hs.memories.write(bank_id, "Ana flies from Porto.", ["fact"])
    assert pending.status == "pending"
    assert pending.job_id is not None
    assert hs.jobs.wait(pending.job_id, timeout=60).status == "succeeded"
    listed = list(hs.memories.list(bank_id, tag="preference", status=["active", "superseded"]))
    assert [m.id for m in listed] == [written.id]
    assert hs.memories.get(bank_id, written.id).content == "Ana prefers window seats."
    budget = hs.memories.get(bank_id, found.memories[0].id)
    assert budget.source.events
    assert "1200" in budget.source.events[0].content
    updated = hs.memories.update(bank_id, written.id, content="Ana prefers aisle seats.")
    assert updated.supersedes == written.id
    lineage = hs.memories.history(bank_id, updated.id)
    assert [c.id for c in lineage.chain] == [written.id, updated.id]
    assert "updated" in [a.action for a in hs.memories.history(bank_id, written.id).actions]
    assert hs.memories.forget(bank_id, updated.id).status == "deleted"
    assert hs.memories.restore(bank_id, updated.id).status == "active"
    purged = hs.memories.purge(bank_id, updated.id)
    assert purged.status == "deleted"
    assert purged.content != "Ana prefers aisle seats."

    # entities
    [ana] = list(hs.entities.list(bank_id, q="ana"))
    assert ana.name == "Ana"
    assert ana.mentions >= 1
    detail = hs.entities.get(bank_id, ana.id, statuses=["active", "superseded", "deleted"])
    assert written.id in {m.id for m in detail.memories}

    # timeline (reads are recorded by the API's background recorder, a moment after the query returns)
    def timeline_with_the_query() -> list[Any] | None:
        items = list(hs.timeline(bank_id, kinds=["event", "memory", "query", "job"]))
        return items if any(isinstance(i, QueryItem) for i in items) else None

    items = poll(timeline_with_the_query)
    assert {type(i) for i in items} == {EventItem, MemoryItem, QueryItem, JobItem}
    assert [i.content for i in items if isinstance(i, EventItem)] == [t["content"] for t in TURNS]
    assert [i.kind for i in hs.timeline(bank_id, kinds="job", session_id="lisbon")][:1] == ["job"]

    # redistill, close
    replay = hs.redistill(bank_id, ["lisbon"], dry_run=True)
    assert replay.kind == "distill.redistill"
    finished = hs.jobs.wait(replay.id, timeout=60)
    assert finished.status == "succeeded"
    assert finished.result is not None
    assert set(finished.result) >= {"added", "removed", "unchanged"}
    hs.events.append(bank_id, "lisbon", [{"role": "user", "content": "I'd like a hotel near the river."}])
    closed = hs.sessions.close(bank_id, "lisbon")
    assert closed.status == "closed"
    assert closed.job_id is not None

    # stats, delete
    stats = hs.banks.stats(bank_id)
    assert stats.events == 4
    assert stats.sessions == 1
    hs.banks.delete(bank_id)
    with pytest.raises(NotFoundError):
        hs.banks.get(bank_id)


async def test_every_method_async(hs: Hindsight, service: str, worker: Any) -> None:
    async with AsyncHindsight(service, ADMIN_KEY) as ahs:
        bank_id = f"client-{uuid.uuid4().hex[:12]}"
        bank = await ahs.banks.create(bank_id, config={"distill_every_n_turns": 1000})
        assert (await ahs.banks.get(bank_id)).bank_id == bank.bank_id
        assert bank_id in {b.bank_id async for b in ahs.banks.list()}
        assert (await ahs.banks.update(bank_id, name="async")).name == "async"
        key = await ahs.keys.create(bank_id, scopes=["read"])
        async with AsyncHindsight(service, key.key) as reader:
            assert [b.bank_id async for b in reader.banks.list()] == [bank_id]
        await ahs.keys.revoke(bank_id, key.id)

        appended = await ahs.events.append(bank_id, "s", TURNS)
        assert appended.appended == 3
        assert [e.seq async for e in ahs.events.list(bank_id, "s", after_seq=1)] == [2, 3]
        assert (await ahs.sessions.get(bank_id, "s")).last_seq == 3
        assert [s.session_id async for s in ahs.sessions.list(bank_id)] == ["s"]
        job = await ahs.sessions.distill(bank_id, "s")
        assert (await ahs.jobs.get(job.id)).kind == "distill.session"
        assert (await ahs.jobs.wait(job.id, timeout=60)).status == "succeeded"
        settled(hs, bank_id)

        found = await ahs.query(bank_id, "What is the budget?", tags=["constraint"])
        assert "1200" in found.context

        written = await ahs.memories.write(
            bank_id, "Bo lives in Lyon.", ["fact"], wait=True, entities=[{"name": "Bo", "type": "person"}]
        )
        assert written.status == "active"
        assert written.id in [m.id async for m in ahs.memories.list(bank_id, tag="fact")]
        assert (await ahs.memories.get(bank_id, written.id)).content == "Bo lives in Lyon."
        updated = await ahs.memories.update(bank_id, written.id, content="Bo lives in Paris.")
        assert [c.id for c in (await ahs.memories.history(bank_id, updated.id)).chain] == [
            written.id,
            updated.id,
        ]
        assert (await ahs.memories.forget(bank_id, updated.id)).status == "deleted"
        assert (await ahs.memories.restore(bank_id, updated.id)).status == "active"
        assert (await ahs.memories.purge(bank_id, updated.id)).content != "Bo lives in Paris."

        [bo] = [e async for e in ahs.entities.list(bank_id, q="bo") if e.name == "Bo"]
        detail = await ahs.entities.get(bank_id, bo.id, statuses="superseded")
        assert written.id in {m.id for m in detail.memories}

        async def timeline_kinds() -> set[str] | None:
            kinds = {i.kind async for i in ahs.timeline(bank_id)}
            return kinds if "query" in kinds else None

        assert await wait_for(timeline_kinds) == {"event", "memory", "query", "job"}

        replay = await ahs.redistill(bank_id)
        assert (await ahs.jobs.wait(replay.id, timeout=60)).status == "succeeded"
        closed = await ahs.sessions.close(bank_id, "s")
        assert closed.status == "closed"
        assert (await ahs.banks.stats(bank_id)).events == 3
        await ahs.banks.delete(bank_id)
        with pytest.raises(NotFoundError):
            await ahs.banks.get(bank_id)


def test_lists_follow_next_cursor_over_pages(hs: Hindsight) -> None:
    bank_id = new_bank(hs, distill_every_n_turns=1000)
    turns = [{"role": "user", "content": f"Turn number {i}."} for i in range(7)]
    hs.events.append(bank_id, "long", turns)
    assert [e.seq for e in hs.events.list(bank_id, "long", page_size=2)] == [1, 2, 3, 4, 5, 6, 7]
    for i in range(5):
        hs.events.append(bank_id, f"s{i}", [{"role": "user", "content": "hello"}])
    assert len(list(hs.sessions.list(bank_id, page_size=2))) == 6
    written = [hs.memories.write(bank_id, f"Fact number {i}.", ["fact"]).id for i in range(5)]
    listed = [m.id for m in hs.memories.list(bank_id, page_size=2)]
    assert sorted(listed) == sorted(written)
    assert len(listed) == 5
    assert len(list(hs.timeline(bank_id, kinds="event", page_size=3))) == 12
    banks = [new_bank(hs) for _ in range(3)]
    assert set(banks) <= {b.bank_id for b in hs.banks.list(page_size=2)}
