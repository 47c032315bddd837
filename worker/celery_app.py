"""The Celery application: explicit queues, late acks, prefetch 1, broker from settings.

`celery -A worker.celery_app worker` (or `hindsight worker`) uses the module-level `app`.
"""

from __future__ import annotations

import socket
from typing import Any

from celery import Celery
from celery.signals import worker_ready, worker_shutdown
from kombu import Queue

from app.config import Settings, get_settings
from app.jobs.queue import QUEUES
from app.worker_heartbeat import Heartbeat


def create_celery(settings: Settings) -> Celery:
    celery = Celery("hindsight", broker=settings.effective_broker_url, include=["worker.tasks"])
    celery.conf.update(
        task_queues=[Queue(name) for name in QUEUES],
        task_default_queue="maintenance",
        task_routes={
            "distill.*": {"queue": "distill"},
            "resolve.*": {"queue": "resolve"},
            "maintenance.*": {"queue": "maintenance"},
        },
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


app = create_celery(get_settings())

_heartbeat: Heartbeat | None = None


@worker_ready.connect
def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    global _heartbeat
    settings = get_settings()
    name = getattr(sender, "hostname", None) or f"worker@{socket.gethostname()}"
    _heartbeat = Heartbeat(settings.redis_url, str(name), settings.worker_heartbeat_seconds)
    _heartbeat.start()


@worker_shutdown.connect
def _stop_heartbeat(**_: Any) -> None:
    if _heartbeat is not None:
        _heartbeat.stop()
