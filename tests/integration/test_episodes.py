"""Task episodes on the real stack (API, a Celery worker, PostgreSQL, Redis, the local model): a task
ended by a close or a reflect becomes one `episode.task` unit, similar later tasks recall it first, and
the LLM path (the fake OpenAI-compatible server) fills the same structure."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from tests.conftest import Stack, wait_for
from tests.factories import CONVERSATION, events, finished_job, make_bank, settled, units
from tests.fake_openai import reply

T0 = "2026-11-30T10:00:00+00:00"

SUPPORT_EN = [
    {"role": "user", "content": "Hi!"},
    {
        "role": "user",
        "content": "My order ORD-20417 arrived damaged: the charger is cracked. Can you replace it?",
    },
    {
        "role": "assistant",
        "content": "Let me check the warranty first.",
        "metadata": {
            "tool_calls": [{"function": {"name": "check_warranty", "arguments": '{"order": "ORD-20417"}'}}]
        },
    },
    {
        "role": "tool",
        "content": "Warranty valid until 2027-03-01.",
        "metadata": {"tool": "check_warranty", "result": "valid until 2027-03-01"},
    },
    {
        "role": "tool",
        "content": "Shipment SHP-881 created.",
        "metadata": {"name": "create_replacement", "arguments": {"order": "ORD-20417"}, "result": "SHP-881"},
    },
    {"role": "assistant", "content": "A new charger was shipped today as SHP-881 and arrives in 2 days."},
    {"role": "user", "content": "Thanks!"},
]
SUPPORT_ZH = [
    {"role": "user", "content": "我的订单ORD-30552收到时包装破损，耳机坏了，请帮我退款。"},
    {"role": "tool", "content": "订单已核实", "metadata": {"tool": "lookup_order", "result": "已签收"}},
    {"role": "tool", "content": "退款已提交", "metadata": {"tool": "issue_refund", "result": "RF-7731"}},
    {"role": "assistant", "content": "已为您办理退款RF-7731，3个工作日内到账。"},
]
OTHER_TALK = [
    ("user", "I prefer email over phone calls."),
    ("user", "My budget for the new desk is 400 euros."),
    ("user", "I live in Lisbon and work at Acme Logistics."),
    ("user", "My order ORD-11111 of office chairs arrived on time."),
]


def at(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**t, "occurred_at": T0} for t in turns]


async def close(client: httpx.AsyncClient, bank: str, session: str) -> dict[str, Any]:
    closed = await client.post(f"/v1/banks/{bank}/sessions/{session}/close")
    assert closed.status_code == 200, closed.text
    job = await finished_job(client, closed.json()["job_id"])
    assert job["status"] == "succeeded", job
    await wait_for(lambda: settled(client, bank))
    return job


async def task_units(sql: Any, bank: str) -> list[Any]:
    return [u for u in await units(sql, bank) if "episode.task" in u["tags"]]


async def test_a_closed_support_session_leaves_one_task_episode(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=3)  # distilled in batches before the close
    appended = await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": at(SUPPORT_EN)})
    assert appended.status_code == 202, appended.text
    await close(client, bank, "s")
    # Which job writes it is a race (a batch job triggered by the turn count may still be running when
    # the close marks the task's end, and write it first): the unit itself is what must be one.
    [episode] = await task_units(sql, bank)
    assert episode["status"] == "active"
    assert episode["tags"] == ["episode.task"]
    assert episode["source_seqs"] == [2, 3, 4, 5, 6]  # the request, the call, two tool results, the answer
    meta = episode["metadata"]
    assert [s["action"] for s in meta["steps"]] == [
        "check_warranty(order=ORD-20417)",
        "create_replacement(order=ORD-20417)",
    ]
    assert [s["result"] for s in meta["steps"]] == ["valid until 2027-03-01", "SHP-881"]
    assert "ORD-20417" in meta["task"]
    assert "damaged" in meta["task"]
    assert meta["outcome"] == "A new charger was shipped today as SHP-881 and arrives in 2 days."
    assert "\n" not in episode["content"]
    assert "ORD-20417" in episode["content"]
    assert 0.7 <= episode["importance"] <= 0.95
    # Linked to the units distilled from the same turns (the order id's fact among them).
    linked = {str(u["id"]): u for u in await units(sql, bank) if "episode.task" not in u["tags"]}
    assert meta["links"]
    assert set(meta["links"]) <= set(linked)
    assert any("ORD-20417" in linked[i]["content"] for i in meta["links"])
    # The API shows it like any unit.
    read = (await client.get(f"/v1/banks/{bank}/memories/{episode['id']}")).json()
    assert read["metadata"]["outcome"] == meta["outcome"]

    # Closing again, reflecting and replaying add none.
    assert (await client.post(f"/v1/banks/{bank}/sessions/s/close")).json()["job_id"] is None
    reflect = await client.post(f"/v1/banks/{bank}/sessions/s/distill")
    assert (await finished_job(client, reflect.json()["job_id"]))["status"] == "succeeded"
    replay = await client.post(f"/v1/banks/{bank}/redistill", json={"session_ids": ["s"]})
    result = (await finished_job(client, replay.json()["job_id"]))["result"]
    assert result["counts"]["added"] == result["counts"]["removed"] == 0
    await wait_for(lambda: settled(client, bank))
    assert [u["id"] for u in await task_units(sql, bank)] == [episode["id"]]


async def test_a_session_that_goes_quiet_ends_its_task(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    # Seven turns, distilled in full as they arrive (every 7 turns): no close, no reflect, nothing left
    # for the sweep's undistilled-session rule; the session going quiet ends the task.
    bank = await make_bank(client, distill_every_n_turns=7, idle_distill_seconds=1)
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": at(SUPPORT_EN)})

    async def distilled() -> bool:
        session = (await client.get(f"/v1/banks/{bank}/sessions/s")).json()
        return session["distilled_seq"] == 7 and await settled(client, bank)

    await wait_for(distilled)
    assert await task_units(sql, bank) == []
    await asyncio.sleep(1.2)  # the bank's idle time passing, not synchronisation
    sweep = await client.post("/v1/admin/maintenance/sweep")
    job = await finished_job(client, sweep.json()["job_id"])
    assert job["result"]["idle_task_ends"] >= 1
    [episode] = await wait_for(lambda: task_units(sql, bank))
    assert episode["source_seqs"] == [2, 3, 4, 5, 6]
    # Once: the next sweep finds no new turn since the task's end.
    again = await finished_job(client, (await client.post("/v1/admin/maintenance/sweep")).json()["job_id"])
    assert again["status"] == "succeeded"
    assert len(await task_units(sql, bank)) == 1


@pytest.mark.parametrize(
    ("turns", "config"),
    [
        ([{"role": "user", "content": "Hello!"}, {"role": "assistant", "content": "Hi! Can I help?"}], {}),
        (SUPPORT_EN, {"episode_min_steps": 3}),  # two steps: below the bank's minimum
        ([{"role": "user", "content": c} for _, c in CONVERSATION[:3]], {}),  # no steps at all
    ],
    ids=["greetings", "below-min-steps", "no-steps"],
)
async def test_no_task_episode_without_a_task(
    client: httpx.AsyncClient, worker: Any, sql: Any, turns: list[dict[str, Any]], config: dict[str, Any]
) -> None:
    bank = await make_bank(client, **config)
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": at(turns)})
    job = await close(client, bank, "s")
    assert "task_episodes" not in job["result"]
    assert await task_units(sql, bank) == []


@pytest.mark.parametrize(
    ("turns", "question", "needle"),
    [
        (SUPPORT_EN, "How did we handle the damaged order last time?", "SHP-881"),
        (SUPPORT_ZH, "上次订单破损是怎么处理的？", "RF-7731"),
    ],
    ids=["english", "chinese"],
)
async def test_a_similar_task_recalls_the_task_episode_first(
    client: httpx.AsyncClient, worker: Any, turns: list[dict[str, Any]], question: str, needle: str
) -> None:
    bank = await make_bank(client)
    await client.post(f"/v1/banks/{bank}/sessions/other/events", json={"events": events(OTHER_TALK)})
    await close(client, bank, "other")
    await client.post(f"/v1/banks/{bank}/sessions/task/events", json={"events": at(turns)})
    await close(client, bank, "task")

    answer = (await client.post(f"/v1/banks/{bank}/query", json={"query": question, "explain": True})).json()
    top = answer["memories"][0]
    assert top["tags"][0] == "episode.task", [(m["content"], m["scores"]) for m in answer["memories"]]
    # The context shows the task as its summary and its outcome, in a group of its own.
    block = answer["context"]
    assert block.startswith("## episode.task")
    first = block.splitlines()[1]
    assert needle in first
    assert top["metadata"]["outcome"] in first


async def test_the_llm_fills_the_same_structure_after_broken_json(
    client: httpx.AsyncClient, worker: Any, sql: Any, stack: Stack
) -> None:
    bank = await make_bank(client)
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": at(SUPPORT_EN)})
    await close(client, bank, "s")
    task = {
        "summary": "Replaced the damaged charger of order ORD-20417: checked the warranty, shipped SHP-881.",
        "task": "Replace the damaged charger of order ORD-20417.",
        "steps": [
            {"action": "check_warranty(order=ORD-20417)", "result": "valid until 2027-03-01"},
            {"action": "create_replacement(order=ORD-20417)", "result": "SHP-881"},
        ],
        "outcome": "A new charger ships today and arrives in 2 days.",
        "importance": 0.8,
        "source_seqs": [2, 3, 4, 5, 6, 99],
        "entities": [{"name": "ORD-20417", "type": "id"}],
    }
    stack.llm.state.requests.clear()
    stack.llm.state.chat_script = [
        reply('{"units": []}'),  # the turns' own units: none
        reply('```json\n{"task": {"summary": "Replaced the charger", "steps": [{"action": '),  # broken, once
        reply(json.dumps({"task": task})),
    ]
    try:
        replay = await client.post(
            f"/v1/banks/{bank}/redistill", json={"distiller": "llm", "session_ids": ["s"]}
        )
        job = await finished_job(client, replay.json()["job_id"])
    finally:
        stack.llm.state.chat_script = [reply('{"units": []}')]
    assert job["status"] == "succeeded", job
    chats = [body for kind, body in stack.llm.state.requests if kind == "chat"]
    assert len(chats) == 3  # the units, the broken task, the corrected task
    assert "Your reply was not valid" in chats[2]["messages"][-1]["content"]
    await wait_for(lambda: settled(client, bank))

    [episode] = [u for u in await task_units(sql, bank) if u["status"] == "active"]
    assert episode["content"] == task["summary"]
    assert episode["distiller"] == "llm-1:gpt-4o-mini"
    assert episode["source_seqs"] == [2, 3, 4, 5, 6]  # only seqs of the task's turns
    assert {k: episode["metadata"][k] for k in ("task", "steps", "outcome")} == {
        "task": task["task"],
        "steps": task["steps"],
        "outcome": task["outcome"],
    }
    assert episode["importance"] == 0.8
