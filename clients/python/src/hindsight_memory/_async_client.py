"""`AsyncHindsight`, the asynchronous twin of `Hindsight`: the same methods (`_resources`, written once
for both clients), awaited on an `httpx.AsyncClient`."""

from __future__ import annotations

from typing import Any, TypeVar

import httpx

from hindsight_memory._plans import Plan, Target
from hindsight_memory._resources import ClientMethods
from hindsight_memory._session import DEFAULT_BUFFER, AsyncMemorySession, SessionCore
from hindsight_memory._surface import Async, AsyncClosing, AsyncDriver

T = TypeVar("T")


class AsyncHindsight(ClientMethods[Async, httpx.AsyncClient], AsyncClosing):
    """The Hindsight API, asynchronously. `base_url` / `api_key` default to $HINDSIGHT_URL /
    $HINDSIGHT_API_KEY; 429, 503 and connection failures are retried up to `max_retries` times.
    Use it as an async context manager (or await `close()`) to release its connection pool."""

    _driver: AsyncDriver

    def _open(self, timeout: float) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=timeout)

    def _driver_for(self, http: httpx.AsyncClient, target: Target, max_retries: int) -> AsyncDriver:
        return AsyncDriver(http, target, max_retries)

    async def _run(self, plan: Plan[T]) -> T:
        return await self._driver.run(plan)

    def memory_session(
        self, bank_id: str, session_id: str, *, buffer_size: int = DEFAULT_BUFFER, **recall_options: Any
    ) -> AsyncMemorySession:
        """The agent loop, awaited: `recall(text)`, `record(role, content)`, `reflect()`."""
        core = SessionCore(self._ops, bank_id, session_id, buffer_size, recall_options)
        return AsyncMemorySession(self._driver, core)

    async def close(self) -> None:
        if self._owns_http:
            await self._http.aclose()
