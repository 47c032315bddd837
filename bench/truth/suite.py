"""The suite's cases: loaded from YAML (one file per domain), split into dev and holdout by a hash of
the id, and the value matching every check uses."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SUITE = Path(__file__).resolve().parents[1] / "suites" / "evolution"

# Kinds where a new value replaces an old one (supersede recall); the rest are negatives, where
# nothing may leave the active set (false supersedes).
CHANGE_KINDS = frozenset({"change", "restatement", "correction", "retirement", "partial"})
NEGATIVE_KINDS = frozenset({"near_miss", "other_subject", "hedged", "additive"})
MODES = ("conversation", "direct")


@dataclass(frozen=True)
class Write:
    content: str
    tags: list[str]


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    domain: str
    kind: str
    turns: list[dict[str, str]]
    writes: list[Write]
    question: str
    current: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    keep: list[str] = field(default_factory=list)

    @property
    def negative(self) -> bool:
        return self.kind in NEGATIVE_KINDS

    @property
    def split(self) -> str:
        return split_of(self.id)


def split_of(case_id: str) -> str:
    """'dev' or 'holdout', stable: the first byte of the id's SHA-256 below 128 is dev."""
    return "dev" if hashlib.sha256(case_id.encode()).digest()[0] < 128 else "holdout"


def _case(raw: dict[str, Any], source: Path) -> Case:
    turns = [{"role": t["role"], "content": t["content"]} for t in raw["turns"]]
    # A case's direct writes: given, or its turns that carry tags (the statements, not the chatter).
    writes = raw.get("writes") or [t for t in raw["turns"] if "tags" in t]
    if not writes:
        raise ValueError(f"{source.name}: case {raw['id']} has no writes and no tagged turn")
    return Case(
        id=raw["id"],
        lang=raw["lang"],
        domain=raw["domain"],
        kind=raw["kind"],
        turns=turns,
        writes=[Write(w["content"], list(w["tags"])) for w in writes],
        question=raw["question"],
        current=[str(v) for v in raw.get("current", [])],
        stale=[str(v) for v in raw.get("stale", [])],
        keep=[str(v) for v in raw.get("keep", [])],
    )


def load(directory: Path = SUITE, files: str = "*") -> list[Case]:
    """Every case of the suite's YAML files (those whose stem matches the glob `files`), in file order."""
    cases: list[Case] = []
    for path in sorted(directory.glob(f"{files}.yaml")):
        for raw in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            cases.append(_case(raw, path))
    return cases


def select(cases: list[Case], split: str) -> list[Case]:
    return cases if split == "all" else [c for c in cases if c.split == split]


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Full-width forms folded (NFKC), case folded, thousands separators and runs of space dropped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", _THOUSANDS.sub("", folded)).strip()


def holds(content: str, value: str) -> bool:
    """Whether a unit's content holds `value`; a number must not be part of a longer one (8000 is not
    in 18000)."""
    v = normalise(value)
    pattern = re.escape(v)
    if v[:1].isdigit():
        pattern = r"(?<![\d.])" + pattern
    if v[-1:].isdigit():
        pattern += r"(?![\d])"
    return re.search(pattern, normalise(content)) is not None


def problems(case: Case) -> list[str]:
    """What makes a case unable to measure what it claims, in both of its forms: a current value the
    new statement lacks, a stale or kept value no earlier statement holds, a kept value the new
    statement repeats (it would stay "active" even if its unit were superseded), a value chatter
    holds, a change without a current or stale value (a retirement: without a stale one), a negative
    without a kept value."""
    found: list[str] = []
    # Writes taken from the turns: the other user turns are chatter too.
    tagged = all(any(t["content"] == w.content for t in case.turns) for w in case.writes)
    chatter = [
        t["content"]
        for t in case.turns
        if t["role"] != "user" or (tagged and not any(t["content"] == w.content for w in case.writes))
    ]
    forms = {
        "turns": [t["content"] for t in case.turns if t["role"] == "user"],
        "writes": [w.content for w in case.writes],
    }
    for form, said in forms.items():
        last, earlier = said[-1], said[:-1]
        found += [
            f"{form}: current {v!r} not in the last statement" for v in case.current if not holds(last, v)
        ]
        for v in [*case.stale, *case.keep]:
            if not any(holds(s, v) for s in earlier):
                found.append(f"{form}: {v!r} in no earlier statement")
        if case.negative:
            found += [
                f"{form}: kept {v!r} repeated by the new statement" for v in case.keep if holds(last, v)
            ]
    found += [
        f"chatter holds {v!r}"
        for v in [*case.current, *case.stale, *case.keep]
        for c in chatter
        if holds(c, v)
    ]

    # a retirement has no successor: what ended is enough (its answer must not lead with it)
    if not case.negative and not ((case.current or case.kind == "retirement") and case.stale):
        found.append("a change needs current and stale values")
    if case.negative and not case.keep:
        found.append("a negative needs kept values")
    return found
