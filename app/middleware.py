"""Pure ASGI middleware: request metrics and the request body size limit."""

from __future__ import annotations

import re
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import problem
from app.metrics import HTTP_LATENCY, HTTP_REQUESTS


class MetricsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route: Any = scope.get("route")
            path = getattr(route, "path", "unmatched")
            HTTP_REQUESTS.labels(scope["method"], path, str(status)).inc()
            HTTP_LATENCY.labels(scope["method"], path).observe(time.perf_counter() - start)


# The one route whose body is a stream of another format, bounded by its own reader: a bank import
# (matched whole: a bank may be named "import", and its own routes take JSON)
_IMPORT = re.compile(r"/v1/banks/[^/]+/import")


def _streams_its_body(scope: Scope) -> bool:
    return scope["method"] == "POST" and _IMPORT.fullmatch(str(scope.get("path", ""))) is not None


class BodySizeLimitMiddleware:
    """Refuse bodies over `max_bytes` with 413, whether or not Content-Length is declared. Routes that
    stream their body and bound it themselves (a bank import) are spared (`_streams_its_body`)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE")
            or _streams_its_body(scope)
        ):
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem(413, "Payload Too Large", f"The request body exceeds {self.max_bytes} bytes.")
        await response(scope, receive, send)


def _is_json(content_type: bytes | None) -> bool:
    media = (content_type or b"").split(b";", 1)[0].strip().lower()
    return media == b"application/json" or media.endswith(b"+json")


class JsonBodyMiddleware:
    """A body sent to a JSON route must say it is JSON: 415 problem+json that says what to send,
    instead of a validation error about a "dictionary". A route that takes another format (a bank
    import's NDJSON stream, `_streams_its_body`) and bodiless requests pass."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if (
            scope["type"] != "http"
            or scope["method"] not in ("POST", "PUT", "PATCH")
            or not path.startswith("/v1/")
            or _streams_its_body(scope)
            or _is_json(dict(scope["headers"]).get(b"content-type"))
        ):
            await self.app(scope, receive, send)
            return
        first = await receive()
        if first["type"] == "http.request" and (first.get("body") or first.get("more_body")):
            response = problem(
                415,
                "Unsupported Media Type",
                "Send the body as JSON with the header 'Content-Type: application/json'.",
                headers={"Accept": "application/json"},
            )
            await response(scope, receive, send)
            return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return first
            return await receive()

        await self.app(scope, replay, send)
