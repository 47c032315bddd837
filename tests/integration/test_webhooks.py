"""Webhooks through the real Celery worker: the API writes hooks, the changes write the outbox in their
own transactions, and the worker delivers to receivers on loopback (allowed by the test stack's
HINDSIGHT_WEBHOOK_ALLOW_PRIVATE), signed per Standard Webhooks and checked with that library. The
delivery loop with an injected clock is in test_webhook_outbox.py."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.config import Settings
from app.main import create_app
from app.webhooks import outbox
from tests.conftest import ADMIN_KEY, Stack, assert_problem, make_client, wait_for
from tests.factories import (
    CONVERSATION,
    Receiver,
    create_hook,
    deliveries,
    events,
    finished_job,
    make_bank,
    memories,
    ok,
    say,
    settled,
    verified,
    write,
)

ALL_EVENTS = list(outbox.EVENT_TYPES)


async def test_the_seed_scenario_tells_a_receiver_of_each_budget_signed(
    client: httpx.AsyncClient, worker: Any, receiver: Receiver
) -> None:
    bank = await make_bank(client)
    hook = await create_hook(client, bank, receiver.url(), ["memory.created", "memory.superseded"])
    assert hook["secret"].startswith("whsec_")
    response = await client.post(
        f"/v1/banks/{bank}/sessions/chat/events", json={"events": events(CONVERSATION)}
    )
    assert response.status_code == 202, response.text
    job = (await client.post(f"/v1/banks/{bank}/sessions/chat/distill")).json()["job_id"]
    assert (await finished_job(client, job))["status"] == "succeeded"
    await wait_for(lambda: settled(client, bank))

    active = {m["id"] for m in await memories(client, bank, status="active")}

    async def all_told() -> list[dict[str, Any]]:
        """Every delivery recorded as done, an active unit's creation and the supersede among them."""
        told = {e["data"]["memory"]["id"] for e in receiver.events() if e["type"] == "memory.created"}
        done = all(d["status"] == "succeeded" for d in await deliveries(client, bank, hook["id"]))
        replaced = [e for e in receiver.events() if e["type"] == "memory.superseded"]
        return replaced if done and active <= told else []

    [replaced] = await wait_for(all_told)
    bodies = [verified(hook["secret"], r) for r in receiver.received]  # every request is signed
    assert {b["data"]["bank_id"] for b in bodies} == {bank}
    created = {
        b["data"]["memory"]["id"]: b["data"]["memory"] for b in bodies if b["type"] == "memory.created"
    }
    old, new = created[replaced["data"]["memory_id"]], created[replaced["data"]["superseded_by"]]
    assert "5000" in old["content"]
    assert "8000" in new["content"]
    assert old["tags"] == new["tags"] == ["constraint.budget"]
    assert new["supersedes"] == old["id"]
    assert old["claim"]["value"] == "5000"  # what it states
    assert "claim" in new
    # In the order the changes were made: 5000 active, then 8000 active, then 5000 superseded.
    order = [(b["type"], b["data"].get("memory", {}).get("id") or b["data"]["memory_id"]) for b in bodies]
    assert order.index(("memory.created", old["id"])) < order.index(("memory.created", new["id"]))
    assert order.index(("memory.created", new["id"])) < order.index(("memory.superseded", old["id"]))
    assert len(created) == len(active) + 1  # and the 5000 budget, told before it was replaced
    assert len({r.headers["webhook-id"] for r in receiver.received}) == len(receiver.received)

    listed = await deliveries(client, bank, hook["id"])
    assert len(listed) == len(receiver.received)
    assert {(d["status"], d["attempts"], d["response_code"]) for d in listed} == {("succeeded", 1, 204)}
    assert all(d["latency_ms"] is not None and d["latency_ms"] >= 0 for d in listed)
    assert [d["id"] for d in listed] == [r.headers["webhook-id"] for r in reversed(receiver.received)]


async def test_an_episode_that_follows_a_replaced_value_out_is_told_superseded(
    client: httpx.AsyncClient, worker: Any, receiver: Receiver
) -> None:
    """The assistant's recommendation "for 5000", once 8000 replaces 5000, leaves the active set (linked
    to the new budget): a receiver that was told it was created is told it was superseded."""
    bank = await make_bank(client, distill_every_n_turns=1000)
    hook = await create_hook(client, bank, receiver.url(), ["memory.superseded"])
    said = [
        ("user", "I want to buy a laptop, my budget is 5000."),
        ("assistant", "For 5000, I recommend the Lenovo IdeaPad 5 with 16 GB of memory."),
        ("user", "Actually, if the configuration can be upgraded, I can go up to 8000."),
    ]
    ok(await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events(said)}), 202)
    job = ok(await client.post(f"/v1/banks/{bank}/sessions/s/distill"), 202)["job_id"]
    assert (await finished_job(client, job))["status"] == "succeeded"
    await wait_for(lambda: settled(client, bank))
    superseded = {m["id"]: m for m in await memories(client, bank, status="superseded")}
    [episode] = [m for m in superseded.values() if m["source"]["seqs"] == [2]]

    async def told() -> set[str]:
        done = all(d["status"] == "succeeded" for d in await deliveries(client, bank, hook["id"]))
        ids = {e["data"]["memory_id"] for e in receiver.events() if e["type"] == "memory.superseded"}
        return ids if done and set(superseded) <= ids else set()

    assert episode["id"] in await wait_for(told)


async def test_a_receiver_down_for_a_while_gets_every_event_in_order_once_back(
    client: httpx.AsyncClient, worker: Any, receiver: Receiver
) -> None:
    bank = await make_bank(client)
    hook = await create_hook(client, bank, receiver.url(), ["memory.created"])
    receiver.stop()  # connection refused from now on
    first = await write(client, bank, "The user's favourite colour is green.", ["preference.color"])
    second = await write(client, bank, "The user's order number is ORD-777.", ["fact.id"])

    async def retried() -> bool:
        head = (await deliveries(client, bank, hook["id"]))[-1]  # the oldest
        return head["status"] == "pending" and head["attempts"] >= 2 and bool(head["error"])

    await wait_for(retried)
    assert not receiver.received
    listed = await deliveries(client, bank, hook["id"])
    assert listed[0]["attempts"] == 0  # the later event waits behind the first: order is kept
    receiver.start()

    async def both() -> list[dict[str, Any]]:
        got = receiver.events()
        return got if len(got) == 2 else []

    got = await wait_for(both, within=30)
    assert [e["data"]["memory"]["id"] for e in got] == [first["id"], second["id"]]
    for request in receiver.received:
        verified(hook["secret"], request)
    listed = await deliveries(client, bank, hook["id"])
    assert [d["status"] for d in listed] == ["succeeded", "succeeded"]
    assert listed[-1]["attempts"] >= 3
    assert listed[-1]["response_code"] == 204
    assert listed[-1]["error"] is None


@pytest.fixture(scope="module")
async def strict_client(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    """An API of its own without HINDSIGHT_WEBHOOK_ALLOW_PRIVATE (the test stack allows loopback)."""
    settings = Settings(
        env="test",
        database_url=stack.database_url,
        redis_url=stack.redis_url,
        admin_key=ADMIN_KEY,
        webhook_allow_private=False,
    )
    app: Any = create_app(settings)
    async with app.router.lifespan_context(app), make_client(app, ADMIN_KEY) as client:
        yield client


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9000/hook",
        "http://localhost/hook",
        "http://[::1]/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://10.1.2.3/hook",
        "https://192.168.0.10/hook",
        "http://[::ffff:127.0.0.1]/hook",
        # IPv4 behind NAT64, IPv4-compatible, 6to4 and SIIT addresses, and site-local (issue 29)
        "http://[64:ff9b::a00:1]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[::127.0.0.1]/",
        "http://[2002:a9fe:a9fe::1]/",
        "http://[::ffff:0:a9fe:a9fe]/",
        "http://[fec0::1]/",
    ],
)
async def test_private_loopback_and_link_local_urls_are_refused(
    strict_client: httpx.AsyncClient, url: str
) -> None:
    bank = await make_bank(strict_client)
    body = {"url": url, "events": ["job.failed"]}
    response = await strict_client.post(f"/v1/banks/{bank}/webhooks", json=body)
    problem = assert_problem(response, 422)
    assert problem["errors"][0]["loc"] == ["body", "url"]
    assert "HINDSIGHT_WEBHOOK_ALLOW_PRIVATE" in problem["detail"]
    assert (await strict_client.get(f"/v1/banks/{bank}/webhooks")).json()["webhooks"] == []


@pytest.mark.parametrize("url", ["ftp://example.com/x", "not a url", "/relative/path", "http://"])
async def test_urls_that_are_not_http_are_refused(client: httpx.AsyncClient, url: str) -> None:
    bank = await make_bank(client)
    response = await client.post(f"/v1/banks/{bank}/webhooks", json={"url": url, "events": ["job.failed"]})
    assert_problem(response, 422)


async def test_events_of_another_bank_never_reach_this_banks_hook(
    client: httpx.AsyncClient, worker: Any, receiver: Receiver
) -> None:
    mine, theirs = await make_bank(client), await make_bank(client)
    await create_hook(client, mine, receiver.url("/mine"), ALL_EVENTS)
    await create_hook(client, theirs, receiver.url("/theirs"), ALL_EVENTS)
    await write(client, theirs, "Their budget is 100.", ["constraint.budget"])
    await write(client, mine, "My budget is 200.", ["constraint.budget"])
    await write(client, theirs, "Their city is Oslo.", ["fact.place"])

    async def all_there() -> bool:
        return len(receiver.events("/mine")) == 1 and len(receiver.events("/theirs")) == 2

    await wait_for(all_there)
    assert {e["data"]["bank_id"] for e in receiver.events("/mine")} == {mine}
    assert {e["data"]["bank_id"] for e in receiver.events("/theirs")} == {theirs}
    assert "200" in receiver.events("/mine")[0]["data"]["memory"]["content"]


async def test_redirects_are_not_followed(client: httpx.AsyncClient, worker: Any, receiver: Receiver) -> None:
    bank = await make_bank(client)
    receiver.routes["/moved"] = (307, {"location": receiver.url("/elsewhere")})
    hook = await create_hook(client, bank, receiver.url("/moved"), ["memory.created"])
    await write(client, bank, "The user's favourite tea is oolong.", ["preference.drink"])

    async def answered() -> dict[str, Any] | None:
        [delivery] = await deliveries(client, bank, hook["id"])
        return delivery if delivery["attempts"] >= 2 else None

    delivery = await wait_for(answered)
    assert delivery["status"] == "pending"
    assert delivery["response_code"] == 307
    assert delivery["error"] == "HTTP 307"
    assert {r.path for r in receiver.received} == {"/moved"}  # never /elsewhere
    assert (await client.delete(f"/v1/banks/{bank}/webhooks/{hook['id']}")).status_code == 204


async def test_webhook_crud_and_who_may_do_it(client: httpx.AsyncClient, app: Any) -> None:
    bank, other = await make_bank(client), await make_bank(client)
    hook = await create_hook(client, bank, "http://127.0.0.1:9/a", ["memory.created", "job.failed"])
    assert set(hook) == {"id", "bank_id", "url", "events", "secret", "created_at"}
    assert hook["events"] == ["job.failed", "memory.created"]
    listed = (await client.get(f"/v1/banks/{bank}/webhooks")).json()
    assert [h["id"] for h in listed["webhooks"]] == [hook["id"]]
    assert "secret" not in listed["webhooks"][0]  # shown once, at creation
    one = (await client.get(f"/v1/banks/{bank}/webhooks/{hook['id']}")).json()
    assert one["url"] == "http://127.0.0.1:9/a"
    assert "secret" not in one
    assert_problem(await client.get(f"/v1/banks/{other}/webhooks/{hook['id']}"), 404)
    bad = await client.post(f"/v1/banks/{bank}/webhooks", json={"url": "http://127.0.0.1/", "events": ["x"]})
    assert_problem(bad, 422)
    empty = await client.post(f"/v1/banks/{bank}/webhooks", json={"url": "http://127.0.0.1/", "events": []})
    assert_problem(empty, 422)

    keys = {}
    for scopes in (["read"], ["write"], ["read", "write"]):
        response = await client.post(f"/v1/banks/{bank}/keys", json={"scopes": scopes})
        keys[",".join(scopes)] = response.json()["key"]
    body = {"url": "http://127.0.0.1:9/b", "events": ["memory.forgotten"]}
    async with make_client(app, keys["read"]) as reader, make_client(app, keys["write"]) as writer:
        assert (await reader.get(f"/v1/banks/{bank}/webhooks")).status_code == 200
        assert_problem(await reader.post(f"/v1/banks/{bank}/webhooks", json=body), 403)
        assert_problem(await writer.post(f"/v1/banks/{bank}/webhooks", json=body), 403)  # needs read too
        assert_problem(await writer.get(f"/v1/banks/{other}/webhooks"), 404)
    async with make_client(app, keys["read,write"]) as key:
        made = await key.post(f"/v1/banks/{bank}/webhooks", json=body)
        assert made.status_code == 201, made.text
        assert_problem(await key.post(f"/v1/banks/{other}/webhooks", json=body), 404)
        assert (await key.delete(f"/v1/banks/{bank}/webhooks/{made.json()['id']}")).status_code == 204

    made_ids = {hook["id"]}
    for n in range(2):
        made_ids.add((await create_hook(client, bank, f"http://127.0.0.1:9/{n}", ["job.failed"]))["id"])
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await client.get(f"/v1/banks/{bank}/webhooks", params=params)).json()
        seen += [h["id"] for h in page["webhooks"]]
        if not (cursor := page["next_cursor"]):
            break
    assert sorted(seen) == sorted(made_ids)
    assert_problem(await client.get(f"/v1/banks/{bank}/webhooks", params={"cursor": "nope"}), 400)
    assert (await client.delete(f"/v1/banks/{bank}/webhooks/{hook['id']}")).status_code == 204
    assert_problem(await client.get(f"/v1/banks/{bank}/webhooks/{hook['id']}"), 404)
    assert_problem(await client.delete(f"/v1/banks/{bank}/webhooks/{hook['id']}"), 404)
    assert_problem(await client.get(f"/v1/banks/{bank}/webhooks/{uuid.uuid4()}/deliveries"), 404)


async def test_distillations_and_merges_are_told_with_their_counts(
    client: httpx.AsyncClient, worker: Any, receiver: Receiver
) -> None:
    bank = await make_bank(client)
    hook = await create_hook(client, bank, receiver.url(), ["session.distilled", "memory.merged"])
    await say(client, bank, "My budget is 5000.", session="monday")
    await say(client, bank, "My budget is 5000.", session="tuesday")  # the same fact again: merged

    async def told() -> list[dict[str, Any]]:
        got = receiver.events()
        return got if len(got) == 3 else []

    await wait_for(told)
    got = [verified(hook["secret"], r) for r in receiver.received]
    distilled = [e["data"] for e in got if e["type"] == "session.distilled"]
    assert [(d["session_id"], d["events"], d["units"], d["distilled_seq"]) for d in distilled] == [
        ("monday", 1, 1, 1),
        ("tuesday", 1, 1, 1),
    ]
    [merged] = [e["data"] for e in got if e["type"] == "memory.merged"]
    kept = await memories(client, bank, status="active")
    assert [m["id"] for m in kept] == [merged["merged_into"]]
    gone = await memories(client, bank, status="merged")
    assert [m["id"] for m in gone] == [merged["memory_id"]]


async def test_a_job_the_sweep_gives_up_on_is_told(
    app: Any, client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    from app.jobs import service as jobs

    bank = await make_bank(client)
    hook = await create_hook(client, bank, "http://127.0.0.1:9/none", ["job.failed"])
    async with app.state.sessionmaker() as db, db.begin():
        dead, _ = await jobs.create(db, "distill.session", bank_id=bank, params={"session_id": "s"})
    await sql(  # its worker died during its last attempt
        "UPDATE jobs SET status = 'running', attempts = 3, deadline_at = now() - interval '1 second'"
        " WHERE id = :id",
        id=dead.id,
    )
    sweep = (await client.post("/v1/admin/maintenance/sweep")).json()["job_id"]
    assert (await finished_job(client, sweep))["status"] == "succeeded"
    assert (await client.get(f"/v1/jobs/{dead.id}")).json()["status"] == "failed"
    [delivery] = await deliveries(client, bank, hook["id"])
    assert delivery["payload"]["data"]["job_id"] == str(dead.id)
    assert delivery["payload"]["data"]["error"] == "deadline exceeded after 3 attempts"
    assert (await client.delete(f"/v1/banks/{bank}/webhooks/{hook['id']}")).status_code == 204
