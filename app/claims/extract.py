"""Claims read from a statement, free of I/O: split into clauses, each clause's typed value, the value a
change names as replaced, its modality, its subject and its attribute (a head and the words narrowing it)."""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import replace

from app.claims import heads
from app.claims import lexicon as lx
from app.claims.attribute import CHANGE_NOUNS, WORD, frame_words, head_of, scene_words, slotted
from app.claims.clause_value import asked_for, main_value, product_of, strip, versioned_change
from app.claims.clauses import asserted, possessed_first
from app.claims.clauses import clauses as split_clauses
from app.claims.denial import carried, denied
from app.claims.frames import mask, zh_words
from app.claims.kept import kept_apart, unchanged
from app.claims.modality import retirement, says_cleft, says_hedged, says_past
from app.claims.model import Claim, Modality, Value
from app.claims.sides import EN_SUITS, change_parts, named_part, without_article
from app.claims.subjects import THIRD_PERSON, subject_of, subject_words
from app.claims.topic import ends_a_doing, main_verb, retired_words, topic
from app.claims.values import find_values, free
from app.text import has_cjk, split_sentences

MAX_CHARS = 20_000  # a statement longer than this is read up to here: claims live in short clauses
_ABBREVIATION = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof|St|Mt|No|vs|etc|approx)\.(?=\s)", re.IGNORECASE)
_PRONOUN_LEAD = re.compile(
    r"^\s*(?:i|we|you|he|she|they|my|our|我|我们|你|他|她|他们)\b|^\s*(?:我|我们|你|他|她)", re.IGNORECASE
)
# A heading before a colon ("Correction:", "Quick context for later:", "更正："): the claim follows it
_PREFIX = re.compile(
    r"^\s*(?:(?:[a-z]+\s+){0,2}(?:corrections?|updates?|news|heads\s+up|fyi|context|background|notes?|reminders?)"
    r"(?:\s+[a-z']+){0,4}|更正|纠正|补充|更新)\s*[:：]\s*",
    re.IGNORECASE,
)


def extract(
    text: str, lang: str | None = None, subject: str = "user", tags: Iterable[str] = ()
) -> list[Claim]:
    """The claims of `text`, one per clause that states a value; `subject` names the speaker, a tag
    holding "correction" marks every clause as a correction."""
    text = unicodedata.normalize("NFKC", text[:MAX_CHARS])
    lang = lang or ("zh" if has_cjk(text) else "en")
    # a correction tagged, or an error owned anywhere in the statement ("Scratch that figure. It's
    # £1,320."): every sentence of it corrects what was said
    corrected = any("correction" in t for t in tags) or lx.owns_error(text, lang == "zh")
    claims: list[Claim] = []
    text = lx.REPLY_QUOTE.sub("", lx.DATE_NOTE.sub("", text))
    for sentence in split_sentences(_ABBREVIATION.sub(r"\1", text)):
        if sentence.rstrip().endswith(("?", "？")):
            # a question asserts nothing ("can you move it to Friday?" has moved nothing yet), only
            # what is said before it
            sentence = asserted(sentence, has_cjk(sentence))
            if not sentence:
                continue
        sentence = lx.SPEAKER_ZH.sub("我", lx.REPORTED.sub("", sentence, count=1))
        heading = _PREFIX.match(sentence)
        # (a correction or an update said as its heading marks the change)
        prefixed = (
            heading is not None
            and re.search(r"correction|update|更正|纠正", heading.group(), re.I) is not None
        )
        # "I want to buy a laptop. My budget is 5000.": a bare head is narrowed by the sentence before's thing
        scene = _things(claims[-1], has_cjk(sentence)) if claims and not claims[-1].head else []
        said = sentence[heading.end() :] if heading else sentence
        claims += _sentence(said, lang, subject, corrected or prefixed, scene)
    return [slotted(c, tags) for c in claims]


def _things(claim: Claim, zh: bool) -> list[str]:
    """What a claim is about, for the clause after it: the object a free or named value names (笔记本 in
    我想买台笔记本, "laptop" in "I want to buy a laptop", "a MacBook"), else the words narrowing it."""
    thing = free(claim.value) or claim.value.type == "name"
    named = frame_words(claim.value.text, zh, nouns=True) if thing else []
    return sorted(w for w in (named or claim.qualifier) if w not in CHANGE_NOUNS)


def _sentence(sentence: str, lang: str, speaker: str, corrected: bool, scene: list[str]) -> list[Claim]:
    zh = lang.startswith("zh") or has_cjk(sentence)
    # a hedge holds for its whole sentence ("Friends rave about Dr Ruiz, and I might register with her")
    hedged = says_hedged(sentence, zh)
    clauses = [part for clause in split_clauses(sentence, zh) for part in kept_apart(clause, zh)]
    said = " ".join(clauses)  # a change word inside a dropped condition ("要是内存能加到32G") is no change
    change_words = lx.ZH_CHANGE if zh else lx.EN_CHANGE
    changed = (
        corrected or lx.owns_error(said, zh) or change_words.search(said) is not None or says_cleft(said, zh)
    )
    untimed = _TEMPORAL[zh].sub(" ", said)
    shifted = corrected or lx.owns_error(said, zh) or change_words.search(untimed) is not None
    claims: list[Claim] = []
    context: list[str] = []  # a value-less clause ("For the laptop") narrows the next one
    # `scene`: what the clause (or sentence) before was about, narrows a bare head ("…, budget 55ms")
    negated: list[str] = []
    topic_said = ""  # the topic of a denied value, carried to the value said next
    for clause in clauses:
        denial = denied(clause, clauses, zh)
        if denial:  # "amoxicillin, not penicillin", "改用微信, 别打电话了": the replaced value
            negated.append(denial[0])
            topic_said = denial[1]
            continue
        clause, topic_said = carried(lx.REPORTED.sub("", clause, count=1), topic_said)
        clause = possessed_first(clause, zh)
        if (lx.ZH_UNCHANGED if zh else lx.EN_UNCHANGED).search(clause):
            claims.append(unchanged(clause, zh, speaker))
            continue
        if not zh and claims and _APPOSITION_EN.match(clause) and not _has_predicate_en(clause):
            # a name or prepositional phrase after a comma ("my therapist, Dr Lowe, on Mondays") is more of
            # the clause before, unless it gives a typed value of a noun of its own ("…, with a 45s timeout")
            last, own = claims[-1], _clause(clause, zh, speaker, hedged, (changed, shifted), context)
            if own is not None and own.topic - last.topic and own.value.type not in ("text", "name"):
                claims.append(replace(own, subject=last.subject, implicit_subject=last.implicit_subject))
            else:
                mentions = (*last.mentions, *(s.value for s in find_values(clause)))
                claims[-1] = replace(last, text=f"{last.text}, {clause.strip()}", mentions=mentions)
            continue
        # (a clause changing a value by a verb of change, hedging nothing itself, says it firmly: "目的地最后
        # 定成大理了" beside "就打算去骑这个")
        firm = change_words.search(_TEMPORAL[zh].sub(" ", clause)) and not says_hedged(clause, zh)
        claim = _clause(clause, zh, speaker, hedged and not firm, (changed, shifted), context)
        if (
            claim is not None
            and claim.head
            and claim.head not in heads.PERSONAL_HEADS
            and not claim.qualifier
            and scene
        ):
            claim = replace(claim, qualifier=frozenset(scene), attribute=f"{claim.head}.{'_'.join(scene)}")
        if claim is not None and not zh and claims and not claim.qualifier and _OF_THAT_EN.search(clause):
            # "Remote work is its own allowance, we get 8 days of that": what "that" points back to narrows it
            last = claims[-1]
            attribute = claim.attribute or "_".join(sorted(last.qualifier))
            claim = replace(claim, qualifier=last.qualifier, topic=last.topic, attribute=attribute)
        if (
            claim is not None
            and claim.implicit_subject
            and claims
            and not claims[-1].implicit_subject
            and not (claim.subject == THIRD_PERSON and claims[-1].subject == speaker)
        ):
            # "My son plays football on Saturdays and piano on Wednesdays": the son's piano
            claim = replace(claim, subject=claims[-1].subject, implicit_subject=False)
        if claim is not None and claims and _fills_head(claims[-1], claim):
            # "洗衣机的预算我再放宽点，3800以内都可以": the head said before, its value now
            last = claims[-1]
            text = f"{last.text}, {clause.strip()}"
            value = claim.value
            frame = mask(text, [value, *claim.mentions], zh, last.head)
            claims[-1] = replace(
                last, text=text, value=value, frame=frame, change=last.change or claim.change
            )
            continue
        if claim is not None and claims and _bare(claim):
            # a value alone ("I take one tablet of metformin, 500 mg"): more of the claim before it
            last = claims[-1]
            claims[-1] = replace(
                last, text=f"{last.text}, {clause.strip()}", mentions=(*last.mentions, claim.value)
            )
            continue
        if claim is None and subject_of(clause, zh, speaker)[0] != speaker:
            # "老婆在医院当护士": another person's state is a claim of its own, never an apposition
            claim = _clause_of(clause, zh, speaker)
        if claim is None:
            if claims and not _PRONOUN_LEAD.match(clause):
                # an apposition ("Project X, the robotics pilot") belongs to the claim before it
                last = claims[-1]
                claims[-1] = replace(last, text=f"{last.text}, {clause.strip()}")
            elif not lx.owns_error(clause, zh):
                # a clause owning an error ("我记错了") narrows nothing
                context = scene_words(clause, zh)
            continue
        claims.append(claim)
        if not claim.head:
            # "The recall endpoint gained a rerank stage, budget 55ms": the budget is the endpoint's;
            # "I want to buy a laptop, my budget is 5000": the laptop's
            scene = _things(claim, zh) or scene
    if negated:
        old = main_value(negated[0], zh) or Value("text", strip(negated[0]))
        named = None if free(old) and _anaphoric(old.text, zh) else old  # "…, not the other one"
        claims = [c if c.old_value else replace(c, old_value=named, change=True, shift=True) for c in claims]
    return claims


_FINITE_EN = re.compile(
    r"\b(?:is|are|was|were|am|be|been|being|has|have|had|do|does|did|will|would|can|could|should|shall|"
    r"must|may|might)\b|'(?:s|re|m|ve|ll|d)\b|n't\b",
    re.IGNORECASE,
)


# what may stand after a comma as a part of the clause before: a prepositional phrase, or a name alone
_APPOSITION_EN = re.compile(
    r"^\s*(?:(?:on|at|in|for|after|before|with|from|near|during|until|since|via|every)\b"
    r"|(?-i:(?:Dr|Mr|Mrs|Ms|Prof)\b\.?|[A-Z][\w'-]*(?:\s+[A-Z][\w'.-]*)*\s*[.!]?\s*$))",
    re.IGNORECASE,
)


# A preposition's object pointing back to the clause before ("8 days of that", "paid for it")
_OF_THAT_EN = re.compile(r"\b(?:of|for|on|with|about|from)\s+(?:that|it|this|those|them)\b", re.IGNORECASE)
# (and the speaker's own earlier words: "not what I wrote earlier", "not the one I told you")
_ANAPHORA_EN = frozenset(
    "other one ones previous former old earlier first last same before what i said told wrote typed".split()
)


_TEMPORAL = {True: lx.ZH_TEMPORAL, False: lx.EN_TEMPORAL}


def _anaphoric(text: str, zh: bool) -> bool:
    """Whether a named old value only points back ("the other one", "the old one", "原来那个")."""
    if zh:
        return not frame_words(text, zh)
    words = [w.lower() for w in WORD.findall(text)]
    return bool(words) and all(w in lx.EN_NOISE or w in _ANAPHORA_EN for w in words)


def _has_predicate_en(clause: str) -> bool:
    """Whether an English clause has a verb of its own, or a pronoun that opens one."""
    return bool(_FINITE_EN.search(clause) or _PRONOUN_LEAD.match(clause) or main_verb(clause, False))


def _fills_head(last: Claim, claim: Claim) -> bool:
    """Whether `claim` gives the typed value of the head the claim before named with no value of its type."""
    types = heads.TAG_HEAD_VALUES.get(last.head, ())
    return not claim.head and claim.value.type in types and last.value.type not in types


def _bare(claim: Claim) -> bool:
    """Whether a clause says nothing but its value."""
    return not (claim.head or claim.qualifier or claim.verb) and strip(claim.text) == strip(claim.value.text)


def _clause_of(clause: str, zh: bool, speaker: str) -> Claim:
    """A claim of free text about the person a clause names (what follows the person)."""
    subject = subject_of(clause, zh, speaker)[0]
    rest = strip(clause[clause.find(subject) + len(subject) :]) if subject in clause else strip(clause)
    value = Value("text", rest or strip(clause))
    return Claim(
        subject=subject,
        attribute="",
        value=value,
        text=clause.strip(),
        frame=mask(clause, [value], zh),
        verb=main_verb(rest, zh),
    )


def _clause(
    clause: str, zh: bool, speaker: str, hedged: bool, change: tuple[bool, bool], context: list[str]
) -> Claim | None:
    changed, shifted = change
    if strip(clause).lower() in lx.EN_INTERJECTIONS:
        return None
    error = lx.ZH_ERROR if zh else lx.EN_ERROR
    owned = error.sub(" ", clause)
    if error.search(clause) and not frame_words(owned, zh) and not find_values(owned):
        return None  # "Got that mixed up", "我刚才说错了": owning an error marks the sentence, states nothing
    old_text, value_text, frame_text = change_parts(clause, zh)
    # (从 before a time that starts something, 从下周开始, says a change and names no old value)
    start = zh and re.search(r"开始|(?<!一)起", old_text or "") is not None
    old = main_value(old_text, zh, opens_sentence=False) if old_text and not start else None
    retire = retirement(clause, zh) is not None
    value = main_value(value_text, zh, opens_sentence=value_text == clause)
    from_to = (lx.ZH_FROM_TO if zh else lx.EN_FROM_TO).search(clause) if old_text else None
    if from_to and value is None:
        # "from violin to cello", "from Jira to Linear": an untyped new side's words are the value, and
        # the old side's the old value (beside a typed new side an untyped old one says when, as in
        # 从下个月起加到2500, and this is not reached)
        value = named_part(value_text)
        old = old or named_part(old_text)
    if value is None and not zh and lx.EN_CLEFT.match(clause):
        value = named_part(value_text)  # "A green tea latte is what I get": the thing it puts first
    if not zh and EN_SUITS.match(clause) and (value is None or value.type in ("name", "text")):
        # "Window seats suit me": a taste, free text (its frame names no attribute: another taste suits too)
        value = Value("text", without_article(value_text))
    if value is None and not zh and not old_text and lx.EN_CHANGE_TO.search(clause):
        # "switched my seat to an aisle": a verb of change moving a thing to an untyped side, its words
        value = named_part(_ADJUNCT_EN.split(value_text, maxsplit=1)[0])
    if value is None and retire:
        value = main_value(clause, zh) or Value("text", strip(clause))
    if not zh and (value is None or value.type == "number"):
        value = versioned_change(clause) or value or asked_for(clause)
    if value is None:
        return None
    if retire and old is None:
        old = value
    if old is not None and free(old) and not retire and _anaphoric(old.text, zh):
        old = None  # "instead of the old one": a change naming no value
    if old_text and old is None:
        changed = shifted = True  # the construction says a value is replaced, whichever it names
    mentions = tuple(s.value for s in find_values(clause))
    subject, said = subject_of(clause, zh, speaker)
    if zh and said and value.text in lx.ZH_PEOPLE and not value_text.strip().endswith(value.text):
        # "用户的哥哥跳槽去了毕马威": the person is who the clause is about; the value is what is said of them
        value = main_value(value_text.replace(value.text, " "), zh) or value
    if subject == value.text.lower():  # "Priya is on call": who is on call is the value
        subject, said = speaker, False
    frame_text = (lx.ZH_CHANGE if zh else lx.EN_CHANGE).sub(" ", frame_text)
    if not zh:
        frame_text = _without_adjunct(frame_text, value)
    product = product_of(value)  # "upgraded *Postgres* to 16": the value's, no attribute word
    bare = _without(frame_text, [value.text, *(m.text for m in mentions), *([product] if product else [])])
    if zh:  # the role the value is put in ("用MySQL做主库") is the attribute's word, not 做主; who acted
        # on the speaker's thing ("房东给我涨到3300", "老板把周会调到周三") is no word of its attribute
        bare = _AGENT_ZH.sub(" ", _ZH_ROLE_MARK.sub(" ", bare), count=1)
    words = frame_words(bare, zh, nouns=True)
    words = [w for w in words if w not in subject_words(subject)] or context
    if zh and not retire and value.type == "text" and value.text.lstrip("了") in words:
        return None  # "我换了牙医": the clause names an attribute, the next one its value
    # a relation is read with the value it left out ("moved from Hull to Exeter" → "moved to Exeter")
    said_as = f"{clause[: from_to.start()]}to {from_to.group('new')}" if from_to and not zh else clause
    head, qualifier = head_of(said_as, words, zh)
    if head in heads.NAME_HEADS and value.type not in ("name", "text"):
        head, qualifier = "", words
    if head and head not in heads.PERSONAL_HEADS and not qualifier:
        qualifier = [w for w in context if w not in heads.RELATION_WORDS]
    # what a retirement ends narrows it ("cancelled my FitZone membership"); a doing alone ("stopped barking")
    if retire:
        ended = retired_words(clause, zh)
        qualifier = ended if ends_a_doing(clause, zh) else sorted({*qualifier, *ended})
    modality: Modality = "retired" if retire else "hedged" if hedged else "firm"
    additive = _adds(clause, zh)
    attribute = head + ("." + "_".join(sorted(qualifier)) if head and qualifier else "")
    return Claim(
        subject=subject,
        attribute=attribute or "_".join(sorted(qualifier)),
        value=value,
        modality=modality,
        old_value=old,
        change=changed or old is not None,
        shift=shifted or old is not None,
        additive=additive,
        past=says_past(clause, zh),
        head=head,
        qualifier=frozenset(qualifier),
        mentions=mentions,
        text=clause.strip(),
        frame=mask(clause, [value, *([old] if old else []), *mentions], zh, head),
        implicit_subject=not said,
        topic=topic(
            [w for w in qualifier if w not in heads.RELATION_WORDS],
            _AGENT_ZH.sub(" ", clause, count=1) if zh else clause,
            value.text,
            zh,
        ),
        verb=main_verb(bare, zh),
    )


# A preposition or conjunction that opens an adjunct (why, how, around what it happened): after the
# value, its nouns say nothing of which attribute the value is of ("moved to Friday because of the
# audit"). "at", "on", "in" open one only before a name ("on Elm Street", "at the Maple clinic"): before
# a common noun they narrow the attribute ("6:30 on weekdays", "9 in the morning"), as "for" does
# ("5000 for the laptop").
_ADJUNCT_EN = re.compile(
    r"\b(?:during|because|since|after|before|when|whenever|while|due|until|till|as|via|by|from|with|"
    r"without|so|same)\b|\b(?:at|on|in|near)\s+(?:the\s+)?(?=(?-i:[A-Z]))",
    re.IGNORECASE,
)


def _adds(clause: str, zh: bool) -> bool:
    """Whether a clause adds to what is known ("also", 还, 也): in Chinese the word standing alone, never
    a character of another word (还款日, 也许)."""
    found = (lx.ZH_ADDITIVE if zh else lx.EN_ADDITIVE).search(clause)
    if found is None or not zh:
        return found is not None
    at = found.start() + len(found.group()) - len(found.group().lstrip("我们"))
    words = zh_words(clause)
    starts = dict(zip(itertools.accumulate((len(w) for w, _ in words), initial=0), words, strict=False))
    return at in starts and starts[at][0] in lx.ZH_ADDITIVE_WORDS


_AGENT_ZH = re.compile(r"^[^，。,\s]{1,6}?(?=(?:给|帮|替)(?:我们|我)|把)")
_ZH_ROLE_MARK = re.compile(rf"(?<=\s){lx.ZH_ROLE}(?=[\u4e00-\u9fffA-Za-z])")


def _without_adjunct(text: str, value: Value) -> str:
    """An English clause cut before an adjunct that follows its value."""
    at = text.find(value.text) if value.text else -1
    if at < 0:
        return text
    end = at + len(value.text)
    adjunct = _ADJUNCT_EN.search(text, end)
    return text[: adjunct.start()] if adjunct else text


def _without(text: str, parts: Iterable[str]) -> str:
    for part in parts:
        if part:
            text = text.replace(part, " ")
    return text
