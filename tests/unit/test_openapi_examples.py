"""The OpenAPI examples (app/schemas/examples.json) are valid: each names an operation of the spec, and each
request and JSON response example validates against that operation's own schema, so /docs never shows a
body the API would refuse or could not send. The contract's newer fields are in them."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from app.config import Settings
from app.schemas.examples import _examples


@cache
def _spec() -> dict[str, Any]:
    from app.main import create_app

    spec: dict[str, Any] = create_app(Settings(env="test")).openapi()
    return spec


def _operation(key: str) -> dict[str, Any]:
    method, path = key.split(" ", 1)
    operation: dict[str, Any] = _spec()["paths"][path][method.lower()]
    return operation


def _check(schema: dict[str, Any], example: Any) -> list[str]:
    """What is wrong with `example` under `schema` (its $refs read from the spec's components)."""
    validator = Draft202012Validator({**schema, "components": _spec()["components"]})
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(body)'}: {e.message}"
        for e in validator.iter_errors(example)
    ]


def test_every_example_names_an_operation_of_the_spec() -> None:
    examples = _examples()
    keys = list(examples["requests"]) + list(examples["responses"])
    operations = {f"{m.upper()} {p}" for p, item in _spec()["paths"].items() for m in item}
    assert sorted(set(keys) - operations) == []


@pytest.mark.parametrize("key", sorted(_examples()["requests"]))
def test_each_request_example_validates_against_its_body_schema(key: str) -> None:
    media = _operation(key)["requestBody"]["content"]["application/json"]
    assert media["example"] == _examples()["requests"][key]  # what add_examples put into the spec
    assert _check(media["schema"], media["example"]) == []


@pytest.mark.parametrize(
    ("key", "status"), sorted((k, s) for k, by_status in _examples()["responses"].items() for s in by_status)
)
def test_each_json_response_example_validates_against_its_response_schema(key: str, status: str) -> None:
    content = _operation(key)["responses"][status]["content"]
    media = content.get("application/json")
    if media is None:  # an export's NDJSON lines: no JSON schema to hold them to
        assert len(content) == 1
        return
    assert media["example"] == _examples()["responses"][key][status]
    assert _check(media["schema"], media["example"]) == []


def test_the_examples_show_rerank_why_and_shared_memory() -> None:
    requests, responses = _examples()["requests"], _examples()["responses"]
    query = requests["POST /v1/banks/{bank_id}/query"]
    assert {"rerank", "context_why", "agents"} <= set(query)
    answer = responses["POST /v1/banks/{bank_id}/query"]["200"]
    [unit] = answer["memories"]
    assert unit["agent_id"] in query["agents"]
    assert unit["why"]
    assert f"why: {unit['why']}" in answer["context"]  # context_why: true
    assert answer["rerank"] == "applied"
    key = requests["POST /v1/banks/{bank_id}/keys"]
    assert {"propose", "review"} <= set(key["scopes"])
    created = responses["POST /v1/banks/{bank_id}/keys"]["201"]
    assert created["agent_id"] == key["agent_id"]
    assert created["scopes"] == key["scopes"]
