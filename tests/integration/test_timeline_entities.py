"""The timeline ("memory replay") and the entity graph, on conversations distilled by the real
worker (heuristic distiller, local embedding model, PostgreSQL, Redis)."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.conftest import Stack, assert_problem, wait_for

T0 = "2026-11-30T10:00:00+00:00"
CHAT = [
    "Hi, I'm Dana.",
    "I live in Berlin and work at Acme Corp.",
    "My order number is ORD-12345.",
    "I prefer window seats.",
]
OTHER = ["My budget is 5000."]
TZ = "Asia/Tokyo"


Write = Callable[..., Awaitable[None]]


@pytest.fixture
async def write(stack: Stack) -> AsyncIterator[Write]:
    """Run a writing statement and commit it (the `sql` fixture's connection rolls back)."""
    engine = create_async_engine(stack.database_url)

    async def run(statement: str, **params: Any) -> None:
        async with engine.begin() as conn:
            await conn.execute(text(statement), params)

    yield run
    await engine.dispose()


def turns(lines: list[str], speaker: str = "Dana") -> list[dict[str, Any]]:
    return [{"role": "user", "content": c, "speaker": speaker, "occurred_at": T0} for c in lines]


async def make_bank(client: httpx.AsyncClient, **config: Any) -> str:
    bank = f"bank-{uuid.uuid4().hex[:12]}"
    response = await client.post(
        "/v1/banks", json={"bank_id": bank, "config": {"distill_every_n_turns": 1000, **config}}
    )
    assert response.status_code == 201, response.text
    return bank


async def distill(client: httpx.AsyncClient, sql: Any, bank: str, session: str) -> str:
    """Distil a session now; return once its job and every job it started have finished."""
    response = await client.post(f"/v1/banks/{bank}/sessions/{session}/distill")
    assert response.status_code == 202, response.text
    job_id: str = response.json()["job_id"]

    async def settled() -> bool:
        rows = await sql(
            "SELECT"
            " (SELECT count(*) FROM jobs WHERE bank_id = :bank AND finished_at IS NULL) AS running,"
            " (SELECT count(*) FROM memory_units WHERE bank_id = :bank AND status = 'pending') AS pending,"
            " (SELECT status FROM jobs WHERE id = CAST(:job AS uuid)) AS status",
            bank=bank,
            job=job_id,
        )
        row = rows[0]
        return bool(row["running"] == 0 and row["pending"] == 0 and row["status"] == "succeeded")

    await wait_for(settled, within=60)
    return job_id


async def conversation(client: httpx.AsyncClient, sql: Any) -> tuple[str, str, str]:
    """A bank (time zone Asia/Tokyo) with two distilled sessions: `chat` (Dana) and `other`.
    Returns the bank and the two distillation job ids."""
    bank = await make_bank(client, timezone=TZ)
    for session, lines in (("chat", CHAT), ("other", OTHER)):
        response = await client.post(
            f"/v1/banks/{bank}/sessions/{session}/events", json={"events": turns(lines)}
        )
        assert response.status_code == 202, response.text
    chat_job = await distill(client, sql, bank, "chat")
    other_job = await distill(client, sql, bank, "other")
    return bank, chat_job, other_job


async def timeline(client: httpx.AsyncClient, bank: str, **params: Any) -> list[dict[str, Any]]:
    response = await client.get(f"/v1/banks/{bank}/timeline", params={"limit": 500, **params})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["next_cursor"] is None
    items: list[dict[str, Any]] = body["items"]
    return items


def at(item: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(item["at"])


def index(items: list[dict[str, Any]], item_id: str) -> int:
    return next(i for i, item in enumerate(items) if item["id"] == item_id)


async def test_timeline_replays_appends_jobs_and_transitions_in_order(
    client: httpx.AsyncClient, worker: Any, sql: Any, write: Write
) -> None:
    bank, chat_job, other_job = await conversation(client, sql)
    units = await sql(
        "SELECT id, content, session_id, status FROM memory_units WHERE bank_id = :bank", bank=bank
    )
    assert units
    assert all(u["status"] == "active" for u in units)
    where = next(u for u in units if "Berlin" in u["content"])
    await write(
        "INSERT INTO query_log (bank_id, query, params, result_ids, took_ms)"
        " VALUES (:bank, 'where does Dana live?', CAST(:params AS jsonb), ARRAY[CAST(:mid AS uuid)], 12.5)",
        bank=bank,
        params=json.dumps({"top_k": 5}),
        mid=str(where["id"]),
    )

    items = await timeline(client, bank)
    assert [at(i) for i in items] == sorted(at(i) for i in items)
    assert len({i["id"] for i in items}) == len(items)

    events = [i for i in items if i["kind"] == "event"]
    assert [(e["session_id"], e["seq"], e["content"]) for e in events] == [
        ("chat", n, line) for n, line in enumerate(CHAT, 1)
    ] + [("other", 1, OTHER[0])]
    assert all(e["role"] == "user" and e["speaker"] == "Dana" for e in events)
    assert all(isinstance(e["event_id"], int) and not e["content_truncated"] for e in events)

    # Both distillations, and the resolutions they started, once created and once finished.
    jobs = [i for i in items if i["kind"] == "job"]
    for job_id in (chat_job, other_job):
        created, finished = index(items, f"job:{job_id}:created"), index(items, f"job:{job_id}:finished")
        assert created < finished
        assert items[created]["phase"] == "created"
        assert items[created]["status"] == "queued"
        assert items[finished]["job_kind"] == "distill.session"
        assert items[finished]["status"] == "succeeded"
        assert items[finished]["error"] is None
    resolves = [j for j in jobs if j["job_kind"] == "resolve.bank"]
    assert {j["phase"] for j in resolves} == {"created", "finished"}
    assert all(j["status"] == "succeeded" for j in resolves if j["phase"] == "finished")

    # Every unit: created (pending) after the appends and its job, then activated.
    last_chat_event = index(items, events[len(CHAT) - 1]["id"])
    for unit in units:
        rows = [i for i in items if i["kind"] == "memory" and i["memory_id"] == str(unit["id"])]
        actions = [r["action"] for r in rows]
        assert actions[:1] == ["created"], actions
        assert "activated" in actions, actions
        created = index(items, rows[0]["id"])
        activated = index(items, rows[actions.index("activated")]["id"])
        assert rows[0]["details"]["to"] == "pending"
        assert rows[actions.index("activated")]["details"] == {
            **rows[actions.index("activated")]["details"],
            "from": "pending",
            "to": "active",
        }
        assert all(r["content"] == unit["content"] and r["session_id"] == unit["session_id"] for r in rows)
        job = chat_job if unit["session_id"] == "chat" else other_job
        assert last_chat_event < index(items, f"job:{job}:created") < created < activated
        assert created < index(items, f"job:{job}:finished")

    [query] = [i for i in items if i["kind"] == "query"]
    assert query["query"] == "where does Dana live?"
    assert query["result_ids"] == [str(where["id"])]
    assert query["took_ms"] == 12.5
    assert query["params"] == {"top_k": 5}
    assert query == items[-1]  # logged after everything else

    # A purged unit shows no content: neither its own (blanked) nor any copy in history details.
    await write("UPDATE memory_units SET content = '', status = 'deleted' WHERE id = :id", id=where["id"])
    await write(
        "INSERT INTO memory_history (bank_id, memory_id, action, actor, details)"
        " VALUES (:bank, :id, 'purged', 'api', CAST(:details AS jsonb))",
        bank=bank,
        id=where["id"],
        details=json.dumps({"from": "active", "to": "deleted", "content": where["content"]}),
    )
    rows = [i for i in await timeline(client, bank, kinds="memory") if i["memory_id"] == str(where["id"])]
    assert rows[-1]["action"] == "purged"
    assert rows[-1]["details"] == {"from": "active", "to": "deleted"}
    assert all(r["content"] is None for r in rows)
    assert "Berlin" not in json.dumps(rows)


async def test_timeline_filters_by_kind_window_and_session(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    bank, chat_job, other_job = await conversation(client, sql)
    everything = await timeline(client, bank)

    only = await timeline(client, bank, kinds="event, job")
    assert {i["kind"] for i in only} == {"event", "job"}
    assert only == [i for i in everything if i["kind"] in ("event", "job")]
    assert [i["kind"] for i in await timeline(client, bank, kinds="memory")] == ["memory"] * sum(
        i["kind"] == "memory" for i in everything
    )

    # [from, to): from the first distillation's creation on, and everything before it.
    start = at(everything[index(everything, f"job:{chat_job}:created")])
    after = await timeline(client, bank, **{"from": start.isoformat()})
    assert after == [i for i in everything if at(i) >= start]
    assert after[0]["id"] == f"job:{chat_job}:created"
    before = await timeline(client, bank, to=start.isoformat())
    assert before == [i for i in everything if at(i) < start]
    assert {i["kind"] for i in before} == {"event"}
    # Without an offset, a timestamp is read in the bank's time zone (Asia/Tokyo here).
    local = start.astimezone(ZoneInfo(TZ)).replace(tzinfo=None).isoformat()
    assert await timeline(client, bank, **{"from": local}) == after
    end = at(everything[index(everything, f"job:{chat_job}:finished")])
    window = await timeline(client, bank, **{"from": start.isoformat(), "to": end.isoformat()})
    assert window == [i for i in everything if start <= at(i) < end]
    assert window
    assert {i["kind"] for i in window} <= {"memory", "job"}

    # A session: its events and its units' transitions; jobs naming another session are left out.
    units = await sql("SELECT id, session_id FROM memory_units WHERE bank_id = :bank", bank=bank)
    other_units = {str(u["id"]) for u in units if u["session_id"] == "other"}
    assert other_units
    assert len(other_units) < len(units)
    other = await timeline(client, bank, session_id="other")
    assert [(i["session_id"], i["seq"]) for i in other if i["kind"] == "event"] == [("other", 1)]
    assert {i["memory_id"] for i in other if i["kind"] == "memory"} == other_units
    job_ids = {i["job_id"] for i in other if i["kind"] == "job"}
    assert other_job in job_ids
    assert chat_job not in job_ids
    assert any(i["job_kind"] == "resolve.bank" for i in other if i["kind"] == "job")
    assert other == [
        i
        for i in everything
        if (i["kind"] == "event" and i["session_id"] == "other")
        or (i["kind"] == "memory" and i["memory_id"] in other_units)
        or (i["kind"] == "job" and i["job_id"] != chat_job)
    ]
    assert await timeline(client, bank, session_id="nobody", kinds="event,memory") == []


async def test_timeline_pages_return_every_item_exactly_once(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    bank, _, _ = await conversation(client, sql)
    everything = await timeline(client, bank)
    # The four turns of one append share one timestamp: pages of 3 split them.
    assert len({i["at"] for i in everything if i["kind"] == "event"}) < len(CHAT)

    for params in ({}, {"kinds": "memory,job"}, {"session_id": "chat"}):
        expected = await timeline(client, bank, **params)
        seen: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = await client.get(
                f"/v1/banks/{bank}/timeline",
                params={"limit": 3, **params, **({"cursor": cursor} if cursor else {})},
            )
            assert page.status_code == 200, page.text
            body = page.json()
            assert len(body["items"]) <= 3
            seen += body["items"]
            cursor = body["next_cursor"]
            if cursor is None:
                break
        assert seen == expected
    # An exact page: no cursor to an empty one.
    exact = await client.get(f"/v1/banks/{bank}/timeline", params={"limit": len(everything)})
    assert exact.json()["next_cursor"] is None


async def test_timeline_cuts_long_turns(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    long = "Dana said: " + "la " * 200
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": turns([long, "short"])})
    first, second = await timeline(client, bank)
    assert first["content"] == long[:280]
    assert first["content_truncated"] is True
    assert (second["content"], second["content_truncated"]) == ("short", False)
    assert (first["id"], first["seq"], second["seq"]) == (f"event:{first['event_id']}", 1, 2)


def cursor_of(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "not-a-cursor!",
        cursor_of({"id": 3}),
        cursor_of({"after": 3}),
        cursor_of({"after": "yesterday|0|00000000000000000001"}),
        cursor_of({"after": "2026-11-30T10:00:00|0|00000000000000000001"}),  # no offset
        cursor_of({"after": "2026-11-30T10:00:00+00:00|9|00000000000000000001"}),
        cursor_of({"after": "2026-11-30T10:00:00+00:00|0|1\x00"}),
    ],
)
async def test_timeline_refuses_a_bad_cursor(client: httpx.AsyncClient, bank_id: str, cursor: str) -> None:
    assert_problem(await client.get(f"/v1/banks/{bank_id}/timeline", params={"cursor": cursor}), 400)


async def test_timeline_validates_its_input_and_hides_other_banks(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    url = f"/v1/banks/{bank}/timeline"
    body = assert_problem(await client.get(url, params={"kinds": "event,bogus"}), 422)
    assert "bogus" in json.dumps(body["errors"])
    assert_problem(await client.get(url, params={"kinds": ","}), 422)
    assert_problem(await client.get(url, params={"limit": 0}), 422)
    assert_problem(await client.get(url, params={"limit": 501}), 422)
    assert_problem(await client.get(url, params={"from": "last tuesday"}), 422)
    assert_problem(await client.get(url, params={"from": T0, "to": "2026-11-29T00:00:00Z"}), 422)
    assert_problem(await client.get(url, params={"session_id": "bad id!"}), 422)
    assert (await client.get(url)).json() == {"items": [], "next_cursor": None}

    other = await make_bank(client)
    key = (await client.post(f"/v1/banks/{other}/keys", json={"scopes": ["read"]})).json()["key"]
    as_other = {"Authorization": f"Bearer {key}"}
    assert_problem(await client.get(url, headers=as_other), 404)
    assert (await client.get(f"/v1/banks/{other}/timeline", headers=as_other)).status_code == 200
    assert_problem(await client.get("/v1/banks/nope/timeline"), 404)


async def entities(client: httpx.AsyncClient, bank: str, **params: Any) -> list[dict[str, Any]]:
    response = await client.get(f"/v1/banks/{bank}/entities", params={"limit": 500, **params})
    assert response.status_code == 200, response.text
    assert response.json()["next_cursor"] is None
    found: list[dict[str, Any]] = response.json()["entities"]
    return found


async def test_entities_are_found_by_name_and_type(client: httpx.AsyncClient, worker: Any, sql: Any) -> None:
    bank, _, _ = await conversation(client, sql)
    everything = await entities(client, bank)
    names = [e["name"] for e in everything]
    assert {"Dana", "Berlin", "Acme Corp", "ORD-12345"} <= set(names)
    assert names == sorted(names, key=lambda n: n.casefold())
    assert {e["type"] for e in everything if e["name"] in ("Dana", "Berlin", "ORD-12345")} == {
        "person",
        "place",
        "id",
    }

    assert [e["name"] for e in await entities(client, bank, q="BERL")] == ["Berlin"]
    assert [e["name"] for e in await entities(client, bank, q="acme  corp")] == ["Acme Corp"]
    [order] = await entities(client, bank, q="ord-123")
    assert (order["name"], order["type"], order["mentions"]) == ("ORD-12345", "id", 1)
    assert await entities(client, bank, q="%") == []  # LIKE wildcards are plain characters
    assert await entities(client, bank, q="nobody") == []

    [dana] = await entities(client, bank, q="dana", type="person")
    linked = await sql(
        "SELECT count(*) AS n FROM memory_entities WHERE entity_id = :id", id=uuid.UUID(dana["id"])
    )
    assert dana["mentions"] == linked[0]["n"] >= 3
    assert {"id", "name", "type", "mentions", "created_at", "updated_at"} == dana.keys()
    assert all(e["type"] == "place" for e in await entities(client, bank, type="place"))

    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        body = (await client.get(f"/v1/banks/{bank}/entities", params=params)).json()
        seen += body["entities"]
        if (cursor := body["next_cursor"]) is None:
            break
    assert seen == everything
    assert_problem(await client.get(f"/v1/banks/{bank}/entities", params={"cursor": "zzz"}), 400)
    bad = cursor_of({"after": "not-a-uuid|berlin"})
    assert_problem(await client.get(f"/v1/banks/{bank}/entities", params={"cursor": bad}), 400)
    assert_problem(await client.get(f"/v1/banks/{bank}/entities", params={"q": "a\x00b"}), 422)


async def test_entity_detail_shows_relations_and_mentioning_units(
    client: httpx.AsyncClient, worker: Any, sql: Any, write: Write
) -> None:
    bank, _, _ = await conversation(client, sql)
    [berlin] = await entities(client, bank, q="berlin")
    [dana] = await entities(client, bank, q="dana")

    detail = (await client.get(f"/v1/banks/{bank}/entities/{berlin['id']}")).json()
    assert detail["entity"] == berlin
    [lives] = [r for r in detail["relations"] if r["relation"] == "lives_in"]
    assert lives["subject"] == {"id": dana["id"], "name": "Dana", "type": "person"}
    assert lives["object"] == {"id": berlin["id"], "name": "Berlin", "type": "place"}
    assert 0 < lives["confidence"] <= 1
    [unit] = detail["memories"]
    assert unit["id"] == lives["memory_id"]
    assert "Berlin" in unit["content"]
    assert unit["status"] == "active"
    assert unit["tags"] == ["fact.location"]
    assert {"id", "content", "tags", "status", "confidence", "importance", "created_at"} == unit.keys()

    about_dana = (await client.get(f"/v1/banks/{bank}/entities/{dana['id']}")).json()
    assert {(r["relation"], r["object"]["name"]) for r in about_dana["relations"]} >= {("lives_in", "Berlin")}
    # "prefers window seats" is a description, not a thing with a name: no entity node (issue 16)
    assert await entities(client, bank, q="window seats") == []
    assert all(dana["id"] in (r["subject"]["id"], r["object"]["id"]) for r in about_dana["relations"])
    contents = [m["content"] for m in about_dana["memories"]]
    assert len(contents) == dana["mentions"]
    assert any("ORD-12345" in c for c in contents)
    assert any("window seats" in c for c in contents)
    created = [m["created_at"] for m in about_dana["memories"]]
    assert created == sorted(created, reverse=True)
    limited = (await client.get(f"/v1/banks/{bank}/entities/{dana['id']}", params={"limit": 1})).json()
    assert len(limited["memories"]) == 1
    assert len(limited["relations"]) == 1

    # Statuses: active and pending by default; others on request.
    await write("UPDATE memory_units SET status = 'superseded' WHERE id = :id", id=uuid.UUID(unit["id"]))
    url = f"/v1/banks/{bank}/entities/{berlin['id']}"
    assert (await client.get(url)).json()["memories"] == []
    chosen = (await client.get(url, params={"statuses": "active,superseded"})).json()["memories"]
    assert [(m["id"], m["status"]) for m in chosen] == [(unit["id"], "superseded")]
    assert_problem(await client.get(url, params={"statuses": "active,bogus"}), 422)
    assert_problem(await client.get(url, params={"limit": 0}), 422)


async def test_entity_detail_is_404_for_unknown_and_other_banks(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    bank = await make_bank(client)
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": turns(CHAT[1:2])})
    await distill(client, sql, bank, "s")
    [berlin] = await entities(client, bank, q="berlin")
    assert (await client.get(f"/v1/banks/{bank}/entities/{berlin['id']}")).status_code == 200

    assert_problem(await client.get(f"/v1/banks/{bank}/entities/{uuid.uuid4()}"), 404)
    assert_problem(await client.get(f"/v1/banks/{bank}/entities/not-a-uuid"), 422)
    other = await make_bank(client)
    assert_problem(await client.get(f"/v1/banks/{other}/entities/{berlin['id']}"), 404)
    assert await entities(client, other) == []
    key = (await client.post(f"/v1/banks/{other}/keys", json={"scopes": ["read"]})).json()["key"]
    as_other = {"Authorization": f"Bearer {key}"}
    assert_problem(await client.get(f"/v1/banks/{bank}/entities/{berlin['id']}", headers=as_other), 404)
    assert_problem(await client.get(f"/v1/banks/{bank}/entities", headers=as_other), 404)


async def test_a_relation_said_again_after_its_unit_went_follows_the_new_unit(
    client: httpx.AsyncClient, sql: Any
) -> None:
    """One row per (subject, relation, object): a unit that states a triple whose unit is no longer live
    (forgotten, superseded, retired by a replay) takes it over, or the entity channel would drop it."""
    from tests.factories import make_bank, write

    bank = await make_bank(client)
    first = await write(client, bank, "Dana lives in Berlin.", ["fact.location"])
    query = "SELECT memory_id FROM relations WHERE bank_id = :bank AND relation = 'lives_in'"
    assert [str(r["memory_id"]) for r in await sql(query, bank=bank)] == [first["id"]]
    assert (await client.delete(f"/v1/banks/{bank}/memories/{first['id']}")).status_code == 200
    again = await write(client, bank, "Dana lives in Berlin, near the Spree.", ["fact.location"])
    assert [str(r["memory_id"]) for r in await sql(query, bank=bank)] == [again["id"]]
