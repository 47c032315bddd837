"""Who a clause is about: another person it names ("my son …", "我女儿…", "Anna lives …"), else the
speaker; and whether it says so at all ("Football moved to Sundays", "不对，是8点40" name nobody: such a
clause may continue a claim about anyone)."""

from __future__ import annotations

import re

from app.claims import lexicon as lx
from app.claims.frames import lemmas

# A person's name opening an English clause before a verb ("Anna lives in Oslo", "Priya is on call").
_NAMED_EN = re.compile(
    r"^\s*(?:(?:and|but|so|while)\s+)?(?!(?:The|A|An|This|That|These|Those|Our|My|Its)\b)"
    r"(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s+(?:'s\s+|is|was|lives|lived|"
    r"works|worked|has|had|moved|reports|studies|goes|plays|drives|uses|likes|loves|prefers|takes|"
    r"flies|is\s+flying|starts|started|joined|leads|manages)\b"
)
_SELF_EN = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|we|we're|we've|my|our|me|us|mine|ours|the\s+user(?:'s)?)\b", re.IGNORECASE
)
_SELF_ZH = re.compile(r"我|咱们|用户")


def subject_of(clause: str, zh: bool, speaker: str) -> tuple[str, bool]:
    """(who the clause is about, whether the clause names them)."""
    if zh:
        kin = lx.ZH_KIN.search(clause)
        if kin:
            return kin.group("who"), True
        for person in lx.ZH_PEOPLE:
            index = clause.find(person)
            if index >= 0 and not clause[index + len(person) :].startswith(("的领导", "的上司")):
                return person, True
        return speaker, _SELF_ZH.search(clause) is not None
    words = [w.lower().removesuffix("'s").rstrip("'") for w in clause.split()[:6]]
    for i, word in enumerate(words):
        if word in lx.EN_PEOPLE and (i == 0 or words[i - 1] in lx.EN_SELF | {"the", "his", "her"}):
            return word, True
    named = _NAMED_EN.match(clause)
    if named and not any(lemmas(w) for w in named.group("name").split()):
        return named.group("name").lower(), True
    return speaker, _SELF_EN.search(clause) is not None
