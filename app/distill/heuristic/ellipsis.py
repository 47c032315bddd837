"""A sentence that says nothing but a value ("Sorry, no: 5:15.", "Size 9.", "€900 is the actual figure.",
"Up to 66 kg since the holidays!") made whole: it gives a new value to the latest earlier sentence of its
speaker holding exactly one value of the same kind (a time of day, a size, a mass, an amount in one
currency …), and is read as that sentence with the value replaced. Alone, such a unit answers no question
and ties to no attribute; made whole, it is compared and found like the statement it changes. A turn
that owns up to an error ("that's wrong", "typo", 说错了) makes the sentence a correction."""

from __future__ import annotations

import re

from app.claims import lexicon as lx
from app.claims.model import Value
from app.claims.values import find_values, free
from app.distill.heuristic.noise import CORRECTION_OPENING_EN, CORRECTION_OPENING_ZH, WRAPPING_EN, WRAPPING_ZH
from app.distill.types import Turn
from app.text import has_cjk, split_sentences

# What may stand beside the value in an elliptic sentence: a copula or a pointer ("it's", "make that"),
# a word of degree or time ("now", "only"), a direction of change ("down to"), the value's own noun
# phrase ("the real number"), a time phrase ("since the holidays", "as of today"), a named old value ("not
# 3:30" — what it replaces is found by kind all the same).
_REST_EN = re.compile(
    r"(?:\s|[,.:;!—–-]|\b(?:it'?s|it is|it was|that'?s|that is|make (?:it|that)|should be|is|was|"
    r"actually|really|now|only|just|instead|then|not|rather|(?:down|up|back|over) to|"
    r"(?:the |a )?(?:real|right|correct|actual|new|proper|true) (?:one|number|figure|amount|value|date|"
    r"day|time|size|price|total)|(?:after|since|as of|from|starting|by|until|this|next|last|in) "
    r"(?:the |this |last |next )?(?:summer|winter|spring|autumn|fall|holidays?|break|week|weekend|"
    r"month|year|morning|afternoon|evening|night|today|tomorrow|now|on|then|moment))\b)*",
    re.IGNORECASE,
)
_REST_ZH = re.compile(
    r"(?:[\s，,。.！!：:；;、—]|是|应该|其实|实际|改成|改为|换成|现在|已经|降到|涨到|到|了|的|才对|吧|啊|呢|哦|不是)*"
)
# a value and a few words of the kinds above: a longer sentence says something else as well
_ELLIPTIC_MAX = 160
# ... or a "no" before the new value ("Sorry, no: 5:15.", "No, size 9.")
_NO_EN = re.compile(r"\b(?:no|nope|not quite)\s*[,:;!—–-]", re.IGNORECASE)
# Kinds whose values say what they are of (a bare number or free text could be of anything; an
# identifier or a phone number names a thing or a person of its own).
_KINDS = ("amount", "quantity", "time", "date", "weekday", "version")


def _kind(value: Value) -> tuple[str, str] | None:
    if value.type in _KINDS or (value.type == "text" and not free(value)):
        return value.type, value.unit
    return None


def _unwrapped(sentence: str, zh: bool) -> str:
    patterns = (WRAPPING_ZH, CORRECTION_OPENING_ZH) if zh else (WRAPPING_EN, CORRECTION_OPENING_EN)
    out = sentence
    while True:
        ends = [m.end() for p in patterns if (m := p.match(out)) and m.end()]
        if not ends:
            return out
        out = out[max(ends) :]


def elliptic_value(sentence: str) -> Value | None:
    """The sentence's one typed value when the sentence says nothing else."""
    if len(sentence) > _ELLIPTIC_MAX:
        return None
    zh = has_cjk(sentence)
    body = _unwrapped(sentence.strip(), zh)
    spans = [s for s in find_values(body) if _kind(s.value)]
    if not spans:
        return None
    main = spans[0]
    rest = body[: main.start] + " " + body[main.end :]
    for other in spans[1:]:  # "not 3:30": a named old value of the same kind
        if _kind(other.value) != _kind(main.value):
            return None
        rest = rest.replace(body[other.start : other.end], " ")
    if (_REST_ZH if zh else _REST_EN).fullmatch(rest) is None:
        return None
    return main.value


def made_whole(sentence: str, earlier: list[str], turn: str) -> str | None:
    """`sentence` read as the latest of the `earlier` sentences (oldest first) holding one value of its
    value's kind, that value replaced; prefixed as a correction when `turn` owns up to an error; None
    when the sentence is not elliptic or nothing earlier holds such a value."""
    value = elliptic_value(sentence)
    if value is None:
        return None
    kind = _kind(value)
    for candidate in reversed(earlier):
        if candidate.rstrip().endswith(("?", "？")):
            continue
        alike = [s for s in find_values(candidate) if _kind(s.value) == kind]
        if not alike:
            continue
        if len(alike) > 1:
            return None  # two values of the kind: which one it replaces is not said
        old = alike[0]
        text = value.text
        if candidate[old.start : old.start + 1].islower():  # "… down for the 21st", not "for The 21st"
            text = text[:1].lower() + text[1:]
        whole = candidate[: old.start] + text + candidate[old.end :]
        zh = has_cjk(candidate)
        if lx.owns_error(turn, zh) or (not zh and _NO_EN.search(sentence)):
            return ("更正：" if zh else "Correction: ") + whole.strip()
        return whole.strip()
    return None


def made_whole_all(sentences: list[str], turn: Turn, recent: list[Turn]) -> list[str]:
    """A user turn's sentences, each one that only gives a value read as the earlier sentence it gives
    a new value to: in the speaker's `recent` turns (oldest first), then in this one."""
    if turn.role != "user":
        return sentences
    earlier: list[str] | None = None  # split only when a sentence needs them (rarely)
    out: list[str] = []
    for sentence in sentences:
        if elliptic_value(sentence) is not None:
            if earlier is None:
                earlier = [s for t in recent if t.role == "user" for s in split_sentences(t.content)]
            sentence = made_whole(sentence, earlier + out, turn.content) or sentence
        out.append(sentence)
    return out
