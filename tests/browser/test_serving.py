"""How the API process serves the console: the shell for every deep link, the assets from the package,
the security headers on /ui only, GET /v1/whoami, and no CORS by default."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import assert_problem, make_client

DEEP_LINKS = [
    "/ui",
    "/ui/",
    "/ui/banks",
    "/ui/banks/b1",
    "/ui/banks/b1/memories",
    "/ui/banks/b1/memories/6f1c1d59-5d43-4a55-9d0b-0f1f4fd7a001",
    "/ui/banks/b1/sessions/chat-1",
    "/ui/banks/b1/timeline",
    "/ui/banks/b1/recall",
    "/ui/login",
]


@pytest.mark.parametrize("path", DEEP_LINKS)
async def test_every_deep_link_gets_the_shell_without_a_key(app: Any, path: str) -> None:
    async with make_client(app, None) as anonymous:
        response = await anonymous.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/ui/static/js/app.js"></script>' in response.text
    assert "<script>" not in response.text  # no inline script: the CSP forbids it
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert "unsafe-eval" not in csp
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"


async def test_assets_come_from_the_package_with_the_headers(app: Any) -> None:
    async with make_client(app, None) as anonymous:
        script = await anonymous.get("/ui/static/js/app.js")
        vendored = await anonymous.get("/ui/static/vendor/htm-preact.js")
        style = await anonymous.get("/ui/static/css/console.css")
        missing = await anonymous.get("/ui/static/js/nothing.js")
        escape = await anonymous.get("/ui/static/../../api/ui.py")
    assert script.status_code == 200
    assert "javascript" in script.headers["content-type"]
    assert script.headers["x-frame-options"] == "DENY"
    assert vendored.status_code == 200
    assert "export{" in vendored.text
    assert style.status_code == 200
    assert style.headers["content-type"].startswith("text/css")
    assert missing.status_code == 404
    assert "PrincipalDep" not in escape.text


async def test_the_api_keeps_its_own_headers_and_no_cors(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/banks", headers={"Origin": "https://evil.example"})
    assert response.status_code == 200
    assert "x-frame-options" not in response.headers
    assert "access-control-allow-origin" not in response.headers


async def test_whoami_says_which_key_this_is(client: httpx.AsyncClient, app: Any, bank_id: str) -> None:
    admin = (await client.get("/v1/whoami")).json()
    assert admin == {
        "admin": True,
        "bank_id": None,
        "scopes": ["propose", "read", "review", "write"],
        "agent_id": None,
    }
    created = await client.post(f"/v1/banks/{bank_id}/keys", json={"scopes": ["read"]})
    async with make_client(app, created.json()["key"]) as reader:
        me = await reader.get("/v1/whoami")
    assert me.json() == {"admin": False, "bank_id": bank_id, "scopes": ["read"], "agent_id": None}
    assert created.json()["key"] not in me.text
    async with make_client(app, None) as anonymous:
        assert_problem(await anonymous.get("/v1/whoami"), 401)
    async with make_client(app, "hs_wrong") as wrong:
        assert_problem(await wrong.get("/v1/whoami"), 401)
