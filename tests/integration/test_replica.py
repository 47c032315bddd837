"""HINDSIGHT_READ_DATABASE_URL against a real streaming replica: a second embedded PostgreSQL made by
`pg_basebackup` of the test primary, run as a hot standby.

How a read is shown to come from the replica: its WAL replay is paused, a write is made on the primary,
and the read routes do not see it until replay resumes. Writes, `?wait=true` and the caller's key go
to the primary meanwhile. A stopped replica sends reads to the primary and `/readyz` says so."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from app.config import get_settings
from app.embedded import EmbeddedPostgres, free_port, start_replica
from tests.conftest import ADMIN_KEY, Stack, make_client, running_app, sql_runner, wait_for
from tests.factories import make_bank, mcp_call


class Replica:
    def __init__(self, pgdata: Path, primary_port: int) -> None:
        self.pgdata, self.primary_port, self.port = pgdata, primary_port, free_port()
        self.server: EmbeddedPostgres | None = None

    def start(self) -> None:
        self.server = start_replica(self.pgdata, self.primary_port, self.port)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/hindsight"


@pytest.fixture(scope="module")
def replica(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replica]:
    port = make_url(stack.database_url).port
    assert port is not None
    server = Replica(tmp_path_factory.mktemp("replica") / "pgdata", port)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
async def replica_app(replica: Replica) -> AsyncIterator[Any]:
    """The app with HINDSIGHT_READ_DATABASE_URL on the replica (probed every 0.2 s while down)."""
    update = {"read_database_url": replica.url, "read_replica_retry_seconds": 0.2}
    async with running_app(get_settings().model_copy(update=update)) as application:
        yield application


@pytest.fixture
async def client(replica_app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(replica_app, ADMIN_KEY) as admin:
        yield admin


async def _run_on(url: str, statement: str) -> list[Any]:
    engine = create_async_engine(url)
    try:
        return await sql_runner(engine)(statement)
    finally:
        await engine.dispose()


async def caught_up(stack: Stack, replica: Replica) -> None:
    """Wait until the replica has replayed everything the primary has committed so far."""
    [row] = await _run_on(stack.database_url, "SELECT pg_current_wal_lsn()::text AS lsn")

    async def replayed() -> bool:
        [done] = await _run_on(
            replica.url, f"SELECT pg_last_wal_replay_lsn() >= '{row['lsn']}'::pg_lsn AS ok"
        )
        return bool(done["ok"])

    await wait_for(replayed, within=30)


@contextlib.asynccontextmanager
async def replay_paused(replica: Replica) -> AsyncIterator[None]:
    await _run_on(replica.url, "SELECT pg_wal_replay_pause()")

    async def paused() -> bool:
        [row] = await _run_on(replica.url, "SELECT pg_get_wal_replay_pause_state() AS state")
        return bool(row["state"] == "paused")

    await wait_for(paused, within=10)
    try:
        yield
    finally:
        await _run_on(replica.url, "SELECT pg_wal_replay_resume()")


async def write_memory(client: httpx.AsyncClient, bank: str, content: str) -> dict[str, Any]:
    response = await client.post(
        f"/v1/banks/{bank}/memories?wait=true",
        json={"content": content, "tags": ["fact"], "entities": [{"name": "Berlin", "type": "place"}]},
    )
    assert response.status_code == 201, response.text  # resolved on the primary, in this request
    memory: dict[str, Any] = response.json()["memory"]
    assert memory["status"] == "active"
    return memory


async def append(client: httpx.AsyncClient, bank: str, session: str, content: str) -> None:
    response = await client.post(
        f"/v1/banks/{bank}/sessions/{session}/events", json={"events": [{"role": "user", "content": content}]}
    )
    assert response.status_code == 202, response.text


def memory_ids(response: httpx.Response) -> set[str]:
    assert response.status_code == 200, response.text
    return {m["id"] for m in response.json()["memories"]}


async def test_reads_are_served_by_the_replica_and_writes_by_the_primary(
    client: httpx.AsyncClient, replica_app: Any, stack: Stack, replica: Replica, sql: Any
) -> None:
    bank = await make_bank(client)
    old = await write_memory(client, bank, "The office is in Berlin.")
    await append(client, bank, "s1", "I moved the office to Berlin.")
    await caught_up(stack, replica)
    assert memory_ids(await client.get(f"/v1/banks/{bank}/memories")) == {old["id"]}

    async with replay_paused(replica):
        # Writes while the replica is frozen: they succeed, so they ran on the primary, and ?wait=true
        # read its own write back there (201, resolved).
        new = await write_memory(client, bank, "The warehouse is in Hamburg.")
        await append(client, bank, "s2", "The warehouse moved to Hamburg.")
        assert await sql("SELECT 1 FROM memory_units WHERE id = :id", id=uuid.UUID(new["id"]))
        # A key made now works at once (keys are checked on the primary); the data it reads is the
        # replica's, which has neither the new unit nor the new session.
        key = (await client.post(f"/v1/banks/{bank}/keys", json={"scopes": ["read"]})).json()["key"]
        async with make_client(replica_app, key) as reader:
            assert memory_ids(await reader.get(f"/v1/banks/{bank}/memories")) == {old["id"]}
        assert (await client.get(f"/v1/banks/{bank}/memories/{new['id']}")).status_code == 404
        assert (await client.get(f"/v1/banks/{bank}/memories/{new['id']}/history")).status_code == 404
        assert (await client.get(f"/v1/banks/{bank}/memories/{old['id']}")).status_code == 200
        assert (await client.get(f"/v1/banks/{bank}/sessions/s2")).status_code == 404
        sessions = (await client.get(f"/v1/banks/{bank}/sessions")).json()["sessions"]
        assert [s["session_id"] for s in sessions] == ["s1"]
        stats = (await client.get(f"/v1/banks/{bank}/stats")).json()
        assert (stats["sessions"], stats["events"], stats["memories_by_status"]) == (1, 1, {"active": 1})
        query = await client.post(f"/v1/banks/{bank}/query", json={"query": "Where is the warehouse?"})
        assert new["id"] not in memory_ids(query)
        # MCP's memory_query reads the replica too: the old unit is there, the new one is not yet.
        tool = await mcp_call(replica_app, key, "memory_query", {"query": "Where is the warehouse?"})
        assert tool.status_code == 200, tool.text
        assert "Hamburg" not in tool.text
        tool = await mcp_call(replica_app, key, "memory_query", {"query": "Where is the office?"})
        assert "Berlin" in tool.text
        export = await client.get(f"/v1/banks/{bank}/export")
        assert export.status_code == 200, export.text
        assert "Berlin" in export.text
        assert "Hamburg" not in export.text  # the export's snapshot is the replica's
        timeline = (await client.get(f"/v1/banks/{bank}/timeline?kinds=memory")).json()["items"]
        assert new["id"] not in str(timeline)
        assert old["id"] in str(timeline)
        [berlin] = (await client.get(f"/v1/banks/{bank}/entities")).json()["entities"]
        entity = (await client.get(f"/v1/banks/{bank}/entities/{berlin['id']}")).json()
        assert {m["id"] for m in entity["memories"]} == {old["id"]}
        page = await client.get(f"/v1/banks/{bank}/entities/{berlin['id']}/page")
        assert page.status_code == 200, page.text
        assert old["id"] in page.text
        assert new["id"] not in page.text

    async def replayed() -> bool:
        return (await client.get(f"/v1/banks/{bank}/memories/{new['id']}")).status_code == 200

    await wait_for(replayed, within=30)
    query = await client.post(f"/v1/banks/{bank}/query", json={"query": "Where is the warehouse?"})
    assert new["id"] in memory_ids(query)


async def test_a_stopped_replica_sends_reads_to_the_primary_and_readyz_says_so(
    client: httpx.AsyncClient, stack: Stack, replica: Replica, worker: Any
) -> None:
    bank = await make_bank(client)
    ready = (await client.get("/readyz")).json()
    assert ready["read_replica"]["status"] == "ok"
    assert ready["read_replica"]["reads"] == "replica"
    assert ready["read_replica"]["lag_seconds"] is not None

    replica.stop()
    try:
        memory = await write_memory(client, bank, "The office is in Berlin.")
        # Read at once, with the replica gone: served by the primary, which has the new unit.
        assert (await client.get(f"/v1/banks/{bank}/memories/{memory['id']}")).status_code == 200
        assert memory_ids(await client.get(f"/v1/banks/{bank}/memories")) == {memory["id"]}
        query = await client.post(f"/v1/banks/{bank}/query", json={"query": "Where is the office?"})
        assert memory["id"] in memory_ids(query)
        response = await client.get("/readyz")
        assert response.status_code == 200, response.text  # reads go on; the replica is reported
        line = response.json()["read_replica"]
        assert line["status"].startswith("down")
        assert line["reads"] == "primary"
    finally:
        replica.start()

    async def replica_back() -> bool:
        return bool((await client.get("/readyz")).json()["read_replica"]["status"] == "ok")

    await wait_for(replica_back, within=30)
    await caught_up(stack, replica)
    async with replay_paused(replica):  # reads are the replica's again
        later = await write_memory(client, bank, "The warehouse is in Hamburg.")
        assert (await client.get(f"/v1/banks/{bank}/memories/{later['id']}")).status_code == 404
