"""The single-append hot path's round trips to PostgreSQL, counted on the app's own engine: with a bank
key, the first append reads the key with its bank in one statement and appends in another; later ones
only append (the process remembers the key and its bank under the access generation), until a change
of the key's rights makes it read them again. Nothing else but BEGIN / COMMIT. A statement more per
request is a regression; a revoked key or a changed config missed is a bug."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

from tests.conftest import make_client
from tests.factories import make_bank


@pytest.fixture
def statements(app: Any) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(" ".join(statement.split())[:80])

    engine = app.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)


async def test_a_bank_key_append_is_the_key_read_and_the_append(
    app: Any, client: Any, statements: list[str]
) -> None:
    bank = await make_bank(client)
    key = (await client.post(f"/v1/banks/{bank}/keys", json={"scopes": ["write"]})).json()["key"]
    async with make_client(app, key) as writer:
        for i in range(3):
            statements.clear()
            response = await writer.post(
                f"/v1/banks/{bank}/sessions/s/events",
                json={"events": [{"role": "user", "content": f"turn {i}", "external_id": f"t{i}"}]},
            )
            assert response.status_code == 202, response.text
            assert response.json()["first_seq"] == i + 1
            reads = [s for s in statements if s.startswith("SELECT")]
            assert [s[:20] for s in reads] == (["SELECT api_keys.id, "] if i == 0 else []), statements
            assert len(statements) == len(reads) + 1, statements  # and the append


async def test_a_remembered_key_stops_working_once_revoked_and_a_new_config_applies_at_once(
    app: Any, client: Any, statements: list[str]
) -> None:
    bank = await make_bank(client)
    created = (await client.post(f"/v1/banks/{bank}/keys", json={"scopes": ["write"]})).json()

    async def append(writer: Any, n: int) -> Any:
        return await writer.post(
            f"/v1/banks/{bank}/sessions/s/events", json={"events": [{"role": "user", "content": f"turn {n}"}]}
        )

    async with make_client(app, created["key"]) as writer:
        assert (await append(writer, 1)).json()["distill_job_id"] is None
        patched = await client.patch(f"/v1/banks/{bank}", json={"config": {"distill_every_n_turns": 2}})
        assert patched.status_code == 200
        statements.clear()
        assert (await append(writer, 2)).json()["distill_job_id"] is not None  # the new config
        assert any(s.startswith("SELECT api_keys.id") for s in statements)  # read again
        assert (await client.delete(f"/v1/banks/{bank}/keys/{created['id']}")).status_code == 204
        refused = await append(writer, 3)
        assert refused.status_code == 401, refused.text
