"""Turns a distiller fails on: found by halving the batch, left out with their reason, so one hostile
turn never holds back the rest of its session (the batch is distilled without it and the watermark
moves past it). A `DistillError` (the LLM provider is down, its reply stays invalid) is no turn's
fault: it fails the job as before, and the job is tried again."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from app.distill.types import DistillContext, Distiller, DistillError, DistillResult
from app.text import clip

log = logging.getLogger(__name__)

REASON_MAX_CHARS = 500
KEPT = 100  # entries a session keeps (the newest seqs): the job results list them all


def reason(exc: Exception) -> str:
    """What failed, without the turn's text (a validation error would quote it)."""
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        detail = "; ".join(f"{exc.title}.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors)
        return clip(f"ValidationError: {detail}", REASON_MAX_CHARS)
    return clip(f"{type(exc).__name__}: {exc}", REASON_MAX_CHARS)


async def distill_isolating(
    distiller: Distiller, context: DistillContext
) -> tuple[DistillResult, list[dict[str, Any]]]:
    """The distiller's result for the turns, and `[{seq, reason}]` of the turns it failed on (left
    out). Without a failure this is one call; with one, the failing turns are found by halving, and
    the batch is distilled again without them (so the others keep their context)."""
    result, failed = await _isolate(distiller, context)
    if not failed or len(failed) == len(context.turns):
        return result, failed
    bad = {item["seq"] for item in failed}
    try:
        return await distiller.distill(
            replace(context, turns=[t for t in context.turns if t.seq not in bad])
        ), failed
    except DistillError:
        raise
    except Exception:
        log.warning(
            "distiller %s failed again without the quarantined turns", distiller.version, exc_info=True
        )
        return result, failed


async def _isolate(
    distiller: Distiller, context: DistillContext
) -> tuple[DistillResult, list[dict[str, Any]]]:
    """Distil the turns; on a failure, each half on its own, down to the turns that fail alone."""
    turns = context.turns
    try:
        return await distiller.distill(context), []
    except DistillError:
        raise
    except Exception as exc:
        if len(turns) == 1:
            why = reason(exc)
            log.warning(
                "turn %s of %s/%s quarantined: %s", turns[0].seq, context.bank_id, context.session_id, why
            )
            return DistillResult([]), [{"seq": turns[0].seq, "reason": why}]
    middle = len(turns) // 2
    halves = [
        await _isolate(distiller, replace(context, turns=part)) for part in (turns[:middle], turns[middle:])
    ]
    usage: Counter[str] = Counter()
    for result, _ in halves:
        usage.update(result.usage)
    return (
        DistillResult([c for result, _ in halves for c in result.candidates], dict(usage)),
        [item for _, failed in halves for item in failed],
    )


def merged(kept: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A session's quarantined turns with the new ones (a turn quarantined again: its newest reason)."""
    by_seq = {int(item["seq"]): item for item in [*kept, *new]}
    return [by_seq[seq] for seq in sorted(by_seq)][-KEPT:]
