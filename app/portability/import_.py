"""Import: a new bank from an export stream, all or nothing, in the caller's transaction.

The body is read as it arrives, a line at a time (never whole), and written in batches. Every line is
checked before anything is committed: its shape (the line models: a bad field is named), its place
(sections in order, an `end` line last whose counts match), and what it refers to (a session, a
source turn, a unit, an entity of the stream). The first bad line raises `Invalid` naming it, and the
caller's rollback leaves nothing of the bank.

Ids are remapped without a table of them: a unit's, an entity's or a relation's new id is
uuid5(a namespace drawn for this import, its old id), the same wherever the old id appears, before or
after its own line. Events are cited by (session_id, seq), which an import keeps, as it keeps seqs,
timestamps, statuses and history; vectors come from the `reembed` job created with the bank."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Job
from app.db.repositories import banks as banks_repo
from app.db.repositories import portability as repo
from app.errors import Conflict, Invalid, TooLarge
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.jobs.unit_of_work import enqueue
from app.keys import composite_key
from app.memory.write import claim_columns_of, search_texts
from app.schemas.banks import BankConfig
from app.schemas.portability import (
    COUNTED,
    LINE,
    SECTIONS,
    BankLine,
    EndLine,
    EntityLine,
    EventLine,
    HistoryLine,
    LinkLine,
    MemoryLine,
    RelationLine,
    SessionLine,
)

BATCH = 500
MAX_LINE_BYTES = 16 * 1024 * 1024
REEMBED = JobKind.REEMBED
# History details that name units (resolution and merges write them), rewritten with the unit ids.
UNIT_REFERENCES_IN_DETAILS = ("superseded_by", "supersedes", "merged_into", "source", "split_from")
# A unit's metadata that names units: the unit a residual was split from, a task episode's links
UNIT_REFERENCES_IN_METADATA = ("split_from", "links")


def bad_line(
    number: int, message: str, loc: tuple[str | int, ...] = (), kind: str = "value_error"
) -> Invalid:
    where = f"Line {number}, field {'.'.join(map(str, loc))}" if loc else f"Line {number}"
    return Invalid(
        f"{where}: {message}",
        errors=[{"loc": ["line", number, *loc], "msg": message, "type": kind, "line": number}],
    )


async def read_lines(chunks: AsyncIterator[bytes], max_bytes: int) -> AsyncIterator[tuple[int, bytes]]:
    """The body's lines with their numbers (1-based), as the chunks arrive; 413 past `max_bytes`."""
    buffer, size, number = bytearray(), 0, 0
    async for chunk in chunks:
        size += len(chunk)
        if size > max_bytes:
            raise TooLarge(f"The import body exceeds {max_bytes} bytes (HINDSIGHT_IMPORT_MAX_BYTES).")
        buffer += chunk
        if b"\n" not in chunk:
            if len(buffer) > MAX_LINE_BYTES:
                raise bad_line(number + 1, f"longer than {MAX_LINE_BYTES} bytes")
            continue
        *complete, rest = bytes(buffer).split(b"\n")
        buffer = bytearray(rest)
        for raw in complete:
            number += 1
            yield number, raw
    if buffer:
        yield number + 1, bytes(buffer)


def parse(number: int, raw: bytes) -> Any:
    try:
        return LINE.validate_json(raw)
    except ValidationError as exc:
        errors: list[dict[str, Any]] = []
        for error in exc.errors(include_url=False):
            loc = list(error["loc"])
            if error["type"].startswith("union_tag"):
                loc = ["type"]
            elif loc and loc[0] in SECTIONS:
                loc = loc[1:]  # the union's tag: the line's type
            errors.append(
                {"loc": ["line", number, *loc], "msg": error["msg"], "type": error["type"], "line": number}
            )
        first = errors[0]
        if first["type"] == "json_invalid":
            detail = f"Line {number} is not valid JSON: {first['msg']}"
        else:
            field_name = ".".join(map(str, first["loc"][2:])) or "(the line)"
            detail = f"Line {number}, field {field_name}: {first['msg']}"
        raise Invalid(detail, errors=errors) from exc


def _constraint(exc: IntegrityError) -> str:
    cause: Any = exc.orig
    while cause is not None and not getattr(cause, "constraint_name", None):
        cause = cause.__cause__
    return str(getattr(cause, "constraint_name", None) or "a constraint")


@dataclass
class Importer:
    db: AsyncSession
    bank_id: str
    namespace: uuid.UUID = field(default_factory=uuid.uuid4)
    include_events: bool = True
    section: int = -1
    sessions: dict[str, int] = field(default_factory=dict)  # session_id → last_seq
    last_seq: dict[str, int] = field(default_factory=dict)  # session_id → the seq of its last event line
    batch: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    sources: list[list[tuple[str, int]]] = field(default_factory=list)  # memory batch: its cited turns
    refs: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    ended: bool = False

    def new_id(self, old: uuid.UUID) -> uuid.UUID:
        return uuid.uuid5(self.namespace, str(old))

    def maybe(self, old: uuid.UUID | None) -> uuid.UUID | None:
        return None if old is None else self.new_id(old)

    async def take(self, number: int, line: Any) -> None:
        position = SECTIONS.index(line.type)
        if self.ended:
            raise bad_line(number, "nothing may follow the end line")
        if self.section < 0 and line.type != "bank":
            raise bad_line(number, "the first line must be the bank line", ("type",))
        if position < self.section or (position == 0 and self.section == 0):
            expected = " < ".join(SECTIONS)
            raise bad_line(number, f"a {line.type} line out of order (sections go {expected})", ("type",))
        if position != self.section:
            await self.flush()
            self.section = position
        await getattr(self, f"take_{line.type}")(number, line)
        if line.type in COUNTED:
            self.counts[line.type] += 1
        if len(self.batch) >= BATCH:
            await self.flush()

    async def take_bank(self, number: int, line: BankLine) -> None:
        try:
            config = BankConfig.model_validate(line.config)
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            raise bad_line(number, error["msg"], ("config", *error["loc"]), error["type"]) from exc
        if await banks_repo.get_bank(self.db, self.bank_id) is not None:
            raise Conflict(f"Bank {self.bank_id!r} already exists; an import creates a new bank.")
        self.include_events = line.events
        row = {
            "id": self.bank_id,
            "name": line.name,
            "config": config.model_dump(),
            "created_at": line.created_at,
            "updated_at": line.updated_at,
        }
        try:
            async with self.db.begin_nested():
                await repo.insert_rows(self.db, "bank", [row])
        except IntegrityError as exc:  # created meanwhile by another request
            raise Conflict(f"Bank {self.bank_id!r} already exists; an import creates a new bank.") from exc

    async def take_session(self, number: int, line: SessionLine) -> None:
        if line.session_id in self.sessions:
            raise bad_line(number, "a second line of this session", ("session_id",))
        if line.distilled_seq > line.last_seq:
            raise bad_line(number, "greater than last_seq", ("distilled_seq",))
        self.sessions[line.session_id] = line.last_seq
        row = line.model_dump(exclude={"type"}) | {"bank_id": self.bank_id}
        self.batch.append((number, row))

    def known_session(self, number: int, session_id: str | None, loc: tuple[str | int, ...]) -> None:
        if session_id is not None and session_id not in self.sessions:
            raise bad_line(number, f"session {session_id!r} has no session line before it", loc)

    async def take_event(self, number: int, line: EventLine) -> None:
        if not self.include_events:
            raise bad_line(number, "the bank line says the stream holds no events", ("type",))
        self.known_session(number, line.session_id, ("session_id",))
        # (a session's events in seq order, each once; sessions in any order: how a database sorts their
        # ids depends on its collation)
        if line.seq <= self.last_seq.get(line.session_id, 0):
            raise bad_line(number, "a session's events come in seq order, each once", ("seq",))
        if line.seq > self.sessions[line.session_id]:
            raise bad_line(number, "beyond its session's last_seq", ("seq",))
        self.last_seq[line.session_id] = line.seq
        self.batch.append((number, line.model_dump(exclude={"type"}) | {"bank_id": self.bank_id}))

    async def take_memory(self, number: int, line: MemoryLine) -> None:
        self.known_session(number, line.session_id, ("session_id",))
        for i, (session_id, _) in enumerate(line.source_events):
            self.known_session(number, session_id, ("source_events", i))
        row = line.model_dump(exclude={"type", "source_events", "claim"}) | {
            "bank_id": self.bank_id,
            "id": self.new_id(line.id),
            "search_text": "",  # the batch's, built off the event loop in `flush`
            "source_event_ids": [],
            "supersedes": self.maybe(line.supersedes),
            "superseded_by": self.maybe(line.superseded_by),
            "merged_into": self.maybe(line.merged_into),
            "merged_from": [self.new_id(m) for m in line.merged_from],
            "proposed_update_of": self.maybe(line.proposed_update_of),
            "embedding_model": None,  # no vector yet: the reembed job makes them and sets it
            "metadata": self.remapped(line.metadata, UNIT_REFERENCES_IN_METADATA),
        }
        for name in ("supersedes", "superseded_by", "merged_into", "proposed_update_of"):
            if row[name] is not None:
                self.refs.append({"line": number, "field": name, "ref": row[name]})
        self.refs.extend({"line": number, "field": "merged_from", "ref": ref} for ref in row["merged_from"])
        self.batch.append((number, row))
        self.sources.append([(s, q) for s, q in line.source_events] if self.include_events else [])

    async def take_entity(self, number: int, line: EntityLine) -> None:
        row = line.model_dump(exclude={"type", "entity_type"}) | {
            "bank_id": self.bank_id,
            "id": self.new_id(line.id),
            "type": line.entity_type,
        }
        self.batch.append((number, row))

    async def take_link(self, number: int, line: LinkLine) -> None:
        row = {
            "bank_id": self.bank_id,
            "memory_id": self.new_id(line.memory_id),
            "entity_id": self.new_id(line.entity_id),
        }
        self.batch.append((number, row))

    async def take_relation(self, number: int, line: RelationLine) -> None:
        row = line.model_dump(exclude={"type"}) | {
            "bank_id": self.bank_id,
            "id": self.new_id(line.id),
            "subject_id": self.new_id(line.subject_id),
            "object_id": self.new_id(line.object_id),
            "memory_id": self.maybe(line.memory_id),
        }
        self.batch.append((number, row))

    def remapped(self, values: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
        """`values` with the unit ids under `keys` (an id, or a list of them) rewritten as this import's;
        what is not an id is left as written."""
        out = dict(values)
        for key in keys:
            value = out.get(key)
            if isinstance(value, str):
                out[key] = self._remapped_id(value)
            elif isinstance(value, list):
                out[key] = [self._remapped_id(v) if isinstance(v, str) else v for v in value]
        return out

    def _remapped_id(self, value: str) -> str:
        try:
            return str(self.new_id(uuid.UUID(value)))
        except ValueError:
            return value

    async def take_history(self, number: int, line: HistoryLine) -> None:
        details = self.remapped(line.details, UNIT_REFERENCES_IN_DETAILS)
        row = {
            "bank_id": self.bank_id,
            "memory_id": self.new_id(line.memory_id),
            "action": line.action,
            "actor": line.actor,
            "agent_id": line.agent_id,
            "at": line.at,
            "details": details,
        }
        self.batch.append((number, row))

    async def take_end(self, number: int, line: EndLine) -> None:
        for kind in COUNTED:
            said = line.counts.get(kind, 0)
            if said != self.counts[kind]:
                raise bad_line(
                    number,
                    f"says {said} {kind} lines, the stream holds {self.counts[kind]}: it is incomplete",
                    ("counts", kind),
                )
        self.ended = True

    async def flush(self) -> None:
        """Write the batch of the current section (checked first where the schema cannot check)."""
        if not self.batch:
            return
        kind = SECTIONS[self.section]
        batch, self.batch = self.batch, []
        if kind == "memory":
            await self._resolve_sources(batch)
            # jieba segments Chinese at ~5 ms a kilobyte: on the loop, a large import would hold every
            # other request of this process (health checks included) for seconds.
            texts = await asyncio.to_thread(search_texts, [row["content"] for _, row in batch])
            for (_, row), text in zip(batch, texts, strict=True):
                row["search_text"] = text
            await asyncio.to_thread(_with_claims, [row for _, row in batch])
        if kind == "history":
            ids = list({row["memory_id"] for _, row in batch})
            found = await repo.existing_units(self.db, self.bank_id, ids)
            for number, row in batch:
                if row["memory_id"] not in found:
                    raise bad_line(number, "no memory line of this id", ("memory_id",))
        try:
            async with self.db.begin_nested():
                await repo.insert_rows(self.db, kind, [row for _, row in batch])
        except IntegrityError:
            await self._one_by_one(kind, batch)
        if kind == "memory":
            await repo.add_references(self.db, self.refs)
            self.refs = []

    async def _resolve_sources(self, batch: list[tuple[int, dict[str, Any]]]) -> None:
        sources, self.sources = self.sources, []
        wanted = list({pair for pairs in sources for pair in pairs})
        ids = await repo.event_ids(self.db, self.bank_id, wanted)
        for (number, row), pairs in zip(batch, sources, strict=True):
            for i, pair in enumerate(pairs):
                if pair not in ids:
                    raise bad_line(
                        number, f"no event line at session {pair[0]!r}, seq {pair[1]}", ("source_events", i)
                    )
            row["source_event_ids"] = [ids[pair] for pair in pairs]

    async def _one_by_one(self, kind: str, batch: list[tuple[int, dict[str, Any]]]) -> None:
        """The batch broke a constraint: insert its rows one at a time to name the line that does."""
        for number, row in batch:
            try:
                async with self.db.begin_nested():
                    await repo.insert_rows(self.db, kind, [row])
            except IntegrityError as exc:
                constraint = _constraint(exc)
                what = (
                    "refers to a row that is not in the stream"
                    if constraint.startswith("fk_")
                    else "repeats the key of an earlier line"
                )
                raise bad_line(number, f"{what} ({constraint})", kind=constraint) from exc

    async def finish(self, number: int) -> Job:
        if self.section < 0:
            raise bad_line(max(number, 1), "the stream is empty: it must start with the bank line")
        if not self.ended:
            raise bad_line(number + 1, "the stream ends without its end line: it was cut short", ("type",))
        dangling = await repo.first_dangling_reference(self.db, self.bank_id)
        if dangling is not None:
            raise bad_line(dangling[0], "no memory line of this id", (dangling[1],))
        await repo.inherit_search_texts(self.db, self.bank_id)
        job, _ = await jobs.create(
            self.db,
            REEMBED,
            bank_id=self.bank_id,
            params={"bank_id": self.bank_id},
            dedupe_key=composite_key(REEMBED, self.bank_id),
        )
        enqueue(self.db, job)
        return job


def _with_claims(rows: list[dict[str, Any]]) -> None:
    """Set each unit's claim columns: its line's claims as given, or (an older export, or claims this
    version cannot read) read again from its content and tags, as every write reads them."""
    for row in rows:
        row.update(claim_columns_of(row["content"], row["tags"], row["claims"]))


async def import_bank(
    db: AsyncSession, bank_id: str, chunks: AsyncIterator[bytes], *, max_bytes: int
) -> tuple[Job, dict[str, int]]:
    """Create `bank_id` from an export stream in the caller's transaction; the `reembed` job to send
    once it commits, and the counts of lines imported by type. Raises Invalid (422) for the first bad
    line, Conflict (409) if the bank exists, TooLarge (413) past `max_bytes`: then roll back."""
    importer = Importer(db, bank_id)
    await repo.create_reference_table(db)
    number = 0
    async for number, raw in read_lines(chunks, max_bytes):
        if raw.strip():
            await importer.take(number, parse(number, raw))
    await importer.flush()
    job = await importer.finish(number)
    return job, {kind: importer.counts[kind] for kind in COUNTED}
