"""`why` on the real stack: the sentence of each returned unit from its source turn and its history
(distilled turns, direct writes, corrections, superseded values), in English and Chinese, in the query,
in single reads and, asked for, in the context block; secrets masked in the quote as in the unit."""

from __future__ import annotations

from typing import Any

import httpx

from tests.factories import make_bank, ok, settled, wait_for, write

T1 = "2026-11-13T09:00:00+00:00"
T2 = "2026-11-20T09:00:00+00:00"


async def tell(
    client: httpx.AsyncClient, bank: str, turns: list[tuple[str, str]], session: str = "chat-1"
) -> None:
    """Append user turns said at the given instants, distil them, and wait until nothing is pending."""
    for content, at in turns:
        body = {"events": [{"role": "user", "content": content, "occurred_at": at}]}
        ok(await client.post(f"/v1/banks/{bank}/sessions/{session}/events", json=body), 202)
        job = ok(await client.post(f"/v1/banks/{bank}/sessions/{session}/distill"), 202)["job_id"]

        async def finished(job_id: str = job) -> bool:
            status = (await client.get(f"/v1/jobs/{job_id}")).json()["status"]
            assert status != "failed"
            return bool(status == "succeeded")

        await wait_for(finished)
        await wait_for(lambda: settled(client, bank))


async def ask(client: httpx.AsyncClient, bank: str, query: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = ok(await client.post(f"/v1/banks/{bank}/query", json={"query": query, **extra}))
    return body


async def test_a_distilled_value_says_who_said_it_where_and_what_it_replaced(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await tell(client, bank, [("My budget is 5000.", T1), ("My budget is 8000 now.", T2)])
    answer = await ask(client, bank, "what is my budget?")
    top = answer["memories"][0]
    assert "8000" in top["content"]
    assert top["why"] == (
        "Said by the user in chat-1, turn 2, on 2026-11-20: 'My budget is 8000 now.'; "
        "replaces 5000 said on 2026-11-13."
    )
    assert all(m["why"] for m in answer["memories"])
    assert "why:" not in answer["context"]  # only when asked for

    # The old value, asked for, says what replaced it.
    both = await ask(client, bank, "what is my budget?", statuses=["active", "superseded"])
    old = next(m for m in both["memories"] if m["status"] == "superseded")
    assert old["why"] == (
        "Said by the user in chat-1, turn 1, on 2026-11-13: 'My budget is 5000.'; "
        "replaced by 8000 on 2026-11-20."
    )

    # In the context block under its line, and in the unit's own read (not in lists).
    block = (await ask(client, bank, "what is my budget?", context_why=True))["context"]
    assert f"(confidence {top['confidence']:.2f})\n  why: {top['why']}" in block
    single = ok(await client.get(f"/v1/banks/{bank}/memories/{top['id']}"))
    assert single["why"] == top["why"]
    listed = ok(await client.get(f"/v1/banks/{bank}/memories"))["memories"]
    assert {m["why"] for m in listed} == {None}


async def test_a_chinese_unit_says_it_in_chinese_and_the_bank_may_choose(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000, timezone="Asia/Shanghai")
    await tell(client, bank, [("我的预算是5000", T1), ("我的预算现在是8000", T2)])
    answer = await ask(client, bank, "我的预算是多少？", context_why=True)
    top = answer["memories"][0]
    assert "8000" in top["content"]
    assert (
        top["why"]
        == "用户在 chat-1 第 2 轮（2026-11-20）说：“我的预算现在是8000”；取代了 2026-11-13 说的 5000。"
    )
    assert f"\n  缘由：{top['why']}" in answer["context"]

    ok(await client.patch(f"/v1/banks/{bank}", json={"config": {"why_language": "en"}}))
    english = (await ask(client, bank, "我的预算是多少？"))["memories"][0]
    assert english["why"] == (
        "Said by the user in chat-1, turn 2, on 2026-11-20: '我的预算现在是8000'; "
        "replaces 5000 said on 2026-11-13."
    )


async def test_direct_writes_and_corrections_say_how_they_came_in(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    first = await write(client, bank, "The office wifi network is called Harbour.", ["fact"])
    day = first["valid_from"][:10]
    [found] = (await ask(client, bank, "office wifi network"))["memories"]
    assert found["why"] == f"Written through the API on {day}."

    fixed = ok(
        await client.patch(
            f"/v1/banks/{bank}/memories/{first['id']}",
            json={"content": "The office wifi network is called Pier."},
        ),
        201,
    )
    [found] = (await ask(client, bank, "office wifi network"))["memories"]
    assert found["id"] == fixed["id"]
    assert found["why"] == (
        f"Written through the API on {fixed['valid_from'][:10]}; "
        f"replaces Harbour said on {day}."  # the old claim's value: the same attribute
    )


async def test_a_secret_in_the_source_turn_is_masked_in_the_quote(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await tell(client, bank, [("My budget is 8000 and my password is Tr0ub4dor-xyzzy-42.", T2)])
    answer = await ask(client, bank, "what is my budget?", context_why=True)
    assert answer["memories"]
    for memory in answer["memories"]:
        assert "Tr0ub4dor" not in memory["why"]
    assert "[REDACTED:password]" in answer["memories"][0]["why"]
    assert "Tr0ub4dor" not in answer["context"]
