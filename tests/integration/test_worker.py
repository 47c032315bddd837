"""The Celery worker runtime against a real worker process."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from kombu.pools import ProducerPool
from sqlalchemy import text

from app.jobs import service as jobs
from tests.conftest import assert_problem, start_worker, stop_worker, wait_for
from worker.factory import create_celery


async def _job(client: httpx.AsyncClient, job_id: str) -> dict[str, Any]:
    response = await client.get(f"/v1/jobs/{job_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@contextmanager
def celery_client(settings: Any) -> Iterator[Any]:
    """A throwaway Celery app for sending, on broker connections of its own, closed afterwards.

    A Celery app's `pool` and `amqp.producer_pool` are kombu's process-wide pools, one per broker URL, so
    the app under test shares them when it uses the same broker: closing those would leave its queue
    failing every later send with "Acquire on closed pool". This app gets private pools instead (set
    before its first send), and only they are closed.
    """
    celery = create_celery(settings)
    connections = celery.connection_for_write().Pool(limit=celery.conf.broker_pool_limit)
    producers = ProducerPool(connections, limit=connections.limit)
    celery._pool = connections
    celery.amqp._producer_pool = producers
    try:
        yield celery
    finally:
        producers.force_close_all()
        connections.force_close_all()
        celery.close()


def job_has_status(client: httpx.AsyncClient, job_id: Any, status: str) -> Any:
    async def check() -> bool:
        return (await _job(client, str(job_id)))["status"] == status

    return check


async def test_readyz_reports_a_live_worker(client: httpx.AsyncClient, worker: Any) -> None:
    response = await client.get("/readyz")
    assert response.status_code == 200, response.text
    assert response.json()["checks"] == {"database": "ok", "redis": "ok", "worker": "ok"}
    assert (await client.get("/healthz")).json() == {"status": "ok"}


async def test_maintenance_job_runs_to_success(client: httpx.AsyncClient, worker: Any) -> None:
    accepted = await client.post("/v1/admin/maintenance/sweep")
    assert accepted.status_code == 202
    job_id = accepted.json()["job_id"]

    async def finished() -> dict[str, Any] | None:
        job = await _job(client, job_id)
        return job if job["status"] in ("succeeded", "failed") else None

    job = await wait_for(finished)
    assert job["status"] == "succeeded", job
    assert job["kind"] == "maintenance.sweep"
    assert job["attempts"] == 1
    assert set(job["result"]) >= {"failed_overdue", "requeued_overdue", "resent", "idle_sessions"}
    assert job["started_at"]
    assert job["finished_at"]
    assert_problem(await client.post("/v1/admin/maintenance/defragment"), 422)
    assert_problem(await client.get(f"/v1/jobs/{uuid.uuid4()}"), 404)


async def test_sweep_resends_lost_messages_and_fails_dead_jobs(
    app: Any, client: httpx.AsyncClient, worker: Any
) -> None:
    """A job whose message was lost is sent again; a job whose worker died past its last attempt
    is failed. Neither needs an operator."""
    async with app.state.sessionmaker() as db, db.begin():
        lost, _ = await jobs.create(db, "maintenance.sweep", dedupe_key=None)
        dead, _ = await jobs.create(db, "maintenance.sweep", dedupe_key=None, max_attempts=1)
        await db.execute(
            text("UPDATE jobs SET created_at = now() - interval '5 minutes' WHERE id = :id"),
            {"id": lost.id},
        )
        await db.execute(
            text("""UPDATE jobs SET status = 'running', attempts = 1,
                                 deadline_at = now() - interval '1 second' WHERE id = :id"""),
            {"id": dead.id},
        )
    sweep = (await client.post("/v1/admin/maintenance/sweep")).json()["job_id"]

    async def settled() -> bool:
        states = [(await _job(client, str(j)))["status"] for j in (lost.id, dead.id, sweep)]
        return states == ["succeeded", "failed", "succeeded"]

    await wait_for(settled)
    assert "deadline exceeded" in (await _job(client, str(dead.id)))["error"]


async def test_redelivered_message_runs_a_job_once(app: Any, client: httpx.AsyncClient, worker: Any) -> None:
    async with app.state.sessionmaker() as db, db.begin():
        job, _ = await jobs.create(db, "maintenance.sweep", dedupe_key=None)
    for _ in range(3):  # the broker delivers the same message three times
        assert app.state.queue.send_sync(job.kind, job.id)

    await wait_for(job_has_status(client, job.id, "succeeded"))
    await wait_for(lambda: _queue_drained(app))
    assert (await _job(client, str(job.id)))["attempts"] == 1


async def _queue_drained(app: Any) -> bool:
    return int(await app.state.redis.llen("maintenance")) == 0


async def test_jobs_of_another_bank_are_invisible(app: Any, client: httpx.AsyncClient, bank_id: str) -> None:
    from tests.conftest import make_client

    async with app.state.sessionmaker() as db, db.begin():
        job, _ = await jobs.create(db, "maintenance.sweep", bank_id=bank_id)
    other = f"other-{uuid.uuid4().hex[:8]}"
    await client.post("/v1/banks", json={"bank_id": other})
    key = (await client.post(f"/v1/banks/{other}/keys", json={"scopes": ["read"]})).json()["key"]
    own = (await client.post(f"/v1/banks/{bank_id}/keys", json={"scopes": ["read"]})).json()["key"]
    async with make_client(app, key) as c:
        assert_problem(await c.get(f"/v1/jobs/{job.id}"), 404)
    async with make_client(app, own) as c:
        assert (await c.get(f"/v1/jobs/{job.id}")).status_code == 200


# RabbitMQ runs as a service on the machines this project's CI uses.
AMQP_URL = os.environ.get("HINDSIGHT_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")


async def test_an_amqp_broker_works_too(
    app: Any, client: httpx.AsyncClient, stack: Any, tmp_path: Path
) -> None:
    from app.config import Settings
    from app.jobs.queue import TaskQueue

    proc = start_worker(
        stack, tmp_path / "amqp-worker.log", "amqp-worker@localhost", HINDSIGHT_BROKER_URL=AMQP_URL
    )
    try:
        settings = Settings(env="test", broker_url=AMQP_URL, redis_url=stack.redis_url)
        async with app.state.sessionmaker() as db, db.begin():
            job, _ = await jobs.create(db, "maintenance.sweep", dedupe_key=None)
        with celery_client(settings) as celery:
            assert await TaskQueue(celery).send(job.kind, job.id)
        await wait_for(job_has_status(client, job.id, "succeeded"))
    finally:
        stop_worker(proc)


async def test_a_beat_tick_revives_a_maintenance_job_whose_worker_died(
    app: Any, client: httpx.AsyncClient, worker: Any
) -> None:
    """The unfinished job holding a task's dedupe key must not block that task forever."""
    async with app.state.sessionmaker() as db, db.begin():
        await db.execute(
            text(
                "UPDATE jobs SET status = 'failed' WHERE dedupe_key = 'maintenance.sweep' "
                "AND status IN ('queued', 'running')"
            )
        )
        stuck, _ = await jobs.create(db, "maintenance.sweep", dedupe_key="maintenance.sweep")
        await db.execute(
            text(
                "UPDATE jobs SET status = 'running', attempts = 1, "
                "deadline_at = now() - interval '1 second' WHERE id = :id"
            ),
            {"id": stuck.id},
        )
    with celery_client(app.state.settings) as beat:
        beat.send_task("maintenance.sweep", queue="maintenance")  # what a beat tick sends
    await wait_for(job_has_status(client, stuck.id, "succeeded"))
    assert (await _job(client, str(stuck.id)))["attempts"] == 2

    # Closing the throwaway client (same broker URL) left the API's own queue able to send.
    async with app.state.sessionmaker() as db, db.begin():
        after, _ = await jobs.create(db, "maintenance.sweep", dedupe_key=None)
    assert app.state.queue.send_sync(after.kind, after.id)
    await wait_for(job_has_status(client, after.id, "succeeded"))
