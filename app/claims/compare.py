"""Whether a new claim ends an old one: same subject, same attribute, a different value of a compatible
type, said firmly; a change statement naming the old value identifies it whatever the wording."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from app.claims import heads
from app.claims import lexicon as lx
from app.claims.clause_value import one_product
from app.claims.counts import one_count
from app.claims.ending import counted_kind, said_in, stops_doing, topic_noun
from app.claims.frames import overlap, stem, tokens
from app.claims.modality import retirement
from app.claims.model import Claim, Value
from app.claims.modifiers import modified_apart
from app.claims.named import identifiers, name_swapped, names_beside
from app.claims.narrowing import qualifiers_differ, share_a_character, words_overlap
from app.claims.periods import periods
from app.claims.subjects import named_as, one_person, speaker_and_another
from app.claims.values import compatible, fold, free, measure_nouns, same
from app.text import has_cjk

Action = Literal["supersede", "retire", "keep"]


@dataclass(frozen=True)
class Verdict:
    """`supersede`: the new claim's value replaces the old one; `retire`: the old claim ends without a
    successor; `keep`: both stay. `strong` is false when only the value type and a change word tie
    them (the attribute unsaid): a resolver applies such a verdict to the most recent candidate only."""

    action: Action
    reason: str
    strong: bool = True
    # (the old value compared, the new one) when a value of the old clause is replaced: a compound clause's
    # other values stay, said with the new one (`app.resolve.claims.residue`)
    change: tuple[Value, Value] | None = None


def _initials_of(word: str, text: str) -> bool:
    """Whether an English word is the initials of words said in `text` in a row ("PT" ~ "physical
    therapy", "HOA" ~ "homeowners association")."""
    if not (2 <= len(word) <= 5 and word.isascii() and word.isupper()):
        return False
    return word.lower() in "".join(w[0] for w in re.findall(r"[A-Za-z]+", text)).lower()


def names_old(old: Claim, new: Claim) -> bool:
    """Whether `new` names `old`'s value as the one it replaces ("from A to B", "not A", "不再用A")."""
    named = new.old_value
    if named is None:
        return False
    if any(same(named, v) for v in (old.value, *old.mentions)) or _initials_of(named.text, old.text):
        return True
    # a named thing ("closed that Amex") or the object a retirement ends ("stop the morning digest")
    # found in the old clause's words
    if named.type == "text" and new.modality != "retired":
        return False
    return (
        named.type in ("name", "text") and len(fold(named.text)) >= 2 and fold(named.text) in fold(old.text)
    )


# Frame cosines (the local embedder's, computed by the caller) at or above which two frames speak of
# one attribute although their heads are unsaid or worded differently, and above which a change word
# may tie them (a weak verdict). The English-centric embedder scores any two Chinese frames high, so
# Chinese needs a higher cosine, or frames sharing half their jieba words. Chosen on the dev half.
SAME_FRAME = {"en": 0.75, "zh": 0.9}
WEAK_FRAME = 0.35
REWORDED_FRAME = 0.5
SAME_WORDS = 0.5


def similarity(old: Claim, new: Claim, frame_similarity: float | None = None) -> float:
    """How close two claims' frames are: the caller's embedding cosine, else the overlap of their
    content words."""
    if frame_similarity is not None:
        return frame_similarity
    zh = has_cjk(old.frame + new.frame)
    return overlap(tokens(old.frame, zh), tokens(new.frame, zh))


_CONTACTS = frozenset({"phone", "email"})
# the words that name a contact of any kind ("my number", "her email", 电话号码)
_CONTACT_WORDS = frozenset(
    "phone number contact email e-mail mail address mobil cell".split()
    + "电话 号码 电话号码 联系方式 邮箱 号 手机 手机号".split()
)


def _carried(said: Claim, carrier: Claim) -> bool:
    """Whether `carrier` holds `said`'s attribute carried from the clause before it, saying none of its
    nouns itself ("my gym membership went up, it's 55 euros now"), with a value of the same type: it
    cannot be narrowed apart, so it is one attribute."""
    if not said.qualifier or said.qualifier != carrier.qualifier or said.value.type != carrier.value.type:
        return False
    words = {stem(w) for w in re.findall(r"[^\W\d_]+", carrier.text.lower())}
    return not any(q in words or q in carrier.text for q in carrier.qualifier)


_THING_PRONOUNS = frozenset("it its they them that this these those".split())


def _subject_noun(claim: Claim) -> bool:
    """Whether an English clause's verb is said of a thing it names before it ("my *suitcase* weighs"), or
    points back to by a pronoun ("*it* closes on the 25th")."""
    words = [stem(w) for w in re.findall(r"[A-Za-z]+", claim.text)]
    verb = stem(claim.verb) if claim.verb else ""
    if not verb or verb not in words:
        return False
    before = set(words[: words.index(verb)])
    return bool(claim.topic & before or _THING_PRONOUNS & before)


def _verb_of_another_thing(old: Claim, new: Claim, zh: bool) -> bool:
    """One verb said of the speaker on one side and of a thing on the other ("I weigh 82 kg", "my suitcase
    weighs 23 kg"): two attributes, however alike the frames."""
    if zh or not old.verb or old.verb != new.verb:
        return False
    return _subject_noun(old) != _subject_noun(new) and not (old.topic and new.topic)


# A pronoun naming the thing a value is for ("for those", "on it", 那个的话): said before, not in the clause
_POINTS_BACK = re.compile(
    r"\b(?:for|on|of)\s+(?:those|these|them|it|that|this)\b|^(?:那|这)(?:个|些|款|种)(?:的话)?", re.IGNORECASE
)


def _unresolved(old: Claim, new: Claim) -> bool:
    """Whether one claim is narrowed by a thing and the other names its thing by a pronoun alone."""
    return any(
        a.qualifier and not b.qualifier and _POINTS_BACK.search(b.text) for a, b in ((old, new), (new, old))
    )


def _words_said(claim: Claim) -> frozenset[str]:
    """The words of a clause as qualifiers are written: English stems, Chinese jieba words."""
    return tokens(claim.text, has_cjk(claim.text))


def _told_apart(old: Claim, new: Claim, zh: bool) -> bool:
    """Two attributes by the claims' structure, whatever their words: modified apart (a work laptop, a
    personal one), one verb said of the speaker and of a thing, or two periods (last year's bonus and this
    year's; a period that is the value itself, "on weekends" after "on weekdays", is what changed)."""
    if modified_apart(old, new, zh) or _verb_of_another_thing(old, new, zh):
        return True
    said = periods(old.text.replace(old.value.text, " ")), periods(new.text.replace(new.value.text, " "))
    return all(said) and not said[0] & said[1]


def same_attribute(
    old: Claim, new: Claim, frame_similarity: float | None = None
) -> Literal["same", "weak", "different"]:
    """Whether two claims speak of one attribute: not when their heads differ or both are narrowed by
    nouns they do not share (a phone budget, a headphone budget); the same head, or frames close
    enough, is one attribute; frames somewhat close are "weak" (a change word may tie them)."""
    if old.head and new.head and old.head != new.head:
        return "different"
    if old.head and old.head == new.head and _unresolved(old, new):
        return "weak"  # "…, for those I'd spend 150": which thing "those" are, the clause does not say
    zh = has_cjk(old.frame + new.frame)
    contacts = new.value.unit in _CONTACTS and old.value.unit == new.value.unit
    if contacts and old.qualifier - _CONTACT_WORDS == new.qualifier - _CONTACT_WORDS:
        # two phone numbers (two email addresses) of one person narrowed alike ("my mum's mobile", "her
        # number"): one contact; narrowed apart ("my number", "my work phone"), as any other claims
        return "same"
    # (a side whose narrowing words are all said in the other clause names nothing the other does not:
    # "changed the room to a suite" after "I've booked a double room for the conference")
    within = any(
        c.qualifier and c.qualifier - measure_nouns(c.value) <= _words_said(o)
        for c, o in ((new, old), (old, new))
    )
    if not within and (
        qualifiers_differ(old.qualifier, new.qualifier) or qualifiers_differ(old.topic, new.topic)
    ):
        # other words, but a verb of change said of a frame this close: one attribute reworded
        # (or by a word of time: "现在穿M码" after "我穿L码的衣服", "I'm on 600 now")
        now = new.change and (lx.ZH_TEMPORAL if zh else lx.EN_TEMPORAL).search(new.text) is not None
        reworded = (new.shift or now) and old.value.type == new.value.type and not free(new.value)
        # (Chinese frames are compared by a character their narrowing words share: 手机号 ~ 号码)
        near = (
            share_a_character(old.qualifier, new.qualifier)
            if zh
            else (similarity(old, new, frame_similarity) >= REWORDED_FRAME)
        )
        # (one head narrowed two ways in the attributes, "my phone budget" and "my headphone budget", is
        # two things)
        narrowed = [c.head and c.attribute.startswith(f"{c.head}.") for c in (old, new)]
        two = old.head == new.head and all(narrowed)
        if reworded and near and not two and not modified_apart(old, new, zh):
            return "weak"
        return "different"
    if _told_apart(old, new, zh):
        return "different"
    if one_product(old.value, new.value):
        return "same"  # the version of one product ("Postgres 14", "upgraded Postgres to 16")
    if old.head and old.head == new.head:
        return "weak" if old.head in heads.MULTI_VALUED_HEADS else "same"
    if _carried(old, new) or _carried(new, old) or one_count(old, new):
        return "same"
    words = overlap(tokens(old.frame, zh), tokens(new.frame, zh))
    close = similarity(old, new, frame_similarity)
    # Frames alone tie two untyped values at most weakly: "I like ⟨text⟩" names no attribute that holds
    # one value, so liking one thing never replaces wanting another without a change word.
    untyped = free(old.value) or free(new.value)
    # Neither names a noun and their verbs differ ("I run 5 km", "I swim 2 km"): alike frames are no
    # proof of one attribute.
    verbs_differ = not (old.topic or new.topic) and bool(old.verb and new.verb) and old.verb != new.verb
    # Each narrowed by a noun the other lacks ("my laptop's RAM", "my desktop's RAM"): perhaps two
    # things, perhaps one reworded; only a change word ties them.
    apart = bool(old.topic - new.topic) and bool(new.topic - old.topic) and not zh
    if (close >= SAME_FRAME["zh" if zh else "en"] or words >= SAME_WORDS) and not (
        untyped or verbs_differ or apart
    ):
        return "same"
    return "weak" if close >= WEAK_FRAME else "different"


def _about(claim: Claim, other: Claim) -> Claim:
    """`claim` read as being about `other`'s subject when the name it opens with is a thing `other` is
    about ("Pilates moved to Fridays" after "I do pilates on Thursdays", "Retro is at 4 now" after
    "our retro is at 3:15"): a word of the other's attribute is no other person."""
    if claim.subject == other.subject or not claim.subject.isascii():
        return claim
    word = stem(claim.subject)
    if word not in other.qualifier | other.topic:
        return claim
    return replace(
        claim, subject=other.subject, qualifier=claim.qualifier | {word}, topic=claim.topic | {word}
    )


# a negated verb (不用, 没去) is what a retirement does, never the thing it names
_NOT = re.compile(r"[不没别]").match
_PARTS_OF_A_MOMENT = frozenset({"weekday", "time", "date"})


def unit_beside(old: Claim, new: Claim) -> Value | None:
    """The one value of the new value's own unit (a size, a currency) the old claim says beside its main
    value of another: the value the new one changes."""
    if not new.value.unit or old.value.unit == new.value.unit:
        return None
    said = [m for m in old.mentions if m.type == new.value.type and m.unit == new.value.unit]
    return said[0] if len(said) == 1 else None


def _other_part(old: Claim, new: Claim) -> tuple[Value, Value] | None:
    """The part of a moment (its day, date or hour) each claim says beside one value, when they differ."""
    if old.value.type not in _PARTS_OF_A_MOMENT:
        return None
    for part in sorted(_PARTS_OF_A_MOMENT - {old.value.type}):
        said = [[m for m in c.mentions if m.type == part] for c in (old, new)]
        if all(len(s) == 1 for s in said) and not same(said[0][0], said[1][0]):
            return said[0][0], said[1][0]
    return None


def _labelled_elsewhere(old: Claim, new: Claim) -> bool:
    """Whether a retirement naming a day and a thing ("quit the Saturday job", 周六那个兼职我已经辞了) names
    a thing the old claim does not say: the day alone is no claim it ends."""
    if new.modality != "retired" or new.value.type not in _PARTS_OF_A_MOMENT:
        return False
    thing = [w for w in new.qualifier - heads.RELATION_WORDS if not (retirement(w, has_cjk(w)) or _NOT(w))]
    return bool(thing) and not any(said_in(w, old.text) for w in thing)


_CHOSEN_THINGS = frozenset({"name", "text", "version"})


def _habitual_choice(old: Claim, new: Claim) -> bool:
    """Whether two firm Chinese claims name the one thing a person keeps to, each another (我主力机是…,
    我平时用的手机是…; 看病一般都去…): a choice said as the usual one (一般都, 平时, 基本都) is single-valued
    whatever words frame it, when a character of their narrowing words is shared or one's words are said
    in the other. (English habitual words, "always", "usually", "every", are said of far more than a
    choice: tried, they gained no held-out change and cost a still-true fact.)"""
    types = {old.value.type, new.value.type}
    if types - _CHOSEN_THINGS or len(types - {"version"}) > 1 or same(old.value, new.value):
        return False  # (a thing of one type: two names, two texts, a name and a product's version)
    if (old.head and new.head and old.head != new.head) or {old.modality, new.modality} != {"firm"}:
        return False
    if not has_cjk(old.frame + new.frame) or _told_apart(old, new, zh=True):
        return False
    # (the new clause says the choice it keeps to now; one for a while only is an exception to it)
    if not lx.ZH_HABITUAL_CHOICE.search(new.text) or lx.ZH_FOR_A_WHILE.search(new.text):
        return False
    return share_a_character(old.qualifier, new.qualifier) or any(
        said_in(w, o.text) for c, o in ((new, old), (old, new)) for w in c.qualifier
    )


def conflicts(old: Claim, new: Claim, *, frame_similarity: float | None = None) -> Verdict:
    """What `new` (said later) does to `old`; `frame_similarity` is the cosine of the two frames'
    embeddings when the caller has an embedder."""
    if old.unchanged or new.unchanged:
        return Verdict("keep", "says its thing is unchanged")
    # a retirement names whose thing it ends ("we stopped Maya's lessons" ends Maya's)
    owner = new.modality == "retired" and old.subject in new.qualifier
    new, old = _about(new, old), _about(old, new)
    one = one_person(old.subject, new.subject) or named_as(old, new.subject) or named_as(new, old.subject)
    if not one and not (old.implicit_subject or new.implicit_subject or owner):
        return Verdict("keep", "another subject")
    if speaker_and_another(old, new) or speaker_and_another(new, old):
        return Verdict("keep", "another subject")
    if new.past:
        # "I used to live in Leeds" ends living there; "I used to live in Cork" is history, no change
        if same(old.value, new.value) and same_attribute(old, new, frame_similarity) != "different":
            return Verdict("retire", "says the value held only in the past")
        return Verdict("keep", "a state of the past")
    if new.modality == "hedged" and old.modality != "hedged":
        return Verdict("keep", "a hedged statement never replaces a firm one")
    if names_old(old, new) and not _labelled_elsewhere(old, new):
        if new.modality == "retired":
            return Verdict("retire", "retires the value it names")
        if same(old.value, new.value):
            return Verdict("keep", "restates the old value")
        return Verdict("supersede", "names the value it replaces")
    if new.additive:
        return Verdict("keep", "adds to what is known")
    old_ids, new_ids = identifiers(old.text), identifiers(new.text)
    if old_ids and new_ids and not old_ids & new_ids and not new.change:
        return Verdict("keep", "another thing (its identifier differs)")
    old_names, new_names = names_beside(old), names_beside(new)
    # (a relation that holds one value, an employer or a home, changes with the names beside it)
    unheaded = not (old.head or new.head)
    if unheaded and old_names and new_names and not old_names & new_names and not new.change:
        return Verdict("keep", "another thing (its name differs)")
    attribute = same_attribute(old, new, frame_similarity)
    if new.modality == "retired":
        # a retirement names what it ends ("the Visa", 滴答清单): a word of it in the old clause
        topic = topic_noun(new.text)
        named = (
            any(said_in(w, old.text) for w in new.qualifier)
            or bool(topic and topic in old.text)
            or counted_kind(new.text, old.text)
        )
        if (
            attribute == "same"
            or named
            or (attribute == "weak" and words_overlap(old.qualifier, new.qualifier))
        ):
            return Verdict("retire", "retires what the old claim is about")
        if stops_doing(old, new):
            return Verdict("retire", "stops what the old claim does", strong=False)
        return Verdict("keep", "a retirement of something else")
    if attribute != "same" and _habitual_choice(old, new):
        return Verdict("supersede", "one habitual choice said again", strong=False)
    if attribute == "different":
        return Verdict("keep", "another attribute")
    beside = unit_beside(old, new)
    if beside is not None:  # "the Nano Puff in navy, size M" → "it's actually size L": the size changed
        old = replace(old, value=beside)
    if not compatible(old.value, new.value):
        # a moment said as a day and an hour ("Wednesdays at 4pm", 周三下午四点): a new hour changes its hour;
        # one value of the new one's type said beside the old one's ("on the 9th in room 12"): that value
        alike = [m for m in old.mentions if m.type == new.value.type and compatible(m, new.value)]
        if not alike or (len(alike) > 1 and new.value.type not in _PARTS_OF_A_MOMENT):
            return Verdict("keep", "values of different types")
        old = replace(old, value=alike[0])
    if same(old.value, new.value):
        # one moment said again with another part ("周二下午三点" → "周二下午四点半"): that part changed
        moved = _other_part(old, new)
        if moved is None and name_swapped(old.text, new.text):
            return Verdict("supersede", "says the clause again with another name")
        if moved is None:
            return Verdict("keep", "the same value")
        old, new = replace(old, value=moved[0]), replace(new, value=moved[1])
    if attribute == "weak":
        if new.old_value is not None:
            # it says which value it replaces ("…, not by phone"), and this one is not it
            return Verdict("keep", "names another value as replaced")
        # Only a typed value, or a verb of change, ties two claims whose attribute is unsaid: free text
        # ("email notifications") beside a number is no older value of it, and "now" alone is no change
        # unless both speak of one topic ("my phone plan is …", "I'm on … for the plan now").
        if (
            (free(old.value) or free(new.value))
            and not new.shift
            and not (new.change and old.topic & new.topic)
        ):
            return Verdict("keep", "free text and no verb of change")
        if {old.value.type, new.value.type} == {"text", "number"} and not old.topic & new.topic:
            # a bare number and free text, their attribute unsaid: no evidence of one thing
            return Verdict("keep", "values of different types")
        if new.change:
            reason = "a change of a value of the same type"
            return Verdict("supersede", reason, strong=False, change=(old.value, new.value))
        return Verdict("keep", "attribute unsaid and no change word")
    return Verdict("supersede", "same subject and attribute, another value", change=(old.value, new.value))
