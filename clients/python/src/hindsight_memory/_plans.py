"""The one implementation of every call, for the sync and the async client alike ("sans-I/O").

An operation is a *plan*: a generator that yields what it needs done — a `Request` to send, a `Sleep`
— and receives the outcome (an `httpx.Response`, or the `httpx.TransportError` the send raised). It
holds all the logic: retries and backoff, errors, parsing, polling. A driver runs a plan on its I/O:
`run_sync` with an `httpx.Client` and `time.sleep`, `run_async` with an `httpx.AsyncClient` and
`asyncio.sleep`; they are the only code that differs between `Hindsight` and `AsyncHindsight`."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Generic, TypeVar

import httpx
from pydantic import BaseModel

from hindsight_memory._errors import error_from_response, retry_after, transport_error

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

# Nothing reached the server: any call may be sent again.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
BACKOFF_BASE, BACKOFF_MAX, RETRY_AFTER_MAX = 0.5, 8.0, 60.0


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    params: Mapping[str, Any] | None = None
    json: Any = None
    content: bytes | None = None
    headers: Mapping[str, str] | None = None
    # May be sent again after its reply was lost (a 503, a broken connection): reads, and writes that
    # the server dedupes (appends with external ids, a session's distillation, a close).
    idempotent: bool = False
    download: IO[bytes] | None = field(default=None, compare=False)  # stream a 2xx body into this file


@dataclass(frozen=True)
class Sleep:
    seconds: float


Step = Request | Sleep
Plan = Generator[Step, Any, T]


def backoff(attempt: int, response: httpx.Response | None) -> float:
    """The wait before retry `attempt` (0-based): the server's `Retry-After` when it gave one,
    else exponential with jitter."""
    asked = retry_after(response) if response is not None else None
    if asked is not None:
        return min(asked, RETRY_AFTER_MAX)
    return min(BACKOFF_MAX, BACKOFF_BASE * 2.0**attempt) * random.uniform(0.5, 1.0)


def send(request: Request, max_retries: int) -> Plan[httpx.Response]:
    """Send `request`: a 2xx response, or the exception for what came back. A 429 is retried (the
    server did nothing), a 503 or a lost reply only for an idempotent request, a connection that
    never opened always; at most `max_retries` times, after `backoff`."""
    attempt = 0
    while True:
        outcome = yield request
        if isinstance(outcome, httpx.Response):
            if outcome.status_code < 400:
                return outcome
            retry = outcome.status_code == 429 or (outcome.status_code == 503 and request.idempotent)
            if not retry or attempt >= max_retries:
                raise error_from_response(outcome)
            response: httpx.Response | None = outcome
        else:
            assert isinstance(outcome, httpx.TransportError)
            retry = request.idempotent or isinstance(outcome, NOT_SENT)
            if not retry or attempt >= max_retries:
                raise transport_error(outcome)
            response = None
        yield Sleep(backoff(attempt, response))
        attempt += 1


def call(request: Request, max_retries: int, model: type[M]) -> Plan[M]:
    response = yield from send(request, max_retries)
    return model.model_validate(response.json())


def call_none(request: Request, max_retries: int) -> Plan[None]:
    yield from send(request, max_retries)


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None


PageFn = Callable[[str | None], Plan[Page[T]]]


def page(request: Request, max_retries: int, key: str, model: type[M]) -> Plan[Page[M]]:
    """One page of a cursor-paginated list: the models under `key` and the `next_cursor`."""
    response = yield from send(request, max_retries)
    body = response.json()
    return Page([model.model_validate(item) for item in body[key]], body.get("next_cursor"))


def with_cursor(params: Mapping[str, Any], cursor: str | None) -> dict[str, Any]:
    out = {k: v for k, v in params.items() if v is not None}
    if cursor is not None:
        out["cursor"] = cursor
    return out


# --- drivers -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where requests go and what they carry: the base URL and the headers (the key)."""

    base_url: str
    headers: Mapping[str, str]


def _build(http: httpx.Client | httpx.AsyncClient, target: Target, request: Request) -> httpx.Request:
    return http.build_request(
        request.method,
        target.base_url + request.path,
        params=request.params,
        json=request.json,
        content=request.content,
        headers={**target.headers, **(request.headers or {})},
    )


Outcome = httpx.Response | httpx.TransportError | None  # what a plan receives back for a step


def _step_sync(http: httpx.Client, target: Target, step: Step) -> Outcome:
    """Do one step: sleep (None), or send the request and read its body (into `download` for a 2xx)."""
    if isinstance(step, Sleep):
        time.sleep(step.seconds)
        return None
    try:
        response = http.send(_build(http, target, step), stream=True)
        try:
            if step.download is not None and response.is_success:
                for chunk in response.iter_bytes():
                    step.download.write(chunk)
            else:
                response.read()
        finally:
            response.close()
        return response
    except httpx.TransportError as exc:
        return exc


async def _step_async(http: httpx.AsyncClient, target: Target, step: Step) -> Outcome:
    """`_step_sync` on the async I/O."""
    if isinstance(step, Sleep):
        await asyncio.sleep(step.seconds)
        return None
    try:
        response = await http.send(_build(http, target, step), stream=True)
        try:
            if step.download is not None and response.is_success:
                async for chunk in response.aiter_bytes():
                    step.download.write(chunk)
            else:
                await response.aread()
        finally:
            await response.aclose()
        return response
    except httpx.TransportError as exc:
        return exc


def run_sync(http: httpx.Client, target: Target, plan: Plan[T]) -> T:
    outcome: Outcome = None
    try:
        while True:
            outcome = _step_sync(http, target, plan.send(outcome))
    except StopIteration as stop:
        result: T = stop.value
        return result


async def run_async(http: httpx.AsyncClient, target: Target, plan: Plan[T]) -> T:
    outcome: Outcome = None
    try:
        while True:
            outcome = await _step_async(http, target, plan.send(outcome))
    except StopIteration as stop:
        result: T = stop.value
        return result


def iterate_sync(http: httpx.Client, target: Target, pages: PageFn[T]) -> Iterator[T]:
    """Every item of a list, page after page, following `next_cursor`."""
    cursor: str | None = None
    while True:
        current = run_sync(http, target, pages(cursor))
        yield from current.items
        if current.next_cursor is None or not current.items:
            return
        cursor = current.next_cursor


async def iterate_async(http: httpx.AsyncClient, target: Target, pages: PageFn[T]) -> AsyncIterator[T]:
    cursor: str | None = None
    while True:
        current = await run_async(http, target, pages(cursor))
        for item in current.items:
            yield item
        if current.next_cursor is None or not current.items:
            return
        cursor = current.next_cursor
