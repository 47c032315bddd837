"""`Hindsight`, the synchronous client: its methods are those of `_resources` (written once for both
clients), run on an `httpx.Client`."""

from __future__ import annotations

from typing import Any, TypeVar

import httpx

from hindsight_memory._plans import Plan, Target
from hindsight_memory._resources import ClientMethods
from hindsight_memory._session import DEFAULT_BUFFER, MemorySession, SessionCore
from hindsight_memory._surface import Closing, Sync, SyncDriver

T = TypeVar("T")


class Hindsight(ClientMethods[Sync, httpx.Client], Closing):
    """The Hindsight API, synchronously. `base_url` / `api_key` default to $HINDSIGHT_URL /
    $HINDSIGHT_API_KEY; 429, 503 and connection failures are retried up to `max_retries` times.
    Use it as a context manager (or call `close()`) to release its connection pool."""

    _driver: SyncDriver

    def _open(self, timeout: float) -> httpx.Client:
        return httpx.Client(timeout=timeout)

    def _driver_for(self, http: httpx.Client, target: Target, max_retries: int) -> SyncDriver:
        return SyncDriver(http, target, max_retries)

    def _run(self, plan: Plan[T]) -> T:
        return self._driver.run(plan)

    def memory_session(
        self, bank_id: str, session_id: str, *, buffer_size: int = DEFAULT_BUFFER, **recall_options: Any
    ) -> MemorySession:
        """The agent loop: `recall(text)`, `record(role, content)`, `reflect()`; see `MemorySession`."""
        return MemorySession(
            self._driver, SessionCore(self._ops, bank_id, session_id, buffer_size, recall_options)
        )

    def close(self) -> None:
        if self._owns_http:
            self._http.close()
