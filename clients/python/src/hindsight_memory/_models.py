"""The resources as pydantic models. Every model keeps fields the server adds later (`extra="allow"`,
read as attributes) and takes statuses and kinds as plain strings, so a newer server never breaks an
older client. Field names are the server's (app/schemas/)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# The public models (the package exports these).
__all__ = [
    "ApiKey",
    "AppendResult",
    "Bank",
    "BankImport",
    "BankStats",
    "Claim",
    "ClosedSession",
    "Event",
    "EventIn",
    "Job",
    "Memory",
    "MemoryHistory",
    "QueryResult",
    "ScoredMemory",
    "Session",
    "TimeFilter",
    "Usage",
    "UsageGroup",
    "UsageTotals",
    "WorkingTurn",
    "WrittenMemory",
]


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


# --- banks and keys ----------------------------------------------------------------------------------------


class Bank(Model):
    bank_id: str
    name: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


class BankStats(Model):
    bank_id: str
    memories_by_status: dict[str, int] = Field(default_factory=dict)
    memories_by_tag: dict[str, int] = Field(default_factory=dict)
    memories_by_layer: dict[str, int] = Field(default_factory=dict)
    sessions: int = 0
    events: int = 0
    undistilled_events: int = 0
    queued_jobs: int = 0
    queue_lag_seconds: float = 0.0
    maintenance: dict[str, dict[str, Any]] = Field(default_factory=dict)


class UsageTotals(Model):
    calls: int = 0
    failed_calls: int = 0
    estimated_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    latency_ms_avg: float | None = None
    latency_ms_max: int | None = None
    cost: float | None = Field(default=None, description="By the server's price table; None: no price set.")
    unpriced_tokens: int = 0


class UsageGroup(UsageTotals):
    key: str  # a UTC day (YYYY-MM-DD), an operation or a model


class Usage(Model):
    """LLM calls in a window: `totals`, `groups` (by day, operation or model) and today's `budget`."""

    bank_id: str | None = None
    since: datetime
    until: datetime
    group_by: str = "day"
    currency: str = "USD"
    totals: UsageTotals = Field(default_factory=UsageTotals)
    groups: list[UsageGroup] = Field(default_factory=list)
    budget: dict[str, Any] = Field(default_factory=dict)


class ApiKey(Model):
    id: str
    bank_id: str
    key: str = Field(description="Shown once; only a hash is stored.")
    scopes: list[str]
    name: str | None = None
    agent_id: str | None = None
    created_at: datetime


class BankImport(Model):
    """What `POST /v1/banks/{bank_id}/import` answers: the new bank, the lines imported by type, and
    the `reembed` job that builds its vectors (`jobs.wait(job_id)`)."""

    bank_id: str
    counts: dict[str, int]
    job_id: str
    created_at: datetime | None = None


# --- events and sessions -----------------------------------------------------------------------------------


class EventIn(Model):
    """One turn to append. Without `external_id` the client gives it one, so a retry never doubles it."""

    role: Literal["user", "assistant", "system", "tool"]
    content: str
    speaker: str | None = None
    occurred_at: datetime | None = None
    external_id: str | None = None
    metadata: dict[str, Any] | None = None


class AppendResult(Model):
    session_id: str
    appended: int
    first_seq: int | None = None
    last_seq: int | None = None
    duplicates: int = 0
    distill_job_id: str | None = None  # the distillation these turns started, if any


class Event(Model):
    id: int
    session_id: str
    seq: int
    role: str
    content: str
    speaker: str | None = None
    occurred_at: datetime
    external_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    agent_id: str | None = None
    proposed: bool = False
    created_at: datetime


class Session(Model):
    session_id: str
    status: str
    last_seq: int
    distilled_seq: int
    created_at: datetime
    last_event_at: datetime | None = None


class ClosedSession(Session):
    job_id: str | None = Field(default=None, description="The distillation of the tail, if it had one.")


class WorkingTurn(Model):
    seq: int
    role: str
    content: str
    speaker: str | None = None
    occurred_at: datetime | None = None


# --- jobs --------------------------------------------------------------------------------------------------


class Job(Model):
    id: str
    bank_id: str | None = None
    kind: str
    status: str = Field(description="queued, running, succeeded or failed")
    progress: dict[str, Any] = Field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: str | None = None
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    searchable: bool | None = Field(
        default=None, description="A distillation: its units are resolved, so a query finds them"
    )

    @property
    def finished(self) -> bool:
        """Failed, or succeeded and (a distillation) searchable: what waiting for a job waits for."""
        return self.status == "failed" or (self.status == "succeeded" and self.searchable is not False)


# --- memory units ------------------------------------------------------------------------------------------


class EntityRef(Model):
    id: str
    name: str
    type: str


class SourceEvent(Model):
    id: int
    seq: int
    role: str
    speaker: str | None = None
    content: str
    occurred_at: datetime


class Source(Model):
    session_id: str | None = None
    seqs: list[int] = Field(default_factory=list)
    event_ids: list[int] = Field(default_factory=list)
    events: list[SourceEvent] | None = None


class Claim(Model):
    """What a typed unit states: `value` of `subject`'s `attribute`; `modality` firm, hedged, retired, …"""

    subject: str
    attribute: str
    value: str
    value_type: str
    modality: str


class Memory(Model):
    id: str
    bank_id: str
    content: str
    tags: list[str]
    confidence: float
    importance: float
    status: str
    layer: str
    entities: list[EntityRef] = Field(default_factory=list)
    source: Source = Field(default_factory=Source)
    supersedes: str | None = None
    superseded_by: str | None = None
    merged_from: list[str] = Field(default_factory=list)
    merged_into: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    last_accessed_at: datetime | None = None
    access_count: int = 0
    distiller: str | None = None
    embedding_model: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    claim: Claim | None = None  # the one claim a typed unit states
    why: str | None = None  # why it is remembered (query results and single reads)
    agent_id: str | None = None  # the agent that wrote it
    proposed_update_of: str | None = None  # a proposed update: the unit it supersedes once accepted


class WrittenMemory(Memory):
    """A unit as `memories.write` returns it: `job_id` is its resolution job (None with `wait=True`)."""

    job_id: str | None = None


class MemoryBrief(Model):
    id: str
    content: str
    tags: list[str]
    status: str
    confidence: float
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    created_at: datetime
    agent_id: str | None = None


class HistoryAction(Model):
    memory_id: str
    action: str
    actor: str
    agent_id: str | None = None  # the agent that acted
    at: datetime
    details: dict[str, Any] = Field(default_factory=dict)


class MemoryHistory(Model):
    memory: Memory
    chain: list[MemoryBrief] = Field(default_factory=list)
    merged_from: list[MemoryBrief] = Field(default_factory=list)
    merged_into: MemoryBrief | None = None
    actions: list[HistoryAction] = Field(default_factory=list)


# --- query -------------------------------------------------------------------------------------------------


class ChannelScore(Model):
    rank: int
    score: float


class ScoredMemory(Memory):
    score: float
    scores: dict[str, ChannelScore] | None = None
    rerank_score: float | None = None  # with explain, when the rerank stage was applied


class TimeFilter(Model):
    from_: datetime = Field(alias="from")
    to: datetime
    source: str
    phrase: str | None = None


class QueryResult(Model):
    memories: list[ScoredMemory]
    context: str
    working_memory: list[WorkingTurn] = Field(default_factory=list)
    time_filter: TimeFilter | None = None
    rerank: str | None = None  # "applied", or "skipped (…)" and why
    took_ms: float = 0.0
