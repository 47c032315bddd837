"""A bank as a request or a job works with it (`ConfiguredBank`: its row and its config parsed once), and
how each kind of unit ages."""

from __future__ import annotations

from dataclasses import dataclass
from zoneinfo import ZoneInfo

from app.db.models import Bank
from app.schemas.banks import BankConfig

# Kinds that never fade: neither in retrieval's decay (app/query/fusion.py) nor in the decay task.
NEVER_DECAY: tuple[str, ...] = ("fact",)
# Kinds whose truth is itself time-bound: they expire on valid time (a deadline passed, a task state went
# stale). Every other kind ages in bank time: from when the bank learned, used or last heard it again.
VALID_TIME_KINDS: tuple[str, ...] = ("task_state", "constraint.time")


@dataclass(frozen=True)
class ConfiguredBank:
    """A bank as a request or a job works with it: the row, and its config parsed once."""

    row: Bank
    config: BankConfig

    @classmethod
    def of(cls, row: Bank) -> ConfiguredBank:
        return cls(row, BankConfig.model_validate(row.config))

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def timezone(self) -> ZoneInfo:
        """Where a timestamp without an offset is read, and where "today" is for the distiller."""
        return ZoneInfo(self.config.timezone)
