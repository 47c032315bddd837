"""A part that leaves out the verb of the clause before it ("my mum lives in Ohio, my dad in Florida",
"I take metformin in the morning, plus a statin at night"): the verb said again, so that each part is a
claim of its own: after a clause whose verb is plain to see, an object opened by an article or a
possessive, or a subject and a place holding a value or a name."""

from __future__ import annotations

import re

from app.claims.values import find_values
from app.distill.heuristic.verbs_en import WORD, finite_at, lemmas, pronoun_opens

_PREPOSITIONS = r"in|at|on|for|to|from|with|by|into"
# what opens an object said without its verb: an article, a possessive, a quantity
_OBJECT_OPENERS = frozenset("a an the my our your his her their some one two three four five another".split())
# a subject (one to three words) and the preposition its verb took in the clause before
_SUBJECT_AND_PLACE = re.compile(
    rf"^(?P<subject>(?:[\w'-]+\s+){{0,2}}[\w'-]+)\s+(?P<prep>{_PREPOSITIONS})\s+\S"
)
_NAME_AND_PREP = re.compile(
    rf"^(?P<name>[A-Z][\w.+-]*(?:\s+[A-Z][\w.+-]*)?)\s+(?P<prep>{_PREPOSITIONS})\s+\S"
)
_NAMED = re.compile(r"\d|(?<=\s)[A-Z]|^[A-Z][a-z]*[A-Z]")


def _verb(words: list[str]) -> int | None:
    """Where the clause's verb stands: after a pronoun subject and its adverbs, else its first finite verb."""
    if pronoun_opens(words[0]):
        for i in range(1, min(len(words), 4)):
            readings = lemmas(words[i].lower())
            if "VERB" in readings or "AUX" in readings:
                return i
            if "ADV" not in readings:
                return None
        return None
    # a noun read as a verb before the real one ("meeting notes go in …") is passed over
    found = [i for i in range(1, len(words)) if finite_at(words, i)]
    return next((i for i in found if i + 1 not in found), None)


def _opener(word: str) -> str:
    """How a noun phrase opens: a possessive, an article or bare ("my mum" ~ "my dad", "notes" ~ "bills")."""
    lower = word.lower()
    if lower in ("my", "our", "his", "her", "their", "your"):
        return "possessive"
    return lower if lower in ("a", "an", "the") else ""


def fill_gap(before: str, part: str, additive: bool) -> str | None:
    """`part` with the verb of `before` said again, when it is a subject and its place ("my dad in
    Florida", "tickets in Jira") or, `additive` (after "plus", "and"), an object of a pronoun's verb ("a
    statin at night"); else None."""
    said, words = WORD.findall(before), WORD.findall(part)
    verb = _verb(said) if said and words else None
    if verb is None or "'" in said[verb]:
        return None
    if pronoun_opens(said[0]):
        named = _NAME_AND_PREP.match(part)
        if named and re.search(rf"\b[A-Z][\w.+-]*\s+{named['prep']}\s", before):
            # a name said as the first one was, with its preposition ("we use Postgres for orders and
            # Redis for sessions"): the same verb's object again
            return f"{said[0]} {said[verb]} {part}"
        # an object after "plus" or "and" ("…, plus a statin"); after a comma alone it may name the
        # same thing again ("I bought a laptop, a ThinkPad")
        if not additive or words[0].lower() not in _OBJECT_OPENERS:
            return None
        return f"{said[0]} {said[verb]} {part}"
    place = _SUBJECT_AND_PLACE.match(part)
    if place is None or f" {place['prep']} " not in f" {before.lower()} ":
        return None
    if _opener(said[0]) != _opener(words[0]):
        return None  # no subject said like the first ("my wife uses Linux at work and a Mac at home")
    if not (find_values(part) or _NAMED.search(part)):
        return None
    return f"{place['subject']} {said[verb]} {part[place.start('prep') :]}"
