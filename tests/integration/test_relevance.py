"""The relevance floor: a query about nothing the bank knows returns nothing (English and Chinese),
while the scenario's own questions are still answered; the floor is the bank's to tune."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app import seeds
from bench.offtopic import off_topic_queries
from tests.factories import make_bank

OFF_TOPIC = {"en": "What is the weather on Mars?", "zh": "火星上的天气怎么样？"}


async def seeded(client: httpx.AsyncClient, lang: str, **config: Any) -> str:
    bank = await make_bank(client, **config)
    url = f"/v1/banks/{bank}/sessions/{seeds.SESSION_ID}"
    assert (await client.post(f"{url}/events", json={"events": seeds.events(lang)})).status_code == 202
    distilled = await client.post(f"{url}/distill", params={"wait": "true"})
    assert distilled.status_code == 200, distilled.text
    return bank


async def ask(client: httpx.AsyncClient, bank: str, query: str, **options: Any) -> dict[str, Any]:
    response = await client.post(f"/v1/banks/{bank}/query", json={"query": query, "top_k": 5, **options})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_an_off_topic_query_returns_nothing_and_the_scenario_is_still_answered(
    client: httpx.AsyncClient, worker: Any, lang: str
) -> None:
    bank = await seeded(client, lang)
    nothing = await ask(client, bank, OFF_TOPIC[lang])
    assert (nothing["memories"], nothing["context"]) == ([], "")
    # A sample of the benchmark's generated off-topic queries, every third one.
    for query in off_topic_queries()[lang][::3]:
        assert (await ask(client, bank, query))["memories"] == [], query
    for question, word in seeds.ON_TOPIC[lang][:2]:
        found = await ask(client, bank, question)
        assert any(word in m["content"] for m in found["memories"]), (question, found["memories"])
    # Without the floor (per request), the same off-topic query gets the bank's units back.
    assert (await ask(client, bank, OFF_TOPIC[lang], min_similarity=0))["memories"]


async def test_the_floor_is_the_banks_to_tune(client: httpx.AsyncClient, worker: Any) -> None:
    off = await seeded(client, "en", min_similarity=0)
    assert (await ask(client, off, OFF_TOPIC["en"]))["memories"]
    strict = await seeded(client, "en", min_similarity=0.99)
    # No unit is that close to the question, but a query word ("budget") is evidence of its own.
    found = await ask(client, strict, "What is the user's budget?")
    assert any("8000" in m["content"] for m in found["memories"]), found["memories"]
    assert (await ask(client, strict, "How should replies be?"))["memories"] == []
    patched = await client.patch(f"/v1/banks/{strict}", json={"config": {"min_similarity": 0}})
    assert patched.status_code == 200, patched.text
    assert (await ask(client, strict, "How should replies be?"))["memories"]
    refused = await client.patch(f"/v1/banks/{strict}", json={"config": {"min_similarity": 2}})
    assert refused.status_code == 422
