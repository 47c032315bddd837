"""A sentence cut into the clauses claims are read from: at semicolons, commas (not a thousands separator
or a time of day), contrastive joins, an "and" before a subject or a second verb phrase; a condition
dropped ("if it weighs under 2 kg")."""

from __future__ import annotations

import re

from app.claims import lexicon as lx
from app.claims.clause_value import NAME
from app.claims.frames import OBJECT_OPENERS, lemmas
from app.claims.values import find_values
from app.text import CJK_PAUSE

# A comma between digits is a thousands separator ("$8,000"), a colon between digits a time of day
# ("9:45"): neither ends a clause.
_THOUSANDS = r",(?!(?<=\d,)\d{3}(?!\d))"
_EN_CLAUSE = re.compile(
    # (nor does a comma beside "please": "Dark mode, please" is one request)
    r"\s*;\s*|\s*(?<!please)" + _THOUSANDS + r"(?!\s*please\b)\s*|\s+(?:but|so|while|whereas|although)\s+|"
    r"\s+and\s+(?=(?:i|we|my|our|he|she|they|the|it)\b)",
    re.IGNORECASE,
)
_EN_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
# (a space between Chinese characters is a comma typed as a pause)
_ZH_CLAUSE = re.compile(_THOUSANDS + r"|:(?!(?<=\d:)\d{2}(?!\d))|[;，；：]|但是|不过|而且|并且|" + CJK_PAUSE)


def clauses(sentence: str, zh: bool) -> list[str]:
    """The clauses of a sentence, in order."""
    parts = [p for p in _split(_ZH_CLAUSE if zh else _EN_CLAUSE, sentence) if p and p.strip()]
    parts = [c for p in parts for c in objects(p, zh)]
    out: list[str] = []
    for part in parts:
        if zh:
            if (
                lx.ZH_CONDITION.search(part)
                and not lx.ZH_CONDITION.fullmatch(part.strip())
                and len(parts) > 1
                and re.match(r"\s*(?:如果|要是|假如|万一|只要|倘若)", part)
            ):
                continue  # the condition of a conditional: not a claim of its own
            out.append(part)
            continue
        part = _drop_condition(part)
        # "30 second timeout and retries 3 times": two statements when each side holds a value
        pieces = _split(_EN_AND, part)
        if len(pieces) > 1 and all(find_values(p) or NAME.search(p[1:]) for p in pieces):
            out += pieces
        elif part.strip():
            out += [phrase for piece in _with_a_value(part) for phrase in _verb_phrases(piece)]
    return out


# "with" opening a number, "at" a price, after the clause's own value ("runs on GitHub Actions with a
# 30-minute job timeout", "28 hours a week at 70 euros an hour"): a second value, of a noun of its own;
# "with" a person or thing by name ("lessons on Tuesdays with a tutor named Ana"): a claim of its own
_WITH_VALUE = re.compile(
    r"\s+(?=(?:with|at)\s+(?:an?\s+)?[$€£¥]?\d)|\s+with\s+(?=(?:an?|my|our)\s+[\w-]+\s+(?:named|called)\s+[A-Z])",
    re.IGNORECASE,
)


def _with_a_value(clause: str) -> list[str]:
    """A clause cut before a phrase giving a second value, when a value stands before it (the phrase is
    read as more of the clause unless it names a noun of its own)."""
    cut = _WITH_VALUE.search(clause)
    if cut is None:
        return [clause]
    before, rest = clause[: cut.start()], clause[cut.end() :]
    said = find_values(rest)
    if rest[:2].lower() == "at" and not (said and said[0].value.type == "amount"):
        return [clause]  # "at" opens a second value only as a price ("… at 70 euros an hour"), not "at 7:40"
    values = [s.start for s in find_values(before)] + [m.start() + 1 for m in NAME.finditer(before[1:])]
    # (a value before the verb is the subject's: "my check-in with Tomas is at 2:15" is one clause)
    if not values or _COPULA.search(before, min(values)):
        return [clause]
    return [before, rest]


_COPULA = re.compile(r"\b(?:is|are|was|were|be|been|am)\b|'s\b", re.IGNORECASE)


def _split(pattern: re.Pattern[str], text: str) -> list[str]:
    """`text` cut where `pattern` matches outside a set of days ("Tuesdays and Thursdays" is one value)."""
    matches = list(pattern.finditer(text))
    if not matches:
        return [text]  # (nothing to cut: no values read)
    inside = [(s.start, s.end) for s in find_values(text) if s.value.type == "weekday"]
    pieces, start = [], 0
    for match in matches:
        within = any(a <= match.start() and match.end() <= b for a, b in inside)
        if match.end() > match.start() and not within:
            pieces.append(text[start : match.start()])
            start = match.end()
    return [*pieces, text[start:]]


_AND_WORDS = re.compile(r"\s+and\s+(?=([a-z]+)\s+([a-z]+))", re.IGNORECASE)


def _verb_phrases(clause: str) -> list[str]:
    """A clause cut before each "and" that opens a second verb phrase of its subject ("My son is in year 3
    and plays the violin", "she lives in Leeds and works at a bank"): a finite verb (-s or -ed) followed
    by what opens its object. The second phrase's subject is carried by the caller."""
    # (a plain pronoun's second verb is its base form: "I live in Ghent and work as a plumber")
    plain = re.match(r"\s*(?:i|we|you|they)\b", clause, re.IGNORECASE) is not None
    cuts = [
        m
        for m in _AND_WORDS.finditer(clause)
        if (
            m.group(1).lower().endswith(("s", "ed"))
            or (plain and m.group(1).lower() in lemmas(m.group(1)).get("VERB", ()))
        )
        and "VERB" in lemmas(m.group(1))
        and m.group(2).lower() in OBJECT_OPENERS | {"as"}
    ]
    if not cuts:
        return [clause]
    bounds = [0, *(x for m in cuts for x in (m.start(), m.end())), len(clause)]
    return [clause[bounds[i] : bounds[i + 1]] for i in range(0, len(bounds), 2)]


def _drop_condition(clause: str) -> str:
    """The clause without its condition ("if it weighs under 2 kg", "If the deal is good, I might …")."""
    match = lx.EN_CONDITION.search(clause)
    if match is None:
        return clause
    if match.start() > 0:
        return clause[: match.start()]
    # the main clause opens with its subject: a pronoun, or the speaker as the distiller names it
    rest = re.search(r"\b(?:I|we|you|my|our|the user)\b(?!.*\b(?:I|we|the user)\b)", clause[match.end() :])
    return clause[match.end() + rest.start() :] if rest else ""


# Two objects of one verb, each opened by a determiner or a numeral and its measure word ("I have a piano
# and a guitar", "我家有一台钢琴和一把吉他"): a claim each, the verb said again, so that one can end alone.
_DETERMINER_EN = r"(?:a|an|the|my|our|his|her|their|one|two|three|four|five|some|another)"
_OBJECTS_EN = re.compile(
    # (after what it is for: "For the trip I've got a window seat and a vegetarian meal booked")
    rf"^(?P<head>\s*(?:(?:for|on|at|in)\s+(?:[\w'-]+\s+){{1,4}}?)?"
    rf"(?:i|we|he|she|they|the\s+user|(?:my|our|his|her|their)\s+[\w'-]+)(?:'ve|'m|'d|'ll)?\s+(?:[\w'-]+\s+){{1,2}}?)"
    rf"(?P<first>{_DETERMINER_EN}\s.+?)\s+and\s+(?P<second>{_DETERMINER_EN}\s.+)$",
    re.IGNORECASE,
)
# a second object that is the subject of a verb of its own ("I think the plan and the budget are fine")
_FINITE_EN = re.compile(r"\b(?:is|are|was|were|has|have|had|will|would|can|could|do|does|did)\b", re.I)
_COUNTED_ZH = r"[一二两三四五六七八九十几\d]+[个只条辆台件本张位名套间部块双份箱包瓶杯盆棵把]"
_OBJECTS_ZH = re.compile(
    rf"^(?P<head>.*?[\u4e00-\u9fff])(?P<first>{_COUNTED_ZH}[^和跟与、]+?)(?:和|跟|与|、|还有|以及)"
    rf"(?P<second>{_COUNTED_ZH}.+)$"
)


def objects(clause: str, zh: bool) -> list[str]:
    """The clause, or one clause per object of its verb when it has two (see `_OBJECTS_EN`)."""
    found = (_OBJECTS_ZH if zh else _OBJECTS_EN).match(clause)
    if found is None or (not zh and _FINITE_EN.search(found.group("second"))):
        return [clause]
    head = found.group("head")
    return [head + found.group("first"), head + found.group("second")]


# A name said to be what the speaker has ("Dr Jones is my dentist", 李医生是我的牙医): the copula read the
# other way round ("my dentist is Dr Jones"), the possessed noun the attribute and the name its value
_IS_MY_EN = re.compile(
    r"^\s*(?P<x>(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?[A-Z][\w'&-]*(?:\s+[A-Z][\w'&-]*)*)\s+(?:is|are)\s+"
    r"(?P<y>(?:my|our)\s+[^,;]+?)\s*(?P<end>[.!]?\s*)$"
)
_IS_MY_ZH = re.compile(r"^(?P<x>[^，。,是]{2,12}?)是(?P<y>(?:我|我们|我家)的[^，。,]+?)(?P<end>[。！!]?)$")
_NOT_NAMES = frozenset("this that it he she they there here what which who everything nothing".split())


def possessed_first(clause: str, zh: bool) -> str:
    """The clause with a name said to be the speaker's thing read the other way round."""
    found = (_IS_MY_ZH if zh else _IS_MY_EN).match(clause)
    if found is None or found.group("x").lower() in _NOT_NAMES or found.group("x")[:1] in "这那他她它":
        return clause
    y = found.group("y")
    return (
        f"{y}是{found.group('x')}{found.group('end')}"
        if zh
        else f"{y[0].upper()}{y[1:]} is {found.group('x')}{found.group('end')}"
    )


# A clause that asks: one opening on a question word or an inverted verb, or a Chinese one holding a
# question word or ending on its particle
_ASKS_EN = re.compile(
    r"^\s*(?:(?:so|and|but|ok|okay|also|anyway)\s+)?(?:can|could|would|will|is|isn't|are|am|do|does|did|"
    r"what|what's|when|where|who|whom|why|how|should|shall|have|has|which|any|right|or)\b",
    re.IGNORECASE,
)
_ASKS_ZH = re.compile(
    r"[吗呢么吧][？?]?\s*$|是不是|能不能|要不要|可不可以|有没有|会不会|对不对|是否|能否|什么|哪|怎么|多少|为什么|谁|几[个天点号次岁]"
)
_CONDITION = re.compile(r"^\s*(?:if|when|unless|whether|如果|要是|假如|万一|只要)", re.IGNORECASE)


def asserted(question: str, zh: bool) -> str:
    """What a question says before it asks ("10% of every paycheck goes into the 401(k), is that on
    track?", 我现在是600度了，镜片要选多厚？): its clauses before the first that asks, unless they
    are the question's condition; "" when it opens asking or never says which clause asks."""
    parts = [p for p in re.split(r"[,，;；]", question) if p.strip()]
    asks = _ASKS_ZH if zh else _ASKS_EN
    first = next((i for i, p in enumerate(parts) if asks.search(p)), 0)
    said = parts[:first]
    if not said or _CONDITION.match(said[0]):
        return ""
    return ("，" if zh else ", ").join(p.strip() for p in said) + ("。" if zh else ".")
