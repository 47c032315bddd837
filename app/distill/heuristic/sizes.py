"""How much a turn or a sentence says: filler only, an error owned and nothing else, too short to keep,
short enough to state claims (a turn said to an assistant) rather than tell a story, enough content for
an episode."""

from __future__ import annotations

import re
from functools import lru_cache

from app.claims import find_values
from app.claims import lexicon as lx
from app.claims.frames import lemmas
from app.distill.dates import EN_PATTERN as DATE_EN
from app.distill.heuristic.candidates import language_of
from app.distill.heuristic.person import WORD
from app.distill.heuristic.tuning import (
    MAX_FIELD_WORDS,
    MAX_RECORD_FIELDS,
    MAX_SPLIT_SENTENCES,
    MAX_SPLIT_WORDS,
    MIN_CONTENT_CHARS_ZH,
    MIN_CONTENT_WORDS_EN,
)
from app.text import FILLER_EN, FILLER_ZH, STOPWORDS_EN


def is_filler(sentence: str, language: str) -> bool:
    """Nothing but filler ("um, well", "嗯嗯")."""
    if language == "zh":
        rest = FILLER_ZH.sub("", sentence)
        return len(rest) < 2 and not any(c.isdigit() for c in rest)
    return all(w.lower() in FILLER_EN for w in WORD.findall(sentence))


# what an error is owned with: saying, writing, noticing, and when ("just noticed I typed my email wrong")
_TELLING_EN = frozenset(
    "said say told tell typed type wrote write gave give put entered got realized realised noticed checked "
    "looked just earlier before previously hold on".split()
)


# the words of owning an error that go on to give the right value ("Sorry, I meant amoxicillin")
_GIVES_VALUE = re.compile(r"\b(?:i\s+meant|correction)\b|应该是|更正为|改为", re.IGNORECASE)
_COPULA_EN = re.compile(r"\b(?:is|are|was|were|am)\b|'(?:s|re|m)\b", re.IGNORECASE)


def only_owns_error(sentence: str, language: str) -> bool:
    """An error owned and at most the nouns of what was wrong ("Sorry, I typed my shoe size wrong.", "I
    misspoke earlier.", 我刚才说错了): the sentence states nothing; the next one corrects."""
    zh = language == "zh"
    if not lx.owns_error(sentence, zh) or find_values(sentence) or _GIVES_VALUE.search(sentence):
        return False
    rest = (lx.ZH_ERROR if zh else lx.EN_ERROR).sub(" ", sentence)
    if not zh and _COPULA_EN.search(rest):
        return False  # "Scratch that, it's amoxicillin": what follows states the right value
    if zh:
        return len(FILLER_ZH.sub("", re.sub(r"[\s，。,.!！?？了我刚才之前的]", "", rest))) <= 3
    words = [w.lower() for w in WORD.findall(rest)]
    said = lx.EN_NOISE | lx.EN_INTERJECTIONS | _TELLING_EN | FILLER_EN
    named = [w for w in words if w not in said]
    # (what was wrong is named by nouns: a verb says something more, "the meeting moved")
    return len(named) <= 2 and all("NOUN" in lemmas(w) or not lemmas(w) for w in named)


def is_short(sentence: str, language: str) -> bool:
    """Two words or fewer ("Love it", "Me neither"): dropped unless a rule finds something ("I'm vegan")."""
    if language == "zh":
        return False
    words = WORD.findall(sentence)
    return len(words) <= 2 and not any(w.isdigit() for w in words)


def states_claims(text: str, sentences: list[str], service: bool) -> bool:
    """A short turn states claims (its plain clauses are units); a long one tells a story. `service`:
    the turn is said to an assistant (see `HeuristicDistiller._turn`)."""
    if not service:
        return len(sentences) == 1
    language = language_of(text)
    size = len(FILLER_ZH.sub("", text)) if language == "zh" else len(WORD.findall(text))
    return len(sentences) <= MAX_SPLIT_SENTENCES and size <= MAX_SPLIT_WORDS[language]


def has_content(text: str, language: str) -> bool:
    """Enough content words (Chinese: characters) to be worth an episode."""
    if language == "zh":
        rest = FILLER_ZH.sub("", text)
        return len(rest) >= MIN_CONTENT_CHARS_ZH
    words = [w.lower() for w in WORD.findall(text)]
    content = [w for w in words if w not in STOPWORDS_EN and len(w) > 1]
    # two content words are enough with a number or a date: "The dentist is on Friday"
    specific = any(w.isdigit() for w in words) or DATE_EN.search(text) is not None
    return len(content) >= MIN_CONTENT_WORDS_EN or (len(content) >= 2 and specific)


# Between the fields of a tool's record: a bar, a semicolon, a line break
_FIELD_BREAK = re.compile(r"\s*[|｜;；]\s*|\s*\n\s*")


@lru_cache(maxsize=256)  # (asked of a tool turn once, and again by each of its clauses)
def record_fields(text: str) -> tuple[str, ...]:
    """The fields of a tool's result when it is a record ("order 1042 | shipped | ETA Friday", "status=open;
    owner=ops"): two to `MAX_RECORD_FIELDS` fields of at most `MAX_FIELD_WORDS` words each, every one a claim
    of its own; else () (prose, or a long listing: the turn is read as any other)."""
    fields = tuple(f.strip(" .,") for f in _FIELD_BREAK.split(text) if f.strip(" .,"))
    if not 2 <= len(fields) <= MAX_RECORD_FIELDS:
        return ()
    return fields if all(len(WORD.findall(f)) <= MAX_FIELD_WORDS for f in fields) else ()
