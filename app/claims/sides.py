"""The sides of a change in a clause: the old value's text, where the new value is, and the words naming
its attribute ("moved the standup from 9:30 to 10", "swapped Jira for Linear", "Obsidian is where I keep my
notes", 从周二改到周三)."""

from __future__ import annotations

import re

from app.claims import lexicon as lx
from app.claims.clause_value import strip
from app.claims.model import Value
from app.claims.values import find_values


def without_article(text: str) -> str:
    """A phrase's words without the article or possessive it opens with ("the old plan" → "old plan")."""
    return strip(re.sub(r"^\s*(?:the|a|an|my|our)\s+", "", text, flags=re.IGNORECASE))


def named_part(text: str) -> Value | None:
    """A side of a change said as free text ("violin", "the old plan"): its words, without articles."""
    words = without_article(text)
    if words[:1].isupper():  # "to Linear": a name
        return Value("name", words, key=words.lower())
    return Value("text", words) if words else None


# An evaluation relative to the speaker puts its value first ("Light mode suits me", "Oat milk is my go-to")
_SPEAKER = r"(?:me|us|them|the\s+user)"  # as said, or as a distilled unit says it ("suits them")
EN_SUITS = re.compile(
    rf"^(?P<value>.+?)\s+(?P<rest>(?:suits?|works?\s+(?:best|better|well)\s+for|(?:is|are)\s+(?:best|ideal|"
    rf"perfect|easiest)\s+for)\s+{_SPEAKER}\b.*|(?:is|are)\s+(?:my|our|their|the\s+user's)\s+"
    r"(?:go-to|favou?rites?)\b.*)",
    re.IGNORECASE,
)


def change_parts(clause: str, zh: bool) -> tuple[str, str, str]:
    """(the old value's text, where the new value is, the attribute's words) of a clause."""
    if zh:
        match = lx.ZH_FROM_TO.search(clause)
        if match:
            return match.group("old"), match.group("new"), clause[: match.start()] + match.group("new")
        instead = lx.ZH_INSTEAD.search(clause)
        if instead and instead.start() > 0:
            return instead.group("old"), clause[: instead.start()], clause[: instead.start()]
        return "", clause, clause
    # "Obsidian is where I keep my notes", "Light mode suits me": the value is what it puts first
    cleft = lx.EN_CLEFT.match(clause) or EN_SUITS.match(clause)
    if cleft:
        return "", cleft.group("value"), f"{cleft.group('value')} {cleft.group('rest')}"
    match = lx.EN_FROM_TO.search(clause) or lx.EN_SWAP.search(clause)
    if match and not _span(clause, match):
        return match.group("old"), match.group("new"), clause[: match.start()]
    moved = lx.EN_CHANGE_TO.search(clause)
    if moved:  # "after the outage we lowered the timeout to 12 s": the value is what it moved to
        group = next(g for g in ("new", "new2", "new3") if moved.group(g))
        # "fanned it out to 8 workers": the verb and its particle name no attribute, the pronoun points back
        frame = clause[: moved.start()] if group == "new3" else clause[: moved.start(group)]
        return "", moved.group(group), frame
    for pattern in (lx.EN_INSTEAD, lx.EN_NOT):
        found = pattern.search(clause)
        if found:
            kept = clause[: found.start()] + clause[found.end() :]
            return found.group("old"), kept, kept
    return "", clause, clause


_MOMENTS = frozenset({"weekday", "date", "time"})


def _span(clause: str, match: re.Match[str]) -> bool:
    """Whether "from A to B" is a span of time, not a change: both sides moments ("open from 9am to 5pm",
    "I work from Monday to Friday") and no other word of change in the clause ("moved from Tuesdays to
    Wednesdays" changes)."""
    sides = [find_values(match.group(side))[:1] for side in ("old", "new")]
    moments = all(found and found[0].value.type in _MOMENTS for found in sides)
    before = clause[: match.start()]
    return moments and not lx.EN_CHANGE.search(before) and not lx.EN_CHANGE_TO.search(before)
