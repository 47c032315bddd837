"""In process, under cProfile: the same distillation, the distill service called directly per session
on the same stack, with the top functions by cumulative time and the split between the distiller,
the embedder (a worker thread, timed around its awaits) and the database."""

from __future__ import annotations

import cProfile
import pstats
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis

from bench.distill.conversation import BATCH
from bench.harness import services

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

    from app.distill.types import Distiller
    from app.events.working_memory import WorkingMemory
    from app.providers.embeddings import Embedder
    from app.usage.budget import Budget


def _no_budget() -> Budget:
    from app.usage.budget import Budget

    return Budget()


@dataclass
class InProcess:
    """What a distillation uses of a worker (`app.distill.store.DistillRuntime`), in this process."""

    sessionmaker: async_sessionmaker[AsyncSession]
    embedder: Embedder
    by_name: Callable[[str | None], Distiller]
    working_memory: WorkingMemory | None = None
    budget: Budget = field(default_factory=_no_budget)
    job_deadline: timedelta = timedelta(minutes=10)

    def distiller(self, name: str | None) -> Distiller:
        return self.by_name(name)


async def profile_in_process(
    s: services.Stack, sessions: list[tuple[str, list[dict[str, Any]]]], top: int, model: str = services.MODEL
) -> dict[str, Any]:
    """Append the events through the events service, then run `distill_session` on each session
    under cProfile; the embedder runs in a worker thread, so it is timed on its own too."""
    from app.banks.config import ConfiguredBank
    from app.config import Settings
    from app.db.engine import create_engine, create_sessionmaker
    from app.db.models import Bank
    from app.distill import service as distill
    from app.events import service as events
    from app.events.working_memory import WorkingMemory
    from app.jobs import service as jobs
    from app.jobs.kinds import JobKind
    from app.jobs.queue import TaskQueue
    from app.jobs.unit_of_work import UnitOfWork
    from app.providers.embeddings import create_embedder
    from app.schemas.events import AppendRequest
    from worker.factory import create_celery

    settings = Settings(
        env="test",
        database_url=s.database_url,
        redis_url=s.redis_url,
        admin_key="x" * 20,
        embedding_model=model,
    )
    engine = create_engine(settings, pool_size=2)
    maker = create_sessionmaker(engine)
    bank_id = "bench-distill-profile"
    async with maker() as db, db.begin():
        db.add(Bank(id=bank_id, name=bank_id, config={"distill_every_n_turns": 1000}))
    # Appended as the API does, in a unit of work (the turns' working memory is pushed to Redis).
    work = UnitOfWork(maker, TaskQueue(create_celery(settings)))
    buffer = WorkingMemory(aioredis.Redis.from_url(settings.redis_url), max_turns=50, ttl_seconds=600)
    for sid, turns in sessions:
        for i in range(0, len(turns), BATCH):
            async with work.session() as db:
                bank = await db.get(Bank, bank_id)
                assert bank is not None
                body = AppendRequest.model_validate({"events": turns[i : i + BATCH]})
                await events.append(db, events.Appending(ConfiguredBank.of(bank), sid, body, buffer))
    embedder = create_embedder(settings)
    embedder_s = 0.0
    inner = embedder.embed

    async def timed_embed(texts: list[str]) -> list[list[float]]:
        nonlocal embedder_s
        t = time.perf_counter()
        try:
            return await inner(texts)
        finally:
            embedder_s += time.perf_counter() - t

    embedder.embed = timed_embed  # type: ignore[method-assign]
    await embedder.embed(["warm up"])
    embedder_s = 0.0
    heuristic = distill.create_distiller(settings)
    await heuristic.distill(_warm_context())  # jieba's dictionary, dateparser's tables
    runtime = InProcess(sessionmaker=maker, embedder=embedder, by_name=lambda _: heuristic)
    job_rows = []
    async with maker() as db, db.begin():
        for sid, _ in sessions:
            job, _ = await jobs.create(db, JobKind.DISTILL, bank_id=bank_id, params={"session_id": sid})
            job_rows.append(job)
    profiler = cProfile.Profile()
    cpu0, started = time.process_time(), time.perf_counter()
    profiler.enable()
    results = [await distill.distill_session(runtime, job) for job in job_rows]
    profiler.disable()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
    await engine.dispose()
    n = sum(r.get("events", 0) for r in results)
    stats = pstats.Stats(profiler)
    return {
        "events": n,
        "units": sum(r.get("units", 0) for r in results),
        "wall_s": round(wall, 2),
        "events_per_s": round(n / wall, 1),
        "process_cpu_s": round(cpu, 2),
        "embedding_s": round(embedder_s, 2),
        "split_s": _split(stats, wall, embedder_s),
        "top_cumulative": _top(stats, top),
        "note": "cProfile slows the profiled (main) thread down; the embedding runs in a worker thread "
        "(asyncio.to_thread), outside the profile, and is timed around its awaits",
    }


def _warm_context() -> Any:
    from zoneinfo import ZoneInfo

    from app.distill.taxonomy import bank_taxonomy
    from app.distill.types import DistillContext, Turn

    turns = [
        Turn(
            1,
            1,  # event ids are ints (the warm-up context is never stored)
            "user",
            "I prefer window seats; my budget is 5000 by next Friday and I live in Lisbon.",
            "Ana",
            datetime.now(UTC),
        ),
        Turn(2, 2, "user", "我下周三去上海出差，预算不超过八千。", "小王", datetime.now(UTC)),
    ]
    return DistillContext("warm", "warm", turns, ZoneInfo("UTC"), [], bank_taxonomy([]))


def _func_label(key: tuple[str, int, str]) -> str:
    path, line, name = key
    root = str(services.ROOT) + "/"
    if "site-packages/" in path:
        path = path.split("site-packages/", 1)[1]
    elif path.startswith(root):
        path = path[len(root) :]
    elif path == "~":
        return name
    return f"{path}:{line}({name})"


def _top(stats: pstats.Stats, n: int) -> list[dict[str, Any]]:
    """The top `n` functions by cumulative time, leaving out the event loop and the wrappers every
    call passes through (they are 100 % of everything and say nothing)."""
    skip = (
        "asyncio/",
        "selectors.py",
        "threading.py",
        "greenlet",
        "concurrency.py",
        "contextlib.py",
        "bench/distill/",
        "{method 'run'",
    )
    rows = []
    for key, (_cc, nc, tt, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        label = _func_label(key)
        if any(s in label for s in skip) or label.startswith("<"):
            continue
        rows.append({"function": label, "calls": nc, "tottime_s": round(tt, 3), "cumtime_s": round(ct, 3)})
    rows.sort(key=lambda r: -r["cumtime_s"])
    return rows[:n]


def _split(stats: pstats.Stats, wall: float, embedding_s: float) -> dict[str, float]:
    def cum(path: str, name: str) -> float:
        return sum(
            v[3]
            for k, v in stats.stats.items()  # type: ignore[attr-defined]
            if k[0].endswith(path) and k[2] == name
        )

    distiller = cum("app/distill/heuristic/distiller.py", "distill")
    return {
        "wall": round(wall, 2),
        "distiller": round(distiller, 2),
        "embedding": round(embedding_s, 2),
        "database_and_rest": round(max(wall - distiller - embedding_s, 0.0), 2),
    }
