"""Memory shared by several agents on the real stack (docs/guides/shared-memory.md): every write records
its agent; contradicting agents resolve by the claim rules with both authors in the history; a
propose-only agent's writes change nothing until a reviewer accepts them; rejections; the review scope;
the query's agent filter; bank isolation."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.conftest import ADMIN_KEY, assert_problem, make_client, wait_for
from tests.factories import finished_job, make_bank, mcp_call, memories, ok, settled

NDJSON = {"content-type": "application/x-ndjson"}


async def key(client: httpx.AsyncClient, bank: str, scopes: list[str], agent: str | None = None) -> str:
    body: dict[str, Any] = {"scopes": scopes}
    if agent is not None:
        body["agent_id"] = agent
    created = ok(await client.post(f"/v1/banks/{bank}/keys", json=body), 201)
    assert created["agent_id"] == agent
    secret: str = created["key"]
    return secret


async def write_as(
    app: Any, secret: str, bank: str, content: str, tags: list[str], status: int = 201, **fields: Any
) -> dict[str, Any]:
    async with make_client(app, secret) as c:
        response = await c.post(
            f"/v1/banks/{bank}/memories",
            params={"wait": "true"},
            json={"content": content, "tags": tags, **fields},
        )
    unit: dict[str, Any] = ok(response, status)["memory"]
    return unit


async def history(client: httpx.AsyncClient, bank: str, memory_id: str) -> dict[str, Any]:
    found: dict[str, Any] = ok(await client.get(f"/v1/banks/{bank}/memories/{memory_id}/history"))
    return found


async def recall(client: httpx.AsyncClient, bank: str, query: str, **options: Any) -> list[dict[str, Any]]:
    body = ok(await client.post(f"/v1/banks/{bank}/query", json={"query": query, **options}))
    found: list[dict[str, Any]] = body["memories"]
    return found


def action(past: dict[str, Any], name: str) -> dict[str, Any]:
    return next(a for a in past["actions"] if a["action"] == name)


async def test_two_agents_contradict_the_newest_statement_wins_and_both_authors_are_in_the_history(
    app: Any, client: httpx.AsyncClient
) -> None:
    bank = await make_bank(client)
    alpha = await key(client, bank, ["read", "write"], "alpha")
    beta = await key(client, bank, ["read", "write"], "beta")
    first = await write_as(app, alpha, bank, "My budget is 5000.", ["constraint.budget"])
    assert (first["status"], first["agent_id"]) == ("active", "alpha")
    second = await write_as(app, beta, bank, "My budget is 7000.", ["constraint.budget"])
    assert (second["status"], second["agent_id"], second["supersedes"]) == ("active", "beta", first["id"])

    past = await history(client, bank, second["id"])
    assert [(c["content"], c["agent_id"]) for c in past["chain"]] == [
        ("My budget is 5000.", "alpha"),
        ("My budget is 7000.", "beta"),
    ]
    assert action(past, "created")["agent_id"] == "beta"
    activated = action(past, "activated")
    assert (activated["details"]["kept_agent"], activated["details"]["replaced_agent"]) == ("beta", "alpha")
    superseded = action(await history(client, bank, first["id"]), "superseded")
    assert (superseded["details"]["kept_agent"], superseded["details"]["replaced_agent"]) == ("beta", "alpha")

    # A third agent's statement about an earlier time is the older value, whoever wrote last: history,
    # at its place in the chain (before alpha's value).
    gamma = await key(client, bank, ["read", "write"], "gamma")
    late = await write_as(
        app, gamma, bank, "My budget is 6000.", ["constraint.budget"], occurred_at="2020-01-01T00:00:00Z"
    )
    assert late["status"] == "superseded"
    filed = action(await history(client, bank, late["id"]), "superseded")
    assert (filed["details"]["kept_agent"], filed["details"]["replaced_agent"]) == ("alpha", "gamma")
    assert filed["details"]["superseded_by"] == first["id"]
    [current] = await recall(client, bank, "What is my budget?", tags=["constraint.budget"])
    assert (current["id"], current["agent_id"]) == (second["id"], "beta")


async def test_a_proposal_changes_nothing_until_accepted_then_resolves(
    app: Any, client: httpx.AsyncClient
) -> None:
    bank = await make_bank(client)
    writer = await key(client, bank, ["read", "write"], "alpha")
    proposer = await key(client, bank, ["read", "propose"], "intern")
    reviewer = await key(client, bank, ["read", "review"], "lead")
    standing = await write_as(app, writer, bank, "My budget is 5000.", ["constraint.budget"])

    proposal = await write_as(app, proposer, bank, "My budget is 9000.", ["constraint.budget"])
    assert (proposal["status"], proposal["agent_id"], proposal["valid_from"]) == ("proposed", "intern", None)
    # Nothing changed: the standing unit is still the truth, no retrieval returns the proposal.
    unchanged = ok(await client.get(f"/v1/banks/{bank}/memories/{standing['id']}"))
    assert (unchanged["status"], unchanged["superseded_by"]) == ("active", None)
    found = await recall(client, bank, "What is my budget?", tags=["constraint.budget"])
    assert [m["id"] for m in found] == [standing["id"]]
    asked = await client.post(f"/v1/banks/{bank}/query", json={"query": "budget", "statuses": ["proposed"]})
    assert_problem(asked, 422)
    listed = await memories(client, bank, status="proposed")
    assert [(m["id"], m["agent_id"]) for m in listed] == [(proposal["id"], "intern")]

    # Only the review scope decides: the proposer and a writer are refused (403), nothing moves.
    accept = f"/v1/banks/{bank}/memories/{proposal['id']}/accept"
    for secret in (proposer, writer):
        async with make_client(app, secret) as c:
            assert "review" in assert_problem(await c.post(accept), 403)["detail"]
    async with make_client(app, reviewer) as c:
        accepted = ok(await c.post(accept))
        assert_problem(await c.post(accept), 409)  # once only
    assert (accepted["status"], accepted["supersedes"], accepted["agent_id"]) == (
        "active",
        standing["id"],
        "intern",
    )
    assert accepted["valid_from"] is not None  # as if written at the acceptance
    replaced = ok(await client.get(f"/v1/banks/{bank}/memories/{standing['id']}"))
    assert (replaced["status"], replaced["superseded_by"]) == ("superseded", proposal["id"])
    past = await history(client, bank, proposal["id"])
    assert [a["action"] for a in past["actions"]] == ["created", "accepted", "activated"]
    assert [a["agent_id"] for a in past["actions"][:2]] == ["intern", "lead"]
    assert action(past, "created")["details"]["to"] == "proposed"
    assert action(past, "accepted")["details"]["proposed_by"] == "intern"
    assert action(past, "activated")["details"]["replaced_agent"] == "alpha"
    [current] = await recall(client, bank, "What is my budget?", tags=["constraint.budget"])
    assert current["id"] == proposal["id"]


async def test_a_rejected_proposal_stays_out_with_its_history(app: Any, client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    proposer = await key(client, bank, ["propose"], "intern")
    reviewer = await key(client, bank, ["review"])
    proposal = await write_as(app, proposer, bank, "Ana's favourite colour is purple.", ["preference.color"])
    async with make_client(app, reviewer) as c:
        reject = f"/v1/banks/{bank}/memories/{proposal['id']}/reject"
        rejected = ok(await c.post(reject, json={"reason": "not what Ana said", "agent_id": "lead"}))
        assert_problem(await c.post(f"/v1/banks/{bank}/memories/{proposal['id']}/accept"), 409)
        assert_problem(await c.post(reject), 409)
    assert rejected["status"] == "rejected"
    past = await history(client, bank, proposal["id"])
    refused = action(past, "rejected")
    assert (refused["agent_id"], refused["details"]["reason"]) == ("lead", "not what Ana said")
    assert refused["details"]["proposed_by"] == "intern"
    assert await recall(client, bank, "What is Ana's favourite colour?") == []
    assert [m["id"] for m in await memories(client, bank, status="rejected")] == [proposal["id"]]


async def test_an_acceptance_keeps_the_reason_given_in_the_history(
    app: Any, client: httpx.AsyncClient
) -> None:
    bank = await make_bank(client)
    proposer = await key(client, bank, ["propose"], "intern")
    reviewer = await key(client, bank, ["review"])
    proposal = await write_as(app, proposer, bank, "Ana's favourite colour is teal.", ["preference.color"])
    async with make_client(app, reviewer) as c:
        accept = f"/v1/banks/{bank}/memories/{proposal['id']}/accept"
        ok(await c.post(accept, json={"reason": "Ana said so herself"}))
    accepted = action(await history(client, bank, proposal["id"]), "accepted")
    assert (accepted["details"]["proposed_by"], accepted["details"]["reason"]) == (
        "intern",
        "Ana said so herself",
    )


async def test_a_proposed_update_supersedes_its_unit_only_once_accepted(
    app: Any, client: httpx.AsyncClient
) -> None:
    bank = await make_bank(client)
    standing = await write_as(app, ADMIN_KEY, bank, "Ana lives in Lisbon.", ["fact"], agent_id="alpha")
    assert standing["agent_id"] == "alpha"
    proposer = await key(client, bank, ["read", "propose"], "intern")
    async with make_client(app, proposer) as c:
        response = await c.patch(
            f"/v1/banks/{bank}/memories/{standing['id']}", json={"content": "Ana lives in Porto."}
        )
        proposal = ok(response, 201)
        # A propose-only key proposes; it cannot forget or restore (the write scope).
        assert_problem(await c.delete(f"/v1/banks/{bank}/memories/{standing['id']}"), 403)
        assert_problem(await c.post(f"/v1/banks/{bank}/memories/{standing['id']}/restore"), 403)
        assert_problem(await c.patch(f"/v1/banks/{bank}", json={"name": "mine"}), 403)
    assert (proposal["status"], proposal["proposed_update_of"]) == ("proposed", standing["id"])
    assert ok(await client.get(f"/v1/banks/{bank}/memories/{standing['id']}"))["status"] == "active"
    accepted = ok(await client.post(f"/v1/banks/{bank}/memories/{proposal['id']}/accept"))  # the admin key
    assert (accepted["status"], accepted["supersedes"]) == ("active", standing["id"])
    superseded = action(await history(client, bank, standing["id"]), "updated")
    assert (superseded["details"]["kept_agent"], superseded["details"]["replaced_agent"]) == (
        "intern",
        "alpha",
    )


async def test_a_propose_only_agents_turns_distil_into_proposals(
    app: Any, client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    proposer = await key(client, bank, ["read", "propose"], "intern")
    async with make_client(app, proposer) as c:
        turns = [{"role": "user", "content": "My budget is 4000."}]
        ok(await c.post(f"/v1/banks/{bank}/sessions/s1/events", json={"events": turns}), 202)
        job = ok(await c.post(f"/v1/banks/{bank}/sessions/s1/distill"), 202)["job_id"]
        assert (await finished_job(c, job))["status"] == "succeeded"
        [event] = ok(await c.get(f"/v1/banks/{bank}/sessions/s1/events"))["events"]
    assert (event["agent_id"], event["proposed"]) == ("intern", True)
    await wait_for(lambda: settled(client, bank))
    [proposal] = await memories(client, bank, tag="constraint.budget")
    assert (proposal["status"], proposal["agent_id"]) == ("proposed", "intern")
    assert action(await history(client, bank, proposal["id"]), "created")["details"]["to"] == "proposed"
    assert await recall(client, bank, "What is my budget?") == []
    accepted = ok(await client.post(f"/v1/banks/{bank}/memories/{proposal['id']}/accept"))
    assert accepted["status"] == "active"
    assert [m["id"] for m in await recall(client, bank, "What is my budget?")] == [proposal["id"]]


async def test_the_writing_agent_comes_from_the_key_or_the_request(
    app: Any, client: httpx.AsyncClient
) -> None:
    bank = await make_bank(client)
    unlabelled = await key(client, bank, ["read", "write"])
    labelled = await key(client, bank, ["read", "write"], "alpha")
    by_body = await write_as(app, unlabelled, bank, "Ana drinks tea.", ["fact"], agent_id="bot-1")
    assert by_body["agent_id"] == "bot-1"
    async with make_client(app, unlabelled) as c:
        c.headers["X-Agent-Id"] = "bot-2"
        response = await c.post(f"/v1/banks/{bank}/memories", json={"content": "Ana runs.", "tags": ["fact"]})
        assert ok(response, 202)["memory"]["agent_id"] == "bot-2"
        c.headers["X-Agent-Id"] = "not a slug!"
        assert_problem(
            await c.post(f"/v1/banks/{bank}/memories", json={"content": "x", "tags": ["fact"]}), 422
        )
    async with make_client(app, labelled) as c:
        denied = await c.post(
            f"/v1/banks/{bank}/memories", json={"content": "Ana swims.", "tags": ["fact"], "agent_id": "beta"}
        )
        assert "alpha" in assert_problem(denied, 403)["detail"]
        same = await c.post(
            f"/v1/banks/{bank}/memories",
            json={"content": "Ana swims.", "tags": ["fact"], "agent_id": "alpha"},
        )
        assert ok(same, 202)["memory"]["agent_id"] == "alpha"
        turns = {"events": [{"role": "user", "content": "Hello there."}]}
        appended = ok(await c.post(f"/v1/banks/{bank}/sessions/s1/events", json=turns), 202)
        assert appended["appended"] == 1
        [event] = ok(await c.get(f"/v1/banks/{bank}/sessions/s1/events"))["events"]
        assert (event["agent_id"], event["proposed"]) == ("alpha", False)
        me = ok(await c.get("/v1/whoami"))
        assert (me["agent_id"], me["scopes"]) == ("alpha", ["read", "write"])
    forgotten = await client.delete(
        f"/v1/banks/{bank}/memories/{by_body['id']}", headers={"X-Agent-Id": "ops"}
    )
    assert ok(forgotten)["status"] == "deleted"
    assert action(await history(client, bank, by_body["id"]), "deleted")["agent_id"] == "ops"
    items = ok(await client.get(f"/v1/banks/{bank}/timeline", params={"kinds": "event,memory"}))["items"]
    assert {"event": "alpha"}.items() <= {
        i["kind"]: i["agent_id"] for i in items if i["kind"] == "event"
    }.items()
    deleted = next(i for i in items if i["kind"] == "memory" and i["action"] == "deleted")
    assert (deleted["agent_id"], deleted["unit_agent_id"]) == ("ops", "bot-1")


async def test_a_query_can_ask_for_some_agents_only(app: Any, client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    alpha = await key(client, bank, ["read", "write"], "alpha")
    beta = await key(client, bank, ["read", "write"], "beta")
    tea = await write_as(app, alpha, bank, "Ana likes green tea.", ["preference.drink"])
    coffee = await write_as(app, beta, bank, "Ana likes black coffee on Mondays.", ["preference.food"])
    question = "What does Ana like to drink?"
    everyone = {m["id"] for m in await recall(client, bank, question, min_score=0, min_similarity=0)}
    assert {tea["id"], coffee["id"]} <= everyone
    only_alpha = await recall(client, bank, question, agents=["alpha"], min_score=0, min_similarity=0)
    assert [m["id"] for m in only_alpha] == [tea["id"]]
    only_beta = await recall(client, bank, question, agents=["beta"], min_score=0, min_similarity=0)
    assert [m["id"] for m in only_beta] == [coffee["id"]]
    assert await recall(client, bank, question, agents=["nobody"], min_score=0, min_similarity=0) == []
    assert [m["id"] for m in await memories(client, bank, agent_id="beta")] == [coffee["id"]]


async def test_banks_stay_isolated(app: Any, client: httpx.AsyncClient) -> None:
    bank, other = await make_bank(client), await make_bank(client)
    proposer = await key(client, bank, ["propose"], "alpha")
    foreign_reviewer = await key(client, other, ["read", "review"], "alpha")
    proposal = await write_as(app, proposer, bank, "Ana lives in Oslo.", ["fact"])
    await write_as(app, ADMIN_KEY, other, "Ana lives in Rome.", ["fact"], agent_id="alpha")
    async with make_client(app, foreign_reviewer) as c:
        assert_problem(await c.post(f"/v1/banks/{bank}/memories/{proposal['id']}/accept"), 404)
        assert_problem(await c.post(f"/v1/banks/{bank}/memories/{proposal['id']}/reject"), 404)
        assert_problem(await c.get(f"/v1/banks/{bank}/memories", params={"status": "proposed"}), 404)
        # Its own bank: the other bank's unit id is no unit of this one.
        assert_problem(await c.post(f"/v1/banks/{other}/memories/{proposal['id']}/accept"), 404)
    answer = await mcp_call(
        app,
        foreign_reviewer,
        "memory_review",
        {"memory_id": proposal["id"], "decision": "accept", "bank_id": bank},
    )
    result = answer.json()["result"]
    assert result["isError"]
    assert "Not Found (404)" in result["content"][0]["text"]
    assert ok(await client.get(f"/v1/banks/{bank}/memories/{proposal['id']}"))["status"] == "proposed"
    # One agent name in two banks: a query of one bank filtered by it finds only that bank's units.
    assert (
        await recall(client, bank, "Where does Ana live?", agents=["alpha"], min_score=0, min_similarity=0)
        == []
    )


async def test_mcp_agents_propose_list_and_review(app: Any, client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    proposer = await key(client, bank, ["read", "propose"], "intern")
    reviewer = await key(client, bank, ["read", "review"], "lead")
    written = (
        await mcp_call(
            app, proposer, "memory_write", {"content": "Ana's dog is called Rex.", "tags": ["fact"]}
        )
    ).json()
    unit = written["result"]["structuredContent"]
    assert (unit["status"], unit["agent_id"]) == ("proposed", "intern")
    denied = (
        await mcp_call(app, proposer, "memory_review", {"memory_id": unit["id"], "decision": "accept"})
    ).json()
    assert denied["result"]["isError"]
    assert "Forbidden (403)" in denied["result"]["content"][0]["text"]
    listed = (await mcp_call(app, reviewer, "memory_proposals", {})).json()["result"]["structuredContent"]
    assert [(p["id"], p["agent_id"]) for p in listed["proposals"]] == [(unit["id"], "intern")]
    reviewed = (
        await mcp_call(app, reviewer, "memory_review", {"memory_id": unit["id"], "decision": "accept"})
    ).json()
    assert reviewed["result"]["structuredContent"]["status"] == "active"
    accepted = action(await history(client, bank, unit["id"]), "accepted")
    assert (accepted["agent_id"], accepted["actor"].startswith("mcp:key:")) == ("lead", True)
    # An unlabelled key's MCP writes take the agent of the X-Agent-Id header.
    unlabelled = await key(client, bank, ["read", "write"])
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "memory_write",
            "arguments": {"content": "Ana's cat is called Tom.", "tags": ["fact"]},
        },
    }
    async with make_client(app, unlabelled) as c:
        headers = {"accept": "application/json, text/event-stream", "X-Agent-Id": "helper"}
        answer = (await c.post("/mcp", json=message, headers=headers)).json()
    assert answer["result"]["structuredContent"]["agent_id"] == "helper"


@pytest.mark.parametrize("scopes", [["read"], ["read", "write"]])
async def test_a_key_without_the_review_scope_cannot_review(
    app: Any, client: httpx.AsyncClient, scopes: list[str]
) -> None:
    bank = await make_bank(client)
    proposal = await write_as(app, await key(client, bank, ["propose"]), bank, "Ana is 30.", ["fact"])
    async with make_client(app, await key(client, bank, scopes)) as c:
        assert_problem(await c.post(f"/v1/banks/{bank}/memories/{proposal['id']}/reject"), 403)


async def test_export_and_import_keep_agents_and_proposals(app: Any, client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    proposer = await key(client, bank, ["read", "propose"], "intern")
    standing = await write_as(app, ADMIN_KEY, bank, "Ana lives in Lisbon.", ["fact"], agent_id="alpha")
    async with make_client(app, proposer) as c:
        proposed = ok(
            await c.patch(
                f"/v1/banks/{bank}/memories/{standing['id']}", json={"content": "Ana lives in Faro."}
            ),
            201,
        )
        turns = {"events": [{"role": "user", "content": "I like jazz."}]}
        ok(await c.post(f"/v1/banks/{bank}/sessions/s1/events", json=turns), 202)
    exported = (await client.get(f"/v1/banks/{bank}/export")).text
    copy = f"{bank}-copy"
    ok(await client.post(f"/v1/banks/{copy}/import", content=exported, headers=NDJSON), 201)
    units = {m["content"]: m for m in await memories(client, copy)}
    assert units["Ana lives in Lisbon."]["agent_id"] == "alpha"
    twin = units["Ana lives in Faro."]
    assert (twin["status"], twin["agent_id"]) == ("proposed", "intern")
    assert twin["proposed_update_of"] == units["Ana lives in Lisbon."]["id"] != standing["id"]
    [event] = ok(await client.get(f"/v1/banks/{copy}/sessions/s1/events"))["events"]
    assert (event["agent_id"], event["proposed"]) == ("intern", True)
    created = action(await history(client, copy, twin["id"]), "created")
    assert created["agent_id"] == "intern"
    lines = [json.loads(line) for line in exported.splitlines()]
    assert any(line.get("agent_id") == "intern" and line["type"] == "history" for line in lines)
    accepted = ok(await client.post(f"/v1/banks/{copy}/memories/{twin['id']}/accept"))
    assert accepted["supersedes"] == units["Ana lives in Lisbon."]["id"]
    assert proposed["id"] != twin["id"]
