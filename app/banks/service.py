"""Banks, bank keys and the authentication of callers."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.db.commit_hooks import after_commit
from app.db.models import ApiKey, Bank
from app.db.repositories import banks as repo
from app.db.repositories import events as events_repo
from app.errors import Conflict, Forbidden, Invalid, NotFound, Unauthorized
from app.schemas.banks import ADMIN_ONLY_KEYS, BankConfig, BankCreate, BankUpdate, KeyCreate

KEY_PREFIX = "hs_"


class SessionBuffers(Protocol):
    """Where sessions' recent turns are buffered outside the database (`app.events.working_memory`)."""

    async def drop(self, bank_id: str, session_ids: list[str]) -> None: ...


class AccessChanges(Protocol):
    """What API processes remember of keys and banks (`app.banks.access`), told of a change."""

    async def changed(self) -> None: ...


@dataclass(frozen=True)
class Principal:
    """Who is calling: the admin, or a key of one bank with its scopes."""

    is_admin: bool
    bank_id: str | None = None
    scopes: frozenset[str] = field(default_factory=frozenset)
    key_id: uuid.UUID | None = None
    agent_id: str | None = None  # the agent its writes are recorded as (the key's, or the request's)

    @property
    def proposes_only(self) -> bool:
        """A key whose writes wait for a review as `proposed` units: `propose` without `write`."""
        return not self.is_admin and "propose" in self.scopes and "write" not in self.scopes

    def acting_as(self, agent_id: str | None) -> Principal:
        """This caller writing as the agent a request names: allowed when its key names no agent (or
        for the admin); a key's own agent cannot be overridden (403)."""
        if agent_id is None or agent_id == self.agent_id:
            return self
        if self.agent_id is not None and not self.is_admin:
            raise Forbidden(f"This key acts as agent {self.agent_id!r}; it cannot write as {agent_id!r}.")
        return replace(self, agent_id=agent_id)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


async def authenticate(db: AsyncSession, token: str | None, admin_key: str) -> Principal:
    if not token:
        raise Unauthorized("Missing bearer token.")
    # Constant-time comparison of digests: no timing signal on the admin key.
    if admin_key and hmac.compare_digest(hash_key(token), hash_key(admin_key)):
        return Principal(is_admin=True)
    if token.startswith(KEY_PREFIX):
        key = await repo.find_active_key(db, hash_key(token))
        if key is not None:
            return Principal(
                is_admin=False,
                bank_id=key.bank_id,
                scopes=frozenset(key.scopes),
                key_id=key.id,
                agent_id=key.agent_id,
            )
    raise Unauthorized("Invalid or revoked API key.")


def require_admin(principal: Principal) -> None:
    if not principal.is_admin:
        raise Forbidden("This operation needs the admin key.")


async def authorized_bank(
    db: AsyncSession, principal: Principal, bank_id: str, scope: str | tuple[str, ...]
) -> ConfiguredBank:
    """Get the bank, if this caller may act on it with `scope` (or one of several); another bank's key
    gets 404, never 403. Its config is parsed here, once for the request."""
    if not principal.is_admin and principal.bank_id != bank_id:
        raise NotFound(f"Bank {bank_id!r} not found.")
    bank = await configured_bank(db, bank_id)
    if bank is None:
        raise NotFound(f"Bank {bank_id!r} not found.")
    wanted = (scope,) if isinstance(scope, str) else scope
    if not principal.is_admin and not principal.scopes & set(wanted):
        raise Forbidden(f"This key lacks the {' or '.join(map(repr, wanted))} scope.")
    return bank


async def configured_bank(db: AsyncSession, bank_id: str) -> ConfiguredBank | None:
    """Read the bank with its config parsed (a request's or a job's one read of it), or None."""
    row = await repo.get_bank(db, bank_id)
    return ConfiguredBank.of(row) if row is not None else None


async def create_bank(db: AsyncSession, data: BankCreate) -> Bank:
    bank = Bank(id=data.bank_id, name=data.name, config=data.config.model_dump())
    try:
        await repo.add_bank(db, bank)
    except IntegrityError as exc:
        raise Conflict(f"Bank {data.bank_id!r} already exists.") from exc
    return bank


async def update_bank(
    db: AsyncSession, bank: Bank, data: BankUpdate, access: AccessChanges, *, by_admin: bool = True
) -> Bank:
    """Rename the bank or merge `data.config` into its config (`access` is told once it commits). A bank
    key may not change what the bank's LLM calls may spend or use (`ADMIN_ONLY_KEYS`): 403."""
    touched = sorted(ADMIN_ONLY_KEYS & set(data.config or {}))
    if touched and not by_admin:
        raise Forbidden(f"Only the admin key may change {', '.join(touched)}.")
    if data.name is not None:
        bank.name = data.name
    if data.config is not None:
        merged: dict[str, Any] = {**bank.config, **data.config}
        try:
            bank.config = BankConfig.model_validate(merged).model_dump()
        except ValidationError as exc:
            errors = [
                {"loc": ["body", "config", *map(str, e["loc"])], "msg": e["msg"], "type": e["type"]}
                for e in exc.errors()
            ]
            raise Invalid("The bank config is invalid.", errors=errors) from exc
    await db.flush()
    await db.refresh(bank)
    after_commit(db, access.changed)
    return bank


async def create_key(db: AsyncSession, bank: Bank, data: KeyCreate) -> tuple[ApiKey, str]:
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey(
        id=uuid.uuid4(),
        bank_id=bank.id,
        name=data.name,
        key_hash=hash_key(secret),
        key_prefix=secret[:10],
        scopes=sorted(set(data.scopes)),
        agent_id=data.agent_id,
    )
    await repo.add_key(db, key)
    await db.refresh(key)
    return key, secret


async def revoke_key(db: AsyncSession, bank: Bank, key_id: uuid.UUID, access: AccessChanges) -> None:
    """Revoke the key; once that commits, no API process uses what it remembered of it."""
    if not await repo.revoke_key(db, bank.id, key_id):
        raise NotFound(f"Key {key_id} not found.")
    after_commit(db, access.changed)


async def list_banks(db: AsyncSession, principal: Principal, *, after: str | None, limit: int) -> list[Bank]:
    """All banks for the admin key, its own for a bank key."""
    return await repo.list_banks(
        db, after=after, limit=limit, only=None if principal.is_admin else principal.bank_id
    )


async def stats(db: AsyncSession, bank: ConfiguredBank) -> dict[str, Any]:
    return await repo.bank_stats(db, bank.id)


async def purge_bank(db: AsyncSession, bank_id: str, buffer: SessionBuffers, access: AccessChanges) -> None:
    """Delete every row of the bank; once that commits, drop its sessions' working memory in Redis and
    what API processes remember of its keys."""
    session_ids = await events_repo.all_session_ids(db, bank_id)
    if not await repo.purge_bank(db, bank_id):
        raise NotFound(f"Bank {bank_id!r} not found.")
    after_commit(db, lambda: buffer.drop(bank_id, session_ids))
    after_commit(db, access.changed)
