"""The labelled suite: its YAML files read into conversations, their labels checked, and each
conversation given its half (dev or holdout) by a hash of its id."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

SUITE_DIR = Path(__file__).resolve().parents[1] / "suites" / "distill"
KINDS = ("fact", "preference", "constraint", "task_state", "correction", "episode")
ROLES = ("user", "assistant", "tool")
LANGS = ("en", "zh")
HALVES = ("dev", "holdout")


class SuiteError(ValueError):
    """A suite file breaks the labelling rules (bench/suites/distill/README.md)."""


@dataclass(frozen=True)
class Claim:
    kind: str  # "constraint.budget": the kind, then the subtag where it matters
    must: tuple[str, ...]
    link: str | None = None
    date: str | None = None

    @property
    def base(self) -> str:
        return self.kind.split(".", 1)[0]


@dataclass(frozen=True)
class SuiteTurn:
    seq: int
    role: str
    text: str
    noise: bool
    claims: tuple[Claim, ...] = ()
    compound: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Conversation:
    id: str
    kind: str
    lang: str
    date: datetime
    turns: tuple[SuiteTurn, ...]

    @property
    def half(self) -> str:
        return half(self.id)


def half(conversation_id: str) -> str:
    """Dev or holdout, by the id's hash: stable across runs and machines, whole conversations at once."""
    digest = hashlib.sha256(conversation_id.encode()).hexdigest()
    return HALVES[int(digest[:8], 16) % 2]


def _claim(raw: dict[str, Any], where: str) -> Claim:
    kind = str(raw.get("kind", ""))
    if kind.split(".", 1)[0] not in KINDS:
        raise SuiteError(f"{where}: unknown kind {kind!r}")
    must = raw.get("must")
    if not must or not all(isinstance(m, str | int | float) and str(m).strip() for m in must):
        raise SuiteError(f"{where}: a claim needs `must` words")
    date = raw.get("date")
    if date is not None:
        datetime.strptime(str(date), "%Y-%m-%d")  # a bad day is a ValueError, named by the caller
    extra = set(raw) - {"kind", "must", "link", "date"}
    if extra:
        raise SuiteError(f"{where}: unknown claim keys {sorted(extra)}")
    link = raw.get("link")
    return Claim(kind, tuple(str(m) for m in must), str(link) if link else None, str(date) if date else None)


def _turn(raw: dict[str, Any], seq: int, where: str) -> SuiteTurn:
    if raw.get("role") not in ROLES:
        raise SuiteError(f"{where}: role must be one of {ROLES}")
    if not isinstance(raw.get("noise"), bool):
        raise SuiteError(f"{where}: `noise` must be true or false")
    extra = set(raw) - {"role", "text", "noise", "claims", "compound", "metadata"}
    if extra:
        raise SuiteError(f"{where}: unknown turn keys {sorted(extra)}")
    claims = tuple(_claim(c, f"{where} claim {i}") for i, c in enumerate(raw.get("claims") or [], 1))
    if raw["noise"] == bool(claims):
        raise SuiteError(f"{where}: a noise turn has no claims, an informative one at least one")
    compound = bool(raw.get("compound", False))
    if compound != (len(claims) > 1):
        raise SuiteError(f"{where}: `compound: true` exactly when the turn has two claims or more")
    text = str(raw.get("text", "")).strip()
    if not text:
        raise SuiteError(f"{where}: empty text")
    return SuiteTurn(seq, raw["role"], text, raw["noise"], claims, compound, dict(raw.get("metadata") or {}))


def parse_conversation(raw: dict[str, Any], where: str = "") -> Conversation:
    """One conversation from its YAML mapping, its labels checked (SuiteError when broken)."""
    cid = str(raw.get("id", ""))
    where = f"{where}{cid or '?'}"
    if raw.get("lang") not in LANGS:
        raise SuiteError(f"{where}: lang must be en or zh")
    if not cid.startswith(f"{raw['lang']}-"):
        raise SuiteError(f"{where}: the id starts with its language")
    date = datetime.fromisoformat(str(raw.get("date")))
    if date.tzinfo is None:
        raise SuiteError(f"{where}: the date needs its offset")
    turns = tuple(_turn(t, seq, f"{where} turn {seq}") for seq, t in enumerate(raw.get("turns") or [], 1))
    if not turns:
        raise SuiteError(f"{where}: no turns")
    return Conversation(cid, str(raw.get("kind", "")), raw["lang"], date, turns)


def load(directory: Path = SUITE_DIR) -> list[Conversation]:
    """Every conversation of the suite's files, in file then file order; ids must be unique."""
    conversations: list[Conversation] = []
    for path in sorted(directory.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        conversations += [parse_conversation(c, f"{path.name}: ") for c in data.get("conversations", [])]
    ids = [c.id for c in conversations]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise SuiteError(f"conversation ids used twice: {duplicated}")
    return conversations
