"""The per-key rate limit on the real stack: apps of their own with a low limit on the test Redis (the
session's app runs with a limit tests never reach)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from prometheus_client import REGISTRY

from app.config import Settings
from app.embedded import free_port
from app.eval.locomo import Api
from app.main import create_app
from app.mcp.stdio import Upstream
from tests.conftest import Stack, assert_problem, make_client
from tests.fake_openai import serve

RATE = 0.5  # a token every 2 s: refills slowly enough that a burst is never topped up mid-test
BURST = 3
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


def limited_settings(stack: Stack, **overrides: Any) -> Settings:
    """An app's settings with a low limit and an admin key of its own (so a bucket of its own)."""
    values: dict[str, Any] = {
        "env": "test",
        "database_url": stack.database_url,
        "redis_url": stack.redis_url,
        "admin_key": "ratelimit-admin-key-" + uuid.uuid4().hex,
        "rate_limit_per_second": RATE,
        "rate_limit_burst": BURST,
        **overrides,
    }
    return Settings(**values)


@asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[Any]:
    app: Any = create_app(settings)
    async with app.router.lifespan_context(app):
        yield app


async def new_key(client: httpx.AsyncClient) -> tuple[str, str]:
    """A fresh bank with a read/write key (made through the session's app): (bank_id, key)."""
    bank = f"bank-{uuid.uuid4().hex[:12]}"
    assert (await client.post("/v1/banks", json={"bank_id": bank})).status_code == 201
    response = await client.post(f"/v1/banks/{bank}/keys", json={"scopes": ["read", "write"]})
    assert response.status_code == 201, response.text
    key: str = response.json()["key"]
    return bank, key


def counter(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


def assert_limited(response: httpx.Response) -> int:
    body = assert_problem(response, 429)
    assert "rate limit" in body["detail"]
    retry_after = response.headers["retry-after"]
    assert retry_after.isdigit(), retry_after  # whole seconds, as RFC 9110 delay-seconds
    seconds = int(retry_after)
    assert 1 <= seconds <= 1 / RATE, seconds
    return seconds


def tools_list(request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": {}}


async def test_a_key_spends_its_burst_then_gets_429_until_it_refills(
    stack: Stack, client: httpx.AsyncClient
) -> None:
    bank, key = await new_key(client)
    _, other_key = await new_key(client)
    refused_before = counter("hindsight_rate_limited_total")
    settings = limited_settings(stack)
    async with (
        running(settings) as app,
        make_client(app, key) as limited,
        make_client(app, other_key) as other,
        make_client(app, settings.admin_key.get_secret_value()) as admin,
    ):
        for _ in range(BURST):
            assert (await limited.get(f"/v1/banks/{bank}")).status_code == 200
        seconds = assert_limited(await limited.get(f"/v1/banks/{bank}"))
        # Refused before any work: an append is not stored, and MCP spends from the same bucket.
        append = await limited.post(
            f"/v1/banks/{bank}/sessions/s/events", json={"events": [{"role": "user", "content": "hi"}]}
        )
        assert_limited(append)
        assert_limited(await limited.post("/mcp", json=tools_list(), headers=MCP_HEADERS))

        # Another key, and the admin key, have buckets of their own.
        assert (await other.get("/v1/banks")).status_code == 200
        assert (await admin.get(f"/v1/banks/{bank}")).status_code == 200

        await asyncio.sleep(seconds)
        assert (await limited.get(f"/v1/banks/{bank}/sessions/s")).status_code == 404  # never appended
        assert_limited(await limited.get(f"/v1/banks/{bank}"))  # one token came back, and went
    assert counter("hindsight_rate_limited_total") - refused_before == 4


async def test_the_admin_key_and_mcp_are_limited_too(stack: Stack) -> None:
    settings = limited_settings(stack)
    admin_key = settings.admin_key.get_secret_value()
    async with running(settings) as app, make_client(app, admin_key) as admin:
        for request_id in range(BURST):
            response = await admin.post("/mcp", json=tools_list(request_id), headers=MCP_HEADERS)
            assert response.status_code == 200, response.text
            assert {t["name"] for t in response.json()["result"]["tools"]} >= {"memory_write"}
        assert_limited(await admin.post("/mcp", json=tools_list(), headers=MCP_HEADERS))
        assert_limited(await admin.get("/v1/banks"))


async def test_concurrent_requests_of_two_api_processes_share_one_bucket(
    stack: Stack, client: httpx.AsyncClient
) -> None:
    """Two app instances (their own Redis connections) against one Redis: exactly the burst passes."""
    bank, key = await new_key(client)
    settings = limited_settings(stack)
    async with (
        running(settings) as first,
        running(settings) as second,
        make_client(first, key) as a,
        make_client(second, key) as b,
    ):
        responses = await asyncio.gather(*(c.get(f"/v1/banks/{bank}") for c in (a, b) * 5))
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * BURST + [429] * (10 - BURST), statuses


async def test_no_key_is_left_to_auth_and_a_wrong_key_is_limited(stack: Stack) -> None:
    async with (
        running(limited_settings(stack)) as app,
        make_client(app, None) as anonymous,
        make_client(app, "hs_wrong-" + uuid.uuid4().hex) as wrong,
    ):
        for _ in range(BURST + 2):
            assert_problem(await anonymous.get("/v1/banks"), 401)
        for _ in range(BURST):
            assert_problem(await wrong.get("/v1/banks"), 401)
        assert_limited(await wrong.get("/v1/banks"))
        assert (await anonymous.get("/healthz")).status_code == 200


async def test_redis_down_lets_requests_through(stack: Stack, client: httpx.AsyncClient) -> None:
    bank, key = await new_key(client)
    dead_redis = f"redis://127.0.0.1:{free_port()}/0"
    errors_before = counter("hindsight_rate_limit_errors_total")
    async with running(limited_settings(stack, redis_url=dead_redis)) as app, make_client(app, key) as c:
        for n in range(BURST + 2):
            response = await c.post(
                f"/v1/banks/{bank}/sessions/s{n}/events",
                json={"events": [{"role": "user", "content": f"turn {n}"}]},
            )
            assert response.status_code == 202, response.text
        assert (await c.get(f"/v1/banks/{bank}")).status_code == 200
    assert counter("hindsight_rate_limit_errors_total") > errors_before


async def test_a_zero_rate_turns_the_limit_off(stack: Stack, client: httpx.AsyncClient) -> None:
    bank, key = await new_key(client)
    async with running(limited_settings(stack, rate_limit_per_second=0)) as app, make_client(app, key) as c:
        for _ in range(BURST * 3):
            assert (await c.get(f"/v1/banks/{bank}")).status_code == 200


async def test_the_eval_client_waits_out_a_429(stack: Stack, client: httpx.AsyncClient) -> None:
    bank, key = await new_key(client)
    refused_before = counter("hindsight_rate_limited_total")
    async with running(limited_settings(stack, rate_limit_per_second=1.0)) as app:
        async with make_client(app, key) as http:
            api = Api(http)
            for _ in range(BURST + 1):
                assert (await api.get(f"/v1/banks/{bank}"))["bank_id"] == bank
    assert counter("hindsight_rate_limited_total") > refused_before  # refused, waited, then answered


async def test_the_stdio_proxy_waits_out_a_429(stack: Stack, client: httpx.AsyncClient) -> None:
    """The `hindsight mcp` upstream over real HTTP: calls past the burst are refused, wait out their
    Retry-After in the proxy, and succeed (the host sees no error)."""
    _, key = await new_key(client)
    refused_before = counter("hindsight_rate_limited_total")
    with serve(create_app(limited_settings(stack, rate_limit_per_second=2.0))) as url:
        upstream = Upstream(url.removesuffix("/v1"), key)
        for _ in range(3):  # each opens a client of its own: several requests apiece
            listed = await upstream.list_tools(None)
            assert "memory_query" in {tool.name for tool in listed.tools}
    assert counter("hindsight_rate_limited_total") > refused_before
