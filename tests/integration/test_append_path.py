"""The single-append hot path's round trips to PostgreSQL, counted on the app's own engine: with a bank
key, one statement reads the key with its bank (the bank check of the route finds it in the session)
and one appends; nothing else but BEGIN / COMMIT. A statement more per request is a regression."""

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
            assert len(statements) == 2, statements
            assert statements[0].startswith("SELECT api_keys.id")
            assert not any(s.startswith("SELECT banks.") for s in statements)
