"""What two clauses name besides their values: identifiers and names, each a thing of its own (two
clauses naming different ones speak of two things), and a name swapped in a clause said again."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from app.claims.frames import zh_words
from app.claims.model import Claim
from app.text import MONTHS_EN, WEEKDAYS_EN, has_cjk

# An identifier: letters joined to three or more digits (an order, a ticket, a badge number). Two
# clauses about different identifiers are about two things, whatever else they share.
_IDENTIFIER = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{1,8}-?[0-9]{3,}(?![0-9])")


def identifiers(text: str) -> frozenset[str]:
    """The identifiers a clause says, as one spelling ("ORD-1234" and "ord1234" are one)."""
    return frozenset(m.group().upper().replace("-", "") for m in _IDENTIFIER.finditer(text))


# A name beside a claim's value ("$49 a month for Zoom"): a capitalised word past the clause's first
_NAME = re.compile(r"(?<=[\w,;:)] )[A-Z][\w+&-]*(?:\.[\w+&-]+)*")


def names_beside(claim: Claim) -> frozenset[str]:
    """The names a clause says beside its values: two clauses naming different things ("for Zoom", "for
    Slack") speak of two things. Month and weekday names are times, not things."""
    said = " ".join(v.text for v in (claim.value, *claim.mentions)).lower()
    return frozenset(
        word.lower()
        for word in _NAME.findall(claim.text)
        if word.lower() not in said and word.lower() not in MONTHS_EN and word.lower() not in WEEKDAYS_EN
    )


# Of a name swapped in a clause said again: at most this many words replaced, among at least this many
# kept as they were
_SWAPPED_WORDS = 3
_KEPT_WORDS = 3


def name_swapped(old: str, new: str) -> bool:
    """Whether `new` says `old` again with one name replaced ("the washer we're buying is a Bosch, 9 kg"
    → "…is a Miele, 9 kg", 要买的是海尔的 → 要买的是美的的): the name is what changed, whatever value the
    clause's claim holds. Replaced words are names: capitalised in English, nouns to jieba."""
    zh = has_cjk(old + new)
    a, b = (_name_words(t, zh) for t in (old, new))
    ops = SequenceMatcher(None, [w for w, _ in a], [w for w, _ in b]).get_opcodes()
    changed = [op for op in ops if op[0] != "equal"]
    if len(changed) != 1 or changed[0][0] != "replace":
        return False
    _, i1, i2, j1, j2 = changed[0]
    kept = sum(i2_ - i1_ for tag, i1_, i2_, _, _ in ops if tag == "equal")
    swapped = [*a[i1:i2], *b[j1:j2]]
    small = i2 - i1 <= _SWAPPED_WORDS and j2 - j1 <= _SWAPPED_WORDS
    return small and kept >= _KEPT_WORDS and all(named for _, named in swapped)


def _name_words(text: str, zh: bool) -> list[tuple[str, bool]]:
    """The words of a clause, each with whether it can be a name (punctuation left out)."""
    if zh:
        return [(w, f[:1] == "n" or f == "eng") for w, f in zh_words(text) if f != "x" and w.strip()]
    return [(w.lower(), w[:1].isupper()) for w in re.findall(r"[\w'-]+", text)]
