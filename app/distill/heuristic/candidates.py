"""The heuristic distiller's units, built: a clause the rules tagged (`typed_unit`), a bare value that
fills an open slot (`slot_unit`), each said by its speaker in the third person (`attributed_content`)."""

from __future__ import annotations

import re
from datetime import datetime

from app.distill.dates import resolve_dates
from app.distill.heuristic import clean
from app.distill.heuristic.context import slot_value
from app.distill.heuristic.entities import dedupe_entities, find_entities
from app.distill.heuristic.person import first_person_to_speaker
from app.distill.heuristic.rules import DESCRIPTIVE_RELATIONS, HEDGE_EN, HEDGE_ZH, PREFERENCE_TOPICS, Rule
from app.distill.heuristic.slots import Slot
from app.distill.heuristic.tuning import CORRECTION_IMPORTANCE_BONUS, HEDGE_FACTOR
from app.distill.heuristic.voice import attributed, listener_named, voice
from app.distill.types import Candidate, Turn
from app.entities.types import EntityOut, RelationOut, fits_a_name
from app.text import has_cjk


def language_of(text: str) -> str:
    return "zh" if has_cjk(text) else "en"


def speaker_of(turn: Turn, language: str) -> tuple[str, bool]:
    if turn.speaker:
        return turn.speaker, True
    return voice(language, turn.role)[0], False


def _topic(text: str) -> str | None:
    return next((tag for tag, pattern in PREFERENCE_TOPICS if pattern.search(text)), None)


def _tags(sentence: str, matches: list[tuple[Rule, re.Match[str]]]) -> list[str]:
    tags: list[str] = []
    for rule, match in matches:
        tag = rule.tag
        if tag == "preference":
            # the topic of what is preferred ("hiking"), else of the whole sentence ("…every weekend")
            tag = _topic(match.groupdict().get("obj") or "") or _topic(sentence) or tag
        if tag not in tags:
            tags.append(tag)
    # the most specific tags win: "constraint" goes when "constraint.budget" is there, and the
    # catch-all "fact" ("my X is Y") when anything else matched
    tags = [t for t in tags if not any(o.startswith(t + ".") for o in tags)]
    if len(tags) > 1 and "fact" in tags:
        tags.remove("fact")
    # a correction is tagged by what it corrects first, then `correction`
    return sorted(tags, key=lambda t: t == "correction")


def typed_unit(
    turn: Turn,
    sentence: str,
    language: str,
    matches: list[tuple[Rule, re.Match[str]]],
    local_time: datetime,
    hedged: bool = False,
) -> Candidate:
    rules = [rule for rule, _ in matches]
    tags = _tags(sentence, matches)
    hedge = hedged or (HEDGE_ZH if language == "zh" else HEDGE_EN).search(sentence)
    confidence = max(r.confidence for r in rules) * (HEDGE_FACTOR if hedge else 1.0)
    importance = max(r.importance for r in rules)
    if "correction" in tags:
        importance += CORRECTION_IMPORTANCE_BONUS
    speaker, named = speaker_of(turn, language)
    plan = tags[0].split(".", 1)[0] in ("task_state", "constraint")  # a step or a limit: dates ahead
    content, dates = resolve_dates(clean.strip_wrapping(sentence), local_time, plan)
    content = attributed_content(
        first_person_to_speaker(content, speaker, named), speaker, language, turn.role, named
    )
    entities = find_entities(sentence, language, tags)
    entities += [EntityOut(name=d.text, type="date") for d in dates]
    relations = []
    objects = []  # typed by the rule that found them, ahead of the guesses from the text
    for rule, match in matches:
        obj = (match.groupdict().get("obj") or "").strip(" ,.'")
        if rule.relation and not obj and rule.object_type == "amount":
            obj = next((e.name for e in entities if e.type == "amount"), "")
        if not (rule.relation and fits_a_name(obj)):
            continue
        entity = EntityOut(name=obj, type=rule.object_type)
        if rule.relation in DESCRIPTIVE_RELATIONS and not clean.worth_a_node(entity):
            continue  # "prefers 简洁的回答": a description, not a thing; the tag says it
        objects.append(entity)
        relations.append(RelationOut(subject=speaker, relation=rule.relation, object=obj))
    entities = objects + entities
    if named:
        entities.insert(0, EntityOut(name=speaker, type="person"))
    entities = [e for e in entities if clean.worth_a_node(e, () if named else (speaker,))]
    return Candidate(
        content=content,
        tags=tags,
        confidence=round(confidence, 3),
        importance=round(min(importance, 1.0), 3),
        source_seqs=[turn.seq],
        entities=dedupe_entities(entities),
        relations=relations,
    )


def slot_unit(turn: Turn, claim: str, language: str, slot: Slot, local_time: datetime) -> Candidate | None:
    """A bare value said while `slot` is open fills it ("可以到8000" right after a budget)."""
    value = slot_value(claim, language, slot, local_time)
    if value is None:
        return None
    hedge = (HEDGE_ZH if language == "zh" else HEDGE_EN).search(claim)
    speaker, named = speaker_of(turn, language)
    content, dates = resolve_dates(clean.strip_wrapping(claim), local_time, slot.tag.startswith("constraint"))
    content = attributed_content(
        first_person_to_speaker(content, speaker, named), speaker, language, turn.role, named
    )
    if not fits_a_name(value):
        return None
    kind = {"amount": "amount", "date": "date", "place": "place"}[slot.value]
    entities = [EntityOut(name=value, type=kind)] + [EntityOut(name=d.text, type="date") for d in dates]
    if named:
        entities.insert(0, EntityOut(name=speaker, type="person"))
    relations = [RelationOut(subject=speaker, relation=slot.relation, object=value)] if slot.relation else []
    return Candidate(
        content=content,
        tags=[slot.tag],
        confidence=round(slot.confidence * (HEDGE_FACTOR if hedge else 1.0), 3),
        importance=slot.importance,
        source_seqs=[turn.seq],
        entities=dedupe_entities(entities),
        relations=relations,
    )


def attributed_content(
    content: str, speaker: str, language: str, role: str = "user", named: bool = False
) -> str:
    """Every unit says whose it is, as the subject of a sentence: "The user says …", never "The user: …".
    The listener is named for the roles (a named speaker's listener is not known)."""
    return attributed(content if named else listener_named(content, role, language), speaker, language, role)
