"""The MCP server: the memory tools (`tools`) served as Streamable HTTP at `/mcp` inside the FastAPI app,
with the same bearer keys and bank isolation as the REST API.

Tool names are a contract: an incompatible change gets a new name (`memory_write_v2`), never a new
meaning under an old one. Input schemas are flat (`arguments`), and every failure (bad arguments,
unknown tool, another bank, a service down) is a tool result with `isError`, never a protocol error or
a 500."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams
from sqlalchemy.exc import InterfaceError, OperationalError
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.banks import service as banks
from app.banks.service import Principal
from app.config import Settings
from app.errors import AppError, Invalid, Unauthorized, Unavailable, problem
from app.mcp import INSTRUCTIONS, NAME, PATH, TITLE
from app.mcp.arguments import flat_schema
from app.mcp.calls import error_result
from app.mcp.tools import TOOLS, call_tool
from app.ratelimit import bearer_token
from app.schemas.common import SLUG_PATTERN
from app.services import Services

PRINCIPAL = "hindsight.principal"  # where the endpoint leaves the authenticated caller in the request scope


def _principal(ctx: ServerRequestContext[Any, Any]) -> Principal:
    scope = getattr(ctx.request, "scope", None)
    state = scope.get("state") if isinstance(scope, dict) else None
    principal = state.get(PRINCIPAL) if isinstance(state, dict) else None
    if not isinstance(principal, Principal):
        raise Unauthorized("Missing bearer token.")
    return principal


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
            return error_result(f"{exc.title} ({exc.status}): {exc.message}")
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
        token = bearer_token(scope)
        try:
            state = self.app.state
            async with state.sessionmaker() as db:
                principal = await banks.authenticate(db, token, state.settings.admin_key.get_secret_value())
            principal = principal.acting_as(_agent_header(scope))  # shared memory: X-Agent-Id
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


def _agent_header(scope: Scope) -> str | None:
    """The agent an `X-Agent-Id` header names (as for the REST API's writes), or None."""
    value = Headers(scope=scope).get("x-agent-id")
    if value is None:
        return None
    if len(value) > 128 or not re.fullmatch(SLUG_PATTERN, value):
        raise Invalid("The X-Agent-Id header must be a slug (letters, digits, . _ : -; at most 128).")
    return value


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
