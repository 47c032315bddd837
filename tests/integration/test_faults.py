"""Faults on the real stack, each bounded in time: Redis stopped during appends, PostgreSQL restarted
under load, a broker that delivers a task twice, and an LLM endpoint that is down.

The worker killed with SIGKILL mid-distillation (finished once by the sweep, no duplicates) is
`test_maintenance.py::test_a_worker_killed_mid_distillation_is_finished_by_the_sweep`.

Services that are stopped here are this module's own (a PostgreSQL, a Redis, a fake LLM server, a
worker and an app on them), so the shared ones stay up for the other tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from sqlalchemy import NullPool
from sqlalchemy.ext.asyncio import create_async_engine

from app.embedded import EmbeddedPostgres, EmbeddedRedis, free_port, start_postgres, start_redis
from tests.conftest import (
    ADMIN_KEY,
    Stack,
    assert_problem,
    make_client,
    sql_runner,
    start_worker,
    stop_worker,
    wait_for,
)
from tests.factories import CONVERSATION, events, finished_job, make_bank, units
from tests.fake_openai import create_fake_openai, reply, serve

FAKE_EMBEDDING = {"HINDSIGHT_EMBEDDING_PROVIDER": "openai", "HINDSIGHT_EMBEDDING_MODEL": "fake-embedding"}


class PrivateStack:
    """A PostgreSQL, a Redis and a fake OpenAI-compatible server of this module's own, each of
    which a test may stop and start again on the same port."""

    def __init__(self, base: Path) -> None:
        from app.migrate import upgrade

        self.base = base
        self.postgres: EmbeddedPostgres = start_postgres(base / "pgdata")
        self.redis: EmbeddedRedis = start_redis(base / "redis")
        upgrade(self.postgres.url())
        self.llm = create_fake_openai()
        self.llm_port = free_port()
        self._llm_server: contextlib.ExitStack | None = None
        self.start_llm()

    @property
    def llm_url(self) -> str:
        return f"http://127.0.0.1:{self.llm_port}/v1"

    def stack(self) -> Stack:
        return Stack(self.postgres.url(), self.redis.url, self.llm, self.llm_url)

    def settings(self) -> Any:
        from app.config import Settings

        return Settings(
            env="test",
            database_url=self.postgres.url(),
            redis_url=self.redis.url,
            admin_key=ADMIN_KEY,
            llm_base_url=self.llm_url,
            embedding_provider="openai",
            embedding_model="fake-embedding",
        )

    def stop_postgres(self) -> None:
        self.postgres.stop()

    def start_postgres(self) -> None:
        self.postgres = start_postgres(self.base / "pgdata", port=self.postgres.port)

    def stop_redis(self) -> None:
        self.redis.stop()

    def start_redis(self) -> None:
        self.redis = start_redis(self.base / "redis", port=self.redis.port)

    def stop_llm(self) -> None:
        if self._llm_server is not None:
            self._llm_server.close()
            self._llm_server = None

    def start_llm(self) -> None:
        self._llm_server = contextlib.ExitStack()
        self._llm_server.enter_context(serve(self.llm, port=self.llm_port))

    def close(self) -> None:
        self.stop_llm()
        self.redis.stop()
        self.postgres.stop()


@pytest.fixture(scope="module")
def private(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateStack]:
    services = PrivateStack(tmp_path_factory.mktemp("faults"))
    try:
        yield services
    finally:
        services.close()


@pytest.fixture(scope="module")
def private_worker(private: PrivateStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real worker on the private stack, distilling with the LLM distiller."""
    log = tmp_path_factory.mktemp("faults-worker") / "worker.log"
    proc = start_worker(
        private.stack(),
        log,
        "faults@localhost",
        HINDSIGHT_DISTILLER="llm",
        HINDSIGHT_LLM_MAX_RETRIES="0",
        **FAKE_EMBEDDING,
    )
    yield proc
    stop_worker(proc)


@pytest.fixture(scope="module")
async def private_app(private: PrivateStack) -> AsyncIterator[Any]:
    from app.main import create_app

    application = create_app(private.settings())
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def private_client(private_app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(private_app, ADMIN_KEY) as c:
        yield c


@pytest.fixture(scope="module")
async def private_sql(private: PrivateStack) -> AsyncIterator[Any]:
    """SQL on the private database; no pool, so a PostgreSQL restart leaves nothing stale."""
    engine = create_async_engine(private.postgres.url(), poolclass=NullPool)
    yield sql_runner(engine)
    await engine.dispose()


@pytest.fixture(autouse=True)
def _empty_llm_replies(private: PrivateStack) -> None:
    private.llm.state.chat_script = [reply('{"units": []}')]
    private.llm.state.requests.clear()


async def sweep_now(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.post("/v1/admin/maintenance/sweep")
    assert response.status_code == 202, response.text
    job = await finished_job(client, response.json()["job_id"], within=30)
    assert job["status"] == "succeeded", job
    return job


async def watermarks(client: httpx.AsyncClient, bank: str) -> dict[str, tuple[int, int]]:
    sessions = (await client.get(f"/v1/banks/{bank}/sessions")).json()["sessions"]
    return {s["session_id"]: (s["last_seq"], s["distilled_seq"]) for s in sessions}


async def test_appends_succeed_while_redis_is_down_and_distillation_catches_up(
    private: PrivateStack, private_worker: Any, private_client: httpx.AsyncClient, private_sql: Any
) -> None:
    client = private_client
    bank = await make_bank(client, distill_every_n_turns=2)
    sessions = ["s1", "s2", "s3"]
    private.stop_redis()
    try:
        started = time.monotonic()
        appended = 0
        for i in range(3):
            for session in sessions:
                body = {"events": events(CONVERSATION[2 * i : 2 * i + 2])}
                response = await client.post(f"/v1/banks/{bank}/sessions/{session}/events", json=body)
                assert response.status_code == 202, response.text
                appended += response.json()["appended"]
        assert time.monotonic() - started < 15  # an unreachable Redis does not stall the appends
        [stored] = await private_sql("SELECT count(*) AS n FROM events WHERE bank_id = :bank", bank=bank)
        assert stored["n"] == appended == 18
        # Reads keep answering: working memory comes from the event log, queries from PostgreSQL.
        memory = (await client.get(f"/v1/banks/{bank}/sessions/s1/working_memory")).json()
        assert (memory["source"], [t["seq"] for t in memory["turns"]]) == ("events", [1, 2, 3, 4, 5, 6])
        query = await client.post(f"/v1/banks/{bank}/query", json={"query": "budget"})
        assert query.status_code == 200, query.text
        # The distillations were triggered and wait in the outbox, unsent.
        jobs = await private_sql(
            "SELECT status, enqueued_at FROM jobs WHERE bank_id = :bank AND kind = 'distill.session'",
            bank=bank,
        )
        assert len(jobs) == len(sessions)
        assert {(j["status"], j["enqueued_at"]) for j in jobs} == {("queued", None)}
        # A sweep asked for now is accepted too; its message cannot go out yet.
        lost_sweep = await client.post("/v1/admin/maintenance/sweep")
        assert lost_sweep.status_code == 202, lost_sweep.text
    finally:
        private.start_redis()

    async def lost_sweep_ran() -> bool:
        job = (await client.get(f"/v1/jobs/{lost_sweep.json()['job_id']}")).json()
        if job["status"] == "succeeded":
            return True
        await client.post("/v1/admin/maintenance/sweep")  # asking again sends the same job again
        return False

    await wait_for(lost_sweep_ran, within=30, interval=1)

    async def caught_up() -> bool:
        marks = await watermarks(client, bank)
        if all(distilled == last == 6 for last, distilled in marks.values()):
            return True
        await sweep_now(client)  # what beat does every minute, sooner
        return False

    await wait_for(caught_up, within=45, interval=1)
    statuses = await private_sql(
        "SELECT status FROM jobs WHERE bank_id = :bank AND kind = 'distill.session'", bank=bank
    )
    assert {s["status"] for s in statuses} == {"succeeded"}


async def test_postgres_restarted_under_load_answers_503_then_recovers_losing_no_event(
    private: PrivateStack, private_worker: Any, private_client: httpx.AsyncClient, private_sql: Any
) -> None:
    client = private_client
    bank = await make_bank(client, distill_every_n_turns=1000)
    agents = 8
    acknowledged: dict[str, tuple[str, int | None]] = {}  # external_id -> (session, seq)
    statuses: Counter[int] = Counter()
    unexpected: list[str] = []
    acked_after_restart: set[int] = set()
    restarted = asyncio.Event()
    stop = asyncio.Event()

    async def agent(n: int) -> None:
        session, i = f"agent-{n}", 0
        while not stop.is_set():
            external_id = f"{n}-{i}"
            event = {"role": "user", "content": f"turn {i} of agent {n}", "external_id": external_id}
            async with asyncio.timeout(15):  # a hang fails the test
                response = await client.post(
                    f"/v1/banks/{bank}/sessions/{session}/events", json={"events": [event]}
                )
            statuses[response.status_code] += 1
            if response.status_code == 202:
                body = response.json()
                # A retry of an event whose commit landed before the outage is a duplicate, not lost.
                acknowledged[external_id] = (session, body["first_seq"])
                if restarted.is_set():
                    acked_after_restart.add(n)
                i += 1
            elif response.status_code == 503:
                assert_problem(response, 503)
                assert response.headers["retry-after"].isdigit()
                await asyncio.sleep(0.1)  # then retry the same event, as a client honouring 503 does
            else:
                unexpected.append(f"{response.status_code}: {response.text[:300]}")
                return

    tasks = [asyncio.create_task(agent(n)) for n in range(agents)]
    try:
        await wait_for(lambda: _at_least(acknowledged, 2 * agents), within=20)
        await asyncio.to_thread(private.stop_postgres)
        await asyncio.sleep(1.5)
        ready = await client.get("/readyz")
        assert_problem(ready, 503)
        await asyncio.to_thread(private.start_postgres)
        restarted.set()
        await wait_for(lambda: _all_recovered(acked_after_restart, agents, unexpected), within=30)
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 30)
    assert not unexpected
    assert set(statuses) <= {202, 503}
    assert statuses[503] > 0  # the outage was seen, and answered 503

    rows = await private_sql(
        "SELECT session_id, seq, external_id FROM events WHERE bank_id = :bank", bank=bank
    )
    stored = {r["external_id"]: (r["session_id"], r["seq"]) for r in rows}
    assert len(stored) == len(rows)  # no event twice
    for external_id, (session, seq) in acknowledged.items():
        assert external_id in stored, f"acknowledged event {external_id} is missing"
        assert stored[external_id][0] == session
        if seq is not None:
            assert stored[external_id][1] == seq
    for n in range(agents):  # and every session's seqs are still 1..n without gaps
        seqs = sorted(seq for session, seq in stored.values() if session == f"agent-{n}")
        assert seqs == list(range(1, len(seqs) + 1))

    # The worker recovered by itself too.
    job_id = (await client.post(f"/v1/banks/{bank}/sessions/agent-0/distill")).json()["job_id"]
    assert (await finished_job(client, job_id, within=30))["status"] == "succeeded"


async def _at_least(acknowledged: dict[str, Any], n: int) -> bool:
    return len(acknowledged) >= n


async def _all_recovered(recovered: set[int], agents: int, unexpected: list[str]) -> bool:
    assert not unexpected, unexpected
    return len(recovered) == agents


async def test_a_distill_task_delivered_twice_has_one_effect(
    app: Any, client: httpx.AsyncClient, worker: Any, sql: Any, stack: Stack
) -> None:
    from app.jobs.schedule import schedule_distill

    bank = await make_bank(client, distill_every_n_turns=1000)
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events(CONVERSATION)})
    async with app.state.sessionmaker() as db, db.begin():
        job, _ = await schedule_distill(db, bank, "s")
    for _ in range(2):  # the broker delivers the same message twice
        assert app.state.queue.send_sync(job.kind, job.id)
    done = await finished_job(client, str(job.id))
    assert done["status"] == "succeeded", done
    broker = aioredis.Redis.from_url(stack.redis_url)
    try:
        await wait_for(lambda: _delivered(broker), within=30)
        first = await units(sql, bank)
        assert first
        # ...and once more, late, after the job finished (a redelivery after a visibility timeout).
        assert app.state.queue.send_sync(job.kind, job.id)
        await wait_for(lambda: _delivered(broker), within=30)
    finally:
        await broker.aclose()
    again = (await client.get(f"/v1/jobs/{job.id}")).json()
    assert (again["attempts"], again["finished_at"]) == (1, done["finished_at"])
    after = await units(sql, bank)
    assert [u["id"] for u in after] == [u["id"] for u in first]
    keys = [(u["content"], tuple(u["source_seqs"])) for u in after]
    assert len(keys) == len(set(keys))
    created = await sql(
        "SELECT memory_id, count(*) AS n FROM memory_history WHERE bank_id = :bank AND action = 'created'"
        " GROUP BY memory_id",
        bank=bank,
    )
    assert len(created) == len(after)
    assert {c["n"] for c in created} == {1}
    distills = await sql(
        "SELECT count(*) AS n FROM jobs WHERE bank_id = :bank AND kind = 'distill.session'", bank=bank
    )
    assert distills[0]["n"] == 1


async def _delivered(broker: aioredis.Redis) -> bool:
    """The distill queue is empty and no message is held unacknowledged by a worker."""
    return int(await broker.llen("distill")) == 0 and int(await broker.hlen("unacked")) == 0


async def test_llm_endpoint_down_fails_the_job_and_a_later_sweep_distills(
    private: PrivateStack, private_worker: Any, private_client: httpx.AsyncClient, private_sql: Any
) -> None:
    client = private_client
    bank = await make_bank(client, distill_every_n_turns=2, idle_distill_seconds=1)
    lines = [("user", "My budget is 5000."), ("assistant", "Noted.")]
    private.stop_llm()
    try:
        response = await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events(lines)})
        assert response.status_code == 202, response.text

        async def failed() -> list[Any]:
            return await private_sql(
                "SELECT id, error FROM jobs WHERE bank_id = :bank AND status = 'failed'", bank=bank
            )

        [job] = await wait_for(failed, within=30)
        assert "Connection" in job["error"]
    finally:
        private.start_llm()
    marks = await watermarks(client, bank)
    assert marks == {"s": (2, 0)}
    kept = (await client.get(f"/v1/banks/{bank}/sessions/s/events")).json()["events"]
    assert [e["content"] for e in kept] == [content for _, content in lines]
    assert not await _units(private_sql, bank)

    unit = {
        "content": "The user's budget is 5000.",
        "tags": ["constraint.budget"],
        "confidence": 0.95,
        "importance": 0.9,
        "source_seqs": [1],
    }
    private.llm.state.chat_script = [reply(json.dumps({"units": [unit]}))]
    await asyncio.sleep(1.1)  # the session is idle now
    swept = await sweep_now(client)
    assert swept["result"]["idle_sessions"] >= 1

    async def distilled() -> bool:
        return await watermarks(client, bank) == {"s": (2, 2)}

    await wait_for(distilled, within=30)
    [stored] = await _units(private_sql, bank)
    assert stored["content"] == unit["content"]
    jobs = await private_sql(
        "SELECT status FROM jobs WHERE bank_id = :bank AND kind = 'distill.session' ORDER BY created_at",
        bank=bank,
    )
    assert [j["status"] for j in jobs] == ["failed", "succeeded"]


async def _units(sql: Any, bank: str) -> list[Any]:
    rows: list[Any] = await sql("SELECT content FROM memory_units WHERE bank_id = :bank", bank=bank)
    return rows
