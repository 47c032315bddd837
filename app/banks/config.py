"""A bank's typed config: per-bank behaviour with its one set of defaults, validated when written and
parsed once per request or job (`ConfiguredBank`), then read by fusion, expire, decay and the distiller."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import ConfigDict, Field, StringConstraints, field_validator

from app.db.models import Bank
from app.schemas.common import TAG_PATTERN, SafeText, Schema

# How long a unit of a kind lives after it was said, unless the bank's `ttl_days` says otherwise (days;
# None: forever). Kinds not listed live forever.
DEFAULT_TTL_DAYS: dict[str, float | None] = {"task_state": 1.0, "episode": 90.0}
# Kinds that never fade: neither in retrieval's decay (app/query/fusion.py) nor in the decay task.
NEVER_DECAY: tuple[str, ...] = ("fact",)
# Kinds whose truth is itself time-bound: they expire on valid time (a deadline passed, a task state went
# stale). Every other kind ages in bank time: from when the bank learned, used or last heard it again.
VALID_TIME_KINDS: tuple[str, ...] = ("task_state", "constraint.time")
# Upper bounds of what a value's use can hold (interval arithmetic in SQL): a bank key must not be able
# to store a value that breaks maintenance for every bank.
MAX_IDLE_SECONDS = 366 * 86400  # a year
MAX_TTL_DAYS = 36_600  # a hundred years; null is forever
# The relevance floor's similarity (all-MiniLM-L6-v2 cosine, fp32 and int8 alike): measured by
# `python -m bench.offtopic` (off-topic queries answered with nothing) and retrieval recall
# (docs/benchmarks.md).
MIN_SIMILARITY = 0.3
MIN_SIMILARITY_CJK = 1.0


class ChannelWeights(Schema):
    """How much each retrieval channel counts; an omitted channel keeps its default, 0 turns it off."""

    semantic: float | None = Field(default=None, ge=0, le=10)
    keyword: float | None = Field(default=None, ge=0, le=10)
    entity: float | None = Field(default=None, ge=0, le=10)
    temporal: float | None = Field(default=None, ge=0, le=10)
    tag: float | None = Field(default=None, ge=0, le=10)
    recency: float | None = Field(default=None, ge=0, le=10)


class RerankConfig(Schema):
    """The bank's use of the rerank stage (the provider itself is the service's: HINDSIGHT_RERANK_URL)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        default=True, description="Rerank this bank's queries when a rerank provider is configured."
    )
    top_n: int | None = Field(
        default=None,
        ge=2,
        le=100,
        description="Fused candidates sent to the reranker; default the service's (30).",
    )
    budget_ms: int | None = Field(
        default=None,
        ge=1,
        le=10_000,
        description="The rerank call's time budget in milliseconds, past which the fused order stands; "
        "default the service's (150).",
    )


class BankConfig(Schema):
    """Per-bank behaviour; every field overrides a service default. Unknown keys are refused."""

    model_config = ConfigDict(extra="forbid")

    timezone: str = "UTC"
    distill_every_n_turns: int = Field(default=5, ge=1, le=1000)
    idle_distill_seconds: int = Field(default=300, ge=1, le=MAX_IDLE_SECONDS)
    min_confidence: float = Field(default=0.6, ge=0, le=1)
    dedupe_threshold: float = Field(default=0.95, ge=0, le=1)
    min_score: float = Field(
        default=0.3,
        ge=0,
        le=1000,
        description="Units whose final score is under this are left out unless they have evidence of "
        "the query's topic (similarity, a query word, a named entity): scores are relative (the best unit of "
        "a query scores about 1), so this trims the tail of weak evidence; it cannot say that nothing fits.",
    )
    min_similarity: float = Field(
        default=MIN_SIMILARITY,
        ge=0,
        le=1,
        description="The relevance floor, absolute: a unit is returned only with evidence of its own — "
        "cosine similarity to the query of at least this, a content word of the query, an entity the "
        "query names, or the time window it asks for — so a query about nothing the bank knows returns "
        "nothing. 0 turns the floor off.",
    )
    min_similarity_cjk: float = Field(
        default=MIN_SIMILARITY_CJK,
        ge=0,
        le=1,
        description="The same bar for a query in Chinese, Japanese or Korean. The local model "
        "(all-MiniLM-L6-v2) is English-only and finds any two Chinese sentences alike, so by default (1) "
        "similarity alone is no evidence there and a Chinese query needs a shared word (jieba-segmented) or "
        "a named entity; with a multilingual embedding model set it like `min_similarity`.",
    )
    forgetting_policy: Literal["delete", "downweight", "never"] = "delete"
    redact: bool = Field(
        default=True,
        description="Mask secrets (API keys, passwords, card, national id and bank account numbers) as "
        "[REDACTED:<kind>] in memory units, distilled or written directly, before they are embedded or "
        "indexed; the distiller sees the masked turns.",
    )
    redact_raw_events: bool = Field(
        default=False,
        description="Also mask them in the raw event log (content and metadata strings) when events are "
        "appended; the original text is then never stored.",
    )
    subject: SafeText | None = Field(
        default=None,
        max_length=256,
        description="The bank's main subject (the user) whose page `GET /profile` shows; by default the "
        "speaker of most user turns.",
    )
    episode_min_steps: int = Field(
        default=1,
        ge=0,
        le=100,
        description="A task (a request, its steps, an outcome) gets an `episode.task` unit when a close, a "
        "reflect or the idle sweep ends it and it took at least this many steps (tool calls, reported "
        "actions); raise it to keep only complex tasks.",
    )
    fusion: Literal["rrf", "weighted"] = "rrf"
    weights: ChannelWeights | None = None
    rerank: RerankConfig = Field(
        default_factory=RerankConfig,
        description="The optional rerank stage after fusion: on or off for this bank, how many fused units "
        "it reorders and its time budget.",
    )
    why_language: Literal["auto", "en", "zh"] = Field(
        default="auto",
        description="The language of each returned unit's `why` sentence: `en`, `zh`, or `auto` (the unit's "
        "own: Chinese when its content is).",
    )
    ttl_days: dict[
        Annotated[SafeText, StringConstraints(min_length=1, max_length=64)],
        Annotated[float, Field(ge=0, le=MAX_TTL_DAYS)] | None,
    ] = Field(
        default_factory=dict,
        max_length=200,
        description="Days a unit of a tag kind lives after it was said; null = forever. Defaults: "
        + ", ".join(f"{kind} {days:g}" for kind, days in DEFAULT_TTL_DAYS.items() if days is not None)
        + ".",
    )
    expiry_grace_days: float = Field(
        default=30,
        ge=0,
        le=MAX_TTL_DAYS,
        description="Under the `delete` policy, days an expired or faded unit stays archived (restorable, "
        "and found by queries about its time) before it is deleted.",
    )
    max_forget_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="The share of the bank's active units one maintenance run may archive; a run that would "
        "archive more (a wrong clock, a wrong rule) archives nothing and says so, unless an admin forces it.",
    )
    decay_lambda: float = Field(default=0.01, ge=0, le=10)
    decay_threshold: float = Field(default=0.05, ge=0, le=1)
    tags: list[Annotated[str, StringConstraints(pattern=TAG_PATTERN)]] = Field(
        default_factory=list,
        max_length=200,
        description="The bank's own tags, added to the built-in taxonomy the distillers choose from.",
    )

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {value!r}") from exc
        return value


@dataclass(frozen=True)
class ConfiguredBank:
    """A bank as a request or a job works with it: the row, and its config parsed once."""

    row: Bank
    config: BankConfig

    @classmethod
    def of(cls, row: Bank) -> ConfiguredBank:
        return cls(row, BankConfig.model_validate(row.config))

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def timezone(self) -> ZoneInfo:
        """Where a timestamp without an offset is read, and where "today" is for the distiller."""
        return ZoneInfo(self.config.timezone)
