"""The data set: LoCoMo's conversations (public locomo10.json format) read into sessions of turns
(ids normalised, image captions appended, turns 5 s apart from the session's stamp) and the
questions of categories 1-4 whose evidence names turns of the conversation."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.eval.locomo.errors import EvalError

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SESSION_KEY = re.compile(r"^session_(\d+)$")
DATE_TIME_KEY = re.compile(r"^session_(\d+)_date_time$")
DIA_ID = re.compile(r"^D(\d+):(\d+)$")
EVIDENCE_SEPARATORS = re.compile(r"[;,\s]+")
SESSION_STAMP_FORMAT = "%I:%M %p on %d %B, %Y"  # "7:31 pm on 14 June, 2023"
TURN_SPACING = timedelta(seconds=5)


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    occurred_at: datetime


@dataclass(frozen=True)
class Session:
    session_id: str
    number: int
    stamp: str  # the data set's own date-time text, "7:31 pm on 14 June, 2023"
    started_at: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    index: int
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    notes: tuple[str, ...] = ()

    @property
    def turns(self) -> list[Turn]:
        return [turn for session in self.sessions for turn in session.turns]

    @property
    def now(self) -> datetime:
        """The end of the conversation (its last turn): the `now` its questions are asked at."""
        return max(turn.occurred_at for turn in self.turns)


def parse_session_datetime(text: str) -> datetime:
    """A LoCoMo session stamp ("7:31 pm on 14 June, 2023") as an aware UTC datetime."""
    cleaned = " ".join(text.split())
    try:
        return datetime.strptime(cleaned, SESSION_STAMP_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        pass
    import dateparser

    parsed = dateparser.parse(cleaned, settings={"TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True})
    if parsed is None:
        raise EvalError(f"cannot read the session date-time {text!r}")
    result: datetime = parsed.astimezone(UTC)
    return result


def normalise_dia_id(raw: str) -> str | None:
    """Normalise a turn id: "D1:3", " d1 : 03 " → "D1:3"; anything else (a bare "D") → None."""
    match = DIA_ID.match(re.sub(r"\s+", "", raw).upper())
    return f"D{int(match[1])}:{int(match[2])}" if match else None


def split_evidence(raw: Iterable[object]) -> tuple[list[str], list[str]]:
    """The evidence list of a question as normalised dia_ids (in order, once each), and the
    entries that are no dia_id at all. Entries may hold several ids ("D10:8; D10:9")."""
    ids: list[str] = []
    malformed: list[str] = []
    for entry in raw:
        for token in EVIDENCE_SEPARATORS.split(str(entry).strip()):
            if not token:
                continue
            dia_id = normalise_dia_id(token)
            if dia_id is None:
                malformed.append(token)
            elif dia_id not in ids:
                ids.append(dia_id)
    return ids, malformed


def normalise_evidence(raw: Iterable[object]) -> list[str]:
    return split_evidence(raw)[0]


def turn_text(turn: Mapping[str, Any]) -> str:
    """The turn's text, with its image caption appended as " (image: …)"."""
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    if caption:
        text = f"{text} (image: {caption})" if text else f"(image: {caption})"
    return text


def _session(number: int, turns: Sequence[Mapping[str, Any]], stamp: str) -> Session:
    started_at = parse_session_datetime(stamp)
    converted: list[Turn] = []
    for turn in turns:
        text = turn_text(turn)
        if not text:
            continue
        raw_id = str(turn["dia_id"])
        converted.append(
            Turn(
                dia_id=normalise_dia_id(raw_id) or raw_id.strip(),
                speaker=str(turn.get("speaker") or "").strip(),
                text=text,
                occurred_at=started_at + TURN_SPACING * len(converted),
            )
        )
    return Session(f"session_{number}", number, " ".join(stamp.split()), started_at, tuple(converted))


def _sessions(sample_id: str, conversation: Mapping[str, Any]) -> tuple[list[Session], list[str]]:
    numbers = sorted(int(m[1]) for key in conversation if (m := SESSION_KEY.match(key)) and conversation[key])
    stamps = {int(m[1]): key for key in conversation if (m := DATE_TIME_KEY.match(key))}
    notes = []
    orphans = sorted(set(stamps) - set(numbers))
    if orphans:
        notes.append(
            f"{sample_id}: {len(orphans)} session date-times without turns ignored"
            f" (session_{orphans[0]} … session_{orphans[-1]})"
        )
    sessions = []
    for number in numbers:
        if number not in stamps:
            raise EvalError(f"{sample_id}: session_{number} has no session_{number}_date_time")
        sessions.append(_session(number, conversation[f"session_{number}"], conversation[stamps[number]]))
    return sessions, notes


def _questions(
    sample_id: str, qa: Sequence[Mapping[str, Any]], known: set[str]
) -> tuple[list[Question], list[str]]:
    questions = []
    notes = []
    for index, item in enumerate(qa):
        category = int(item.get("category", 0))
        if category not in CATEGORIES:
            continue
        ids, malformed = split_evidence(item.get("evidence") or [])
        unknown = [i for i in ids if i not in known]
        evidence = tuple(i for i in ids if i in known)
        where = f"{sample_id} q{index} ({item.get('question')!r})"
        if malformed:
            notes.append(f"{where}: malformed evidence {malformed} dropped")
        if unknown:
            notes.append(f"{where}: evidence {unknown} names no turn of the conversation, dropped")
        if not evidence:
            notes.append(f"{where}: no usable evidence, question skipped")
            continue
        questions.append(Question(index, str(item["question"]), category, evidence))
    return questions, notes


def load_conversation(sample: Mapping[str, Any]) -> Conversation:
    sample_id = str(sample.get("sample_id") or "conversation")
    sessions, notes = _sessions(sample_id, sample["conversation"])
    if not sessions:
        raise EvalError(f"{sample_id}: no session with turns")
    known = {turn.dia_id for session in sessions for turn in session.turns}
    questions, question_notes = _questions(sample_id, sample.get("qa") or [], known)
    return Conversation(sample_id, tuple(sessions), tuple(questions), tuple(notes + question_notes))


def load_dataset(path: Path) -> list[Conversation]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EvalError(f"cannot read {path}: {exc}") from exc
    samples = data if isinstance(data, list) else [data]
    return [load_conversation(sample) for sample in samples]
