"""The metrics: the turns a returned unit stands for, evidence recall@k, context size, latency
percentiles; per k, overall and per category; per question, for error analysis."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.eval.locomo.dataset import CATEGORIES, Question, normalise_dia_id


def unit_dia_ids(unit: Mapping[str, Any], event_map: Mapping[int, str]) -> list[str]:
    """The turns a returned unit stands for: its source events, or the baseline's `metadata.dia_id`."""
    source = unit.get("source") or {}
    ids = [event_map[e] for e in source.get("event_ids") or [] if e in event_map]
    tagged = (unit.get("metadata") or {}).get("dia_id")
    if isinstance(tagged, str):
        ids.append(normalise_dia_id(tagged) or tagged)
    return list(dict.fromkeys(ids))


def retrieved_dia_ids(units: Sequence[Mapping[str, Any]], event_map: Mapping[int, str]) -> list[str]:
    return list(dict.fromkeys(d for unit in units for d in unit_dia_ids(unit, event_map)))


def recall(evidence: Sequence[str], retrieved: Iterable[str]) -> float:
    if not evidence:
        raise ValueError("a question without evidence has no recall")
    found = set(retrieved)
    return sum(1 for e in set(evidence) if e in found) / len(set(evidence))


def context_words(units: Sequence[Mapping[str, Any]]) -> int:
    return sum(len(str(unit.get("content") or "").split()) for unit in units)


def percentile(values: Sequence[float], p: float) -> float | None:
    """The p-th percentile with linear interpolation between ranks (numpy's default); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _mean(values: Sequence[float], digits: int = 4) -> float | None:
    return round(sum(values) / len(values), digits) if values else None


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def latency_summary(values_ms: Sequence[float]) -> dict[str, float | None]:
    return {
        "p50": _round(percentile(values_ms, 50)),
        "p95": _round(percentile(values_ms, 95)),
        "mean": _mean(values_ms, 1),
    }


@dataclass(frozen=True)
class QueryOutcome:
    sample_id: str
    question: Question
    k: int
    dia_ids: tuple[str, ...]
    recall: float
    context_words: int
    units: int
    client_ms: float
    server_ms: float | None
    time_filter: str | None = None  # the phrase the server read as a time filter ("recently")


def summarize(outcomes: Sequence[QueryOutcome]) -> dict[str, Any]:
    """Mean recall overall and per category, context size and latency of one k's queries."""
    by_category = {}
    for category, name in CATEGORIES.items():
        group = [o.recall for o in outcomes if o.question.category == category]
        by_category[str(category)] = {"name": name, "questions": len(group), "recall": _mean(group)}
    filtered = [o.recall for o in outcomes if o.time_filter is not None]  # read a time in the question
    return {
        "questions": len(outcomes),
        "recall": _mean([o.recall for o in outcomes]),
        "by_category": by_category,
        "context_words": _mean([o.context_words for o in outcomes], 1),
        "units_returned": _mean([o.units for o in outcomes], 2),
        "with_time_filter": {"questions": len(filtered), "recall": _mean(filtered)},
        "latency_ms": {
            "client": latency_summary([o.client_ms for o in outcomes]),
            "server": latency_summary([o.server_ms for o in outcomes if o.server_ms is not None]),
        },
    }


def aggregate(outcomes: Sequence[QueryOutcome], ks: Sequence[int]) -> dict[str, dict[str, Any]]:
    return {str(k): summarize([o for o in outcomes if o.k == k]) for k in ks}


def question_details(outcomes: Sequence[QueryOutcome]) -> list[dict[str, Any]]:
    """One entry per question with what each k returned, for error analysis."""
    grouped: dict[tuple[str, int], list[QueryOutcome]] = {}
    for outcome in outcomes:
        grouped.setdefault((outcome.sample_id, outcome.question.index), []).append(outcome)
    details = []
    for (sample_id, _), group in grouped.items():
        question = group[0].question
        details.append(
            {
                "sample_id": sample_id,
                "index": question.index,
                "question": question.text,
                "category": question.category,
                "evidence": list(question.evidence),
                "results": {
                    str(o.k): {
                        "recall": round(o.recall, 4),
                        "dia_ids": list(o.dia_ids),
                        "context_words": o.context_words,
                        "client_ms": round(o.client_ms, 1),
                        "server_ms": o.server_ms,
                        "time_filter": o.time_filter,
                    }
                    for o in sorted(group, key=lambda o: o.k)
                },
            }
        )
    return details
