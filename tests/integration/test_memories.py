"""Memory evolution on the real stack: conflict resolution by the real worker, supersede chains,
merges, the memory endpoints, forgetting policies and bi-temporal reads."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.conftest import ADMIN_KEY, assert_problem, wait_for
from tests.factories import make_bank, memories, ok, say, settled, write


async def history(client: httpx.AsyncClient, bank: str, memory_id: str) -> dict[str, Any]:
    body: dict[str, Any] = ok(await client.get(f"/v1/banks/{bank}/memories/{memory_id}/history"))
    return body


@pytest.mark.parametrize(
    ("lines", "values"),
    [
        (
            ["My budget is 5000.", "My budget is 8000 now.", "Actually, my budget is 6000."],
            ["5000", "8000", "6000"],
        ),
        (["我的预算是5000", "我的预算现在是8000", "不对，预算应该是6000"], ["5000", "8000", "6000"]),
    ],
    ids=["english", "chinese"],
)
async def test_a_changed_budget_supersedes_the_old_one(
    client: httpx.AsyncClient, worker: Any, lines: list[str], values: list[str]
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await say(client, bank, lines[0])
    await say(client, bank, lines[1])
    active = await memories(client, bank, tag="constraint.budget", status="active")
    assert [values[1] in m["content"] for m in active] == [True]
    [old] = await memories(client, bank, tag="constraint.budget", status="superseded")
    assert values[0] in old["content"]
    assert old["superseded_by"] == active[0]["id"]
    assert active[0]["supersedes"] == old["id"]
    past = await history(client, bank, old["id"])
    superseded = next(a for a in past["actions"] if a["action"] == "superseded")
    assert superseded["actor"] == "resolver"
    assert superseded["details"]["superseded_by"] == active[0]["id"]
    assert datetime.fromisoformat(superseded["at"]) <= datetime.now(UTC)
    assert old["valid_to"] is not None

    await say(client, bank, lines[2])  # a correction: 8000 → 6000
    [head] = await memories(client, bank, tag="constraint.budget", status="active")
    assert values[2] in head["content"]
    assert "correction" in head["tags"]
    chain = (await history(client, bank, head["id"]))["chain"]
    assert [c["status"] for c in chain] == ["superseded", "superseded", "active"]
    assert [v in c["content"] for c, v in zip(chain, values, strict=True)] == [True, True, True]
    # The same lineage read from the oldest unit.
    assert [c["id"] for c in (await history(client, bank, chain[0]["id"]))["chain"]] == [
        c["id"] for c in chain
    ]


@pytest.mark.parametrize(
    ("lines", "now", "before"),
    [
        (
            [
                "My gym locker is 118.",
                "Sorry, I got that wrong: my gym locker is 181, I mixed up the digits.",
            ],
            "181",
            "118",
        ),
        (["我的工位是B区21号。", "我记错了，我的工位是B区12号，刚才把两个区搞混了。"], "12号", "21号"),
    ],
    ids=["english", "chinese"],
)
async def test_the_parts_of_one_correction_both_stay(
    client: httpx.AsyncClient, worker: Any, lines: list[str], now: str, before: str
) -> None:
    # A correction turn cut in two (the value, and why it was wrong): the second part corrects nothing
    # of its own turn; the value said before is what ends.
    bank = await make_bank(client, distill_every_n_turns=1000)
    for line in lines:
        await say(client, bank, line)
    active = [m["content"] for m in await memories(client, bank, status="active")]
    assert any(now in c for c in active), active
    assert not any(before in c and now not in c for c in active), active


async def test_a_conditional_budget_fills_the_slot_at_a_lower_confidence(
    client: httpx.AsyncClient, worker: Any
) -> None:
    """Issue 16: the seeds' "two budgets" confusion is gone: a later conditional budget is the budget
    (its condition in its content, its confidence lower), the firm older one is superseded."""
    bank = await make_bank(client, distill_every_n_turns=1000)
    await say(client, bank, "My budget is 5000.")
    await say(client, bank, "If the configuration can be upgraded I can go to 8000.")
    [active] = await memories(client, bank, tag="constraint.budget", status="active")
    assert "8000" in active["content"]
    assert active["confidence"] < 0.8
    [old] = await memories(client, bank, tag="constraint.budget", status="superseded")
    assert "5000" in old["content"]


async def test_the_same_fact_said_three_times_is_one_unit_with_three_sources(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    for session in ("a", "b", "c"):
        await say(client, bank, "I'm allergic to peanuts.", session=session)
    [unit] = await memories(client, bank, status="active")
    assert unit["content"] == "The user is allergic to peanuts."
    assert len(unit["source"]["event_ids"]) == 3
    assert len(unit["merged_from"]) == 2
    assert unit["confidence"] > 0.9
    merged = await memories(client, bank, status="merged")
    assert {m["merged_into"] for m in merged} == {unit["id"]}
    lineage = await history(client, bank, unit["id"])
    assert sorted(m["id"] for m in lineage["merged_from"]) == sorted(unit["merged_from"])
    assert [a["action"] for a in lineage["actions"]].count("merged_from") == 2


async def test_two_resolvers_at_once_leave_exactly_one_active_budget(
    client: httpx.AsyncClient, app: Any, sql: Any
) -> None:
    from app.resolve.service import resolve_pending

    bank = await make_bank(client)
    for amount in ("5000", "8000", "7000"):
        response = await client.post(
            f"/v1/banks/{bank}/memories",
            json={"content": f"The user's budget is {amount}.", "tags": ["constraint.budget"]},
        )
        assert response.status_code == 202, response.text

    async def resolver() -> dict[str, Any]:
        async with app.state.sessionmaker() as db, db.begin():
            return await resolve_pending(db, bank, embedder=app.state.embedder)

    await asyncio.gather(resolver(), resolver(), resolver())
    await wait_for(lambda: settled(client, bank))
    active = await memories(client, bank, status="active")
    assert len(active) == 1
    assert len(await memories(client, bank, status="superseded")) == 2


async def test_direct_write_patch_and_history(client: httpx.AsyncClient, sql: Any) -> None:
    bank = await make_bank(client)
    written = await client.post(
        f"/v1/banks/{bank}/memories",
        params={"wait": "true"},
        json={
            "content": "Ana prefers aisle seats.",
            "tags": ["preference.travel"],
            "entities": [{"name": "Ana", "type": "person"}],
            "occurred_at": "2026-11-01T09:00:00Z",
        },
    )
    assert written.status_code == 201, written.text
    unit = written.json()["memory"]
    assert unit["status"] == "active"
    assert unit["entities"][0]["name"] == "Ana"
    assert unit["valid_from"].startswith("2026-11-01")

    patched = await client.patch(
        f"/v1/banks/{bank}/memories/{unit['id']}", json={"content": "Ana prefers window seats."}
    )
    assert patched.status_code == 201, patched.text
    new = patched.json()
    assert (new["status"], new["supersedes"], new["tags"]) == ("active", unit["id"], ["preference.travel"])
    old = (await client.get(f"/v1/banks/{bank}/memories/{unit['id']}")).json()
    assert (old["status"], old["superseded_by"]) == ("superseded", new["id"])
    actions = [a["action"] for a in (await history(client, bank, unit["id"]))["actions"]]
    assert actions == ["created", "activated", "updated"]
    assert_problem(
        await client.patch(f"/v1/banks/{bank}/memories/{unit['id']}", json={"importance": 0.9}), 409
    )
    vectors = await sql(
        "SELECT count(*) AS n FROM memory_embeddings WHERE memory_id = :id", id=uuid.UUID(new["id"])
    )
    assert vectors[0]["n"] == 1


async def test_get_shows_source_turns(client: httpx.AsyncClient, worker: Any) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await say(client, bank, "My order number is ORD-77123.")
    [unit] = await memories(client, bank, status="active")
    full = (await client.get(f"/v1/banks/{bank}/memories/{unit['id']}")).json()
    assert [e["content"] for e in full["source"]["events"]] == ["My order number is ORD-77123."]
    assert full["source"]["seqs"] == [1]
    assert await memories(client, bank, entity="ord-77123")
    assert not await memories(client, bank, entity="ORD-00000")


async def test_forget_restore_and_purge_with_the_delete_policy(client: httpx.AsyncClient, sql: Any) -> None:
    bank = await make_bank(client, forgetting_policy="delete")
    unit = await write(client, bank, "The user's locker code is 4411.", ["fact"])
    url = f"/v1/banks/{bank}/memories/{unit['id']}"
    forgotten = await client.delete(url)
    assert forgotten.json()["status"] == "deleted"
    assert not await memories(client, bank, status="active")
    assert (await client.post(f"{url}/restore")).json()["status"] == "active"
    assert_problem(await client.post(f"{url}/restore"), 409)

    key = (await client.post(f"/v1/banks/{bank}/keys", json={"scopes": ["read", "write"]})).json()["key"]
    as_bank = {"Authorization": f"Bearer {key}"}
    assert_problem(await client.delete(url, params={"purge": "true"}, headers=as_bank), 403)
    other = await make_bank(client)
    other_key = (await client.post(f"/v1/banks/{other}/keys", json={})).json()["key"]
    assert_problem(
        await client.delete(url, params={"purge": "true"}, headers={"Authorization": f"Bearer {other_key}"}),
        404,
    )

    purged = await client.delete(
        url, params={"purge": "true"}, headers={"Authorization": f"Bearer {ADMIN_KEY}"}
    )
    assert purged.status_code == 200, purged.text
    assert (purged.json()["status"], purged.json()["content"], purged.json()["claim"]) == (
        "deleted",
        "",
        None,
    )
    row = (
        await sql(
            "SELECT content, search_text, claims::text AS claims, claim_attribute"
            " FROM memory_units WHERE id = :id",
            id=uuid.UUID(unit["id"]),
        )
    )[0]
    assert (row["content"], row["search_text"], row["claims"], row["claim_attribute"]) == ("", "", "[]", None)
    assert (
        await sql(
            "SELECT count(*) AS n FROM memory_embeddings WHERE memory_id = :id", id=uuid.UUID(unit["id"])
        )
    )[0]["n"] == 0
    tomb = await sql(
        "SELECT action, details::text AS details FROM memory_history WHERE memory_id = :id ORDER BY id",
        id=uuid.UUID(unit["id"]),
    )
    assert tomb[-1]["action"] == "purged"
    assert all("4411" not in h["details"] for h in tomb)
    assert_problem(await client.post(f"{url}/restore"), 409)


async def test_the_downweight_policy_keeps_the_unit_at_low_importance(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client, forgetting_policy="downweight")
    unit = await write(client, bank, "The user likes jazz.", ["preference.entertainment"])
    url = f"/v1/banks/{bank}/memories/{unit['id']}"
    forgotten = (await client.delete(url)).json()
    assert forgotten["status"] == "active"
    assert forgotten["importance"] == pytest.approx(unit["importance"] * 0.2)
    restored = (await client.post(f"{url}/restore")).json()
    assert restored["importance"] == pytest.approx(unit["importance"])
    assert "downweighted" in [a["action"] for a in (await history(client, bank, unit["id"]))["actions"]]


async def test_the_never_policy_refuses_to_forget_but_an_admin_purge_erases(
    client: httpx.AsyncClient,
) -> None:
    bank = await make_bank(client, forgetting_policy="never")
    unit = await write(client, bank, "The user's account is ACC-99812.", ["fact.id"])
    url = f"/v1/banks/{bank}/memories/{unit['id']}"
    assert_problem(await client.delete(url), 409)
    assert (await client.get(url)).json()["status"] == "active"
    assert (await client.delete(url, params={"purge": "true"})).json()["content"] == ""


async def test_as_of_answers_what_was_active_then(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    first = await write(client, bank, "The user lives in Berlin.", ["fact.location"])
    between = datetime.now(UTC).isoformat()
    await asyncio.sleep(0.05)
    patched = await client.patch(
        f"/v1/banks/{bank}/memories/{first['id']}", json={"content": "The user lives in Paris."}
    )
    then = await memories(client, bank, as_of=between)
    now = await memories(client, bank, as_of=datetime.now(UTC).isoformat())
    assert [m["id"] for m in then] == [first["id"]]
    assert [m["id"] for m in now] == [patched.json()["id"]]


async def test_no_instant_before_a_purge_brings_the_unit_back(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    unit = await write(client, bank, "The user's budget is 5000 dollars.", ["constraint.budget"])
    then = datetime.now(UTC).isoformat()
    assert [m["id"] for m in await memories(client, bank, as_of=then)] == [unit["id"]]
    purged = await client.delete(f"/v1/banks/{bank}/memories/{unit['id']}", params={"purge": "true"})
    assert purged.status_code == 200, purged.text
    assert await memories(client, bank, as_of=then) == []
    asked = {"query": "what is my budget?", "as_of": then, "min_score": 0}
    answer = ok(await client.post(f"/v1/banks/{bank}/query", json=asked))
    assert unit["id"] not in [m["id"] for m in answer["memories"]]


async def test_list_times_without_an_offset_are_read_in_the_banks_timezone(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client, timezone="Asia/Tokyo")
    unit = await write(client, bank, "The user lives in Osaka.", ["fact.location"])
    tokyo = datetime.now(ZoneInfo("Asia/Tokyo")).replace(tzinfo=None)
    ahead, behind = (f"{(tokyo + timedelta(minutes=m)).isoformat()}" for m in (10, -10))
    assert [m["id"] for m in await memories(client, bank, since=behind)] == [unit["id"]]
    assert [m["id"] for m in await memories(client, bank, until=ahead, as_of=ahead)] == [unit["id"]]
    assert await memories(client, bank, since=ahead) == []


async def test_list_filters_and_pagination(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    for i in range(5):
        await write(client, bank, f"The user needs {i + 2} chairs for room {i}.", ["constraint.quantity"])
    await write(client, bank, "The user prefers tea.", ["preference.food"])
    assert len(await memories(client, bank, tag="constraint")) == 5
    assert len(await memories(client, bank, tag="preference.food")) == 1
    assert not await memories(client, bank, tag="constr")
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await client.get(f"/v1/banks/{bank}/memories", params=params)).json()
        seen += [m["id"] for m in page["memories"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 6


async def test_bad_input(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    unknown = f"/v1/banks/{bank}/memories/{uuid.uuid4()}"
    for response in (
        await client.get(unknown),
        await client.get(f"{unknown}/history"),
        await client.patch(unknown, json={"importance": 0.2}),
        await client.delete(unknown),
        await client.post(f"{unknown}/restore"),
    ):
        assert_problem(response, 404)
    assert_problem(await client.get(f"/v1/banks/{bank}/memories/not-a-uuid"), 422)
    unit = await write(client, bank, "The user drinks oat milk.", ["preference.food"])
    assert_problem(await client.patch(f"/v1/banks/{bank}/memories/{unit['id']}", json={}), 422)
    assert_problem(
        await client.post(f"/v1/banks/{bank}/memories", json={"content": "x", "tags": ["Bad Tag"]}), 422
    )
    assert_problem(await client.get(f"/v1/banks/{bank}/memories", params={"status": "alive"}), 422)
    assert_problem(await client.get(f"/v1/banks/{bank}/memories", params={"cursor": "nope"}), 400)


async def test_a_busy_lock_is_given_up_after_its_timeout(app: Any) -> None:
    from app.db.repositories.locks import xact_lock

    async with app.state.sessionmaker() as holder, holder.begin():
        assert await xact_lock(holder, "resolve/some-bank", 1.0)
        async with app.state.sessionmaker() as other, other.begin():
            assert not await xact_lock(other, "resolve/some-bank", 0.2)
            assert await xact_lock(other, "resolve/another-bank", 0.2)  # the transaction is still usable
