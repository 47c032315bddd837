"""Factories the test modules share, as plain functions: banks, jobs, turns and memories over the HTTP
API, and the LLM distiller's inputs. Test modules take them from here, never from each other."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx

from app.config import Settings
from app.distill.types import DistillContext, RelatedUnit, Turn
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
