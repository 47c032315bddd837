"""What a new user meets first: the README's quickstart, run verbatim against a live server; docs that
render offline, with examples and descriptions; and errors that say what to send."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ADMIN_KEY, ROOT, Stack, assert_problem

QUICKSTART_BANKS = ("support-bot", "support-bot-py", "agent-demo")


def quickstart_blocks() -> list[tuple[str, str]]:
    """The fenced code blocks of the README's Quickstart section: (language, code)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("\n## Quickstart\n") :]
    section = section[: section.index("\n## ", 1)]
    return re.findall(r"```(\w+)\n(.*?)```", section, re.S)


@pytest.fixture(scope="module")
def live_url(stack: Stack) -> Iterator[str]:
    """The app over real HTTP on a loopback port (its own uvicorn thread and lifespan)."""
    from app.config import get_settings
    from app.main import create_app
    from tests.fake_openai import serve

    with serve(create_app(get_settings())) as url:
        yield url.removesuffix("/v1")


def run_block(language: str, code: str, url: str, cwd: Path) -> str:
    env = {
        **os.environ,
        "HINDSIGHT_URL": url,
        "HINDSIGHT_API_KEY": ADMIN_KEY,
        # the client of this tree (its jobs.wait waits for `searchable`)
        "PYTHONPATH": str(ROOT / "clients" / "python" / "src"),
    }
    command = ["bash", "-e", "-c", code] if language == "bash" else [sys.executable, "-c", code]
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, (language, done.stdout, done.stderr)
    return done.stdout


def test_the_readme_quickstart_works_verbatim(
    client: httpx.AsyncClient, live_url: str, worker: Any, tmp_path: Path
) -> None:
    blocks = quickstart_blocks()
    assert [language for language, _ in blocks] == ["bash", "python", "python"]
    headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
    for bank in QUICKSTART_BANKS:  # a rerun of the suite on the same database starts afresh
        httpx.delete(f"{live_url}/v1/banks/{bank}", headers=headers, timeout=30)
    outputs = [run_block(language, code, live_url, tmp_path) for language, code in blocks]
    curl, python, agent = outputs
    assert "## constraint.budget" in curl
    assert "go up to 8000" in curl.splitlines()[-1], curl
    assert '"distill_job_id":"' in curl
    assert '"searchable":true' in curl
    assert "5000" not in curl.split("## constraint.budget")[1]  # the superseded value stays out
    assert "go up to 8000" in python
    assert "5000" not in python
    assert "8000" in agent
    assert "5000" not in agent
    # …and what the README says after the block holds too.
    for bank in QUICKSTART_BANKS[:1]:
        superseded = httpx.get(
            f"{live_url}/v1/banks/{bank}/memories", params={"status": "superseded"}, headers=headers
        ).json()["memories"]
        assert any("5000" in m["content"] for m in superseded)
        mars = httpx.post(
            f"{live_url}/v1/banks/{bank}/query",
            json={"query": "What is the weather on Mars?"},
            headers=headers,
        ).json()
        assert (mars["memories"], mars["context"]) == ([], "")


async def test_swagger_ui_and_redoc_load_their_assets_from_the_service(client: httpx.AsyncClient) -> None:
    for page in ("/docs", "/redoc"):
        response = await client.get(page)
        assert response.status_code == 200, response.text
        sources = re.findall(r'(?:src|href)="([^"]+)"', response.text)
        assets = [s for s in sources if s.endswith((".js", ".css"))]
        assert assets, response.text
        for asset in assets:
            assert asset.startswith("/"), f"{page} loads {asset} from elsewhere"
            loaded = await client.get(asset)
            assert loaded.status_code == 200, asset
            assert len(loaded.content) > 10_000, asset


async def test_a_body_not_sent_as_json_is_415_saying_what_to_send(
    client: httpx.AsyncClient, bank_id: str
) -> None:
    url = f"/v1/banks/{bank_id}/sessions/s/events"
    body = '{"events": [{"role": "user", "content": "hi"}]}'
    for headers in (
        {},
        {"content-type": "text/plain"},
        {"content-type": "application/x-www-form-urlencoded"},
    ):
        response = await client.post(url, content=body, headers=headers)
        problem = assert_problem(response, 415)
        assert "application/json" in problem["detail"]
    sent = await client.post(url, content=body, headers={"content-type": "application/json; charset=utf-8"})
    assert sent.status_code == 202, sent.text
    # A POST that takes no body still needs no header.
    assert (await client.post(f"/v1/banks/{bank_id}/sessions/s/close")).status_code == 200


async def test_every_operation_has_examples_and_every_schema_field_a_description(
    client: httpx.AsyncClient,
) -> None:
    spec = (await client.get("/openapi.json")).json()
    undescribed = [
        f"{name}.{field}"
        for name, schema in spec["components"]["schemas"].items()
        for field, prop in (schema.get("properties") or {}).items()
        if not prop.get("description")
    ]
    assert not undescribed, undescribed
    missing: list[str] = []
    operations = 0
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            operations += 1
            body = (op.get("requestBody") or {}).get("content", {})
            if body and not all("example" in media or "examples" in media for media in body.values()):
                missing.append(f"{method.upper()} {path}: request")
            for status, response in op["responses"].items():
                content = response.get("content") or {}
                if status.startswith("2") and content and not all("example" in m for m in content.values()):
                    missing.append(f"{method.upper()} {path}: {status}")
    assert operations >= 30
    assert not missing, missing
    # The examples tell the seeds' story.
    query = spec["paths"]["/v1/banks/{bank_id}/query"]["post"]
    answer = query["responses"]["200"]["content"]["application/json"]["example"]
    assert "8000" in answer["context"]
