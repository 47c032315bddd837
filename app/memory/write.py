"""The one write path of memory units, whoever writes them: a distillation or its replay, a direct write,
an update. Secrets are masked here, when the bank redacts, before any vector, index or graph sees them;
then each unit is inserted with its vector, its entities and relations, and a `created` history row."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.claims.stored import columns as claim_columns
from app.claims.stored import load_all, read_claims
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import history as history_repo
from app.db.repositories import units as units_repo
from app.entities.types import EntityOut, RelationOut
from app.memory.graph import store_graph
from app.providers.embeddings import Embedder
from app.redact import is_redacted, redact
from app.schemas.banks import BankConfig
from app.text import search_text

# Finds the entities and relations a self-contained statement names (the distiller's reading of a direct
# write, `app.distill.entry.statement_graph`).
GraphFinder = Callable[[str, list[str]], Awaitable[tuple[list[EntityOut], list[RelationOut]]]]
UNCLAIMED: dict[str, Any] = {"claims": None, "claim_subject": None, "claim_attribute": None}


@dataclass(frozen=True)
class UnitWrite:
    """One unit to write: what it says, how sure and how important, since when it holds, where it was
    said, and what its `created` history row notes."""

    content: str
    tags: list[str]
    confidence: float
    importance: float
    valid_from: datetime | None  # None: a proposal naming no time, stamped when accepted
    status: str = "pending"  # or `proposed` (shared memory: waits for a review)
    agent_id: str | None = None  # shared memory: the agent whose unit it is
    proposed_update_of: uuid.UUID | None = None  # a proposed PATCH's target
    session_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    entities: list[EntityOut] = field(default_factory=list)
    relations: list[RelationOut] = field(default_factory=list)
    source_seqs: list[int] = field(default_factory=list)
    source_event_ids: list[int] = field(default_factory=list)
    supersedes: uuid.UUID | None = None
    # A distilled unit's identity without what it says (its session, cited turns and distiller); the
    # write completes it with a digest of what is stored, so the same batch written twice adds nothing.
    # None: every write is a unit of its own.
    identity: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    claims: list[dict[str, Any]] | None = None  # read already (a distiller's, from its turn): stored as given


@dataclass(frozen=True)
class Writer:
    """Who writes a batch of units: their `distiller` column and their history's actor."""

    distiller: str  # "api", or the distiller's version
    actor: str
    agent_id: str | None = None  # a direct write's agent (shared memory); distilled units have their turns'
    salt: str = ""  # added to each identity: a replay's units are its own, not an earlier run's
    reads_claims: bool = False  # now, or (distilled units) when resolution first takes the unit
    find_graph: GraphFinder | None = None  # a direct write's graph, read from its content

    @classmethod
    def direct(cls, actor: str, find_graph: GraphFinder, agent_id: str | None = None) -> Writer:
        """Write units through the API: claims and graph read from the content now."""
        return cls("api", actor, agent_id, reads_claims=True, find_graph=find_graph)


def _without_masked(
    entities: list[EntityOut], relations: list[RelationOut]
) -> tuple[list[EntityOut], list[RelationOut]]:
    """No entity, and no relation with an end, that is nothing but a masked secret."""
    return (
        [e for e in entities if not is_redacted(e.name)],
        [r for r in relations if not (is_redacted(r.subject) or is_redacted(r.object))],
    )


def stored_form(
    config: BankConfig, content: str, entities: list[EntityOut], relations: list[RelationOut]
) -> tuple[str, list[EntityOut], list[RelationOut]]:
    """Return what is stored of a unit's text and graph in a bank of this config: secrets masked when it
    redacts (the default), and no name that was nothing but a secret."""
    if config.redact:
        content = redact(content)
        entities = [e.model_copy(update={"name": redact(e.name)}) for e in entities]
        relations = [
            r.model_copy(update={"subject": redact(r.subject), "object": redact(r.object)}) for r in relations
        ]
    return content, *_without_masked(entities, relations)


async def _as_stored(config: BankConfig, write: UnitWrite, writer: Writer) -> UnitWrite:
    content, entities, relations = stored_form(config, write.content, write.entities, write.relations)
    if writer.find_graph is not None:  # read from the masked content, as a distiller reads masked turns
        found, extra = await writer.find_graph(content, write.tags)
        given = {e.name.lower() for e in entities}
        entities, relations = _without_masked(
            entities + [e for e in found if e.name.lower() not in given], relations + extra
        )
    return replace(write, content=content, entities=entities, relations=relations)


def identity_key(write: UnitWrite, salt: str) -> str | None:
    """Complete the write's identity with a digest of what it says and its tags (as stored)."""
    if write.identity is None:
        return None
    digest = hashlib.sha256(f"{write.content}\x00{'|'.join(write.tags)}".encode()).hexdigest()[:20]
    return f"{write.identity}{digest}{salt}"


def search_texts(contents: list[str]) -> list[str]:
    """Build the search text of each content (jieba segments Chinese: CPU work, run it on a thread)."""
    return [search_text(content) for content in contents]


def claim_columns_of(
    content: str, tags: list[str], given: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Read a unit's claim columns from its content and tags, unless `given` claims (an import's) all load."""
    claims = load_all(given) if given is not None else []
    if given is None or len(claims) != len(given):
        claims = read_claims(content, tags)
    return claim_columns(claims)


def _claims(writes: list[UnitWrite], read: bool) -> list[dict[str, Any]]:
    """Each write's claim columns: the claims it carries, else (`read`) those of its content, else none
    yet (a distilled unit's are read when resolution first takes it)."""
    return [
        claim_columns_of(w.content, w.tags, w.claims) if read or w.claims is not None else UNCLAIMED
        for w in writes
    ]


async def write_units(
    db: AsyncSession, embedder: Embedder, bank: ConfiguredBank, writes: Sequence[UnitWrite], writer: Writer
) -> list[uuid.UUID]:
    """Insert the writes as new units with their vectors, graph and a `created` history row each;
    the ids of those inserted now (a write whose identity is stored already, or repeats one of the
    batch, adds nothing)."""
    batch: list[tuple[str | None, UnitWrite]] = []
    seen: set[str] = set()
    for write in writes:
        stored = await _as_stored(bank.config, write, writer)
        key = identity_key(stored, writer.salt)
        if key is not None:
            if key in seen:  # identical writes of one batch are one unit
                continue
            seen.add(key)
        batch.append((key, stored))
    if not batch:
        return []
    stored_writes = [w for _, w in batch]
    searched = await asyncio.to_thread(search_texts, [w.content for w in stored_writes])
    claims = await asyncio.to_thread(_claims, stored_writes, writer.reads_claims)
    rows = [
        {
            "id": uuid.uuid4(),
            "bank_id": bank.id,
            "content": w.content,
            "search_text": text,
            "tags": w.tags,
            "confidence": w.confidence,
            "importance": w.importance,
            "status": w.status,
            "agent_id": w.agent_id,
            "proposed_update_of": w.proposed_update_of,
            "session_id": w.session_id,
            "source_seqs": w.source_seqs,
            "source_event_ids": w.source_event_ids,
            "supersedes": w.supersedes,
            "valid_from": w.valid_from,
            "distiller": writer.distiller,
            "identity_key": key,
            "embedding_model": embedder.model,
            "metadata": w.metadata,
            **claimed,
        }
        for (key, w), text, claimed in zip(batch, searched, claims, strict=True)
    ]
    # The embedder (a thread, or a remote service) works while the units, their graph and history
    # are written; only a retried batch's already stored units are embedded for nothing.
    embedding = asyncio.ensure_future(embedder.embed([w.content for w in stored_writes]))
    try:
        keyed = await units_repo.insert_units(db, rows)
        new = [(row, w) for row, w in zip(rows, stored_writes, strict=True) if _inserted(row, keyed)]
        if new:
            await store_graph(db, bank.id, [(r["id"], w.entities, w.relations, w.confidence) for r, w in new])
    except BaseException:
        embedding.cancel()
        with contextlib.suppress(BaseException):
            await embedding
        raise
    vectors = dict(zip((r["id"] for r in rows), await embedding, strict=True))
    if not new:
        return []
    await embeddings_repo.insert_embeddings(
        db, bank.id, embedder.model, {r["id"]: vectors[r["id"]] for r, _ in new}
    )
    await history_repo.add_history(
        db,
        [
            {
                "bank_id": bank.id,
                "memory_id": r["id"],
                "action": "created",
                "actor": writer.actor,
                "agent_id": w.agent_id,
                "details": {**w.details, "to": w.status},
            }
            for r, w in new
        ],
    )
    return [r["id"] for r, _ in new]


def _inserted(row: dict[str, Any], keyed: dict[str, uuid.UUID]) -> bool:
    """Whether the insert wrote the row: every row without an identity, a keyed one when it was new."""
    key = row["identity_key"]
    return key is None or keyed.get(key) == row["id"]
