"""Each conversation through the product's distiller, in process: the heuristic distiller (the default,
offline one) on the whole conversation as one batch, then what the distill service does to its output
before storing it (the bank's redaction and `min_confidence`, at their defaults). The stack adds
storage, embedding and resolution, none of which changes what a turn becomes."""

from __future__ import annotations

from datetime import timedelta

from bench.distill_quality.score import Unit
from bench.distill_quality.suite import Conversation


def _units(candidates: list[object]) -> list[Unit]:
    from app.distill.types import Candidate

    return [
        Unit(c.content, tuple(c.tags), tuple(c.source_seqs), tuple(e.name for e in c.entities))
        for c in candidates
        if isinstance(c, Candidate)
    ]


async def distill_all(conversations: list[Conversation]) -> dict[str, list[Unit]]:
    """The units each conversation leaves, by conversation id."""
    from app.distill.heuristic.distiller import HeuristicDistiller
    from app.distill.store import as_stored
    from app.distill.taxonomy import bank_taxonomy
    from app.distill.types import DistillContext, Turn
    from app.redact import redact
    from app.schemas.banks import BankConfig

    config = BankConfig()
    distiller = HeuristicDistiller()
    out: dict[str, list[Unit]] = {}
    for conv in conversations:
        turns = [
            Turn(
                t.seq,
                t.seq,
                t.role,
                redact(t.text) if config.redact else t.text,
                None,
                conv.date + timedelta(minutes=t.seq - 1),
                t.metadata,
            )
            for t in conv.turns
        ]
        timezone = conv.date.tzinfo
        assert timezone is not None  # the suite's dates carry their offset (suite.parse_conversation)
        context = DistillContext("distill-suite", conv.id, turns, timezone, [], bank_taxonomy(config.tags))
        result = await distiller.distill(context)
        kept = [c for c in result.candidates if c.confidence >= config.min_confidence]
        out[conv.id] = _units([as_stored(config, c) for c in kept])
    return out
