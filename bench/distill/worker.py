"""Through the worker: the events appended over HTTP to `hindsight api`, ONE `hindsight worker`
distilling them, the clock running until every session's watermark reaches its last event (and
until no unit is pending)."""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from bench.distill.conversation import BATCH
from bench.harness import measure, services
from bench.harness.measure import log


class Api:
    def __init__(self, base: str, key: str) -> None:
        import httpx

        self.client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=120)

    def bank(self, bank_id: str, config: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = {"bank_id": bank_id} | ({"config": config} if config else {})
        self.client.post("/v1/banks", json=body).raise_for_status()

    def append(self, bank_id: str, session_id: str, turns: list[dict[str, Any]]) -> int:
        appended = 0
        for i in range(0, len(turns), BATCH):
            r = self.client.post(
                f"/v1/banks/{bank_id}/sessions/{session_id}/events", json={"events": turns[i : i + BATCH]}
            )
            r.raise_for_status()
            appended += int(r.json()["appended"])
        # Closed, as a client ends a conversation: the last turns short of `distill_every_n_turns` are
        # distilled now, not after the sweep's idle delay.
        self.client.post(f"/v1/banks/{bank_id}/sessions/{session_id}/close").raise_for_status()
        return appended


async def progress(database_url: str, bank_id: str) -> dict[str, int]:
    import asyncpg

    conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        row = await conn.fetchrow(
            """SELECT coalesce(sum(last_seq - distilled_seq), 0) AS undistilled,
                      coalesce(sum(last_seq), 0) AS events,
                      (SELECT count(*) FROM memory_units
                       WHERE bank_id = $1 AND status = 'pending') AS pending,
                      (SELECT count(*) FROM memory_units WHERE bank_id = $1) AS units,
                      (SELECT count(*) FROM memory_units WHERE bank_id = $1 AND status = 'active') AS active,
                      (SELECT count(*) FROM jobs WHERE bank_id = $1 AND kind = 'distill.session') AS jobs,
                      (SELECT count(*) FROM jobs WHERE bank_id = $1 AND status = 'failed') AS failed
               FROM sessions WHERE bank_id = $1""",
            bank_id,
        )
    finally:
        await conn.close()
    return {k: int(v) for k, v in dict(row).items()}


def wait_until(database_url: str, bank_id: str, done: Any, timeout: float) -> tuple[float, dict[str, int]]:
    deadline = time.monotonic() + timeout
    while True:
        state = asyncio.run(progress(database_url, bank_id))
        if done(state):
            return time.perf_counter(), state
        if state["failed"]:
            raise RuntimeError(f"a job failed: {state}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"not done within {timeout:.0f}s: {state}")
        time.sleep(0.25)


def through_worker(
    s: services.Stack, sessions: list[tuple[str, list[dict[str, Any]]]], args: argparse.Namespace
) -> dict[str, Any]:
    admin_key = services.admin_key()
    env = services.service_env(
        s.database_url,
        s.redis_url,
        admin_key,
        HINDSIGHT_RATE_LIMIT_PER_SECOND="100000",
        HINDSIGHT_EMBEDDING_MODEL=args.embedding_model,
    )
    worker_log = s.work / "worker.log"
    with (
        services.api(env, s.work / "api.log") as (base, api_pid),
        services.child(
            ["worker", "--name", "bench-distill@%h", "--concurrency", str(args.concurrency)], env, worker_log
        ) as worker,
    ):
        api = Api(base, admin_key)
        log("  warming the worker up (model, dictionaries) …")
        api.bank("bench-warm")
        api.append("bench-warm", "warm", sessions[0][1][:20])
        wait_until(
            s.database_url, "bench-warm", lambda st: st["undistilled"] == 0 and st["pending"] == 0, 300
        )
        quiet = measure.wait_for_quiet(args.quiet_cpu, args.quiet_wait)
        bank_id = "bench-distill"
        api.bank(bank_id)
        total = sum(len(t) for _, t in sessions)
        log(f"  appending {total:,} events in {len(sessions)} sessions; one worker distils them …")
        account = measure.CpuAccount(
            lambda: [*measure.process_tree(api_pid), *measure.process_tree(worker.pid), *s.pids]
        )
        worker_cpu0 = measure.tree_cpu_s(worker.pid)
        started = time.perf_counter()
        appended = sum(api.append(bank_id, sid, turns) for sid, turns in sessions)
        appended_at = time.perf_counter()
        distilled_at, state = wait_until(
            s.database_url, bank_id, lambda st: st["undistilled"] == 0, args.timeout
        )
        worker_cpu = measure.tree_cpu_s(worker.pid) - worker_cpu0
        conditions = account.result()
        resolved_at, final = wait_until(
            s.database_url, bank_id, lambda st: st["undistilled"] == 0 and st["pending"] == 0, args.timeout
        )
        rss = measure.rss_mib(worker.pid)
    wall = distilled_at - started
    return {
        "events": appended,
        "sessions": len(sessions),
        "append_s": round(appended_at - started, 2),
        "distilled_s": round(wall, 2),
        "events_per_s": round(appended / wall, 1),
        "resolved_s": round(resolved_at - started, 2),
        "events_per_s_resolved": round(appended / (resolved_at - started), 1),
        "worker_cpu_s_until_distilled": round(worker_cpu, 1),
        "worker_cpu_ms_per_event": round(1000 * worker_cpu / appended, 2),
        "at_distilled": state,
        "final": final,
        "conditions": {**quiet, **conditions},
        "worker_rss_mib": rss,
    }
