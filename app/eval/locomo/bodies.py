"""The request bodies: a turn as an event, a session's appends, the dense baseline's unit, a query;
the banks' configs."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any

from app.eval.locomo.dataset import Session, Turn

MAX_EVENTS_PER_APPEND = 1000
MAX_UNIT_CHARS = 4000

PRODUCT_BANK_CONFIG: dict[str, Any] = {
    "distill_every_n_turns": 1000,
    "idle_distill_seconds": 86400,
    "timezone": "UTC",
}
DENSE_BANK_CONFIG: dict[str, Any] = {
    "distill_every_n_turns": 1000,
    "idle_distill_seconds": 86400,
    "dedupe_threshold": 1.0,
}
# Plain RAG through the query API: the semantic channel alone, no time filter inferred from the
# question's words ("recently" would keep only the last week), and `now` far ahead so that every unit's
# age decay sits at its floor (the same factor for all): the ranking is then cosine alone.
DENSE_QUERY: dict[str, Any] = {
    "weights": {"semantic": 1, "keyword": 0, "entity": 0, "temporal": 0, "tag": 0, "recency": 0},
    "time_range": {"from": "1900-01-01T00:00:00+00:00", "to": "2200-01-01T00:00:00+00:00"},
    "now": "2200-01-01T00:00:00+00:00",
    "min_similarity": 0,  # plain RAG: no relevance floor
}


def turn_event(turn: Turn) -> dict[str, Any]:
    return {
        "role": "user",  # two people talk; neither is an assistant
        "content": turn.text,
        "speaker": turn.speaker or None,
        "occurred_at": turn.occurred_at.isoformat(),
        "external_id": turn.dia_id,
    }


def session_batches(session: Session) -> list[list[dict[str, Any]]]:
    events = [turn_event(turn) for turn in session.turns]
    return [events[i : i + MAX_EVENTS_PER_APPEND] for i in range(0, len(events), MAX_EVENTS_PER_APPEND)]


def dense_memory(session: Session, turn: Turn) -> dict[str, Any]:
    """The plain-RAG baseline's unit: one raw turn prefixed with its session's date-time as the data
    set writes it and the speaker (the form the README's reference numbers were measured with)."""
    return {
        "content": f"[{session.stamp}] {turn.speaker}: {turn.text}"[:MAX_UNIT_CHARS],
        "tags": ["episode"],
        "occurred_at": turn.occurred_at.isoformat(),
        "session_id": session.session_id,
        "metadata": {"dia_id": turn.dia_id},
    }


def query_body(
    question: str,
    k: int,
    now: datetime,
    dense: bool,
    min_similarity: float | None = None,
    defaults: bool = False,
) -> dict[str, Any]:
    """`min_similarity`: the relevance floor to ask for (None: the bank's default). `defaults`: the
    question and k alone, as a user who sets nothing asks (the bank's floors, the clock's `now`)."""
    if defaults:
        return {"query": question, "top_k": k}
    body: dict[str, Any] = {
        "query": question,
        "top_k": k,
        "min_score": 0,
        "now": now.isoformat(),
        "timezone": "UTC",
    }
    if min_similarity is not None:
        body["min_similarity"] = min_similarity
    if dense:
        body.update(json.loads(json.dumps(DENSE_QUERY)))
    return body


def query_settings(
    dense: bool, min_similarity: float | None = None, defaults: bool = False
) -> dict[str, Any]:
    """The fixed part of every query body, for the report (`query` and `top_k` vary)."""
    body = query_body("<question>", 1, datetime(2000, 1, 1, tzinfo=UTC), dense, min_similarity, defaults)
    fixed = {key: value for key, value in body.items() if key not in ("query", "top_k")}
    return fixed if dense or defaults else {**fixed, "now": "the time of the conversation's last turn"}


def bank_id_for(sample_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._:-]+", "-", sample_id).strip("-")[:100] or "conversation"
    return f"locomo-{slug}-{uuid.uuid4().hex[:8]}"
