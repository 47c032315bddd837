"""Forgetting that keeps what matters: ages in bank time, durable events, archived not gone, and a guard
against a run that would erase a bank (the clock injected as `now`, never slept)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.conftest import wait_for
from tests.factories import finished_job, make_bank

TWO_YEARS_AGO = datetime.now(UTC) - timedelta(days=730)


async def maintain(
    client: httpx.AsyncClient, task: str, bank: str, now: datetime, **extra: Any
) -> dict[str, Any]:
    response = await client.post(
        f"/v1/admin/maintenance/{task}", json={"bank_id": bank, "now": now.isoformat(), **extra}
    )
    assert response.status_code == 202, response.text
    job = await finished_job(client, response.json()["job_id"])
    assert job["status"] == "succeeded", job["error"]
    return job


async def cycle(client: httpx.AsyncClient, bank: str, now: datetime) -> None:
    for task in ("expire", "decay", "promote", "merge"):
        await maintain(client, task, bank, now)


async def distilled(
    client: httpx.AsyncClient, bank: str, session: str, turns: list[tuple[str, str]], at: datetime
) -> list[dict[str, Any]]:
    events = [
        {"role": role, "content": content, "occurred_at": (at + timedelta(minutes=i)).isoformat()}
        for i, (role, content) in enumerate(turns)
    ]
    response = await client.post(f"/v1/banks/{bank}/sessions/{session}/events", json={"events": events})
    assert response.status_code == 202, response.text
    closed = await client.post(f"/v1/banks/{bank}/sessions/{session}/close")
    assert (await finished_job(client, closed.json()["job_id"]))["status"] == "succeeded"

    async def settled() -> list[dict[str, Any]] | None:
        listed = (await client.get(f"/v1/banks/{bank}/memories", params={"limit": 500})).json()["memories"]
        return listed if listed and all(m["status"] != "pending" for m in listed) else None

    found: list[dict[str, Any]] = await wait_for(settled, within=60)
    return found


def by_status(units: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for unit in units:
        counts[unit["status"]] = counts.get(unit["status"], 0) + 1
    return counts


async def units_of(client: httpx.AsyncClient, bank: str) -> list[dict[str, Any]]:
    listed = await client.get(
        f"/v1/banks/{bank}/memories",
        params={"limit": 500, "status": "active,archived,deleted,superseded,merged"},
    )
    assert listed.status_code == 200, listed.text
    memories: list[dict[str, Any]] = listed.json()["memories"]
    return memories


async def test_a_backfilled_conversation_survives_maintenance_and_ages_from_when_it_was_learned(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    turns = [
        ("user", "I adopted a puppy last week, her name is Luna."),
        ("user", "My favourite food is ramen."),
        ("user", "We talked for hours about old films and jazz records at the party."),
        ("user", "I work at Globex as a data engineer."),
    ]
    await distilled(client, bank, "old", turns, TWO_YEARS_AGO)
    before = await units_of(client, bank)
    active = [u for u in before if u["status"] == "active"]
    assert len(active) >= 3

    # Today: nothing the bank just learned is archived or deleted, though it was said two years ago.
    await cycle(client, bank, datetime.now(UTC) + timedelta(days=1))
    after = await units_of(client, bank)
    assert {u["id"] for u in after if u["status"] == "active"} == {u["id"] for u in active}

    # A hundred days of no use later: chatter is archived, facts and events stay.
    await cycle(client, bank, datetime.now(UTC) + timedelta(days=100))
    later = {u["id"]: u for u in await units_of(client, bank)}
    for unit in active:
        status = later[unit["id"]]["status"]
        if unit["tags"][0].startswith("episode"):
            assert status == "archived", unit
        else:
            assert status == "active", unit
    assert any(u["tags"][0] == "fact.event" and later[u["id"]]["status"] == "active" for u in active)


async def test_life_events_are_dated_facts_that_survive_a_year(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000, timezone="Asia/Shanghai")
    said = datetime(2026, 11, 20, 10, tzinfo=UTC)
    units = await distilled(
        client, bank, "s", [("user", "I adopted a puppy last week."), ("user", "我上个月搬到了成都")], said
    )
    events = [u for u in units if u["tags"][0] == "fact.event"]
    assert len(events) == 2, units
    dated = {u["content"]: u["valid_from"] for u in events}
    puppy = next(v for c, v in dated.items() if "puppy" in c)
    chengdu = next(v for c, v in dated.items() if "成都" in c)
    assert puppy < said.isoformat().replace("+00:00", "Z")  # the week it names, not when it was said
    assert chengdu.startswith("2026-09-30T16:00")  # 2026-10-01 in the bank's zone (UTC+8)

    await cycle(client, bank, datetime.now(UTC) + timedelta(days=365))
    statuses = {u["id"]: u["status"] for u in await units_of(client, bank)}
    assert all(statuses[u["id"]] == "active" for u in events)


async def write(
    client: httpx.AsyncClient, bank: str, content: str, tags: list[str], at: datetime
) -> dict[str, Any]:
    response = await client.post(
        f"/v1/banks/{bank}/memories",
        params={"wait": "true"},
        json={"content": content, "tags": tags, "occurred_at": at.isoformat()},
    )
    assert response.status_code == 201, response.text
    unit: dict[str, Any] = response.json()["memory"]
    return unit


async def test_a_question_about_the_past_reaches_archived_units_of_its_window(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client)
    may = datetime(2023, 5, 14, 12, tzinfo=UTC)
    chat = await write(
        client, bank, "Caroline went to a pottery workshop with her friends.", ["episode"], may
    )
    await maintain(client, "expire", bank, datetime.now(UTC) + timedelta(days=120))  # episode TTL: 90 days
    status = (await client.get(f"/v1/banks/{bank}/memories/{chat['id']}")).json()["status"]
    assert status == "archived"

    scoped = await client.post(
        f"/v1/banks/{bank}/query", json={"query": "What did Caroline do in May 2023?", "min_score": 0}
    )
    assert scoped.status_code == 200, scoped.text
    found = [m for m in scoped.json()["memories"] if m["id"] == chat["id"]]
    assert found
    assert found[0]["status"] == "archived"
    assert "[archived]" in scoped.json()["context"]
    unscoped = await client.post(
        f"/v1/banks/{bank}/query", json={"query": "What did Caroline do?", "min_score": 0}
    )
    assert chat["id"] not in [m["id"] for m in unscoped.json()["memories"]]


async def test_the_share_guard_refuses_a_run_that_would_archive_most_of_a_bank(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client)
    at = datetime.now(UTC) - timedelta(hours=1)
    units = [
        await write(client, bank, f"Ticket TCK-{1000 + i} waits for the courier.", ["task_state"], at)
        for i in range(24)
    ]
    await write(client, bank, "Ida lives in Porto.", ["fact.location"], at)

    refused = await maintain(client, "expire", bank, datetime.now(UTC) + timedelta(days=2))
    assert refused["result"]["refused_banks"][bank] == {"would_archive": 24, "active": 25, "max_share": 0.5}
    assert refused["result"]["banks"] == {}
    statuses = {
        u["id"]: (await client.get(f"/v1/banks/{bank}/memories/{u['id']}")).json()["status"] for u in units
    }
    assert set(statuses.values()) == {"active"}

    forced = await maintain(client, "expire", bank, datetime.now(UTC) + timedelta(days=2), force=True)
    assert forced["result"]["banks"][bank] == {"archived": 24}


async def test_life_events_accumulate_and_never_replace_each_other(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    at = datetime(2023, 5, 7, 12, tzinfo=UTC)
    units = []
    for place, days in (("Boston", 0), ("Denver", 30)):
        response = await client.post(
            f"/v1/banks/{bank}/memories",
            params={"wait": "true"},
            json={
                "content": f"Caroline went to a support group meeting in {place}.",
                "tags": ["fact.event"],
                "occurred_at": (at + timedelta(days=days)).isoformat(),
                "entities": [{"name": "Caroline", "type": "person"}, {"name": place, "type": "place"}],
            },
        )
        assert response.status_code == 201, response.text
        units.append(response.json()["memory"])
    for unit in units:  # same tag, same person, another place: still two events, not an update
        assert (await client.get(f"/v1/banks/{bank}/memories/{unit['id']}")).json()["status"] == "active"


async def test_a_restored_unit_ages_from_its_restoration(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    """Restoring an episode the bank learned 100 days ago (its kind expires after 90) confirms it: the next
    expiry leaves it in force."""
    bank = await make_bank(client)
    response = await client.post(
        f"/v1/banks/{bank}/memories",
        params={"wait": "true"},
        json={"content": "The user went kayaking on the lake.", "tags": ["episode"]},
    )
    unit = response.json()["memory"]
    await sql(
        "UPDATE memory_units SET created_at = now() - interval '100 days' WHERE id = :id",
        id=uuid.UUID(unit["id"]),
    )
    assert (await client.delete(f"/v1/banks/{bank}/memories/{unit['id']}")).status_code == 200
    restored = await client.post(f"/v1/banks/{bank}/memories/{unit['id']}/restore")
    assert restored.json()["status"] == "active", restored.text
    await maintain(client, "expire", bank, datetime.now(UTC))
    assert (await client.get(f"/v1/banks/{bank}/memories/{unit['id']}")).json()["status"] == "active"
