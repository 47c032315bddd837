from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.db.engine import database_ready
from app.errors import problem
from app.schemas.problems import problem_responses
from app.worker_heartbeat import HEARTBEAT_KEY

router = APIRouter(tags=["operations"])


# A request that carries a bearer key spends a rate-limit token, here as anywhere.
@router.get("/healthz", responses=problem_responses(429))
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


async def _check(name: str, checks: dict[str, Any], probe: Any) -> None:
    try:
        checks[name] = "ok" if await probe() else "down"
    except Exception as exc:
        checks[name] = f"down: {type(exc).__name__}"


@router.get("/readyz", responses=problem_responses(429, 503))
async def readyz(request: Request) -> Response:
    """Ready when PostgreSQL and Redis answer and a worker sent a heartbeat recently."""
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
    if all(v == "ok" for v in checks.values()):
        return JSONResponse({"status": "ready", "checks": checks})
    response = problem(
        503,
        "Service Unavailable",
        "Not ready: " + ", ".join(f"{k} {v}" for k, v in checks.items() if v != "ok"),
    )
    return response


@router.get("/metrics", include_in_schema=False)
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
