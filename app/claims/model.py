"""What a claim is: who it is about, which attribute, which typed value, how firmly it is said."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Modality = Literal["firm", "hedged", "retired"]
# amount (money), quantity (a number with a unit: duration, mass, size, percent, count), number (bare),
# date, weekday, time (of day), version, id (an identifier or a contact), name (a person, place,
# organisation or product), text
ValueType = Literal[
    "amount", "quantity", "number", "date", "weekday", "time", "version", "id", "name", "text"
]


@dataclass(frozen=True)
class Value:
    """A typed value: `number` in the unit's base (seconds, grams, percent …), `unit` its dimension or
    currency, `key` the comparable form (a weekday's index, a date's month-day, a name folded)."""

    type: ValueType
    text: str
    number: float | None = None
    unit: str = ""
    key: str = ""


@dataclass(frozen=True)
class Claim:
    """One clause's claim. `old_value` is the value a change statement names as replaced ("from A to
    B", "instead of A", "不是A"); `change` says the clause announces a change or a correction without
    naming the old value; `additive` that it adds to what is known ("also", "还"); `qualifier` the words
    that narrow the attribute (for comparison), `text` the clause it came from, `topic` the nouns among
    the qualifier words and `verb` the clause's main verb (what a claim naming no noun is about);
    `shift` that the change is said by a verb of change, a correction or a named old value, not only
    by a word of time ("now", 现在); `implicit_subject` that the clause names nobody (the speaker
    by default): it may continue a claim about another person ("Football moved to Sundays"); `past`
    that the state held once, not now ("I used to live in Cork", 我以前住在…); `unchanged` that the
    clause says the thing it names keeps its value ("parking hasn't changed", 酒店不变): it replaces
    nothing, and no sibling clause ends what it names."""

    subject: str
    attribute: str
    value: Value
    modality: Modality = "firm"
    old_value: Value | None = None
    change: bool = False
    additive: bool = False
    head: str = ""
    qualifier: frozenset[str] = field(default_factory=frozenset)
    mentions: tuple[Value, ...] = ()
    text: str = ""
    frame: str = ""
    topic: frozenset[str] = field(default_factory=frozenset)
    shift: bool = False
    implicit_subject: bool = False
    verb: str = ""
    past: bool = False
    unchanged: bool = False

    def as_json(self) -> dict[str, Any]:
        """Render the contract's `claim` field (plus `old_value` when the statement names it)."""
        out: dict[str, Any] = {
            "subject": self.subject,
            "attribute": self.attribute,
            "value": self.value.text,
            "value_type": self.value.type,
            "modality": self.modality,
        }
        if self.old_value is not None:
            out["old_value"] = self.old_value.text
        return out
