"""What two clauses name besides their values: identifiers and names, each a thing of its own (two
clauses naming different ones speak of two things)."""

from __future__ import annotations

import re

from app.claims.model import Claim
from app.text import MONTHS_EN, WEEKDAYS_EN

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
