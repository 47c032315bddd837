"""Shared memory in the console (a real browser): the "Proposed" list with each proposal's agent,
Accept and Reject that ask first, the unit's agent and the reviewer in its history; a key without the
review scope sees the proposals but no buttons."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.async_api import expect

from tests.browser.conftest import Console, fresh_bank


async def _key(api: httpx.AsyncClient, bank: str, scopes: list[str], agent: str | None = None) -> str:
    response = await api.post(f"/v1/banks/{bank}/keys", json={"scopes": scopes, "agent_id": agent})
    assert response.status_code == 201, response.text
    key: str = response.json()["key"]
    return key


async def _propose(service: str, key: str, bank: str, content: str) -> dict[str, Any]:
    async with httpx.AsyncClient(
        base_url=service, headers={"Authorization": f"Bearer {key}"}, timeout=60
    ) as agent:
        response = await agent.post(
            f"/v1/banks/{bank}/memories", params={"wait": "true"}, json={"content": content, "tags": ["fact"]}
        )
    assert response.status_code == 201, response.text
    unit: dict[str, Any] = response.json()["memory"]
    assert unit["status"] == "proposed"
    return unit


async def test_a_reviewer_accepts_and_rejects_proposals(
    console: Console, api: httpx.AsyncClient, service: str
) -> None:
    bank = await fresh_bank(api)
    proposer = await _key(api, bank, ["propose"], "intern")
    kept = await _propose(service, proposer, bank, "Ana's sister is called Mia.")
    dropped = await _propose(service, proposer, bank, "Ana's sister is called Lea.")
    reviewer = await _key(api, bank, ["read", "review"], "lead")
    await console.sign_in(reviewer, f"/ui/banks/{bank}/proposals")
    await expect(console.page.get_by_test_id("principal")).to_contain_text("agent lead")
    rows = console.page.get_by_test_id("proposal-row")
    await expect(rows).to_have_count(2)
    await expect(rows.get_by_test_id("proposal-agent").first).to_have_text("intern")
    await console.shot("proposals")

    row = rows.filter(has_text="Mia")
    await row.get_by_test_id("proposal-accept").click()
    await console.page.get_by_role("button", name="Cancel").click()  # asks first
    assert (await api.get(f"/v1/banks/{bank}/memories/{kept['id']}")).json()["status"] == "proposed"
    await row.get_by_test_id("proposal-accept").click()
    await console.confirm()
    await expect(rows).to_have_count(1)
    assert (await api.get(f"/v1/banks/{bank}/memories/{kept['id']}")).json()["status"] == "active"
    await rows.filter(has_text="Lea").get_by_test_id("proposal-reject").click()
    await console.confirm()
    await expect(rows).to_have_count(0)
    assert (await api.get(f"/v1/banks/{bank}/memories/{dropped['id']}")).json()["status"] == "rejected"

    # The unit shows its agent, and its history who accepted it.
    await console.open(f"/ui/banks/{bank}/memories/{kept['id']}")
    await expect(console.page.get_by_test_id("memory-agent")).to_have_text("intern")
    accepted = console.page.get_by_test_id("history-action").filter(has_text="accepted")
    await expect(accepted.get_by_test_id("history-agent")).to_have_text("lead")
    await console.shot("memory-accepted")


async def test_a_key_without_review_sees_proposals_but_cannot_decide(
    console: Console, api: httpx.AsyncClient, service: str
) -> None:
    bank = await fresh_bank(api)
    proposal = await _propose(
        service, await _key(api, bank, ["propose"], "intern"), bank, "Ana owns a red bike."
    )
    await console.sign_in(await _key(api, bank, ["read"]), f"/ui/banks/{bank}/proposals")
    await expect(console.page.get_by_test_id("proposal-row")).to_have_count(1)
    await expect(console.page.get_by_test_id("proposal-accept")).to_have_count(0)
    await expect(console.page.get_by_text("This key cannot review.")).to_be_visible()
    await console.open(f"/ui/banks/{bank}/memories/{proposal['id']}")
    await expect(console.page.get_by_test_id("memory-content")).to_have_text("Ana owns a red bike.")
    await expect(console.page.get_by_test_id("proposal-accept")).to_have_count(0)
