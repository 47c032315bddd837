"""The client's retry and polling decisions, driven by hand (pure logic: the plans yield what they want
sent or slept, the test answers): what is sent again, after how long."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hindsight_memory import APIConnectionError, JobTimeoutError, RateLimitError, ServiceUnavailableError
from hindsight_memory._operations import Operations
from hindsight_memory._plans import BACKOFF_MAX, RETRY_AFTER_MAX, Plan, Request, Sleep, send

READ = Request("GET", "/v1/banks", idempotent=True)
WRITE = Request("POST", "/v1/banks/b/memories")


def response(status: int, headers: dict[str, str] | None = None, body: Any = None) -> httpx.Response:
    problem = (
        body if body is not None else {"type": "about:blank", "title": "T", "status": status, "detail": "d"}
    )
    return httpx.Response(status, json=problem, headers=headers, request=httpx.Request("GET", "http://h/"))


def steps(plan: Plan[Any], *outcomes: Any) -> list[Any]:
    """Start the plan and answer each request with the next outcome (sleeps with None); the steps it
    yielded, then its result (or the exception it raised)."""
    seen: list[Any] = [next(plan)]
    answers = list(outcomes)
    try:
        while True:
            answer = None if isinstance(seen[-1], Sleep) else answers.pop(0)
            seen.append(plan.send(answer))
    except StopIteration as stop:
        seen.append(stop.value)
    except Exception as exc:
        seen.append(exc)
    return seen


def test_a_429_is_retried_after_its_retry_after_for_any_call() -> None:
    ok = response(200, body={})
    seen = steps(send(WRITE, 2), response(429, {"Retry-After": "7"}), ok)
    assert seen == [WRITE, Sleep(7.0), WRITE, ok]
    capped = steps(send(READ, 2), response(429, {"Retry-After": "3600"}), ok)
    assert capped[1] == Sleep(RETRY_AFTER_MAX)


def test_retries_stop_at_max_retries() -> None:
    seen = steps(send(READ, 1), response(429, {"Retry-After": "1"}), response(429, {"Retry-After": "1"}))
    assert seen[:3] == [READ, Sleep(1.0), READ]
    assert isinstance(seen[3], RateLimitError)
    assert seen[3].retry_after == 1.0


def test_a_503_is_retried_only_when_sending_again_is_safe() -> None:
    ok = response(200, body={})
    seen = steps(send(READ, 2), response(503), ok)
    assert seen[0] == READ
    assert isinstance(seen[1], Sleep)
    assert 0 < seen[1].seconds <= BACKOFF_MAX
    assert seen[2:] == [READ, ok]
    [_, error] = steps(send(WRITE, 2), response(503, {"Retry-After": "1"}))
    assert isinstance(error, ServiceUnavailableError)


def test_a_lost_reply_is_sent_again_only_when_safe_a_refused_connection_always() -> None:
    lost = httpx.RemoteProtocolError("Server disconnected without sending a response.")
    [_, error] = steps(send(WRITE, 2), lost)
    assert isinstance(error, APIConnectionError)
    assert isinstance(error.__cause__, httpx.RemoteProtocolError)
    ok = response(200, body={})
    assert steps(send(READ, 2), lost, ok)[-1] is ok
    assert steps(send(WRITE, 2), httpx.ConnectError("refused"), ok)[-1] is ok


def test_backoff_grows_and_is_bounded() -> None:
    refused = httpx.ConnectError("refused")
    seen = steps(send(READ, 8), *[refused] * 9)
    sleeps = [s.seconds for s in seen if isinstance(s, Sleep)]
    assert len(sleeps) == 8
    assert all(0 < s <= BACKOFF_MAX for s in sleeps)
    assert sleeps[-1] > sleeps[0]
    assert isinstance(seen[-1], APIConnectionError)


def job(status: str) -> httpx.Response:
    body = {"id": "j", "kind": "distill.session", "status": status, "created_at": "2026-01-01T00:00:00Z"}
    return response(200, body=body)


def test_wait_polls_with_a_bounded_pause_until_the_job_finished() -> None:
    seen = steps(Operations(0).wait_job("j", timeout=3600), *[job("running")] * 8, job("failed"))
    pauses = [s.seconds for s in seen if isinstance(s, Sleep)]
    assert pauses == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0]
    assert seen[-1].status == "failed"  # a failed job is finished: returned, not raised


def test_wait_raises_after_its_timeout() -> None:
    seen = steps(Operations(0).wait_job("j", timeout=0), job("queued"))
    assert isinstance(seen[-1], JobTimeoutError)
    assert seen[-1].job.status == "queued"


@pytest.mark.parametrize("body", ["<html>Bad gateway</html>", None])
def test_an_error_without_a_problem_body(body: str | None) -> None:
    raw = httpx.Response(503, text=body or "", request=httpx.Request("GET", "http://h/"))
    [_, error] = steps(send(WRITE, 0), raw)
    assert isinstance(error, ServiceUnavailableError)
    assert error.status == 503
    assert error.title == "Service Unavailable"
    assert error.detail == (body or "")
