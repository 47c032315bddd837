from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from tests.conftest import assert_problem, make_client


async def _key(client: httpx.AsyncClient, bank_id: str, scopes: list[str]) -> dict[str, Any]:
    response = await client.post(f"/v1/banks/{bank_id}/keys", json={"scopes": scopes})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_bank_crud(client: httpx.AsyncClient) -> None:
    bank = f"crud-{uuid.uuid4().hex[:8]}"
    created = await client.post(
        "/v1/banks",
        json={"bank_id": bank, "name": "CRM agent", "config": {"timezone": "Asia/Shanghai"}},
    )
    assert created.status_code == 201
    assert created.json()["config"]["timezone"] == "Asia/Shanghai"
    assert created.json()["config"]["distill_every_n_turns"] == 5

    assert_problem(await client.post("/v1/banks", json={"bank_id": bank}), 409)

    patched = await client.patch(f"/v1/banks/{bank}", json={"config": {"distill_every_n_turns": 3}})
    assert patched.status_code == 200
    assert patched.json()["config"] == {**created.json()["config"], "distill_every_n_turns": 3}
    assert (await client.get(f"/v1/banks/{bank}")).json()["config"]["distill_every_n_turns"] == 3

    bad = await client.patch(f"/v1/banks/{bank}", json={"config": {"timezone": "Mars/Olympus"}})
    assert_problem(bad, 422)
    unknown = await client.patch(f"/v1/banks/{bank}", json={"config": {"distil_every": 3}})
    assert_problem(unknown, 422)
    assert (await client.get(f"/v1/banks/{bank}")).json()["config"]["timezone"] == "Asia/Shanghai"

    assert (await client.delete(f"/v1/banks/{bank}")).status_code == 204
    assert_problem(await client.get(f"/v1/banks/{bank}"), 404)
    assert_problem(await client.delete(f"/v1/banks/{bank}"), 404)


async def test_bank_list_is_cursor_paginated(client: httpx.AsyncClient) -> None:
    prefix = f"page-{uuid.uuid4().hex[:6]}"
    for i in range(5):
        assert (await client.post("/v1/banks", json={"bank_id": f"{prefix}-{i}"})).status_code == 201
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await client.get("/v1/banks", params=params)).json()
        seen += [b["bank_id"] for b in page["banks"] if b["bank_id"].startswith(prefix)]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"{prefix}-{i}" for i in range(5)]
    assert_problem(await client.get("/v1/banks", params={"cursor": "not-a-cursor"}), 400)
    assert_problem(await client.get("/v1/banks", params={"limit": 501}), 422)


@pytest.mark.parametrize("bank_id", ["has space", "x" * 129, "slash/no", "ümlaut"])
async def test_bad_bank_ids_are_refused(client: httpx.AsyncClient, bank_id: str) -> None:
    assert_problem(await client.post("/v1/banks", json={"bank_id": bank_id}), 422)


async def test_bank_keys_reach_only_their_bank(app: Any, client: httpx.AsyncClient, bank_id: str) -> None:
    other = f"other-{uuid.uuid4().hex[:8]}"
    await client.post("/v1/banks", json={"bank_id": other})
    rw = await _key(client, bank_id, ["read", "write"])
    assert rw["key"].startswith("hs_")
    assert rw["scopes"] == ["read", "write"]
    ro = await _key(client, bank_id, ["read"])
    event = {"events": [{"role": "user", "content": "hi there"}]}

    async with make_client(app, rw["key"]) as c:
        assert (await c.get(f"/v1/banks/{bank_id}")).status_code == 200
        assert (await c.post(f"/v1/banks/{bank_id}/sessions/s/events", json=event)).status_code == 202
        listed = (await c.get("/v1/banks")).json()["banks"]
        assert [b["bank_id"] for b in listed] == [bank_id]
        # another bank is invisible: 404, never 403
        assert_problem(await c.get(f"/v1/banks/{other}"), 404)
        assert_problem(await c.post(f"/v1/banks/{other}/sessions/s/events", json=event), 404)
        assert_problem(await c.get(f"/v1/banks/{other}/sessions"), 404)
        # admin-only operations
        assert_problem(await c.post("/v1/banks", json={"bank_id": "sneaky"}), 403)
        assert_problem(await c.post(f"/v1/banks/{bank_id}/keys", json={}), 403)
        assert_problem(await c.delete(f"/v1/banks/{bank_id}"), 403)
        assert_problem(await c.post("/v1/admin/maintenance/sweep"), 403)

    async with make_client(app, ro["key"]) as c:
        assert (await c.get(f"/v1/banks/{bank_id}/sessions/s/events")).status_code == 200
        assert_problem(await c.post(f"/v1/banks/{bank_id}/sessions/s/events", json=event), 403)

    assert (await client.delete(f"/v1/banks/{bank_id}/keys/{rw['id']}")).status_code == 204
    async with make_client(app, rw["key"]) as c:
        assert_problem(await c.get(f"/v1/banks/{bank_id}"), 401)
    assert_problem(await client.delete(f"/v1/banks/{bank_id}/keys/{rw['id']}"), 404)


@pytest.mark.parametrize("key", [None, "wrong", "hs_" + "x" * 43, "Bearer"])
async def test_missing_or_wrong_key_is_401(app: Any, bank_id: str, key: str | None) -> None:
    async with make_client(app, key) as c:
        for method, path in [
            ("GET", "/v1/banks"),
            ("GET", f"/v1/banks/{bank_id}"),
            ("POST", f"/v1/banks/{bank_id}/sessions/s/events"),
            ("GET", f"/v1/banks/{bank_id}/sessions"),
            ("GET", f"/v1/jobs/{uuid.uuid4()}"),
        ]:
            response = await c.request(method, path, json={"events": [{"role": "user", "content": "x"}]})
            assert_problem(response, 401)
            assert response.headers["www-authenticate"] == "Bearer"


async def test_delete_bank_purges_every_row(app: Any, client: httpx.AsyncClient, bank_id: str) -> None:
    await client.post(
        f"/v1/banks/{bank_id}/sessions/s/events",
        json={"events": [{"role": "user", "content": f"turn {i}"} for i in range(3)]},
    )
    await _key(client, bank_id, ["read"])
    assert (await client.delete(f"/v1/banks/{bank_id}")).status_code == 204
    async with app.state.engine.connect() as conn:
        for table in ("sessions", "events", "api_keys", "memory_units", "jobs"):
            count = (
                await conn.execute(text(f"SELECT count(*) FROM {table} WHERE bank_id = :b"), {"b": bank_id})
            ).scalar_one()
            assert count == 0, table


async def test_stats(client: httpx.AsyncClient, bank_id: str) -> None:
    await client.post(
        f"/v1/banks/{bank_id}/sessions/a/events",
        json={"events": [{"role": "user", "content": f"turn {i}"} for i in range(4)]},
    )
    stats = (await client.get(f"/v1/banks/{bank_id}/stats")).json()
    assert stats["events"] == 4
    assert stats["sessions"] == 1
    assert stats["undistilled_events"] == 4
    assert stats["memories_by_status"] == {}
