"""The offline default distiller: English and Chinese rules (see `rules.py`) applied sentence by
sentence, first person resolved to the speaker, relative dates resolved against the turn's time."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from app.distill.dates import EN_PATTERN as DATE_EN
from app.distill.dates import resolve_dates
from app.distill.heuristic import clean
from app.distill.heuristic import rules as R
from app.distill.heuristic.context import ASIDE, chunks, leans_on_turn, open_slot, question_to, slot_value
from app.distill.heuristic.entities import dedupe_entities, find_entities
from app.distill.heuristic.events import is_life_event
from app.distill.heuristic.person import WORD, first_person_to_speaker
from app.distill.heuristic.relations import with_relations
from app.distill.heuristic.tasks import detect_task
from app.distill.types import Candidate, DistillContext, DistillResult, TaskResult, Turn
from app.memory.graph import EntityOut, RelationOut, fits_a_name
from app.text import FILLER_EN, STOPWORDS_EN, has_cjk, split_sentences, strip_invisible

DEFAULT_SPEAKER = {
    ("en", "user"): "The user",
    ("en", "assistant"): "The assistant",
    ("en", "tool"): "A tool",
    ("zh", "user"): "用户",
    ("zh", "assistant"): "助手",
    ("zh", "tool"): "工具",
}


def _language(text: str) -> str:
    return "zh" if has_cjk(text) else "en"


def _speaker(turn: Turn, language: str) -> tuple[str, bool]:
    if turn.speaker:
        return turn.speaker, True
    return DEFAULT_SPEAKER.get((language, turn.role), DEFAULT_SPEAKER[(language, "user")]), False


# First person becomes placeholders (subject, possessive, object, reflexive), then words: the first
# mention names the speaker, later ones are pronouns, so the name does not crowd out the content.
def _is_filler(sentence: str, language: str) -> bool:
    if language == "zh":
        rest = R.FILLER_ZH.sub("", sentence)
        return len(rest) < 2 and not any(c.isdigit() for c in rest)
    return all(w.lower() in FILLER_EN for w in WORD.findall(sentence))


def _is_short(sentence: str, language: str) -> bool:
    """Two words or fewer ("Love it", "Me neither"): dropped unless a rule finds something ("I'm vegan")."""
    if language == "zh":
        return False
    words = WORD.findall(sentence)
    return len(words) <= 2 and not any(w.isdigit() for w in words)


def _has_content(text: str, language: str) -> bool:
    if language == "zh":
        rest = R.FILLER_ZH.sub("", text)
        return len(rest) >= R.MIN_CONTENT_CHARS_ZH
    words = [w.lower() for w in WORD.findall(text)]
    content = [w for w in words if w not in STOPWORDS_EN and len(w) > 1]
    # two content words are enough with a number or a date: "The meeting is on Tuesday"
    specific = any(w.isdigit() for w in words) or DATE_EN.search(text) is not None
    return len(content) >= R.MIN_CONTENT_WORDS_EN or (len(content) >= 2 and specific)


def _matches(sentence: str, language: str, role: str) -> list[tuple[R.Rule, re.Match[str]]]:
    found = []
    for rule in R.ZH_RULES if language == "zh" else R.EN_RULES:
        if role not in rule.roles:
            continue
        match = rule.pattern.search(sentence)
        if match is None:
            continue
        obj = match.groupdict().get("obj")
        if obj is not None and all(w in R.EMPTY_OBJECTS for w in re.findall(r"[\w']+", obj.lower())):
            continue  # "I love it!" states no preference
        found.append((rule, match))
    return found


def _topic(text: str) -> str | None:
    return next((tag for tag, pattern in R.PREFERENCE_TOPICS if pattern.search(text)), None)


def _tags(sentence: str, matches: list[tuple[R.Rule, re.Match[str]]]) -> list[str]:
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


class HeuristicDistiller:
    name = "heuristic"
    version = "heuristic-3"
    uses_related = False

    async def distill(self, context: DistillContext) -> DistillResult:
        # Invisible characters would split words and hide a rule's "^My" behind 200 bidi overrides.
        turns = [replace(t, content=strip_invisible(t.content)) for t in context.turns]
        names = {t.speaker for t in turns if t.speaker}
        parts: list[tuple[Turn, list[Candidate], bool]] = []
        asked: list[tuple[Turn, str] | None] = []
        previous: Turn | None = None
        for index, turn in enumerate(turns):
            asked.append(question_to(turn, previous))
            units, question_only = self._turn(
                turn, self._local(turn, context), asked[-1], turns, index, names
            )
            parts.append((turn, units, question_only))
            previous = turn
        candidates: list[Candidate] = []
        for index, (turn, units, question_only) in enumerate(parts):
            following = parts[index + 1][1] if index + 1 < len(parts) else []
            quoted = asked[index + 1] if index + 1 < len(parts) else None
            if quoted is None or not any(
                u.source_seqs == [turn.seq, parts[index + 1][0].seq] for u in following
            ):
                candidates += units
            elif question_only:
                # the answer's episode quotes (and cites) the question: it needs no unit of its own
                candidates += [u for u in units if u.tags != ["episode"]]
            else:  # ... nor a second copy in the rest of what its turn said
                local = self._local(turn, context)
                candidates += self._turn(turn, local, asked[index], turns, index, names, quoted[1])[0]
        return DistillResult(candidates)

    @staticmethod
    def _local(turn: Turn, context: DistillContext) -> datetime:
        return turn.occurred_at.astimezone(context.timezone)

    async def task(self, context: DistillContext, min_steps: int) -> TaskResult:
        return TaskResult(detect_task(context, min_steps))  # app/distill/heuristic/tasks.py

    async def aclose(self) -> None:
        return None

    def distill_turn(
        self,
        turn: Turn,
        local_time: datetime,
        asked: tuple[Turn, str] | None = None,
        recent: list[Turn] | None = None,
    ) -> list[Candidate]:
        """The turn's units. `asked`: the other speaker's question this turn answers, which its
        episode quotes (and cites): "Researching adoption agencies" means little without "What are
        your plans for the summer?". `recent`: the turns said before it (echoes, open slots)."""
        turns = [*(recent or []), turn]
        names = {t.speaker for t in turns if t.speaker}
        return self._turn(turn, local_time, asked, turns, len(turns) - 1, names)[0]

    def _turn(
        self,
        turn: Turn,
        local_time: datetime,
        asked: tuple[Turn, str] | None,
        turns: list[Turn],
        index: int,
        names: set[str],
        quoted: str | None = None,
    ) -> tuple[list[Candidate], bool]:
        """The turn's units (`turns[index]`), and whether what is left for its episode is only a
        question. `quoted`: a question of this turn the next turn's episode quotes, left out here."""
        if turn.role == "system":
            return [], False
        recent = turns[max(0, index - R.SLOT_WINDOW - R.ECHO_WINDOW) : index]
        # in the turn's order: a unit (and whether only loose rules found it), or text for the episode
        parts: list[tuple[Candidate | None, bool, str]] = []
        said = " ".join(t.content for t in recent[-R.ECHO_WINDOW :] if t.role != turn.role)
        slot = open_slot(recent, turn)
        for sentence in split_sentences(turn.content):
            language = _language(sentence)
            if _is_filler(sentence, language):
                continue
            question = (R.QUESTION_ZH if language == "zh" else R.QUESTION_EN).search(sentence)
            for claim, matches in self._claims(sentence, language, turn.role, question is not None):
                if matches:
                    unit = self._typed_unit(turn, claim, language, matches, local_time)
                    parts.append((unit, leans_on_turn(claim, language, matches), claim))
                    continue
                if slot is not None and not question and turn.role == "user":
                    filled = self._slot_unit(turn, claim, language, slot, local_time)
                    if filled is not None:
                        parts.append((filled, False, claim))
                        continue
                if claim == quoted or self._noise(claim, turn.role, question is not None, said, names):
                    continue
                if not _is_short(claim, language):
                    parts.append((None, question is not None, claim))
        if any(unit is None for unit, _, _ in parts):
            # a mention in a turn that says more stays in the turn's episode, in its place
            parts = [
                (None, False, text) if unit and loose else (unit, loose, text) for unit, loose, text in parts
            ]
        units = [unit for unit, _, _ in parts if unit is not None]
        leftover = [clean.strip_wrapping(text) for unit, _, text in parts if unit is None]
        questions = sum(1 for unit, question, _ in parts if unit is None and question)
        question_only = bool(leftover) and questions == len(leftover)
        if units and leftover and all(ASIDE.fullmatch(s) for s in leftover):
            # an aside ("(image: a photo of …)") alone is no claim: it stays with the claim it goes with
            last = units[-1]
            units[-1] = last.model_copy(update={"content": f"{last.content} {' '.join(leftover)}"})
            leftover = []
        found = units + self._episodes(turn, leftover, local_time, asked)
        return [with_relations(u, _speaker(turn, _language(u.content))[0]) for u in found], question_only

    @staticmethod
    def _claims(
        sentence: str, language: str, role: str, question: bool
    ) -> list[tuple[str, list[tuple[R.Rule, re.Match[str]]]]]:
        """One claim per unit: the sentence cut where it joins unrelated claims, when every part is a
        claim a rule recognises; else the sentence whole. A question states nothing new."""
        if question:
            return [(sentence, [])]
        claims = clean.split_claims(sentence)
        matched = [(claim, _matches(claim, language, role)) for claim in claims]
        if len(matched) > 1 and all(m for _, m in matched):
            return matched
        return [(sentence, _matches(sentence, language, role))]

    @staticmethod
    def _noise(sentence: str, role: str, question: bool, said: str, names: set[str]) -> bool:
        """Small talk (either role), and what an assistant says without adding anything: its questions
        (the answer quotes them), offers, echoes of what the user said, talk with nothing specific."""
        if clean.is_small_talk(sentence, names):
            return True
        if role == "user":
            return False
        if said and clean.is_echo(sentence, said, names):
            return True
        return role == "assistant" and (question or not clean.has_specifics(sentence, names))

    def _typed_unit(
        self,
        turn: Turn,
        sentence: str,
        language: str,
        matches: list[tuple[R.Rule, re.Match[str]]],
        local_time: datetime,
    ) -> Candidate:
        rules = [rule for rule, _ in matches]
        tags = _tags(sentence, matches)
        hedge = (R.HEDGE_ZH if language == "zh" else R.HEDGE_EN).search(sentence)
        confidence = max(r.confidence for r in rules) * (R.HEDGE_FACTOR if hedge else 1.0)
        importance = max(r.importance for r in rules)
        if "correction" in tags:
            importance += R.CORRECTION_IMPORTANCE_BONUS
        speaker, named = _speaker(turn, language)
        content, dates = resolve_dates(clean.strip_wrapping(sentence), local_time)
        content = self._attributed(first_person_to_speaker(content, speaker, named), speaker, language)
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
            if rule.relation in R.DESCRIPTIVE_RELATIONS and not clean.worth_a_node(entity):
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

    def _episodes(
        self, turn: Turn, sentences: list[str], local_time: datetime, asked: tuple[Turn, str] | None
    ) -> list[Candidate]:
        text = " ".join(sentences)
        language = _language(text)
        if not sentences or not _has_content(text, language):
            return []
        speaker, named = _speaker(turn, language)
        confidence, importance = R.KIND_DEFAULTS["episode"] if turn.role == "user" else R.ASSISTANT_EPISODE
        units = []
        for number, chunk in enumerate(
            chunks(sentences, R.EPISODE_MAX_CHARS[language], "" if language == "zh" else " ")
        ):
            content, dates = resolve_dates(chunk, local_time)
            content = self._attributed(first_person_to_speaker(content, speaker, named), speaker, language)
            seqs = [turn.seq]
            replying = asked if number == 0 else None  # the answer starts the turn; one quote is enough
            if replying is not None:
                asker = _speaker(replying[0], language)[0]
                content += (
                    f"（回复{asker}：“{replying[1]}”）"
                    if language == "zh"
                    else f' (replying to {asker}: "{replying[1]}")'
                )
                seqs = [replying[0].seq, turn.seq]
            entities = find_entities(chunk, language, ["episode"]) + [
                EntityOut(name=d.text, type="date") for d in dates
            ]
            if named:
                entities.insert(0, EntityOut(name=speaker, type="person"))
            entities = [e for e in entities if clean.worth_a_node(e, () if named else (speaker,))]
            # A durable event (a move, an adoption, a new class) is a dated fact, not chatter.
            event = turn.role == "user" and replying is None and is_life_event(chunk, language)
            units.append(
                Candidate(
                    content=content,
                    tags=["fact.event"] if event else ["episode"],
                    confidence=confidence,
                    importance=importance,
                    source_seqs=seqs,
                    entities=dedupe_entities(entities),
                    occurred_on=dates[0].value if event and dates else None,
                )
            )
        return units

    def _slot_unit(
        self, turn: Turn, claim: str, language: str, slot: R.Slot, local_time: datetime
    ) -> Candidate | None:
        """A bare value said while `slot` is open fills it ("可以到8000" right after a budget)."""
        value = slot_value(claim, language, slot, local_time)
        if value is None:
            return None
        hedge = (R.HEDGE_ZH if language == "zh" else R.HEDGE_EN).search(claim)
        speaker, named = _speaker(turn, language)
        content, dates = resolve_dates(clean.strip_wrapping(claim), local_time)
        content = self._attributed(first_person_to_speaker(content, speaker, named), speaker, language)
        if not fits_a_name(value):
            return None
        kind = {"amount": "amount", "date": "date", "place": "place"}[slot.value]
        entities = [EntityOut(name=value, type=kind)] + [EntityOut(name=d.text, type="date") for d in dates]
        if named:
            entities.insert(0, EntityOut(name=speaker, type="person"))
        relations = (
            [RelationOut(subject=speaker, relation=slot.relation, object=value)] if slot.relation else []
        )
        return Candidate(
            content=content,
            tags=[slot.tag],
            confidence=round(slot.confidence * (R.HEDGE_FACTOR if hedge else 1.0), 3),
            importance=slot.importance,
            source_seqs=[turn.seq],
            entities=dedupe_entities(entities),
            relations=relations,
        )

    @staticmethod
    def _attributed(content: str, speaker: str, language: str) -> str:
        """Every unit says whose it is: "Alice: budget 5000 max" when no first person named her."""
        if speaker.lower() in content.lower():
            return content
        return f"{speaker}：{content}" if language == "zh" else f"{speaker}: {content}"
