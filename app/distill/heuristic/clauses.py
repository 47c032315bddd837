"""A sentence cut into its clauses (issue 32: one claim per unit, by structure). A clause is a part with a
predicate of its own, whatever joins it to the next (and, but, also, plus, because, 另外, 而且, 还有, a
comma, a semicolon); a part without one ("6 and 9", "金额389元") stays with the clause before it. A clause
that shares the subject of the one before ("…and allergic to nuts", "…，不想背模板") gets it carried in;
one that points back at it ("…, and I need it by Friday") stays with it: cut off, "it" would say nothing.
The opening of a sentence (discourse markers, fillers, hedges, a correction's wording) is read for its
meaning and taken off before the cut, so no clause starts with it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.claims import lexicon as lx
from app.claims.modality import retirement
from app.claims.topic import en_object
from app.claims.values import find_values
from app.distill.heuristic.gapping import fill_gap
from app.distill.heuristic.kinds import clause_kind, is_remark
from app.distill.heuristic.life_events import is_life_event
from app.distill.heuristic.noise import REFERS_BACK_EN, REFERS_BACK_ZH
from app.distill.heuristic.openings import opening
from app.distill.heuristic.predicates import has_predicate_en, has_predicate_zh, opens_with_verb_en
from app.distill.heuristic.rules_en import EN_RULES
from app.distill.heuristic.rules_zh import ZH_RULES
from app.distill.heuristic.value_parts import (
    changed_then_said,
    detail_of_thing,
    second_value,
    value_with_words,
)
from app.distill.heuristic.verbs_en import (
    PLAIN_SUBJECTS,
    WORD,
    base_verb,
    carried_subject,
    coordinated_request,
)
from app.text import has_cjk, pos_words


@dataclass(frozen=True)
class Clause:
    """A clause of a sentence: its text (with a carried subject), and where it sits in the sentence."""

    text: str
    start: int
    end: int
    correction: bool = False  # the sentence opened with a correction's wording ("I meant", "我更正一下")
    hedged: bool = False  # …or with a hedge ("maybe", "大概"), taken off the text


# Where an English clause may end: a semicolon, a comma, or a connective (a closed class, taken off the
# clause it opens; "which is why" and "which means" open a consequence, a claim of its own); whether
# it does is decided by what follows (a predicate of its own, `split_clauses`)
# ("since" and "as" are left out: they also open a time, "since I moved", which belongs to its clause)
# a contrast asserts both of its clauses ("…, although I travel to London weekly", "my wife works at the
# hospital while I work from home"); "while" before a participle is a time ("while waiting …")
_CONTRAST_EN = r"although|though|whereas|while(?=\s+(?:i|we|he|she|they|my|our|his|her|their|the)\b)"
_JOINER_EN = (
    r"(?:and|but|plus|so|also|yet|then|because|or|which\s+is\s+why|that'?s\s+why|which\s+means|"
    rf"{_CONTRAST_EN})"
)
_BOUNDARY_EN = re.compile(
    rf"\s*(?:;|—|\s[–-]{{1,2}}\s)\s*|,\s+(?:{_JOINER_EN}\s+)?(?:also\s+|then\s+)?"
    rf"|\s+(?:and|but|plus|so|because|yet|{_CONTRAST_EN})\s+(?:also\s+|then\s+)?",
    re.IGNORECASE,
)
# "and" before a bare predicate: the subject of the clause before is carried in
_CARRY_EN = re.compile(r",?\s+(?:and|but)\s+(?:also\s+)?(?=[a-z])")

# Chinese: commas and semicolons cut; a connective opening the part goes
_BOUNDARY_ZH = re.compile(r"(?:[，,；;]|…+)\s*")
_JOINER_ZH = re.compile(r"^(?:另外|而且|还有|并且|此外|同时|但是|不过|可是|所以|因为|然后|以及)[，,]?")
# A part that opens with an adverb or a verb has no subject of its own; a request to the listener
# ("请…", "不要…", "别…") needs none
_BARE_PREDICATE_ZH = re.compile(
    r"^(?:现在|目前|如今|最近|平时|今年|以后)?(?:在|也|还|都|不|没|想|要|会|能|已经|正在|一直|刚|又|就|只|打算|"
    r"准备|需要|"
    # a verb of a lasting state: where one lives, what one is, has, uses or does for a living
    r"住|是|有|用|做|当|读|养|负责)"
)
_IMPERATIVE_ZH = re.compile(r"^(?:请|不要|别|麻烦|帮我|帮忙|记得)")
# A subordinate clause (a condition, a cause, a time) belongs to the clause it modifies, the next one
_SUBORDINATE = re.compile(
    r"^(?:if|unless|when|whenever|once|because|since|although|though|while|after|before|as soon as|"
    r"even if|having)\b|"
    r"^(?:如果|假如|要是|万一|因为|虽然|尽管|既然|只要|除非|等到|一旦)",
    re.IGNORECASE,
)
_COPULA_ZH = re.compile(r"^(?:不是|是|而是|也就是)")
# The result of a change said after it ("提额了，到8万", "房租涨了，涨到4500了"): the same clause's value
_RESULT_ZH = re.compile(r"^(?:[改换调挪涨降加减升提推延缩扩]了?)?(?:到|至|成)")
# A name given after what a clause speaks of ("养了一只猫，叫年糕", "我女儿八岁，叫乐乐"): the same clause,
# as "a cat called Miso" (cut off, 叫乐乐 names no one)
_NAMED_ZH = re.compile(r"^(?:名字)?(?:叫|名叫|叫做|名为)")
# the subject a bare predicate after it takes: a pronoun, or a person the speaker names (我儿子, 妈妈)
_LEAD_SUBJECT_ZH = re.compile(
    rf"^((?:(?:我们|我)的?)?(?:{'|'.join(lx.ZH_PEOPLE_LONGEST_FIRST)})|我们|我|咱们|他们|她们|他|她)(?=[\u4e00-\u9fff])"
)


def _cut(text: str, zh: bool) -> list[tuple[int, int, int]]:
    """(start of the part, start of its text after the connective, end) for each part of `text`."""
    boundary = _BOUNDARY_ZH if zh else _BOUNDARY_EN
    parts: list[tuple[int, int, int]] = []
    start = 0
    for match in boundary.finditer(text):
        if match.start() > start:
            parts.append((start, start, match.start()))
        start = match.end()
    if start < len(text):
        parts.append((start, start, len(text)))
    if zh:
        parts = [(s, s + (m.end() if (m := _JOINER_ZH.match(text[s:e])) else 0), e) for s, _, e in parts]
    return [(s, t, e) for s, t, e in parts if text[t:e].strip(" ,，.。")]


def _points_back(text: str, zh: bool) -> bool:
    """Whether the part's subject points back at the clause before ("it leaks", "它很好用"): an object
    that does ("I keep them in my garage") leaves the part a claim of its own, its subject its own."""
    words = re.findall(r"[A-Za-z']+", text)
    if zh:
        match = REFERS_BACK_ZH.search(text)
        return match is not None and match.start() == 0
    return bool(words) and REFERS_BACK_EN.fullmatch(words[0].split("'")[0]) is not None


_SUBORDINATORS_ZH = frozenset("如果 假如 要是 万一 因为 虽然 尽管 既然 只要 除非 等到 一旦".split())


_RELATIVE_EN = re.compile(r"(?:who|whom|whose|which)\b(?!\s+(?:is\s+why|means)\b)", re.IGNORECASE)


def _subordinate(text: str) -> bool:
    """A condition, a cause or a time ("if it rains", "要是排得上"), in Chinese after a topic or a time
    that may open it ("下季度要是排得上", "我要是有空")."""
    if _SUBORDINATE.match(text):
        return True
    return has_cjk(text) and any(w in _SUBORDINATORS_ZH and f == "c" for w, f in pos_words(text)[:4])


def _own_predicate_zh(text: str) -> bool:
    """A Chinese clause that is a predicate of its own: a request ("别加…") or one with its subject
    ("医生让我…"), not a bare predicate continuing the topic before it ("…389元，已原路退回")."""
    if _IMPERATIVE_ZH.match(text):
        return True
    words = pos_words(text)[:1]
    return bool(words) and words[0][1][:1] in ("r", "n") and has_predicate_zh(text)


# What follows from an ending and names nothing new ("…, so that course is over", "…，以后别再提醒我续费",
# "…，不用再交月费了"): part of the ending's statement, which a question about the thing should find whole
_NO_MORE = re.compile(r"别再|不用再|不必再|\bno need\b|\bno more\b", re.IGNORECASE)


def _consequence_of_ending(before: str, part: str, zh: bool) -> bool:
    """Whether `part` follows from the ending `before` states, naming nothing of its own."""
    if _SPECIFIC.search(part) or retirement(before, zh) is None:
        return False
    return retirement(part, zh) is not None or _NO_MORE.search(part) is not None


def _matches_a_rule(text: str, zh: bool) -> bool:
    return any(rule.pattern.search(text) for rule in (ZH_RULES if zh else EN_RULES) if not rule.loose)


_DENIES_BACK = re.compile(
    r"\s*(?:(?:and|but)\s+)?not\s+(?:what\s+|the\s+\w+\s+)?(?:i|we)\s+(?:said|told|wrote|gave|typed|mentioned)\b|"
    r"\s*(?:而)?不是(?:我)?(?:之前|刚才|上次|原来|以前)?(?:说|写|讲|给|发)的",
    re.IGNORECASE,
)


def split_clauses(sentence: str, answer: bool = False) -> list[Clause]:
    """The sentence's clauses, in order, each from its predicate's subject to the next connective.
    `answer`: the sentence opens an answer to a question, whose leading value is a claim of its own
    ("Roughly B1, I can follow the news"), where elsewhere a leading fragment belongs to its clause."""
    zh = has_cjk(sentence)
    offset, corrected, hedged = opening(sentence)
    body = sentence[offset:]
    has_predicate = has_predicate_zh if zh else has_predicate_en
    spans: list[tuple[int, int, str]] = []  # start, end (in the sentence), text
    hedged_at: set[int] = set()  # the starts of parts whose hedge was taken off ("…, probably 60 by Q3")
    previous_end = 0
    for start, text_start, end in _cut(body, zh):
        joiner, previous_end = body[previous_end:text_start], end
        text = body[text_start:end].strip()
        inner, inner_corrected, inner_hedged = opening(text)
        corrected = corrected or inner_corrected  # "…说错了，应该是三个人": the sentence corrects
        said = text  # with its opening: a hedge ("probably 60 by Q3") is a word of its own
        text = text[inner:]
        if not text.strip(" ,，.。:：;；!！"):
            continue  # nothing but a correction's wording ("我更正一下之前的说法，")
        if spans and not zh and not has_predicate(text):
            additive = re.search(r"plus|also|,\s*and", joiner, re.IGNORECASE) is not None
            text = fill_gap(spans[-1][2], text, additive) or text  # "…, my dad in Florida": its verb again
        # a part pointing back ("…and it leaks", "…，它很好用") is a remark on the clause before unless it
        # makes a claim of its own ("…, and it has to integrate with Gmail", "…, it's now 0770 900123")
        refers_back = _points_back(text, zh) and clause_kind(text, "zh" if zh else "en", "user") == "episode"
        remark = is_remark(text, "zh" if zh else "en") and not _matches_a_rule(text, zh)
        # "…and loved it", "…, getting others involved": a verb with no subject of its own continues the
        # clause before (an imperative after a comma or semicolon is a clause: "…, send me the invoice")
        bare = not zh and opens_with_verb_en(text, imperative=bool(re.search(r"[,;]", joiner)))
        # a condition or a time after its clause ("…, since I moved", "…，如果可以的话") modifies it; a
        # relative clause ("…, who comes on Mondays") says of its thing: cut off, "who" would say nothing
        subordinate = _subordinate(text) or (not zh and _RELATIVE_EN.match(text) is not None)
        if spans and _DENIES_BACK.match(text):
            # "…, not what I said before", "…，不是我之前说的": the clause before corrects; this says no more
            corrected = True
            continue
        if spans and (
            not (has_predicate(text) or second_value(spans[-1][2], said))
            or (zh and _COPULA_ZH.match(text))
            or (zh and _RESULT_ZH.match(text) is not None and bool(find_values(text)))
            or (zh and _NAMED_ZH.match(text) is not None)
            or (zh and detail_of_thing(spans[-1][2], text))
            or refers_back
            or bare
            or remark
            or subordinate
            or (bool(spans) and _consequence_of_ending(spans[-1][2], text, zh))
            or (bool(spans) and changed_then_said(spans[-1][2], text, zh))
        ):
            prev_start = spans[-1][0]
            spans[-1] = (prev_start, offset + end, body[prev_start - offset : end].strip())
            continue
        if spans and zh and _BARE_PREDICATE_ZH.match(text) and not _IMPERATIVE_ZH.match(text):
            lead = _LEAD_SUBJECT_ZH.match(spans[-1][2])
            text = f"{lead.group(1)}{text}" if lead else text
        elif spans and not zh and re.fullmatch(r"\s+(?:and|but)\s+", joiner, re.IGNORECASE):
            # "I swim on Mondays and do pilates on Thursdays": a base verb after "and" is the clause
            # before's subject's second predicate, not an imperative
            words, before = WORD.findall(text), WORD.findall(spans[-1][2])
            if words and base_verb(words[0].lower()) and before and before[0].lower() in PLAIN_SUBJECTS:
                text = f"{before[0]} {text}"
        spans.append((offset + start, offset + end, text))
        if inner_hedged:
            hedged_at.add(offset + start)
    for i in range(len(spans) - 2, -1, -1):
        if _subordinate(spans[i][2]):
            first, second = spans[i], spans[i + 1]
            spans[i : i + 2] = [(first[0], second[1], sentence[first[0] : second[1]].strip())]
    if not zh:
        spans = [piece for span in spans for piece in _carried_en(span)]
    value = answer and re.search(r"\d|.\b[A-Z]|[A-Z]{2}", spans[0][2] if spans else "") is not None
    # a leading Chinese part stating a value with words of its own, beside a clause with a predicate of
    # its own, is a claim of its own ("每月最多50块，别加任何增值业务"); one with none sets the scene
    leading = zh and len(spans) > 1 and value_with_words(spans[0][2]) and _own_predicate_zh(spans[1][2])
    value = value or leading
    # two values said in a row, each with words of its own ("about 30 desks now, probably 50 by Q2"): a list
    # of claims, not a scene and its clause
    listed = (
        len(spans) > 1
        and not has_predicate(spans[1][2])
        and value_with_words(spans[0][2])  # a bare value first ("next Tuesday, 2 tickets") leads the rest
        and second_value(spans[0][2], spans[1][2])
    )
    if (
        len(spans) > 1
        and not (value or listed)
        and (
            not has_predicate(spans[0][2])
            or (is_remark(spans[0][2], "zh" if zh else "en") and not _matches_a_rule(spans[0][2], zh))
        )
    ):
        first, second = spans[0], spans[1]
        spans[:2] = [(first[0], second[1], sentence[first[0] : second[1]].strip())]
    clauses = []
    for number, (start, end, text) in enumerate(spans):
        text = text.strip(" ,，")
        if not has_cjk(text[:1]) and text[:1].islower() and not text.startswith(("iPhone", "iPad", "eBay")):
            text = text[0].upper() + text[1:]
        clauses.append(Clause(text, start, end, corrected, (hedged and number == 0) or start in hedged_at))
    return clauses or [Clause(sentence, 0, len(sentence))]


def _carried_en(span: tuple[int, int, str]) -> list[tuple[int, int, str]]:
    """A clause cut where "and" or "but" opens a predicate of its own: the first part's subject carried
    in ("…and allergic to nuts", "…and weighs 2 kg"), or a second request ("…and cancel the order")."""
    start, end, text = span
    for match in _CARRY_EN.finditer(text):
        first, second = text[: match.start()], text[match.end() :]
        request = coordinated_request(first, second)
        carried = second if request else carried_subject(first, second)
        if carried and has_predicate_en(first) and (request or _claim_of_its_own(carried)):
            cut = start + match.start()
            return [(start, cut, first), *(_carried_en((cut, end, carried)))]
    return [span]


_SERVICE_KINDS = ("preference", "constraint", "task_state")


def _claim_of_its_own(carried: str) -> bool:
    """Whether a carried predicate is a claim a reader would keep alone: a rule's, or a clause of a kind
    (a state, a want, a limit, a step) that is no remark on the one before."""
    if _matches_a_rule(carried, False) or is_remark(carried, "en"):
        return _matches_a_rule(carried, False)
    kind = clause_kind(carried, "en", "user")
    # a lasting state with a value of its own ("…and plays the violin", "…and weighs 2 kg") too, and a
    # happening with a thing of its own ("sold the old bike and bought a road bike")
    specific = _SPECIFIC.search(carried) is not None
    # (a life event's, not a story's next step: "…and saw a bear" stays with the hike)
    thing = en_object(carried).lower()
    own_thing = (
        kind == "fact.event" and thing not in ("", *_POINTING_OBJECTS) and is_life_event(carried, "en")
    )
    changed = lx.EN_CHANGE_TO.search(carried) is not None  # "…and switched to green tea"
    return kind.startswith(_SERVICE_KINDS) or (kind.startswith("fact") and (specific or own_thing or changed))


_POINTING_OBJECTS = frozenset("it them that this these those one him her".split())
_SPECIFIC = re.compile(r"\d|(?<=\s)[A-Z]")  # a number or a name past the clause's first word
