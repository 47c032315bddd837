"""Whether a part of a sentence has a predicate of its own (a clause, `clauses.split_clauses` cuts it off)
or opens with a verb whose subject is the clause before's, in English and Chinese."""

from __future__ import annotations

import re

from app.distill.heuristic.verbs_en import (
    AUX,
    OBJECT_START,
    WORD,
    base_verb,
    can_be_verb,
    finite_at,
    inflected_verb,
    lemmas,
    negated_imperative,
    pronoun_opens,
)
from app.text import has_cjk, pos_words

PRONOUN_ZH = re.compile(r"^(?:我们|我|咱们|他们|她们|他|她|它|你们|你|您)")


def opens_with_verb_en(text: str, imperative: bool) -> bool:
    """Whether the part opens with a verb of no subject of its own: a form of it ("loved", "getting"),
    or a base form before its object ("make us …"), which is an imperative where `imperative` allows."""
    words = WORD.findall(text)
    if not words or pronoun_opens(words[0]) or words[0].lower() in ("no", "please"):
        return False
    first = words[0].lower()
    readings = lemmas(first)
    if "VERB" not in readings:
        return False
    gerund = first.endswith("ing") and first not in readings["VERB"]  # "getting", not "bring"
    if gerund and any(finite_at(words, i) for i in range(1, min(len(words), 3))):
        return False  # a gerund subject and its verb: "boarding closes at 7", "parking is free"
    if gerund or inflected_verb(first):
        later = any(finite_at(words, i) for i in range(1, len(words)))
        return "NOUN" not in readings or not later  # "prices went up": a noun, then its verb
    return len(words) > 1 and words[1].lower() in OBJECT_START and not imperative


# A time or place said before a clause's subject ("on Thursdays I swim", "at home we cook"): not its subject
_FRONTED_EN = re.compile(
    r"^(?:(?:at|on|in|for|during|after|before|by|from|since|until)(?:\s+[\w'-]+){1,3}?|"
    r"(?:every|last|next|this)\s+[\w'-]+),?\s+(?=(?:i|we|he|she|they|my|our|his|her|their)\b)",
    re.IGNORECASE,
)


def has_predicate_en(text: str) -> bool:
    """A clause of its own: a pronoun subject and more, a request or imperative, or a finite verb after
    its subject. Two words without a pronoun are a fragment ("flights included", "6 and 9")."""
    words = WORD.findall(_FRONTED_EN.sub("", text, count=1))
    if words and "'" in words[0] and pronoun_opens(words[0]) and re.search(r"\w", text[len(words[0]) :]):
        return True  # a contracted copula and its complement: "…, I'm 34", "…, it's 0770 900123"
    if len(words) < 2:
        return False
    first = words[0].lower()
    if first in ("no", "please") or pronoun_opens(first):
        return True  # "…, no balloon payment" (an elliptic negation), "…, please call first"
    if negated_imperative(text):
        return True  # "…, but don't restart it", "…and never call before 9"
    if can_be_verb(words[0]) and not inflected_verb(first) and words[1].lower() in OBJECT_START:
        return True
    if base_verb(first) and words[-1].lower() == "please":
        return True  # an imperative with its "please": "…, so go slowly please"
    return len(words) > 2 and any(finite_at(words, i) for i in range(1, len(words)))


def states_something(text: str) -> bool:
    """Whether a clause no rule recognised has a predicate: "Quick question about billing", "IT小助手",
    "Ready for another session?" have none. English: an auxiliary, a pronoun subject or an inflected
    verb (not a gerund); Chinese: a verb or an adjective."""
    if has_cjk(text):
        return has_predicate_zh(text)
    words = WORD.findall(text)
    if not words:
        return False
    if words[0].lower() == "no" and len(words) >= 2:
        return True  # an elliptic negation: "…, no balloon payment"
    if pronoun_opens(words[0]):
        return True
    return any(w.lower() in AUX or inflected_verb(w) for w in words) or any(
        finite_at(words, i) for i in range(1, len(words))
    )


# Words that make a Chinese predicate whatever jieba tags the word beside them: an adverb of aspect or
# negation before it ("又卡纸了", "也用不了"), a modal ("8点可以"), an aspect particle after it ("卡纸了")
# (a suggestion's 吧 at the end stands for its verb: "就这个吧", "开吧")
_PREDICATE_MARK_ZH = re.compile(
    r"又|也|还|都|不|没|已经|正在|可以|能|会|要|得|了$|了[，。！？,.!?]|过[，。]|吧[。！!]?$"
)


def has_predicate_zh(text: str) -> bool:
    if PRONOUN_ZH.match(text) or _PREDICATE_MARK_ZH.search(text):
        return True
    return any(flag[:1] in ("v", "a", "p") or flag == "zg" for _, flag in pos_words(text))
