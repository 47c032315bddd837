from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, StringConstraints, field_validator, model_validator

from app.db.models import MEMORY_STATUSES, REVIEW_STATUSES
from app.schemas.banks import ChannelWeights
from app.schemas.common import TAG_PATTERN, ReadSchema, SafeText, Schema, Slug, Timestamp
from app.schemas.events import WorkingTurn
from app.schemas.memories import MemoryRead

Status = Literal["pending", "active", "superseded", "merged", "expired", "archived", "deleted"]
# Proposals and refusals are never retrieved (docs/guides/shared-memory.md).
assert set(Status.__args__) == set(MEMORY_STATUSES) - set(REVIEW_STATUSES)  # type: ignore[attr-defined]

CHANNELS = ("semantic", "keyword", "entity", "temporal", "tag")
# What became of the rerank stage (app/query/rerank.py): it reordered the fused top N, or why it did not.
RerankOutcome = Literal[
    "applied",
    "skipped (not configured)",
    "skipped (disabled)",
    "skipped (no topic)",
    "skipped (no candidates)",
    "skipped (budget)",
    "skipped (error)",
]


class TimeRange(Schema):
    from_: Timestamp | None = Field(default=None, alias="from")
    to: Timestamp | None = None

    @model_validator(mode="after")
    def _ordered(self) -> TimeRange:
        if self.from_ and self.to and self.from_.tzinfo and self.to.tzinfo and self.from_ >= self.to:
            raise ValueError("`from` must be before `to`")
        return self


class QueryRequest(Schema):
    query: SafeText = Field(min_length=1, max_length=2000)
    top_k: int = Field(default=10, ge=1, le=100)
    tags: list[Annotated[str, StringConstraints(pattern=TAG_PATTERN)]] | None = Field(
        default=None, max_length=50, description="Only units under these tag prefixes."
    )
    entities: list[Annotated[SafeText, StringConstraints(min_length=1, max_length=256)]] | None = Field(
        default=None, max_length=50, description="Only units that mention one of these entities."
    )
    session_id: Slug | None = Field(default=None, description="The session whose working memory to add.")
    agents: list[Slug] | None = Field(
        default=None,
        max_length=50,
        description="Only units written by these agents (their `agent_id`); shared memory.",
        examples=[["planner", "researcher"]],
    )
    time_range: TimeRange | None = None
    as_of: Timestamp | None = Field(default=None, description="Answer with what was active at this instant.")
    statuses: list[Status] = Field(default=["active"], min_length=1)
    fusion: Literal["rrf", "weighted"] | None = Field(default=None, description="Default: the bank's (rrf).")
    weights: ChannelWeights | None = None
    min_score: float | None = Field(
        default=None,
        ge=0,
        description="Units scoring under this are left out. Default: the bank's (0.3), which spares units "
        "with evidence of the query's topic.",
    )
    min_similarity: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="The relevance floor (absolute evidence: similarity, a query word, a named entity, "
        "the asked time window); default: the bank's `min_similarity` (0.3), or `min_similarity_cjk` "
        "(1: similarity alone is no evidence) for a query in Chinese, Japanese or Korean; 0 turns it off.",
    )
    max_tokens: int | None = Field(default=None, ge=1, le=100_000)
    working_memory: bool = False
    explain: bool = False
    rerank: bool | None = Field(
        default=None,
        description="Run the rerank stage for this query (`false` skips it); default: the bank's "
        "`rerank.enabled`. It runs only when the service has a rerank provider (HINDSIGHT_RERANK_URL).",
    )
    context_why: bool = Field(
        default=False, description="Put each unit's `why` sentence in the `context` block, under its line."
    )
    now: Timestamp | None = Field(default=None, description="Anchor of relative times in the query.")
    timezone: str | None = Field(default=None, description="Default: the bank's.")

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError) as exc:
                raise ValueError(f"unknown time zone {value!r}") from exc
        return value


class ChannelScore(ReadSchema):
    rank: int
    score: float


class ScoredMemory(MemoryRead):
    score: float
    scores: dict[str, ChannelScore] | None = Field(
        default=None, description="With `explain`: each channel that found the unit, its rank and raw score."
    )
    rerank_score: float | None = Field(
        default=None,
        description="With `explain`, when `rerank` is `applied`: the reranker's score of the unit (null for "
        "a unit past the reranked top N). The order of `memories` is then the reranker's; `score` stays the "
        "fused one.",
        examples=[0.9731],
    )


class TimeFilterRead(ReadSchema):
    from_: datetime = Field(serialization_alias="from")
    to: datetime
    source: Literal["request", "query"]
    phrase: str | None = None


class QueryResult(ReadSchema):
    memories: list[ScoredMemory]
    context: str
    working_memory: list[WorkingTurn]
    time_filter: TimeFilterRead | None
    rerank: RerankOutcome = Field(
        default="skipped (not configured)",
        description="The rerank stage: `applied` (the fused top N reordered by the reranker), or "
        "`skipped (…)` with the reason: `not configured`, `disabled` (bank or request), `no topic` (a time "
        "window alone is asked), `no candidates` (fewer than two), `budget` (no answer within the time "
        "budget: the fused order stands), `error` (the reranker failed).",
        examples=["applied"],
    )
    took_ms: float
