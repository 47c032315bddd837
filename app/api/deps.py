"""Request dependencies: the DB session (committed by the dependency), the caller, the bank."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from app.banks import service as banks
from app.banks.access import Access, AccessCache
from app.banks.config import ConfiguredBank
from app.banks.service import Principal
from app.config import Settings
from app.db.replica import ReadRouting
from app.errors import NotFound
from app.events.group_commit import AppendGroups
from app.events.working_memory import WorkingMemory
from app.jobs.unit_of_work import UnitOfWork
from app.providers.embeddings import Embedder
from app.query.service import QueryDeps
from app.ratelimit import ACCESS_GENERATION
from app.schemas.common import Slug
from app.services import Services


async def get_db(request: Request) -> AsyncIterator[AsyncSession]:
    """Open the request's unit of work: committed here, once, and only here (never by a route or a service),
    then the jobs it created are sent. Its scope is the route function's (`SessionDep`), so the commit
    comes before the response is sent: what a 2xx acknowledges is durable."""
    reads_only = getattr(request.state, "reads_only", False)
    maker = request.app.state.read_sessionmaker if reads_only else None
    async with Services.of(request.app).session(maker) as db:
        yield db


async def reads_only(request: Request) -> None:
    """A route dependency (`dependencies=[Depends(reads_only)]`, solved before the parameters' ones):
    the request's session runs outside a transaction, each statement seeing the newest commits as in
    READ COMMITTED, without the BEGIN and COMMIT round trips. For routes that write nothing."""
    request.state.reads_only = True


# The dependencies below are `async def` although they do no I/O: FastAPI runs a plain `def`
# dependency in its thread pool, a thread hand-off per dependency per request on the hot paths.
def _from_app_state(name: str) -> Callable[[Request], Awaitable[Any]]:
    """Make the dependency that gives what the lifespan put on `app.state` under `name`."""

    async def dependency(request: Request) -> Any:
        return getattr(request.app.state, name)

    return dependency


get_settings = _from_app_state("settings")
get_embedder = _from_app_state("embedder")
get_access = _from_app_state("access")
get_append_groups = _from_app_state("append_groups")
get_working_memory = _from_app_state("working_memory")


async def get_unit_of_work(request: Request) -> UnitOfWork:
    """For a route that must commit a write of its own before it answers (a reflect that waits)."""
    return Services.of(request.app).work


async def get_query_deps(request: Request) -> QueryDeps:
    return Services.of(request.app)


SessionDep = Annotated[AsyncSession, Depends(get_db, scope="function")]


async def get_read_db(request: Request, db: SessionDep) -> AsyncIterator[AsyncSession]:
    """Give a read route its session: on the read replica when one is configured and answers,
    else the request's own (primary) session. The caller's key and bank are read on the primary
    (`SessionDep`), so a key revoked or a bank created a moment ago is seen at once."""
    reads: ReadRouting = request.app.state.reads
    replica = await reads.replica_session()
    if replica is None:
        yield db
        return
    async with replica:
        yield replica


ReadSessionDep = Annotated[AsyncSession, Depends(get_read_db, scope="function")]  # routes with `reads_only`
SettingsDep = Annotated[Settings, Depends(get_settings)]


UnitOfWorkDep = Annotated[UnitOfWork, Depends(get_unit_of_work)]
QueryDepsDep = Annotated[QueryDeps, Depends(get_query_deps)]
WorkingMemoryDep = Annotated[WorkingMemory, Depends(get_working_memory)]
AppendGroupsDep = Annotated[AppendGroups, Depends(get_append_groups)]
AccessDep = Annotated[AccessCache, Depends(get_access)]
EmbedderDep = Annotated[Embedder, Depends(get_embedder)]

_bearer = HTTPBearer(auto_error=False, description="The admin key or a bank key.")


async def get_principal(
    db: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    token = credentials.credentials if credentials else None
    return await banks.authenticate(db, token, settings.admin_key.get_secret_value())


PrincipalDep = Annotated[Principal, Depends(get_principal)]


AgentIdHeader = Annotated[
    Slug | None,
    Header(
        alias="X-Agent-Id", description="The agent acting (when the key names none, or with the admin key)."
    ),
]


async def get_acting_principal(principal: PrincipalDep, agent_id: AgentIdHeader = None) -> Principal:
    """The caller as the agent its key names, or the one the `X-Agent-Id` header names (403 when it
    contradicts the key's)."""
    return principal.acting_as(agent_id)


ActingPrincipalDep = Annotated[Principal, Depends(get_acting_principal)]  # a write's author


async def require_admin(principal: PrincipalDep) -> Principal:
    banks.require_admin(principal)
    return principal


AdminDep = Annotated[Principal, Depends(require_admin)]


async def require_admin_for_bank(principal: PrincipalDep, bank_id: Slug) -> Principal:
    """Admin-only routes of one bank: another bank's key gets 404 as everywhere (never 403), a key of
    this bank 403."""
    if not principal.is_admin and principal.bank_id != bank_id:
        raise NotFound(f"Bank {bank_id!r} not found.")
    banks.require_admin(principal)
    return principal


AdminForBankDep = Annotated[Principal, Depends(require_admin_for_bank)]


async def readable_bank(db: SessionDep, principal: PrincipalDep, bank_id: Slug) -> ConfiguredBank:
    return await banks.authorized_bank(db, principal, bank_id, "read")


async def writable_bank(db: SessionDep, principal: PrincipalDep, bank_id: Slug) -> ConfiguredBank:
    return await banks.authorized_bank(db, principal, bank_id, "write")


async def contributable_bank(db: SessionDep, principal: PrincipalDep, bank_id: Slug) -> ConfiguredBank:
    return await banks.authorized_bank(db, principal, bank_id, ("write", "propose"))


async def reviewable_bank(db: SessionDep, principal: PrincipalDep, bank_id: Slug) -> ConfiguredBank:
    return await banks.authorized_bank(db, principal, bank_id, "review")


BankDep = Annotated[ConfiguredBank, Depends(readable_bank)]  # the row and its parsed config
WritableBankDep = Annotated[ConfiguredBank, Depends(writable_bank)]
# Writes a propose-only key may make too: its units then wait as `proposed` (Principal.proposes_only).
ContributableBankDep = Annotated[ConfiguredBank, Depends(contributable_bank)]
ReviewableBankDep = Annotated[ConfiguredBank, Depends(reviewable_bank)]


async def get_appender(
    request: Request,
    cache: AccessDep,
    bank_id: Slug,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    agent_id: AgentIdHeader = None,
) -> Access:
    """The caller (as the agent it acts for, as `get_acting_principal`) and the bank it appends to
    (write or propose): as this process remembers them under the current access generation
    (`app.banks.access`: no database read), else read outside a transaction and remembered. The request
    holds no connection while it waits for its group commit (a burst would otherwise hold the pool the
    group needs)."""
    token = credentials.credentials if credentials else None
    generation = request.scope.get("state", {}).get(ACCESS_GENERATION) if token else None
    if token and generation is None:  # the rate limiter is off or Redis failed
        generation = await cache.generation()
    key_hash = banks.hash_key(token) if token else ""
    access = cache.get(key_hash, bank_id, generation)
    if access is None:
        async with Services.of(request.app).session(request.app.state.read_sessionmaker) as db:
            principal = await banks.authenticate(db, token, settings.admin_key.get_secret_value())
            bank = await banks.authorized_bank(db, principal, bank_id, ("write", "propose"))
        access = Access(principal, bank)
        cache.put(key_hash, bank_id, generation, access)
    return Access(access.principal.acting_as(agent_id), access.bank)


AppenderDep = Annotated[Access, Depends(get_appender)]
