"""Schemathesis over every operation of /openapi.json, authenticated with the admin key, against the
app served over real HTTP (its own uvicorn thread on the test stack): no response is a server error,
and every status code, content type and body is one the schema declares. A bounded, deterministic
run; `python -m bench.fuzz` is the long one."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
import uvicorn

from bench.fuzz import fuzz, summary
from tests.conftest import ADMIN_KEY, Stack
from tests.serving import serve_in_thread

EXAMPLES = 4  # per operation and generation mode (positive, negative)


@pytest.fixture(scope="module")
def live_url(stack: Stack, worker: Any) -> Iterator[str]:
    """The app in a uvicorn thread of its own (its own event loop, engine and lifespan). The worker
    runs the jobs the fuzzer queues, so none is left queued to be handed, deduplicated, to a later
    test that asks for the same maintenance task."""
    from app.config import get_settings
    from app.main import create_app

    # The fuzzer is one client sending as fast as it can; the rate limit has its own tests.
    settings = get_settings().model_copy(update={"rate_limit_per_second": 0.0})
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(settings), log_level="warning", lifespan="on", timeout_graceful_shutdown=5
    )
    try:
        with serve_in_thread(config, sock=sock, start_within=60, stop_within=30):
            yield f"http://127.0.0.1:{port}"
    finally:
        sock.close()


def test_every_operation_conforms_to_the_schema(live_url: str) -> None:
    schema = schemathesis.openapi.from_url(f"{live_url}/openapi.json")
    operations = [r.ok().label for r in schema.get_all_operations()]
    assert len(operations) >= 30, operations  # the whole /v1 API, not a stray route

    reports = fuzz(schema, live_url, ADMIN_KEY, examples=EXAMPLES)

    report = summary(reports)
    assert [r.label for r in reports] == operations
    failures = [(r.label, f) for r in reports for f in r.failures]
    assert not failures, report + "\n\n" + "\n\n".join(f"{label}: {f}" for label, f in failures[:10])
    # Path parameters aimed at real resources: every operation got past the 404 at least once.
    for r in reports:
        assert any(200 <= s < 300 for s in r.statuses), f"{r.label} never succeeded:\n{report}"
    # Negative cases reached the validation of every operation that has something to invalidate.
    assert sum(r.statuses[422] for r in reports) >= len(reports), report
    # Sanity: the server is still healthy after the run.
    assert httpx.get(f"{live_url}/healthz").status_code == 200
