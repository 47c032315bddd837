"""A unit tagged `correction` replaces a close older statement of no kind, but never one told once (an
episode, a life event): what happened is corrected by a statement naming it."""

from __future__ import annotations

import pytest

from app.db.models import MemoryUnit
from app.resolve.conflicts import Facts, Neighbour, conflict_reason

NEW = MemoryUnit(content="Sorry, the standup is at 9:45.", tags=["correction"], confidence=0.9)


@pytest.mark.parametrize(
    ("tags", "reason"), [(["fact"], "correction"), (["episode"], None), (["fact.event"], None)]
)
def test_a_correction_replaces_a_statement_but_not_a_happening(tags: list[str], reason: str | None) -> None:
    old = MemoryUnit(content="The standup is at 9:15.", tags=tags, confidence=0.9)
    assert conflict_reason(NEW, Facts(), Neighbour(old, 0.8, Facts())) == reason
