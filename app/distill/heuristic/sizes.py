"""How much a turn or a sentence says: filler only, too short to keep, short enough to state claims (a
turn said to an assistant) rather than tell a story, enough content for an episode."""

from __future__ import annotations

from app.distill.dates import EN_PATTERN as DATE_EN
from app.distill.heuristic.candidates import language_of
from app.distill.heuristic.person import WORD
from app.distill.heuristic.tuning import (
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
    # two content words are enough with a number or a date: "The meeting is on Tuesday"
    specific = any(w.isdigit() for w in words) or DATE_EN.search(text) is not None
    return len(content) >= MIN_CONTENT_WORDS_EN or (len(content) >= 2 and specific)
