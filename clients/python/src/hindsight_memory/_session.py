"""The seeds' agent loop in three calls: recall before answering, record each turn, reflect at the end
of a task. One implementation (plans, `_surface`), two context managers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hindsight_memory._bodies import event_body
from hindsight_memory._errors import NotFoundError
from hindsight_memory._models import AppendResult, ClosedSession, EventIn, Job, QueryResult
from hindsight_memory._operations import Operations
from hindsight_memory._plans import Plan
from hindsight_memory._surface import Async, AsyncClosing, Closing, Driver, Mode, Resource, Sync, operation

DEFAULT_BUFFER = 20


def render_recall(result: QueryResult) -> str:
    """The block for a system prompt: the distilled memory (`context`), then the session's recent turns
    not yet distilled (working memory); the empty string when there is neither."""
    parts = [result.context.strip()] if result.context.strip() else []
    if result.working_memory:
        lines = ["Recent turns of this session, not yet distilled:"]
        lines += [f"- {t.speaker or t.role}: {t.content}" for t in result.working_memory]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


class SessionCore:
    """What both session objects share: the buffer of recorded turns and the plans over it (with the
    public signatures: the session objects name them). A turn gets its `external_id` when recorded,
    so a flush that failed and is tried again stores it once."""

    def __init__(
        self, ops: Operations, bank_id: str, session_id: str, buffer_size: int, options: Mapping[str, Any]
    ) -> None:
        if buffer_size < 1:
            raise ValueError("buffer_size must be at least 1")
        self.ops = ops
        self.bank_id = bank_id
        self.session_id = session_id
        self.buffer_size = buffer_size
        self.options = dict(options)
        self.pending: list[dict[str, Any]] = []
        self.closed = False
        self.sent = False

    def record(self, /, role: str, content: str, **fields: Any) -> Plan[None]:
        """Record a turn (`speaker`, `occurred_at`, `metadata` as keywords); sent in batches."""
        if self.closed:
            raise RuntimeError("the memory session is closed")
        self.pending.append(event_body(EventIn.model_validate({"role": role, "content": content, **fields})))
        if len(self.pending) >= self.buffer_size:
            yield from self.flush()

    def flush(self) -> Plan[AppendResult | None]:
        """Send the buffered turns now."""
        if not self.pending:
            return None
        batch = list(self.pending)
        result = yield from self.ops.append(self.bank_id, self.session_id, batch)
        del self.pending[: len(batch)]
        self.sent = True
        return result

    def recall(self, /, text: str, **options: Any) -> Plan[str]:
        """The context block for `text`, working memory included, ready for a system prompt."""
        yield from self.flush()
        merged = {**self.options, **options, "session_id": self.session_id, "working_memory": True}
        result = yield from self.ops.query(self.bank_id, text, **merged)
        return render_recall(result)

    def reflect(self, *, wait: bool = False, timeout: float = 120.0) -> Plan[Job | None]:
        """Distil the session's undistilled turns now; the job (finished, with `wait=True`), or None
        when nothing was recorded yet."""
        yield from self.flush()
        try:
            job = yield from self.ops.distill_session(self.bank_id, self.session_id)
        except NotFoundError:
            yield from self._unrecorded()
            return None
        if wait and not job.finished:
            job = yield from self.ops.wait_job(job.id, timeout)
        return job

    def _unrecorded(self) -> Plan[None]:
        """After a 404 for the session: fine when no turn was ever sent (there is nothing to distil or
        close), as long as the bank exists (else its NotFoundError)."""
        if self.sent:
            raise NotFoundError(404, "Not Found", f"Session {self.session_id!r} not found.")
        yield from self.ops.get_bank(self.bank_id)

    def close(self) -> Plan[ClosedSession | None]:
        if self.closed:
            return None
        yield from self.flush()
        self.closed = True
        try:
            return (yield from self.ops.close_session(self.bank_id, self.session_id))
        except NotFoundError:
            yield from self._unrecorded()
            return None


class _SessionMethods(Resource[Mode]):
    """The session object's calls: the plans of its `SessionCore` (`_surface` makes them sync or async)."""

    def __init__(self, driver: Driver[Mode], core: SessionCore) -> None:
        super().__init__(driver, plans=core)
        self._core = core

    @property
    def bank_id(self) -> str:
        return self._core.bank_id

    @property
    def session_id(self) -> str:
        return self._core.session_id

    record = operation(SessionCore.record)
    flush = operation(SessionCore.flush)
    recall = operation(SessionCore.recall)
    reflect = operation(SessionCore.reflect)
    close = operation(SessionCore.close)


class MemorySession(_SessionMethods[Sync], Closing):
    """`with hs.memory_session(bank_id, session_id) as mem:` — `mem.recall(text)` before answering,
    `mem.record(role, content)` for each turn, `mem.reflect()` at the end of a task; leaving the block
    flushes what is buffered and closes the session (which distils what is left)."""


class AsyncMemorySession(_SessionMethods[Async], AsyncClosing):
    """`async with hs.memory_session(bank_id, session_id) as mem:` — as `MemorySession`, awaited."""
