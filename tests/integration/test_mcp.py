"""MCP on the real stack, through the SDK's own client: the app served over real HTTP (uvicorn, its
lifespan running the MCP session manager) at `/mcp`, and `hindsight mcp` spawned over stdio forwarding
to it; a real Celery worker distils what `memory_reflect` asks for."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, Tool

from tests.conftest import ADMIN_KEY, ROOT, Stack, wait_for
from tests.factories import finished_job, make_bank

TOOLS = {
    "memory_write",
    "memory_query",
    "memory_query_v2",
    "memory_update",
    "memory_forget",
    "memory_reflect",
    "memory_profile",
    "memory_proposals",  # shared memory: the proposals waiting for a review, and reviewing one
    "memory_review",
}
# memory_query v1's memories, as they were before v2 (deprecated, unchanged until its window ends)
V1_UNIT_KEYS = {
    "id",
    "content",
    "tags",
    "status",
    "confidence",
    "importance",
    "supersedes",
    "superseded_by",
    "merged_into",
    "created_at",
    "claim",
    "agent_id",
    "score",
}


@pytest.fixture(scope="module")
def service(stack: Stack) -> Iterator[str]:
    """The real app on a loopback port (uvicorn in a thread, lifespan included); its base URL."""
    from app.config import get_settings
    from app.main import create_app
    from tests.fake_openai import serve

    with serve(create_app(get_settings())) as url:
        yield url.removesuffix("/v1")


@asynccontextmanager
async def http_client(service: str, key: str | None, mode: str = "auto") -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP with a bearer key; `mode` "auto" speaks the per-request
    protocol (2026-07-28), "legacy" the initialize handshake of today's hosts (2025-11-25)."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{service}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


@asynccontextmanager
async def stdio(service: str, key: str, stack: Stack, log: Path) -> AsyncIterator[Client]:
    """`hindsight mcp` spawned as a host would, talking the handshake protocol of today's hosts."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.cli", "mcp"],
        env=stack.env(HINDSIGHT_URL=service, HINDSIGHT_API_KEY=key),
        cwd=ROOT,
    )
    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            yield client


async def bank_key(client: httpx.AsyncClient, bank: str, scopes: tuple[str, ...] = ("read", "write")) -> str:
    response = await client.post(f"/v1/banks/{bank}/keys", json={"scopes": list(scopes)})
    assert response.status_code == 201, response.text
    key: str = response.json()["key"]
    return key


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def ok(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result
    assert result.structured_content is None
    return text_of(result)


# --- the tool list ------------------------------------------------------------------------------------------


def assert_flat(schema: dict[str, Any]) -> None:
    assert schema["type"] == "object"
    properties: dict[str, Any] = schema["properties"]
    assert set(schema.get("required", [])) <= set(properties)
    text = json.dumps(schema)
    for keyword in ("anyOf", "oneOf", "allOf", "$ref", "$defs", "not"):
        assert f'"{keyword}"' not in text, (keyword, schema)
    for name, prop in properties.items():
        assert prop.get("type") in ("string", "integer", "number", "boolean", "array"), (name, prop)
        assert prop.get("description"), name
        if prop["type"] == "array":  # one level: an array of scalars
            assert prop["items"]["type"] in ("string", "integer", "number", "boolean"), (name, prop)


def check_tools(tools: list[Tool]) -> dict[str, Tool]:
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == TOOLS
    for tool in tools:
        assert tool.description, tool.name
        when, _, deprecated = tool.description.partition(" Deprecated: ")
        assert len(when) < 200, tool.name
        assert when.startswith("Call "), tool.description  # says when to call it
        # A deprecated tool says so, names its successor and the end of its window, in words and in _meta.
        assert bool(deprecated) == (tool.meta is not None and "io.hindsight/deprecated" in tool.meta), (
            tool.name
        )
        if deprecated:
            assert tool.meta is not None
            successor = tool.meta["io.hindsight/deprecated"]
            assert deprecated.startswith(f"use {successor['replaced_by']} ")
            assert successor["until"] in deprecated
            assert successor["replaced_by"] in by_name
        assert_flat(tool.input_schema)
        assert tool.annotations is not None
        assert "bank_id" in tool.input_schema["properties"]
        assert "bank_id" not in tool.input_schema.get("required", [])
    hints = {name: tool.annotations for name, tool in by_name.items() if tool.annotations}
    assert hints["memory_query"].read_only_hint is True
    assert hints["memory_query_v2"].read_only_hint is True
    assert hints["memory_profile"].read_only_hint is True
    assert hints["memory_proposals"].read_only_hint is True
    assert hints["memory_review"].read_only_hint is False
    assert hints["memory_forget"].destructive_hint is True
    assert hints["memory_forget"].idempotent_hint is True
    for name in ("memory_write", "memory_update", "memory_forget", "memory_reflect"):
        assert hints[name].read_only_hint is False, name
    for name in ("memory_write", "memory_update", "memory_reflect"):
        assert hints[name].destructive_hint is False, name
    required = {name: set(tool.input_schema.get("required", [])) for name, tool in by_name.items()}
    assert required == {
        "memory_write": {"content", "tags"},
        "memory_query": {"query"},
        "memory_query_v2": {"query"},
        "memory_update": {"memory_id"},
        "memory_forget": {"memory_id"},
        "memory_reflect": {"session_id"},
        "memory_profile": set(),
        "memory_proposals": set(),
        "memory_review": {"memory_id", "decision"},
    }
    query = by_name["memory_query"].input_schema["properties"]
    assert query["top_k"]["type"] == "integer"
    assert query["tags"] == {**query["tags"], "type": "array"}
    assert by_name["memory_query"].meta is not None  # deprecated
    assert by_name["memory_query_v2"].meta is None
    assert set(by_name["memory_query_v2"].input_schema["properties"]) == {*query, "context_why"}
    output = by_name["memory_query_v2"].output_schema
    assert output is not None
    assert {"context", "memories", "rerank"} <= set(output["properties"])
    return by_name


async def test_tools_are_listed_with_flat_schemas(service: str) -> None:
    async with http_client(service, ADMIN_KEY) as client:
        check_tools((await client.list_tools()).tools)


# --- every tool over Streamable HTTP ------------------------------------------------------------------------


async def exercise_every_tool(client: Client, rest: httpx.AsyncClient, bank: str) -> None:
    """memory_write → memory_query → memory_update → memory_forget → memory_reflect, in one bank."""
    written = await ok(
        client,
        "memory_write",
        {
            "content": "Ana prefers window seats on long flights.",
            "tags": "preference.travel",
            "importance": "0.8",
        },
    )
    assert written["status"] == "active"
    assert written["tags"] == ["preference.travel"]
    assert written["importance"] == pytest.approx(0.8)
    assert set(written["claim"]) == {"subject", "attribute", "value", "value_type", "modality"}

    found = await client.call_tool("memory_query", {"query": "Which seat does Ana prefer?", "top_k": "5"})
    assert not found.is_error, text_of(found)
    data = found.structured_content
    assert data is not None
    assert written["id"] in data["ids"]
    assert "Ana prefers window seats on long flights." in data["context"]
    assert data["context"] in text_of(found)  # the prompt-ready block is what the model reads
    assert written["id"] in text_of(found)
    assert [set(m) for m in data["memories"]] == [V1_UNIT_KEYS] * len(data["memories"])  # v1 as it was

    # v2: the same context, and each memory with its claim, dates, score and why.
    found_v2 = await client.call_tool(
        "memory_query_v2", {"query": "Which seat does Ana prefer?", "top_k": "5", "context_why": "true"}
    )
    assert not found_v2.is_error, text_of(found_v2)
    v2 = found_v2.structured_content
    assert v2 is not None
    [unit] = [m for m in v2["memories"] if m["id"] == written["id"]]
    assert unit["claim"] == written["claim"]
    assert unit["created_at"]
    assert unit["valid_from"]
    assert unit["valid_to"] is None
    assert unit["why"].startswith("Written through MCP on ")
    assert v2["rerank"] == "skipped (not configured)"
    assert f"why: {unit['why']}" in v2["context"]
    assert f"{written['id']}: Ana prefers window seats on long flights. — {unit['why']}" in text_of(found_v2)

    updated = await ok(
        client,
        "memory_update",
        {"memory_id": written["id"], "content": "Ana prefers aisle seats on long flights."},
    )
    assert updated["id"] != written["id"]
    assert updated["supersedes"] == written["id"]
    assert updated["status"] == "active"
    assert updated["claim"] is not None
    old = (await rest.get(f"/v1/banks/{bank}/memories/{written['id']}")).json()
    assert old["status"] == "superseded"

    forgotten = await ok(client, "memory_forget", {"memory_id": updated["id"]})
    assert forgotten["status"] == "deleted"
    again = await ok(client, "memory_forget", {"memory_id": updated["id"]})  # idempotent
    assert again["status"] == "deleted"
    after = await ok(client, "memory_query", {"query": "Which seat does Ana prefer?"})
    assert updated["id"] not in after["ids"]

    appended = await rest.post(
        f"/v1/banks/{bank}/sessions/trip/events",
        json={"events": [{"role": "user", "speaker": "Ana", "content": "My budget is 5000."}]},
    )
    assert appended.status_code == 202, appended.text
    reflected = await ok(client, "memory_reflect", {"session_id": "trip"})
    job = await finished_job(rest, reflected["job_id"])
    assert job["status"] == "succeeded", job
    assert job["kind"] == "distill.session"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_tool_over_http(service: str, client: httpx.AsyncClient, worker: Any, mode: str) -> None:
    bank = await make_bank(client)
    async with http_client(service, await bank_key(client, bank), mode) as mcp:
        await exercise_every_tool(mcp, client, bank)
    history = (await client.get(f"/v1/banks/{bank}/memories", params={"status": "deleted"})).json()
    assert [m["content"] for m in history["memories"]] == ["Ana prefers aisle seats on long flights."]


async def test_admin_key_names_the_bank(service: str, client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    async with http_client(service, ADMIN_KEY) as mcp:
        message = await refused(mcp, "memory_query", {"query": "anything"})
        assert "bank_id is required" in message
        written = await ok(
            mcp, "memory_write", {"content": "Bo lives in Lyon.", "tags": ["fact"], "bank_id": bank}
        )
        found = await ok(mcp, "memory_query", {"query": "Where does Bo live?", "bank_id": bank})
        assert written["id"] in found["ids"]
    history = (await client.get(f"/v1/banks/{bank}/memories/{written['id']}/history")).json()
    assert history["actions"][0]["actor"] == "mcp:admin"


# --- write → reflect → query --------------------------------------------------------------------------------


async def test_write_reflect_query_round_trip(service: str, client: httpx.AsyncClient, worker: Any) -> None:
    bank = await make_bank(client)
    async with http_client(service, await bank_key(client, bank)) as mcp:
        await ok(mcp, "memory_write", {"content": "Ana is travelling to Lisbon in May.", "tags": ["fact"]})
        turns = [
            {"role": "user", "content": "I need a hotel near the old town."},
            {"role": "assistant", "content": "Sure. What is your budget?"},
            {"role": "user", "content": "My budget is 1200 euros."},
        ]
        response = await client.post(f"/v1/banks/{bank}/sessions/lisbon/events", json={"events": turns})
        assert response.status_code == 202, response.text
        # Before the reflection the turn is only working memory, not a memory unit: it is in the
        # context block's recent turns, not among the memories.
        before = await ok(mcp, "memory_query", {"query": "What is the budget?", "session_id": "lisbon"})
        assert all("1200" not in m["content"] for m in before["memories"])
        assert any("1200" in turn["content"] for turn in before["working_memory"])
        assert "## recent turns (not yet distilled)" in before["context"]
        assert "user: My budget is 1200 euros." in before["context"]

        reflected = await ok(mcp, "memory_reflect", {"session_id": "lisbon"})
        uuid.UUID(reflected["job_id"])
        job = await finished_job(client, reflected["job_id"])
        assert job["status"] == "succeeded", job

        async def recalled() -> dict[str, Any] | None:
            found = await ok(
                mcp, "memory_query", {"query": "What is the user's budget?", "tags": ["constraint"]}
            )
            return found if "budget is 1200" in found["context"] else None

        found = await wait_for(recalled, within=60, interval=0.3)
        assert found["memories"][0]["tags"] == ["constraint.budget"]
        trip = await ok(mcp, "memory_query", {"query": "Where is Ana travelling?"})
        assert "Ana is travelling to Lisbon in May." in trip["context"]


async def test_working_memory_of_a_colliding_bank_stays_out(service: str, client: httpx.AsyncClient) -> None:
    """Bank T session `eu:chat` and bank `T:eu` session `chat` once shared one Redis list."""
    t = f"t{uuid.uuid4().hex[:10]}"
    for bank in (t, f"{t}:eu"):
        created = await client.post(
            "/v1/banks", json={"bank_id": bank, "config": {"distill_every_n_turns": 1000}}
        )
        assert created.status_code == 201, created.text
    turns = [{"role": "user", "content": f"Book a table for {i} people."} for i in range(50)]
    response = await client.post(f"/v1/banks/{t}:eu/sessions/chat/events", json={"events": turns})
    assert response.status_code == 202, response.text
    secrets = [{"role": "user", "content": f"The vault code of T is {4000 + i}."} for i in range(50)]
    response = await client.post(f"/v1/banks/{t}/sessions/eu:chat/events", json={"events": secrets})
    assert response.status_code == 202, response.text
    async with http_client(service, await bank_key(client, f"{t}:eu")) as mcp:
        found = await ok(mcp, "memory_query", {"query": "vault code", "session_id": "chat"})
    assert [turn["content"] for turn in found["working_memory"]] == [turn["content"] for turn in turns]


# --- over stdio ---------------------------------------------------------------------------------------------


async def test_every_tool_over_stdio(
    service: str, client: httpx.AsyncClient, worker: Any, stack: Stack, tmp_path: Path
) -> None:
    bank = await make_bank(client)
    log = tmp_path / "mcp-stdio.log"
    async with stdio(service, await bank_key(client, bank), stack, log) as mcp:
        assert mcp.server_info is not None
        assert mcp.server_info.name == "hindsight"
        check_tools((await mcp.list_tools()).tools)
        await exercise_every_tool(mcp, client, bank)
        message = await refused(mcp, "memory_query", {"query": "x", "top_k": "lots"})
        assert "top_k" in message
    units = (await client.get(f"/v1/banks/{bank}/memories", params={"status": "superseded"})).json()
    assert len(units["memories"]) == 1


async def test_stdio_says_which_is_wrong_and_lists_its_tools_anyway(
    service: str, stack: Stack, tmp_path: Path
) -> None:
    """An unreachable service, a refused key and a missing key: three different messages the user can
    act on, as tool results; `tools/list` answers in every case (the list is static)."""
    from app.embedded import free_port

    messages = {}
    for case, url, key in (
        ("unreachable", f"http://127.0.0.1:{free_port()}", "hs_nothing"),
        ("refused", service, "hs_revoked-or-wrong"),
        ("missing", service, ""),
    ):
        async with stdio(url, key, stack, tmp_path / f"{case}.log") as mcp:
            check_tools((await mcp.list_tools()).tools)
            messages[case] = await refused(mcp, "memory_query", {"query": "anything"})
    assert "could not be reached" in messages["unreachable"]
    assert "ConnectError" in messages["unreachable"]
    assert "refused the key (401" in messages["refused"]
    assert "HINDSIGHT_API_KEY is not set" in messages["missing"]
    assert len(set(messages.values())) == 3


# --- isolation and auth -------------------------------------------------------------------------------------


async def test_a_bank_key_cannot_touch_another_bank(
    service: str, client: httpx.AsyncClient, sql: Any
) -> None:
    mine, theirs = await make_bank(client), await make_bank(client)
    async with http_client(service, await bank_key(client, theirs)) as other:
        secret = await ok(other, "memory_write", {"content": "Bo's door code is 4711.", "tags": ["fact"]})
        response = await client.post(
            f"/v1/banks/{theirs}/sessions/s1/events",
            json={"events": [{"role": "user", "content": "Hello there"}]},
        )
        assert response.status_code == 202

    async with http_client(service, await bank_key(client, mine)) as mcp:
        attempts: list[tuple[str, dict[str, Any]]] = [
            ("memory_query", {"query": "door code", "bank_id": theirs}),
            ("memory_write", {"content": "Injected.", "tags": ["fact"], "bank_id": theirs}),
            ("memory_update", {"memory_id": secret["id"], "content": "Changed.", "bank_id": theirs}),
            ("memory_update", {"memory_id": secret["id"], "content": "Changed."}),
            ("memory_forget", {"memory_id": secret["id"], "bank_id": theirs}),
            ("memory_forget", {"memory_id": secret["id"]}),
            ("memory_reflect", {"session_id": "s1", "bank_id": theirs}),
            ("memory_reflect", {"session_id": "s1"}),
        ]
        for tool, arguments in attempts:
            message = await refused(mcp, tool, arguments)
            assert "Not Found (404)" in message, (tool, message)
        own = await ok(mcp, "memory_query", {"query": "door code"})
        assert own["ids"] == []
        assert "4711" not in own["context"]

    rows = await sql("SELECT status, content FROM memory_units WHERE bank_id = :bank", bank=theirs)
    assert [(r["status"], r["content"]) for r in rows] == [("active", "Bo's door code is 4711.")]
    assert (
        await sql("SELECT id FROM jobs WHERE bank_id = :bank AND kind = 'distill.session'", bank=theirs) == []
    )

    async with http_client(service, await bank_key(client, mine, ("read",))) as reader:
        assert "Forbidden (403)" in await refused(reader, "memory_write", {"content": "x", "tags": ["fact"]})
        await ok(reader, "memory_query", {"query": "anything"})


async def test_http_needs_a_valid_key(service: str) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(base_url=service, timeout=30) as raw:
        for auth in ({}, {"authorization": "Bearer hs_not-a-key"}, {"authorization": "Basic abc"}):
            response = await raw.post("/mcp", json=message, headers={**headers, **auth})
            assert response.status_code == 401, response.text
            assert response.headers["content-type"].startswith("application/problem+json")
            assert response.headers["www-authenticate"] == "Bearer"
        # Stateless: no session to DELETE, nothing for a GET stream to carry (it would hang open).
        admin = {"authorization": f"Bearer {ADMIN_KEY}"}
        for method in ("GET", "DELETE"):
            response = await raw.request(method, "/mcp", headers={**headers, **admin})
            assert response.status_code == 405, response.text
    with pytest.raises(BaseExceptionGroup) as raised:  # the SDK's client cannot connect without a key
        async with http_client(service, None):
            pass
    assert raised.group_contains(MCPError)


# --- malformed arguments ------------------------------------------------------------------------------------


async def test_malformed_arguments_are_tool_errors(service: str, client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    async with http_client(service, await bank_key(client, bank)) as mcp:
        cases: list[tuple[str, dict[str, Any], str]] = [
            ("memory_write", {"tags": ["fact"]}, "content"),
            ("memory_write", {"content": "x", "tags": []}, "tags"),
            ("memory_write", {"content": "x", "tags": ["Not A Tag!"]}, "tags.0"),
            ("memory_write", {"content": "x", "tags": 7}, "tags"),
            ("memory_write", {"content": "x\u0000y", "tags": ["fact"]}, "content"),
            ("memory_write", {"content": "x", "tags": ["fact"], "importance": "very"}, "importance"),
            ("memory_write", {"content": "x", "tags": ["fact"], "importance": 3}, "importance"),
            ("memory_write", {"content": "x", "tags": ["fact"], "colour": "red"}, "colour"),
            ("memory_write", {"content": "x", "tags": ["fact"], "bank_id": "no spaces"}, "bank_id"),
            ("memory_query", {}, "query"),
            ("memory_query", {"query": "x", "top_k": 0}, "top_k"),
            ("memory_query", {"query": "x", "top_k": "2.5"}, "top_k"),
            ("memory_query", {"query": "   "}, "query"),
            ("memory_query", {"query": {"nested": True}}, "query"),
            ("memory_query", {"query": "x\u0000y"}, "query"),
            ("memory_profile", {"entity": "A\u0000"}, "entity"),
            (
                "memory_review",
                {"memory_id": str(uuid.uuid4()), "decision": "reject", "reason": "x\u0000y"},
                "reason",
            ),
            ("memory_update", {"memory_id": "not-a-uuid", "content": "x"}, "memory_id"),
            ("memory_update", {"memory_id": str(uuid.uuid4())}, "at least one"),
            ("memory_update", {"memory_id": str(uuid.uuid4()), "content": "x"}, "Not Found (404)"),
            ("memory_forget", {"memory_id": 12}, "memory_id"),
            ("memory_reflect", {}, "session_id"),
            ("memory_reflect", {"session_id": "no-such-session"}, "Not Found (404)"),
        ]
        for tool, arguments, expected in cases:
            message = await refused(mcp, tool, arguments)
            assert expected in message, (tool, arguments, message)
        unknown = await mcp.call_tool("memory_delete_everything", {})
        assert unknown.is_error

        # Numbers and lists as strings are coerced, as models often send them.
        written = await ok(
            mcp,
            "memory_write",
            {"content": "Bo drinks tea.", "tags": '["preference.food"]', "importance": "0.3"},
        )
        assert written["tags"] == ["preference.food"]
        assert written["importance"] == pytest.approx(0.3)
        found = await ok(
            mcp, "memory_query", {"query": "What does Bo drink?", "top_k": "3", "tags": "preference"}
        )
        assert found["ids"] == [written["id"]]


async def test_memory_write_supersedes_a_changed_fact_like_the_rest_route(
    service: str, client: httpx.AsyncClient
) -> None:
    bank = await make_bank(client)
    async with http_client(service, await bank_key(client, bank)) as mcp:
        for first, second in (
            ("Carl works at Acme.", "Carl works at Globex."),
            ("张伟在阿里巴巴工作。", "张伟在腾讯工作。"),
        ):
            old = await ok(mcp, "memory_write", {"content": first, "tags": ["fact.work"]})
            new = await ok(mcp, "memory_write", {"content": second, "tags": ["fact.work"]})
            assert (new["status"], new["supersedes"]) == ("active", old["id"])
            before = (await client.get(f"/v1/banks/{bank}/memories/{old['id']}")).json()
            assert before["status"] == "superseded"
