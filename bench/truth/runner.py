"""One case in one mode against a running service, through its HTTP API (any `httpx.AsyncClient`
with the admin key: a real server, or the app in process): a bank of its own, the statements told or
written, the question asked, the bank deleted."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable
from typing import Any

import httpx

from bench.truth.check import Outcome, check, failed
from bench.truth.suite import Case

SESSION = "evolution"
TOP_K = 5


async def _settled(client: httpx.AsyncClient, bank: str) -> None:
    """Wait until the bank has no undistilled event, no job queued or running and no pending unit."""
    pause = 0.1
    while True:
        r = await client.get(f"/v1/banks/{bank}/stats")
        r.raise_for_status()
        s = r.json()
        busy = (
            s["undistilled_events"]
            + s["queued_jobs"]
            + s["running_jobs"]
            + s["memories_by_status"].get("pending", 0)
        )
        if not busy:
            return
        await asyncio.sleep(pause)
        pause = min(pause * 1.5, 1.0)


async def tell(client: httpx.AsyncClient, bank: str, case: Case) -> None:
    """The conversation, one turn per append as a chat client sends them, then closed; waits for its
    distillation (and the resolution after it)."""
    url = f"/v1/banks/{bank}/sessions/{SESSION}"
    for turn in case.turns:
        (await client.post(f"{url}/events", json={"events": [turn]})).raise_for_status()
    closed = await client.post(f"{url}/close")
    closed.raise_for_status()
    await _settled(client, bank)
    job_id = closed.json().get("job_id")
    if job_id:
        job = (await client.get(f"/v1/jobs/{job_id}")).json()
        if job["status"] != "succeeded":
            raise RuntimeError(f"the distillation job ended {job['status']}: {job.get('error')}")


async def write(client: httpx.AsyncClient, bank: str, case: Case) -> None:
    """The statements as direct writes, in order, each resolved before the next."""
    for w in case.writes:
        r = await client.post(
            f"/v1/banks/{bank}/memories", params={"wait": "true"}, json={"content": w.content, "tags": w.tags}
        )
        r.raise_for_status()
    await _settled(client, bank)


async def _active(client: httpx.AsyncClient, bank: str) -> list[str]:
    contents: list[str] = []
    params: dict[str, Any] = {"status": "active", "limit": 500}
    while True:
        r = await client.get(f"/v1/banks/{bank}/memories", params=params)
        r.raise_for_status()
        page = r.json()
        contents += [m["content"] for m in page["memories"]]
        if not page.get("next_cursor"):
            return contents
        params["cursor"] = page["next_cursor"]


async def _ranked(client: httpx.AsyncClient, bank: str, question: str) -> list[str]:
    r = await client.post(f"/v1/banks/{bank}/query", json={"query": question, "top_k": TOP_K})
    r.raise_for_status()
    return [m["content"] for m in r.json()["memories"]]


async def _ended(client: httpx.AsyncClient, bank: str) -> list[str]:
    """Why each unit that left the active set by resolution left it: its history's reason."""
    r = await client.get(f"/v1/banks/{bank}/memories", params={"status": "superseded", "limit": 100})
    r.raise_for_status()
    reasons: list[str] = []
    for m in r.json()["memories"]:
        lineage = await client.get(f"/v1/banks/{bank}/memories/{m['id']}/history")
        lineage.raise_for_status()
        ended = [a for a in lineage.json()["actions"] if a["details"].get("superseded_by")]
        reasons += [str(a["details"].get("reason", "?")) for a in ended[-1:]]
    return reasons


async def observe(
    client: httpx.AsyncClient, bank: str, question: str
) -> tuple[list[str], list[str], list[str]]:
    """What the bank holds now: its active contents, its answer to `question` (best first), and why
    each unit resolution ended was ended."""
    return await _active(client, bank), await _ranked(client, bank, question), await _ended(client, bank)


async def run_case(client: httpx.AsyncClient, case: Case, mode: str, within: float = 180.0) -> Outcome:
    """`case` in `mode` ('conversation' or 'direct') in a fresh bank, checked; a run that fails (or
    does not settle `within` seconds) is an outcome with its error, not an exception."""
    bank = f"evo-{mode[:4]}-{uuid.uuid4().hex[:10]}"
    try:
        async with asyncio.timeout(within):
            (await client.post("/v1/banks", json={"bank_id": bank})).raise_for_status()
            await (tell if mode == "conversation" else write)(client, bank, case)
            active, ranked, ended = await observe(client, bank, case.question)
        return check(case, mode, active, ranked, ended)
    except (httpx.HTTPError, TimeoutError, RuntimeError) as e:
        return failed(case, mode, f"{type(e).__name__}: {e}"[:300])
    finally:
        try:
            await client.delete(f"/v1/banks/{bank}")
        except httpx.HTTPError:
            pass  # a leftover bank of a throwaway stack costs nothing


async def run_all(
    client: httpx.AsyncClient, cases: Iterable[Case], modes: Iterable[str], concurrency: int
) -> list[Outcome]:
    """Every case in every mode, at most `concurrency` banks at a time, in the suite's order."""
    gate = asyncio.Semaphore(concurrency)

    async def one(case: Case, mode: str) -> Outcome:
        async with gate:
            return await run_case(client, case, mode)

    return list(await asyncio.gather(*(one(c, m) for c in cases for m in modes)))
