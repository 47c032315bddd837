"""What makes two units the same statement or a conflict (docs/architecture.md, "Claims and conflict
detection"): the tags that hold one value, the relations that hold one object, and the rules that say why a
newer unit replaces an older one. Pure: the resolution job (`service`) loads the facts and applies them."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

from app.claims import lexicon as lx
from app.claims import stored as unit_claims
from app.claims.stored import read_claims
from app.claims.subjects import one_person
from app.db.models import MemoryUnit
from app.resolve.claims import is_happening
from app.resolve.tuning import CONDITIONAL_MARGIN, SAME_SUBJECT_SIMILARITY
from app.text import has_cjk

# Tags without a "value" of their own: never a conflict key. Life events accumulate ("went to a
# choir rehearsal", then "went to a climbing gym"): a later one never replaces an earlier one.
# Task episodes accumulate too: a new task never replaces an earlier one.
NO_KEY_TAGS = frozenset({"episode", "episode.task", "correction", "fact.event"})
# One value per subject: a new budget replaces the old one.
SINGLE_VALUED_TAGS = frozenset({"constraint.budget"})
# One object per (subject, relation): "lives_in Berlin" then "lives_in Paris".
SINGLE_VALUED_RELATIONS = frozenset({"has_budget", "lives_in", "works_at", "works_as", "is_named", "age"})
# Relations that hold one object per what they are for ("a budget for the laptop", "for the trip"):
# single-valued like a tag slot, so only when the units' claims cannot say which one they are about.
QUALIFIED_RELATIONS = frozenset({"has_budget"})
VALUE_TYPES = frozenset({"amount", "date", "place", "organization", "id", "contact", "product"})

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|n't)\b|n't\b|不|没|别|无", re.IGNORECASE)


@dataclass
class Facts:
    """What the rules compare about a unit: its entities and relations, loaded in bulk."""

    persons: set[uuid.UUID] = field(default_factory=set)
    values: set[uuid.UUID] = field(default_factory=set)
    relations: set[tuple[uuid.UUID, str, uuid.UUID]] = field(default_factory=set)


def key_tag(unit: MemoryUnit) -> str | None:
    """The most specific tag that names what the unit is about (not `episode`/`correction`)."""
    keyed = [t for t in unit.tags if t not in NO_KEY_TAGS]
    return max(keyed, key=lambda t: t.count("."), default=None)


def _same_subject(a: Facts, b: Facts) -> bool:
    # A unit naming nobody is about the bank's user, like one that names the same person.
    return not a.persons or not b.persons or bool(a.persons & b.persons)


def same_statement(a: MemoryUnit, b: MemoryUnit) -> bool:
    """Near-identical vectors can still differ in the one thing that matters: a number, a 'not', or whom
    it is said of ("the user is allergic to shellfish", "the user's daughter is allergic to shellfish")."""
    return (
        set(_NUMBER.findall(a.content)) == set(_NUMBER.findall(b.content))
        and bool(_NEGATION.search(a.content)) == bool(_NEGATION.search(b.content))
        and _one_people(_subjects(a), _subjects(b))
    )


def _subjects(unit: MemoryUnit) -> set[str]:
    """Whom the unit's claims are said of (stored, else read from its text)."""
    claims = (
        unit_claims.load_all(unit.claims) if unit.claims is not None else read_claims(unit.content, unit.tags)
    )
    return {c.subject for c in claims}


def _one_people(a: set[str], b: set[str]) -> bool:
    """Whether each subject of one side may be one of the other's (a side without claims: no evidence).
    Merging two units is the step that loses one: when in doubt, they stay two."""
    return (
        not a
        or not b
        or (
            all(any(one_person(x, y) for y in b) for x in a)
            and all(any(one_person(y, x) for x in a) for y in b)
        )
    )


def _relation_conflict(new: Facts, old: Facts, relations: frozenset[str]) -> bool:
    return any(
        (s, r) == (s2, r2) and o != o2 and r in relations
        for s, r, o in new.relations
        for s2, r2, o2 in old.relations
    )


@dataclass
class Neighbour:
    """An active unit near a new one, that the new one may replace (not a distiller Candidate)."""

    unit: MemoryUnit
    similarity: float
    facts: Facts


def conflict_reason(new: MemoryUnit, new_facts: Facts, c: Neighbour, *, claimed: int = 0) -> str | None:
    """Why `new` replaces the active `c.unit`, or None. The rules, most certain first. `claimed`: how
    many of the two units state a claim. Two claims say which attribute each value is of, better than
    a tag: the tag rules (single-valued tag, same tag and a new value) and the qualified relations
    apply unless both do."""
    old = c.unit
    if not _same_subject(new_facts, c.facts):
        return None
    correction = "correction" in new.tags
    tag = key_tag(new)
    same_tag = tag is not None and tag == key_tag(old)
    # A slot holds one value: a later one fills it even when conditional ("if it can be upgraded I can
    # go to 8000" after "my budget is 5000"), keeping its lower confidence and its condition in the
    # content, so the bank never shows two budgets (issue 16).
    # ... unless it is hedged ("I might consider going to 6500"): a hedge never replaces a firm value
    hedged = (lx.ZH_HEDGE if has_cjk(new.content) else lx.EN_HEDGE).search(new.content) is not None
    if claimed < 2 and same_tag and tag in SINGLE_VALUED_TAGS and not hedged:
        return "single-valued tag"
    if not correction and new.confidence + CONDITIONAL_MARGIN < old.confidence:
        return None  # a hedged detail does not replace a firm one of another kind
    single = SINGLE_VALUED_RELATIONS - QUALIFIED_RELATIONS if claimed == 2 else SINGLE_VALUED_RELATIONS
    if _relation_conflict(new_facts, c.facts, single):
        return "relation"
    # what was told once is corrected by naming it (the claims' rules), never by a nearby correction
    near = tag is None and not is_happening(old.tags, []) and c.similarity >= SAME_SUBJECT_SIMILARITY
    if correction and (same_tag or near):
        return "correction"
    values_differ = bool(new_facts.values) and bool(c.facts.values) and new_facts.values != c.facts.values
    if claimed < 2 and same_tag and values_differ and c.similarity >= SAME_SUBJECT_SIMILARITY:
        return "same tag, new value"
    return None
