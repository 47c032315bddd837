"""The order statements were said in, which decides which of two values is the newer truth."""

from __future__ import annotations

from datetime import datetime

from app.db.models import MemoryUnit


def said_at(unit: MemoryUnit) -> datetime:
    """When the unit's statement was made in the world (its valid time), else when it was stored."""
    return unit.valid_from or unit.created_at


def said_before(a: MemoryUnit, b: MemoryUnit) -> bool:
    """Whether `a` was said before `b`: in one session, by the order of the turns ("runs on 3.9", then
    "we upgraded it yesterday": the later turn names an earlier day, yet it is the later statement);
    else by valid time."""
    if a.session_id is not None and a.session_id == b.session_id and a.source_seqs and b.source_seqs:
        return max(a.source_seqs) < max(b.source_seqs)
    return said_at(a) < said_at(b)


def said_together(a: MemoryUnit, b: MemoryUnit) -> bool:
    """Whether two units were distilled from the same turns of one session ("I moved to Lisbon and I work
    as a pharmacist"): both are true of that moment, and neither replaces the other unless one corrects
    the other ("It's 5. Sorry, 6."). Two parts of one correction ("I said it wrong, it's the 20th; I
    mixed up the cards") are both what it says now."""
    same_turns = (
        a.session_id is not None
        and a.session_id == b.session_id
        and set(a.source_seqs or ()) == set(b.source_seqs or ())
    )
    corrects = [any("correction" in t for t in u.tags) for u in (a, b)]
    return same_turns and bool(a.source_seqs) and (all(corrects) or not any(corrects))
