"""The resources of both clients (`hs.banks`, `hs.memories`, …) and the client-level methods, written
once: each method names the plan of `_operations` it runs; `_surface` makes it sync or async."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Generic, TypeVar

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
from hindsight_client._operations import DEFAULT_PAGE_SIZE, BankImport, PathOrFile
from hindsight_client._plans import PageFn, Plan, Target
from hindsight_client._surface import Driver, Mode, Resource, listing, operation

Http = TypeVar("Http")


class Banks(Resource[Mode]):
    @operation
    def create(
        self, bank_id: str, name: str | None = None, config: Mapping[str, Any] | None = None
    ) -> Plan[Bank]:
        return self._ops.create_bank(bank_id, name, config)

    @operation
    def get(self, bank_id: str) -> Plan[Bank]:
        return self._ops.get_bank(bank_id)

    @listing
    def list(self, *, page_size: int = DEFAULT_PAGE_SIZE) -> PageFn[Bank]:
        return self._ops.bank_pages(page_size)

    @operation
    def update(
        self, bank_id: str, *, name: str | None = None, config: Mapping[str, Any] | None = None
    ) -> Plan[Bank]:
        return self._ops.update_bank(bank_id, name, config)

    @operation
    def delete(self, bank_id: str) -> Plan[None]:
        return self._ops.delete_bank(bank_id)

    @operation
    def stats(self, bank_id: str) -> Plan[BankStats]:
        return self._ops.bank_stats(bank_id)

    @operation
    def export(self, bank_id: str, path_or_file: PathOrFile) -> Plan[None]:
        """Stream the bank's NDJSON export into a file (a path, or a binary file object)."""
        return self._ops.export_bank(bank_id, path_or_file)

    @operation
    def import_(self, bank_id: str, path_or_file: PathOrFile) -> Plan[BankImport]:
        """Create `bank_id` from an NDJSON export (a path, or a binary file object)."""
        return self._ops.import_bank(bank_id, path_or_file)


class Keys(Resource[Mode]):
    @operation
    def create(
        self, bank_id: str, scopes: Sequence[str] = ("read", "write"), name: str | None = None
    ) -> Plan[ApiKey]:
        return self._ops.create_key(bank_id, scopes, name)

    @operation
    def revoke(self, bank_id: str, key_id: str) -> Plan[None]:
        return self._ops.revoke_key(bank_id, key_id)


class Events(Resource[Mode]):
    @operation
    def append(
        self, bank_id: str, session_id: str, events: Iterable[EventIn | Mapping[str, Any]]
    ) -> Plan[AppendResult]:
        """Append turns (dicts or `EventIn`); each without an `external_id` gets one, so the retry of
        a request whose reply was lost stores nothing twice."""
        return self._ops.append(bank_id, session_id, events)

    @listing
    def list(
        self,
        bank_id: str,
        session_id: str,
        after_seq: int | None = None,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> PageFn[Event]:
        return self._ops.event_pages(bank_id, session_id, after_seq, page_size)


class Sessions(Resource[Mode]):
    @operation
    def get(self, bank_id: str, session_id: str) -> Plan[Session]:
        return self._ops.get_session(bank_id, session_id)

    @listing
    def list(self, bank_id: str, *, page_size: int = DEFAULT_PAGE_SIZE) -> PageFn[Session]:
        return self._ops.session_pages(bank_id, page_size)

    @operation
    def close(self, bank_id: str, session_id: str) -> Plan[ClosedSession]:
        """Close the session and distil what is left (`job_id`, None when nothing is)."""
        return self._ops.close_session(bank_id, session_id)

    @operation
    def distill(self, bank_id: str, session_id: str) -> Plan[Job]:
        """Distil the session's undistilled tail now (the job, queued or already running)."""
        return self._ops.distill_session(bank_id, session_id)


class Jobs(Resource[Mode]):
    @operation
    def get(self, job_id: str) -> Plan[Job]:
        return self._ops.get_job(job_id)

    @operation
    def wait(self, job_id: str, timeout: float = 120.0) -> Plan[Job]:
        """The job once finished (succeeded or failed); `JobTimeoutError` after `timeout` seconds."""
        return self._ops.wait_job(job_id, timeout)


class Memories(Resource[Mode]):
    @operation
    def write(
        self, /, bank_id: str, content: str, tags: Sequence[str], wait: bool = False, **fields: Any
    ) -> Plan[WrittenMemory]:
        """Write a unit (`confidence`, `importance`, `entities`, `occurred_at`, `session_id`,
        `metadata` as keywords): pending with its resolution `job_id`, or resolved with `wait=True`."""
        return self._ops.write_memory(bank_id, content, tags, wait, fields)

    @listing
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
    ) -> PageFn[Memory]:
        filters: dict[str, Any] = {"status": status, "tag": tag, "entity": entity, "session_id": session_id}
        filters |= {"since": since, "until": until, "as_of": as_of}
        return self._ops.memory_pages(bank_id, filters, page_size)

    @operation
    def get(self, bank_id: str, memory_id: str) -> Plan[Memory]:
        """The unit, with its source turns' text (`source.events`)."""
        return self._ops.get_memory(bank_id, memory_id)

    @operation
    def history(self, bank_id: str, memory_id: str) -> Plan[MemoryHistory]:
        return self._ops.memory_history(bank_id, memory_id)

    @operation
    def update(
        self,
        bank_id: str,
        memory_id: str,
        *,
        content: str | None = None,
        tags: Sequence[str] | None = None,
        confidence: float | None = None,
        importance: float | None = None,
    ) -> Plan[Memory]:
        """A new unit with the changes, superseding this one."""
        changes = {"content": content, "tags": tags, "confidence": confidence, "importance": importance}
        return self._ops.update_memory(bank_id, memory_id, changes)

    @operation
    def forget(self, bank_id: str, memory_id: str) -> Plan[Memory]:
        return self._ops.forget_memory(bank_id, memory_id)

    @operation
    def restore(self, bank_id: str, memory_id: str) -> Plan[Memory]:
        return self._ops.restore_memory(bank_id, memory_id)

    @operation
    def purge(self, bank_id: str, memory_id: str) -> Plan[Memory]:
        """Erase content and vectors for good (admin key); the history keeps a tombstone."""
        return self._ops.forget_memory(bank_id, memory_id, purge=True)


class Entities(Resource[Mode]):
    @listing
    def list(
        self,
        bank_id: str,
        *,
        q: str | None = None,
        type: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> PageFn[Entity]:
        return self._ops.entity_pages(bank_id, q, type, page_size)

    @operation
    def get(
        self,
        bank_id: str,
        entity_id: str,
        *,
        statuses: str | Iterable[str] | None = None,
        limit: int | None = None,
    ) -> Plan[EntityDetail]:
        return self._ops.get_entity(bank_id, entity_id, statuses, limit)


class ClientMethods(Resource[Mode], Generic[Mode, Http]):
    """What `Hindsight` and `AsyncHindsight` share: the constructor, the resources and the client-level
    calls. `base_url` / `api_key` default to $HINDSIGHT_URL / $HINDSIGHT_API_KEY; 429, 503 and
    connection failures are retried up to `max_retries` times."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        *,
        http_client: Http | None = None,
    ) -> None:
        config = ClientConfig.resolve(base_url, api_key, timeout, max_retries)
        self._owns_http = http_client is None
        self._http = http_client or self._open(timeout)
        driver = self._driver_for(self._http, Target(config.base_url, config.headers), max_retries)
        super().__init__(driver)
        self._config = config
        self.banks: Banks[Mode] = Banks(driver)
        self.keys: Keys[Mode] = Keys(driver)
        self.events: Events[Mode] = Events(driver)
        self.sessions: Sessions[Mode] = Sessions(driver)
        self.jobs: Jobs[Mode] = Jobs(driver)
        self.memories: Memories[Mode] = Memories(driver)
        self.entities: Entities[Mode] = Entities(driver)

    def _open(self, timeout: float) -> Http:
        raise NotImplementedError

    def _driver_for(self, http: Http, target: Target, max_retries: int) -> Driver[Mode]:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return self._config.base_url

    @operation
    def query(self, /, bank_id: str, query: str, **options: Any) -> Plan[QueryResult]:
        """Recall: `top_k`, `tags`, `entities`, `session_id`, `time_range`, `as_of`, `statuses`,
        `fusion`, `weights`, `min_score`, `max_tokens`, `working_memory`, `explain`, `now`,
        `timezone` as keywords (see the API's `POST /v1/banks/{bank_id}/query`)."""
        return self._ops.query(bank_id, query, options)

    @listing
    def timeline(
        self,
        bank_id: str,
        *,
        from_: datetime | str | None = None,
        to: datetime | str | None = None,
        kinds: str | Iterable[str] | None = None,
        session_id: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> PageFn[TimelineItem]:
        """Every write and read of the bank in time order (the memory replay)."""
        return self._ops.timeline_pages(bank_id, from_, to, kinds, session_id, page_size)

    @operation
    def redistill(
        self, bank_id: str, session_ids: Sequence[str] | None = None, dry_run: bool = True
    ) -> Plan[Job]:
        """Replay distillation over the raw events; the job's result is the diff."""
        return self._ops.redistill(bank_id, session_ids, dry_run)
