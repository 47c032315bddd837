"""One event loop and one async engine per worker process, made on first use in that process
(after the prefork fork), never an `asyncio.run` per task."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from celery.signals import worker_process_shutdown
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.config import Settings, get_settings
from app.db.engine import create_engine, create_sessionmaker
from app.jobs.queue import TaskQueue

T = TypeVar("T")


@dataclass
class WorkerRuntime:
    pid: int
    settings: Settings
    loop: asyncio.AbstractEventLoop
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    queue: TaskQueue

    @property
    def job_deadline(self) -> timedelta:
        return timedelta(seconds=self.settings.job_deadline_seconds)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)


_runtime: WorkerRuntime | None = None


def get_runtime() -> WorkerRuntime:
    global _runtime
    if _runtime is None or _runtime.pid != os.getpid():
        from worker.celery_app import app as celery

        settings = get_settings()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        engine = create_engine(settings, pool_size=4)
        _runtime = WorkerRuntime(
            pid=os.getpid(),
            settings=settings,
            loop=loop,
            engine=engine,
            sessionmaker=create_sessionmaker(engine),
            queue=TaskQueue(celery),
        )
    return _runtime


@worker_process_shutdown.connect
def _dispose(**_: Any) -> None:
    if _runtime is not None and _runtime.pid == os.getpid():
        _runtime.run(_runtime.engine.dispose())
        _runtime.loop.close()
