"""What the distiller's units are made of beyond one clause (issue 32): the rules a clause matches, the
kind of a turn's leftover, the parts of one turn linked by the ids and names they share, and the
episode text rebuilt from the clauses no unit holds, as the turn said them."""

from __future__ import annotations

import re

from app.distill.heuristic import clean
from app.distill.heuristic.clauses import Clause, split_clauses
from app.distill.heuristic.entities import dedupe_entities
from app.distill.heuristic.kinds import clause_kind
from app.distill.heuristic.person import WORD
from app.distill.heuristic.predicates import states_something
from app.distill.heuristic.rules import EMPTY_OBJECTS, QUESTION_EN, QUESTION_ZH, Rule
from app.distill.heuristic.rules_en import EN_RULES
from app.distill.heuristic.rules_zh import ZH_RULES
from app.distill.heuristic.tuning import MIN_CONTENT_CHARS_ZH
from app.distill.task_episode import tool_name
from app.distill.types import Candidate, Turn
from app.text import FILLER_ZH, STOPWORDS_EN, has_cjk, split_sentences


def matches(sentence: str, language: str, role: str) -> list[tuple[Rule, re.Match[str]]]:
    found = []
    for rule in ZH_RULES if language == "zh" else EN_RULES:
        if role not in rule.roles:
            continue
        match = rule.pattern.search(sentence)
        if match is None:
            continue
        obj = match.groupdict().get("obj")
        if obj is not None and all(w in EMPTY_OBJECTS for w in re.findall(r"[\w']+", obj.lower())):
            continue  # "I love it!" states no preference
        found.append((rule, match))
    return found


CHANNEL = frozenset({"fact.contact", "fact"})  # a rule's contact detail is a request's channel


def leftover_kind(chunk: str, language: str, role: str) -> str:
    """What a turn's leftover is: one clause is classified like any clause; several are an episode."""
    question = (QUESTION_ZH if language == "zh" else QUESTION_EN).search(chunk)
    if role == "tool" and not question:
        return "fact"  # what a tool returns is data: ids, prices, states
    if (
        question
        or len(split_sentences(chunk)) > 1
        or len(split_clauses(chunk)) > 1
        or not states_something(chunk)
    ):
        return "episode"
    kind = clause_kind(chunk, language, role)
    # a mention a loose rule names says which fact it is ("my uncle lives in Denver": fact.family)
    named = [
        r.tag for r, _ in matches(chunk, language, role) if r.loose and r.tag.startswith(("fact.", "pref"))
    ]
    return named[0] if kind == "fact" and named else kind


def fragment_claim(clause: str, kind: str, names: set[str]) -> bool:
    """Whether a fragment said to an assistant is a claim without a verb: a value answering what it asked
    ("From Edinburgh.", "Probably A2"), or a wish ("Aisle seat, please", "Ideally a sea view")."""
    return kind == "preference" or clean.has_specifics(clause, names)


def says_enough(clause: str, language: str) -> bool:
    """A clause's content: two words that are not stopwords (a digit counts: "the cats are 3 and 11"),
    or a speaker's verb and the thing it takes ("we got a puppy", "I see a therapist": small talk's
    verbs, but a thing), or in Chinese as many characters as an episode needs."""
    if language == "zh":
        return len(FILLER_ZH.sub("", clause)) >= MIN_CONTENT_CHARS_ZH
    words = [w.lower() for w in WORD.findall(clause)]
    content = [w for w in words if w not in STOPWORDS_EN and (len(w) > 1 or w.isdigit())]
    if len(content) == 1 and words[0] in ("i", "we") and len(words) > 3:
        return words[2] in _ARTICLES and words[3] == content[0]
    return len(content) >= 2


_ARTICLES = frozenset("a an my our".split())


_EMPTY = re.compile("")


def _kind_rule(kind: str, confidence: float, importance: float) -> tuple[Rule, re.Match[str]]:
    match = _EMPTY.match("")
    assert match is not None
    return Rule(kind, _EMPTY, confidence, importance), match


KIND_RULES = {
    kind: _kind_rule(kind, confidence, importance)
    for kind, confidence, importance in (
        ("fact", 0.8, 0.55),
        ("fact.event", 0.8, 0.5),
        ("preference", 0.85, 0.6),
        ("constraint", 0.8, 0.7),
        ("task_state", 0.85, 0.5),
        ("correction", 0.9, 0.7),
    )
}


def kind_rule(kind: str) -> tuple[Rule, re.Match[str]]:
    """The rule a clause's kind tags it with ("constraint.time": a constraint's confidence, its tag)."""
    if kind in KIND_RULES:
        return KIND_RULES[kind]
    base, _ = KIND_RULES[kind.split(".", 1)[0]]
    return _kind_rule(kind, base.confidence, base.importance)


_SERVICE_KINDS = ("preference", "task_state", "constraint")


# A tool call that changes something (its name's or its command's verb): what it returns is a step done,
# not a fact read (a search, a lookup, a log). A closed class: verbs that create, alter, end or run.
_WRITE_CALL = re.compile(
    r"(?:^|[._\-\s(/])(?:re|un|pre)?(?:create|book|reserve|cancel|update|delete|remove|drop|send|refund|"
    r"approve|reject|reset|deploy|rollback|revert|ship|submit|schedule|transfer|pay|charge|issue|renew|"
    r"assign|close|merge|apply|install|upgrade|scale|grant|revoke|block|enable|disable|publish|"
    r"register|file|replace|order|set|change|modify|edit|add|move|rename|commit|push|rerun|retry|"
    r"trigger|start|stop|kill|sign|confirm|activate|deactivate|allocate|provision|migrate|restore)"
    r"(?:[._\-\s(/:：]|$)|创建|预订|预约|分配|变更|修改|取消|删除|开通|办理|提交|发送|退款|下单|重置|续费|升级",
    re.IGNORECASE,
)


def steps_done(turn: Turn, units: list[Candidate]) -> list[Candidate]:
    """A tool turn of a call that changes something (bookings.create, tickets.cancel): its units are
    steps done (`task_state` first), whatever ids or values a rule tagged them by."""
    call = tool_name(turn) or re.split(r"[:：]|->", turn.content[:60], maxsplit=1)[0]
    if turn.role != "tool" or not _WRITE_CALL.search(call):
        return units
    return [kind_first(u, "task_state") for u in units]


def kind_first(unit: Candidate, kind: str) -> Candidate:
    """A rule that names what a fact is about (an id, an address, a relative) tags a fact; a clause that
    is a step to do, a wish about how to be served or a limit is that first ("my address is still to be
    confirmed": a `task_state`, tagged `fact.location` after it)."""
    if kind.split(".", 1)[0] not in _SERVICE_KINDS or not unit.tags[0].startswith("fact"):
        return unit
    return unit.model_copy(update={"tags": [kind, *(t for t in unit.tags if t != kind)]})


def linked(units: list[Candidate]) -> list[Candidate]:
    """The parts of one turn keep what links them: each carries the ids and names the others hold, so a
    question about one part (the complaint) brings the other along (its order number)."""
    anchors = dedupe_entities([e for u in units for e in u.entities if e.type in _ANCHOR_TYPES])
    if len(units) < 2 or not anchors:
        return units
    return [u.model_copy(update={"entities": dedupe_entities([*u.entities, *anchors])}) for u in units]


_ANCHOR_TYPES = frozenset({"id", "person"})


def episode_text(
    parts: list[tuple[Candidate | None, bool, str, tuple[int, Clause]]], sentences: list[str]
) -> list[str]:
    """The clauses no unit holds, as the turn said them: a run of clauses of one sentence is its slice."""
    runs: list[tuple[int, int, int]] = []  # sentence, start, end
    for unit, _, _, (number, clause) in parts:
        if unit is not None:
            runs.append((-1, 0, 0))
            continue
        if runs and runs[-1][0] == number:
            runs[-1] = (number, runs[-1][1], clause.end)
        else:
            runs.append((number, clause.start, clause.end))
    out = []
    for number, start, end in runs:
        if number < 0:
            continue
        text = sentences[number][start:end].strip(" ,，;；")
        if len(text) >= len(sentences[number].rstrip(" .!?。！？")):
            out.append(sentences[number])
        else:  # a slice ends as a sentence does: the next one is not run into it
            out.append(text if text.endswith(tuple(".!?。！？")) else text + ("。" if has_cjk(text) else "."))
    return out
