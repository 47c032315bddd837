"""Soak: N concurrent clients of mixed appends (single turns and small batches) and queries for D
seconds against `hindsight dev` on loopback (started here in a temporary directory), or against
`--url`/`--api-key`. Checks: no 5xx and no transport error, the bank's event count equals what the
202s acknowledged, and (when the processes are ours) the API's and the worker's RSS stay flat in the
second half. Prints a summary and writes bench/results/soak.json.

    .venv/bin/python -m bench.soak                      # 50 clients, 60 s
    .venv/bin/python -m bench.soak --clients 20 --duration 10
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench.harness import services

RESULTS = services.ROOT / "bench" / "results"
# High enough that the soak measures the service, not the per-key limiter (all clients share a key).
RATE_LIMIT_ENV = {"HINDSIGHT_RATE_LIMIT_PER_SECOND": "100000", "HINDSIGHT_RATE_LIMIT_BURST": "100000"}

SENTENCES = [
    "My budget is {n} euros.",
    "I prefer aisle seats on long flights.",
    "Actually, make that {n} instead.",
    "I live in Porto and work at Acme.",
    "Please ship order ORD-{n} to the office.",
    "I need the report by Friday.",
    "我喜欢喝绿茶。",
    "The refund for ticket TCK-{n} is pending.",
    "Thanks, that helps!",
    "Can we talk about the hotel next week?",
]
QUERIES = [
    "what is the budget?",
    "where does the user live?",
    "seat preference",
    "order status",
    "what did we say last week?",
    "喜欢什么",
]


@dataclass
class Tally:
    """What the clients saw; `acknowledged` counts events appended by 202 responses."""

    statuses: Counter[str] = field(default_factory=Counter)  # "append:202", "query:200", ...
    latencies: dict[str, list[float]] = field(default_factory=dict)
    acknowledged: int = 0
    duplicates: int = 0
    server_errors: list[str] = field(default_factory=list)  # samples
    transport_errors: list[str] = field(default_factory=list)  # samples

    def with_status(self, status: str) -> int:
        return sum(n for key, n in self.statuses.items() if key.split(":")[1] == status)

    @property
    def five_xx(self) -> int:
        return sum(n for key, n in self.statuses.items() if key.split(":")[1].startswith("5"))

    @property
    def rate_limited(self) -> int:
        return self.with_status("429")

    @property
    def transport_failures(self) -> int:
        return self.statuses["append:error"] + self.statuses["query:error"]


def _record(tally: Tally, kind: str, started: float, response: httpx.Response) -> None:
    tally.statuses[f"{kind}:{response.status_code}"] += 1
    tally.latencies.setdefault(kind, []).append(time.perf_counter() - started)
    if response.status_code >= 500 and len(tally.server_errors) < 20:
        tally.server_errors.append(f"{kind} {response.status_code}: {response.text[:300]}")


async def _client(
    client: httpx.AsyncClient, bank: str, n: int, deadline: float, tally: Tally, rng: random.Random
) -> None:
    """One agent: appends to its own sessions (a new one every ~25 turns) and queries the bank."""
    turn = 0
    while time.monotonic() < deadline:
        roll = rng.random()
        session = f"c{n}-s{turn // 25}"
        if roll < 0.3:
            kind, url = "query", f"/v1/banks/{bank}/query"
            body: dict[str, Any] = {"query": rng.choice(QUERIES), "top_k": 5}
            if turn and rng.random() < 0.3:
                body |= {"session_id": session, "working_memory": True}
        else:
            kind = "append"
            size = 1 if roll < 0.75 else rng.randint(2, 5)
            events = []
            for _ in range(size):
                text = rng.choice(SENTENCES).format(n=rng.randint(1000, 99999))
                role = "user" if turn % 2 == 0 else "assistant"
                events.append({"role": role, "content": text, "external_id": f"{n}-{turn}"})
                turn += 1
            url, body = f"/v1/banks/{bank}/sessions/{session}/events", {"events": events}
        started = time.perf_counter()
        try:
            response = await client.post(url, json=body)
        except httpx.HTTPError as exc:
            tally.statuses[f"{kind}:error"] += 1
            if len(tally.transport_errors) < 20:
                tally.transport_errors.append(f"{kind}: {type(exc).__name__}: {exc}")
            continue
        _record(tally, kind, started, response)
        if response.status_code == 202:
            result = response.json()
            tally.acknowledged += result["appended"]
            tally.duplicates += result["duplicates"]
        elif response.status_code in (429, 503):
            await asyncio.sleep(min(float(response.headers.get("retry-after", "1")), 2.0))


async def run_load(
    make_client: Callable[[], httpx.AsyncClient],
    bank: str,
    *,
    clients: int,
    duration: float,
    seed: int = 7,
    on_tick: Callable[[float], None] | None = None,
) -> Tally:
    """Run `clients` concurrent agents against `bank` for `duration` seconds. `on_tick(elapsed)` is
    called about every second (RSS sampling)."""
    tally = Tally()
    deadline = time.monotonic() + duration
    open_clients = [make_client() for _ in range(clients)]
    try:
        agents = [
            asyncio.create_task(_client(c, bank, n, deadline, tally, random.Random(seed * 1000 + n)))
            for n, c in enumerate(open_clients)
        ]
        start = time.monotonic()
        while not all(a.done() for a in agents):
            await asyncio.wait(agents, timeout=1.0)
            if on_tick is not None:
                on_tick(time.monotonic() - start)
        for agent in agents:
            agent.result()  # re-raise a client's bug
    finally:
        for c in open_clients:
            await c.aclose()
    return tally


async def stored_events(client: httpx.AsyncClient, bank: str) -> int:
    response = await client.get(f"/v1/banks/{bank}/stats")
    response.raise_for_status()
    return int(response.json()["events"])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- the processes of a `hindsight dev` we started ------------------------------------------------


def service_processes(dev_pid: int) -> dict[str, list[psutil.Process]]:
    """The API and the worker (with its pool children) among `hindsight dev`'s children."""
    found: dict[str, list[psutil.Process]] = {"api": [], "worker": []}
    for child in psutil.Process(dev_pid).children():
        cmdline = child.cmdline()
        for role in found:
            if "app.cli" in cmdline and role in cmdline:
                found[role] += [child, *child.children(recursive=True)]
    return found


def rss_mib(processes: list[psutil.Process]) -> float:
    total = 0
    for proc in processes:
        with contextlib.suppress(psutil.Error):
            total += proc.memory_info().rss
    return round(total / 2**20, 1)


# -- the command --------------------------------------------------------------------------------


async def _warm_up(client: httpx.AsyncClient) -> None:
    """Load the embedding model in the API and the worker before the first RSS sample."""
    bank = f"soak-warmup-{uuid.uuid4().hex[:8]}"
    (await client.post("/v1/banks", json={"bank_id": bank})).raise_for_status()
    events = [{"role": "user", "content": s.format(n=5000)} for s in SENTENCES[:5]]
    (await client.post(f"/v1/banks/{bank}/sessions/w/events", json={"events": events})).raise_for_status()
    (await client.post(f"/v1/banks/{bank}/query", json={"query": "budget"})).raise_for_status()
    job = (await client.post(f"/v1/banks/{bank}/sessions/w/distill")).json()["job_id"]
    deadline = time.monotonic() + 180
    while (await client.get(f"/v1/jobs/{job}")).json()["status"] not in ("succeeded", "failed"):
        if time.monotonic() > deadline:
            raise TimeoutError("the warm-up distillation did not finish")
        await asyncio.sleep(0.5)


async def soak(
    url: str, key: str, clients: int, duration: float, dev_pid: int | None, drain: float = 0.0
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"}

    def make_client() -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=url, headers=headers, timeout=60)

    async with make_client() as admin:
        await _warm_up(admin)
        bank = f"soak-{uuid.uuid4().hex[:8]}"
        (await admin.post("/v1/banks", json={"bank_id": bank})).raise_for_status()
        processes = service_processes(dev_pid) if dev_pid else {}
        rss: dict[str, list[tuple[float, float]]] = {role: [] for role in processes}

        def sample(elapsed: float) -> None:
            for role, procs in processes.items():
                if not rss[role] or elapsed - rss[role][-1][0] >= 5:
                    rss[role].append((round(elapsed, 1), rss_mib(procs)))

        sample(0.0)
        started = time.monotonic()
        tally = await run_load(make_client, bank, clients=clients, duration=duration, on_tick=sample)
        wall = time.monotonic() - started
        for role, procs in processes.items():
            rss[role].append((round(wall, 1), rss_mib(procs)))
        stored = await stored_events(admin, bank)
        stats = (await admin.get(f"/v1/banks/{bank}/stats")).json()
        drained, left = await _drain(admin, bank, drain)
    result = report(tally, stored, wall, clients, duration, rss, stats)
    result["distillation_drained_after_s"] = drained
    result["undistilled_events_after_drain"] = left
    return result


async def _drain(client: httpx.AsyncClient, bank: str, within: float) -> tuple[float | None, int]:
    """Seconds until the worker has distilled every event of the bank (None: not within `within`),
    and the undistilled events left then."""
    started = time.monotonic()
    while True:
        left = int((await client.get(f"/v1/banks/{bank}/stats")).json()["undistilled_events"])
        if left == 0:
            return round(time.monotonic() - started, 1), 0
        if time.monotonic() - started >= within:
            return None, left
        await asyncio.sleep(2)


def report(
    tally: Tally,
    stored: int,
    wall: float,
    clients: int,
    duration: float,
    rss: dict[str, list[tuple[float, float]]],
    stats: dict[str, Any],
) -> dict[str, Any]:
    memory: dict[str, Any] = {}
    for role, series in rss.items():
        start, end = series[0][1], series[-1][1]
        middle = min(series, key=lambda point: abs(point[0] - wall / 2))[1]
        # Flat in the second half (allocator noise allowed); the first half includes caches warming.
        memory[role] = {
            "start_mib": start,
            "middle_mib": middle,
            "end_mib": end,
            "stable": end <= middle * 1.10 + 16,
            "series": series,
        }
    latency = {
        kind: {
            "count": len(values),
            "p50_ms": round(statistics.median(values) * 1000, 1),
            "p95_ms": round(percentile(values, 0.95) * 1000, 1),
            "p99_ms": round(percentile(values, 0.99) * 1000, 1),
        }
        for kind, values in tally.latencies.items()
    }
    checks = {
        "no_5xx": tally.five_xx == 0,
        "no_transport_errors": tally.transport_failures == 0,
        "stored_equals_acknowledged": stored == tally.acknowledged,
        "rss_stable": all(m["stable"] for m in memory.values()),
    }
    return {
        "clients": clients,
        "duration_s": duration,
        "wall_s": round(wall, 1),
        "requests": sum(tally.statuses.values()),
        "requests_per_s": round(sum(tally.statuses.values()) / wall, 1),
        "statuses": dict(sorted(tally.statuses.items())),
        "rate_limited_429": tally.rate_limited,
        "acknowledged_events": tally.acknowledged,
        "stored_events": stored,
        "undistilled_events_at_end": stats.get("undistilled_events"),
        "latency": latency,
        "rss": memory,
        "server_error_samples": tally.server_errors,
        "transport_error_samples": tally.transport_errors,
        "checks": checks,
        "ok": all(checks.values()),
    }


def print_summary(result: dict[str, Any]) -> None:
    print(f"soak: {result['clients']} clients for {result['duration_s']} s ({result['wall_s']} s wall)")
    print(f"  requests {result['requests']} ({result['requests_per_s']}/s): {result['statuses']}")
    print(f"  429s {result['rate_limited_429']}")
    for kind, figures in result["latency"].items():
        print(
            f"  {kind:<6} p50 {figures['p50_ms']} ms  p95 {figures['p95_ms']} ms  p99 {figures['p99_ms']} ms"
        )
    print(f"  events acknowledged {result['acknowledged_events']}, stored {result['stored_events']}")
    print(
        f"  undistilled when the load stopped: {result['undistilled_events_at_end']};"
        f" drained after {result['distillation_drained_after_s']} s"
        f" ({result['undistilled_events_after_drain']} left)"
    )
    for role, m in result["rss"].items():
        print(f"  {role} RSS MiB start {m['start_mib']} middle {m['middle_mib']} end {m['end_mib']}")
    for name, ok in result["checks"].items():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    for sample in result["server_error_samples"] + result["transport_error_samples"]:
        print(f"  ! {sample}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument("--url", help="a running service (default: start `hindsight dev` on loopback)")
    parser.add_argument("--api-key", help="its admin key (with --url)")
    parser.add_argument("--out", type=Path, default=RESULTS / "soak.json")
    parser.add_argument(
        "--drain", type=float, default=180.0, help="seconds to wait for distillation to catch up after"
    )
    parser.add_argument("--keep-data", action="store_true", help="keep the dev data dir and its logs")
    args = parser.parse_args(argv)
    if bool(args.url) != bool(args.api_key):
        parser.error("--url and --api-key go together")
    if args.url:
        result = asyncio.run(soak(args.url, args.api_key, args.clients, args.duration, None, args.drain))
    else:
        from app.embedded import free_port

        env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")} | RATE_LIMIT_ENV
        with services.dev(free_port(), env, keep=args.keep_data, prefix="hindsight-soak-") as (info, proc, _):
            result = asyncio.run(
                soak(info["url"], info["api_key"], args.clients, args.duration, proc.pid, args.drain)
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print_summary(result)
    print(f"written to {args.out}")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
