"""Export: a bank as NDJSON lines, read from one snapshot in dependency order (bank, sessions, events,
memories, entities, links, relations, history, then an `end` line with the counts), a thousand rows
at a time, so memory stays flat whatever the bank's size. Content is exported as stored: redacted text
stays redacted, a purged unit stays an empty tombstone. No vectors: an import rebuilds them."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncEngine

from app.claims.stored import contract_claim
from app.db.repositories import portability as repo
from app.schemas import portability as lines
from app.schemas.memories import ClaimRead


def _memory(row: dict[str, Any]) -> dict[str, Any]:
    row["source_events"] = [tuple(pair) for pair in row["source_events"]]
    claim = contract_claim(row["claims"])
    row["claim"] = ClaimRead.model_validate(claim) if claim is not None else None
    return row


Fixup = Callable[[dict[str, Any]], dict[str, Any]]

SECTIONS: list[tuple[str, repo.Reader, type[BaseModel], Fixup | None]] = [
    ("session", repo.sessions, lines.SessionLine, None),
    ("event", repo.events, lines.EventLine, None),
    ("memory", repo.memories, lines.MemoryLine, _memory),
    ("entity", repo.entities, lines.EntityLine, None),
    ("link", repo.links, lines.LinkLine, None),
    ("relation", repo.relations, lines.RelationLine, None),
    ("history", repo.history, lines.HistoryLine, None),
]


def _line(model: BaseModel) -> bytes:
    return model.model_dump_json().encode() + b"\n"


async def export_bank(
    engine: AsyncEngine, bank_id: str, *, include_events: bool = True
) -> AsyncIterator[bytes]:
    """The bank's export, a chunk of lines per fetch. Rows are written as stored, never re-validated:
    an export does not fail on an old row a newer schema would refuse (the import says which line).
    Nothing at all when the bank is gone by the time the snapshot starts."""
    async with repo.snapshot(engine) as conn:
        bank = await repo.bank_row(conn, bank_id)
        if bank is None:
            return
        yield _line(
            lines.BankLine.model_construct(
                bank_id=bank.id,
                name=bank.name,
                config=bank.config,
                events=include_events,
                created_at=bank.created_at,
                updated_at=bank.updated_at,
            )
        )
        counts: Counter[str] = Counter()
        for kind, read, model, adapt in SECTIONS:
            counts[kind] = 0
            if kind == "event" and not include_events:
                continue
            async for rows in read(conn, bank_id):
                counts[kind] += len(rows)
                chunk = []
                for row in rows:
                    values = dict(row._mapping)
                    chunk.append(_line(model.model_construct(**(adapt(values) if adapt else values))))
                yield b"".join(chunk)
        yield _line(lines.EndLine.model_construct(counts=dict(counts)))
