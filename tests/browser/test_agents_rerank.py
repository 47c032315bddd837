"""The console shows who wrote what and what the rerank stage did: the timeline names the agent of a
unit written with an agent's key, and the recall tester shows each unit's rerank score when the stage
runs (a second app whose HINDSIGHT_RERANK_URL is the local fake reranker, tests/fake_rerank.py)."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, expect

from tests.browser.conftest import DESKTOP, Console, bank_key, fresh_bank
from tests.conftest import ADMIN_KEY, Stack

FRUITS = [
    "The user's favourite fruit for breakfast is mango.",
    "The user's favourite fruit in summer is watermelon.",
    "The user's favourite fruit for baking is apple.",
]


async def write(api: httpx.AsyncClient, bank: str, content: str, **headers: str) -> dict[str, Any]:
    body = {"content": content, "tags": ["preference"]}
    response = await api.post(
        f"/v1/banks/{bank}/memories", params={"wait": "true"}, json=body, headers=headers
    )
    assert response.status_code == 201, response.text
    unit: dict[str, Any] = response.json()["memory"]
    return unit


async def test_the_timeline_names_the_agent_that_wrote_a_unit(
    console: Console, api: httpx.AsyncClient, service: str
) -> None:
    bank = await fresh_bank(api)
    response = await api.post(
        f"/v1/banks/{bank}/keys", json={"scopes": ["read", "write"], "agent_id": "planner"}
    )
    assert response.status_code == 201, response.text
    headers = {"Authorization": f"Bearer {response.json()['key']}"}
    async with httpx.AsyncClient(base_url=service, headers=headers, timeout=60) as planner:
        unit = await write(planner, bank, "The user's favourite colour is teal.")
    assert unit["agent_id"] == "planner"
    await console.sign_in(ADMIN_KEY, f"/ui/banks/{bank}/timeline")
    created = console.page.get_by_test_id("timeline-item").filter(has_text=unit["content"])
    await expect(created.first).to_be_visible()
    await expect(created.get_by_test_id("timeline-agent").first).to_have_text("planner")
    # A unit written without an agent names none.
    await write(api, bank, "The user's favourite season is autumn.")
    other = console.page.get_by_test_id("timeline-item").filter(has_text="autumn")
    await console.page.reload()
    await expect(other.first).to_be_visible()
    await expect(other.get_by_test_id("timeline-agent")).to_have_count(0)


@pytest.fixture(scope="module")
def reranking_service(stack: Stack, worker: Any) -> Iterator[str]:
    """A second app on the same database, its rerank stage pointed at the fake reranker."""
    from app.config import get_settings
    from app.main import create_app
    from tests.fake_openai import serve
    from tests.fake_rerank import create_fake_rerank, serve_rerank

    with serve_rerank(create_fake_rerank()) as rerank_url:
        settings = get_settings().model_copy(update={"rerank_url": rerank_url, "rerank_kind": "tei"})
        with serve(create_app(settings)) as url:
            yield url.removesuffix("/v1")


@pytest.fixture
async def reranking_console(browser: Browser, reranking_service: str) -> AsyncIterator[Console]:
    context = await browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = Console(await context.new_page(), reranking_service)
    yield page
    await context.close()
    assert not page.errors, page.errors


async def test_the_recall_tester_shows_the_rerank_score_when_the_stage_runs(
    reranking_console: Console, reranking_service: str
) -> None:
    console = reranking_console
    async with httpx.AsyncClient(
        base_url=reranking_service, headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=60
    ) as api:
        bank = f"console-{uuid.uuid4().hex[:10]}"
        # A roomy budget: the machine running the tests may be loaded (the budget has its own tests).
        config = {"distill_every_n_turns": 1000, "rerank": {"budget_ms": 10_000}}
        created = await api.post("/v1/banks", json={"bank_id": bank, "config": config})
        assert created.status_code == 201, created.text
        for line in FRUITS:
            await write(api, bank, line)
        _, key = await bank_key(api, bank, ["read"])
    await console.sign_in(key, f"/ui/banks/{bank}/recall")
    await console.page.get_by_test_id("recall-input").fill("favourite fruit")
    await console.page.get_by_test_id("recall-submit").click()
    await expect(console.page.get_by_test_id("rerank-status")).to_have_text("applied")
    results = console.page.get_by_test_id("recall-result")
    await expect(results).to_have_count(len(FRUITS))
    await expect(results.get_by_test_id("rerank-score")).to_have_count(len(FRUITS))
    await expect(results.first.get_by_test_id("rerank-score")).to_have_text(re.compile(r"^rerank \d"))
    await console.shot("recall-reranked")
    # Turned off for the query: the fused order, no rerank score.
    await console.page.get_by_label("Rerank").select_option("off")
    await console.page.get_by_test_id("recall-submit").click()
    await expect(console.page.get_by_test_id("rerank-status")).to_have_text("skipped (disabled)")
    await expect(results.get_by_test_id("rerank-score")).to_have_count(0)
