"""First person resolved to the speaker: "I prefer window seats" → "Ana prefers window seats", with the
verb inflected (lemminflect) and later pronouns made the speaker's ("my" → "their")."""

from __future__ import annotations

import re
from functools import cache, lru_cache

from app.text import has_cjk

MODALS = frozenset("can could will would shall should may might must was did had".split())
ADVERBS = frozenset(
    """really also just usually always generally definitely still actually mostly totally often never already
    sometimes rarely recently finally only even ever""".split()
)

LY_VERBS = frozenset("apply reply rely supply fly multiply imply comply ally rally tally bully".split())

WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+")


@cache
def _inflect() -> tuple[object, object]:
    from lemminflect import getInflection, getLemma

    return getInflection, getLemma


def _third_person(verb: str) -> str:
    lower = verb.lower()
    if lower in ("don't", "do"):
        return "doesn't" if lower == "don't" else "does"
    if lower in ("haven't", "have"):
        return "hasn't" if lower == "haven't" else "has"
    if lower in ("am", "'m"):
        return "is"
    if lower in MODALS or lower.endswith("n't"):
        return verb  # "can", "can't", "won't"
    if lower.endswith("ly") and lower not in LY_VERBS:
        return verb  # an adverb: "I truly felt", "I finally took" (lemminflect inflects anything)
    return _present_third_person(lower) or verb


@lru_cache(maxsize=4096)
def _present_third_person(lower: str) -> str | None:
    """The -s form of a base-form verb ("prefer" → "prefers"; a verb whose past is its base, as it is),
    None when `lower` is no base form
    ("liked", "finally"). Cached: lemminflect's lookups were the heuristic distiller's hottest spot."""
    get_inflection, get_lemma = _inflect()
    lemmas = get_lemma(lower, upos="VERB")  # type: ignore[operator]
    if not lemmas or lemmas[0] != lower:
        return None  # past tense or not a verb: "I liked", "I finally"
    if lower in (get_inflection(lower, tag="VBD") or ()):  # type: ignore[operator]
        return lower  # its past is its base ("I quit in March", "I cut my hours"): the tense stays unsaid
    forms = get_inflection(lower, tag="VBZ")  # type: ignore[operator]
    return str(forms[0]) if forms else None


_SUBJ, _POSS, _MINE, _OBJ, _REFL = "\x01S\x01", "\x01P\x01", "\x01M\x01", "\x01O\x01", "\x01R\x01"
_FIRST_PERSON_EN = (
    (re.compile(r"\bI(?:'m| am)\b"), f"{_SUBJ} is"),
    (re.compile(r"\bI've\b"), f"{_SUBJ} has"),
    (re.compile(r"\bI'd\b"), f"{_SUBJ} would"),
    (re.compile(r"\bI'll\b"), f"{_SUBJ} will"),
    (re.compile(r"\bmy\b", re.IGNORECASE), _POSS),
    (re.compile(r"\bmine\b", re.IGNORECASE), _MINE),
    (re.compile(r"\bmyself\b", re.IGNORECASE), _REFL),
    (re.compile(r"\bme\b(?!-)", re.IGNORECASE), _OBJ),  # not "me-time"
)
_PLACEHOLDER = re.compile("\x01[SPMOR]\x01")
_LATER = {_SUBJ: None, _POSS: "their", _MINE: "theirs", _OBJ: "them", _REFL: "themselves"}
_I_VERB = re.compile(r"\bI((?:\s+(?:" + "|".join(ADVERBS) + r"))*)\s+([A-Za-z']+)")


# "My wife and I" at the start of a clause is a plural subject ("…and I need it" is a new clause)
_COMPOUND_SUBJECT = re.compile(
    r"(?:^|[.!?;:,]\s+)(?:(?i:my|our|his|her|their|the|a|an)\s+(?:[\w'-]+\s+){0,2}"
    r"|(?!(?:I|We|You|They|He|She|It)\b)[A-Z][\w'-]*\s+(?:[A-Z][\w'-]*\s+)?)and\s+$"
)


# "How can I help", "Do I need": after an auxiliary the verb stays bare ("can the assistant help")
_AUXILIARY_BEFORE = re.compile(
    r"\b(?:can|could|will|would|shall|should|may|might|must|do|does|did|let)\s+$", re.I
)


def _verb_after(text: str, match: re.Match[str]) -> str:
    if _COMPOUND_SUBJECT.search(text, 0, match.start()):
        return match.group(2)  # "my partner and I have" keeps its plural verb
    if _AUXILIARY_BEFORE.search(text, 0, match.start()):
        return match.group(2)
    return _third_person(match.group(2))


_KIN_ZH = {
    "妈": "妈妈", "爸": "爸爸", "哥": "哥哥", "姐": "姐姐", "弟": "弟弟", "妹": "妹妹", "叔": "叔叔",
    "舅": "舅舅", "姨": "阿姨", "姑": "姑姑", "嫂": "嫂子",
}  # fmt: skip
_MY_KIN_ZH = re.compile(rf"我([{''.join(_KIN_ZH)}])(?![{''.join(_KIN_ZH)}])")


def first_person_to_speaker(text: str, speaker: str, named: bool) -> str:
    """ "I prefer my tea hot" → "Alice prefers Alice's tea hot"; "我喜欢" → "张伟喜欢"."""
    if has_cjk(text):
        # 我妈 → 用户的妈妈: a one-character kin term said after "my" only (用户妈 reads as no word)
        text = _MY_KIN_ZH.sub(lambda m: f"{speaker}的{_KIN_ZH[m.group(1)]}", text)
        return re.sub(r"我(?!们)", lambda _: speaker, text)  # a function: a name is no template ("\\1")
    inner = speaker if named else speaker[0].lower() + speaker[1:]
    out = _I_VERB.sub(lambda m: f"{_SUBJ}{m.group(1)} {_verb_after(text, m)}", text)
    for pattern, template in _FIRST_PERSON_EN:
        out = pattern.sub(template, out)
    out = re.sub(r"\bI\b", _SUBJ, out)
    seen = False

    def word(match: re.Match[str]) -> str:
        nonlocal seen
        later = _LATER[match.group()] if seen else None
        seen = True
        if later is not None:
            return later
        return f"{inner}'s" if match.group() in (_POSS, _MINE) else inner

    out = _PLACEHOLDER.sub(word, out)
    return out[0].upper() + out[1:] if out else out
