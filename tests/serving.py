"""An ASGI app served by uvicorn in a thread of the test process (its own event loop), for the fake
OpenAI server and the fuzzer's live API."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


@contextmanager
def serve_in_thread(
    config: uvicorn.Config, *, sock: socket.socket | None = None, start_within: float, stop_within: float
) -> Iterator[None]:
    """Start the server (on `sock` when given, else on the config's host and port), wait until it
    accepts connections, and stop it when the block ends."""
    server = uvicorn.Server(config)
    kwargs: dict[str, Any] = {"sockets": [sock]} if sock is not None else {}
    thread = threading.Thread(target=server.run, kwargs=kwargs, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_within
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server exited before it started")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server did not start within {start_within:g} s")
        time.sleep(0.02)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(stop_within)
