"""The client against the real stack over real HTTP: the app served by uvicorn on a loopback port (as
tests/integration/test_mcp.py does), and a TCP proxy in front of it that can drop the server's replies."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

import pytest
from hindsight_memory import Hindsight

from tests.conftest import ADMIN_KEY, Stack, wait_for

T = TypeVar("T")


@pytest.fixture(scope="session")
def service(stack: Stack) -> Iterator[str]:
    """The real app on a loopback port (uvicorn in a thread, lifespan included); its base URL."""
    from app.config import get_settings
    from app.main import create_app
    from tests.fake_openai import serve

    with serve(create_app(get_settings())) as url:
        yield url.removesuffix("/v1")


@pytest.fixture(scope="package", autouse=True)
async def leave_the_worker_idle(sql: Any) -> AsyncIterator[None]:
    """After these tests, wait until the jobs they caused (the distillation a close starts, the
    resolution after it) have run: the next module starts with an idle worker and no pending unit."""
    yield

    async def idle() -> bool:
        [row] = await sql(
            "SELECT (SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')) AS jobs,"
            " (SELECT count(*) FROM memory_units WHERE status = 'pending') AS pending"
        )
        return bool(row["jobs"] == 0 and row["pending"] == 0)

    await wait_for(idle, within=180, interval=0.2)


@pytest.fixture
def hs(service: str) -> Iterator[Hindsight]:
    """The sync client with the admin key."""
    with Hindsight(service, ADMIN_KEY) as client:
        yield client


def new_bank(hs: Hindsight, **config: Any) -> str:
    bank_id = f"client-{uuid.uuid4().hex[:12]}"
    hs.banks.create(bank_id, config=config or None)
    return bank_id


def poll(probe: Callable[[], T | None], within: float = 60.0, interval: float = 0.2) -> T:
    """Call `probe` until it returns something other than None (as tests.conftest.wait_for, sync)."""
    deadline = time.monotonic() + within
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {within}s")
        time.sleep(interval)


def settled(hs: Hindsight, bank_id: str) -> None:
    """Wait until no unit of the bank is pending (conflict resolution runs after distillation)."""
    poll(lambda: True if not list(hs.memories.list(bank_id, status="pending")) else None)


class DroppingProxy:
    """A TCP proxy to `upstream` that, while `drop` > 0, forwards a request, waits for the whole
    reply (so the server has done the work) and closes the client's connection instead of passing the
    reply on: the client sees a broken connection after its request arrived."""

    def __init__(self, upstream: str) -> None:
        host, _, port = upstream.removeprefix("http://").partition(":")
        self.upstream = (host, int(port))
        self.drop = 0
        self.dropped = 0
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client, socket.create_connection(self.upstream) as server:
            server.settimeout(30)
            while request := _read_message(client):
                server.sendall(request)
                reply = _read_message(server)
                if self.drop > 0:
                    self.drop -= 1
                    self.dropped += 1
                    return  # the server replied; the client never hears of it
                client.sendall(reply)

    def close(self) -> None:
        self._listener.close()


def _read_message(sock: socket.socket) -> bytes:
    """One HTTP/1.1 message (headers and a Content-Length body); b"" when the peer closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


@pytest.fixture
def proxy(service: str) -> Iterator[DroppingProxy]:
    dropping = DroppingProxy(service)
    yield dropping
    dropping.close()
