"""A question naming the bank's own subject (a person named in most of its units) is matched on what
it asks, not on the name: the small embedding model weighs a name above the rest of a short question,
so before this the shortest units that named the person came first."""

from __future__ import annotations

from typing import Any

import httpx

from app.query.service import without_names
from tests.conftest import wait_for
from tests.factories import make_bank, settled

PLACES = "museum lake park market library beach bakery gym cinema zoo garden river farm".split()
DOINGS = ["painted at the", "read a novel at the", "met a neighbour at the", "took photos at the"]
TARGET = "Melanie has been running farther to de-stress, which has been great for her headspace."
MAGNETS = ["They're Melanie's biggest motivation and support.", "Melanie is here."]
OTHER = "Ana goes running after work to de-stress."


async def ask(client: httpx.AsyncClient, bank: str, query: str, **extra: Any) -> dict[str, Any]:
    response = await client.post(f"/v1/banks/{bank}/query", json={"query": query, **extra})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def put(client: httpx.AsyncClient, bank: str, content: str, who: str = "Melanie") -> None:
    response = await client.post(
        f"/v1/banks/{bank}/memories",
        json={"content": content, "tags": ["episode"], "entities": [{"name": who, "type": "person"}]},
    )
    assert response.status_code == 202, response.text


def test_without_names_leaves_the_rest_of_the_question() -> None:
    assert without_names("What does Melanie do to destress?", ["melanie"]) == "What does do to destress?"
    assert without_names("Was ist Melanie's Hund?", ["melanie"]) == "Was ist Hund?"
    assert without_names("Melanie", ["melanie"]) == "Melanie"  # nothing else: the question itself
    assert without_names("Where does Melanie-Ann live?", ["melanie"]) == "Where does Melanie-Ann live?"


async def test_a_question_about_the_subject_finds_what_it_asks(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client, dedupe_threshold=1.0)
    # Melanie is named in more than COMMON_ENTITY_MENTIONS units: the bank's subject.
    for place in PLACES:
        for doing in DOINGS:
            await put(client, bank, f"Melanie {doing} {place} with the kids.")
    for content in [*MAGNETS, TARGET]:
        await put(client, bank, content)
    await put(client, bank, OTHER, who="Ana")
    await wait_for(lambda: settled(client, bank), within=120)

    answer = await ask(client, bank, "What does Melanie do to destress?", explain=True, min_score=0, top_k=20)
    semantic = {
        m["content"]: m["scores"]["semantic"]["rank"] for m in answer["memories"] if "semantic" in m["scores"]
    }
    assert semantic[TARGET] == 1, semantic  # not "They're Melanie's biggest motivation and support."
    assert all(semantic.get(magnet, 99) > 1 for magnet in MAGNETS)
    # the name still leans the question to its person: Ana de-stressing comes after Melanie doing it
    assert semantic.get(OTHER, 99) > semantic[TARGET]
    assert answer["memories"][0]["content"] == TARGET
