"""The distiller interface: turns (and related memory) in, candidate memory units out."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from app.entities.types import EntityOut, RelationOut
from app.text import clip, strip_invisible

CORE_KINDS = ("fact", "preference", "constraint", "task_state", "correction", "episode")


@dataclass(frozen=True)
class Turn:
    """One raw event as a distiller sees it."""

    seq: int
    event_id: int
    role: str
    content: str
    speaker: str | None
    occurred_at: datetime
    # The event's metadata: a tool turn's call and result (`tool`/`name`, `arguments`, `result`).
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RelatedUnit:
    """An active unit of the bank the new turns may update."""

    id: uuid.UUID
    content: str
    tags: list[str]


@dataclass(frozen=True)
class DistillContext:
    bank_id: str
    session_id: str
    turns: list[Turn]
    timezone: tzinfo
    related: list[RelatedUnit] = field(default_factory=list)
    taxonomy: list[str] = field(default_factory=list)


UNIT_MAX_CHARS = 4000


def _text(limit: int) -> BeforeValidator:
    # A distiller's text is cleaned and bounded here, whichever distiller wrote it: no invisible
    # characters (they would reach an agent's prompt), and a 30,000-character sentence is cut, not a
    # failed distillation.
    return BeforeValidator(lambda v: clip(strip_invisible(v), limit) if isinstance(v, str) else v)


UnitText = Annotated[str, _text(UNIT_MAX_CHARS), Field(min_length=1, max_length=UNIT_MAX_CHARS)]
Action = Annotated[str, _text(1000), Field(min_length=1, max_length=1000)]
Part = Annotated[str, _text(2000), Field(min_length=1, max_length=2000)]


MAX_TASK_STEPS = 100


class Candidate(BaseModel):
    """A unit a distiller proposes. `content` is self-contained: "I" resolved to the speaker,
    relative dates resolved against the event time."""

    model_config = ConfigDict(extra="ignore")

    content: UnitText
    tags: list[str] = Field(min_length=1, max_length=16)
    confidence: float = Field(ge=0, le=1)
    importance: float = Field(ge=0, le=1)
    source_seqs: list[int] = Field(min_length=1)
    entities: list[EntityOut] = Field(default_factory=list)
    relations: list[RelationOut] = Field(default_factory=list)
    supersedes: uuid.UUID | None = None
    # The day the statement is about, when it names one ("I moved to Denver last May"): the unit's
    # valid time starts then instead of when it was said (`fact.event`).
    occurred_on: date | None = None
    # Stored as the unit's `metadata` (a task episode's `{task, steps, outcome}`); set by the service's
    # own code, never asked of a model (not in the reply schema; the LLM distiller clears it).
    metadata: SkipJsonSchema[dict[str, Any]] = Field(default_factory=dict, exclude=True)
    # The unit's stored claims when the distiller read them (from its turn whole); None: read from the
    # content when resolution first takes the unit. Set by the service's own code, never asked of a model.
    claims: SkipJsonSchema[list[dict[str, Any]] | None] = Field(default=None, exclude=True)

    @property
    def kind(self) -> str:
        return self.tags[0].split(".", 1)[0]


@dataclass
class DistillResult:
    candidates: list[Candidate]
    usage: dict[str, int] = field(default_factory=dict)  # token counts, for LLM distillers


class TaskStep(BaseModel):
    model_config = ConfigDict(extra="ignore")

    action: Action
    result: Annotated[str, _text(2000), Field(max_length=2000)] = ""


class TaskEpisode(BaseModel):
    """A whole task as a distiller sees it; `summary` is the unit's one-line content."""

    model_config = ConfigDict(extra="ignore")

    summary: Part
    task: Part
    steps: list[TaskStep] = Field(default_factory=list, max_length=MAX_TASK_STEPS)
    outcome: Part
    source_seqs: list[int] = Field(min_length=1)
    importance: float | None = Field(default=None, ge=0, le=1)
    entities: list[EntityOut] = Field(default_factory=list)


@dataclass
class TaskResult:
    episode: TaskEpisode | None
    usage: dict[str, int] = field(default_factory=dict)


class Distiller(Protocol):
    name: str  # "heuristic" | "llm"
    version: str  # part of every unit's identity: a new version may redistill the same turns
    uses_related: bool  # whether the service should look up related active units first

    async def distill(self, context: DistillContext) -> DistillResult: ...

    async def task(self, context: DistillContext, min_steps: int) -> TaskResult:
        """The task the stretch of turns holds (app/distill/task_episode.py), if any."""
        ...

    async def aclose(self) -> None: ...


class DistillError(Exception):
    """The distiller could not produce a valid result (the job fails; the watermark stays)."""
