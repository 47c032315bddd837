"""Saying a thing keeps its value ("parking hasn't changed", 酒店不变): such a clause is cut from the
clause before it and read as a claim of its own, which replaces nothing and keeps what it names."""

from __future__ import annotations

from app.claims import lexicon as lx
from app.claims.attribute import frame_words
from app.claims.clause_value import strip
from app.claims.frames import mask, zh_words
from app.claims.model import Claim, Value
from app.claims.subjects import subject_of


def kept_apart(clause: str, zh: bool) -> list[str]:
    """A clause cut before what it says is unchanged ("换成途观了, 酒店那边不变"): two claims."""
    said = (lx.ZH_UNCHANGED if zh else lx.EN_UNCHANGED).search(clause)
    cut = max(clause.rfind(mark, 0, said.start()) for mark in ",，;；") if said else -1
    return [clause[:cut], clause[cut + 1 :]] if cut > 0 and clause[:cut].strip() else [clause]


def unchanged(clause: str, zh: bool, speaker: str) -> Claim:
    """A clause saying the thing it names keeps its value ("parking hasn't changed", 住的地方没变): the
    thing's words narrow it, the first of them (its modifier: "*loan* period", *起床*时间) its topic, and
    its value is the thing itself."""
    thing = strip(
        (lx.ZH_UNCHANGED if zh else lx.EN_UNCHANGED).sub(
            lambda m: f" {m.groupdict().get('thing') or ''} ", clause
        ),
    )
    words = frame_words(thing, zh)
    if zh:  # (in the order said, a one-character verb too: 住的地方, 来的日子)
        words = [w for w, flag in zh_words(thing) if w in words or (len(w) == 1 and flag[:1] == "v")]
    subject, said = subject_of(clause, zh, speaker)
    value = Value("text", thing or strip(clause))
    return Claim(
        subject=subject,
        attribute="",
        value=value,
        qualifier=frozenset(words),
        topic=frozenset(words[:1]),
        text=clause.strip(),
        frame=mask(clause, [value], zh),
        implicit_subject=not said,
        unchanged=True,
    )
