"""Factories the test modules share, as plain functions: banks, jobs, turns and memories over the HTTP
API, and the LLM distiller's inputs. Test modules take them from here, never from each other."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from standardwebhooks import Webhook as Verifier

from app.config import Settings
from app.distill.types import DistillContext, RelatedUnit, Turn
from app.embedded import free_port
from app.usage.budget import Budget
from tests.conftest import make_client, wait_for

# --- over the HTTP API -------------------------------------------------------------------------------

CONVERSATION = [
    ("user", "Hi! I'm looking for a new laptop for work."),
    ("assistant", "Happy to help. What is your budget?"),
    ("user", "My budget is 5000."),
    ("assistant", "Noted. Do you have any preferences?"),
    ("user", "I prefer a 14 inch screen and I need it by Friday."),
    ("assistant", "Got it."),
    ("user", "If the configuration can be upgraded I can go to 8000."),
    ("assistant", "Understood, I will look for upgradeable models."),
    ("user", "Can the price we discussed be negotiated?"),
    ("assistant", "Your order ORD-12345 has been created."),
    ("user", "Thanks!"),
    ("user", "I live in Berlin, so please ship it to the office there."),
]
T0 = "2026-11-30T10:00:00+00:00"  # a Monday


def events(lines: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [{"role": role, "content": content, "occurred_at": T0} for role, content in lines]


def ok(response: httpx.Response, status: int = 200) -> Any:
    """The JSON body of a response that must have `status` (else the failure shows the body)."""
    assert response.status_code == status, response.text
    return response.json()


async def make_bank(client: httpx.AsyncClient, **config: Any) -> str:
    bank = f"bank-{uuid.uuid4().hex[:12]}"
    response = await client.post("/v1/banks", json={"bank_id": bank, "config": config})
    assert response.status_code == 201, response.text
    return bank


async def finished_job(client: httpx.AsyncClient, job_id: str, within: float = 60) -> dict[str, Any]:
    async def done() -> dict[str, Any] | None:
        job: dict[str, Any] = (await client.get(f"/v1/jobs/{job_id}")).json()
        return job if job["status"] in ("succeeded", "failed") else None

    result: dict[str, Any] = await wait_for(done, within=within)
    return result


async def searchable_job(client: httpx.AsyncClient, job_id: str, within: float = 60) -> dict[str, Any]:
    """Poll a distillation until a query can find what it distilled (or it failed)."""

    async def done() -> dict[str, Any] | None:
        job: dict[str, Any] = (await client.get(f"/v1/jobs/{job_id}")).json()
        return job if job["status"] == "failed" or job["searchable"] else None

    result: dict[str, Any] = await wait_for(done, within=within)
    return result


async def units(sql: Any, bank: str, status: str | None = None) -> list[Any]:
    rows: list[Any] = await sql(
        "SELECT * FROM memory_units WHERE bank_id = :bank"
        " AND (CAST(:status AS text) IS NULL OR status = :status) ORDER BY source_seqs, content",
        bank=bank,
        status=status,
    )
    return rows


async def say(client: httpx.AsyncClient, bank: str, text: str, session: str = "s") -> None:
    """Append one user turn and distil it, waiting until nothing of the bank is pending."""
    await client.post(
        f"/v1/banks/{bank}/sessions/{session}/events", json={"events": [{"role": "user", "content": text}]}
    )
    job = await finished_job(
        client, (await client.post(f"/v1/banks/{bank}/sessions/{session}/distill")).json()["job_id"]
    )
    assert job["status"] == "succeeded", job
    await wait_for(lambda: settled(client, bank))


async def settled(client: httpx.AsyncClient, bank: str) -> bool:
    page = (await client.get(f"/v1/banks/{bank}/memories", params={"status": "pending"})).json()
    return not page["memories"]


async def memories(client: httpx.AsyncClient, bank: str, **params: Any) -> list[dict[str, Any]]:
    page = ok(await client.get(f"/v1/banks/{bank}/memories", params=params))
    found: list[dict[str, Any]] = page["memories"]
    return found


async def write(client: httpx.AsyncClient, bank: str, content: str, tags: list[str]) -> dict[str, Any]:
    response = await client.post(
        f"/v1/banks/{bank}/memories", params={"wait": "true"}, json={"content": content, "tags": tags}
    )
    unit: dict[str, Any] = ok(response, 201)["memory"]
    return unit


# --- the worker's distillation, in the test process -------------------------------------------------


@dataclass
class InProcessDistill:
    """What a distillation uses of a worker (`app.distill.store.DistillRuntime`), and the unit of work
    its jobs run in, in the test process with a distiller of the test's choice."""

    sessionmaker: Any
    embedder: Any
    only: Any  # the distiller, whichever name the job asks for
    work: Any
    working_memory: Any = None
    budget: Budget = field(default_factory=Budget)  # none: the service's LLM budget is unlimited
    job_deadline: timedelta = timedelta(minutes=10)

    def distiller(self, name: str | None) -> Any:
        return self.only


# --- webhooks: a receiver on loopback, hooks and their deliveries over the HTTP API -------------------


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: str

    @property
    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.body)
        return data


@dataclass
class Receiver:
    """An HTTP server on loopback that records every POST; `routes` say what a path answers
    (status, headers), 204 otherwise. `stop()` closes the port (the receiver is down), `start()`
    opens it again on the same port."""

    port: int = field(default_factory=free_port)
    received: list[Received] = field(default_factory=list)
    routes: dict[str, tuple[int, dict[str, str]]] = field(default_factory=dict)
    slow: dict[str, float] = field(default_factory=dict)  # path → seconds it takes to answer
    _server: ThreadingHTTPServer | None = None

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
                receiver.received.append(Received(self.path, dict(self.headers.items()), body))
                time.sleep(receiver.slow.get(self.path, 0.0))  # a slow receiver, not a synchronisation
                status, headers = receiver.routes.get(self.path, (204, {}))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def events(self, path: str = "/hook") -> list[dict[str, Any]]:
        return [r.json for r in self.received if r.path == path]


async def create_hook(client: httpx.AsyncClient, bank: str, url: str, events: list[str]) -> dict[str, Any]:
    response = await client.post(f"/v1/banks/{bank}/webhooks", json={"url": url, "events": events})
    assert response.status_code == 201, response.text
    hook: dict[str, Any] = response.json()
    return hook


async def deliveries(client: httpx.AsyncClient, bank: str, hook_id: str) -> list[dict[str, Any]]:
    response = await client.get(f"/v1/banks/{bank}/webhooks/{hook_id}/deliveries")
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["deliveries"]
    return found


def verified(secret: str, request: Received) -> dict[str, Any]:
    """The body, once the Standard Webhooks library has checked its signature (raises otherwise)."""
    body: dict[str, Any] = Verifier(secret).verify(request.body, request.headers)
    return body


# --- the LLM distiller's inputs and replies ----------------------------------------------------------

SHANGHAI = timezone(timedelta(hours=8))


def turn(seq: int, content: str, role: str = "user", speaker: str | None = "Alice") -> Turn:
    at = datetime(2025, 1, 14, 1, 30, tzinfo=UTC) + timedelta(minutes=seq)
    return Turn(seq=seq, event_id=100 + seq, role=role, content=content, speaker=speaker, occurred_at=at)


def context(*turns: Turn, related: list[RelatedUnit] | None = None) -> DistillContext:
    return DistillContext(
        bank_id="b1",
        session_id="s1",
        turns=list(turns) or [turn(1, "My budget is now 8000 dollars."), turn(2, "Thanks!")],
        timezone=SHANGHAI,
        related=related if related is not None else [],
        taxonomy=["constraint.budget", "project.alpha"],
    )


def unit(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "content": "Alice's budget is 8000 dollars.",
        "tags": ["constraint.budget"],
        "confidence": 0.9,
        "importance": 0.8,
        "source_seqs": [1],
        "entities": [{"name": "Alice", "type": "person"}, {"name": "8000 dollars", "type": "amount"}],
        "relations": [{"subject": "Alice", "relation": "has_budget", "object": "8000 dollars"}],
        "supersedes": None,
    }
    return {**base, **overrides}


def units_json(*units: dict[str, Any]) -> str:
    return json.dumps({"units": list(units)})


def llm_settings(**overrides: Any) -> Settings:
    """Settings naming an OpenAI-compatible server on a closed port (no request is sent)."""
    values: dict[str, Any] = {
        "env": "test",
        "llm_base_url": "http://127.0.0.1:9/v1",
        "llm_api_key": "sk-x",
        "llm_model": "qwen2.5",
        "llm_max_retries": 1,
    }
    return Settings(**(values | overrides))


MCP_HEADERS = {"accept": "application/json, text/event-stream"}


async def mcp_call(app: Any, key: str | None, tool: str, arguments: dict[str, Any]) -> httpx.Response:
    """One MCP `tools/call` over the app's Streamable HTTP endpoint (stateless, JSON response)."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    async with make_client(app, key) as c:
        return await c.post("/mcp", json=message, headers=MCP_HEADERS)


# --- bank export and import ------------------------------------------------------------------------------

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


async def portable_bank(client: httpx.AsyncClient) -> str:
    """A bank with what an export must carry: two distilled sessions (source turns, entities,
    relations), a supersede chain of three, a merge across the sessions, a forgotten and a purged unit."""
    bank = await make_bank(client, distill_every_n_turns=1000, forgetting_policy="delete")
    await say(client, bank, "My budget is 5000 euros and I prefer window seats.", session="trip")
    await say(client, bank, "I live in Berlin and my order number is ORD-55555.", session="home")
    await say(client, bank, "I'm allergic to peanuts.", session="trip")
    await say(client, bank, "I'm allergic to peanuts.", session="home")  # merged into the first
    unit = await write(client, bank, "Ana's favourite colour is green.", ["preference.color"])
    for colour in ("blue", "red"):
        patched = await client.patch(
            f"/v1/banks/{bank}/memories/{unit['id']}",
            json={"content": f"Ana's favourite colour is {colour}."},
        )
        assert patched.status_code == 201, patched.text
        unit = patched.json()
    forgotten = await write(client, bank, "The user's locker code is 4411.", ["fact"])
    assert (await client.delete(f"/v1/banks/{bank}/memories/{forgotten['id']}")).status_code == 200
    purged = await write(client, bank, "The user's PIN is 9921.", ["fact"])
    response = await client.delete(f"/v1/banks/{bank}/memories/{purged['id']}", params={"purge": "true"})
    assert response.status_code == 200, response.text
    return bank


def canonical_export(ndjson: str) -> list[Any]:
    """An export's lines with the bank id and every id replaced by its order of first appearance: two
    exports of the same bank under other ids compare equal line by line."""
    ids: dict[str, str] = {}

    def walk(value: Any) -> Any:
        if isinstance(value, str) and _UUID.match(value):
            return ids.setdefault(value, f"<id {len(ids)}>")
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    lines = [json.loads(line) for line in ndjson.splitlines()]
    lines[0]["bank_id"] = "<bank>"
    return [walk(line) for line in lines]


def best_seconds(work: Callable[[str], object], text: str, runs: int = 3) -> float:
    """The best of `runs` timings of `work(text)`: what a ratio test of growth compares (no threshold)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work(text)
        times.append(time.perf_counter() - start)
    return min(times)
