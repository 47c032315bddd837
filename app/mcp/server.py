"""The MCP server: five memory tools, each a thin call into the same services as the REST routes, served
as Streamable HTTP at `/mcp` inside the FastAPI app with the same bearer keys and bank isolation.

Tool names are a contract: an incompatible change gets a new name (`memory_write_v2`), never a new
meaning under an old one. Input schemas are flat (no anyOf/oneOf/$ref, one level of nesting at most),
arguments are validated leniently ("5" → 5, a bare or JSON-encoded string for a list), and every failure
(bad arguments, unknown tool, another bank, a service down) is a tool result with `isError`, never a
protocol error or a 500."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import FastAPI
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.banks import service as banks
from app.banks.config import ConfiguredBank
from app.banks.service import Principal
from app.config import Settings
from app.db.models import MemoryUnit
from app.db.repositories import events as events_repo
from app.errors import AppError, Invalid, NotFound, Unauthorized, Unavailable, problem
from app.events.working_memory import WorkingMemory
from app.jobs import service as jobs
from app.jobs.queue import TaskQueue
from app.jobs.schedule import schedule_distill
from app.mcp import INSTRUCTIONS, NAME, PATH, TITLE
from app.memory import service as memory
from app.providers.embeddings import Embedder
from app.query import service as query_service
from app.query.recorder import ReadRecorder
from app.resolve.judge import LLMJudge
from app.resolve.service import resolve_pending
from app.schemas.common import TAG_PATTERN, Slug
from app.schemas.memories import Content, MemoryCreate, MemoryPatch, MemoryRead, Score
from app.schemas.query import QueryRequest, QueryResult

log = logging.getLogger(__name__)

PRINCIPAL = "hindsight.principal"  # where the endpoint leaves the authenticated caller in the request scope


# --- arguments -------------------------------------------------------------------------------------------


def _listify(value: Any) -> Any:
    """Models often send a list as a JSON string, or one tag as a bare string: accept both."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                return json.loads(text)
            except ValueError:
                return value
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


Tag = Annotated[str, Field(pattern=TAG_PATTERN)]
TAGS_HELP = (
    "Dotted kinds: fact, preference, constraint, task_state, correction, episode, or a child such as "
    "constraint.budget or preference.food."
)
BANK_HELP = "The memory bank. Leave out with a bank key (its own bank); the admin key must give it."


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WriteArguments(_Arguments):
    content: Content = Field(description='One self-contained sentence, e.g. "Ana\'s budget is 5000 EUR."')
    tags: Annotated[list[Tag], BeforeValidator(_listify)] = Field(
        min_length=1, max_length=16, description=TAGS_HELP
    )
    importance: Score | None = Field(default=None, description="0 to 1; default 0.5.")
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


class QueryArguments(_Arguments):
    query: str = Field(min_length=1, max_length=2000, description="What you want to know, in plain words.")
    top_k: int | None = Field(
        default=None, ge=1, le=100, description="At most this many memories; default 10."
    )
    tags: Annotated[list[Tag] | None, BeforeValidator(_listify)] = Field(
        default=None, max_length=50, description="Only memories under these tag prefixes, e.g. constraint."
    )
    session_id: Slug | None = Field(
        default=None, description="The current session: its recent turns not yet distilled are added."
    )
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


class UpdateArguments(_Arguments):
    memory_id: uuid.UUID = Field(description="The id of an active memory, from memory_query.")
    content: Content | None = Field(default=None, description="The corrected sentence.")
    tags: Annotated[list[Tag] | None, BeforeValidator(_listify)] = Field(
        default=None, min_length=1, max_length=16, description=TAGS_HELP
    )
    importance: Score | None = Field(default=None, description="0 to 1.")
    confidence: Score | None = Field(default=None, description="0 to 1.")
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


class ForgetArguments(_Arguments):
    memory_id: uuid.UUID = Field(description="The id of the memory to forget, from memory_query.")
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


class ReflectArguments(_Arguments):
    session_id: Slug = Field(description="The session whose conversation turns to distil now.")
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


def flat_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with optional fields as their plain type (no anyOf with null, no null
    default), no titles, no unknown properties: what every MCP client and model handles."""
    schema = model.model_json_schema()
    if "$defs" in schema:
        raise ValueError(f"{model.__name__} is not flat")
    properties: dict[str, Any] = {}
    for name, raw in schema["properties"].items():
        prop = {k: v for k, v in raw.items() if k != "title"}
        variants = prop.pop("anyOf", None)
        if variants is not None:
            [kept] = [v for v in variants if v.get("type") != "null"]
            prop = {**kept, **prop}
        if "default" in prop and prop["default"] is None:
            del prop["default"]
        properties[name] = prop
    flat: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if schema.get("required"):
        flat["required"] = list(schema["required"])
    return flat


# --- results ---------------------------------------------------------------------------------------------


def _result(data: dict[str, Any], text: str | None = None) -> CallToolResult:
    body = text if text is not None else json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=body)], structured_content=data)


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _unit(model: MemoryRead) -> dict[str, Any]:
    data = model.model_dump(
        mode="json",
        include={
            "id",
            "content",
            "tags",
            "status",
            "confidence",
            "importance",
            "supersedes",
            "superseded_by",
            "merged_into",
            "created_at",
        },
    )
    return data


def _query_result(result: QueryResult) -> CallToolResult:
    memories = [{**_unit(m), "score": round(m.score, 4)} for m in result.memories]
    turns = [
        t.model_dump(mode="json", include={"seq", "role", "speaker", "content"})
        for t in result.working_memory
    ]
    data: dict[str, Any] = {
        "context": result.context,
        "ids": [m["id"] for m in memories],
        "memories": memories,
        "working_memory": turns,
    }
    lines = [result.context.strip() or "No stored memory matches."]
    if memories:
        lines += ["", "Memory ids (for memory_update / memory_forget):"]
        lines += [f"- {m['id']}: {m['content']}" for m in memories]
    if turns:
        lines += ["", "Recent turns of this session, not yet distilled:"]
        lines += [f"- {t['speaker'] or t['role']}: {t['content']}" for t in turns]
    return _result(data, "\n".join(lines))


# --- tools -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Services:
    """What the tools use, taken from the FastAPI app's state (made by its lifespan)."""

    settings: Settings
    sessionmaker: async_sessionmaker[AsyncSession]
    embedder: Embedder
    queue: TaskQueue
    working_memory: WorkingMemory
    recorder: ReadRecorder

    @classmethod
    def of(cls, app: FastAPI) -> Services:
        state = app.state
        return cls(
            settings=state.settings,
            sessionmaker=state.sessionmaker,
            embedder=state.embedder,
            queue=state.queue,
            working_memory=state.working_memory,
            recorder=state.recorder,
        )

    @asynccontextmanager
    async def db(self) -> AsyncIterator[AsyncSession]:
        """A session committed at the end when still in a transaction, as the REST dependency does."""
        async with self.sessionmaker() as db:
            yield db
            if db.in_transaction():
                await db.commit()


def actor(principal: Principal) -> str:
    return "mcp:admin" if principal.is_admin else f"mcp:key:{principal.key_id}"


async def _bank(db: AsyncSession, principal: Principal, bank_id: str | None, scope: str) -> ConfiguredBank:
    """The bank named, or the key's own; another bank's answers "not found", as in the REST API."""
    if bank_id is None:
        if principal.bank_id is None:
            raise Invalid("bank_id is required with the admin key.")
        bank_id = principal.bank_id
    return await banks.authorized_bank(db, principal, bank_id, scope)


async def memory_write(s: Services, principal: Principal, args: WriteArguments) -> CallToolResult:
    """POST /v1/banks/{bank_id}/memories?wait=true: stored, then resolved in the call."""
    body = MemoryCreate.model_validate(
        args.model_dump(include={"content", "tags", "importance"}, exclude_none=True)
    )
    async with s.db() as db:
        bank = await _bank(db, principal, args.bank_id, "write")
        unit = await memory.create(db, s.embedder, bank, body, actor(principal))
        judge = LLMJudge.from_settings(s.settings) if s.settings.judge_enabled else None
        try:
            await resolve_pending(
                db,
                bank.id,
                embedder=s.embedder,
                judge=judge.judge if judge else None,
                only=[unit.id],
                config=bank.config,
            )
        finally:
            if judge is not None:
                await judge.aclose()
        await db.commit()
        await db.refresh(unit)
        return _result(_unit(await memory.read_model(db, unit)))


async def memory_query(s: Services, principal: Principal, args: QueryArguments) -> CallToolResult:
    """POST /v1/banks/{bank_id}/query, with working memory when a session is named."""
    request = QueryRequest.model_validate(
        {
            **args.model_dump(include={"query", "top_k", "tags", "session_id"}, exclude_none=True),
            "working_memory": args.session_id is not None,
        }
    )
    deps = query_service.QueryDeps(
        embedder=s.embedder,
        working_memory=s.working_memory,
        recorder=s.recorder,
        working_memory_turns=s.settings.working_memory_max_turns,
    )
    async with s.db() as db:
        bank = await _bank(db, principal, args.bank_id, "read")
        return _query_result(await query_service.query(db, deps, bank, request))


async def memory_update(s: Services, principal: Principal, args: UpdateArguments) -> CallToolResult:
    """PATCH /v1/banks/{bank_id}/memories/{id}: a new unit supersedes the old one."""
    patch = MemoryPatch.model_validate(
        args.model_dump(include={"content", "tags", "importance", "confidence"}, exclude_none=True)
    )
    async with s.db() as db:
        bank = await _bank(db, principal, args.bank_id, "write")
        unit: MemoryUnit = await memory.update(db, s.embedder, bank, args.memory_id, patch, actor(principal))
        await db.commit()
        return _result(_unit(await memory.read_model(db, unit)))


async def memory_forget(s: Services, principal: Principal, args: ForgetArguments) -> CallToolResult:
    """DELETE /v1/banks/{bank_id}/memories/{id}: by the bank's forgetting policy (never a purge)."""
    async with s.db() as db:
        bank = await _bank(db, principal, args.bank_id, "write")
        unit = await memory.forget(db, bank, args.memory_id, actor(principal))
        await db.commit()
        return _result(_unit(await memory.read_model(db, unit)))


async def memory_reflect(s: Services, principal: Principal, args: ReflectArguments) -> CallToolResult:
    """POST /v1/banks/{bank_id}/sessions/{session_id}/distill: the job, sent after commit."""
    async with s.db() as db:
        bank = await _bank(db, principal, args.bank_id, "write")
        if await events_repo.get_session(db, bank.id, args.session_id) is None:
            raise NotFound(f"Session {args.session_id!r} not found.")
        job, created = await schedule_distill(db, bank.id, args.session_id)
        await db.commit()
        if created:
            await jobs.send_after_commit(s.sessionmaker, s.queue, [job])
        data = {"job_id": str(job.id), "session_id": args.session_id, "status": job.status}
        return _result(data)


Handler = Callable[[Services, Principal, Any], Awaitable[CallToolResult]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    arguments: type[_Arguments]
    handler: Handler
    annotations: ToolAnnotations

    def tool(self) -> Tool:
        return Tool(
            name=self.name,
            description=self.description,
            input_schema=flat_schema(self.arguments),
            annotations=self.annotations,
        )


def _hints(title: str, *, read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
    """All four hints spelled out (the spec's defaults are destructive and open-world)."""
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "memory_write",
            "Call when the user states a lasting fact, preference, constraint or decision worth recalling in "
            "later sessions. One sentence per call.",
            WriteArguments,
            memory_write,
            _hints("Remember", read_only=False, destructive=False, idempotent=False),
        ),
        ToolSpec(
            "memory_query",
            "Call before answering anything that may depend on the user's facts, preferences or earlier "
            "sessions. Returns a prompt-ready context and memory ids.",
            QueryArguments,
            memory_query,
            _hints("Recall", read_only=True, destructive=False, idempotent=True),
        ),
        ToolSpec(
            "memory_update",
            "Call when a memory returned by memory_query is wrong or out of date, to correct it by id. The "
            "old version stays in its history.",
            UpdateArguments,
            memory_update,
            _hints("Correct a memory", read_only=False, destructive=False, idempotent=False),
        ),
        ToolSpec(
            "memory_forget",
            "Call when the user asks you to forget something, or a memory (by id from memory_query) must no "
            "longer be recalled.",
            ForgetArguments,
            memory_forget,
            _hints("Forget", read_only=False, destructive=True, idempotent=True),
        ),
        ToolSpec(
            "memory_reflect",
            "Call at the end of a task or conversation to distil its turns (session_id) into memories now. "
            "Returns the job id.",
            ReflectArguments,
            memory_reflect,
            _hints("Reflect", read_only=False, destructive=False, idempotent=True),
        ),
    )
}


def _invalid(exc: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors()
    ]
    return "Invalid arguments: " + "; ".join(problems)


def _principal(ctx: ServerRequestContext[Any, Any]) -> Principal:
    scope = getattr(ctx.request, "scope", None)
    state = scope.get("state") if isinstance(scope, dict) else None
    principal = state.get(PRINCIPAL) if isinstance(state, dict) else None
    if not isinstance(principal, Principal):
        raise Unauthorized("Missing bearer token.")
    return principal


async def call_tool(
    services: Services, principal: Principal, name: str, arguments: Mapping[str, Any]
) -> CallToolResult:
    """Run one tool; every failure becomes an error result the model can read and act on."""
    spec = TOOLS.get(name)
    if spec is None:
        return _error(f"Unknown tool {name!r}; the tools are {', '.join(TOOLS)}.")
    try:
        args = spec.arguments.model_validate(dict(arguments))
        return await spec.handler(services, principal, args)
    except ValidationError as exc:
        return _error(_invalid(exc))
    except AppError as exc:
        return _error(f"{exc.title} ({exc.status}): {exc.message}")
    except (OperationalError, InterfaceError, OSError) as exc:
        log.warning("MCP tool %s: backing service unavailable: %s", name, exc)
        return _error("Service Unavailable (503): a backing service is unavailable; retry shortly.")
    except Exception:
        log.exception("MCP tool %s failed", name)
        return _error("Internal error (500): the call failed; the server log has the details.")


def build_server(app: FastAPI) -> Server[Any]:
    """The MCP server over the app's services (the app's lifespan must have made them)."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=[spec.tool() for spec in TOOLS.values()])

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        try:
            principal = _principal(ctx)
        except AppError as exc:
            return _error(f"{exc.title} ({exc.status}): {exc.message}")
        return await call_tool(Services.of(app), principal, params.name, params.arguments or {})

    def input_schema(name: str) -> dict[str, Any] | None:
        spec = TOOLS.get(name)
        return flat_schema(spec.arguments) if spec else None

    return Server(
        NAME,
        version=app.version,
        title=TITLE,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=on_call_tool,
    )


# --- HTTP ------------------------------------------------------------------------------------------------


class Endpoint:
    """`/mcp`: the bearer key is checked as for any route (401 problem+json without a valid one), then
    the SDK's Streamable HTTP transport serves the request. Stateless, JSON responses: any API process
    can answer any request, so `hindsight api --workers N` and load balancers need no session affinity."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager: StreamableHTTPSessionManager | None = getattr(self.app.state, "mcp_sessions", None)
        if manager is None:
            response = problem(503, "Service Unavailable", "The MCP endpoint is not running.")
            await response(scope, receive, send)
            return
        token = _bearer(scope)
        try:
            state = self.app.state
            async with state.sessionmaker() as db:
                principal = await banks.authenticate(db, token, state.settings.admin_key.get_secret_value())
        except AppError as exc:
            response = problem(exc.status, exc.title, exc.message, headers=exc.headers)
            await response(scope, receive, send)
            return
        except (OperationalError, InterfaceError, OSError):
            unavailable = Unavailable("The database is unavailable; retry shortly.")
            response = problem(503, unavailable.title, unavailable.message, headers={"Retry-After": "1"})
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})[PRINCIPAL] = principal
        await manager.handle_request(scope, receive, send)


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


def mount(app: FastAPI) -> None:
    """Serve MCP at `/mcp`. POST only: stateless, there is no session to DELETE and no server-initiated
    message for a GET stream to carry (it would only hold a connection open), so both answer 405, as the
    transport spec allows; clients open neither without a session id."""
    app.router.routes.append(Route(PATH, endpoint=Endpoint(app), methods=["POST"], include_in_schema=False))


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Run the MCP session manager for as long as the app runs (inside the app's lifespan).

    The manager holds an anyio task group, which must be left by the task that entered it; a lifespan
    may be entered and left by different tasks (test harnesses do), so the manager runs in a task of its
    own, stopped when the lifespan ends."""
    settings: Settings = app.state.settings
    manager = StreamableHTTPSessionManager(
        app=build_server(app),
        json_response=True,
        stateless=True,
        # Every request carries a bearer key, so the DNS-rebinding guard for unauthenticated local
        # servers is not needed; CORS (HINDSIGHT_CORS_ORIGINS) governs browsers as for the REST API.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=settings.max_body_bytes,
    )
    started, stop = asyncio.Event(), asyncio.Event()

    async def run() -> None:
        async with manager.run():
            started.set()
            await stop.wait()

    task = asyncio.create_task(run(), name="mcp-session-manager")
    waiting = asyncio.ensure_future(started.wait())
    await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    if not started.is_set():
        waiting.cancel()
        await task  # raises what stopped it
    app.state.mcp_sessions = manager
    try:
        yield
    finally:
        app.state.mcp_sessions = None
        stop.set()
        await task
