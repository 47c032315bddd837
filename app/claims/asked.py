"""What a question asks of the claims: the relations whose object it wants ("where do I live?" wants what
a unit holding the speaker's address.home states, in whatever words that unit says it)."""

from __future__ import annotations

from app.claims import lexicon as lx
from app.claims.subjects import subject_of
from app.text import has_cjk


def asked_slots(question: str, speaker: str = "user") -> list[dict[str, str]]:
    """The (subject, head) keys of the relations `question` asks the object of, when it says whose
    ("where do I live?", "where does my sister live?"); none for most questions."""
    low = question.lower()
    heads = [head for pattern, head in lx.QUESTION_HEADS if pattern.search(low)]
    if not heads:
        return []
    subject, said = subject_of(question, has_cjk(question), speaker)
    return [{"subject": subject, "head": head} for head in heads] if said else []
