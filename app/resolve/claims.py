"""How resolution compares claims: the lookup keys of a unit's attributes, the verdicts of `app/claims`
on each candidate (newest first; a weak verdict ends one candidate at most), and what of a compound
unit stays true once one of its claims ends."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from app.claims import Claim, Verdict, conflicts, names_old, retired_object
from app.claims.compare import unit_beside
from app.claims.ending import RETIRED_MARGIN, RETIRED_OBJECT, said_in
from app.claims.model import Value
from app.claims.subjects import THIRD_PERSON
from app.claims.values import fold, free, same
from app.resolve.tuning import DETAIL_WORDS
from app.text import STOPWORDS_EN


def slot_keys(claims: list[Claim]) -> list[dict[str, str]]:
    """What finds the units holding one of these claims' attributes: (subject, head) when the claim
    has a head (a budget of any qualifier), else (subject, attribute)."""
    keys: list[dict[str, str]] = []
    for c in claims:
        if c.head:
            keys.append({"subject": c.subject, "head": c.head})
        elif c.attribute:
            keys.append({"subject": c.subject, "attribute": c.attribute})
    return keys


def is_happening(tags: list[str], claims: list[Claim]) -> bool:
    """A one-time happening, true of its moment and never replaced by another: an episode, a life event
    (a change told as one is compared all the same: see `decide`)."""
    first = tags[0] if tags else ""
    return first == "episode" or first.startswith(("fact.event", "episode."))


def one_attribute(new: list[Claim], old: list[Claim]) -> bool:
    """Whether the two units' claims name one attribute of one subject: their verdict on it stands. Claims
    naming other attributes ("my gym membership costs …", "my fitness club fee is …") may still be one
    said in other words: the judge's question."""
    named = {(c.subject, c.attribute) for c in old if c.attribute}
    return any((c.subject, c.attribute) in named for c in new if c.attribute)


def hedged_over_firm(new: list[Claim], old: list[Claim]) -> bool:
    """Whether a hedged statement meets a firm one: it never replaces it, by any rule."""
    return bool(new) and all(c.modality == "hedged" for c in new) and any(c.modality == "firm" for c in old)


def named_values(claims: list[Claim]) -> list[str]:
    """The old values these claims name as replaced ("from Tuesdays to …", "不再用…")."""
    return sorted(
        {c.old_value.text for c in claims if c.old_value is not None and len(c.old_value.text) >= 2}
    )


@dataclasses.dataclass(frozen=True)
class ClaimDecision:
    """What the new unit's claims do to one candidate: `action` supersede or retire, `hit` the indices
    of the candidate's claims that end (the others are still true: a compound unit's residue)."""

    candidate_id: Any
    action: str
    reason: str
    hit: frozenset[int]
    kept: frozenset[int] = frozenset()
    # (a hit claim's index, its value replaced, the new value, every value the new claim says): `residue`
    replaced: tuple[tuple[int, Value, Value, tuple[Value, ...]], ...] = ()


def kept_by(new: list[Claim], olds: list[Claim]) -> frozenset[int]:
    """The old claims a new clause says are unchanged ("parking hasn't changed", 住的地方没变): the first
    word of what it names and half its words said in them ("the wake-up time" keeps no bedtime)."""
    kept = [c for c in new if c.unchanged and c.topic]
    if not kept:
        return frozenset()

    def said(word: str, text: str) -> bool:  # (a Chinese one-character verb too: 住 in 我住在杭州)
        return said_in(word, text) or (len(word) == 1 and not word.isascii() and word in text)

    def keeps(claim: Claim, old: Claim) -> bool:
        named = [w for w in claim.qualifier if said(w, old.text)]
        return claim.topic <= set(named) and 2 * len(named) >= len(claim.qualifier)

    return frozenset(i for i, old in enumerate(olds) if any(keeps(c, old) for c in kept))


FrameSimilarity = Callable[[str, str], float | None]


def decide(
    new: list[Claim],
    candidates: list[tuple[Any, list[Claim]]],
    frame_similarity: FrameSimilarity,
    happenings: frozenset[Any] = frozenset(),
) -> ClaimDecision | None:
    """The candidate the new claims end, candidates given newest first: the newest with a strong
    verdict; else, a weak verdict (attribute unsaid, a change word and a value of the same type) ends
    one claim, the closest in frame, of the candidate it applies to most closely, never more. A
    one-time happening (`happenings`: those candidates' ids, and None for the new unit) is true of its
    moment: an old one ends only by a statement naming its value (one visit never replaces another,
    and a story's change words end no earlier story); a new one ends an older claim only when it
    names the old value or announces a change."""
    # A statement that announces a change by a verb of change, a correction or a retirement ("we
    # lowered the timeout to 12 seconds", filed as a life event) is compared by its claims like any other.
    announced = any(c.shift or c.modality == "retired" for c in new)
    weak: tuple[float, ClaimDecision] | None = None
    retired: ClaimDecision | None = None
    named: ClaimDecision | None = None
    for candidate_id, olds in candidates:
        strong_hits: dict[int, Verdict] = {}
        weak_hits: dict[int, tuple[float, Verdict]] = {}
        said_by: dict[int, Claim] = {}  # the new claim each strong hit's verdict is of
        weakly_by: dict[int, Claim] = {}  # and each weak one's
        explicit_only = candidate_id in happenings or (None in happenings and not announced)
        kept = kept_by(new, olds)
        for i, old in enumerate(olds):
            if i in kept:
                continue
            for claim in new:
                similarity = frame_similarity(old.frame, claim.frame)
                v = conflicts(old, claim, frame_similarity=similarity)
                if v.action == "keep":
                    continue
                if explicit_only and not names_old(old, claim):
                    continue
                if v.strong:
                    # a value said beside the ending is its successor ("Ravi left, so my lead is Chen")
                    if i not in strong_hits or (strong_hits[i].action, v.action) == ("retire", "supersede"):
                        strong_hits[i], said_by[i] = v, claim
                else:
                    # a typed pair ties closer than any pair of free text, values of one type (two
                    # times) closer than of compatible ones (a name and free text); an old value of
                    # the new one's unit said beside another (", size M") is the one compared
                    value = unit_beside(old, claim) or old.value
                    closeness = (similarity or 0.0) + (0.0 if free(value) or free(claim.value) else 1.0)
                    closeness += 0.5 if value.type == claim.value.type else 0.0
                    if free(value) and free(claim.value):  # two free values, the nearer in kind
                        closeness += 0.5 * (frame_similarity(value.text, claim.value.text) or 0.0)
                    if closeness > weak_hits.get(i, (-1.0, v))[0]:
                        weak_hits[i], weakly_by[i] = (closeness, v), claim
        if strong_hits:
            replaced = [v for _, v in sorted(strong_hits.items()) if v.action == "supersede"]
            # "uses B, no longer A": the value it retires by name is the one its other clause replaces
            replaced = replaced or [w for i, (_, w) in sorted(weak_hits.items()) if i in strong_hits]
            first = replaced[0] if replaced else strong_hits[min(strong_hits)]
            found = ClaimDecision(
                candidate_id,
                first.action,
                first.reason,
                frozenset(strong_hits),
                kept,
                _changes({i: (v, said_by[i]) for i, v in strong_hits.items()}),
            )
            if replaced and any(_of_its_relation(olds[i], new) for i in strong_hits):
                return found
            if replaced:
                # it names the old value, but of another relation ("TicketFlow has a bug" beside "uses
                # DeskPilot instead of TicketFlow"): only if no holder of its own relation is found
                named = named or found
                continue
            # A retirement by name only: a newer value of the same attribute elsewhere is the claim the
            # statement replaces ("uses B, no longer A"), not a statement that merely mentions A.
            retired = retired or found
            continue
        if weak_hits:
            # a weak tie ends one claim, the closest in frame, of the closest candidate (newest on a tie)
            best = max(weak_hits, key=lambda i: weak_hits[i][0])
            closeness, verdict = weak_hits[best]
            if weak is None or closeness > weak[0]:
                weak = (
                    closeness,
                    ClaimDecision(
                        candidate_id,
                        verdict.action,
                        verdict.reason,
                        frozenset([best]),
                        kept,
                        _changes({best: (verdict, weakly_by[best])}),
                    ),
                )
    decided = named or retired or (weak[1] if weak else None)
    return decided or _closest_retired(new, candidates, frame_similarity, happenings)


def _changes(
    verdicts: dict[int, tuple[Verdict, Claim]],
) -> tuple[tuple[int, Value, Value, tuple[Value, ...]], ...]:
    """The values the supersede verdicts replace, by the index of the claim they are said in, with every
    value the new claim that replaces them says."""
    return tuple(
        (i, *v.change, claim.mentions)
        for i, (v, claim) in sorted(verdicts.items())
        if v.action == "supersede" and v.change
    )


def _closest_retired(
    new: list[Claim],
    candidates: list[tuple[Any, list[Claim]]],
    frame_similarity: FrameSimilarity,
    happenings: frozenset[Any],
) -> ClaimDecision | None:
    """An English retirement (`retired_object`) naming nothing a candidate says ends the one claim
    closest to what it ends (its value or its frame), when that claim is close enough and clearly ahead of
    every other."""
    scored: list[tuple[float, Any, int]] = []
    for claim in new:
        thing = retired_object(claim)
        if not thing:
            continue
        for candidate_id, olds in candidates:
            if candidate_id in happenings:
                continue
            kept = kept_by(new, olds)
            for i, old in enumerate(olds):
                if (
                    i in kept
                    or old.modality == "retired"
                    or not (old.subject == claim.subject or old.implicit_subject or claim.implicit_subject)
                ):
                    continue
                near = [frame_similarity(thing, t) for t in (old.value.text, old.frame or old.text)]
                scored.append((max((n for n in near if n is not None), default=0.0), candidate_id, i))
    if not scored:
        return None
    scored.sort(key=lambda s: s[0], reverse=True)
    best, candidate_id, i = scored[0]
    runner_up = scored[1][0] if len(scored) > 1 else 0.0
    if best < RETIRED_OBJECT or best - runner_up < RETIRED_MARGIN:
        return None
    kept = kept_by(new, next(olds for c, olds in candidates if c == candidate_id))
    return ClaimDecision(candidate_id, "retire", "retires the closest thing it names", frozenset([i]), kept)


def _of_its_relation(old: Claim, new: list[Claim]) -> bool:
    """Whether the old claim is of the relation the new claims state (or either states none)."""
    return any(not old.head or not c.head or old.head == c.head for c in new)


def residue(
    olds: list[Claim],
    hit: frozenset[int],
    retired: bool = False,
    kept: frozenset[int] = frozenset(),
    replaced: tuple[tuple[int, Value, Value, tuple[Value, ...]], ...] = (),
) -> list[Claim]:
    """The claims of a compound unit still true once `hit` end: those about another subject, of another
    known attribute (a head), with a typed value, or of free text ("I want to buy a laptop" stays when
    the budget beside it changes: the question for the budget asks for an amount, and the units stating
    one lead its answer). `retired`: what ends has no successor, and its details (a clause naming
    nothing of its own, or free text naming what ended) end with it. `kept`: the claims the new
    statement says are unchanged, true whatever else ends. `replaced`: a claim that ends by one of its
    values replaced while it says others ("the review is on May 9 in room 12" → "…moved to room 14")
    stays, said with the new value: what else it says is still true."""
    ended = [olds[i] for i in hit]
    subjects = {c.subject for c in ended}
    attributes = {c.attribute for c in ended}
    scene = {w for c in ended for w in (*c.qualifier, *c.topic, *fold(c.attribute).split())}

    first = min(hit, default=len(olds))

    def still_true(i: int, c: Claim) -> bool:
        if i in kept:
            return True
        # ("she" after what ends may be it: "a cat called Pepper, she is 4")
        if c.subject not in subjects and not (c.subject == THIRD_PERSON and i > first):
            return True
        if retired and c.implicit_subject and not (c.head or c.qualifier or c.topic):
            return False  # "I have a visa, it renews next year": what is retired takes its details
        if retired and i > first and detail_of(c, olds[i - 1]):
            return False
        if c.attribute in attributes and c.attribute:
            return False
        if c.head or not free(c.value):
            return bool(c.attribute) or not free(c.value)
        words = {
            *c.qualifier,
            *c.topic,
            *(w for w in fold(c.value.text, keep_space=True).split() if len(w) > 2),
        }
        named = words & scene or any(w in fold(c.value.text) for w in scene if len(w) > 1)
        return not (retired and named)

    rewritten = {i: _said_with(olds[i], old, new, said) for i, old, new, said in replaced if not retired}
    return [
        rewritten[i] or c if i in hit else c
        for i, c in enumerate(olds)
        if (i not in hit and still_true(i, c)) or rewritten.get(i)
    ]


def _said_with(claim: Claim, old: Value, new: Value, said: tuple[Value, ...]) -> Claim | None:
    """`claim` said with the new claim's values (`new`, and `said`: every value it says) in place of its
    own of their types, when it also says a typed value of a type the new claim does not (a date beside
    a room, a day beside a price); else None: a clause whose every value is replaced ends whole."""
    by_type = {v.type: v for v in (*said, new)}
    swaps = [
        (m, by_type[m.type]) for m in claim.mentions if m.type in by_type and not same(m, by_type[m.type])
    ]
    untouched = [m for m in claim.mentions if m.type not in by_type and not free(m)]
    if not untouched or not any(same(m, old) for m, _ in swaps):
        return None
    text, value = claim.text, claim.value
    for was, now in swaps:
        if was.text not in text:
            return None
        text = text.replace(was.text, now.text, 1)
        value = now if same(value, was) else value
    mentions = tuple(next((now for was, now in swaps if was is m), m) for m in claim.mentions)
    return dataclasses.replace(claim, text=text, value=value, mentions=mentions)


def detail_of(claim: Claim, before: Claim) -> bool:
    """Whether `claim`, said right after `before` of a thing that is retired, says a detail of that thing
    and goes with it: a verbless value ("a storage unit …, £85 a month", "有一台测试机，编号是…"), a
    relative clause ("a cleaner, who comes on Fridays"), the bare predicate after a Chinese pivot
    ("请了个家教，每周四来上课": who was taken on is who comes)."""
    if is_detail(claim) or _RELATIVE.match(claim.text):
        return True
    return _PIVOT_ZH.search(before.text) is not None and not _NAMES_WHO_ZH.match(claim.text)


def details_of(claims: list[Claim], retired: list[Claim]) -> bool:
    """Whether a unit split from the turn of a retired unit (its claims `retired`) states only details of
    it, said of its subjects or of no one named."""
    subjects = {c.subject for c in retired}
    return bool(claims and retired) and all(
        detail_of(c, retired[-1]) and (c.subject in subjects or c.implicit_subject) for c in claims
    )


_SPEAKER_OPENS = re.compile(r"\s*(?:(?:i|we|my|our)\b|我|咱)", re.IGNORECASE)


# A clause opening with a verb of naming, no subject of its own ("…, called Pepper", "叫redis-legacy")
_NAMES_IT = re.compile(r"\s*(?:(?:is\s+|was\s+)?(?:called|named|nicknamed)\b|名叫|叫做|叫)", re.IGNORECASE)


# a Chinese clause taking someone or something on (请了个阿姨, 养了一只猫, 报了个班): the bare predicate
# after it is said of them
_PIVOT_ZH = re.compile(r"[请雇找养报办开租买订][了过]?[一个只位名家份套辆台张]+[\u4e00-\u9fff]+$")
_NAMES_WHO_ZH = re.compile(r"\s*(?:我|咱|你|您|他|她|它)")
# a relative clause, said of the thing the clause before names ("…, who comes on Fridays")
_RELATIVE = re.compile(r"^\s*(?:who|which|whose|where)\b", re.IGNORECASE)


def is_detail(claim: Claim) -> bool:
    """A clause with no verb or known attribute of its own, its value and at most a word beside it ("£85
    a month", "编号是A-1024", "月费99元"), or the name it gives the thing before it ("叫redis-legacy"): a
    detail of the clause it follows."""
    if _NAMES_IT.match(claim.text) and not free(claim.value):
        return True
    if claim.verb or claim.head or free(claim.value) or _SPEAKER_OPENS.match(claim.text):
        return False  # (opening with the speaker, "I'm 34", "我今年34岁", it is about the speaker)
    rest = fold(claim.text.replace(claim.value.text, " "), keep_space=True)
    return len([w for w in rest.split() if len(w) > 1 and w not in STOPWORDS_EN]) <= DETAIL_WORDS


def residual_text(claims: list[Claim]) -> str:
    """A unit's content made of the still-true clauses."""
    parts = [c.text.strip().rstrip("。.，,;；") for c in claims if c.text.strip()]
    if any(not p.isascii() for p in parts):
        return "，".join(parts) + "。"
    return ". ".join(p[:1].upper() + p[1:] for p in parts) + "."
