"""When memory is searchable: a distillation says so (`searchable`), `distill?wait=true` answers then,
an append names the distillation it started, and `/stats` counts the job while it runs."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from app.keys import composite_key
from tests.conftest import Stack, wait_for
from tests.factories import make_bank, searchable_job

CITIES = ["Lisbon", "Osaka", "Nairobi", "Quito", "Tallinn"]


def turns(city: str, order: str) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"I live in {city}."},
        {"role": "assistant", "content": "Thanks, noted."},
        {"role": "user", "content": f"My order number is {order}."},
        {"role": "assistant", "content": "Got it."},
        {"role": "user", "content": "I prefer email over phone calls."},
    ]


async def ask(client: httpx.AsyncClient, bank: str, question: str) -> dict[str, Any]:
    response = await client.post(f"/v1/banks/{bank}/query", json={"query": question, "top_k": 5})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_the_job_an_append_started_is_searchable_then_a_query_finds_the_fact_every_time(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client)  # distill_every_n_turns: 5, so each append below starts one
    for round_, city in enumerate(CITIES):
        order = f"ORD-{7100 + round_}"
        session = f"chat-{round_}"
        appended = await client.post(
            f"/v1/banks/{bank}/sessions/{session}/events", json={"events": turns(city, order)}
        )
        assert appended.status_code == 202, appended.text
        job_id = appended.json()["distill_job_id"]
        assert job_id, appended.json()
        job = await searchable_job(client, job_id)
        assert (job["status"], job["searchable"], job["kind"]) == ("succeeded", True, "distill.session")
        assert job["result"]["resolve_job_ids"], job["result"]
        # At once, no further wait: the units are active (a query returns only active ones) and found.
        found = await ask(client, bank, f"what about order {order}?")
        assert any(order in m["content"] for m in found["memories"]), (round_, found["memories"])
        where = await ask(client, bank, f"does the user live in {city}?")
        assert any(city in m["content"] for m in where["memories"]), (round_, where["memories"])
        units = (await client.get(f"/v1/banks/{bank}/memories", params={"session_id": session})).json()
        assert units["memories"]
        assert all(u["status"] != "pending" for u in units["memories"])


async def test_an_append_below_the_threshold_names_no_job_and_other_jobs_have_no_flag(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client)
    appended = await client.post(
        f"/v1/banks/{bank}/sessions/s/events", json={"events": turns("Lisbon", "ORD-1")[:2]}
    )
    assert appended.status_code == 202, appended.text
    assert appended.json()["distill_job_id"] is None
    job = await searchable_job(
        client, (await client.post(f"/v1/banks/{bank}/sessions/s/distill")).json()["job_id"]
    )
    resolve = (await client.get(f"/v1/jobs/{job['result']['resolve_job_ids'][0]}")).json()
    assert resolve["kind"] == "resolve.bank"
    assert resolve["searchable"] is None


async def test_distill_wait_answers_when_the_sessions_units_are_searchable(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client)
    for round_, city in enumerate(CITIES[:3]):
        session = f"wait-{round_}"
        lines = [{"role": "user", "content": f"I live in {city}."}]
        assert (
            await client.post(f"/v1/banks/{bank}/sessions/{session}/events", json={"events": lines})
        ).status_code == 202
        response = await client.post(f"/v1/banks/{bank}/sessions/{session}/distill", params={"wait": "true"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["job"]["id"] == body["job_id"]
        assert (body["job"]["status"], body["job"]["searchable"]) == ("succeeded", True)
        where = await ask(client, bank, f"does the user live in {city}?")
        assert any(city in m["content"] for m in where["memories"]), where["memories"]
    # Nothing left to distil: the wait ends at once, the job has no units and is searchable.
    again = await client.post(f"/v1/banks/{bank}/sessions/wait-0/distill", params={"wait": "true"})
    assert again.status_code == 200, again.text
    assert again.json()["job"]["result"]["resolve_job_ids"] == []
    # Without wait: 202 and the job id, as before.
    plain = await client.post(f"/v1/banks/{bank}/sessions/wait-0/distill")
    assert plain.status_code == 202
    assert plain.json()["job"] is None


async def test_stats_count_a_running_distillation(
    client: httpx.AsyncClient, worker: Any, stack: Stack
) -> None:
    bank = await make_bank(client)
    url = f"/v1/banks/{bank}/sessions/held/events"
    assert (await client.post(url, json={"events": turns("Quito", "ORD-9")[:1]})).status_code == 202
    engine = create_async_engine(stack.database_url, poolclass=NullPool)
    key = composite_key("distill", bank, "held")
    try:
        async with engine.connect() as holder:
            # The session is held (as by another distillation): the job is claimed and waits.
            await holder.execute(text("SELECT pg_advisory_lock(hashtextextended(:key, 0))"), {"key": key})
            job_id = (await client.post(f"/v1/banks/{bank}/sessions/held/distill")).json()["job_id"]

            async def running() -> dict[str, Any] | None:
                stats: dict[str, Any] = (await client.get(f"/v1/banks/{bank}/stats")).json()
                return stats if stats["running_jobs"] == 1 else None

            stats = await wait_for(running, within=30)
            assert stats["queued_jobs"] == 0
            job = (await client.get(f"/v1/jobs/{job_id}")).json()
            assert (job["status"], job["searchable"]) == ("running", False)
            await holder.execute(text("SELECT pg_advisory_unlock(hashtextextended(:key, 0))"), {"key": key})
    finally:
        await engine.dispose()
    assert (await searchable_job(client, job_id))["searchable"] is True

    async def idle() -> bool:
        stats = (await client.get(f"/v1/banks/{bank}/stats")).json()
        return bool((stats["running_jobs"], stats["queued_jobs"]) == (0, 0))

    await wait_for(idle, within=30)  # its resolution job finishes too
