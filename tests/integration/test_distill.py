"""Distillation end to end: the API, a real Celery worker, PostgreSQL, Redis and the local model
(the LLM path talks to the fake OpenAI-compatible server of the test stack)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from app.config import get_settings
from app.events.working_memory import working_memory_key
from tests.conftest import Stack, assert_problem, wait_for
from tests.factories import CONVERSATION, InProcessDistill, events, finished_job, make_bank, units
from tests.fake_openai import error, reply


async def session_row(client: httpx.AsyncClient, bank: str, session: str) -> dict[str, Any]:
    response = await client.get(f"/v1/banks/{bank}/sessions/{session}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_appended_turns_become_active_units_without_a_call(
    client: httpx.AsyncClient, worker: Any, sql: Any, stack: Stack
) -> None:
    bank = await make_bank(client)
    for line in CONVERSATION:  # one turn per request, as an agent appends them
        response = await client.post(
            f"/v1/banks/{bank}/sessions/chat/events", json={"events": events([line])}
        )
        assert response.status_code == 202, response.text

    async def distilled_to_ten() -> bool:
        session = await session_row(client, bank, "chat")
        pending = await units(sql, bank, "pending")
        return session["distilled_seq"] >= 10 and not pending and bool(await units(sql, bank, "active"))

    await wait_for(distilled_to_ten, within=180)  # a worker busy with earlier modules' jobs
    active = await units(sql, bank, "active")
    by_content = {u["content"]: u for u in await units(sql, bank)}

    budget = by_content["The user's budget is 5000."]
    assert budget["tags"] == ["constraint.budget"]
    assert budget["source_seqs"] == [3]
    assert budget["confidence"] >= 0.85
    hedged = by_content["If the configuration can be upgraded the user can go to 8000."]
    assert hedged["tags"] == ["constraint.budget"]
    assert 0.6 <= hedged["confidence"] < budget["confidence"]
    # One budget: the later one fills the slot, its condition kept (issue 16; it used to leave two)
    assert (budget["status"], hedged["status"]) == ("superseded", "active")
    # The assistant's pleasantries, questions and acknowledgements leave nothing (issue 16)
    assert not [u for u in active if set(u["source_seqs"]) & {2, 4, 6, 8}]
    deadline = next(u for u in active if u["source_seqs"] == [5] and "constraint.time" in u["tags"])
    assert "2026-12-04" in deadline["content"]  # "by Friday", said on Monday 2026-11-30
    # The question states no budget; greetings and thanks leave nothing.
    assert all("constraint.budget" not in u["tags"] for u in active if u["source_seqs"] == [9])
    assert not [u for u in active if u["source_seqs"] == [11]]
    order = next(u for u in active if u["source_seqs"] == [10])
    assert "fact.id" in order["tags"]

    # Provenance, embeddings, entities and history are all there.
    event_ids = await sql(
        "SELECT seq, id FROM events WHERE bank_id = :bank AND session_id = 'chat' ORDER BY seq", bank=bank
    )
    assert budget["source_event_ids"] == [event_ids[2]["id"]]
    vectors = await sql(
        "SELECT count(*) AS n FROM memory_embeddings WHERE bank_id = :bank AND model = :model AND dim = 384",
        bank=bank,
        model=get_settings().embedding_model,
    )
    assert vectors[0]["n"] == len(by_content)
    linked = await sql(
        "SELECT e.name, e.type FROM memory_entities me JOIN entities e ON e.id = me.entity_id"
        " WHERE me.memory_id = :id",
        id=order["id"],
    )
    assert {"name": "ORD-12345", "type": "id"} in [dict(r) for r in linked]
    history = await sql(
        "SELECT action, actor FROM memory_history WHERE memory_id = :id ORDER BY at, id", id=budget["id"]
    )
    assert [h["action"] for h in history] == ["created", "activated", "superseded"]
    assert history[0]["actor"] == "distiller:heuristic-3"

    # The working buffer keeps only the turns not yet distilled.
    redis = aioredis.Redis.from_url(stack.redis_url)
    try:
        buffered = [json.loads(t)["seq"] for t in await redis.lrange(working_memory_key(bank, "chat"), 0, -1)]
    finally:
        await redis.aclose()
    session = await session_row(client, bank, "chat")
    assert buffered == list(range(session["distilled_seq"] + 1, 13))


async def test_concurrent_distill_requests_share_one_job_and_add_no_duplicates(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    response = await client.post(
        f"/v1/banks/{bank}/sessions/s/events", json={"events": events(CONVERSATION[:6])}
    )
    assert response.status_code == 202
    assert not await units(sql, bank)  # below the bank's threshold: nothing happens by itself

    first, second = await asyncio.gather(
        client.post(f"/v1/banks/{bank}/sessions/s/distill"),
        client.post(f"/v1/banks/{bank}/sessions/s/distill"),
    )
    assert first.status_code == second.status_code == 202
    jobs = {first.json()["job_id"], second.json()["job_id"]}
    for job_id in jobs:
        job = await finished_job(client, job_id)
        assert job["status"] == "succeeded", job
        assert job["kind"] == "distill.session"
    distilled = await units(sql, bank)
    keys = [(u["content"], tuple(u["source_seqs"])) for u in distilled]
    assert distilled
    assert len(keys) == len(set(keys))

    # Asking again distils nothing new.
    again = await client.post(f"/v1/banks/{bank}/sessions/s/distill")
    job = await finished_job(client, again.json()["job_id"])
    assert job["status"] == "succeeded"
    assert job["result"]["distilled_seq"] == 6
    assert "events" not in job["result"] or job["result"]["events"] == 0
    assert len(await units(sql, bank)) == len(distilled)


async def test_close_distills_the_tail(client: httpx.AsyncClient, worker: Any, sql: Any) -> None:
    bank = await make_bank(client)
    lines = [("user", "My name is Dana Whitfield."), ("user", "I work at Northwind Traders as an analyst.")]
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events(lines)})
    closed = await client.post(f"/v1/banks/{bank}/sessions/s/close")
    assert closed.status_code == 200, closed.text
    assert closed.json()["status"] == "closed"
    job = await finished_job(client, closed.json()["job_id"])
    assert job["status"] == "succeeded", job
    assert job["result"]["events"] == 2
    assert (await session_row(client, bank, "s"))["distilled_seq"] == 2

    async def both_active() -> list[Any]:
        rows = await units(sql, bank, "active")
        return rows if len(rows) >= 2 else []

    contents = [u["content"] for u in await wait_for(both_active)]
    assert "Dana Whitfield" in contents[0]
    assert any("Northwind Traders" in c for c in contents)
    # Nothing left: closing again starts no job.
    assert (await client.post(f"/v1/banks/{bank}/sessions/s/close")).json()["job_id"] is None


async def test_distill_endpoints_refuse_unknown_sessions_and_read_only_keys(
    client: httpx.AsyncClient,
) -> None:
    bank = await make_bank(client)
    assert_problem(await client.post(f"/v1/banks/{bank}/sessions/nope/distill"), 404)
    assert_problem(await client.post(f"/v1/banks/{bank}/redistill", json={"session_ids": ["nope"]}), 404)
    assert_problem(await client.post(f"/v1/banks/{bank}/redistill", json={"distiller": "gpt"}), 422)
    key = (await client.post(f"/v1/banks/{bank}/keys", json={"scopes": ["read"]})).json()["key"]
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events(CONVERSATION[:1])})
    read_only = await client.post(
        f"/v1/banks/{bank}/sessions/s/distill", headers={"Authorization": f"Bearer {key}"}
    )
    assert_problem(read_only, 403)


LLM_UNITS = {
    "units": [
        {
            "content": "The user's budget for a work laptop is 5000.",
            "tags": ["constraint.budget"],
            "confidence": 0.95,
            "importance": 0.9,
            "source_seqs": [3],
            "entities": [{"name": "5000", "type": "amount"}],
            "relations": [{"subject": "user", "relation": "has_budget", "object": "5000"}],
        }
    ]
}


async def test_redistill_dry_run_diffs_and_apply_replaces(
    client: httpx.AsyncClient, worker: Any, sql: Any, stack: Stack
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events(CONVERSATION[:5])})
    job = await finished_job(
        client, (await client.post(f"/v1/banks/{bank}/sessions/s/distill")).json()["job_id"]
    )
    assert job["status"] == "succeeded"
    await wait_for(lambda: units(sql, bank, "active"))
    before = await units(sql, bank)

    # The same distiller again: nothing would change.
    same = await client.post(f"/v1/banks/{bank}/redistill", json={"dry_run": True})
    result = (await finished_job(client, same.json()["job_id"]))["result"]
    assert result["added"] == []
    assert result["removed"] == []
    assert len(result["unchanged"]) == len(before)

    # The LLM distiller: its one unit would be added, the heuristic ones removed.
    stack.llm.state.chat_script = [reply(json.dumps(LLM_UNITS))]
    dry = await client.post(f"/v1/banks/{bank}/redistill", json={"distiller": "llm", "dry_run": True})
    job = await finished_job(client, dry.json()["job_id"])
    assert job["status"] == "succeeded", job
    diff = job["result"]
    assert [a["content"] for a in diff["added"]] == ["The user's budget for a work laptop is 5000."]
    assert {r["id"] for r in diff["removed"]} == {str(u["id"]) for u in before}
    assert diff["counts"] == {"added": 1, "removed": len(before), "unchanged": 0, "sessions": 1}
    assert diff["usage"]["total_tokens"] > 0
    assert [(u["id"], u["status"]) for u in await units(sql, bank)] == [
        (u["id"], u["status"]) for u in before
    ]

    applied = await client.post(
        f"/v1/banks/{bank}/redistill", json={"distiller": "llm", "session_ids": ["s"]}
    )
    assert (await finished_job(client, applied.json()["job_id"]))["status"] == "succeeded"

    async def replaced() -> list[Any]:
        return await units(sql, bank, "active")

    active = await wait_for(replaced)
    assert [u["content"] for u in active] == ["The user's budget for a work laptop is 5000."]
    assert active[0]["distiller"] == "llm-1:gpt-4o-mini"
    retired = await units(sql, bank, "deleted")  # retired by the replay, restorable; nothing supersedes them
    assert {u["id"] for u in retired} == {u["id"] for u in before}
    actions = await sql(
        "SELECT DISTINCT action FROM memory_history WHERE memory_id = ANY(:ids)",
        ids=[u["id"] for u in before],
    )
    assert {"redistilled"} <= {a["action"] for a in actions}


@pytest.fixture
async def in_process(stack: Stack, app: Any) -> AsyncIterator[Any]:
    """The worker's distillation code run in this process (embeddings from the fake server; the
    API's task queue, whose broker connection pool is shared process-wide)."""
    from app.config import get_settings
    from app.db.engine import create_engine, create_sessionmaker
    from app.distill.service import create_distiller
    from app.providers.embeddings import OpenAIEmbedder

    settings = get_settings()
    engine = create_engine(settings, pool_size=4)
    embedder = OpenAIEmbedder("fake-embedding", 384, stack.llm_url, "key")
    distillers = {name: create_distiller(settings, name) for name in ("heuristic", "llm")}

    def runtime(name: str) -> Any:
        return InProcessDistill(create_sessionmaker(engine), embedder, distillers[name], app.state.work)

    yield runtime
    stack.llm.state.chat_script = [reply('{"units": []}')]
    for distiller in distillers.values():
        await distiller.aclose()
    await embedder.aclose()
    await engine.dispose()


async def run_distill_job(rt: Any, bank: str, *, dedupe: bool = True) -> tuple[uuid.UUID, str]:
    from app.distill.service import distill_session
    from app.jobs import service as jobs
    from app.jobs.kinds import JobKind
    from app.jobs.schedule import schedule_distill

    async with rt.sessionmaker() as db, db.begin():
        if dedupe:
            job, _ = await schedule_distill(db, bank, "s")
        else:  # a second job for the same session, as a duplicated trigger without the dedupe key would make
            job, _ = await jobs.create(db, JobKind.DISTILL, bank_id=bank, params={"session_id": "s"})
    status = await jobs.run(rt.work, job.id, lambda j: distill_session(rt, j), deadline=timedelta(seconds=60))
    return job.id, status


async def test_llm_failure_fails_the_job_and_keeps_the_watermark(
    client: httpx.AsyncClient, sql: Any, stack: Stack, in_process: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events(CONVERSATION[:4])})
    stack.llm.state.chat_script = [error(500)]
    job_id, status = await run_distill_job(in_process("llm"), bank)
    assert status == "failed"
    failed = (await client.get(f"/v1/jobs/{job_id}")).json()
    assert failed["status"] == "failed"
    assert "LLM call failed" in failed["error"]
    session = await session_row(client, bank, "s")
    assert (session["last_seq"], session["distilled_seq"]) == (4, 0)
    assert not await units(sql, bank)
    kept = await client.get(f"/v1/banks/{bank}/sessions/s/events")
    assert [e["content"] for e in kept.json()["events"]] == [c for _, c in CONVERSATION[:4]]


async def test_two_jobs_on_one_session_at_once_add_each_unit_once(
    client: httpx.AsyncClient, sql: Any, in_process: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events(CONVERSATION)})
    rt = in_process("heuristic")
    outcomes = await asyncio.gather(*(run_distill_job(rt, bank, dedupe=False) for _ in range(3)))
    # One job distils; the others find the session locked (and are requeued) or nothing left.
    assert "succeeded" in [status for _, status in outcomes]
    assert {status for _, status in outcomes} <= {"succeeded", "queued"}
    distilled = await units(sql, bank)
    keys = [(u["content"], tuple(u["source_seqs"])) for u in distilled]
    assert len(keys) == len(set(keys))
    assert (await session_row(client, bank, "s"))["distilled_seq"] == len(CONVERSATION)
    # A retry of a finished job's work (same identity keys) adds nothing either.
    await sql("UPDATE sessions SET distilled_seq = 0 WHERE bank_id = :bank", bank=bank)
    _, status = await run_distill_job(rt, bank)
    assert status == "succeeded"
    assert len(await units(sql, bank)) == len(distilled)


async def test_the_sweep_distills_idle_sessions(client: httpx.AsyncClient, worker: Any, sql: Any) -> None:
    bank = await make_bank(client, idle_distill_seconds=1)
    lines = [("user", "I'm allergic to peanuts.")]
    await client.post(f"/v1/banks/{bank}/sessions/quiet/events", json={"events": events(lines)})
    await asyncio.sleep(1.2)
    sweep = await client.post("/v1/admin/maintenance/sweep")
    job = await finished_job(client, sweep.json()["job_id"])
    assert job["status"] == "succeeded", job
    assert job["result"]["idle_sessions"] >= 1

    async def distilled() -> list[Any]:
        return await units(sql, bank, "active")

    [unit] = await wait_for(distilled)
    assert unit["tags"] == ["constraint.diet"]
    assert unit["content"] == "The user is allergic to peanuts."


async def test_working_memory_holds_the_undistilled_turns(
    client: httpx.AsyncClient, sql: Any, stack: Stack, in_process: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    url = f"/v1/banks/{bank}/sessions/s/working_memory"
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events(CONVERSATION[:4])})
    body = (await client.get(url)).json()
    assert (body["source"], [t["seq"] for t in body["turns"]]) == ("redis", [1, 2, 3, 4])
    assert body["turns"][2]["content"] == "My budget is 5000."
    assert [t["seq"] for t in (await client.get(url, params={"limit": 2})).json()["turns"]] == [3, 4]

    # Redis lost the buffer: the log answers instead.
    redis = aioredis.Redis.from_url(stack.redis_url)
    try:
        await redis.delete(working_memory_key(bank, "s"))
    finally:
        await redis.aclose()
    body = (await client.get(url)).json()
    assert (body["source"], [t["seq"] for t in body["turns"]]) == ("events", [1, 2, 3, 4])

    # Once distilled, the turns leave working memory.
    _, status = await run_distill_job(in_process("heuristic"), bank)
    assert status == "succeeded"
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events(CONVERSATION[4:5])})
    body = (await client.get(url)).json()
    assert (body["distilled_seq"], [t["seq"] for t in body["turns"]]) == (4, [5])
    assert_problem(await client.get(f"/v1/banks/{bank}/sessions/nope/working_memory"), 404)


async def test_llm_distiller_sees_related_units_and_can_supersede_one(
    client: httpx.AsyncClient, sql: Any, stack: Stack, in_process: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events(CONVERSATION[2:3])})
    _, status = await run_distill_job(in_process("heuristic"), bank)
    assert status == "succeeded"
    [old] = await units(sql, bank)
    await sql("UPDATE memory_units SET status = 'active' WHERE id = :id", id=old["id"])

    update = {
        "content": "The user's budget is now 8000.",
        "tags": ["constraint.budget"],
        "confidence": 0.9,
        "importance": 0.85,
        "source_seqs": [2],
        "supersedes": str(old["id"]),
        "entities": [{"name": "8000", "type": "amount"}],
    }
    stack.llm.state.chat_script = [reply(f"```json\n{json.dumps({'units': [update]})}\n```")]
    stack.llm.state.requests.clear()
    await client.post(
        f"/v1/banks/{bank}/sessions/s/events", json={"events": events([("user", "Make that 8000 instead.")])}
    )
    job_id, status = await run_distill_job(in_process("llm"), bank)
    assert status == "succeeded"
    job = (await client.get(f"/v1/jobs/{job_id}")).json()
    assert job["result"]["units"] == 1
    assert job["result"]["usage"]["total_tokens"] == 15
    [chat] = [body for kind, body in stack.llm.state.requests if kind == "chat"]
    prompt = json.dumps(chat["messages"], ensure_ascii=False)
    assert str(old["id"]) in prompt  # the related active unit was offered with its id
    new = next(u for u in await units(sql, bank) if u["id"] != old["id"])
    assert (new["content"], new["supersedes"], new["status"]) == (
        "The user's budget is now 8000.",
        old["id"],
        "pending",
    )
    assert new["distiller"] == "llm-1:gpt-4o-mini"
    assert new["source_seqs"] == [2]
