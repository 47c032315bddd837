"""What a new user meets first: docs that render offline, and errors that say what to send."""

from __future__ import annotations

import re

import httpx

from tests.conftest import assert_problem


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
