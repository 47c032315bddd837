"""Sending task messages. The database is the outbox: a job row is committed first, the message
follows, and the sweep re-sends whatever a broker outage swallowed.

A broker that is down makes a publish block for seconds (the client retries its connection with
backoff), so after a failed or timed-out send the queue stays quiet for a few seconds: sends in
that window return False at once instead of each tying up a thread, and the sweep sends them later.
Publishes run on threads of their own, so they never wait behind CPU work (query embeddings) in the
event loop's default executor.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.jobs.kinds import JobKind
from app.metrics import TASK_SEND_FAILURES

if TYPE_CHECKING:
    from celery import Celery

log = logging.getLogger(__name__)

# New events are distilled and resolved on queues of their own; work that replays or sweeps whole
# banks (redistill on `replay`; sweep, merge, reembed, ... on `maintenance`) goes to the others, and
# no worker consumes two groups, so a burst of it never delays the distillation of new events.
# Webhook deliveries (`webhooks`) wait on receivers, up to their timeout each: a queue and a pool of
# their own, so a slow receiver never delays anything else.
QUEUES = ("distill", "resolve", "replay", "maintenance", "webhooks")
_QUEUE_OF_KIND: dict[str, str] = {JobKind.REDISTILL: "replay"}
QUIET_SECONDS = 5.0
_PUBLISHERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hindsight-publish")


def queue_for(kind: str) -> str:
    """Task names are `domain.verb`; the domain names the queue, but a redistill (a whole bank's
    replay) is not new work and goes to `replay`."""
    if kind in _QUEUE_OF_KIND:
        return _QUEUE_OF_KIND[kind]
    domain = kind.split(".", 1)[0]
    return domain if domain in QUEUES else "maintenance"


@dataclass(frozen=True)
class WorkerPool:
    """One worker process and the queues it alone consumes (`hindsight worker --queues`)."""

    name: str
    queues: tuple[str, ...]
    concurrency: int


# The layout `hindsight dev` runs and docker-compose.yml mirrors. The realtime pool runs two tasks at
# once so that one bank's long resolution leaves a slot for every other bank's new events. Replays
# and maintenance have a pool each: a redistill can take many minutes, and expiry, decay or the sweep
# (which resends lost messages and revives jobs of dead workers) must not wait behind it.
WORKER_POOLS = (
    WorkerPool("realtime", ("distill", "resolve"), concurrency=2),
    WorkerPool("replay", ("replay",), concurrency=1),
    WorkerPool("maintenance", ("maintenance",), concurrency=1),
    WorkerPool("webhooks", ("webhooks",), concurrency=1),
)


class TaskQueue:
    def __init__(self, celery: Celery, timeout: float = 2.0, quiet_seconds: float = QUIET_SECONDS) -> None:
        self._celery = celery
        self._timeout = timeout
        self._quiet_seconds = quiet_seconds
        self._quiet_until = 0.0

    def _quiet(self) -> bool:
        return time.monotonic() < self._quiet_until

    def _fail(self) -> bool:
        self._quiet_until = time.monotonic() + self._quiet_seconds
        TASK_SEND_FAILURES.inc()
        return False

    def send_sync(self, kind: str, job_id: uuid.UUID) -> bool:
        """Publish now; never raises. False: not sent (the broker is down, or was a moment ago)."""
        return self.publish_sync(kind, [str(job_id)])

    def publish_sync(self, kind: str, args: list[str], countdown: float | None = None) -> bool:
        """Publish the task `kind` with `args` now (to run in `countdown` seconds); never raises."""
        if self._quiet():
            TASK_SEND_FAILURES.inc()
            return False
        try:
            self._celery.send_task(kind, args=args, queue=queue_for(kind), retry=False, countdown=countdown)
        except Exception as exc:  # the broker is down: the sweep will send it later
            log.warning("could not enqueue %s %s: %s", kind, args, exc)
            return self._fail()
        self._quiet_until = 0.0
        return True

    async def send(self, kind: str, job_id: uuid.UUID) -> bool:
        """`send_sync` without blocking the event loop, given up on after `timeout` seconds."""
        return await self.publish(kind, [str(job_id)])

    async def publish(self, kind: str, args: list[str]) -> bool:
        """`publish_sync` without blocking the event loop, given up on after `timeout` seconds."""
        if self._quiet():
            TASK_SEND_FAILURES.inc()
            return False
        try:
            publish = asyncio.get_running_loop().run_in_executor(_PUBLISHERS, self.publish_sync, kind, args)
            return await asyncio.wait_for(publish, self._timeout)
        except TimeoutError:
            log.warning("timed out enqueuing %s %s", kind, args)
            return self._fail()
