"""The query API on the real stack: distilled and written units, the channels, fusion, filters,
time, context, working memory and read logging."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from app.query import channels as query_channels
from tests.conftest import assert_problem
from tests.factories import make_bank, ok, say, write

NOW = "2026-11-30T12:00:00+00:00"  # a Monday


async def ask(client: httpx.AsyncClient, bank: str, query: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = ok(await client.post(f"/v1/banks/{bank}/query", json={"query": query, **extra}))
    return body


@pytest.mark.parametrize(
    ("lines", "question"),
    [
        (
            ["My budget is 5000.", "I prefer laptops with a 14 inch screen.", "My budget is 8000 now."],
            "what is my budget?",
        ),
        (["我的预算是5000", "我喜欢轻薄的笔记本", "我的预算现在是8000"], "我的预算是多少？"),
    ],
    ids=["english", "chinese"],
)
async def test_the_newest_budget_wins(
    client: httpx.AsyncClient, worker: Any, lines: list[str], question: str
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    for line in lines:
        await say(client, bank, line)
    answer = await ask(client, bank, question)
    top = answer["memories"][0]
    assert "8000" in top["content"]
    assert "constraint.budget" in top["tags"]
    assert all("5000" not in m["content"] for m in answer["memories"])
    assert "8000" in answer["context"]
    assert "5000" not in answer["context"]
    assert answer["context"].startswith("## constraint.budget")

    # The old value on request, marked as such.
    both = await ask(client, bank, question, statuses=["active", "superseded"])
    assert {
        ("5000" in m["content"], m["status"]) for m in both["memories"] if "constraint.budget" in m["tags"]
    } == {
        (True, "superseded"),
        (False, "active"),
    }
    assert "[superseded]" in both["context"]


async def test_as_of_brings_back_the_value_of_that_time(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    first = await write(client, bank, "The user's budget is 5000.", ["constraint.budget"])
    between = (await client.get(f"/v1/banks/{bank}/memories/{first['id']}")).json()["status_changed_at"]
    second = await write(client, bank, "The user's budget is 8000.", ["constraint.budget"])
    assert second["supersedes"] == first["id"]
    now = await ask(client, bank, "budget")
    then = await ask(client, bank, "budget", as_of=between)
    assert [m["id"] for m in now["memories"]] == [second["id"]]
    assert [m["id"] for m in then["memories"]] == [first["id"]]
    assert "[superseded]" not in then["context"]


async def write_at(client: httpx.AsyncClient, bank: str, content: str, tags: list[str], at: str) -> str:
    response = await client.post(
        f"/v1/banks/{bank}/memories",
        params={"wait": "true"},
        json={"content": content, "tags": tags, "occurred_at": at},
    )
    assert response.status_code == 201, response.text
    memory_id: str = response.json()["memory"]["id"]
    return memory_id


@pytest.mark.parametrize("window", ["small", "large"])
async def test_last_week_only_returns_units_from_last_week(
    client: httpx.AsyncClient, window: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if window == "large":  # the window as a condition on each row, not a set of its units
        monkeypatch.setattr(query_channels, "SMALL_WINDOW_UNITS", -1)
    bank = await make_bank(client)
    inside = await write_at(
        client, bank, "The user went hiking in the Alps.", ["episode"], "2026-11-25T10:00:00Z"
    )
    await write_at(client, bank, "The user went swimming at the lake.", ["episode"], "2026-11-18T10:00:00Z")
    await write_at(client, bank, "The user went running in the park.", ["episode"], "2026-11-30T08:00:00Z")
    answer = await ask(client, bank, "What did I do last week?", now=NOW, timezone="UTC", min_score=0)
    assert [m["id"] for m in answer["memories"]] == [inside]
    assert answer["time_filter"]["source"] == "query"
    assert answer["time_filter"]["from"].startswith("2026-11-23")
    assert answer["time_filter"]["to"].startswith("2026-11-30")
    chinese = await ask(client, bank, "我上周做了什么？", now=NOW, timezone="UTC", min_score=0)
    assert [m["id"] for m in chinese["memories"]] == [inside]
    early = {"from": "2026-11-01T00:00:00Z", "to": "2026-11-20T00:00:00Z"}
    explicit = await ask(client, bank, "What did I do?", time_range=early, min_score=0)
    assert [m["content"] for m in explicit["memories"]] == ["The user went swimming at the lake."]
    assert explicit["time_filter"]["source"] == "request"
    # A topic in that window needs evidence of its own: the window only narrows.
    assert (await ask(client, bank, "hiking", time_range=early, min_score=0))["memories"] == []


async def test_a_month_without_its_year_is_the_latest_one_the_bank_remembers(
    client: httpx.AsyncClient,
) -> None:
    """ "In June" is the latest June; when that one holds no memory, the latest earlier June that does."""
    bank = await make_bank(client)
    june = await write_at(
        client, bank, "The user went sailing off Crete.", ["episode"], "2024-06-12T10:00:00Z"
    )
    await write_at(
        client, bank, "The user went skiing in the Dolomites.", ["episode"], "2024-02-03T10:00:00Z"
    )
    answer = await ask(client, bank, "What did I do in June?", now=NOW, timezone="UTC", min_score=0)
    assert [m["id"] for m in answer["memories"]] == [june]
    assert answer["time_filter"]["from"].startswith("2024-06-01")
    assert answer["time_filter"]["to"].startswith("2024-07-01")
    named = await ask(client, bank, "What did I do in June 2026?", now=NOW, timezone="UTC", min_score=0)
    assert named["memories"] == []  # a year said is the year asked
    assert named["time_filter"]["from"].startswith("2026-06-01")
    later = await write_at(
        client, bank, "The user went rowing on the Thames.", ["episode"], "2026-06-20T10:00:00Z"
    )
    again = await ask(client, bank, "What did I do in June?", now=NOW, timezone="UTC", min_score=0)
    assert [m["id"] for m in again["memories"]] == [later]


async def test_a_month_without_its_year_counts_what_maintenance_archived_of_it(
    client: httpx.AsyncClient, sql: Any
) -> None:
    """A past window also reaches its archived units: a June whose only unit was archived is still the
    June the bank remembers, not an earlier one."""
    bank = await make_bank(client)
    await write_at(client, bank, "The user went sailing off Crete.", ["episode"], "2024-06-12T10:00:00Z")
    archived = await write_at(
        client, bank, "The user went rowing on the Thames.", ["episode"], "2026-06-20T10:00:00Z"
    )
    await sql("UPDATE memory_units SET status = 'archived' WHERE id = :id", id=uuid.UUID(archived))
    answer = await ask(client, bank, "What did I do in June?", now=NOW, timezone="UTC", min_score=0)
    assert answer["time_filter"]["from"].startswith("2026-06-01")
    assert [(m["id"], m["status"]) for m in answer["memories"]] == [(archived, "archived")]


@pytest.mark.parametrize(
    ("fact", "question"),
    [
        ("We finally moved to Harrogate last weekend.", "Where do I live?"),
        ("I report to Dana Whitfield now.", "Who is my manager?"),
        ("我上个月从杭州搬到苏州了。", "我住在哪个城市？"),
    ],
)
async def test_a_question_for_a_relation_finds_its_holder_in_other_words(
    client: httpx.AsyncClient, fact: str, question: str
) -> None:
    """No word and little similarity in common: the unit holding the relation the question asks the
    object of is the evidence (its claim's head); another person's question or another topic is not."""
    bank = await make_bank(client)
    holder = await write(client, bank, fact, ["fact"])
    answer = await ask(client, bank, question)
    assert [m["id"] for m in answer["memories"]] == [holder["id"]]
    assert (await ask(client, bank, "Where does Anna work?"))["memories"] == []
    assert (await ask(client, bank, "What is the capital of Peru?"))["memories"] == []


async def test_tag_prefixes_filter_and_unknown_tags_give_nothing(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    await write(client, bank, "The user needs 4 chairs.", ["constraint.quantity"])
    await write(client, bank, "The user's budget is 900 euros.", ["constraint.budget"])
    await write(client, bank, "The user likes oak furniture.", ["preference"])
    constrained = await ask(
        client,
        bank,
        "what does the user need for the chairs and furniture?",
        tags=["constraint"],
        min_score=0,
    )
    assert {m["tags"][0] for m in constrained["memories"]} == {"constraint.quantity", "constraint.budget"}
    assert (await ask(client, bank, "chairs", tags=["nothing.here"]))["memories"] == []


async def test_explain_lists_every_channel_that_found_a_unit(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    wanted = await write(
        client, bank, "The user's budget for the trip to Lisbon is 1200 euros.", ["constraint.budget"]
    )
    await write(client, bank, "The user likes sardines.", ["preference.food"])
    answer = await ask(client, bank, "what is the budget for Lisbon?", explain=True, min_score=0)
    top = answer["memories"][0]
    assert top["id"] == wanted["id"]
    assert set(top["scores"]) >= {"semantic", "keyword", "tag", "temporal"}
    for channel in top["scores"].values():
        assert channel["rank"] >= 1
        assert isinstance(channel["score"], float)
    plain = await ask(client, bank, "what is the budget for Lisbon?")
    assert plain["memories"][0]["scores"] is None


async def test_weighted_fusion_and_min_score(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    await write(client, bank, "The user's favourite colour is green.", ["preference.style"])
    await write(client, bank, "The user's car is a 2015 Volvo.", ["fact"])
    weighted = await ask(client, bank, "favourite colour", fusion="weighted", explain=True, min_score=0)
    assert "green" in weighted["memories"][0]["content"]
    assert 0 < weighted["memories"][0]["score"] <= 1.2
    strict = await ask(client, bank, "favourite colour", fusion="weighted", min_score=0.99)
    assert strict["memories"] == []
    semantic_only = await ask(
        client,
        bank,
        "favourite colour",
        explain=True,
        min_score=0,
        weights={"semantic": 1, "keyword": 0, "entity": 0, "temporal": 0, "tag": 0},
    )
    assert {c for m in semantic_only["memories"] for c in m["scores"]} == {"semantic"}


async def test_max_tokens_cuts_the_context(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    for i in range(6):
        await write(
            client, bank, f"The user visited museum number {i} in Rome and liked its paintings.", ["episode"]
        )
    full = await ask(client, bank, "museums in Rome", min_score=0)
    short = await ask(client, bank, "museums in Rome", min_score=0, max_tokens=40)
    assert len(full["memories"]) == 6
    assert 1 <= len(short["memories"]) < 6
    assert len(short["context"]) < len(full["context"])
    assert short["context"].count("\n- ") + short["context"].startswith("- ") <= len(short["memories"])


async def test_working_memory_comes_with_the_answer(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await client.post(
        f"/v1/banks/{bank}/sessions/s/events",
        json={"events": [{"role": "user", "content": "Please book the table for eight people."}]},
    )
    answer = await ask(client, bank, "table booking", working_memory=True, session_id="s")
    assert [t["content"] for t in answer["working_memory"]] == ["Please book the table for eight people."]
    # The prompt-ready block carries them too, dated, as a group of their own.
    assert answer["context"].startswith("## recent turns (not yet distilled)\n- [")
    assert answer["context"].endswith("] user: Please book the table for eight people.")
    alone = await ask(client, bank, "table booking")
    assert alone["working_memory"] == []
    assert alone["context"] == ""
    # Under a token budget the newest turns are kept.
    await client.post(
        f"/v1/banks/{bank}/sessions/s/events",
        json={
            "events": [{"role": "user", "content": f"Note number {i} about the booking."} for i in range(40)]
        },
    )
    tight = await ask(client, bank, "table booking", working_memory=True, session_id="s", max_tokens=60)
    assert "Note number 39 about the booking." in tight["context"]
    assert "eight people" not in tight["context"]


async def test_reads_are_logged_and_counted(client: httpx.AsyncClient, app: Any, sql: Any) -> None:
    bank = await make_bank(client)
    unit = await write(client, bank, "The user's dentist is Dr. Alvarez.", ["fact"])
    answer = await ask(client, bank, "who is my dentist?", min_score=0)
    assert answer["memories"][0]["id"] == unit["id"]
    await app.state.recorder.flush()
    [logged] = await sql("SELECT query, result_ids, took_ms FROM query_log WHERE bank_id = :bank", bank=bank)
    assert logged["query"] == "who is my dentist?"
    assert logged["result_ids"] == [uuid.UUID(unit["id"])]
    counted = (await client.get(f"/v1/banks/{bank}/memories/{unit['id']}")).json()
    assert counted["access_count"] == 1
    assert counted["last_accessed_at"] is not None


async def test_a_bank_deleted_before_the_flush_takes_only_its_own_reads(
    client: httpx.AsyncClient, app: Any, sql: Any
) -> None:
    kept, gone = await make_bank(client), await make_bank(client)
    units = {
        bank: await write(client, bank, "The user's dentist is Dr. Alvarez.", ["fact"])
        for bank in (kept, gone)
    }
    for bank in (kept, gone):
        await ask(client, bank, "who is my dentist?", min_score=0)
    assert (await client.delete(f"/v1/banks/{gone}")).status_code == 204
    await app.state.recorder.flush()
    assert len(await sql("SELECT 1 FROM query_log WHERE bank_id = :bank", bank=kept)) == 1
    counted = (await client.get(f"/v1/banks/{kept}/memories/{units[kept]['id']}")).json()
    assert counted["access_count"] == 1


async def test_isolation_empty_banks_and_bad_input(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    other = await make_bank(client)
    await write(client, other, "The other bank's secret is 42.", ["fact"])
    empty = await ask(client, bank, "secret", min_score=0)
    assert (empty["memories"], empty["context"]) == ([], "")
    key = (await client.post(f"/v1/banks/{bank}/keys", json={"scopes": ["read"]})).json()["key"]
    as_bank = {"Authorization": f"Bearer {key}"}
    assert (
        await client.post(f"/v1/banks/{bank}/query", json={"query": "secret"}, headers=as_bank)
    ).status_code == 200
    assert_problem(
        await client.post(f"/v1/banks/{other}/query", json={"query": "secret"}, headers=as_bank), 404
    )
    for bad in (
        {"query": ""},
        {"query": "   "},
        {"query": "x", "top_k": 1000},
        {"query": "x", "top_k": 0},
        {"query": "x", "fusion": "magic"},
        {"query": "x", "statuses": ["alive"]},
        {"query": "x", "timezone": "Mars/Base"},
        {"query": "x", "weights": {"semantic": -1}},
    ):
        assert_problem(await client.post(f"/v1/banks/{bank}/query", json=bad), 422)
