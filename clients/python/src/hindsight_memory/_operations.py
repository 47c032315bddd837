"""Every operation of the API as a plan (see `_plans`): the paths, parameters, bodies, idempotency and
response models, written once for both clients. The signatures and docstrings are the public ones:
`_resources` names these plans as the methods of `Hindsight` and `AsyncHindsight` (see `_surface`)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel

from hindsight_memory._bodies import comma, event_body, jsonable, seg
from hindsight_memory._errors import JobTimeoutError
from hindsight_memory._graph_models import Entity, EntityDetail, TimelineItem, TimelinePage
from hindsight_memory._models import (
    ApiKey,
    AppendResult,
    Bank,
    BankImport,
    BankStats,
    ClosedSession,
    Event,
    EventIn,
    Job,
    Memory,
    MemoryHistory,
    QueryResult,
    Session,
    Usage,
    WrittenMemory,
)
from hindsight_memory._plans import (
    Page,
    PageFn,
    Plan,
    Request,
    Sleep,
    call,
    call_none,
    page,
    send,
    with_cursor,
)

M = TypeVar("M", bound=BaseModel)
PathOrFile = str | Path | IO[bytes]
DEFAULT_PAGE_SIZE = 100
POLL_FIRST, POLL_MAX = 0.1, 2.0


class Operations:
    def __init__(self, max_retries: int) -> None:
        self.retries = max_retries

    def _call(self, request: Request, model: type[M]) -> Plan[M]:
        return call(request, self.retries, model)

    def _pages(self, path: str, params: Mapping[str, Any], key: str, model: type[M]) -> PageFn[M]:
        def pages(cursor: str | None) -> Plan[Page[M]]:
            request = Request("GET", path, params=with_cursor(params, cursor), idempotent=True)
            return page(request, self.retries, key, model)

        return pages

    # --- banks and keys ----------------------------------------------------------------------------------

    def create_bank(
        self, bank_id: str, name: str | None = None, config: Mapping[str, Any] | None = None
    ) -> Plan[Bank]:
        body = jsonable({"bank_id": bank_id, "name": name, "config": config})
        return self._call(Request("POST", "/v1/banks", json=body), Bank)

    def get_bank(self, bank_id: str) -> Plan[Bank]:
        return self._call(Request("GET", f"/v1/banks/{seg(bank_id)}", idempotent=True), Bank)

    def bank_pages(self, *, page_size: int = DEFAULT_PAGE_SIZE) -> PageFn[Bank]:
        return self._pages("/v1/banks", {"limit": page_size}, "banks", Bank)

    def update_bank(
        self, bank_id: str, *, name: str | None = None, config: Mapping[str, Any] | None = None
    ) -> Plan[Bank]:
        body = jsonable({"name": name, "config": config})
        return self._call(Request("PATCH", f"/v1/banks/{seg(bank_id)}", json=body, idempotent=True), Bank)

    def delete_bank(self, bank_id: str) -> Plan[None]:
        return call_none(Request("DELETE", f"/v1/banks/{seg(bank_id)}", idempotent=True), self.retries)

    def bank_stats(self, bank_id: str) -> Plan[BankStats]:
        request = Request("GET", f"/v1/banks/{seg(bank_id)}/stats", idempotent=True)
        return self._call(request, BankStats)

    def bank_usage(
        self,
        bank_id: str,
        *,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        group_by: str = "day",
    ) -> Plan[Usage]:
        """The bank's LLM calls in [since, until) (default: the last 30 days), grouped by `day`,
        `operation` or `model`: tokens, latency, cost, and today's budget."""
        params = jsonable({"since": since, "until": until, "group_by": group_by})
        return self._call(
            Request("GET", f"/v1/banks/{seg(bank_id)}/usage", params=params, idempotent=True), Usage
        )

    def usage(
        self,
        *,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        group_by: str = "day",
    ) -> Plan[Usage]:
        """Every bank's LLM calls (admin key), as `banks.usage` counts them, with the global budget."""
        params = jsonable({"since": since, "until": until, "group_by": group_by})
        return self._call(Request("GET", "/v1/admin/usage", params=params, idempotent=True), Usage)

    def export_bank(self, bank_id: str, path_or_file: PathOrFile) -> Plan[None]:
        """Stream the bank's NDJSON export into a file (a path, or a binary file object). A path is written
        whole or not at all: the export goes to a `.part` file beside it, renamed over it once complete."""
        path = f"/v1/banks/{seg(bank_id)}/export"
        if not isinstance(path_or_file, str | Path):
            yield from send(Request("GET", path, download=path_or_file), self.retries)
            return
        target = Path(path_or_file)
        partial = target.with_name(target.name + ".part")
        try:
            with open(partial, "wb") as file:
                yield from send(Request("GET", path, download=file), self.retries)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)

    def import_bank(self, bank_id: str, path_or_file: PathOrFile) -> Plan[BankImport]:
        """Create `bank_id` from an NDJSON export (a path, or a binary file object)."""
        source = path_or_file
        if isinstance(source, str | Path):
            content = Path(source).read_bytes()
        else:
            content = source.read()
        headers = {"content-type": "application/x-ndjson"}
        request = Request("POST", f"/v1/banks/{seg(bank_id)}/import", content=content, headers=headers)
        return self._call(request, BankImport)

    def create_key(
        self,
        bank_id: str,
        scopes: Sequence[str] = ("read", "write"),
        name: str | None = None,
        agent_id: str | None = None,
    ) -> Plan[ApiKey]:
        """A bank key (`read`, `write`, `propose`, `review`); `agent_id`: the agent its writes are
        recorded as."""
        body = jsonable({"scopes": list(scopes), "name": name, "agent_id": agent_id})
        return self._call(Request("POST", f"/v1/banks/{seg(bank_id)}/keys", json=body), ApiKey)

    def revoke_key(self, bank_id: str, key_id: str) -> Plan[None]:
        path = f"/v1/banks/{seg(bank_id)}/keys/{seg(key_id)}"
        return call_none(Request("DELETE", path, idempotent=True), self.retries)

    # --- events and sessions -----------------------------------------------------------------------------

    def append(
        self, bank_id: str, session_id: str, events: Iterable[EventIn | Mapping[str, Any]]
    ) -> Plan[AppendResult]:
        """Append turns (dicts or `EventIn`); each without an `external_id` gets one, so the retry of
        a request whose reply was lost stores nothing twice."""
        body = {"events": [event_body(e) for e in events]}
        path = f"/v1/banks/{seg(bank_id)}/sessions/{seg(session_id)}/events"
        return self._call(Request("POST", path, json=body, idempotent=True), AppendResult)

    def event_pages(
        self,
        bank_id: str,
        session_id: str,
        after_seq: int | None = None,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> PageFn[Event]:
        path = f"/v1/banks/{seg(bank_id)}/sessions/{seg(session_id)}/events"
        return self._pages(path, {"after_seq": after_seq, "limit": page_size}, "events", Event)

    def get_session(self, bank_id: str, session_id: str) -> Plan[Session]:
        path = f"/v1/banks/{seg(bank_id)}/sessions/{seg(session_id)}"
        return self._call(Request("GET", path, idempotent=True), Session)

    def session_pages(self, bank_id: str, *, page_size: int = DEFAULT_PAGE_SIZE) -> PageFn[Session]:
        return self._pages(f"/v1/banks/{seg(bank_id)}/sessions", {"limit": page_size}, "sessions", Session)

    def close_session(self, bank_id: str, session_id: str) -> Plan[ClosedSession]:
        """Close the session and distil what is left (`job_id`, None when nothing is)."""
        path = f"/v1/banks/{seg(bank_id)}/sessions/{seg(session_id)}/close"
        return self._call(Request("POST", path, idempotent=True), ClosedSession)

    def distill_session(self, bank_id: str, session_id: str) -> Plan[Job]:
        """Distil the session's undistilled tail now (the job, queued or already running)."""
        path = f"/v1/banks/{seg(bank_id)}/sessions/{seg(session_id)}/distill"
        # Concurrent or repeated requests share one job: safe to send again.
        response = yield from send(Request("POST", path, idempotent=True), self.retries)
        return (yield from self.get_job(response.json()["job_id"]))

    def redistill(
        self, bank_id: str, session_ids: Sequence[str] | None = None, dry_run: bool = True
    ) -> Plan[Job]:
        """Replay distillation over the raw events; the job's result is the diff."""
        # (an empty list is sent as given, and refused: left out, it would mean every session of the bank)
        body = jsonable(
            {"session_ids": None if session_ids is None else list(session_ids), "dry_run": dry_run}
        )
        request = Request("POST", f"/v1/banks/{seg(bank_id)}/redistill", json=body)
        response = yield from send(request, self.retries)
        return (yield from self.get_job(response.json()["job_id"]))

    # --- jobs --------------------------------------------------------------------------------------------

    def get_job(self, job_id: str) -> Plan[Job]:
        return self._call(Request("GET", f"/v1/jobs/{seg(job_id)}", idempotent=True), Job)

    def wait_job(self, job_id: str, timeout: float = 120.0) -> Plan[Job]:
        """The job once finished (succeeded or failed); `JobTimeoutError` after `timeout` seconds. It
        polls, the pause growing from 0.1 s to 2 s."""
        deadline = time.monotonic() + timeout
        pause = POLL_FIRST
        while True:
            job = yield from self.get_job(job_id)
            if job.finished:
                return job
            left = deadline - time.monotonic()
            if left <= 0:
                raise JobTimeoutError(f"Job {job_id} is still {job.status} after {timeout:g} s.", job)
            yield Sleep(min(pause, left))
            pause = min(pause * 2, POLL_MAX)

    # --- query -------------------------------------------------------------------------------------------

    def query(self, /, bank_id: str, query: str, **options: Any) -> Plan[QueryResult]:
        """Recall: `top_k`, `tags`, `entities`, `session_id`, `time_range`, `as_of`, `statuses`,
        `fusion`, `weights`, `min_score`, `max_tokens`, `working_memory`, `explain`, `now`,
        `timezone` as keywords (see the API's `POST /v1/banks/{bank_id}/query`)."""
        body = jsonable({"query": query, **options})
        request = Request("POST", f"/v1/banks/{seg(bank_id)}/query", json=body, idempotent=True)
        return self._call(request, QueryResult)

    # --- memories ----------------------------------------------------------------------------------------

    def write_memory(
        self, /, bank_id: str, content: str, tags: Sequence[str], wait: bool = False, **fields: Any
    ) -> Plan[WrittenMemory]:
        """Write a unit (`confidence`, `importance`, `entities`, `occurred_at`, `session_id`,
        `metadata` as keywords): pending with its resolution `job_id`, or resolved with `wait=True`."""
        body = jsonable({"content": content, "tags": list(tags), **fields})
        params = {"wait": "true"} if wait else None
        request = Request("POST", f"/v1/banks/{seg(bank_id)}/memories", params=params, json=body)
        response = yield from send(request, self.retries)
        accepted = response.json()
        return WrittenMemory.model_validate({**accepted["memory"], "job_id": accepted.get("job_id")})

    def memory_pages(
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
        agent_id: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> PageFn[Memory]:
        filters: dict[str, Any] = {"status": status, "tag": tag, "entity": entity, "session_id": session_id}
        filters |= {"since": since, "until": until, "as_of": as_of, "agent_id": agent_id}
        params = {**jsonable(filters), "limit": page_size}
        if "status" in params:
            params["status"] = comma(params["status"])
        return self._pages(f"/v1/banks/{seg(bank_id)}/memories", params, "memories", Memory)

    def _memory_path(self, bank_id: str, memory_id: str) -> str:
        return f"/v1/banks/{seg(bank_id)}/memories/{seg(memory_id)}"

    def get_memory(self, bank_id: str, memory_id: str) -> Plan[Memory]:
        """The unit, with its source turns' text (`source.events`)."""
        return self._call(Request("GET", self._memory_path(bank_id, memory_id), idempotent=True), Memory)

    def memory_history(self, bank_id: str, memory_id: str) -> Plan[MemoryHistory]:
        path = self._memory_path(bank_id, memory_id) + "/history"
        return self._call(Request("GET", path, idempotent=True), MemoryHistory)

    def update_memory(
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
        request = Request("PATCH", self._memory_path(bank_id, memory_id), json=jsonable(changes))
        return self._call(request, Memory)

    def forget_memory(self, bank_id: str, memory_id: str) -> Plan[Memory]:
        return self._delete_memory(bank_id, memory_id, None)

    def purge_memory(self, bank_id: str, memory_id: str) -> Plan[Memory]:
        """Erase content and vectors for good (admin key); the history keeps a tombstone."""
        return self._delete_memory(bank_id, memory_id, {"purge": "true"})

    def _delete_memory(self, bank_id: str, memory_id: str, params: Mapping[str, str] | None) -> Plan[Memory]:
        request = Request("DELETE", self._memory_path(bank_id, memory_id), params=params, idempotent=True)
        return self._call(request, Memory)

    def restore_memory(self, bank_id: str, memory_id: str) -> Plan[Memory]:
        return self._call(Request("POST", self._memory_path(bank_id, memory_id) + "/restore"), Memory)

    def proposal_pages(self, bank_id: str, *, page_size: int = DEFAULT_PAGE_SIZE) -> PageFn[Memory]:
        """The proposed units waiting for a review, newest first."""
        return self.memory_pages(bank_id, status="proposed", page_size=page_size)

    def accept_memory(self, bank_id: str, memory_id: str, *, reason: str | None = None) -> Plan[Memory]:
        """Accept a proposed unit (a `review` key): resolved now, returned as resolved."""
        return self._review(bank_id, memory_id, "accept", reason)

    def reject_memory(self, bank_id: str, memory_id: str, *, reason: str | None = None) -> Plan[Memory]:
        """Reject a proposed unit (a `review` key): `rejected`, never recalled; `reason` kept."""
        return self._review(bank_id, memory_id, "reject", reason)

    def _review(self, bank_id: str, memory_id: str, decision: str, reason: str | None) -> Plan[Memory]:
        path = f"{self._memory_path(bank_id, memory_id)}/{decision}"
        return self._call(Request("POST", path, json=jsonable({"reason": reason})), Memory)

    # --- entities and timeline ---------------------------------------------------------------------------

    def entity_pages(
        self,
        bank_id: str,
        *,
        q: str | None = None,
        type: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> PageFn[Entity]:
        params = {"q": q, "type": type, "limit": page_size}
        return self._pages(f"/v1/banks/{seg(bank_id)}/entities", params, "entities", Entity)

    def get_entity(
        self,
        bank_id: str,
        entity_id: str,
        *,
        statuses: str | Iterable[str] | None = None,
        limit: int | None = None,
    ) -> Plan[EntityDetail]:
        path = f"/v1/banks/{seg(bank_id)}/entities/{seg(entity_id)}"
        params = jsonable({"statuses": comma(statuses), "limit": limit})
        return self._call(Request("GET", path, params=params, idempotent=True), EntityDetail)

    def timeline_pages(
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
        params = jsonable(
            {"from": from_, "to": to, "kinds": comma(kinds), "session_id": session_id, "limit": page_size}
        )
        path = f"/v1/banks/{seg(bank_id)}/timeline"

        def pages(cursor: str | None) -> Plan[Page[TimelineItem]]:
            request = Request("GET", path, params=with_cursor(params, cursor), idempotent=True)
            timeline = yield from self._call(request, TimelinePage)
            return Page(list(timeline.items), timeline.next_cursor)

        return pages
