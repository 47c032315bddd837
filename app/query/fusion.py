"""Fusing the channels into one ranking, then time decay and boosts.

- `rrf` (default): Σ weight_c / (60 + rank_c), divided by the best unit's, so the top unit scores 1.
- `weighted`: Σ weight_c · score_c with each channel's score on [0, 1] (cosine similarity, keyword rank
  relative to the best, 1 for a named entity, 0.5 one hop away and 0.25 two, rank within the time
  window, 1 for a tag match). Defaults 0.5 semantic, 0.3 tag, 0.2 temporal.
- `recency` (either mode, default 0) adds weight · 0.5^(age / 30 days).
Then: × a per-tag decay that never goes below half (half-lives in `tuning.py`; facts do not decay),
× (0.9 + 0.2 · importance), × 1.15 for L3 (semantic-layer) units, × 1.5 for a task episode the tag
channel found (a "how did we handle …" question). `min_score` applies to the result (`service.query`
says to which units).

Scores are relative (the best unit of any query scores about 1), so they cannot say that nothing fits.
The relevance floor (`relevant`) is absolute: a unit is returned only on evidence of its own — cosine
similarity to the query of at least `min_similarity`, a content word of the query (keyword channel),
an entity the query names (not one hop away), a specific tag the query's words name ("budget" →
`constraint.budget`, not a bare kind like `preference`), or the time window of a query that asks for
nothing but that window ("what did we talk about yesterday?"). A time phrase beside a topic only narrows
the window: "the weather on Mars tonight" needs evidence of the weather on Mars (`app.query.topic`).
Other tag and recency hits only rank what has evidence; a query about nothing the bank knows returns
nothing.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from datetime import datetime

from app.db.repositories.task_ends import TASK_TAG
from app.query.channels import Hit
from app.query.tuning import (
    CHANNEL_LIMIT,
    DECAY_FLOOR,
    DEFAULT_HALF_LIFE_DAYS,
    DEFAULT_WEIGHTS,
    HALF_LIFE_DAYS,
    RECENCY_HALF_LIFE_DAYS,
    REDUNDANT_FACTOR,
    RRF_K,
    SEMANTIC_LAYER_BOOST,
    TASK_QUESTION_BOOST,
)


@dataclass
class Fused:
    memory_id: uuid.UUID
    score: float = 0.0
    channels: dict[str, tuple[int, float]] = field(default_factory=dict)


def _age_days(hit: Hit, now: datetime) -> float:
    said = hit.valid_from or hit.created_at
    return max((now - said).total_seconds() / 86_400, 0.0)


def _decay(hit: Hit, now: datetime) -> float:
    tag = hit.tags[0] if hit.tags else "episode"
    half_life = HALF_LIFE_DAYS.get(tag, HALF_LIFE_DAYS.get(tag.split(".", 1)[0], DEFAULT_HALF_LIFE_DAYS))
    if half_life is None:
        return 1.0
    return DECAY_FLOOR + (1 - DECAY_FLOOR) * math.pow(0.5, _age_days(hit, now) / half_life)


def _channel_score(hit: Hit, best_keyword: float) -> float:
    if hit.channel == "semantic":
        return min(max(hit.score, 0.0), 1.0)
    if hit.channel == "keyword":
        return hit.score / best_keyword if best_keyword > 0 else 0.0
    if hit.channel == "temporal":
        return 1 - (hit.rank - 1) / CHANNEL_LIMIT
    if hit.channel == "tag":
        return 1.0
    return hit.score  # entity: 1 named, 0.5 one hop away, 0.25 two


def fuse(hits: list[Hit], mode: str, weights: dict[str, float], now: datetime) -> list[Fused]:
    """One score per unit, best first. Decay and recency count time on the bank's own clock: from the
    newest unit found, not past `now` (a bank of old conversations imported today does not fade as a
    whole, so its facts do not outrank its episodes for being old)."""
    best_keyword = max((h.score for h in hits if h.channel == "keyword"), default=0.0)
    now = min(now, max((h.valid_from or h.created_at for h in hits), default=now))
    fused: dict[uuid.UUID, Fused] = {}
    first: dict[uuid.UUID, Hit] = {}
    for hit in hits:
        unit = fused.setdefault(hit.memory_id, Fused(hit.memory_id))
        first.setdefault(hit.memory_id, hit)
        unit.channels[hit.channel] = (hit.rank, hit.score)
        weight = weights.get(hit.channel, 0.0)
        unit.score += (
            weight / (RRF_K + hit.rank) if mode == "rrf" else weight * _channel_score(hit, best_keyword)
        )
    recency = weights.get("recency", 0.0)
    for memory_id, unit in fused.items():
        hit = first[memory_id]
        if recency:
            fresh = math.pow(0.5, _age_days(hit, now) / RECENCY_HALF_LIFE_DAYS)
            unit.score += recency * fresh / (RRF_K + 1) if mode == "rrf" else recency * fresh
    if mode == "rrf" and fused:
        top = max(u.score for u in fused.values()) or 1.0
        for unit in fused.values():
            unit.score /= top
    for memory_id, unit in fused.items():
        hit = first[memory_id]
        boost = (0.9 + 0.2 * hit.importance) * (SEMANTIC_LAYER_BOOST if hit.layer == "semantic" else 1.0)
        if "tag" in unit.channels and hit.tags and hit.tags[0] == TASK_TAG:
            boost *= TASK_QUESTION_BOOST
        unit.score = round(unit.score * _decay(hit, now) * boost, 6)
    return sorted(fused.values(), key=lambda u: (-u.score, _best_rank(u), str(u.memory_id)))


def diversify(ranked: list[Fused], hits: list[Hit]) -> list[Fused]:
    """A unit whose source turns are all covered by better units (the episode of a turn whose fact
    ranked higher) says less that is new: its score is lowered, so more distinct turns come back."""
    sources = {h.memory_id: set(h.sources) for h in hits}
    covered: set[int] = set()
    for unit in ranked:
        mine = sources.get(unit.memory_id, set())
        if mine and mine <= covered:
            unit.score = round(unit.score * REDUNDANT_FACTOR, 6)
        covered |= mine
    return sorted(ranked, key=lambda u: (-u.score, _best_rank(u), str(u.memory_id)))


def on_topic(unit: Fused, min_similarity: float) -> bool:
    """Whether the unit has evidence of the query's topic: similarity of at least `min_similarity`, a
    content word of the query, or an entity the query names (not one hop away)."""
    channels = unit.channels
    if "semantic" in channels and channels["semantic"][1] >= min_similarity:
        return True
    return "keyword" in channels or ("entity" in channels and channels["entity"][1] >= 1.0)


def relevant(unit: Fused, min_similarity: float, *, window_asked: bool, kind_asked: bool = False) -> bool:
    """Whether the unit has evidence of its own (the module's docstring); `min_similarity` 0: always.
    `kind_asked`: the unit is under a specific tag the query's words name ("budget" → constraint.budget).
    `window_asked`: the query asks for its time window alone (no topic), so being in it is evidence."""
    if min_similarity <= 0 or kind_asked:
        return True
    return on_topic(unit, min_similarity) or (window_asked and "temporal" in unit.channels)


def _best_rank(unit: Fused) -> int:
    return min(rank for rank, _ in unit.channels.values())


def effective_weights(mode: str, *overrides: dict[str, float | None] | None) -> dict[str, float]:
    """Defaults of the mode, then the bank's, then the request's (each only where given)."""
    weights = dict(DEFAULT_WEIGHTS[mode])
    for layer in overrides:
        for name, value in (layer or {}).items():
            if value is not None:
                weights[name] = value
    return weights


def active_channels(weights: dict[str, float]) -> frozenset[str]:
    return frozenset(name for name, w in weights.items() if w > 0 and not math.isclose(w, 0.0))
