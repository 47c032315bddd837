"""Whether a new claim ends an old one: same subject, same attribute, a different value of a compatible
type, said firmly; a change statement naming the old value identifies it whatever the wording."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.claims.model import Claim
from app.claims.values import compatible, fold, same

Action = Literal["supersede", "retire", "keep"]


@dataclass(frozen=True)
class Verdict:
    """`supersede`: the new claim's value replaces the old one; `retire`: the old claim ends without a
    successor; `keep`: both stay. `strong` is false when only the value type and a change word tie
    them (the attribute unsaid): a resolver applies such a verdict to the most recent candidate only."""

    action: Action
    reason: str
    strong: bool = True


def _names_old(old: Claim, new: Claim) -> bool:
    named = new.old_value
    if named is None:
        return False
    if any(same(named, v) for v in (old.value, *old.mentions)):
        return True
    # a named thing ("closed that Amex") found in the old clause's words
    return named.type == "name" and len(fold(named.text)) >= 2 and fold(named.text) in fold(old.text)


def _overlap(a: frozenset[str], b: frozenset[str]) -> bool:
    """Shared words, or for Chinese a shared two-character run (美国签证 ~ 签证)."""
    if a & b:
        return True
    grams = {w[i : i + 2] for w in a if not w.isascii() for i in range(len(w) - 1)}
    return any(w[i : i + 2] in grams for w in b if not w.isascii() for i in range(len(w) - 1))


def same_attribute(old: Claim, new: Claim) -> Literal["same", "weak", "different"]:
    """Whether two claims speak of one attribute: the same head, narrowed by words that do not
    contradict; without a head on one side, "weak" when their words overlap or one has none."""
    if old.head and new.head:
        if old.head != new.head:
            return "different"
        if old.qualifier and new.qualifier and not _overlap(old.qualifier, new.qualifier):
            return "different"
        return "same"
    if not old.qualifier or not new.qualifier or _overlap(old.qualifier, new.qualifier):
        return "weak"
    return "different"


def conflicts(old: Claim, new: Claim) -> Verdict:
    """What `new` (said later) does to `old`."""
    if old.subject != new.subject:
        return Verdict("keep", "another subject")
    if new.modality == "hedged" and old.modality != "hedged":
        return Verdict("keep", "a hedged statement never replaces a firm one")
    if _names_old(old, new):
        if new.modality == "retired":
            return Verdict("retire", "retires the value it names")
        if same(old.value, new.value):
            return Verdict("keep", "restates the old value")
        return Verdict("supersede", "names the value it replaces")
    if new.additive:
        return Verdict("keep", "adds to what is known")
    attribute = same_attribute(old, new)
    if attribute == "different":
        return Verdict("keep", "another attribute")
    if new.modality == "retired":
        named = any(len(w) >= 2 and w in fold(old.text) for w in new.qualifier)
        if attribute == "same" or _overlap(old.qualifier, new.qualifier) or named:
            return Verdict("retire", "retires what the old claim is about")
        return Verdict("keep", "a retirement of something else")
    if not compatible(old.value, new.value):
        return Verdict("keep", "values of different types")
    if same(old.value, new.value):
        return Verdict("keep", "the same value")
    if attribute == "weak":
        if new.change:
            return Verdict("supersede", "a change of a value of the same type", strong=False)
        return Verdict("keep", "attribute unsaid and no change word")
    return Verdict("supersede", "same subject and attribute, another value")
