"""Who a clause is about: another person it names ("my son …", "我女儿…", "Anna lives …"), else the
speaker; and whether it says so at all ("Football moved to Sundays", "不对，是8点40" name nobody: such a
clause may continue a claim about anyone)."""

from __future__ import annotations

import re

from app.claims import lexicon as lx
from app.claims.frames import lemmas, nounish, stem, zh_words
from app.claims.model import Claim
from app.text import MONTHS_EN, WEEKDAYS_EN

# A person's name opening an English clause before a verb ("Anna lives in Oslo", "Priya is on call").
_NAMED_EN = re.compile(
    r"^\s*(?:(?:and|but|so|while)\s+)?(?!(?:The|A|An|This|That|These|Those|Our|My|Its)\b)"
    r"(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s+(?:(?:just|now|still|also|finally|recently|already)\s+)?"
    r"(?P<verb>'s\s+|is|was|lives|lived|"
    r"works|worked|has|had|moved|reports|studies|goes|plays|drives|uses|likes|loves|prefers|takes|"
    r"flies|is\s+flying|starts|started|joined|leads|manages|got|gets|became|becomes|went|left|quit)\b"
)
# A person's name owning what the clause speaks of, at its start ("Sarah's dentist"; Chinese names
# before 的 are left: jieba's person tags took a changed value's owner for a person too often)
_OWNER_EN = re.compile(r"^\s*(?:(?:and|but|so)\s+)?(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)'s\s+[a-z]")
_SELF_EN = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|we|we're|we've|my|our|me|us|mine|ours|the\s+user(?:'s)?)\b", re.IGNORECASE
)
_SELF_ZH = re.compile(r"我|咱们|用户")
# A third person's pronoun opening the clause ("She lives in Leeds", "Her name is Mia", 她住在宁波): another
# person than the speaker, whoever the clause before named; not "they" (an organisation: "they raised the
# rent"), not one acting on the speaker's things ("she raised it to 40mg", 她把我的…)
THIRD_PERSON = "they"
_STATIVE_EN = (
    "is was lives lived works worked has had studies goes plays drives uses likes loves prefers became turned"
)
_THIRD_PERSON_EN = re.compile(
    rf"(?i)^\s*(?:(?:and|but|so)\s+)?(?:(?:he|she)\s+(?:(?:now|still|also|just)\s+)?(?:{'|'.join(_STATIVE_EN.split())})\b"
    r"|(?:he|she)'s\b|(?:his|her)\s+(?!own\b)[a-z])"
)
_THIRD_PERSON_ZH = re.compile(r"^\s*(?:他|她)(?!们|把|给|帮|让|替|将|跟|和)")
# A preposition before a person makes them who the act is with or for, not who it is about
# (用微信和朋友联系, 跟两个同事合租, 给我妈打电话)
_WITH_ZH = re.compile(
    r"(?:和|跟|与|同|给|对|向|陪|帮|替|找|为)(?:[一二两三四五六七八九十几\d]+[个位名])?(?:我们的|我的|我们|我)?$"
)
# One name for each person said in several words ("my mum" and "my mother", 我妈 and 我母亲 are one subject)
_SAME_PERSON = {
    **dict.fromkeys(("mom", "mum"), "mother"),
    "dad": "father",
    "grandma": "grandmother",
    "grandpa": "grandfather",
    "neighbor": "neighbour",
    "coworker": "colleague",
    "flatmate": "roommate",
    "kids": "children",
    **dict.fromkeys(("妈", "母亲"), "妈妈"),
    **dict.fromkeys(("爸", "父亲"), "爸爸"),
    **dict.fromkeys(("老婆", "媳妇"), "妻子"),
    "老公": "丈夫",
    **{kin: kin * 2 for kin in "哥姐弟妹"},
}


_COPULA_EN = frozenset("is are was were".split())
_VALUE_NEXT_ZH = re.compile(r"是|(?:改|换|变)(?:成|为)")


def subject_of(clause: str, zh: bool, speaker: str) -> tuple[str, bool]:
    """(who the clause is about, whether the clause names them), a person by one name for each."""
    who, named = _subject_of(clause, zh, speaker)
    return _SAME_PERSON.get(who, who), named


def subject_words(subject: str) -> set[str]:
    """The words that name the subject in a clause (the attribute is never one): its other names too."""
    people = {subject, *subject.split("'s ")}  # a relative's relative: both ("ana's sister")
    said = {*people, *(word for word, one in _SAME_PERSON.items() if one in people)}
    return said | {stem(w) for w in said if w.isascii()}


def _subject_of(clause: str, zh: bool, speaker: str) -> tuple[str, bool]:
    if (_THIRD_PERSON_ZH if zh else _THIRD_PERSON_EN).match(clause):
        return THIRD_PERSON, False  # someone named before, never the speaker
    if zh:
        for kin in lx.ZH_KIN.finditer(clause):
            # (a person after 是 or 改成 is the value: 紧急联系人是我哥, …改成我老婆)
            before = clause[: kin.start()]
            if not _WITH_ZH.search(before) and not _VALUE_NEXT_ZH.search(before):
                return kin.group("who"), True
        for person in lx.ZH_PEOPLE_LONGEST_FIRST:
            index = clause.find(person)
            if (
                index >= 0
                and not clause[index + len(person) :].startswith(("的领导", "的上司"))
                and not _WITH_ZH.search(clause[:index])
            ):
                return person, True
        return speaker, _SELF_ZH.search(clause) is not None
    owner = _OWNER_EN.match(clause)  # "Sarah's dentist is …": Sarah's, not the speaker's
    if owner:
        name, relative = owner.group("name"), _kin_after(clause[owner.end("name") :])
        # (a day or a month owns no thing: "Monday's meeting"; a name that is also a word, "Tom", owns
        # a relative: "Tom's wife")
        if relative or not any(lemmas(w) or w.lower() in {*WEEKDAYS_EN, *MONTHS_EN} for w in name.split()):
            return _owned(name.lower(), relative), True
    said = clause.split()[:6]
    words = [w.lower().removesuffix("'s").rstrip("'") for w in said]
    for i, word in enumerate(words):
        if word in _COPULA_EN:
            break  # a person after the copula is the value ("my travel buddy is my cousin")
        if word in lx.EN_PEOPLE and (i == 0 or words[i - 1] in lx.EN_SELF | {"the", "his", "her"}):
            # (a relative's relative is another person: "my brother's wife")
            return _owned(_SAME_PERSON.get(word, word), _kin_after(" ".join(said[i:])[len(word) :])), True
    named = _NAMED_EN.match(clause)
    # (a name that is also a word, "Tom", "Grace", is a name before a verb said of people only)
    if named and (
        not any(lemmas(w) for w in named.group("name").split()) or named.group("verb") in _OF_PEOPLE_EN
    ):
        return named.group("name").lower(), True
    return speaker, _SELF_EN.search(clause) is not None


# verbs said of people only ("Grace works at …"), never of a thing a clause opens with ("Parking is free")
_OF_PEOPLE_EN = frozenset("lives lived works worked reports studies joined quit manages leads".split())
_KIN_AFTER_EN = re.compile(r"^'s\s+(?P<kin>[a-z-]+)\b")


def _kin_after(rest: str) -> str:
    """The relative a possessive names ("'s sister" after "Ana"), by one name for each, else ""."""
    kin = _KIN_AFTER_EN.match(rest)
    word = kin.group("kin") if kin else ""
    return _SAME_PERSON.get(word, word) if word in lx.EN_PEOPLE else ""


def _owned(owner: str, kin: str) -> str:
    """One subject for a person or a person's relative ("ana's sister", "brother's wife")."""
    return f"{owner}'s {kin}" if kin else owner


# A verb of moving house ("moved to", "relocated to", 搬到, 搬去), and the words that may stand between
# its mover and it ("has just moved", 都已经搬到)
_MOVE = re.compile(r"\b(?:mov(?:ed|ing|es)|relocat(?:ed|ing|es)|lives?|living)\b|搬到|搬去", re.IGNORECASE)
_BEFORE_MOVE_EN = frozenset("has have had just finally recently already all also now then".split())
_BEFORE_MOVE_ZH = frozenset({"", *"都 也 已经 刚 刚刚 又 就 终于 最近 现在 全 整个".split()})
_HOMES = frozenset({"home", "family", "household", "家", "家里", "全家", "一家"})


def moves_a_thing(clause: str, zh: bool) -> bool:
    """Whether a verb of moving or living is said of a thing named before it ("the build pipeline moved to
    …", "tickets live in Linear", 公司搬到…): no one's home. A pronoun, a person, a name or a household
    moving ("we moved to …", "my parents moved …", 家搬到…) is a move of home."""
    found = _MOVE.search(clause)
    if found is None:
        return False
    if zh:
        mover = clause[: found.start()].split("从")[0]  # 从杭州 says where from, not who moves
        tagged = [(w, f) for w, f in zh_words(mover) if w.strip() not in _BEFORE_MOVE_ZH]
        word, flag = tagged[-1] if tagged else ("", "")
        person = word in _HOMES or any(word.endswith(p) for p in lx.ZH_PEOPLE)
        return flag.startswith("n") and flag not in ("nr", "nrfg", "ns") and not person
    said = re.findall(r"[A-Za-z'-]+", clause[: found.start()])
    while said and said[-1].lower() in _BEFORE_MOVE_EN:
        said.pop()
    words = [w.lower().split("'")[0] for w in said]
    named = said[-1][:1].isupper() and (len(said) > 1 or not lemmas(said[-1])) if said else False
    if not words or named or words[-1] in lx.EN_SELF | lx.EN_PEOPLE | _HOMES | lx.EN_NOISE:
        return False  # a pronoun, a person, a name, a household
    return nounish(words[-1])


# A word for a kind of relative names any one of its kinds ("my kid" is the son said before, 孩子 the 女儿)
_KINDS_OF = {
    "kid": {"son", "daughter"},
    "child": {"son", "daughter"},
    "孩子": {"儿子", "女儿"},
    "小孩": {"儿子", "女儿"},
}


def one_person(a: str, b: str) -> bool:
    """Whether two subjects may be one person: one name, or a kind of relative and one of its kinds."""
    return a == b or a in _KINDS_OF.get(b, ()) or b in _KINDS_OF.get(a, ())


def named_as(claim: Claim, name: str) -> bool:
    """Whether a clause said of a relative gives their name beside the word ("my brother Sam", "Sam, my
    brother"): a later clause about the name is about them."""
    if not (name.isascii() and name.isalpha()) or claim.subject in ("user", THIRD_PERSON):
        return False
    kin = "|".join(re.escape(w) for w in sorted(subject_words(claim.subject)) if w.isalpha())
    said = rf"\b(?:{kin}),?\s+{re.escape(name)}\b|\b{re.escape(name)},\s+(?:my|our)\s+(?:{kin})\b"
    return bool(kin) and re.search(said, claim.text, re.IGNORECASE) is not None


def speaker_and_another(a: Claim, b: Claim) -> bool:
    """Whether `a` is said of a third person ("she …", 她…) and `b` of the speaker, by name or pronoun."""
    return a.subject == THIRD_PERSON and b.subject == "user" and not b.implicit_subject
