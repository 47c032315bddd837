"""The webhook outbox and its delivery loop in this process, on the real database and real receivers:
the clock injected (a day of retries without waiting a day), sessions that nudge no worker, and what
each change writes in its transaction. A test that drives the loop itself emits its event a year
ahead (`emit_ahead`): a worker's run, woken by another test's nudge or retry, delivers whatever is due
across banks at its real clock, and would otherwise take the row first."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine

from app.db.models import WebhookDelivery
from app.webhooks import outbox
from app.webhooks.delivery import Policy, deliver_due
from tests.conftest import Stack, wait_for
from tests.factories import Receiver, create_hook, deliveries, make_bank, write

Sessions = async_sessionmaker[AsyncSession]
AHEAD = timedelta(days=365)


async def emit_ahead(sessionmaker: Sessions, bank: str, event: str, *data: dict[str, Any]) -> datetime:
    """Emit `event` (once for each `data`, in one transaction) with its deliveries' times a year ahead;
    return the time they are due at, for the loop's clock. No worker's real clock reaches them."""
    async with sessionmaker() as db, db.begin():
        for each in data:
            await outbox.emit(db, bank, event, each)
        await db.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.bank_id == bank)
            .values(
                created_at=WebhookDelivery.created_at + AHEAD,
                next_attempt_at=WebhookDelivery.next_attempt_at + AHEAD,
            )
        )
    return datetime.now(UTC) + AHEAD


@pytest.fixture(scope="module")
async def sessionmaker(stack: Stack) -> AsyncIterator[Sessions]:
    """Sessions of their own: what they write to the outbox nudges no worker."""
    engine = create_async_engine(stack.database_url)
    yield async_sessionmaker(engine, expire_on_commit=False)
    await engine.dispose()


async def test_a_receiver_that_always_fails_is_given_up_on_after_a_day_of_backoff(
    client: httpx.AsyncClient, receiver: Receiver, sessionmaker: Sessions
) -> None:
    """The worker's loop, in this process with an injected clock: no waiting a day, no sleeps."""
    bank = await make_bank(client)
    hook = await create_hook(client, bank, receiver.url("/broken"), ["session.distilled"])
    receiver.routes["/broken"] = (500, {})
    start = await emit_ahead(sessionmaker, bank, "session.distilled", {"session_id": "s", "units": 1})
    policy = Policy(allow_private=True)  # the production schedule: 5 s doubling, ≤ 1 h, for 24 h
    statuses = []
    clock = [start]
    while True:
        now = clock[0]
        report = await deliver_due(sessionmaker, policy, bank_id=bank, clock=lambda: clock[0])
        [delivery] = await deliveries(client, bank, hook["id"])
        statuses.append(delivery["status"])
        if report.retry_at is None:
            break
        assert report.retry_at > now
        clock[0] = report.retry_at
        assert report.retry_at - start < timedelta(days=2), "never gave up"
    assert statuses[-1] == "failed"
    assert set(statuses[:-1]) == {"pending"}
    assert delivery["attempts"] == len(receiver.received) == len(statuses)
    assert delivery["response_code"] == 500
    assert delivery["error"] == "HTTP 500"
    sent_at = [int(r.headers["webhook-timestamp"]) for r in receiver.received]
    gaps = [b - a for a, b in itertools.pairwise(sent_at)]
    assert gaps[:4] == [5, 10, 20, 40]  # exponential backoff
    assert max(gaps) == 3600  # capped at an hour
    assert sent_at[-1] - sent_at[0] >= 86_400 - 5  # retried for a day (created just before `start`)
    assert {r.headers["webhook-id"] for r in receiver.received} == {delivery["id"]}


async def test_a_private_target_is_refused_at_delivery_time_after_resolving_its_name(
    client: httpx.AsyncClient, receiver: Receiver, sessionmaker: Sessions
) -> None:
    """A hook stored while private targets were allowed (or whose name now resolves inside) is not
    sent to once they are not: `localhost` is resolved, found to be loopback, and refused."""
    bank = await make_bank(client)
    hook = await create_hook(client, bank, f"http://localhost:{receiver.port}/hook", ["session.distilled"])
    due = await emit_ahead(sessionmaker, bank, "session.distilled", {"session_id": "s", "units": 1})
    report = await deliver_due(sessionmaker, Policy(allow_private=False), bank_id=bank, clock=lambda: due)
    assert report.counts["retrying"] == 1
    [delivery] = await deliveries(client, bank, hook["id"])
    assert delivery["status"] == "pending"
    assert delivery["response_code"] is None
    assert delivery["error"].startswith("refused:")
    assert "127.0.0.1" in delivery["error"]
    assert not receiver.received


async def test_forgetting_and_purging_are_told_and_a_purge_erases_the_content_from_the_outbox(
    client: httpx.AsyncClient, sql: Any
) -> None:
    """No worker needed: the outbox rows are what is checked (written with each change)."""
    bank = await make_bank(client)
    hook = await create_hook(client, bank, "http://127.0.0.1:9/none", ["memory.created", "memory.forgotten"])
    unit = await write(client, bank, "The user's locker code is 4521.", ["fact.id"])
    assert (await client.delete(f"/v1/banks/{bank}/memories/{unit['id']}")).status_code in (200, 204)
    purge = await client.delete(f"/v1/banks/{bank}/memories/{unit['id']}", params={"purge": "true"})
    assert purge.status_code in (200, 204), purge.text
    listed = list(reversed(await deliveries(client, bank, hook["id"])))
    assert [d["event"] for d in listed] == ["memory.created", "memory.forgotten", "memory.forgotten"]
    assert [d["payload"]["data"].get("action") for d in listed[1:]] == ["deleted", "purged"]
    assert {d["payload"]["data"].get("memory_id") for d in listed[1:]} == {unit["id"]}
    assert listed[0]["payload"]["data"]["memory"]["content"] == ""
    rows = await sql("SELECT payload::text AS p FROM webhook_deliveries WHERE bank_id = :bank", bank=bank)
    assert rows
    assert not [r for r in rows if "4521" in r["p"]]
    assert (await client.delete(f"/v1/banks/{bank}/webhooks/{hook['id']}")).status_code == 204


async def test_a_job_that_fails_for_good_is_told_in_its_failing_transaction(
    client: httpx.AsyncClient, sessionmaker: Sessions
) -> None:
    from app.jobs import service as jobs

    bank = await make_bank(client)
    hook = await create_hook(client, bank, "http://127.0.0.1:9/none", ["job.failed"])

    async def broken(_: Any) -> dict[str, Any]:
        raise ValueError("the distiller's answer made no sense")

    async with sessionmaker() as db, db.begin():
        job, _ = await jobs.create(db, "distill.session", bank_id=bank, params={"session_id": "s"})
    from app.jobs.unit_of_work import UnitOfWork

    work = UnitOfWork(sessionmaker, None)  # type: ignore[arg-type]  # its job sends nothing
    status = await jobs.run(work, job.id, broken, deadline=timedelta(seconds=60))
    assert status == "failed"
    [delivery] = await deliveries(client, bank, hook["id"])
    assert delivery["event"] == "job.failed"
    data = delivery["payload"]["data"]
    assert data == {
        "bank_id": bank,
        "job_id": str(job.id),
        "kind": "distill.session",
        "attempts": 1,
        "error": "ValueError: the distiller's answer made no sense",
    }


async def test_a_change_that_rolls_back_tells_nothing(
    client: httpx.AsyncClient, sessionmaker: Sessions
) -> None:
    bank = await make_bank(client)
    hook = await create_hook(client, bank, "http://127.0.0.1:9/none", ["memory.merged"])
    async with sessionmaker() as db:
        async with db.begin():
            await outbox.emit(db, bank, "memory.merged", {"memory_id": "a", "merged_into": "b"})
        async with db.begin():  # the same change, failing after its event was written
            await outbox.emit(db, bank, "memory.merged", {"memory_id": "c", "merged_into": "d"})
            await db.rollback()
    [delivery] = await deliveries(client, bank, hook["id"])
    assert delivery["payload"]["data"]["memory_id"] == "a"


async def test_an_attempt_that_takes_longer_than_the_timeout_is_a_failed_attempt(
    client: httpx.AsyncClient, receiver: Receiver, sessionmaker: Sessions
) -> None:
    bank = await make_bank(client)
    hook = await create_hook(client, bank, receiver.url("/slow"), ["session.distilled"])
    receiver.slow["/slow"] = 3.0
    due = await emit_ahead(sessionmaker, bank, "session.distilled", {"session_id": "s", "units": 1})
    policy = Policy(allow_private=True, timeout_seconds=0.5)
    report = await deliver_due(sessionmaker, policy, bank_id=bank, clock=lambda: due)
    assert report.counts == {"succeeded": 0, "retrying": 1, "failed": 0}
    [delivery] = await deliveries(client, bank, hook["id"])
    assert delivery["error"] == "timed out after 0.5 s"
    assert delivery["response_code"] is None
    assert 500 <= delivery["latency_ms"] < 2500  # given up at the timeout, not when the receiver answered
    assert len(receiver.received) == 1


async def test_an_event_whose_nudge_was_lost_goes_out_on_beats_tick(
    app: Any, client: httpx.AsyncClient, worker: Any, receiver: Receiver, sessionmaker: Sessions
) -> None:
    """Rows written without a nudge (as if the broker lost it) wait for the tick beat sends every 10 s:
    the same task with no bank, which delivers whatever is due across banks."""
    bank = await make_bank(client)
    hook = await create_hook(client, bank, receiver.url(), ["session.distilled"])
    async with sessionmaker() as db, db.begin():
        await outbox.emit(db, bank, "session.distilled", {"session_id": "s", "units": 2})
    [waiting] = await deliveries(client, bank, hook["id"])
    assert (waiting["status"], waiting["attempts"]) == ("pending", 0)
    assert app.state.queue.publish_sync(outbox.DELIVER, [])  # what beat's `webhooks` entry sends

    async def delivered() -> list[dict[str, Any]]:
        return [d for d in await deliveries(client, bank, hook["id"]) if d["status"] == "succeeded"]

    [done] = await wait_for(delivered)
    assert done["attempts"] == 1
    assert [e["data"]["units"] for e in receiver.events()] == [2]


async def test_an_event_waiting_behind_one_given_up_on_gets_its_own_day_of_retries(
    client: httpx.AsyncClient, receiver: Receiver, sessionmaker: Sessions
) -> None:
    """A hook's events go out in order, so the second waits while the first is retried for a day; its
    own window starts at its first attempt, not when it was written (else it gets one or two tries)."""
    bank = await make_bank(client)
    hook = await create_hook(client, bank, receiver.url("/down-a-day"), ["session.distilled"])
    receiver.routes["/down-a-day"] = (503, {})
    first_data, second_data = ({"session_id": s, "units": 1} for s in ("first", "second"))
    start = await emit_ahead(sessionmaker, bank, "session.distilled", first_data, second_data)
    policy = Policy(allow_private=True)
    clock = [start]
    given_up: datetime | None = None
    while given_up is None or clock[0] < given_up + timedelta(hours=1):
        report = await deliver_due(sessionmaker, policy, bank_id=bank, clock=lambda: clock[0])
        second, first = await deliveries(client, bank, hook["id"])  # newest first
        if given_up is None and first["status"] == "failed":
            given_up = clock[0]
        assert report.retry_at is not None, (first, second)
        clock[0] = report.retry_at
    assert given_up - start >= timedelta(hours=23)  # the first was retried for its day
    assert second["status"] == "pending"  # the second, an hour into its own
    assert second["attempts"] >= 5
    receiver.routes["/down-a-day"] = (204, {})
    await deliver_due(sessionmaker, policy, bank_id=bank, clock=lambda: clock[0])
    second, _ = await deliveries(client, bank, hook["id"])
    assert second["status"] == "succeeded"
