"""The web console in a real browser: Debian's Chromium driven by Playwright (the browser is the
system's, never downloaded), against the real app served on a loopback port and a real Celery worker.
Screenshots of each view go to tests/browser/artifacts/ (or $HINDSIGHT_TEST_ARTIFACTS), not committed."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, ConsoleMessage, Page, async_playwright

from tests.conftest import ADMIN_KEY, Stack, wait_for

ARTIFACTS = Path(os.environ.get("HINDSIGHT_TEST_ARTIFACTS", Path(__file__).parent / "artifacts"))
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SEED_LINES = ["My budget is 5000.", "I prefer laptops with a 14 inch screen.", "My budget is 8000 now."]
SEED_QUERY = "what is my budget?"


def chromium() -> str:
    """The system Chromium (`make test` installs Debian's package); Playwright's own builds cannot be
    downloaded here."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError("Chromium is not installed: `apt-get install chromium` (make test does it).")
    return found


@pytest.fixture(scope="session")
def service(stack: Stack, worker: Any) -> Iterator[str]:
    """The real app on a loopback port (uvicorn in a thread, lifespan included), a worker running."""
    from app.config import get_settings
    from app.main import create_app
    from tests.fake_openai import serve

    with serve(create_app(get_settings())) as url:
        yield url.removesuffix("/v1")


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=chromium())
        yield launched
        await launched.close()


class Console:
    """One browser page on the console, with what went wrong in it (script errors, CSP refusals)."""

    def __init__(self, page: Page, base: str) -> None:
        self.page = page
        self.base = base
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(f"pageerror: {error}"))
        page.on("console", self._console)

    def _console(self, message: ConsoleMessage) -> None:
        # A failed request (the 403 and 404 the tests provoke) is logged by the browser; a script
        # error or a refused resource is not one of those.
        if message.type == "error" and "Failed to load resource" not in message.text:
            self.errors.append(f"console: {message.text}")

    async def open(self, path: str) -> None:
        await self.page.goto(self.base + path)

    async def sign_in(self, key: str, path: str = "/ui") -> None:
        await self.open(path)
        await self.page.get_by_test_id("login-key").fill(key)
        await self.page.get_by_test_id("login-submit").click()
        await self.page.get_by_test_id("principal").wait_for(state="attached")  # hidden on a phone

    async def confirm(self) -> None:
        """Say yes in the confirmation dialog that is open."""
        await self.page.locator("dialog[open]").get_by_test_id("confirm").click()

    async def shot(self, name: str) -> Path:
        # Playwright makes the directory.
        target = ARTIFACTS / f"{name}.png"
        await self.page.screenshot(path=str(target), full_page=True)
        return target


@pytest.fixture
async def console(browser: Browser, service: str) -> AsyncIterator[Console]:
    context = await browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = Console(await context.new_page(), service)
    yield page
    await context.close()
    assert not page.errors, page.errors


@pytest.fixture
async def api(service: str) -> AsyncIterator[httpx.AsyncClient]:
    """The API over the same loopback port, with the admin key."""
    async with httpx.AsyncClient(
        base_url=service, headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=60
    ) as client:
        yield client


async def say(api: httpx.AsyncClient, bank: str, text: str, session: str = "chat-1") -> None:
    """Append one user turn and distil it, waiting until nothing of the bank is pending."""
    response = await api.post(
        f"/v1/banks/{bank}/sessions/{session}/events",
        json={"events": [{"role": "user", "content": text, "speaker": "Ana"}]},
    )
    assert response.status_code == 202, response.text
    job_id = (await api.post(f"/v1/banks/{bank}/sessions/{session}/distill")).json()["job_id"]

    async def finished() -> bool:
        job = (await api.get(f"/v1/jobs/{job_id}")).json()
        assert job["status"] != "failed", job
        return bool(job["status"] == "succeeded")

    async def settled() -> bool:
        page = (await api.get(f"/v1/banks/{bank}/memories", params={"status": "pending"})).json()
        return not page["memories"]

    await wait_for(finished, within=60)
    await wait_for(settled, within=60)


@dataclass(frozen=True)
class Seeded:
    """The seed scenario's bank: a budget of 5000 superseded by 8000, a preference, one query."""

    bank: str
    old: dict[str, Any]  # the 5000 unit
    new: dict[str, Any]  # the 8000 unit
    query: dict[str, Any]  # the answer to SEED_QUERY


@pytest.fixture(scope="session")
async def seeded(service: str) -> Seeded:
    async with httpx.AsyncClient(
        base_url=service, headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=60
    ) as api:
        bank = f"console-{uuid.uuid4().hex[:10]}"
        response = await api.post(
            "/v1/banks",
            json={"bank_id": bank, "config": {"distill_every_n_turns": 1000, "timezone": "Asia/Shanghai"}},
        )
        assert response.status_code == 201, response.text
        for line in SEED_LINES:
            await say(api, bank, line)
        params = {"tag": "constraint.budget", "status": "active,superseded"}
        budgets = (await api.get(f"/v1/banks/{bank}/memories", params=params)).json()["memories"]
        old = next(m for m in budgets if "5000" in m["content"])
        new = next(m for m in budgets if "8000" in m["content"])
        assert (old["status"], new["status"], old["superseded_by"]) == ("superseded", "active", new["id"])
        answer = await api.post(f"/v1/banks/{bank}/query", json={"query": SEED_QUERY})
        assert answer.status_code == 200, answer.text
        query = answer.json()

        async def logged() -> bool:  # queries are logged off the request path, about once a second
            page = await api.get(f"/v1/banks/{bank}/timeline", params={"kinds": "query"})
            return bool(page.json()["items"])

        await wait_for(logged, within=30)
        return Seeded(bank=bank, old=old, new=new, query=query)


async def fresh_bank(api: httpx.AsyncClient) -> str:
    """A new empty bank (for the tests that change what they look at)."""
    bank = f"console-{uuid.uuid4().hex[:10]}"
    response = await api.post("/v1/banks", json={"bank_id": bank, "config": {"distill_every_n_turns": 1000}})
    assert response.status_code == 201, response.text
    return bank


async def bank_key(api: httpx.AsyncClient, bank: str, scopes: list[str]) -> tuple[str, str]:
    """A new key of `bank` with `scopes`: (its id, the key)."""
    response = await api.post(f"/v1/banks/{bank}/keys", json={"scopes": scopes})
    assert response.status_code == 201, response.text
    body = response.json()
    return body["id"], body["key"]
