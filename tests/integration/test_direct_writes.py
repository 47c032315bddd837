"""Direct writes (`POST …/memories?wait=true`) go through the distiller's entity and relation
extraction, so a changed fact supersedes the old one as it does when said in a conversation."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.factories import make_bank, memories, write

PAIRS = [
    ("Carl works at Acme.", "Carl works at Globex.", "Carl", "works_at", "Globex"),
    ("张伟在阿里巴巴工作。", "张伟在腾讯工作。", "张伟", "works_at", "腾讯"),
    ("Carl在Acme工作。", "Carl在Globex工作。", "Carl", "works_at", "Globex"),
    ("The user lives in Berlin.", "The user lives in Lisbon.", "The user", "lives_in", "Lisbon"),
    ("用户住在上海。", "用户住在深圳。", "用户", "lives_in", "深圳"),
]


async def entity_named(client: httpx.AsyncClient, bank: str, name: str) -> dict[str, Any]:
    listed = (await client.get(f"/v1/banks/{bank}/entities", params={"q": name})).json()["entities"]
    [entity] = [e for e in listed if e["name"] == name]
    detail: dict[str, Any] = (await client.get(f"/v1/banks/{bank}/entities/{entity['id']}")).json()
    return detail


@pytest.mark.parametrize(("first", "second", "subject", "relation", "value"), PAIRS)
async def test_a_changed_fact_written_directly_supersedes_the_old_one(
    client: httpx.AsyncClient, first: str, second: str, subject: str, relation: str, value: str
) -> None:
    bank = await make_bank(client)
    old = await write(client, bank, first, ["fact.work"] if relation == "works_at" else ["fact.location"])
    assert old["status"] == "active"
    assert old["entities"], old  # no longer `entities: []`
    new = await write(client, bank, second, ["fact.work"] if relation == "works_at" else ["fact.location"])
    assert (new["status"], new["supersedes"]) == ("active", old["id"])
    assert (await client.get(f"/v1/banks/{bank}/memories/{old['id']}")).json()["status"] == "superseded"
    assert [m["content"] for m in await memories(client, bank, status="active")] == [second]
    person = await entity_named(client, bank, subject)
    assert any(
        r["relation"] == relation and r["subject"]["name"] == subject and r["object"]["name"] == value
        for r in person["relations"]
    ), person["relations"]


async def test_different_people_and_unrelated_facts_do_not_supersede(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    carl = await write(client, bank, "Carl works at Acme.", ["fact.work"])
    dana = await write(client, bank, "Dana works at Globex.", ["fact.work"])
    city = await write(client, bank, "Carl lives in Oslo.", ["fact.location"])
    assert {u["status"] for u in (carl, dana, city)} == {"active"}
    assert len(await memories(client, bank, status="active")) == 3
