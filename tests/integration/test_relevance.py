"""The relevance floor: a query about nothing the bank knows returns nothing (English and Chinese), with
or without a time word, while the scenario's own questions and questions about a time alone are still
answered; the floor is the bank's to tune, and its score floor keeps on-topic units of lower rank."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx
import pytest

from app import seeds
from bench.offtopic import TIME_ONLY, off_topic_queries, timed_off_topic_queries
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


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_time_word_admits_nothing_by_itself_and_a_time_alone_is_answered(
    client: httpx.AsyncClient, worker: Any, lang: str
) -> None:
    bank = await seeded(client, lang)
    # Every unit was said just now: "tonight", "today", "this week" and "the past 3 days" hold them all.
    timed = {"en": "What is the weather like on Mars tonight?", "zh": "今晚火星上的天气怎么样？"}
    refused = await ask(client, bank, timed[lang])
    assert (refused["memories"], refused["context"]) == ([], "")
    assert refused["time_filter"] is not None  # the phrase was read, and only narrowed the window
    for query in timed_off_topic_queries()[lang]:
        assert (await ask(client, bank, query))["memories"] == [], query
    for query in TIME_ONLY[lang]:
        answer = await ask(client, bank, query, top_k=50)
        assert answer["memories"], query
        said = [datetime.fromisoformat(m["valid_from"] or m["created_at"]) for m in answer["memories"]]
        assert said == sorted(said, reverse=True), (query, said)  # the window's units, newest first
    # A topic with a time word is still answered with that topic's units in the window.
    question, word = seeds.ON_TOPIC[lang][0]
    timed_question = f"{question} (today)" if lang == "en" else f"今天{question}"
    found = await ask(client, bank, timed_question)
    assert found["time_filter"] is not None
    assert any(word in m["content"] for m in found["memories"]), (timed_question, found["memories"])


# One recent unit that names the query's word, and older ones about the same thing in other words: found
# by similarity alone, years old, they score under 0.3 of the first, yet they are on topic.
HIKES = [
    ("I went hiking in the Alps last summer.", "2026-07-01T10:00:00Z"),
    ("I trekked to Everest base camp in Nepal.", "2016-04-02T10:00:00Z"),
    ("I walked the whole Pennine Way over two weeks.", "2015-06-03T10:00:00Z"),
    ("I climbed Mount Kilimanjaro on foot.", "2014-02-04T10:00:00Z"),
    ("I did a week-long trek in the Scottish Highlands.", "2013-09-05T10:00:00Z"),
]


async def test_the_banks_score_floor_keeps_on_topic_units_of_lower_rank(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    for content, at in HIKES:
        body = {"content": content, "tags": ["episode"], "occurred_at": at}
        written = await client.post(f"/v1/banks/{bank}/memories", params={"wait": "true"}, json=body)
        assert written.status_code == 201, written.text
    question = "Where have I gone hiking?"
    defaults = await ask(client, bank, question, top_k=10, explain=True)
    found = {m["content"] for m in defaults["memories"]}
    assert found == {content for content, _ in HIKES}, defaults["memories"]
    # Kept on evidence of the topic though they score under the bank's min_score (0.3).
    assert any(m["score"] < 0.3 for m in defaults["memories"]), [m["score"] for m in defaults["memories"]]
    # A request's own min_score still cuts at the score it names.
    cut = await ask(client, bank, question, top_k=10, min_score=0.3)
    assert cut["memories"]
    assert all(m["score"] >= 0.3 for m in cut["memories"])
    assert len(cut["memories"]) < len(defaults["memories"])
