from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST

from app.db.engine import database_ready
from app.db.repositories import jobs as jobs_repo
from app.errors import problem
from app.jobs.queue import QUEUES, queue_for
from app.metrics import exposition
from app.schemas.problems import problem_responses
from app.worker_heartbeat import HEARTBEAT_KEY, WORKER_QUEUES_KEY

router = APIRouter(tags=["operations"])


# A request that carries a bearer key spends a rate-limit token, here as anywhere.
@router.get("/healthz", responses=problem_responses(429))
async def healthz() -> dict[str, str]:
    """Answer while the process is up."""
    return {"status": "ok"}


async def _check(name: str, checks: dict[str, Any], probe: Any) -> None:
    try:
        checks[name] = "ok" if await probe() else "down"
    except Exception as exc:
        checks[name] = f"down: {type(exc).__name__}"


async def _queues(state: Any) -> dict[str, dict[str, Any]]:
    """Count per queue the jobs waiting, the age of the oldest (lag) and the live workers consuming it.
    A backlog does not make the API unready (it still takes events); it shows here and in /stats."""
    backlog: dict[str, dict[str, Any]] = {
        name: {"queued": 0, "lag_seconds": 0.0, "workers": 0} for name in QUEUES
    }
    async with state.sessionmaker() as db:
        for kind, count, age in await jobs_repo.queued_by_kind(db):
            entry = backlog[queue_for(kind)]
            entry["queued"] += count
            entry["lag_seconds"] = round(max(entry["lag_seconds"], age), 3)
    since = time.time() - state.settings.worker_heartbeat_ttl_seconds
    live = await state.redis.zrangebyscore(HEARTBEAT_KEY, since, "+inf")
    for consumed in await state.redis.hmget(WORKER_QUEUES_KEY, live) if live else []:
        for name in (consumed or b"").decode().split(","):
            if name in backlog:
                backlog[name]["workers"] += 1
    return backlog


@router.get("/readyz", responses=problem_responses(429, 503))
async def readyz(request: Request) -> Response:
    """Answer ready when PostgreSQL and Redis answer and a worker sent a heartbeat recently; the body shows
    each queue's backlog, lag and workers, and the read replica (`read_replica`: null when none is
    configured, else its status, where reads go and its replay lag)."""
    state = request.app.state
    checks: dict[str, Any] = {}

    async def database() -> bool:
        return await database_ready(state.engine)

    async def redis() -> bool:
        return bool(await state.redis.ping())

    async def worker() -> bool:
        since = time.time() - state.settings.worker_heartbeat_ttl_seconds
        return bool(await state.redis.zcount(HEARTBEAT_KEY, since, "+inf"))

    for name, probe in (("database", database), ("redis", redis), ("worker", worker)):
        await _check(name, checks, probe)
    # The read replica does not decide readiness (reads fall back to the primary); it is reported.
    replica = await state.reads.status()
    if all(v == "ok" for v in checks.values()):
        try:
            queues: dict[str, dict[str, Any]] | None = await _queues(state)
        except Exception:  # a dependency that failed since its check: ready by the checks, no backlog
            queues = None
        body = {"status": "ready", "checks": checks, "queues": queues, "read_replica": replica}
        return JSONResponse(body)
    response = problem(
        503,
        "Service Unavailable",
        "Not ready: " + ", ".join(f"{k} {v}" for k, v in checks.items() if v != "ok"),
    )
    return response


@router.get("/metrics", include_in_schema=False)
async def metrics() -> Response:
    """Prometheus text format, summed over every process of `hindsight api`."""
    return Response(exposition(), media_type=CONTENT_TYPE_LATEST)
