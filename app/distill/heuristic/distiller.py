"""The offline default distiller: English and Chinese rules (see `rules.py`) applied sentence by
sentence, first person resolved to the speaker, relative dates resolved against the turn's time."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from app.claims import lexicon as lx
from app.distill.dates import resolve_dates
from app.distill.heuristic import clean
from app.distill.heuristic.candidates import (
    attributed_content,
    language_of,
    slot_unit,
    speaker_of,
    typed_unit,
)
from app.distill.heuristic.clauses import Clause, split_clauses
from app.distill.heuristic.context import ASIDE, chunks, leans_on_turn, open_slot, question_to
from app.distill.heuristic.ellipsis import made_whole_all
from app.distill.heuristic.entities import dedupe_entities, find_entities
from app.distill.heuristic.kinds import clause_kind, discussed, is_request
from app.distill.heuristic.life_events import is_life_event
from app.distill.heuristic.noise import PROMISE, RECAP
from app.distill.heuristic.parts import (
    CHANNEL,
    KIND_RULES,
    episode_text,
    fragment_claim,
    kind_first,
    kind_rule,
    leftover_kind,
    linked,
    says_enough,
    steps_done,
)
from app.distill.heuristic.parts import matches as _matches
from app.distill.heuristic.person import first_person_to_speaker
from app.distill.heuristic.predicates import states_something
from app.distill.heuristic.relations import with_relations
from app.distill.heuristic.rules import QUESTION_EN, QUESTION_ZH
from app.distill.heuristic.scene import budgets_with_their_thing
from app.distill.heuristic.sizes import (
    has_content,
    is_filler,
    is_short,
    only_owns_error,
    record_fields,
    states_claims,
)
from app.distill.heuristic.slots import Slot
from app.distill.heuristic.task_detector import detect_task
from app.distill.heuristic.tuning import (
    ASSISTANT_EPISODE,
    ECHO_WINDOW,
    EPISODE_MAX_CHARS,
    KIND_DEFAULTS,
    MAX_SPLIT_CLAUSES,
    SLOT_WINDOW,
)
from app.distill.heuristic.turn_claims import claims_from_turn
from app.distill.types import Candidate, DistillContext, DistillResult, TaskResult, Turn
from app.entities.types import EntityOut
from app.text import split_sentences, strip_invisible, with_commas

_ASSISTANT_SELF = re.compile(r"^(?:I|I'm|I am|I'd|me too|我(?!们))(?:\b|(?=[\u4e00-\u9fff]))", re.IGNORECASE)


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
        return TaskResult(detect_task(context, min_steps))  # app/distill/heuristic/task_detector.py

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
        recent = turns[max(0, index - SLOT_WINDOW - ECHO_WINDOW) : index]
        # in the turn's order: a unit, or a clause left for the episode (whether a question, where it sits)
        parts: list[tuple[Candidate | None, bool, str, tuple[int, Clause]]] = []
        # an echo restates what the user said (an assistant confirming a tool's finding adds its word)
        # (a read-back, "Just to confirm: …", echoes the whole conversation so far)
        heard = turns[:index] if turn.role != "user" and RECAP.search(turn.content) else recent[-ECHO_WINDOW:]
        said = " ".join(t.content for t in heard if t.role != turn.role and "user" in (t.role, turn.role))
        slot = open_slot(recent, turn)
        # (a tool's record, its fields apart: "order 1042 | shipped | ETA Friday", "status=open; owner=ops")
        fields = list(record_fields(turn.content)) if turn.role == "tool" else []
        sentences = fields or made_whole_all(split_sentences(with_commas(turn.content)), turn, recent)
        # said to an assistant (one answers in the conversation), a short turn states claims to remember;
        # between people, talk is a story told, and only a one-sentence turn's clauses are claims
        service = any(t.role != "user" for t in turns)
        claims_turn = bool(fields) or states_claims(turn.content, sentences, service)
        owned_error = False  # a sentence owning an error ("不对，我记错了。"): the next ones correct
        for number, sentence in enumerate(sentences):
            language = language_of(sentence)
            if is_filler(sentence, language):
                continue
            if only_owns_error(sentence, language):
                owned_error = True  # "Sorry, I typed my size wrong.": states nothing, the next corrects
                continue
            clauses = split_clauses(sentence, answer=service and number == 0 and asked is not None)
            if owned_error:
                clauses = [replace(c, correction=True) for c in clauses]
            # a short turn's plain clauses are its claims; a long one's are a narrative, where a sentence
            # is cut only when each of its clauses is a claim (else it stays whole, its context kept)
            short = claims_turn and (service or len(clauses) <= MAX_SPLIT_CLAUSES)
            context = (said, names, slot, quoted, short, short and service)
            cut = self._sentence_parts(turn, number, clauses, language, local_time, context)
            made = [unit for unit, *_ in cut if unit is not None]
            if not short and len(clauses) > 1 and made and len(made) < len(cut):
                whole = Clause(sentence, 0, len(sentence), clauses[0].correction, clauses[0].hedged)
                cut = self._sentence_parts(turn, number, [whole], language, local_time, context)
            parts += cut
            owned_error = not made and lx.owns_error(sentence, language == "zh")
        if any(unit is None for unit, *_ in parts) and not (claims_turn and service):
            # a mention in a turn that says more stays in the turn's episode, in its place
            parts = [(None, False, t, w) if u and loose else (u, loose, t, w) for u, loose, t, w in parts]
        units = [  # (a user's unit with the claims of its clause read in the turn whole: turn_claims.py)
            _with_turn_claims(unit, turn.content, clause) if turn.role == "user" else unit
            for unit, _, clause, _ in parts
            if unit is not None
        ]
        leftover = [clean.strip_wrapping(text) for text in episode_text(parts, sentences)]
        questions = sum(1 for unit, question, text, _ in parts if unit is None and question)
        question_only = bool(leftover) and questions == sum(1 for unit, *_ in parts if unit is None)
        if units and leftover and all(ASIDE.fullmatch(s) for s in leftover):
            # an aside ("(image: a photo of …)") alone is no claim: it stays with the claim it goes with
            last = units[-1]
            units[-1] = last.model_copy(update={"content": f"{last.content} {' '.join(leftover)}"})
            leftover = []
        units = budgets_with_their_thing(units)
        found = linked(steps_done(turn, units + self._episodes(turn, leftover, local_time, asked)))
        return [with_relations(u, speaker_of(turn, language_of(u.content))[0]) for u in found], question_only

    def _sentence_parts(
        self,
        turn: Turn,
        number: int,
        clauses: list[Clause],
        language: str,
        local_time: datetime,
        context: tuple[str, set[str], Slot | None, str | None, bool, bool],
    ) -> list[tuple[Candidate | None, bool, str, tuple[int, Clause]]]:
        """A sentence's clauses in order: each a unit (and whether it leans on its turn), or text left
        for the turn's episode (and whether it is a question)."""
        said, names, slot, quoted, short, stated = context
        parts: list[tuple[Candidate | None, bool, str, tuple[int, Clause]]] = []
        for clause in clauses:
            claim = clause.text
            if is_filler(claim, language):
                continue
            where = (number, clause)
            question = (QUESTION_ZH if language == "zh" else QUESTION_EN).search(claim) is not None
            first = clause is clauses[0]
            size = len(clauses)
            unit = self._clause_unit(
                turn, clause, language, question, local_time, said, names, size, (short, stated), first
            )
            if slot is not None and not question and turn.role == "user" and (unit is None or _generic(unit)):
                # a bare value said while a slot is open fills it, whatever plain kind the clause reads as
                filled = slot_unit(turn, claim, language, slot, local_time)
                if filled is not None:
                    parts.append((filled, False, claim, where))
                    continue
            if unit is not None:
                found = _matches(claim, language, turn.role)
                loose = bool(found) and leans_on_turn(claim, language, found) and unit.tags[0] != "correction"
                parts.append((unit, loose, claim, where))
                continue
            if claim == quoted or self._noise(claim, turn.role, question, said, names):
                continue
            if not is_short(claim, language):
                parts.append((None, question, claim, where))
        return parts

    def _clause_unit(
        self,
        turn: Turn,
        clause: Clause,
        language: str,
        question: bool,
        local_time: datetime,
        said: str,
        names: set[str],
        clauses: int,
        shape: tuple[bool, bool],
        first: bool = True,
    ) -> Candidate | None:
        """The clause's unit: tagged by the rules that recognise it, else by what it is (kinds.py); None
        for a question that asks nothing to be done, and for what stays in the turn's episode."""
        claim = clause.text
        short, stated = shape  # a short turn's clause; a claim stated to an assistant
        # what the clause is leads a rule's tag in a claim stated to an assistant, and in what an
        # assistant or a tool says (a step done before the id it names)
        kind_leads = stated or turn.role != "user"
        # a request opens its sentence ("Please …", "请…"); one inside a story is reported speech
        request = turn.role == "user" and (first or short) and is_request(claim, language)
        if (question and not request) or (turn.role != "user" and PROMISE.search(claim)):
            return None  # an assistant's "I'll look into it" is an offer, not a fact
        if turn.role != "user" and said and RECAP.search(turn.content) and clean.is_echo(claim, said, names):
            return None  # what the user said, read back ("Just to confirm: …"): the user's turn holds it
        matches = _matches(claim, language, turn.role)
        if request:  # a request's contrast ("by text, not by email") says how: it corrects nothing
            matches = [m for m in matches if m[0].tag != "correction"]
        elif clause.correction:
            matches.append(KIND_RULES["correction"])
        corrections = [m for m in matches if m[0].tag == "correction"]
        if not corrections and clean.is_small_talk_from(claim, turn.role, names):
            return None  # "Got it, I've updated your preferences": whatever a rule sees in it
        kind = clause_kind(claim, language, turn.role, stated=stated)
        field = turn.role == "tool" and bool(record_fields(turn.content))
        kind = "fact" if field and kind == "episode" else kind  # a record's field is data, no story
        # a request about how to be served is a preference, whatever channel words a rule saw in it
        served = request and kind == "preference"
        ruled = [m for m in matches if not m[0].loose and m[0].tag != "correction"]
        if ruled and not (served and all(m[0].tag in CHANNEL for m in ruled)):
            if not (question and any(m[0].tag.startswith("constraint.quantity") for m in ruled)):
                unit = typed_unit(turn, claim, language, matches, local_time, clause.hedged)
                return kind_first(unit, kind) if kind_leads else unit
        if self._noise(claim, turn.role, question, said, names) and not corrections:
            return None
        # "Booked!" is short and still news; so is a value or a wish said to an assistant ("From Leeds."),
        # and every field of a tool's record ("price=$64.00", "refund eligible")
        fragment = stated and fragment_claim(claim, kind, names)
        done = fragment if turn.role == "user" else kind == "task_state" or field
        if not (request or done or corrections) and (
            (is_short(claim, language) and not stated)  # a stated "I'm diabetic" is a claim
            or not says_enough(claim, language)
            or not states_something(claim)
        ):
            return None
        loose = [m for m in matches if m[0].loose and m[0].tag != "correction"]
        if loose and not request:
            unit = typed_unit(turn, claim, language, loose + corrections, local_time, clause.hedged)
            return kind_first(unit, kind) if kind_leads else unit
        # a compound's clauses are its claims in a short turn; in a long one they are a narrative
        if not (corrections or request or done or stated or (clauses > 1 and short)):
            return None  # a plain sentence stays with its turn (its kind: _leftover_kind)
        if kind == "episode" and not corrections:
            return None  # advice given, a lesson covered: the turn's episode
        if corrections and (kind == "episode" or not states_something(claim)):
            return typed_unit(turn, claim, language, corrections, local_time, clause.hedged)
        matches = [kind_rule(kind), *corrections]
        return typed_unit(turn, claim, language, matches, local_time, clause.hedged)

    @staticmethod
    def _noise(sentence: str, role: str, question: bool, said: str, names: set[str]) -> bool:
        """Small talk (either role), and what an assistant says without adding anything: its questions
        (the answer quotes them), offers, echoes of what the user said, talk with nothing specific."""
        if clean.is_small_talk_from(sentence, role, names) or (role != "user" and PROMISE.search(sentence)):
            return True  # small talk, or an assistant's offer to act ("I'll look into it")
        if role == "user":
            return False
        if said and clean.is_echo(sentence, said, names):
            return True
        kind = clause_kind(sentence, language_of(sentence), role)
        if (
            role == "assistant"
            and _ASSISTANT_SELF.match(sentence)
            and kind != "task_state"
            and not discussed(sentence, role)
        ):
            return True  # the assistant about itself ("I prefer window seats too"): no news
        if role == "assistant" and not question and kind == "task_state":
            return False  # a step done or still to do is news, named or not ("收货地址还需要您确认")
        informative = clean.has_specifics(sentence, names) or clean.is_informative(sentence, names)
        return role == "assistant" and (question or not informative)

    def _episodes(
        self, turn: Turn, sentences: list[str], local_time: datetime, asked: tuple[Turn, str] | None
    ) -> list[Candidate]:
        text = " ".join(sentences)
        language = language_of(text)
        if not sentences or not has_content(text, language):
            return []
        speaker, named = speaker_of(turn, language)
        confidence, importance = KIND_DEFAULTS["episode"] if turn.role == "user" else ASSISTANT_EPISODE
        units = []
        for number, chunk in enumerate(
            chunks(sentences, EPISODE_MAX_CHARS[language], "" if language == "zh" else " ")
        ):
            content, dates = resolve_dates(chunk, local_time)
            content = attributed_content(
                first_person_to_speaker(content, speaker, named), speaker, language, turn.role, named
            )
            seqs = [turn.seq]
            replying = asked if number == 0 else None  # the answer starts the turn; one quote is enough
            if replying is not None:
                asker = speaker_of(replying[0], language)[0]
                content += (
                    f"（回复{asker}的问题“{replying[1]}”）"
                    if language == "zh"
                    else f' (replying to {asker}\'s question "{replying[1]}")'
                )
                seqs = [replying[0].seq, turn.seq]
            entities = find_entities(chunk, language, ["episode"]) + [
                EntityOut(name=d.text, type="date") for d in dates
            ]
            if named:
                entities.insert(0, EntityOut(name=speaker, type="person"))
            entities = [e for e in entities if clean.worth_a_node(e, () if named else (speaker,))]
            # A durable event (a move, an adoption, a new class) is a dated fact, not chatter; one
            # clause left over is what it says it is (a state, a happening), many are the turn's episode
            kind = leftover_kind(chunk, language, turn.role)
            event = kind == "fact.event" or (
                kind == "episode"
                and turn.role == "user"
                and replying is None
                and is_life_event(chunk, language)
            )
            units.append(
                Candidate(
                    content=content,
                    tags=["fact.event"] if event else [kind],
                    confidence=confidence,
                    importance=importance,
                    source_seqs=seqs,
                    entities=dedupe_entities(entities),
                    occurred_on=dates[0].value if event and dates else None,
                )
            )
        return units


def _generic(unit: Candidate) -> bool:
    """A unit whose kind says nothing of what it is about (a plain fact or episode)."""
    return unit.tags[0] in ("fact", "episode")


def _with_turn_claims(unit: Candidate, turn: str, clause: str) -> Candidate:
    """The clause's unit with the claims its turn, read whole, says in that clause (turn_claims.py)."""
    claims = claims_from_turn(turn, clause, unit.content, unit.tags)
    return unit if claims is None else unit.model_copy(update={"claims": claims})
