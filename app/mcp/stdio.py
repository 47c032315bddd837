"""`hindsight mcp`: the MCP tools over stdio for hosts that launch a local process, in URL mode — a
proxy to a running Hindsight's `/mcp` endpoint (HINDSIGHT_URL, HINDSIGHT_API_KEY).

The tools, their schemas and all authorization stay in the service: this process holds no database
credentials and forwards `tools/list` and `tools/call` as they are. Each forwarded message opens a
short connection of its own, so the proxy may start before the service and outlives its restarts. When
the service cannot be reached `tools/list` still answers (the list is static) and a tool call answers
with an error result that says which: unreachable, the key refused, or HINDSIGHT_API_KEY not set."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client import Transport
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)

from app.mcp import INSTRUCTIONS, NAME, PATH, TITLE

log = logging.getLogger(__name__)

DEFAULT_URL = "http://localhost:8000"
TIMEOUT = httpx2.Timeout(30.0, read=120.0)
RATE_LIMIT_RETRIES = 3  # a 429 is retried this often, each after its Retry-After (at most 10 s)
RATE_LIMIT_MAX_WAIT = 10.0


def endpoint(url: str) -> str:
    """The `/mcp` endpoint of a service URL (given with or without the path)."""
    url = url.rstrip("/")
    return url if url.endswith(PATH) else url + PATH


class Upstream:
    """The running Hindsight the proxy forwards to."""

    def __init__(self, url: str, api_key: str, agent_id: str | None = None) -> None:
        self.url = endpoint(url)
        self.api_key = api_key
        self.agent_id = agent_id  # sent as X-Agent-Id: the agent its writes are recorded as

    async def list_tools(self, cursor: str | None) -> ListToolsResult:
        async with self._client() as client:
            return await client.list_tools(cursor=cursor)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None) -> CallToolResult:
        async with self._client() as client:
            return await client.call_tool(name, arguments)

    def _client(self) -> Client:
        transport: Transport = _transport(self.url, self.api_key, self.agent_id)
        return Client(transport, cache=None)


class RetryAfter429(httpx2.AsyncBaseTransport):
    """Retries a request the service refused with 429 (its per-key rate limit) after the `Retry-After`
    it asked for, a bounded number of times; the SDK would otherwise turn a 429 into an opaque error.
    A 429 is refused before anything is done, so sending the request again is always safe."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()  # the body can be sent again
        for _ in range(RATE_LIMIT_RETRIES):
            response = await self._inner.handle_async_request(request)
            if response.status_code != 429:
                return response
            await response.aclose()
            retry_after = response.headers.get("retry-after", "")
            delay = float(retry_after) if retry_after.isdigit() else 1.0
            log.info("rate limited by %s; retrying in %.0f s", request.url, delay)
            await anyio.sleep(min(delay, RATE_LIMIT_MAX_WAIT))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@asynccontextmanager
async def _transport(url: str, api_key: str, agent_id: str | None = None) -> AsyncIterator[Any]:
    """The SDK's Streamable HTTP transport on an HTTP client that sends the key (and the agent) and is
    closed after."""
    headers = {"Authorization": f"Bearer {api_key}"}
    if agent_id:
        headers["X-Agent-Id"] = agent_id
    retrying = RetryAfter429(httpx2.AsyncHTTPTransport())
    async with (
        httpx2.AsyncClient(headers=headers, timeout=TIMEOUT, transport=retrying) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def _root(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:  # the SDK's task groups wrap the cause
        exc = exc.exceptions[0]
    return exc


NO_KEY = (
    "HINDSIGHT_API_KEY is not set: give `hindsight mcp` a bank key (or the admin key) of the service in "
    "its environment (the host's MCP config `env`)."
)


def _unreachable(upstream: Upstream, exc: BaseException) -> str:
    return (
        f"Hindsight at {upstream.url} could not be reached ({type(exc).__name__}: {exc}); is it running "
        "(`make up`), and is HINDSIGHT_URL right?"
    )


async def diagnose(upstream: Upstream, exc: BaseException) -> str:
    """Why a forwarded message failed, in words a user can act on: the service is unreachable, it
    refused the key, or it answered with an error. An HTTP 401 reaches the SDK only as "Server
    returned an error response", so the key is checked on `GET /v1/whoami`."""
    root = _root(exc)
    if isinstance(root, httpx2.TransportError):
        return _unreachable(upstream, root)
    base = upstream.url.removesuffix(PATH)
    try:
        async with httpx2.AsyncClient(timeout=10.0) as http:
            whoami = await http.get(
                f"{base}/v1/whoami", headers={"Authorization": f"Bearer {upstream.api_key}"}
            )
    except httpx2.TransportError as probe:
        return _unreachable(upstream, probe)
    if whoami.status_code == 401:
        return (
            f"Hindsight at {upstream.url} refused the key (401 Unauthorized): HINDSIGHT_API_KEY must be a "
            "bank key or the admin key of that service (a revoked key is refused too)."
        )
    return f"Hindsight at {upstream.url} answered with an error ({type(root).__name__}: {root})."


def static_tools() -> ListToolsResult:
    """The tool list the service serves (it is static), for when the service cannot be asked."""
    from app.mcp.tools import TOOLS

    return ListToolsResult(tools=[spec.tool() for spec in TOOLS.values()])


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build_proxy(upstream: Upstream) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        if not upstream.api_key:
            return static_tools()
        try:
            return await upstream.list_tools(params.cursor if params else None)
        except Exception as exc:
            # The list is static: answer it anyway; the calls will then say what is wrong.
            log.warning("tools/list could not be forwarded (%s); answering the built-in list", _root(exc))
            return static_tools()

    async def call_tool(ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams) -> CallToolResult:
        if not upstream.api_key:
            return _error(NO_KEY)
        try:
            return await upstream.call_tool(params.name, params.arguments)
        except Exception as exc:
            text = await diagnose(upstream, exc)
            log.warning("tools/call %s failed: %s", params.name, text)
            return _error(text)

    return Server(
        NAME,
        title=TITLE,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve(upstream: Upstream) -> None:
    server = build_proxy(upstream)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(url: str | None = None) -> int:
    """The `hindsight mcp` verb: serve on stdin/stdout until the host closes them."""
    api_key = os.environ.get("HINDSIGHT_API_KEY", "")
    if not api_key:  # still served, so the host shows the tools and each call says what is missing
        log.error(NO_KEY)
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # not a line per forwarded request
    upstream = Upstream(
        url or os.environ.get("HINDSIGHT_URL") or DEFAULT_URL, api_key, os.environ.get("HINDSIGHT_AGENT_ID")
    )
    log.info("MCP over stdio, forwarding to %s", upstream.url)
    anyio.run(serve, upstream)
    return 0
