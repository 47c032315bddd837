"""Two hops over relations on the real stack: a person works at (belongs to) a company, the company
uses a product, the product has a known bug; asked about the person's own problems, the entity
channel reaches the bug two hops away, and once the company uses another product it no longer does."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import wait_for
from tests.factories import T0, finished_job, make_bank, ok, settled, write

CHAINS = {
    "english": {
        "person": "The user works at Harbor Soft.",
        "company": "Harbor Soft uses TicketFlow 3.2 for support tickets.",
        "bug": "TicketFlow 3.2 has a known bug: exports freeze on large reports.",
        "switch": "Harbor Soft now uses DeskPilot instead of TicketFlow 3.2.",
        "question": "Does anything I use have known bugs?",
    },
    "chinese": {
        "person": "用户属于海港软件。",
        "company": "海港软件用的是TicketFlow 3.2。",
        "bug": "TicketFlow 3.2有个已知bug，导出大报表会卡死。",
        "switch": "海港软件现在用的是DeskPilot，不再用TicketFlow 3.2了。",
        "question": "我用的东西有什么已知问题？",
    },
}


async def ask(client: httpx.AsyncClient, bank: str, question: str, **extra: Any) -> list[dict[str, Any]]:
    body = ok(
        await client.post(f"/v1/banks/{bank}/query", json={"query": question, "explain": True, **extra})
    )
    found: list[dict[str, Any]] = body["memories"]
    return found


def entity_score(found: list[dict[str, Any]], unit_id: str) -> float | None:
    """The entity channel's score of the unit in an explained answer (None: it did not find it)."""
    for memory in found:
        if memory["id"] == unit_id and "entity" in memory["scores"]:
            return float(memory["scores"]["entity"]["score"])
    return None


@pytest.mark.parametrize("language", list(CHAINS))
async def test_direct_writes_reach_the_bug_two_hops_away_until_the_company_switches(
    client: httpx.AsyncClient, worker: Any, language: str
) -> None:
    chain = CHAINS[language]
    bank = await make_bank(client)
    await write(client, bank, chain["person"], ["fact.work"])
    company = await write(client, bank, chain["company"], ["fact"])
    bug = await write(client, bank, chain["bug"], ["fact.issue"])
    await wait_for(lambda: settled(client, bank))

    found = await ask(client, bank, chain["question"])
    assert entity_score(found, bug["id"]) == 0.25  # user → company → product: two hops
    # Every unit the channel found (no relevance floor): one hop ranks above two.
    everything = await ask(client, bank, chain["question"], min_similarity=0, min_score=0)
    assert entity_score(everything, company["id"]) == 0.5
    ranks = {m["id"]: m["scores"]["entity"]["rank"] for m in everything if "entity" in m["scores"]}
    assert ranks[company["id"]] < ranks[bug["id"]]

    switch = await write(client, bank, chain["switch"], ["fact"])
    after = ok(await client.get(f"/v1/banks/{bank}/memories/{company['id']}"))
    assert after["status"] == "superseded", after
    assert after["superseded_by"] == switch["id"]

    everything = await ask(client, bank, chain["question"], min_similarity=0, min_score=0)
    assert entity_score(everything, bug["id"]) is None  # the old product's bug no longer comes through
    assert entity_score(everything, switch["id"]) == 0.5


async def test_a_conversation_of_two_speakers_reaches_the_bug_two_hops_away(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    turns = [
        {"role": "user", "content": "I work at Harbor Soft.", "occurred_at": T0},
        {"role": "user", "content": "Harbor Soft uses TicketFlow 3.2 for everything.", "occurred_at": T0},
        {
            "role": "user",
            "speaker": "Mina",
            "content": "Heads up: TicketFlow 3.2 has a known bug with large exports.",
            "occurred_at": T0,
        },
    ]
    ok(await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": turns}), 202)
    job = ok(await client.post(f"/v1/banks/{bank}/sessions/s/distill"), 202)
    assert (await finished_job(client, job["job_id"]))["status"] == "succeeded"
    await wait_for(lambda: settled(client, bank))

    found = await ask(client, bank, "Does anything I use have known bugs?")
    bug = next(m for m in found if "known bug" in m["content"])
    assert "TicketFlow 3.2" in {e["name"] for e in bug["entities"]}  # whole, not "Ticket"
    assert entity_score(found, bug["id"]) == 0.25
