"""Sending task messages. The database is the outbox: a job row is committed first, the message
follows, and the sweep re-sends whatever a broker outage swallowed."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING

from app.metrics import TASK_SEND_FAILURES

if TYPE_CHECKING:
    from celery import Celery

log = logging.getLogger(__name__)

QUEUES = ("distill", "resolve", "maintenance")


def queue_for(kind: str) -> str:
    """Task names are `domain.verb`; the domain names the queue."""
    domain = kind.split(".", 1)[0]
    return domain if domain in QUEUES else "maintenance"


class TaskQueue:
    def __init__(self, celery: Celery, timeout: float = 2.0) -> None:
        self._celery = celery
        self._timeout = timeout

    def send_sync(self, kind: str, job_id: uuid.UUID) -> bool:
        try:
            self._celery.send_task(kind, args=[str(job_id)], queue=queue_for(kind), retry=False)
        except Exception as exc:  # the broker is down: the sweep will send it later
            TASK_SEND_FAILURES.inc()
            log.warning("could not enqueue %s for job %s: %s", kind, job_id, exc)
            return False
        return True

    async def send(self, kind: str, job_id: uuid.UUID) -> bool:
        """Publish without blocking the event loop; never raises."""
        try:
            return await asyncio.wait_for(asyncio.to_thread(self.send_sync, kind, job_id), self._timeout)
        except TimeoutError:
            TASK_SEND_FAILURES.inc()
            log.warning("timed out enqueuing %s for job %s", kind, job_id)
            return False
