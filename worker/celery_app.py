"""The process-wide Celery app (`celery -A worker.celery_app`, `hindsight worker|beat`) and the
worker heartbeat that /readyz checks."""

from __future__ import annotations

import socket
from typing import Any

from celery.signals import worker_ready, worker_shutdown

from app.config import get_settings
from app.worker_heartbeat import Heartbeat
from worker.factory import create_celery

app = create_celery(get_settings())

_heartbeat: Heartbeat | None = None


@worker_ready.connect
def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    global _heartbeat
    settings = get_settings()
    name = getattr(sender, "hostname", None) or f"worker@{socket.gethostname()}"
    queues = tuple(sorted(app.amqp.queues.consume_from or ()))  # what `--queues` selected
    _heartbeat = Heartbeat(settings.redis_url, str(name), settings.worker_heartbeat_seconds, queues)
    _heartbeat.start()


@worker_shutdown.connect
def _stop_heartbeat(**_: Any) -> None:
    if _heartbeat is not None:
        _heartbeat.stop()
