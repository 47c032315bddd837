"""The kinds of job: each is also the name of the Celery task that runs it (`domain.verb`)."""

from __future__ import annotations

from enum import StrEnum


class JobKind(StrEnum):
    DISTILL = "distill.session"
    REDISTILL = "distill.redistill"
    RESOLVE = "resolve.bank"
    SWEEP = "maintenance.sweep"
    EXPIRE = "maintenance.expire"
    DECAY = "maintenance.decay"
    PROMOTE = "maintenance.promote"
    MERGE = "maintenance.merge"
    REEMBED = "maintenance.reembed"
