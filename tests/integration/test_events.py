from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.events.working_memory import WorkingMemory, working_memory_key
from tests.conftest import assert_problem


def turns(n: int, prefix: str = "turn", **extra: Any) -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{prefix} {i}", **extra} for i in range(n)
    ]


async def all_events(client: httpx.AsyncClient, bank_id: str, session: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 500, **({"cursor": cursor} if cursor else {})}
        response = await client.get(f"/v1/banks/{bank_id}/sessions/{session}/events", params=params)
        assert response.status_code == 200, response.text
        events += response.json()["events"]
        cursor = response.json()["next_cursor"]
        if cursor is None:
            return events


async def test_append_one_and_read_back(client: httpx.AsyncClient, bank_id: str) -> None:
    response = await client.post(
        f"/v1/banks/{bank_id}/sessions/s-1/events",
        json={
            "events": [
                {
                    "role": "user",
                    "content": "My order is ORD-12345",
                    "speaker": "Ana",
                    "occurred_at": "2025-01-15T10:00:00+01:00",
                    "external_id": "m1",
                    "metadata": {"channel": "chat", "nested": {"a": [1, 2]}},
                }
            ]
        },
    )
    assert response.status_code == 202
    assert response.json() == {
        "session_id": "s-1",
        "appended": 1,
        "first_seq": 1,
        "last_seq": 1,
        "duplicates": 0,
        "distill_job_id": None,
    }
    [event] = await all_events(client, bank_id, "s-1")
    assert event["seq"] == 1
    assert event["content"] == "My order is ORD-12345"
    assert event["speaker"] == "Ana"
    assert event["external_id"] == "m1"
    assert event["occurred_at"] == "2025-01-15T09:00:00Z"
    assert event["metadata"] == {"channel": "chat", "nested": {"a": [1, 2]}}
    session = (await client.get(f"/v1/banks/{bank_id}/sessions/s-1")).json()
    assert session["last_seq"] == 1
    assert session["distilled_seq"] == 0
    assert session["status"] == "open"
    assert session["last_event_at"] == "2025-01-15T09:00:00Z"


async def test_append_1000_in_one_batch_and_page_through(client: httpx.AsyncClient, bank_id: str) -> None:
    response = await client.post(f"/v1/banks/{bank_id}/sessions/big/events", json={"events": turns(1000)})
    assert response.status_code == 202
    assert response.json()["first_seq"] == 1
    assert response.json()["last_seq"] == 1000
    events = await all_events(client, bank_id, "big")
    assert [e["seq"] for e in events] == list(range(1, 1001))
    assert [e["content"] for e in events] == [f"turn {i}" for i in range(1000)]
    tail = (await client.get(f"/v1/banks/{bank_id}/sessions/big/events", params={"after_seq": 995})).json()[
        "events"
    ]
    assert [e["seq"] for e in tail] == [996, 997, 998, 999, 1000]


async def test_repeated_external_ids_are_counted_duplicates(client: httpx.AsyncClient, bank_id: str) -> None:
    url = f"/v1/banks/{bank_id}/sessions/retry/events"
    batch = {"events": [{"role": "user", "content": f"m{i}", "external_id": f"id-{i}"} for i in range(3)]}
    first = await client.post(url, json=batch)
    again = await client.post(url, json=batch)  # a client retry after a lost response
    assert first.json()["appended"] == 3
    assert again.status_code == 202
    assert again.json() == {
        "session_id": "retry",
        "appended": 0,
        "first_seq": None,
        "last_seq": None,
        "duplicates": 3,
        "distill_job_id": None,
    }
    overlap = await client.post(
        url,
        json={
            "events": [
                {"role": "user", "content": "m2", "external_id": "id-2"},
                {"role": "user", "content": "m3", "external_id": "id-3"},
                {"role": "user", "content": "m3 again", "external_id": "id-3"},
                {"role": "user", "content": "no id"},
            ]
        },
    )
    assert overlap.json() == {
        "session_id": "retry",
        "appended": 2,
        "first_seq": 4,
        "last_seq": 5,
        "duplicates": 2,
        "distill_job_id": overlap.json()["distill_job_id"],
    }
    assert overlap.json()["distill_job_id"]  # five turns: the distillation it started
    events = await all_events(client, bank_id, "retry")
    assert [(e["seq"], e["content"]) for e in events] == [
        (1, "m0"),
        (2, "m1"),
        (3, "m2"),
        (4, "m3"),
        (5, "no id"),
    ]
    # the same external_id in another session is a different turn
    other = await client.post(f"/v1/banks/{bank_id}/sessions/other/events", json=batch)
    assert other.json()["appended"] == 3


async def test_concurrent_appenders_get_gapless_unique_seqs(app: Any, bank_id: str) -> None:
    from tests.conftest import ADMIN_KEY, make_client

    clients, rounds = 24, 6

    async def appender(n: int) -> list[tuple[int, int]]:
        ranges = []
        async with make_client(app, ADMIN_KEY) as c:
            for r in range(rounds):
                size = 1 + (n + r) % 3
                response = await c.post(
                    f"/v1/banks/{bank_id}/sessions/hot/events",
                    json={"events": turns(size, prefix=f"c{n}r{r}")},
                )
                assert response.status_code == 202, response.text
                body = response.json()
                assert body["last_seq"] - body["first_seq"] + 1 == size
                ranges.append((body["first_seq"], body["last_seq"]))
        return ranges

    results = await asyncio.gather(*(appender(n) for n in range(clients)))
    expected = sum(1 + (n + r) % 3 for n in range(clients) for r in range(rounds))
    acknowledged = sorted(seq for ranges in results for lo, hi in ranges for seq in range(lo, hi + 1))
    assert acknowledged == list(range(1, expected + 1))
    async with app.state.engine.connect() as conn:
        seqs = (
            (
                await conn.execute(
                    text("SELECT seq FROM events WHERE bank_id = :b AND session_id = 'hot' ORDER BY seq"),
                    {"b": bank_id},
                )
            )
            .scalars()
            .all()
        )
        last_seq = (
            await conn.execute(
                text("SELECT last_seq FROM sessions WHERE bank_id = :b AND session_id = 'hot'"),
                {"b": bank_id},
            )
        ).scalar_one()
    assert list(seqs) == list(range(1, expected + 1))
    assert last_seq == expected


async def test_naive_timestamps_are_read_in_the_bank_timezone(client: httpx.AsyncClient) -> None:
    bank = "tz-" + bank_suffix()
    await client.post("/v1/banks", json={"bank_id": bank, "config": {"timezone": "Asia/Shanghai"}})
    await client.post(
        f"/v1/banks/{bank}/sessions/s/events",
        json={"events": [{"role": "user", "content": "x", "occurred_at": "2025-01-15T10:00:00"}]},
    )
    [event] = await all_events(client, bank, "s")
    assert event["occurred_at"] == "2025-01-15T02:00:00Z"


def bank_suffix() -> str:
    import uuid

    return uuid.uuid4().hex[:10]


BAD_BODIES: list[tuple[str, Any, int]] = [
    ("no events", {"events": []}, 422),
    ("too many events", {"events": turns(1001)}, 422),
    ("missing events", {}, 422),
    ("unknown role", {"events": [{"role": "robot", "content": "x"}]}, 422),
    ("empty content", {"events": [{"role": "user", "content": ""}]}, 422),
    ("content too long", {"events": [{"role": "user", "content": "x" * 32_001}]}, 422),
    ("content not a string", {"events": [{"role": "user", "content": {"a": 1}}]}, 422),
    (
        "bad timestamp",
        {"events": [{"role": "user", "content": "x", "occurred_at": "yesterday-ish"}]},
        422,
    ),
    (
        "impossible date",
        {"events": [{"role": "user", "content": "x", "occurred_at": "2025-02-30T10:00:00Z"}]},
        422,
    ),
    ("NUL in content", {"events": [{"role": "user", "content": "a\u0000b"}]}, 422),
    ("lone surrogate", {"events": [{"role": "user", "content": "a\ud800b"}]}, 422),
    (
        "NUL in metadata",
        {"events": [{"role": "user", "content": "x", "metadata": {"k": "\u0000"}}]},
        422,
    ),
    (
        "deep metadata",
        {
            "events": [
                {
                    "role": "user",
                    "content": "x",
                    "metadata": json.loads('{"a":' * 20 + "1" + "}" * 20),
                }
            ]
        },
        422,
    ),
    ("unknown field", {"events": [{"role": "user", "content": "x", "colour": "red"}]}, 422),
    (
        "metadata not an object",
        {"events": [{"role": "user", "content": "x", "metadata": [1]}]},
        422,
    ),
    ("valid then invalid", {"events": [*turns(5), {"role": "user", "content": ""}]}, 422),
]


@pytest.mark.parametrize(("case", "body", "status"), BAD_BODIES, ids=[c[0] for c in BAD_BODIES])
async def test_bad_input_is_refused_and_changes_nothing(
    client: httpx.AsyncClient, bank_id: str, case: str, body: Any, status: int
) -> None:
    url = f"/v1/banks/{bank_id}/sessions/s/events"
    await client.post(url, json={"events": turns(2)})
    content = json.dumps(body, ensure_ascii=True).encode()
    response = await client.post(url, content=content, headers={"content-type": "application/json"})
    problem = assert_problem(response, status)
    assert problem["errors"], case
    assert len(await all_events(client, bank_id, "s")) == 2


async def test_malformed_json_and_oversize_body(client: httpx.AsyncClient, bank_id: str) -> None:
    url = f"/v1/banks/{bank_id}/sessions/s/events"
    broken = await client.post(url, content=b'{"events": [', headers={"content-type": "application/json"})
    assert_problem(broken, 400)
    huge = {"events": [{"role": "user", "content": "x" * 30_000} for _ in range(80)]}  # ~2.4 MB
    assert_problem(await client.post(url, json=huge), 413)

    async def chunks() -> Any:  # no Content-Length: the limit still holds
        for _ in range(40):
            yield b"x" * 65_536

    assert_problem(await client.post(url, content=chunks()), 413)
    assert_problem(await client.get(f"/v1/banks/{bank_id}/sessions/s"), 404)


@pytest.mark.parametrize("session", ["has space", "a/b", "x" * 129, "ünï"])
async def test_bad_session_ids_are_refused(client: httpx.AsyncClient, bank_id: str, session: str) -> None:
    response = await client.post(f"/v1/banks/{bank_id}/sessions/{session}/events", json={"events": turns(1)})
    assert response.status_code in (404, 422)
    assert response.headers["content-type"].startswith("application/problem+json")
    assert (await client.get(f"/v1/banks/{bank_id}/sessions")).json()["sessions"] == []


async def test_unknown_bank_session_and_bad_listing_params(client: httpx.AsyncClient, bank_id: str) -> None:
    assert_problem(await client.post("/v1/banks/nope-404/sessions/s/events", json={"events": turns(1)}), 404)
    assert_problem(await client.get(f"/v1/banks/{bank_id}/sessions/missing"), 404)
    assert_problem(await client.get(f"/v1/banks/{bank_id}/sessions/missing/events"), 404)
    await client.post(f"/v1/banks/{bank_id}/sessions/s/events", json={"events": turns(1)})
    assert_problem(await client.get(f"/v1/banks/{bank_id}/sessions/s/events", params={"after_seq": -1}), 422)
    assert_problem(await client.get(f"/v1/banks/{bank_id}/sessions/s/events", params={"limit": 0}), 422)
    assert_problem(await client.get(f"/v1/banks/{bank_id}/sessions/s/events", params={"cursor": "e30"}), 400)
    assert_problem(await client.get("/v1/nowhere"), 404)
    assert_problem(await client.put(f"/v1/banks/{bank_id}"), 405)


async def test_close_and_reopen(client: httpx.AsyncClient, bank_id: str) -> None:
    url = f"/v1/banks/{bank_id}/sessions/c"
    await client.post(f"{url}/events", json={"events": turns(2)})
    closed = await client.post(f"{url}/close")
    assert closed.status_code == 200
    assert closed.json()["status"] == "closed"
    await client.post(f"{url}/events", json={"events": turns(1)})
    session = (await client.get(url)).json()
    assert session["status"] == "open"
    assert session["last_seq"] == 3
    assert_problem(await client.post(f"/v1/banks/{bank_id}/sessions/never/close"), 404)


async def test_events_are_append_only_in_the_database(
    app: Any, client: httpx.AsyncClient, bank_id: str
) -> None:
    await client.post(f"/v1/banks/{bank_id}/sessions/s/events", json={"events": turns(1)})
    for statement in (
        "UPDATE events SET content = 'forged' WHERE bank_id = :b",
        "DELETE FROM events WHERE bank_id = :b",
    ):
        async with app.state.engine.connect() as conn:
            with pytest.raises(DBAPIError, match="append-only"):
                await conn.execute(text(statement), {"b": bank_id})
    assert [e["content"] for e in await all_events(client, bank_id, "s")] == ["turn 0"]


async def test_appends_fill_working_memory(app: Any, client: httpx.AsyncClient, bank_id: str) -> None:
    await client.post(f"/v1/banks/{bank_id}/sessions/wm/events", json={"events": turns(60)})
    raw = await app.state.redis.lrange(working_memory_key(bank_id, "wm"), 0, -1)
    buffered = [json.loads(item) for item in raw]
    assert len(buffered) == app.state.settings.working_memory_max_turns == 50
    assert [t["seq"] for t in buffered] == list(range(11, 61))
    assert buffered[-1]["content"] == "turn 59"
    assert await app.state.redis.ttl(working_memory_key(bank_id, "wm")) > 0
    recent = await app.state.working_memory.recent(bank_id, "wm", after_seq=58)
    assert [t["seq"] for t in recent] == [59, 60]


async def test_append_succeeds_while_redis_is_down(app: Any, client: httpx.AsyncClient, bank_id: str) -> None:
    from app.embedded import free_port

    dead = aioredis.Redis.from_url(
        f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=0.2, socket_timeout=0.2
    )
    healthy = app.state.working_memory
    app.state.working_memory = WorkingMemory(dead, max_turns=50, ttl_seconds=60)
    try:
        for i in range(3):
            response = await client.post(
                f"/v1/banks/{bank_id}/sessions/r/events", json={"events": turns(2, prefix=f"b{i}")}
            )
            assert response.status_code == 202
    finally:
        app.state.working_memory = healthy
        await dead.aclose()
    assert len(await all_events(client, bank_id, "r")) == 6
