"""What the distiller made of a conversation, scored against its labels: pure functions of the
conversation and its units, so hand-made unit lists test them (tests/unit/test_distill_suite.py).

A unit belongs to the turns it cites: it can hold a claim of any of them, and the turn it was made
from (its last cited turn) is not noise. A claim is found by the unit of its turn that contains all
its `must` words (the shortest such unit when several do)."""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from bench.distill_quality.markers import unclean
from bench.distill_quality.suite import KINDS, Claim, Conversation, SuiteTurn

# (numerator, denominator) counters, in the order the table prints them
METRICS = (
    "noise_precision",  # turns left without a unit that are labelled noise / turns left without a unit
    "noise_recall",  # noise turns left without a unit / noise turns
    "claims_found",  # claims a unit holds / claims
    "atomic",  # compound turns whose claims each hold a unit of their own / compound turns
    "clean",  # units with no marker, filler, hedge or role prefix / units
    "clean_but_role",  # the same with role prefixes forgiven
    "kind",  # claims whose unit has the expected kind / claims (a claim not found is a miss)
    "subtag",  # claims with a subtag whose unit carries it / claims with a subtag
    "link_kept",  # split linked turns where every part keeps the link value / split linked turns
    "kept_assistant_tool",  # informative assistant and tool turns with a claim found / such turns
    "dates",  # found claims with a date whose unit names that day / found claims with a date
)


@dataclass(frozen=True)
class Unit:
    """What the scorer needs of a distilled unit."""

    content: str
    tags: tuple[str, ...]
    source_seqs: tuple[int, ...]
    entities: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The kind it is counted as: `correction` when tagged so, else its primary tag's kind."""
        return "correction" if "correction" in self.tags else self.tags[0].split(".", 1)[0]


@dataclass
class Failure:
    """A turn the scorer faulted, with what was produced (printed for dev only)."""

    conversation: str
    seq: int
    role: str
    text: str
    problems: list[str]
    units: list[Unit]


@dataclass
class Tally:
    counts: dict[str, list[int]] = field(default_factory=lambda: {m: [0, 0] for m in METRICS})
    expected: Counter[str] = field(default_factory=Counter)  # claims per expected kind
    predicted: Counter[str] = field(default_factory=Counter)  # found claims per kind of their unit
    correct: Counter[str] = field(default_factory=Counter)  # found claims whose unit has the expected kind
    unit_kinds: Counter[str] = field(default_factory=Counter)  # every unit, by its kind
    turns: int = 0
    units: int = 0

    def add(self, metric: str, hit: bool) -> None:
        self.counts[metric][0] += int(hit)
        self.counts[metric][1] += 1

    def merge(self, other: Tally) -> None:
        for m in METRICS:
            self.counts[m][0] += other.counts[m][0]
            self.counts[m][1] += other.counts[m][1]
        for mine, theirs in (
            (self.expected, other.expected),
            (self.predicted, other.predicted),
            (self.correct, other.correct),
            (self.unit_kinds, other.unit_kinds),
        ):
            mine.update(theirs)
        self.turns += other.turns
        self.units += other.units

    def rate(self, metric: str) -> float | None:
        hit, total = self.counts[metric]
        return hit / total if total else None

    def per_kind(self) -> dict[str, dict[str, float | int | None]]:
        """Precision and recall of each kind over the claims (the issue's per-label figures)."""
        out: dict[str, dict[str, float | int | None]] = {}
        for kind in KINDS:
            tp, expected, predicted = self.correct[kind], self.expected[kind], self.predicted[kind]
            out[kind] = {
                "claims": expected,
                "precision": tp / predicted if predicted else None,
                "recall": tp / expected if expected else None,
            }
        return out


def normalise(text: str) -> str:
    """Case, width and spacing folded; thousands separators dropped ("3,000" finds "3000")."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    return " ".join(text.split())


def holds(unit: Unit, claim: Claim) -> bool:
    content = normalise(unit.content)
    return all(normalise(word) in content for word in claim.must)


def keeps_link(unit: Unit, link: str) -> bool:
    value = normalise(link)
    return value in normalise(unit.content) or any(value == normalise(e) for e in unit.entities)


def kind_matches(unit: Unit, claim: Claim) -> bool:
    return unit.label == claim.base


def subtag_matches(unit: Unit, claim: Claim) -> bool:
    return any(t == claim.kind or t.startswith(claim.kind + ".") for t in unit.tags)


def best_unit(units: list[Unit], claim: Claim) -> Unit | None:
    """The shortest unit holding the claim: the one most nearly about it alone."""
    holding = [u for u in units if holds(u, claim)]
    return min(holding, key=lambda u: len(u.content)) if holding else None


def separate_units(units: list[Unit], claims: tuple[Claim, ...]) -> list[Unit] | None:
    """A unit per claim, no unit used twice, each holding its claim; None when there is no such choice."""
    options = [[u for u in units if holds(u, c)] for c in claims]
    for choice in itertools.product(*options):
        if len({id(u) for u in choice}) == len(choice):
            return list(choice)
    return None


def turn_units(units: list[Unit], seq: int) -> list[Unit]:
    return [u for u in units if seq in u.source_seqs]


def made_from(units: list[Unit], seq: int) -> list[Unit]:
    return [u for u in units if max(u.source_seqs) == seq]


def score_turn(turn: SuiteTurn, units: list[Unit], tally: Tally) -> list[str]:
    """Add one turn's counts to `tally`; the problems found, for the failure listing."""
    problems: list[str] = []
    silent = not made_from(units, turn.seq)
    tally.turns += 1
    if silent:
        tally.add("noise_precision", turn.noise)
    if turn.noise:
        tally.add("noise_recall", silent)
        if not silent:
            problems.append("noise turn left a unit")
        return problems
    mine = turn_units(units, turn.seq)
    found_any = False
    for claim in turn.claims:
        unit = best_unit(mine, claim)
        tally.expected[claim.base] += 1
        tally.add("claims_found", unit is not None)
        if unit is None:
            tally.add("kind", False)
            if "." in claim.kind:
                tally.add("subtag", False)
            problems.append(f"claim not found: {claim.kind} {list(claim.must)}")
            continue
        found_any = True
        tally.predicted[unit.label] += 1
        right = kind_matches(unit, claim)
        tally.correct[claim.base] += int(right)
        tally.add("kind", right)
        if not right:
            problems.append(f"kind {unit.label} for {claim.kind} {list(claim.must)}")
        if "." in claim.kind:
            tally.add("subtag", subtag_matches(unit, claim))
        if claim.date is not None:
            tally.add("dates", claim.date in unit.content)
            if claim.date not in unit.content:
                problems.append(f"date {claim.date} not in the unit")
    if turn.role in ("assistant", "tool"):
        tally.add("kept_assistant_tool", found_any)
    if turn.compound:
        parts = separate_units(mine, turn.claims)
        tally.add("atomic", parts is not None)
        if parts is None:
            problems.append("compound turn not split into a unit per claim")
        linked = [(c, u) for c, u in zip(turn.claims, parts or [], strict=False) if c.link]
        if parts is not None and linked:
            kept = all(keeps_link(u, c.link or "") for c, u in linked)
            tally.add("link_kept", kept)
            if not kept:
                problems.append("a split part lost the link value")
    return problems


def score_conversation(conversation: Conversation, units: list[Unit]) -> tuple[Tally, list[Failure]]:
    """The conversation's counts and its faulted turns (units not clean are faulted on their turn)."""
    tally = Tally()
    tally.units = len(units)
    failures: list[Failure] = []
    for unit in units:
        tally.unit_kinds[unit.label] += 1
        tally.add("clean", unclean(unit.content) is None)
        tally.add("clean_but_role", unclean(unit.content, forgive_role=True) is None)
    for turn in conversation.turns:
        problems = score_turn(turn, units, tally)
        for unit in made_from(units, turn.seq):
            reason = unclean(unit.content)
            if reason:
                problems.append(f"not clean ({reason}): {unit.content}")
        if problems:
            failures.append(
                Failure(
                    conversation.id, turn.seq, turn.role, turn.text, problems, turn_units(units, turn.seq)
                )
            )
    return tally, failures
