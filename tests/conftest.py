"""Real services for the whole run: PostgreSQL + pgvector and Redis are started embedded once
(unless HINDSIGHT_TEST_DATABASE_URL / HINDSIGHT_TEST_REDIS_URL point at running ones), migrated
with Alembic; tests isolate themselves by working in banks of their own."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from hypothesis import HealthCheck, Phase, settings

ADMIN_KEY = "test-admin-key-" + uuid.uuid4().hex
ROOT = Path(__file__).resolve().parent.parent

# Property tests (tests/unit/test_distill_properties.py): `make test` runs the `ci` profile (10,000
# examples per property); a plain `pytest` the quick `dev` one. The deadline is the "bounded time" of
# a property: any one example, 32,000 characters included, within it (a shared CI machine's headroom).
_PROPERTIES = {
    "deadline": timedelta(seconds=5),
    "database": None,  # a failure prints its reproduction blob; no .hypothesis/ directory in the tree
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
# CI reports a failure unshrunk (its blob reproduces it under `dev`, which shrinks): shrinking a slow
# 32,000-character example once took longer than the whole run may.
_CI_PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target]
settings.register_profile("ci", max_examples=10_000, phases=_CI_PHASES, **_PROPERTIES)  # type: ignore[arg-type]
settings.register_profile("dev", max_examples=300, **_PROPERTIES)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


class Stack:
    def __init__(self, database_url: str, redis_url: str, llm: Any, llm_url: str) -> None:
        self.database_url = database_url
        self.redis_url = redis_url
        self.llm = llm  # the fake OpenAI-compatible server's app: tests script its replies
        self.llm_url = llm_url

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "HINDSIGHT_ENV": "test",
            "HINDSIGHT_DATABASE_URL": self.database_url,
            "HINDSIGHT_REDIS_URL": self.redis_url,
            "HINDSIGHT_ADMIN_KEY": ADMIN_KEY,
            "HINDSIGHT_LLM_BASE_URL": self.llm_url,
            "HINDSIGHT_LLM_MAX_RETRIES": "1",
            "HINDSIGHT_LLM_TIMEOUT_SECONDS": "5",
            "HF_HUB_OFFLINE": "1",
            # Test workers at the test's own priority: a shared CI machine must not starve the worker a
            # test waits for (tests/unit/test_worker_priority.py covers the lowering itself).
            "HINDSIGHT_WORKER_NICE": "0",
            # Tests fire many requests with one key; test_ratelimit.py builds its own low-limit app.
            "HINDSIGHT_RATE_LIMIT_PER_SECOND": "100000",
            "HINDSIGHT_RATE_LIMIT_BURST": "100000",
            # Test receivers listen on loopback, and a retry they wait for comes within a second or two.
            "HINDSIGHT_WEBHOOK_ALLOW_PRIVATE": "true",
            "HINDSIGHT_WEBHOOK_RETRY_BASE_SECONDS": "0.2",
            "HINDSIGHT_WEBHOOK_RETRY_MAX_SECONDS": "2",
            **extra,
        }


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    from app.embedded import start_postgres, start_redis
    from app.migrate import upgrade
    from tests.fake_openai import create_fake_openai, serve

    database_url = os.environ.get("HINDSIGHT_TEST_DATABASE_URL")
    redis_url = os.environ.get("HINDSIGHT_TEST_REDIS_URL")
    base = tmp_path_factory.mktemp("stack")
    with contextlib.ExitStack() as services:
        if not database_url:
            postgres = start_postgres(base / "pgdata")
            services.callback(postgres.stop)
            database_url = postgres.url()
        if not redis_url:
            server = start_redis(base / "redis")
            services.callback(server.stop)
            redis_url = server.url
        upgrade(database_url)
        llm = create_fake_openai()
        result = Stack(database_url, redis_url, llm, services.enter_context(serve(llm)))
        os.environ.update({k: v for k, v in result.env().items() if k.startswith("HINDSIGHT_")})
        from app.config import get_settings

        get_settings.cache_clear()
        yield result


@contextlib.asynccontextmanager
async def running_app(settings: Any) -> AsyncIterator[Any]:
    """The app of `settings` with its lifespan entered (engines, Redis, queue made), as uvicorn runs it."""
    from app.main import create_app

    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture(scope="session")
async def app(stack: Stack) -> AsyncIterator[Any]:
    from app.config import get_settings

    async with running_app(get_settings()) as application:
        yield application


def make_client(app: Any, key: str | None) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test", headers=headers, timeout=60
    )


@pytest.fixture
async def client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(app, ADMIN_KEY) as c:
        yield c


@pytest.fixture
async def bank_id(client: httpx.AsyncClient) -> str:
    bank = f"bank-{uuid.uuid4().hex[:12]}"
    response = await client.post("/v1/banks", json={"bank_id": bank})
    assert response.status_code == 201, response.text
    return bank


def start_worker(stack: Stack, log: Path, name: str, **env: str) -> subprocess.Popen[bytes]:
    """Start a real Celery worker process on the test database; return once it sends heartbeats."""
    from app.worker_heartbeat import HEARTBEAT_KEY

    client = redis.Redis.from_url(stack.redis_url)
    client.zrem(HEARTBEAT_KEY, name)
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "worker", "--name", name],
            env=stack.env(**env),
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
    deadline = time.monotonic() + 90
    while client.zscore(HEARTBEAT_KEY, name) is None:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise RuntimeError("worker did not start:\n" + log.read_text()[-4000:])
        time.sleep(0.2)
    client.close()
    return proc


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def worker(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen[bytes]]:
    """A real Celery worker process on the test database and Redis."""
    proc = start_worker(stack, tmp_path_factory.mktemp("worker") / "worker.log", "test-worker@localhost")
    yield proc
    stop_worker(proc)


async def wait_for(predicate: Any, within: float = 30.0, interval: float = 0.1) -> Any:
    """Poll an async predicate until it returns something truthy."""
    deadline = time.monotonic() + within
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {within}s (last value: {value!r})")
        await asyncio.sleep(interval)


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert {"type", "title", "detail"} <= body.keys()
    return body


def sql_runner(engine: Any) -> Any:
    """`await run("SELECT …", key=value)` → list of row mappings, each call its own transaction."""
    from sqlalchemy import text

    async def run(statement: str, **params: Any) -> list[Any]:
        async with engine.begin() as conn:
            result = await conn.execute(text(statement), params)
            return list(result.mappings().all()) if result.returns_rows else []

    return run


@pytest.fixture(scope="session")
async def sql(stack: Stack) -> AsyncIterator[Any]:
    """Run SQL against the test database (see `sql_runner`)."""
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(stack.database_url)
    yield sql_runner(engine)
    await engine.dispose()


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[Any, str]]:
    """A fake OpenAI-compatible server of the module's own (unit tests of the LLM clients)."""
    from tests.fake_openai import create_fake_openai, serve

    app = create_fake_openai()
    with serve(app) as base_url:
        yield app, base_url


@pytest.fixture
async def chat_client(server: tuple[Any, str]) -> AsyncIterator[Any]:
    """A factory of JSON chat clients on the module's fake server (any option overridable), closed after
    the test."""
    from app.providers.llm import JSONChatClient

    made: list[JSONChatClient] = []

    def factory(**overrides: Any) -> JSONChatClient:
        options: dict[str, Any] = {
            "base_url": server[1],
            "api_key": "sk-test",
            "model": "test-model",
            "timeout": 5.0,
            "max_retries": 0,
        }
        client = JSONChatClient(**{**options, **overrides})
        made.append(client)
        return client

    yield factory
    for client in made:
        await client.aclose()


@pytest.fixture
def receiver() -> Iterator[Any]:
    """A webhook receiver on loopback (`tests.factories.Receiver`), stopped after the test."""
    from tests.factories import Receiver

    r = Receiver()
    r.start()
    yield r
    r.stop()
