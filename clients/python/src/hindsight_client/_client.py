"""`Hindsight`, the synchronous client: each method runs one plan of `_operations` (the logic lives
there, shared with `AsyncHindsight`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar

import httpx

from hindsight_client._config import ClientConfig
from hindsight_client._models import (
    ApiKey,
    AppendResult,
    Bank,
    BankStats,
    ClosedSession,
    Entity,
    EntityDetail,
    Event,
    EventIn,
    Job,
    Memory,
    MemoryHistory,
    QueryResult,
    Session,
    TimelineItem,
    WrittenMemory,
)
from hindsight_client._operations import DEFAULT_PAGE_SIZE, BankImport, Operations, PathOrFile
from hindsight_client._plans import PageFn, Plan, Target, iterate_sync, run_sync
from hindsight_client._session import DEFAULT_BUFFER, MemorySession, SessionCore

T = TypeVar("T")


class _Resource:
    def __init__(self, client: Hindsight) -> None:
        self._client = client
        self._ops = client._ops

    def _run(self, plan: Plan[T]) -> T:
        return self._client._run(plan)

    def _iter(self, pages: PageFn[T]) -> Iterator[T]:
        return self._client._iter(pages)


class Banks(_Resource):
    def create(self, bank_id: str, name: str | None = None, config: Mapping[str, Any] | None = None) -> Bank:
        return self._run(self._ops.create_bank(bank_id, name, config))

    def get(self, bank_id: str) -> Bank:
        return self._run(self._ops.get_bank(bank_id))

    def list(self, *, page_size: int = DEFAULT_PAGE_SIZE) -> Iterator[Bank]:
        return self._iter(self._ops.bank_pages(page_size))

    def update(
        self, bank_id: str, *, name: str | None = None, config: Mapping[str, Any] | None = None
    ) -> Bank:
        return self._run(self._ops.update_bank(bank_id, name, config))

    def delete(self, bank_id: str) -> None:
        self._run(self._ops.delete_bank(bank_id))

    def stats(self, bank_id: str) -> BankStats:
        return self._run(self._ops.bank_stats(bank_id))

    def export(self, bank_id: str, path_or_file: PathOrFile) -> None:
        """Stream the bank's NDJSON export into a file (a path, or a binary file object)."""
        self._run(self._ops.export_bank(bank_id, path_or_file))

    def import_(self, bank_id: str, path_or_file: PathOrFile) -> BankImport:
        """Create `bank_id` from an NDJSON export (a path, or a binary file object)."""
        return self._run(self._ops.import_bank(bank_id, path_or_file))


class Keys(_Resource):
    def create(
        self, bank_id: str, scopes: Sequence[str] = ("read", "write"), name: str | None = None
    ) -> ApiKey:
        return self._run(self._ops.create_key(bank_id, scopes, name))

    def revoke(self, bank_id: str, key_id: str) -> None:
        self._run(self._ops.revoke_key(bank_id, key_id))


class Events(_Resource):
    def append(
        self, bank_id: str, session_id: str, events: Iterable[EventIn | Mapping[str, Any]]
    ) -> AppendResult:
        """Append turns (dicts or `EventIn`); each without an `external_id` gets one, so the retry of
        a request whose reply was lost stores nothing twice."""
        return self._run(self._ops.append(bank_id, session_id, events))

    def list(
        self,
        bank_id: str,
        session_id: str,
        after_seq: int | None = None,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[Event]:
        return self._iter(self._ops.event_pages(bank_id, session_id, after_seq, page_size))


class Sessions(_Resource):
    def get(self, bank_id: str, session_id: str) -> Session:
        return self._run(self._ops.get_session(bank_id, session_id))

    def list(self, bank_id: str, *, page_size: int = DEFAULT_PAGE_SIZE) -> Iterator[Session]:
        return self._iter(self._ops.session_pages(bank_id, page_size))

    def close(self, bank_id: str, session_id: str) -> ClosedSession:
        """Close the session and distil what is left (`job_id`, None when nothing is)."""
        return self._run(self._ops.close_session(bank_id, session_id))

    def distill(self, bank_id: str, session_id: str) -> Job:
        """Distil the session's undistilled tail now (the job, queued or already running)."""
        return self._run(self._ops.distill_session(bank_id, session_id))


class Jobs(_Resource):
    def get(self, job_id: str) -> Job:
        return self._run(self._ops.get_job(job_id))

    def wait(self, job_id: str, timeout: float = 120.0) -> Job:
        """The job once finished (succeeded or failed); `JobTimeoutError` after `timeout` seconds."""
        return self._run(self._ops.wait_job(job_id, timeout))


class Memories(_Resource):
    def write(
        self, bank_id: str, content: str, tags: Sequence[str], wait: bool = False, **fields: Any
    ) -> WrittenMemory:
        """Write a unit (`confidence`, `importance`, `entities`, `occurred_at`, `session_id`,
        `metadata` as keywords): pending with its resolution `job_id`, or resolved with `wait=True`."""
        return self._run(self._ops.write_memory(bank_id, content, tags, wait, fields))

    def list(
        self,
        bank_id: str,
        *,
        status: str | Iterable[str] | None = None,
        tag: str | None = None,
        entity: str | None = None,
        session_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        as_of: datetime | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[Memory]:
        filters: dict[str, Any] = {"status": status, "tag": tag, "entity": entity, "session_id": session_id}
        filters |= {"since": since, "until": until, "as_of": as_of}
        return self._iter(self._ops.memory_pages(bank_id, filters, page_size))

    def get(self, bank_id: str, memory_id: str) -> Memory:
        """The unit, with its source turns' text (`source.events`)."""
        return self._run(self._ops.get_memory(bank_id, memory_id))

    def history(self, bank_id: str, memory_id: str) -> MemoryHistory:
        return self._run(self._ops.memory_history(bank_id, memory_id))

    def update(
        self,
        bank_id: str,
        memory_id: str,
        *,
        content: str | None = None,
        tags: Sequence[str] | None = None,
        confidence: float | None = None,
        importance: float | None = None,
    ) -> Memory:
        """A new unit with the changes, superseding this one."""
        changes = {"content": content, "tags": tags, "confidence": confidence, "importance": importance}
        return self._run(self._ops.update_memory(bank_id, memory_id, changes))

    def forget(self, bank_id: str, memory_id: str) -> Memory:
        return self._run(self._ops.forget_memory(bank_id, memory_id))

    def restore(self, bank_id: str, memory_id: str) -> Memory:
        return self._run(self._ops.restore_memory(bank_id, memory_id))

    def purge(self, bank_id: str, memory_id: str) -> Memory:
        """Erase content and vectors for good (admin key); the history keeps a tombstone."""
        return self._run(self._ops.forget_memory(bank_id, memory_id, purge=True))


class Entities(_Resource):
    def list(
        self,
        bank_id: str,
        *,
        q: str | None = None,
        type: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[Entity]:
        return self._iter(self._ops.entity_pages(bank_id, q, type, page_size))

    def get(
        self,
        bank_id: str,
        entity_id: str,
        *,
        statuses: str | Iterable[str] | None = None,
        limit: int | None = None,
    ) -> EntityDetail:
        return self._run(self._ops.get_entity(bank_id, entity_id, statuses, limit))


class Hindsight:
    """The Hindsight API, synchronously. `base_url` / `api_key` default to $HINDSIGHT_URL /
    $HINDSIGHT_API_KEY; 429, 503 and connection failures are retried up to `max_retries` times.
    Use it as a context manager (or call `close()`) to release its connection pool."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        *,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._config = ClientConfig.resolve(base_url, api_key, timeout, max_retries)
        self._target = Target(self._config.base_url, self._config.headers)
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout)
        self._ops = Operations(max_retries)
        self.banks = Banks(self)
        self.keys = Keys(self)
        self.events = Events(self)
        self.sessions = Sessions(self)
        self.jobs = Jobs(self)
        self.memories = Memories(self)
        self.entities = Entities(self)

    @property
    def base_url(self) -> str:
        return self._config.base_url

    def _run(self, plan: Plan[T]) -> T:
        return run_sync(self._http, self._target, plan)

    def _iter(self, pages: PageFn[T]) -> Iterator[T]:
        return iterate_sync(self._http, self._target, pages)

    def query(self, bank_id: str, query: str, **options: Any) -> QueryResult:
        """Recall: `top_k`, `tags`, `entities`, `session_id`, `time_range`, `as_of`, `statuses`,
        `fusion`, `weights`, `min_score`, `max_tokens`, `working_memory`, `explain`, `now`,
        `timezone` as keywords (see the API's `POST /v1/banks/{bank_id}/query`)."""
        return self._run(self._ops.query(bank_id, query, options))

    def timeline(
        self,
        bank_id: str,
        *,
        from_: datetime | str | None = None,
        to: datetime | str | None = None,
        kinds: str | Iterable[str] | None = None,
        session_id: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[TimelineItem]:
        """Every write and read of the bank in time order (the memory replay)."""
        return self._iter(self._ops.timeline_pages(bank_id, from_, to, kinds, session_id, page_size))

    def redistill(self, bank_id: str, session_ids: Sequence[str] | None = None, dry_run: bool = True) -> Job:
        """Replay distillation over the raw events; the job's result is the diff."""
        return self._run(self._ops.redistill(bank_id, session_ids, dry_run))

    def memory_session(
        self, bank_id: str, session_id: str, *, buffer_size: int = DEFAULT_BUFFER, **recall_options: Any
    ) -> MemorySession:
        """The agent loop: `recall(text)`, `record(role, content)`, `reflect()`; see `MemorySession`."""
        return MemorySession(self, SessionCore(self._ops, bank_id, session_id, buffer_size, recall_options))

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Hindsight:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
