"""The stand-in for a rerank model (the same allowance as the fake LLM: no model is reachable here): a
local HTTP server speaking Hugging Face TEI's `POST /rerank` and the Cohere / Jina / vLLM
`POST /v1/rerank`, scoring each text by the words it shares with the query (a deterministic toy, not a
model), plus 1 for a text holding one of `favour`'s words. Its answer waits `delay` seconds (ending early
when the client hangs up) or fails with `status`.

    python -m tests.fake_rerank --port 8089 --delay-ms 5    # what bench.query_latency --rerank-overhead runs
"""

from __future__ import annotations

import argparse
import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from app.embedded import free_port
from tests.serving import serve_in_thread

_WORD = re.compile(r"[A-Za-z0-9]+|[\u4e00-\u9fff]")


def score(query: str, text: str, favour: tuple[str, ...] = ()) -> float:
    """Words of the query found in the text, over the query's words; +1 for a favoured word."""
    wanted = {w.lower() for w in _WORD.findall(query)}
    found = {w.lower() for w in _WORD.findall(text)}
    shared = len(wanted & found) / len(wanted) if wanted else 0.0
    return round(shared + (1.0 if any(f.lower() in text.lower() for f in favour) else 0.0), 6)


def create_fake_rerank() -> FastAPI:
    """`app.state`: `delay` (seconds), `status` (non-200 to fail), `favour` (words), `garbage` (answer
    something unreadable), `requests` (each `(path, body)` received)."""
    app = FastAPI()
    app.state.delay = 0.0
    app.state.status = 200
    app.state.favour = ()
    app.state.garbage = False
    app.state.requests = []

    async def wait(request: Request) -> None:
        delay: float = app.state.delay
        if delay <= 0.05:
            await asyncio.sleep(delay)
            return
        for _ in range(round(delay / 0.02)):
            if await request.is_disconnected():
                return
            await asyncio.sleep(0.02)

    def scored(query: str, texts: list[str]) -> list[tuple[int, float]]:
        pairs = [(i, score(query, t, app.state.favour)) for i, t in enumerate(texts)]
        return sorted(pairs, key=lambda p: -p[1])

    def refused() -> JSONResponse | None:
        if app.state.status != 200:
            return JSONResponse({"error": "scripted failure"}, status_code=app.state.status)
        if app.state.garbage:
            return JSONResponse({"unexpected": True})
        return None

    @app.post("/rerank")
    async def tei(body: dict[str, Any], request: Request) -> Any:
        app.state.requests.append(("/rerank", body))
        await wait(request)
        return refused() or [{"index": i, "score": s} for i, s in scored(body["query"], body["texts"])]

    @app.post("/v1/rerank")
    async def cohere(body: dict[str, Any], request: Request) -> Any:
        app.state.requests.append(("/v1/rerank", body))
        await wait(request)
        top = scored(body["query"], body["documents"])[: body.get("top_n") or None]
        results = [{"index": i, "relevance_score": s} for i, s in top]
        return refused() or {"id": f"rerank-{len(app.state.requests)}", "results": results, "meta": {}}

    return app


@contextmanager
def serve_rerank(app: FastAPI, port: int | None = None) -> Iterator[str]:
    """Run the fake on a loopback port (uvicorn in a thread); yield its base URL."""
    port = port or free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    with serve_in_thread(config, start_within=10, stop_within=5):
        yield f"http://127.0.0.1:{port}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay-ms", type=float, default=5.0, help="each answer waits this long")
    args = parser.parse_args()
    app = create_fake_rerank()
    app.state.delay = args.delay_ms / 1000
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
