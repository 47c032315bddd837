"""The one stand-in the project allows: a local OpenAI-compatible HTTP server for the LLM path.
The real `openai` SDK talks to it over HTTP."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI

from app.embedded import free_port


def deterministic_vector(text: str, dim: int) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [((digest[i % len(digest)] + i) % 17) - 8.0 for i in range(dim)]


def create_fake_openai(dim: int = 384) -> FastAPI:
    app = FastAPI()
    app.state.requests = []

    @app.post("/v1/embeddings")
    async def embeddings(body: dict[str, Any]) -> dict[str, Any]:
        app.state.requests.append(("embeddings", body))
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": deterministic_vector(text, dim)}
            for i, text in enumerate(inputs)
        ]
        return {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }

    return app


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Run the app on a loopback port in a thread; yield its `/v1` base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise TimeoutError("fake OpenAI server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(5)
