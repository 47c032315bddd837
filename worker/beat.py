"""The whole beat schedule, in one place. Each entry sends a task with no job id; the task makes
its own job row, deduplicated by kind, so two beats or a beat and an admin call cannot overlap."""

from __future__ import annotations

from typing import Any

from celery.schedules import crontab

from app.jobs.kinds import JobKind

_QUEUE = {"queue": "maintenance"}

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # lost messages, dead workers, idle sessions, unresolved units, units missing the current model's vector
    "sweep": {"task": JobKind.SWEEP, "schedule": 60.0, "options": _QUEUE},
    "expire": {"task": JobKind.EXPIRE, "schedule": crontab(minute=7), "options": _QUEUE},
    "decay": {"task": JobKind.DECAY, "schedule": crontab(hour=2, minute=17), "options": _QUEUE},
    "promote": {"task": JobKind.PROMOTE, "schedule": crontab(hour=2, minute=37), "options": _QUEUE},
    # hourly tick; each bank merges in its own local Sunday 03:00 hour
    "merge": {"task": JobKind.MERGE, "schedule": crontab(minute=47), "options": _QUEUE},
    # webhook retries past the worker's own wake-ups, nudges lost with the broker, old deliveries pruned
    "webhooks": {"task": "webhooks.deliver", "schedule": 10.0, "options": {"queue": "webhooks"}},
}
