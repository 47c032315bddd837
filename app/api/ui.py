"""The web console at `/ui`: static assets shipped in `app/ui/static`, one HTML shell for every deep link,
and `GET /v1/whoami`, the one read the console needs that no other route gives (which key is this)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse
from pydantic import Field
from starlette.datastructures import MutableHeaders
from starlette.routing import Mount, Route, Router
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.deps import PrincipalDep
from app.schemas.common import ReadSchema
from app.schemas.problems import AUTHENTICATED

STATIC = Path(__file__).resolve().parent.parent / "ui" / "static"

# Scripts and styles only from the console's own files: no inline script, no eval, no other origin,
# no framing. `connect-src 'self'` keeps the key on this origin.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class Whoami(ReadSchema):
    """The caller's key: the admin key, or a key of one bank with its scopes."""

    admin: bool
    bank_id: str | None = Field(description="The bank of a bank key; null for the admin key.")
    scopes: list[str] = Field(description="`read`, `write`, `propose`, `review`; all four for the admin key.")
    agent_id: str | None = Field(default=None, description="The agent a bank key acts as; null when none.")


router = APIRouter(tags=["console"], responses=AUTHENTICATED)


@router.get("/v1/whoami", response_model=Whoami)
async def whoami(principal: PrincipalDep) -> Whoami:
    """Which key this is: the admin key, or a bank key with its bank and scopes (no secret in it)."""
    if principal.is_admin:
        return Whoami(admin=True, bank_id=None, scopes=["propose", "read", "review", "write"])
    return Whoami(
        admin=False, bank_id=principal.bank_id, scopes=sorted(principal.scopes), agent_id=principal.agent_id
    )


class SecurityHeaders:
    """Adds SECURITY_HEADERS to every response of the wrapped app (the console, not the API)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _shell(_: object) -> FileResponse:
    # Every deep link (/ui/banks/x/memories/y …) gets the same shell; the client routes it.
    # The headers here too: `/ui` itself is a route of the app, outside the SecurityHeaders mount.
    return FileResponse(STATIC / "index.html", headers={**SECURITY_HEADERS, "Cache-Control": "no-cache"})


def mount(app: FastAPI) -> None:
    """Serve the console at `/ui` and add `GET /v1/whoami`."""
    app.include_router(router)
    console = SecurityHeaders(
        Router(
            routes=[
                Mount("/static", StaticFiles(directory=STATIC)),
                Route("/{path:path}", _shell),
            ]
        )
    )
    app.add_route("/ui", _shell, include_in_schema=False)  # the mount answers /ui/… only
    app.mount("/ui", console)
