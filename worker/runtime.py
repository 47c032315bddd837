"""One event loop and one async engine per worker process, made on first use in that process
(after the prefork fork), never an `asyncio.run` per task."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

import redis.asyncio as aioredis
import uvloop
from celery.signals import worker_process_shutdown
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.config import Settings, get_settings
from app.db.engine import create_engine, create_sessionmaker
from app.distill.service import create_distiller
from app.distill.types import Distiller
from app.events.working_memory import WorkingMemory
from app.jobs.queue import TaskQueue
from app.jobs.unit_of_work import UnitOfWork
from app.providers.embeddings import Embedder, create_embedder
from app.resolve.judge import LLMJudge
from app.usage.budget import Budget
from app.usage.ledger import Ledger
from app.webhooks import outbox as webhook_outbox

T = TypeVar("T")


@dataclass
class WorkerRuntime:
    """The worker process's one bundle: settings, loop, engine, unit of work and the providers its
    jobs use, made on first use. A distillation takes it as its `DistillRuntime`."""

    pid: int
    settings: Settings
    loop: asyncio.AbstractEventLoop
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    queue: TaskQueue
    work: UnitOfWork  # each job's session, committed by `app.jobs.service.run`, then its jobs sent
    redis: aioredis.Redis
    ledger: Ledger  # every LLM call of the process is recorded here
    _embedder: Embedder | None = None
    _distillers: dict[str, Distiller] = field(default_factory=dict)
    _judge: LLMJudge | None = None
    _working_memory: WorkingMemory | None = None

    @property
    def job_deadline(self) -> timedelta:
        return timedelta(seconds=self.settings.job_deadline_seconds)

    @property
    def embedder(self) -> Embedder:
        """Loaded on first use: a worker that only sweeps never loads the model."""
        if self._embedder is None:
            self._embedder = create_embedder(self.settings)
        return self._embedder

    def distiller(self, name: str | None) -> Distiller:
        name = name or self.settings.distiller
        if name not in self._distillers:
            self._distillers[name] = create_distiller(self.settings, name, self.ledger)
        return self._distillers[name]

    @property
    def judge(self) -> LLMJudge | None:
        """The LLM conflict judge, when configured (`HINDSIGHT_LLM_JUDGE`)."""
        if self._judge is None and self.settings.judge_enabled:
            self._judge = LLMJudge.from_settings(self.settings, self.ledger)
        return self._judge

    @property
    def budget(self) -> Budget:
        """The service's LLM budget and prices, which a distillation checks before an LLM batch."""
        return Budget.from_settings(self.settings)

    @property
    def working_memory(self) -> WorkingMemory:
        """The sessions' recent turns in Redis, which a distillation trims."""
        if self._working_memory is None:
            self._working_memory = WorkingMemory(
                self.redis,
                max_turns=self.settings.working_memory_max_turns,
                ttl_seconds=self.settings.working_memory_ttl_seconds,
            )
        return self._working_memory

    async def aclose(self) -> None:
        for distiller in self._distillers.values():
            await distiller.aclose()
        if self._judge is not None:
            await self._judge.aclose()
        if self._embedder is not None:
            await self._embedder.aclose()
        await self.redis.aclose()
        await self.engine.dispose()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)


_runtime: WorkerRuntime | None = None


def get_runtime() -> WorkerRuntime:
    global _runtime
    if _runtime is None or _runtime.pid != os.getpid():
        from worker.celery_app import app as celery

        settings = get_settings()
        loop = (
            uvloop.new_event_loop()
        )  # as the API's (uvicorn's): a job's many statements, less loop overhead
        asyncio.set_event_loop(loop)
        engine = create_engine(settings, pool_size=4)
        sessionmaker, queue = create_sessionmaker(engine), TaskQueue(celery)
        webhook_outbox.attach(sessionmaker, queue, blocking=True)  # the loop stops between tasks
        _runtime = WorkerRuntime(
            pid=os.getpid(),
            settings=settings,
            loop=loop,
            engine=engine,
            sessionmaker=sessionmaker,
            queue=queue,
            work=UnitOfWork(sessionmaker, queue),
            ledger=Ledger(sessionmaker),
            redis=aioredis.Redis.from_url(
                settings.redis_url,
                socket_timeout=settings.redis_timeout_seconds,
                socket_connect_timeout=settings.redis_timeout_seconds,
            ),
        )
    return _runtime


@worker_process_shutdown.connect
def _dispose(**_: Any) -> None:
    if _runtime is not None and _runtime.pid == os.getpid():
        _runtime.run(_runtime.aclose())
        _runtime.loop.close()
