"""Request and response examples of every operation, shown in /docs and /openapi.json: the seeds' scenario
(app/seeds.py), Ana shopping for a laptop with a budget of 5000 that she raises to 8000, as the service
answered it (`examples.json`, recorded from a run of the scenario, lists cut to two items; keys are
"METHOD /path", responses by status). `add_examples` puts them into the spec."""

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
    """Each operation's JSON request body and JSON success responses get their example (in place)."""
    examples = _examples()
    for path, item in spec.get("paths", {}).items():
        for method, operation in item.items():
            key = f"{method.upper()} {path}"
            body = (operation.get("requestBody") or {}).get("content", {}).get("application/json")
            if body is not None and key in examples["requests"]:
                body["example"] = examples["requests"][key]
            for status, example in examples["responses"].get(key, {}).items():
                content = operation.get("responses", {}).get(status, {}).get("content", {})
                if "application/json" in content:
                    content["application/json"]["example"] = example
    return spec
