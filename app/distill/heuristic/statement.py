"""The graph of a self-contained statement (a direct write: "Carl works at Acme", "张伟在腾讯工作"), found
by the same rules as a distilled turn's: the statement's subject becomes the speaker of a first-person
turn ("I work at Acme", said by Carl), the distiller reads that turn, and its entities and relations
are the statement's. So a direct write supersedes like the same fact said in a conversation."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from app.distill.heuristic.distiller import HeuristicDistiller
from app.distill.heuristic.entities import dedupe_entities, find_entities
from app.distill.heuristic.person import _inflect
from app.distill.heuristic.relations import extract_relations
from app.distill.types import Turn
from app.entities.types import EntityOut, RelationOut
from app.text import has_cjk

_USER_EN = re.compile(r"^(?:the\s+)?user\b", re.IGNORECASE)
_USER_ZH = "用户"
# A leading name (one to three capitalised words), possessive or followed by a verb: "Carl works",
# "Ana Lopez's budget"; not "Ticket TCK-1 waits" (the word after the name is no verb).
_NAME_EN = re.compile(r"^([A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2})(?:('s)\s+(\S+)|\s+([a-z][a-z']*)\b)")
_NAME_LATIN_ZH = re.compile(r"^([A-Za-z][A-Za-z]+(?:\s+[A-Z][a-z]+)?)(的)?")
_BE = {"is": "am", "was": "was", "has": "have", "does": "do", "doesn't": "don't", "isn't": "am not"}


def _first_person_verb(word: str) -> str:
    lower = word.lower()
    if lower in _BE:
        return _BE[lower]
    if not lower.endswith("s") or lower.endswith("ss"):
        return word  # "moved", "can", "will": the same after "I"
    _, get_lemma = _inflect()
    lemmas = get_lemma(lower, upos="VERB")  # type: ignore[operator]
    return str(lemmas[0]) if lemmas else word


def as_first_person(content: str) -> tuple[str, str | None]:
    """(the statement said by its subject, the subject's name; None: the bank's user)."""
    text = content.strip()
    if has_cjk(text):
        if text.startswith(_USER_ZH):
            return "我" + text[len(_USER_ZH) :], None
        latin = _NAME_LATIN_ZH.match(text)
        if latin:
            return ("我的" if latin.group(2) else "我") + text[latin.end() :], latin.group(1)
        for entity in find_entities(text, "zh", []):
            if entity.type == "person" and text.startswith(entity.name):
                rest = text[len(entity.name) :]
                return ("我的" + rest[1:] if rest.startswith("的") else "我" + rest), entity.name
        return text, None
    user = _USER_EN.match(text)
    name = None if user else _NAME_EN.match(text)
    if user:
        rest = text[user.end() :]
        if rest.startswith("'s"):
            return "My" + rest[2:], None
        head, _, tail = rest.strip().partition(" ")
        return f"I {_first_person_verb(head)} {tail}".strip(), None
    if name and name.group(1) not in ("The", "My", "Our", "This", "That", "It"):
        subject, possessive, _, verb = name.groups()
        if possessive:
            return "My " + text[len(subject) + 3 :], subject
        return f"I {_first_person_verb(verb)}{text[name.end() :]}", subject
    return text, None


def statement_graph(content: str, tags: list[str]) -> tuple[list[EntityOut], list[RelationOut]]:
    """The relations the heuristic distiller finds in the statement and the entities they join: its
    subject a person (as the speaker of a distilled turn is), the object typed as found. Only those:
    a statement's other names (a place, an amount) would make resolution's "same tag, new value" rule
    take "the user's brother lives in Oslo" for a new value of "the user's sister lives in Lisbon"; a
    relation names what changes ("works_at", "lives_in": one value each)."""
    said, subject = as_first_person(content)
    turn = Turn(seq=1, event_id=0, role="user", content=said, speaker=subject, occurred_at=datetime.now(UTC))
    candidates = HeuristicDistiller().distill_turn(turn, turn.occurred_at)
    # and what the statement's own words relate, read before the round trip through the first person
    own_entities, own = extract_relations(content, subject or ("用户" if has_cjk(content) else "The user"))
    found_relations = [r for c in candidates for r in c.relations] + own
    relations = list({(r.subject, r.relation, r.object): r for r in found_relations}.values())
    if not relations:
        return [], []
    language = "zh" if has_cjk(content) else "en"
    # Typed as the distiller typed them in the first-person turn, else as the statement names them.
    found = {e.name.lower(): e for e in find_entities(content, language, tags)}
    found.update({e.name.lower(): e for c in candidates for e in c.entities})
    found.update(
        {e.name.lower(): e for e in own_entities if e.type != "other" or e.name.lower() not in found}
    )
    subjects = {r.subject for r in relations} | ({subject} if subject else set())
    entities = []
    for name in dict.fromkeys(n for r in relations for n in (r.subject, r.object)):
        typed = found.get(name.lower())
        if name in subjects and (typed is None or typed.type in ("other", "person")):
            entities.append(EntityOut(name=name, type="person"))
        else:
            entities.append(found.get(name.lower(), EntityOut(name=name, type="other")))
    return dedupe_entities(entities), relations
