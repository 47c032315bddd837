"""No starvation: the distillation and resolution of new events never wait behind bulk work (a burst
of redistills and maintenance) nor behind one bank's long resolution.

The stack is `hindsight dev`'s own (its worker layout is what is under test), with the fake
OpenAI-compatible server as the LLM and embedder, so a redistill with the LLM distiller takes as long
as the fake makes each answer wait: a burst of them is a backlog of known size, cheap for the machine.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import NullPool, text
from sqlalchemy.ext.asyncio import create_async_engine

from app.embedded import free_port
from app.keys import composite_key
from tests.conftest import sql_runner, wait_for
from tests.dev_process import start_dev, stop_dev, wait_dev_ready
from tests.fake_openai import create_fake_openai, reply, script, serve

REDISTILLS = 24
MAINTENANCE = ("sweep", "expire", "decay", "promote", "merge", "reembed")  # 24 + 6 = 30 jobs queued
LLM_ANSWER_SECONDS = 1.0  # each replayed session waits this long for the fake LLM
NEW_EVENTS_WITHIN = 5.0  # the brief's bound: a new session's units are active within 5 s of its close


@dataclass
class Dev:
    url: str
    client: httpx.AsyncClient
    sql: Any
    llm: FastAPI
    database_url: str


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[tuple[FastAPI, str]]:
    llm = create_fake_openai()
    with serve(llm) as url:
        yield llm, url


@pytest.fixture(scope="module")
def dev_process(
    tmp_path_factory: pytest.TempPathFactory, fake_llm: tuple[FastAPI, str]
) -> Iterator[tuple[subprocess.Popen[bytes], dict[str, str]]]:
    data_dir = tmp_path_factory.mktemp("starvation") / "hindsight"
    proc = start_dev(
        data_dir,
        free_port(),
        HINDSIGHT_LLM_BASE_URL=fake_llm[1],
        HINDSIGHT_LLM_MAX_RETRIES="0",
        HINDSIGHT_EMBEDDING_PROVIDER="openai",
        HINDSIGHT_EMBEDDING_MODEL="fake-embedding",
        HINDSIGHT_RATE_LIMIT_PER_SECOND="0",
    )
    try:
        yield proc, wait_dev_ready(proc, data_dir)
        stop_dev(proc)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.fixture(scope="module")
async def dev(
    dev_process: tuple[subprocess.Popen[bytes], dict[str, str]], fake_llm: tuple[FastAPI, str]
) -> AsyncIterator[Dev]:
    info = dev_process[1]
    engine = create_async_engine(info["database_url"], poolclass=NullPool)
    headers = {"Authorization": f"Bearer {info['api_key']}"}
    async with httpx.AsyncClient(base_url=info["url"], headers=headers, timeout=30) as client:
        yield Dev(info["url"], client, sql_runner(engine), fake_llm[0], info["database_url"])
    await engine.dispose()


async def _bank(dev: Dev, bank: str) -> None:
    response = await dev.client.post("/v1/banks", json={"bank_id": bank})
    assert response.status_code == 201, response.text


async def _close_session(dev: Dev, bank: str, session: str, turns: list[str]) -> str:
    """Append the turns (user and assistant in turn) and close the session; return its job id."""
    body = {"events": [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(turns)]}
    appended = await dev.client.post(f"/v1/banks/{bank}/sessions/{session}/events", json=body)
    assert appended.status_code == 202, appended.text
    closed = await dev.client.post(f"/v1/banks/{bank}/sessions/{session}/close")
    assert closed.status_code == 200, closed.text
    job_id: str = closed.json()["job_id"]
    return job_id


SESSION = [
    "I moved to Porto last spring and I work as a pharmacist.",
    "Noted, Porto and pharmacy.",
    "My daughter Ana starts school in September.",
]


async def _units_active(dev: Dev, bank: str) -> list[str]:
    """Once every unit of the bank is active (at least one): their statuses."""
    rows = await dev.sql("SELECT status FROM memory_units WHERE bank_id = :bank", bank=bank)
    statuses = [r["status"] for r in rows]
    return statuses if statuses and set(statuses) == {"active"} else []


async def _distilled(dev: Dev, bank: str, sessions: int) -> bool:
    """Every session distilled and nothing of the bank left to do (no job waiting, no unit pending)."""
    [row] = await dev.sql(
        "SELECT count(*) FILTER (WHERE kind = 'distill.session' AND status = 'succeeded') AS distilled,"
        " count(*) FILTER (WHERE status IN ('queued', 'running')) AS unfinished,"
        " (SELECT count(*) FROM memory_units WHERE bank_id = :bank AND status = 'pending') AS pending"
        " FROM jobs WHERE bank_id = :bank",
        bank=bank,
    )
    return bool(row["distilled"] >= sessions and row["unfinished"] == 0 and row["pending"] == 0)


async def _jobs(dev: Dev, kind: str, status: str, bank: str | None = None) -> int:
    rows = await dev.sql(
        "SELECT count(*) AS n FROM jobs WHERE kind = :kind AND status = :status"
        " AND (CAST(:bank AS text) IS NULL OR bank_id = :bank)",
        kind=kind,
        status=status,
        bank=bank,
    )
    return int(rows[0]["n"])


async def test_a_burst_of_redistills_and_maintenance_never_delays_a_new_session(dev: Dev) -> None:
    # A bank to replay, distilled the ordinary way first (this also warms both realtime processes).
    await _bank(dev, "replayed")
    sessions = [[f"{turn} (week {week})" for turn in SESSION] for week in range(4)]
    await asyncio.gather(*(_close_session(dev, "replayed", f"s{i}", t) for i, t in enumerate(sessions)))
    await wait_for(lambda: _distilled(dev, "replayed", 4), within=60, interval=0.2)

    # 24 redistills of it with the LLM distiller (4 sessions x 1 s each: ~100 s of work) and every
    # maintenance task, all queued at once.
    script(dev.llm, reply('{"units": []}', delay=LLM_ANSWER_SECONDS))
    for _ in range(REDISTILLS):
        body = {"distiller": "llm", "dry_run": True}
        response = await dev.client.post("/v1/banks/replayed/redistill", json=body)
        assert response.status_code == 202, response.text
    for task in MAINTENANCE:
        response = await dev.client.post(f"/v1/admin/maintenance/{task}")
        assert response.status_code == 202, response.text
    await wait_for(lambda: _jobs(dev, "distill.redistill", "running"), within=30, interval=0.1)

    # Another bank's new session: distilled and resolved while the burst still waits.
    await _bank(dev, "fresh")
    await _close_session(dev, "fresh", "new", SESSION)
    statuses = await wait_for(lambda: _units_active(dev, "fresh"), within=NEW_EVENTS_WITHIN, interval=0.1)
    assert statuses
    waiting = await _jobs(dev, "distill.redistill", "queued")
    assert waiting >= REDISTILLS - 4, waiting  # the burst was in front of it, and still is

    # /readyz shows where the backlog is: on replay, with its age; nothing waits on distill.
    ready = await dev.client.get("/readyz")
    assert ready.status_code == 200, ready.text
    queues = ready.json()["queues"]
    assert set(queues) == {"distill", "resolve", "replay", "maintenance", "webhooks"}
    assert queues["replay"]["queued"] >= waiting - 1
    assert queues["replay"]["lag_seconds"] > 0
    assert queues["distill"]["queued"] == 0
    assert {name: q["workers"] for name, q in queues.items()} == dict.fromkeys(queues, 1)


async def test_one_banks_long_resolution_never_delays_another_banks_new_session(dev: Dev) -> None:
    """A resolve.bank that holds a realtime slot (here: waiting for its bank's lock, which the test
    holds) leaves the other slot to every other bank."""
    script(dev.llm, reply('{"units": []}'))
    await _bank(dev, "huge")
    engine = create_async_engine(dev.database_url, poolclass=NullPool)
    try:
        async with engine.connect() as lock_holder:
            await lock_holder.execute(
                text("SELECT pg_advisory_lock(hashtextextended(:key, 0))"),
                {"key": composite_key("resolve", "huge")},
            )
            await _close_session(dev, "huge", "long", SESSION)
            await wait_for(lambda: _jobs(dev, "resolve.bank", "running", "huge"), within=30, interval=0.1)

            await _bank(dev, "other")
            await _close_session(dev, "other", "new", SESSION)
            await wait_for(lambda: _units_active(dev, "other"), within=NEW_EVENTS_WITHIN, interval=0.1)
            huge = await dev.sql("SELECT status FROM memory_units WHERE bank_id = 'huge'")
            assert huge
            assert {r["status"] for r in huge} == {"pending"}  # its resolution is still held
            await lock_holder.execute(
                text("SELECT pg_advisory_unlock(hashtextextended(:key, 0))"),
                {"key": composite_key("resolve", "huge")},
            )
    finally:
        await engine.dispose()


async def test_maintenance_never_waits_behind_a_long_redistill(dev: Dev) -> None:
    """Issue 29: a bank's expire waited 11 minutes behind redistills sharing its worker slot. The
    maintenance pool is its own, so it runs while a long redistill holds the replay worker."""
    await dev.sql("UPDATE jobs SET status = 'failed' WHERE status = 'queued'")  # an earlier test's backlog
    await _bank(dev, "long-replay")
    sessions = [[f"{turn} (month {month})" for turn in SESSION] for month in range(3)]
    await asyncio.gather(*(_close_session(dev, "long-replay", f"m{i}", t) for i, t in enumerate(sessions)))
    # setting up on a loaded machine may take a while; what is tested is what happens after
    await wait_for(lambda: _distilled(dev, "long-replay", 3), within=180, interval=0.2)
    await _bank(dev, "tidied")

    # Each replayed session waits 20 s for the LLM: the redistill holds the replay slot for a minute.
    script(dev.llm, reply('{"units": []}', delay=20.0))
    for _ in range(2):
        response = await dev.client.post("/v1/banks/long-replay/redistill", json={"distiller": "llm"})
        assert response.status_code == 202, response.text
    redistill = response.json()["job_id"]
    await wait_for(
        lambda: _jobs(dev, "distill.redistill", "running", "long-replay"), within=180, interval=0.1
    )

    expire = await dev.client.post("/v1/admin/maintenance/expire", json={"bank_id": "tidied"})
    assert expire.status_code == 202, expire.text

    async def finished() -> str | None:
        job = (await dev.client.get(f"/v1/jobs/{expire.json()['job_id']}")).json()
        return str(job["status"]) if job["status"] in ("succeeded", "failed") else None

    assert await wait_for(finished, within=60, interval=0.2) == "succeeded"
    # Causality: the expire finished while the replay worker was still on the first redistill, with
    # the second one waiting behind it.
    assert (await dev.client.get(f"/v1/jobs/{redistill}")).json()["status"] == "queued"
    assert await _jobs(dev, "distill.redistill", "running", "long-replay") == 1
    script(dev.llm, reply('{"units": []}'))
