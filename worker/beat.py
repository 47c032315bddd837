"""The whole beat schedule, in one place. Each entry sends a task with no job id; the task makes
its own job row, deduplicated by kind, so two beats or a beat and an admin call cannot overlap."""

from __future__ import annotations

from typing import Any

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "sweep": {"task": "maintenance.sweep", "schedule": 60.0, "options": {"queue": "maintenance"}},
}
