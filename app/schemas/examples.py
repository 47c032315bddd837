"""Request and response examples of every operation, shown in /docs and /openapi.json: the seeds' scenario
(app/seeds.py), Ana shopping for a laptop with a budget of 5000 that she raises to 8000, as the service
answered it (`examples.json`, recorded from a run of the scenario, lists cut to two items; the fields the
scenario leaves empty — an agent, a reranked answer, `context_why` — filled in by hand; keys are
"METHOD /path", responses by status). `add_examples` puts them into the spec;
tests/unit/test_openapi_examples.py checks each against its operation's schema."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).with_name("examples.json")


@cache
def _examples() -> dict[str, dict[str, Any]]:
    loaded: dict[str, dict[str, Any]] = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    return loaded


def add_examples(spec: dict[str, Any]) -> dict[str, Any]:
    """Each operation's JSON request body and success responses get their example (in place)."""
    examples = _examples()
    for path, item in spec.get("paths", {}).items():
        for method, operation in item.items():
            key = f"{method.upper()} {path}"
            body = (operation.get("requestBody") or {}).get("content", {}).get("application/json")
            if body is not None and key in examples["requests"]:
                body["example"] = examples["requests"][key]
            for status, example in examples["responses"].get(key, {}).items():
                content = operation.get("responses", {}).get(status, {}).get("content", {})
                media = content.get("application/json") or (next(iter(content.values())) if content else None)
                if media is not None:  # JSON, or the one other type (an export's NDJSON lines)
                    media["example"] = example
    return spec
