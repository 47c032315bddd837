"""The load: LoCoMo's turns (one Chinese turn in ten) appended by concurrent clients, each to its
own rotating sessions, over a lean keep-alive HTTP client; the bank and its `write` key it uses."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from bench.harness.measure import log, percentiles
from bench.harness.services import LOCOMO

ZH_TURNS = (
    "我下周三要去上海出差，帮我记一下。",
    "预算不超过八千块，最好能在周五之前定下来。",
    "我对花生过敏，订餐的时候别选带坚果的。",
    "上次说的那家火锅店不错，下次还想去。",
    "我女儿今年九月上小学一年级了。",
    "合同我已经发给法务了，还在等他们确认。",
    "其实我更喜欢靠窗的座位，麻烦改一下。",
    "我们公司刚搬到杭州，通勤方便多了。",
)


def turn_texts(limit: int = 5000) -> list[tuple[str, str]]:
    """(speaker, text) pairs: LoCoMo's turns, one Chinese turn in ten."""
    texts: list[tuple[str, str]] = []
    if LOCOMO.exists():
        from app.eval.locomo import load_dataset

        for conversation in load_dataset(LOCOMO):
            texts += [(t.speaker or "user", t.text) for t in conversation.turns]
    if not texts:  # the data set is not there: plain English turns
        texts = [("Ana", f"I booked the table for {n} people at seven, see you there.") for n in range(2, 12)]
    mixed: list[tuple[str, str]] = []
    for i, item in enumerate(texts[:limit]):
        mixed.append(item)
        if i % 9 == 8:
            mixed.append(("小王", ZH_TURNS[i % len(ZH_TURNS)]))
    return mixed


class Client:
    """A lean asyncio HTTP/1.1 keep-alive client (aiohttp: about a tenth of httpx's async client's
    CPU per request here, and the client shares the machine's cores with the server)."""

    def __init__(self, base: str, key: str, connections: int) -> None:
        import aiohttp

        self._session = aiohttp.ClientSession(
            base,
            headers={"Authorization": f"Bearer {key}", "content-type": "application/json"},
            connector=aiohttp.TCPConnector(limit=connections),
            timeout=aiohttp.ClientTimeout(total=60),
        )

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        async with self._session.post(path, data=json.dumps(body).encode()) as response:
            return response.status, await response.json(content_type=None)

    async def aclose(self) -> None:
        await self._session.close()


async def run_phase(
    client: Client,
    bank_id: str,
    *,
    label: str,
    requests: int,
    concurrency: int,
    batch_size: int,
    sessions: int,
    texts: list[tuple[str, str]],
    id_prefix: str,
) -> dict[str, Any]:
    """`requests` appends of `batch_size` turns by `concurrency` callers; caller c appends to its
    own sessions c, c + concurrency, … in turn, so no two callers wait on one session's lock."""
    latencies: list[float] = []
    events = 0
    failures: dict[str, int] = {}
    next_index = 0
    per_caller_sessions = max(1, sessions // concurrency)

    async def caller(c: int) -> None:
        nonlocal next_index, events
        turn = 0
        while next_index < requests:
            i = next_index
            next_index += 1
            session = f"{label}-{c + concurrency * (turn % per_caller_sessions)}"
            turn += 1
            batch = []
            for j in range(batch_size):
                speaker, text = texts[(i * batch_size + j) % len(texts)]
                batch.append(
                    {
                        "role": "user" if j % 2 == 0 else "assistant",
                        "speaker": speaker,
                        "content": text,
                        "external_id": f"{id_prefix}{i}-{j}",
                    }
                )
            t = time.perf_counter()
            status, body = await client.post(
                f"/v1/banks/{bank_id}/sessions/{session}/events", {"events": batch}
            )
            latencies.append((time.perf_counter() - t) * 1000)
            if status != 202:
                failures[str(status)] = failures.get(str(status), 0) + 1
                log(f"  {status}: {str(body)[:200]}")
            else:
                events += int(body["appended"])

    started = time.perf_counter()
    await asyncio.gather(*(caller(c) for c in range(concurrency)))
    wall = time.perf_counter() - started
    return {
        "requests": requests,
        "concurrency": concurrency,
        "batch_size": batch_size,
        "sessions": min(sessions, concurrency * per_caller_sessions),
        "events": events,
        "failures": failures,
        "wall_s": round(wall, 2),
        "events_per_s": round(events / wall, 1),
        "requests_per_s": round(requests / wall, 1),
        "latency_ms": percentiles(latencies),
    }


async def setup_bank(base: str, admin_key: str, bank_id: str) -> str:
    """The bank and a bank key with the `write` scope (what an agent appends with)."""
    import httpx

    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {admin_key}"}) as c:
        (await c.post("/v1/banks", json={"bank_id": bank_id})).raise_for_status()
        response = await c.post(f"/v1/banks/{bank_id}/keys", json={"scopes": ["write"]})
        response.raise_for_status()
        return str(response.json()["key"])
