"""The service's public HTTP API as the evaluation uses it: retries, clear errors, pagination."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Iterable, Mapping
from typing import Any, TypeVar

import httpx

from app.eval.locomo.errors import EvalError

PAGE_LIMIT = 500
RETRY_STATUSES = frozenset({429, 502, 503, 504})  # 429: the per-key rate limit; Retry-After honoured

T = TypeVar("T")


def _problem_detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:500]
    if isinstance(body, dict):
        return str(body.get("detail") or body.get("title") or body)[:500]
    return str(body)[:500]


def raise_for_status(response: httpx.Response, method: str, path: str) -> None:
    status = response.status_code
    if status < 400:
        return
    where = f"{method} {path} answered {status}"
    detail = _problem_detail(response)
    if status == 401:
        raise EvalError(f"{where}: the API key was refused (check --api-key). {detail}")
    if status == 403:
        raise EvalError(f"{where}: the key may not do this (creating banks needs the admin key). {detail}")
    if status == 404:
        raise EvalError(f"{where}: {detail} (check --url; does this server have the endpoint?)")
    raise EvalError(f"{where}: {detail}")


def _dropped(exc: httpx.TransportError) -> bool:
    """The connection broke before an answer came (e.g. a keep-alive connection the server closed)."""
    return isinstance(exc, httpx.ReadError | httpx.WriteError | httpx.RemoteProtocolError)


class Api:
    """The service's public HTTP API: retries a 429/502/503/504 (after its Retry-After, at most 10 s) or
    a refused connection with a short backoff, and turns any other error into an EvalError that says
    what went wrong."""

    def __init__(self, client: httpx.AsyncClient, *, attempts: int = 6, backoff: float = 0.25) -> None:
        self.client = client
        self.attempts = attempts
        self.backoff = backoff

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after and retry_after.isdigit():
            return min(float(retry_after), 10.0)
        return float(min(self.backoff * 2**attempt, 5.0))

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        *,
        idempotent: bool | None = None,
    ) -> tuple[Any, float]:
        """The decoded reply and the client-measured seconds of the request that answered. A
        connection dropped mid-request is retried only when sending twice is harmless (`idempotent`;
        by default GET and DELETE)."""
        resend = method in ("GET", "DELETE") if idempotent is None else idempotent
        for attempt in range(self.attempts):
            last = attempt == self.attempts - 1
            started = time.perf_counter()
            try:
                response = await self.client.request(method, path, json=body, params=params)
            except httpx.TransportError as exc:
                if last or not (isinstance(exc, httpx.ConnectError) or (resend and _dropped(exc))):
                    raise EvalError(
                        f"{method} {path}: no answer from {self.client.base_url}: {exc!r}"
                    ) from exc
                await asyncio.sleep(self._delay(attempt, None))
                continue
            seconds = time.perf_counter() - started
            if response.status_code in RETRY_STATUSES and not last:
                await asyncio.sleep(self._delay(attempt, response.headers.get("retry-after")))
                continue
            raise_for_status(response, method, path)
            return (response.json() if response.content else None), seconds
        raise AssertionError("unreachable")

    async def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return (await self.request("GET", path, params=params))[0]

    async def post(self, path: str, body: Any = None, *, idempotent: bool = False) -> Any:
        return (await self.request("POST", path, body, idempotent=idempotent))[0]

    async def delete(self, path: str) -> None:
        await self.request("DELETE", path)

    async def pages(self, path: str, key: str, params: Mapping[str, Any] | None = None) -> list[Any]:
        """Every item of a cursor-paginated list."""
        items: list[Any] = []
        cursor = None
        while True:
            query = {**(params or {}), "limit": PAGE_LIMIT, **({"cursor": cursor} if cursor else {})}
            page = await self.get(path, query)
            items.extend(page[key])
            cursor = page.get("next_cursor")
            if not cursor:
                return items


def make_client(url: str, api_key: str, concurrency: int) -> httpx.AsyncClient:
    base = url.rstrip("/")
    base = base.removesuffix("/v1")
    return httpx.AsyncClient(
        base_url=base,
        headers={"Authorization": f"Bearer {api_key}"},
        timeout=httpx.Timeout(120.0, connect=10.0),
        limits=httpx.Limits(max_connections=concurrency + 4),
    )


async def run_all(coroutines: Iterable[Coroutine[Any, Any, T]]) -> list[T]:
    """Run together; the first failure cancels the rest and is raised as itself."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(c) for c in coroutines]
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]
