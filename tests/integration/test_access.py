"""The access matrix: every route of the app, enumerated from the app itself (a route added without an
entry here fails), called with no key, a wrong key, a revoked key and another bank's key, then with the
right key; the five MCP tools the same way; public routes listed with the reason they are public; the
admin key compared in constant time; CORS off by default."""

from __future__ import annotations

import hmac
import secrets
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import pytest
from fastapi.routing import iter_route_contexts

from app.banks import service as banks_service
from app.config import Settings
from app.errors import Unauthorized
from app.main import create_app
from tests.conftest import ADMIN_KEY, Stack, assert_problem, make_client, wait_for
from tests.factories import finished_job, mcp_call

# Public by design, each with its reason. Anything else needs a key.
PUBLIC = {
    ("GET", "/healthz"): "liveness probe: orchestrators call it without credentials; says only 'ok'",
    ("GET", "/readyz"): "readiness probe for load balancers; names only which dependency is down",
    ("GET", "/metrics"): "Prometheus scrapes without credentials; labels are route templates, no ids or keys",
    ("GET", "/openapi.json"): "the published contract",
    ("GET", "/docs"): "the contract, rendered (Swagger UI)",
    ("GET", "/docs/oauth2-redirect"): "part of Swagger UI",
    ("GET", "/redoc"): "the contract, rendered (ReDoc)",
    ("GET", "/ui"): "the web console's static shell: it holds no data and reads /v1 with the key typed in",
}
MCP = ("POST", "/mcp")  # covered tool by tool below

Access = Literal["bank", "admin", "caller"]


@dataclass(frozen=True)
class Case:
    """One route: who may call it (`bank`: a key of the bank it names; `admin`: the admin key only;
    `caller`: any valid key, scoped to what that key may see), a request that works with the right
    key, and the status that request answers."""

    method: str
    path: str
    access: Access
    ok: int
    body: Any = None
    params: dict[str, str] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)  # a path parameter read from another world value


# In the order the right-key pass runs them (writes after the reads they would disturb, purge last).
CASES = [
    Case("GET", "/v1/banks", "caller", 200),
    Case("GET", "/v1/whoami", "caller", 200),
    Case("GET", "/v1/banks/{bank_id}", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/stats", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/export", "bank", 200),
    Case("PATCH", "/v1/banks/{bank_id}", "bank", 200, {"name": "Renamed by its own key"}),
    Case(
        "POST",
        "/v1/banks/{bank_id}/sessions/{session_id}/events",
        "bank",
        202,
        {"events": [{"role": "user", "content": "My favourite colour is green."}]},
    ),
    Case("GET", "/v1/banks/{bank_id}/sessions", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/sessions/{session_id}", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/sessions/{session_id}/working_memory", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/sessions/{session_id}/events", "bank", 200, params={"after_seq": "0"}),
    Case("POST", "/v1/banks/{bank_id}/sessions/{session_id}/distill", "bank", 202),
    Case("POST", "/v1/banks/{bank_id}/sessions/{session_id}/close", "bank", 200),
    Case("POST", "/v1/banks/{bank_id}/redistill", "bank", 202, {"dry_run": True}),
    Case("GET", "/v1/jobs/{job_id}", "bank", 200),
    Case(
        "POST", "/v1/banks/{bank_id}/memories", "bank", 202, {"content": "Ana likes tea.", "tags": ["fact"]}
    ),
    Case("GET", "/v1/banks/{bank_id}/memories", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/memories/{memory_id}", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/memories/{memory_id}/history", "bank", 200),
    Case("DELETE", "/v1/banks/{bank_id}/memories/{memory_id}", "bank", 200),
    Case("POST", "/v1/banks/{bank_id}/memories/{memory_id}/restore", "bank", 200),
    Case(
        "POST", "/v1/banks/{bank_id}/memories/{memory_id}/accept", "bank", 200, ids={"memory_id": "proposal"}
    ),
    Case(
        "POST",
        "/v1/banks/{bank_id}/memories/{memory_id}/reject",
        "bank",
        200,
        {"reason": "not said"},
        ids={"memory_id": "other_proposal"},
    ),
    Case(
        "PATCH", "/v1/banks/{bank_id}/memories/{memory_id}", "bank", 201, {"content": "Ana lives in Porto."}
    ),
    Case("POST", "/v1/banks/{bank_id}/query", "bank", 200, {"query": "Where does Ana live?"}),
    Case("GET", "/v1/banks/{bank_id}/timeline", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/entities", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/entities/{entity_id}", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/entities/{entity_id}/page", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/profile", "bank", 200),
    Case(
        "POST",
        "/v1/banks/{bank_id}/webhooks",
        "bank",
        201,
        {"url": "http://127.0.0.1:9/access", "events": ["job.failed"]},  # port 9: nothing is sent there
    ),
    Case("GET", "/v1/banks/{bank_id}/webhooks", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/webhooks/{webhook_id}", "bank", 200),
    Case("GET", "/v1/banks/{bank_id}/webhooks/{webhook_id}/deliveries", "bank", 200),
    Case("DELETE", "/v1/banks/{bank_id}/webhooks/{webhook_id}", "bank", 204),
    Case("POST", "/v1/banks", "admin", 201, {"bank_id": "access-new-" + uuid.uuid4().hex[:8]}),
    Case("POST", "/v1/banks/{bank_id}/keys", "admin", 201, {"scopes": ["read"]}),
    Case("DELETE", "/v1/banks/{bank_id}/keys/{key_id}", "admin", 204),
    # An invalid body: the admin key passes the gate (422, not 401/403) and no job is queued, which
    # would otherwise be shared through its dedupe key with the maintenance tests' own runs.
    Case("POST", "/v1/admin/maintenance/{task}", "admin", 422, {"now": "not a time"}),
    # An empty stream: the admin key passes the gate (422, not 401/403) and nothing is created.
    Case("POST", "/v1/banks/{bank_id}/import", "admin", 422),
    Case("DELETE", "/v1/banks/{bank_id}", "admin", 204),
]


def app_routes(app: Any) -> set[tuple[str, str]]:
    """Every (method, path) the app serves, as FastAPI itself enumerates its (included) routes."""
    found = set()
    for route in iter_route_contexts(app.routes):
        for method in route.methods or ():
            if method != "HEAD":  # answered by the GET route
                found.add((method, route.path_format))
    return found


@dataclass
class World:
    """Bank A (the target) with a session, a memory, an entity, a job and a spare key; bank B."""

    bank: str
    other_bank: str
    key: str  # A's read/write key
    other_key: str  # B's read/write key
    revoked_key: str  # was A's, revoked
    values: dict[str, str]

    def credentials(self) -> dict[str, str | None]:
        return {
            "no key": None,
            "wrong key": "hs_" + secrets.token_urlsafe(32),
            "near-miss admin key": ADMIN_KEY[:-1] + ("x" if ADMIN_KEY[-1] != "x" else "y"),
            "revoked key": self.revoked_key,
        }

    def url(self, case: Case) -> str:
        return case.path.format(**{**self.values, **{name: self.values[v] for name, v in case.ids.items()}})


async def create_key(
    admin: httpx.AsyncClient, bank: str, scopes: tuple[str, ...] = ("read", "write", "review")
) -> dict[str, Any]:
    response = await admin.post(f"/v1/banks/{bank}/keys", json={"scopes": list(scopes)})
    assert response.status_code == 201, response.text
    key: dict[str, Any] = response.json()
    return key


@pytest.fixture
async def world(app: Any, worker: Any) -> World:
    """Two banks, keys, a session, a memory, two proposals and a finished distillation job: settled before the
    tests compare the bank before and after (a worker left running by another module would
    otherwise distil the session in the middle)."""
    bank, other_bank = (f"access-{uuid.uuid4().hex[:10]}" for _ in range(2))
    async with make_client(app, ADMIN_KEY) as admin:
        for name in (bank, other_bank):
            assert (await admin.post("/v1/banks", json={"bank_id": name})).status_code == 201
        key, other_key, revoked, spare = (
            await create_key(admin, bank),
            await create_key(admin, other_bank),
            await create_key(admin, bank),
            await create_key(admin, bank),
        )
        assert (await admin.delete(f"/v1/banks/{bank}/keys/{revoked['id']}")).status_code == 204
        events = [{"role": "user", "speaker": "Ana", "content": "My budget is 5000 euros."}]
        appended = await admin.post(f"/v1/banks/{bank}/sessions/s1/events", json={"events": events})
        assert appended.status_code == 202, appended.text
        written = await admin.post(
            f"/v1/banks/{bank}/memories",
            params={"wait": "true"},
            json={"content": "Ana lives in Lisbon.", "tags": ["fact"], "entities": [{"name": "Ana"}]},
        )
        assert written.status_code == 201, written.text
        memory = written.json()["memory"]
        proposer = await create_key(admin, bank, ("propose",))
        async with make_client(app, proposer["key"]) as c:
            proposals = [
                await c.post(f"/v1/banks/{bank}/memories", json={"content": text, "tags": ["preference"]})
                for text in ("Ana likes jazz.", "Ana likes opera.")
            ]
        assert [p.json()["memory"]["status"] for p in proposals] == ["proposed", "proposed"], proposals
        distilled = await admin.post(f"/v1/banks/{bank}/sessions/s1/distill")
        assert distilled.status_code == 202, distilled.text
        assert (await finished_job(admin, distilled.json()["job_id"]))["status"] == "succeeded"

        async def resolved() -> bool:  # the distilled unit's resolution is a job of its own
            stats = (await admin.get(f"/v1/banks/{bank}/stats")).json()
            return "pending" not in stats["memories_by_status"]

        await wait_for(resolved)
        hook = {"url": "http://127.0.0.1:9/access", "events": ["job.failed"]}
        webhook = await admin.post(f"/v1/banks/{bank}/webhooks", json=hook)
        assert webhook.status_code == 201, webhook.text
    return World(
        bank=bank,
        other_bank=other_bank,
        key=key["key"],
        other_key=other_key["key"],
        revoked_key=revoked["key"],
        values={
            "bank_id": bank,
            "session_id": "s1",
            "memory_id": memory["id"],
            "entity_id": memory["entities"][0]["id"],
            "job_id": distilled.json()["job_id"],
            "key_id": spare["id"],
            "webhook_id": webhook.json()["id"],
            "task": "expire",
            "proposal": proposals[0].json()["memory"]["id"],
            "other_proposal": proposals[1].json()["memory"]["id"],
        },
    )


async def call(app: Any, key: str | None, world: World, case: Case) -> httpx.Response:
    async with make_client(app, key) as c:
        return await c.request(case.method, world.url(case), json=case.body, params=case.params)


def assert_unauthorized(response: httpx.Response, key: str | None) -> None:
    body = assert_problem(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"
    if key:
        assert key not in response.text, "a refused key is echoed back"
    assert body["title"] == "Unauthorized"


def banks_seen(response: httpx.Response) -> list[str]:
    """The banks a `caller` route answered about: the banks listed, or the bank of the key."""
    body = response.json()
    return [b["bank_id"] for b in body["banks"]] if "banks" in body else [body["bank_id"]]


# --- the REST matrix -------------------------------------------------------------------------------------


def test_every_route_is_in_the_matrix_or_public_with_a_reason(app: Any) -> None:
    routes = app_routes(app)
    covered = {(c.method, c.path) for c in CASES} | set(PUBLIC) | {MCP}
    assert routes - covered == set(), "routes with no access case: add them to CASES (or PUBLIC, with why)"
    assert covered - routes == set(), "cases for routes the app no longer serves"
    assert len({(c.method, c.path) for c in CASES}) == len(CASES)


async def test_public_routes_answer_without_a_key_and_leak_no_ids(app: Any, world: World) -> None:
    async with make_client(app, None) as anonymous:
        for method, path in PUBLIC:
            response = await anonymous.request(method, path)
            if path == "/readyz":  # 503 while no worker runs; either way not a credential question
                assert response.status_code in (200, 503), response.text
            else:
                assert response.status_code == 200, (path, response.text)
        metrics = (await anonymous.get("/metrics")).text
    assert "hindsight_http_requests_total" in metrics
    for secret in (world.bank, world.key, ADMIN_KEY, world.values["memory_id"]):
        assert secret not in metrics


async def test_bad_credentials_are_refused_on_every_route_and_change_nothing(app: Any, world: World) -> None:
    async with make_client(app, ADMIN_KEY) as admin:
        before = (await admin.get(f"/v1/banks/{world.bank}/stats")).json()
    for case in CASES:
        for name, key in world.credentials().items():
            response = await call(app, key, world, case)
            assert response.status_code == 401, (name, case.method, case.path, response.text)
            assert_unauthorized(response, key)

        # Another bank's key: 404 on anything of this bank, never 403; admin-only routes of no bank, 403.
        response = await call(app, world.other_key, world, case)
        if case.access == "caller":
            assert response.status_code == 200, response.text
            assert banks_seen(response) == [world.other_bank]
        elif case.access == "bank" or "{bank_id}" in case.path:
            assert_problem(response, 404)
        else:
            assert_problem(response, 403)

        # This bank's own key on an admin-only route: 403.
        if case.access == "admin":
            body = assert_problem(await call(app, world.key, world, case), 403)
            assert "admin" in body["detail"]
    async with make_client(app, ADMIN_KEY) as admin:
        after = (await admin.get(f"/v1/banks/{world.bank}/stats")).json()
        bank = (await admin.get(f"/v1/banks/{world.bank}")).json()
        memory = (await admin.get(f"/v1/banks/{world.bank}/memories/{world.values['memory_id']}")).json()
    for stats in (before, after):
        del stats["queue_lag_seconds"]  # a clock, not the bank's content
    assert after == before
    assert bank["name"] is None
    assert (memory["status"], memory["content"]) == ("active", "Ana lives in Lisbon.")


async def test_the_right_key_reaches_every_route(app: Any, world: World) -> None:
    """The bank's own key on its routes, the admin key on admin-only ones: each answers as it should."""
    for case in CASES:
        key = ADMIN_KEY if case.access == "admin" else world.key
        response = await call(app, key, world, case)
        assert response.status_code == case.ok, (case.method, case.path, response.text)
        if case.access == "caller":
            assert banks_seen(response) == [world.bank]
    async with make_client(app, ADMIN_KEY) as admin:
        assert_problem(await admin.get(f"/v1/banks/{world.bank}"), 404)  # the last case purged it
        created = next(c.body["bank_id"] for c in CASES if (c.method, c.path) == ("POST", "/v1/banks"))
        assert (await admin.delete(f"/v1/banks/{created}")).status_code == 204


# --- MCP: the tools ---------------------------------------------------------------------------------------


def tool_calls(world: World) -> dict[str, dict[str, Any]]:
    """Each tool aimed at bank A (by name, or by one of its memories)."""
    memory_id = world.values["memory_id"]
    return {
        "memory_write": {"content": "Injected.", "tags": ["fact"], "bank_id": world.bank},
        "memory_query": {"query": "Where does Ana live?", "bank_id": world.bank},
        "memory_query_v2": {"query": "Where does Ana live?", "bank_id": world.bank},
        "memory_update": {"memory_id": memory_id, "content": "Ana lives in Faro.", "bank_id": world.bank},
        "memory_forget": {"memory_id": memory_id, "bank_id": world.bank},
        "memory_reflect": {"session_id": "s1", "bank_id": world.bank},
        "memory_profile": {"bank_id": world.bank},
        "memory_proposals": {"bank_id": world.bank},
        "memory_review": {"memory_id": world.values["proposal"], "decision": "reject", "bank_id": world.bank},
    }


def tool_result(response: httpx.Response) -> tuple[bool, str]:
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    return bool(result.get("isError")), " ".join(block["text"] for block in result["content"])


async def test_mcp_tools_refuse_bad_credentials_and_another_banks_key(
    app: Any, world: World, sql: Any
) -> None:
    calls = tool_calls(world)
    assert set(calls) == {
        "memory_write",
        "memory_query",
        "memory_query_v2",
        "memory_update",
        "memory_forget",
        "memory_reflect",
        "memory_profile",
        "memory_proposals",
        "memory_review",
    }
    units = "SELECT status, content FROM memory_units WHERE bank_id = :bank ORDER BY content"
    before = [(r["status"], r["content"]) for r in await sql(units, bank=world.bank)]
    assert ("active", "Ana lives in Lisbon.") in before
    for tool, arguments in calls.items():
        for name, key in world.credentials().items():
            response = await mcp_call(app, key, tool, arguments)
            assert response.status_code == 401, (tool, name, response.text)
            assert_unauthorized(response, key)
        is_error, text = tool_result(await mcp_call(app, world.other_key, tool, arguments))
        assert is_error, (tool, text)
        assert "Not Found (404)" in text, (tool, text)
    assert [(r["status"], r["content"]) for r in await sql(units, bank=world.bank)] == before

    # The bank's own key (no bank_id needed) reaches every tool.
    own = {tool: {k: v for k, v in arguments.items() if k != "bank_id"} for tool, arguments in calls.items()}
    for tool in calls:  # in order: the update supersedes the memory, the forget then finds it
        is_error, text = tool_result(await mcp_call(app, world.key, tool, own[tool]))
        assert not is_error, (tool, text)


# --- constant-time key comparison ---------------------------------------------------------------------------


async def test_the_admin_key_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The admin key is compared as equal-length digests with hmac.compare_digest, so neither where a
    guess first differs nor its length shows in the timing. (Bank keys are looked up by their SHA-256
    digest: a guess's digest says nothing about how close the guess is.)"""
    compared: list[tuple[Any, Any]] = []
    compare_digest = hmac.compare_digest

    def recording(a: Any, b: Any) -> bool:
        compared.append((a, b))
        return compare_digest(a, b)

    monkeypatch.setattr(banks_service.hmac, "compare_digest", recording)
    admin_key = "a-real-admin-key-" + secrets.token_hex(16)
    db: Any = None  # neither call reaches the database: the admin key, and a token of no bank key shape
    principal = await banks_service.authenticate(db, admin_key, admin_key)
    assert principal.is_admin
    for guess in (admin_key[:-1], admin_key + "0", "x"):
        with pytest.raises(Unauthorized):
            await banks_service.authenticate(db, guess, admin_key)
    assert len(compared) == 4
    assert all(len(a) == len(b) == 64 for a, b in compared)  # SHA-256 hex digests, never the raw keys
    assert all(admin_key not in (a, b) for a, b in compared)


# --- CORS ---------------------------------------------------------------------------------------------------


PREFLIGHT = {
    "origin": "https://evil.example",
    "access-control-request-method": "POST",
    "access-control-request-headers": "authorization, content-type",
}


async def test_cors_is_off_by_default(app: Any, world: World) -> None:
    assert app.state.settings.cors_origins == []
    async with make_client(app, world.key) as c:
        preflight = await c.options(f"/v1/banks/{world.bank}/query", headers=PREFLIGHT)
        simple = await c.get(f"/v1/banks/{world.bank}", headers={"origin": "https://evil.example"})
    assert simple.status_code == 200
    for response in (preflight, simple):
        assert not any(h.startswith("access-control-") for h in response.headers), response.headers


async def test_cors_when_configured_allows_only_the_listed_origins(stack: Stack) -> None:
    allowed = "https://app.example"
    settings = Settings(
        env="test",
        database_url=stack.database_url,
        redis_url=stack.redis_url,
        admin_key="cors-admin-key-" + uuid.uuid4().hex,
        cors_origins=[allowed],
        rate_limit_per_second=0.01,
        rate_limit_burst=1,
    )
    app: Any = create_app(settings)
    key = settings.admin_key.get_secret_value()
    async with app.router.lifespan_context(app), make_client(app, key) as c:
        ok = await c.options("/v1/banks", headers={**PREFLIGHT, "origin": allowed})
        assert ok.status_code == 200
        assert ok.headers["access-control-allow-origin"] == allowed
        refused = await c.options("/v1/banks", headers=PREFLIGHT)
        assert "access-control-allow-origin" not in refused.headers
        first = await c.get("/v1/banks", headers={"origin": allowed})
        assert first.status_code == 200
        assert first.headers["access-control-allow-origin"] == allowed
        # The 429 a browser client gets carries CORS headers and lets it read Retry-After.
        limited = await c.get("/v1/banks", headers={"origin": allowed})
        assert_problem(limited, 429)
        assert limited.headers["access-control-allow-origin"] == allowed
        assert "retry-after" in limited.headers["access-control-expose-headers"].lower()
