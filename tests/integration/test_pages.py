"""Knowledge pages on the real stack: the profile and an entity's page are derived from the active units on
read — preferences said in separate sessions in one group, superseded and forgotten values left out, every
line citing a unit that resolves — and the MCP tool `memory_profile` reads the same page."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import assert_problem, wait_for
from tests.factories import finished_job, make_bank, settled

SESSIONS = [
    "I prefer email over phone calls.",
    "I prefer quick replies by email.",
    "I like getting updates by text message.",
    "My budget is 5000 euros.",
    "My budget is 8000 euros now.",
    "I live in Porto.",
]


async def tell(client: httpx.AsyncClient, bank: str, session: str, text: str, speaker: str = "Ana") -> None:
    """One user turn of `speaker` in a session of its own, closed and resolved."""
    turn = {"role": "user", "content": text, "speaker": speaker}
    await client.post(f"/v1/banks/{bank}/sessions/{session}/events", json={"events": [turn]})
    closed = await client.post(f"/v1/banks/{bank}/sessions/{session}/close")
    assert (await finished_job(client, closed.json()["job_id"]))["status"] == "succeeded"
    await wait_for(lambda: settled(client, bank))


def page_lines(page: dict[str, Any]) -> list[dict[str, Any]]:
    return [line for section in page["sections"] for line in section["lines"]]


async def test_the_profile_is_the_current_page_of_the_main_subject(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    for i, text in enumerate(SESSIONS):
        await tell(client, bank, f"s{i}", text)
    await tell(client, bank, "other", "I like to play chess.", speaker="Tom")
    porto = (await client.get(f"/v1/banks/{bank}/memories", params={"status": "active"})).json()["memories"]
    [forgotten] = [m for m in porto if "Porto" in m["content"]]
    assert (await client.delete(f"/v1/banks/{bank}/memories/{forgotten['id']}")).status_code == 200

    response = await client.get(f"/v1/banks/{bank}/profile")
    assert response.status_code == 200, response.text
    page = response.json()
    assert page["entity"]["name"] == "Ana"  # the speaker of most user turns
    assert page["entity"]["type"] == "person"
    sections = {s["tag"]: s["lines"] for s in page["sections"]}
    # Three preferences said in three sessions: one group, newest first.
    contact = sections["preference.contact"]
    assert len(contact) == 3
    assert ["text message" in contact[0]["content"], "quick replies" in contact[1]["content"]] == [True, True]
    said = [line["valid_from"] for line in contact]
    assert said == sorted(said, reverse=True)
    contents = [line["content"] for line in page_lines(page)]
    assert any("8000" in c for c in contents)  # the successor is there ...
    assert not any("5000" in c for c in contents)  # ... the superseded budget is not
    assert not any("Porto" in c for c in contents)  # forgotten
    assert not any("chess" in c for c in contents)  # Tom's, not Ana's
    # Every line cites a unit that resolves, active, and the markdown renders the same lines.
    for line in page_lines(page):
        unit = await client.get(f"/v1/banks/{bank}/memories/{line['memory_id']}")
        assert unit.status_code == 200, unit.text
        assert unit.json()["status"] == "active"
        assert unit.json()["content"] == line["content"]
        assert line["layer"] in ("episodic", "semantic")
        assert f"{line['content']} ([{line['valid_from'][:10]}]" in page["markdown"]
        assert line["memory_id"] in page["markdown"]
    assert page["markdown"].startswith("# Ana\n")
    assert "## preference.contact" in page["markdown"]

    # The entity's own page is the same page; the bank's `subject` picks another one.
    ana = page["entity"]["id"]
    same = (await client.get(f"/v1/banks/{bank}/entities/{ana}/page")).json()
    assert same == page
    config = {"subject": "Tom", "distill_every_n_turns": 1000}
    assert (await client.patch(f"/v1/banks/{bank}", json={"config": config})).status_code == 200
    tom = (await client.get(f"/v1/banks/{bank}/profile")).json()
    assert tom["entity"]["name"] == "Tom"
    assert [line["content"] for line in page_lines(tom)] == ["Tom likes to play chess."]


async def test_an_entity_of_another_bank_has_no_page_here(client: httpx.AsyncClient, worker: Any) -> None:
    mine = await make_bank(client, distill_every_n_turns=1000)
    theirs = await make_bank(client, distill_every_n_turns=1000)
    await tell(client, theirs, "s", "I prefer email over phone calls.", speaker="Bo")
    [bo] = (await client.get(f"/v1/banks/{theirs}/entities", params={"q": "Bo"})).json()["entities"]
    assert (await client.get(f"/v1/banks/{theirs}/entities/{bo['id']}/page")).status_code == 200
    assert_problem(await client.get(f"/v1/banks/{mine}/entities/{bo['id']}/page"), 404)
    assert_problem(
        await client.get(f"/v1/banks/{mine}/entities/00000000-0000-0000-0000-000000000000/page"), 404
    )
    # A bank with nothing yet has an empty profile, not an error.
    empty = (await client.get(f"/v1/banks/{mine}/profile")).json()
    assert empty["sections"] == []
    assert empty["entity"] == {"id": None, "name": "The user", "type": "person"}


async def test_memory_profile_reads_the_page_over_mcp(client: httpx.AsyncClient, worker: Any) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await tell(client, bank, "s", "I prefer email over phone calls.", speaker="Ana")
    key = (await client.post(f"/v1/banks/{bank}/keys", json={"scopes": ["read"]})).json()["key"]
    headers = {"Authorization": f"Bearer {key}", "accept": "application/json, text/event-stream"}

    async def call(arguments: dict[str, Any]) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        message["params"] = {"name": "memory_profile", "arguments": arguments}
        response = await client.post("/mcp", json=message, headers=headers)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()["result"]
        return result

    rest = (await client.get(f"/v1/banks/{bank}/profile")).json()
    mine = await call({})  # a read-only key of the bank: its own bank, the user's page
    assert not mine.get("isError"), mine
    assert mine["content"][0]["text"] == rest["markdown"]
    assert mine["structuredContent"] == rest
    named = await call({"entity": "ana"})  # by name, case aside
    assert named["structuredContent"] == rest
    missing = await call({"entity": "Nobody"})
    assert missing["isError"]
    assert "Not Found (404)" in missing["content"][0]["text"]
