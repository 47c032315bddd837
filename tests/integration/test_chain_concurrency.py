"""Concurrent edits of one chain (issue 29, defect 3): PATCHes, new values written with `?wait=true`,
DELETEs and restores of one unit at once leave a history that agrees with every unit's status, in
time order, with at most one current value at any instant, and never a deadlock."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.conftest import Stack, wait_for
from tests.factories import make_bank, ok, write

ROUNDS = 10
TAGS = ["constraint.budget"]
# What each request may answer: a PATCH or a restore finds the unit no longer active / not deleted.
ALLOWED = {"patch": {201, 409}, "write": {201}, "delete": {200}, "restore": {200, 409}}


async def _round(client: httpx.AsyncClient) -> tuple[str, str, list[tuple[str, httpx.Response]]]:
    bank = await make_bank(client)
    first = await write(client, bank, "My budget is 5000 euros.", TAGS)
    base = f"/v1/banks/{bank}/memories"
    unit = f"{base}/{first['id']}"
    requests: list[tuple[str, Any]] = [
        *[
            ("patch", client.patch(unit, json={"content": f"My budget is {6100 + i} euros."}))
            for i in range(4)
        ],
        *[
            (
                "write",
                client.post(
                    base,
                    params={"wait": "true"},
                    json={"content": f"My budget is {7100 + i} euros.", "tags": TAGS},
                ),
            )
            for i in range(4)
        ],
        *[("delete", client.delete(unit)) for _ in range(2)],
        *[("restore", client.post(f"{unit}/restore")) for _ in range(2)],
    ]
    answers = await asyncio.gather(*(call for _, call in requests))
    return bank, first["id"], [(kind, answer) for (kind, _), answer in zip(requests, answers, strict=True)]


async def _units(client: httpx.AsyncClient, bank: str, **params: Any) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = ok(
        await client.get(f"/v1/banks/{bank}/memories", params={"limit": 500, **params})
    )["memories"]
    return listed


async def _history(client: httpx.AsyncClient, bank: str, memory_id: str) -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = ok(await client.get(f"/v1/banks/{bank}/memories/{memory_id}/history"))[
        "actions"
    ]
    return actions


def _at(row: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(row["at"])


def _check_history(unit: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """One `created` row first, no row before it, each transition from the status the one before
    left, and the last one the unit's status."""
    assert rows, unit
    assert rows[0]["action"] == "created", rows
    assert [r["action"] for r in rows].count("created") == 1, rows
    assert all(_at(r) >= _at(rows[0]) for r in rows), rows
    status = rows[0]["details"]["to"]
    for row in rows[1:]:
        assert row["details"]["from"] == status, (unit["id"], rows)
        status = row["details"]["to"]
    assert status == unit["status"], (unit, rows)


async def test_concurrent_edits_of_one_chain_keep_history_and_status_in_step(
    client: httpx.AsyncClient,
) -> None:
    for _ in range(ROUNDS):
        bank, first, answers = await _round(client)
        statuses = Counter((kind, a.status_code) for kind, a in answers)
        assert all(code in ALLOWED[kind] for kind, code in statuses), statuses
        units = await _units(client, bank)
        assert [u["status"] for u in units].count("active") == 1, [(u["content"], u["status"]) for u in units]
        stamps: set[datetime] = set()
        for unit in units:
            rows = await _history(client, bank, unit["id"])
            _check_history(unit, rows)
            stamps |= {_at(r) for r in rows}
        # each DELETE that answered 200 wrote at most one `deleted` row, a second one none
        deletes = [r for r in await _history(client, bank, first) if r["action"] == "deleted"]
        assert len(deletes) <= statuses["delete", 200], deletes
        # at every instant the history knows, and just before it, at most one budget was current
        for stamp in sorted(stamps):
            for instant in (stamp - timedelta(microseconds=1), stamp):
                current = await _units(client, bank, as_of=instant.isoformat())
                assert len(current) <= 1, (instant, [(u["content"], u["id"]) for u in current])
        last = await _units(client, bank, as_of=max(stamps).isoformat())
        assert [u["status"] for u in last] == ["active"], last


async def test_a_second_delete_changes_nothing_and_a_restore_of_a_replaced_value_stays_history(
    client: httpx.AsyncClient,
) -> None:
    bank = await make_bank(client)
    old = await write(client, bank, "My budget is 5000 euros.", TAGS)
    unit = f"/v1/banks/{bank}/memories/{old['id']}"
    assert ok(await client.delete(unit))["status"] == "deleted"
    assert ok(await client.delete(unit))["status"] == "deleted"
    new = await write(client, bank, "My budget is 8000 euros.", TAGS)
    assert new["status"] == "active"
    restored = ok(await client.post(f"{unit}/restore"))
    assert (restored["status"], restored["superseded_by"]) == ("superseded", new["id"])
    rows = await _history(client, bank, old["id"])
    assert [r["action"] for r in rows] == ["created", "activated", "deleted", "restored", "superseded"]
    _check_history(restored, rows)


async def test_a_value_archived_while_a_new_one_is_resolved_is_not_also_superseded(
    client: httpx.AsyncClient, stack: Stack, sql: Any
) -> None:
    """Resolution reads its candidates without a lock; one that another transaction (maintenance)
    archives meanwhile is re-read under its lock and left archived, not superseded on a stale read."""
    bank = await make_bank(client)
    old = await write(client, bank, "My budget is 5000 euros.", TAGS)
    engine = create_async_engine(stack.database_url)
    try:
        async with engine.connect() as holder:
            await holder.execute(
                text("UPDATE memory_units SET previous_status = status, status = 'archived' WHERE id = :id"),
                {"id": old["id"]},
            )
            await holder.execute(
                text(
                    "INSERT INTO memory_history (bank_id, memory_id, action, actor, details) VALUES"
                    ' (:bank, :id, \'archived\', \'test\', \'{"from": "active", "to": "archived"}\')'
                ),
                {"bank": bank, "id": old["id"]},
            )
            writing = asyncio.create_task(write(client, bank, "My budget is 8000 euros.", TAGS))

            async def blocked_on_the_row() -> bool:  # the write waits for the row `holder` holds
                return bool(await sql("SELECT 1 FROM pg_locks WHERE NOT granted AND locktype <> 'advisory'"))

            await wait_for(blocked_on_the_row)
            await holder.commit()
        new = await writing
    finally:
        await engine.dispose()
    assert (new["status"], new["supersedes"]) == ("active", None)
    archived = ok(await client.get(f"/v1/banks/{bank}/memories/{old['id']}"))
    assert (archived["status"], archived["superseded_by"]) == ("archived", None)
    _check_history(archived, await _history(client, bank, old["id"]))
