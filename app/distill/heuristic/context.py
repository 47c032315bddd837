"""A turn among the turns around it: the slot a bare value fills, the other speaker's question an
answer quotes, whether a claim leans on the rest of its turn, and how a long turn is cut."""

from __future__ import annotations

import math
import re
from datetime import datetime

from app.distill.dates import find_dates
from app.distill.heuristic import clean
from app.distill.heuristic.entities import find_entities
from app.distill.heuristic.noise import REFERS_BACK_EN, REFERS_BACK_ZH
from app.distill.heuristic.rules import QUESTION_EN, QUESTION_ZH, Rule
from app.distill.heuristic.slots import SLOT_AMOUNT, SLOTS, Slot
from app.distill.heuristic.tuning import QUOTE_MAX_CHARS, SLOT_WINDOW
from app.distill.types import Turn
from app.text import has_cjk, pos_tag, split_sentences

ASIDE = re.compile(r"\([^()]*\)")
# What a claim may say about someone that needs the turn around it when it points back ("I love how it's
# both …", "It reminds me why I love teaching kids"); ids, contacts, constraints and states stand alone.
_DESCRIPTIVE = ("preference", "fact.family", "fact.work", "fact.education", "fact.event")


def leans_on_turn(claim: str, language: str, matches: list[tuple[Rule, re.Match[str]]]) -> bool:
    """Whether the claim is a mention rather than a claim of its own: found by loose rules only, or
    descriptive and pointing back at what the turn said before it."""
    if all(rule.loose for rule, _ in matches):
        return True
    if not all(rule.tag.startswith(_DESCRIPTIVE) or rule.tag == "fact" for rule, _ in matches):
        return False
    return (REFERS_BACK_ZH if language == "zh" else REFERS_BACK_EN).search(claim) is not None


def open_slot(recent: list[Turn], turn: Turn) -> Slot | None:
    """The slot discussed in the speaker's last few turns and the other speakers' turns between them
    (by anyone: "What is your budget?", "预算是5000"): an ordinary turn and its reply in between
    ("I prefer email") leave it open."""
    own = 0
    for earlier in reversed(recent):
        for slot in SLOTS:
            if slot.trigger.search(earlier.content):
                return slot
        own += earlier.role == turn.role
        if own >= SLOT_WINDOW:
            break
    return None


def slot_value(claim: str, language: str, slot: Slot, local_time: datetime) -> str | None:
    if slot.value == "amount":
        match = SLOT_AMOUNT.search(claim)
        return match.group().strip() if match else None
    if slot.value == "date":
        dates = find_dates(claim, local_time)
        return dates[0].text if dates else None
    if language == "zh":
        return next((w for w, flag in pos_tag(claim) if flag == "ns"), None)
    return next((e.name for e in find_entities(claim, language, []) if e.type == "place"), None)


def question_to(turn: Turn, previous: Turn | None) -> tuple[Turn, str] | None:
    """The last question of the previous turn, when another speaker asked it."""
    if previous is None or (previous.speaker, previous.role) == (turn.speaker, turn.role):
        return None
    for sentence in reversed(split_sentences(previous.content)):
        pattern = QUESTION_ZH if has_cjk(sentence) else QUESTION_EN
        if (
            pattern.search(sentence)
            and len(sentence) <= QUOTE_MAX_CHARS
            and not clean.is_small_talk(sentence, {previous.speaker or "", turn.speaker or ""})
        ):
            return previous, sentence
    return None


def chunks(sentences: list[str], limit: int, joiner: str) -> list[str]:
    """Sentences joined into chunks of about the same length, each under `limit` where sentences
    allow: no short remainder that would say little on its own."""
    total = sum(len(s) + len(joiner) for s in sentences)
    target = total / math.ceil(total / limit) if total else limit
    chunks: list[str] = []
    current = ""
    for sentence in sentences:
        if current and len(current) + len(sentence) / 2 > target:
            chunks.append(current)
            current = ""
        current = f"{current}{joiner}{sentence}" if current else sentence
    if current:
        chunks.append(current)
    return chunks
