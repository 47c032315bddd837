"""The other cases of a size: queries while one worker distils at full speed on the same machine, and
queries served from a streaming replica (`HINDSIGHT_READ_DATABASE_URL`), idle and under that load.

The load: one `hindsight worker` on the realtime queues (`distill,resolve`, one process) and a backlog of
conversation turns (bench/distill's LoCoMo + Chinese mix) appended to a bank of its own in the same
database, all of it before the measured queries start. Each measurement reports whether the backlog
outlasted it (the worker never waited for work) and how many events the worker distilled meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.distill.conversation import conversation
from bench.distill.worker import Api, progress, wait_until
from bench.harness import measure, services
from bench.harness.measure import log

LOAD_BANK = "bench-load"  # and a run's suffix: a kept database (--pgdata --reuse-bank) holds earlier ones
REALTIME_QUEUES = "distill,resolve"


@dataclass
class Distilling:
    """A worker and its backlog; `window` wraps one measurement."""

    database_url: str
    bank_id: str
    worker_pid: int

    def state(self) -> dict[str, int]:
        return asyncio.run(progress(self.database_url, self.bank_id))

    @contextlib.contextmanager
    def window(self, into: dict[str, Any]) -> Iterator[None]:
        """Fills `into` with what the worker did while the block ran, and whether it was busy all along."""
        before, cpu0, t = self.state(), self._worker_cpu(), time.perf_counter()
        yield
        wall, after = time.perf_counter() - t, self.state()
        distilled = (after["events"] - after["undistilled"]) - (before["events"] - before["undistilled"])
        into["load"] = {
            "window_s": round(wall, 1),
            "events_distilled": distilled,
            "events_per_s": round(distilled / wall, 1),
            "worker_cpu_percent_of_a_core": round(100 * (self._worker_cpu() - cpu0) / wall, 1),
            "backlog_after": after["undistilled"],
            "busy_throughout": after["undistilled"] > 0,
        }

    def _worker_cpu(self) -> float:
        return measure.tree_cpu_s(self.worker_pid)


@contextlib.contextmanager
def distilling(
    env: dict[str, str], base: str, admin_key: str, database_url: str, work: Path, events: int
) -> Iterator[Distilling]:
    """The worker up and warm, then `events` turns appended far ahead of its pace; yields with the
    backlog queued."""
    with services.child(
        ["worker", "--queues", REALTIME_QUEUES, "--concurrency", "1", "--name", "bench-load@%h"],
        env,
        work / "worker-load.log",
    ) as worker:
        api = Api(base, admin_key)
        bank_id, warm = f"{LOAD_BANK}-{uuid.uuid4().hex[:8]}", f"{LOAD_BANK}-warm-{uuid.uuid4().hex[:8]}"
        sessions = conversation(events, 0.15, seed=11)
        log("  warming the load worker up …")
        api.bank(warm)
        api.append(warm, "warm", sessions[0][1][:20])
        wait_until(database_url, warm, lambda st: st["undistilled"] == 0, 300)
        api.bank(bank_id)
        # Every turn is in before the measurements start (the worker begins on them meanwhile), so they
        # time queries beside distillation, not beside the appends too.
        for sid, turns in sessions:
            api.append(bank_id, sid, turns)
        log(f"  {events:,} events appended to {bank_id}; the worker distils them meanwhile")
        yield Distilling(database_url, bank_id, worker.pid)


@contextlib.contextmanager
def replica_api(
    primary: Any, work: Path, database: str, env: dict[str, str]
) -> Iterator[tuple[str, list[int]]]:
    """A streaming replica of the embedded primary (`pg_basebackup`, hot standby) and a second
    `hindsight api` reading from it; yields (its base URL, the pids of both)."""
    from app.embedded import start_replica

    log("  starting a streaming replica (pg_basebackup of the primary) …")
    t = time.perf_counter()
    replica = start_replica(work / f"replica-{database}", primary.port, timeout=1800)
    log(f"  replica up in {time.perf_counter() - t:.1f}s")
    try:
        read_env = {**env, "HINDSIGHT_READ_DATABASE_URL": replica.url(database)}
        with services.api(read_env, work / f"api-replica-{database}.log") as (base, pid):
            yield base, [pid, replica.process.pid]
    finally:
        replica.stop()
