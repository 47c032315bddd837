"""`memory_query_v2`'s answer: the context text as `memory_query` gives it, and each memory as structured
data (its claim, its dates, its score and `why`), declared as the tool's output schema so a client can
check what it receives. `memory_query` (v1) stays as it was, deprecated for a window (see `tools.py`)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from app.schemas.memories import ClaimRead
from app.schemas.query import QueryResult, RerankOutcome


class MemoryV2(BaseModel):
    id: uuid.UUID = Field(description="The memory's id (for memory_update and memory_forget).")
    content: str = Field(description="The remembered statement.")
    tags: list[str] = Field(description="Its kind and sub-kinds, e.g. constraint.budget.")
    status: str = Field(description="`active` unless older values were asked for.")
    confidence: float = Field(description="How sure the source was, 0 to 1.")
    claim: ClaimRead | None = Field(description="What it states: subject, attribute, value; null if none.")
    valid_from: datetime | None = Field(description="Since when it holds (when it was said).")
    valid_to: datetime | None = Field(description="Until when it held; null while in force.")
    created_at: datetime = Field(description="When it was stored.")
    supersedes: uuid.UUID | None = Field(description="The older value it replaced, if any.")
    superseded_by: uuid.UUID | None = Field(description="The newer value that replaced it, if any.")
    agent_id: str | None = Field(description="The agent that wrote it (shared memory), if known.")
    score: float = Field(description="Its fused relevance score.")
    why: str | None = Field(description="Why it is remembered: its source and history in one sentence.")


class TurnV2(BaseModel):
    seq: int = Field(description="The turn's number in the session.")
    role: str = Field(description="Who spoke.")
    speaker: str | None = Field(description="The speaker's name, if given.")
    content: str = Field(description="What was said.")


class QueryV2Output(BaseModel):
    context: str = Field(description="The prompt-ready block, grouped by kind, newest first.")
    memories: list[MemoryV2] = Field(description="The memories in the context, best first.")
    working_memory: list[TurnV2] = Field(description="The session's recent turns not yet distilled.")
    rerank: RerankOutcome = Field(description="Whether the rerank stage reordered them, or why not.")


def output_schema() -> dict[str, Any]:
    return QueryV2Output.model_json_schema()


def query_v2_result(result: QueryResult) -> CallToolResult:
    """The answer of memory_query_v2 to `result`: text for the model, structured data for the host."""
    memories = [
        MemoryV2.model_validate({**m.model_dump(), "score": round(m.score, 4)}) for m in result.memories
    ]
    turns = [TurnV2.model_validate(t.model_dump()) for t in result.working_memory]
    data = QueryV2Output(
        context=result.context, memories=memories, working_memory=turns, rerank=result.rerank
    ).model_dump(mode="json")
    lines = [result.context.strip() or "No stored memory matches."]
    if memories:
        lines += ["", "Memories (id: content — why):"]
        lines += [f"- {m.id}: {m.content} — {m.why}" if m.why else f"- {m.id}: {m.content}" for m in memories]
    if turns:
        lines += ["", "Recent turns of this session, not yet distilled:"]
        lines += [f"- {t.speaker or t.role}: {t.content}" for t in turns]
    text = "\n".join(lines)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)
