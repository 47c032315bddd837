"""The Celery application factory: explicit queues routed by `app.jobs.queue.queue_for`, late acks,
prefetch 1, broker from settings.

Importing this module has no side effects; `worker.celery_app` makes the process-wide app.
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from kombu import Exchange, Queue

from app.config import Settings
from app.jobs.queue import QUEUES, queue_for


def _route(name: str, *_: Any, **__: Any) -> dict[str, str]:
    """One routing rule for every sender (the API's queue, beat, `apply_async`): `queue_for`."""
    return {"queue": queue_for(name)}


def create_celery(settings: Settings) -> Celery:
    celery = Celery("hindsight", broker=settings.effective_broker_url, include=["worker.tasks"])
    celery.conf.update(
        task_queues=[Queue(name, Exchange(name, type="direct"), routing_key=name) for name in QUEUES],
        task_default_queue="maintenance",
        task_routes=(_route,),
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,  # results live in the jobs table
        broker_connection_retry_on_startup=True,
        broker_transport_options={
            "visibility_timeout": 3600,
            "socket_timeout": 2,
            "socket_connect_timeout": 2,
        },
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        enable_utc=True,
    )
    from worker.beat import BEAT_SCHEDULE

    celery.conf.beat_schedule = BEAT_SCHEDULE
    return celery
