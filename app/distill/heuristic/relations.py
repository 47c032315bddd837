"""Subject–verb–object relations found by structure: a closed table of relation verbs (works at, uses,
owns, lives in, belongs to, manages, reports to, depends on, has a bug; 在…工作, 用的是, 属于, 负责, 有…问题),
the subject and object the names around the verb. English names are capitalised or CamelCase words
with their versions ("CloudDesk", "MySQL 8.0", "Postgres 16": whole, never cut); Chinese ones are
the nouns jieba's part-of-speech tags put next to the verb. First person ("we", "我们公司") is the
speaker. Precision first: a lower-case object ("uses email") is a description, not a node."""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.claims.lexicon import REPLY_QUOTE
from app.distill.heuristic.noise import NOT_NAMES
from app.distill.types import Candidate
from app.entities.types import EntityOut, RelationOut
from app.text import STOPWORDS_EN, has_cjk, pos_tag, split_sentences

# --- names ------------------------------------------------------------------------------------------

_TOKEN = r"[A-Z][A-Za-z0-9]*(?:[.+#-][A-Za-z0-9]+)*"
_VERSION = r"v?\d+(?:\.\d+)*(?:\.x)?(?!\w|\.\d)"
# A name: capitalised words, each maybe followed by a version ("MySQL 8.0", "Python 3.12").
NAME_EN = rf"{_TOKEN}(?:\s+(?:{_TOKEN}|{_VERSION}))*"
_CAMEL = re.compile(r"[a-z0-9][A-Z]|^[A-Z]{2,}[a-z]")
_HAS_VERSION = re.compile(rf"\s{_VERSION}$")
# A product on its own, without a verb around it: CamelCase ("CloudDesk", "MySQL"), or a name with a
# dotted version ("Python 3.12"); either with its version. ASCII bounds: in Chinese the name touches
# the words around it ("在用MySQL 8.0").
_PRODUCT = re.compile(
    rf"(?<![A-Za-z0-9_.-])(?:[A-Za-z][a-z0-9]*[A-Z][A-Za-z0-9]*|[A-Z][A-Za-z]+(?=\s+v?\d+\.\d))"
    rf"(?:\s+{_VERSION})?(?![A-Za-z0-9_-])"
)
_ORG_WORDS_EN = re.compile(
    r"\b(?:Inc|Corp|Corporation|Ltd|LLC|GmbH|Tech|Technologies|Technology|Labs?|Group|Company|Co|Systems|"
    r"Software|Bank|University|College|Hospital|Agency|Studio|Studios|Partners|Holdings|Foundation)\.?$"
)
_ORG_WORDS_ZH = re.compile(
    r"(?:公司|科技|集团|银行|大学|学院|医院|团队|部门|工作室|研究所|研究院|事务所|中心)$"
)
_FIRST_PERSON_EN = re.compile(
    r"^(?:I|[Ww]e|[Oo]ur (?:company|team|firm|office|org|organi[sz]ation|startup|group|department))$"
)
_FIRST_PERSON_ZH = re.compile(r"(?:我们|咱们|我)(?:的)?(?:公司|团队|部门|组|这边)?$")


def find_products(sentence: str) -> list[str]:
    """Products named in a sentence without a verb's help: "CloudDesk", "MySQL 8.0", "Python 3.12"."""
    return [m.group() for m in _PRODUCT.finditer(sentence) if m.group().split()[0] not in NOT_NAMES]


# --- the verb table -----------------------------------------------------------------------------------

_ISSUE_EN = (
    r"bugs?|issues?|problems?|outages?|defects?|vulnerabilit(?:y|ies)|glitch(?:es)?|crash(?:es)?|"
    r"flaws?|regressions?|leaks?|errors?|incidents?"
)
# a name that ends a list ("Postgres and Redis."), not one that starts a clause ("and Jin owns …")
_LIST_END = r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:and|or|for|at|in|since|now|today)\b)"
_ADVERB_EN = r"(?:(?:also|now|still|currently|mainly|actually|already|just|recently|only|mostly) )?"
# relation → the verb between a subject and a named object
VERBS_EN: tuple[tuple[str, str], ...] = (
    ("works_at", r"works? (?:at|for)|worked (?:at|for)|(?:is|am|are|was|were) employed (?:at|by)"),
    (
        "uses",
        r"uses|use|used(?! to)|(?:is|am|are|has been|have been) using|rel(?:y|ies) on|runs? on|"
        r"(?:has |have )?(?:switched|migrated) to",
    ),
    ("owns", r"owns?|owned"),
    ("lives_in", r"lives? in|lived in|(?:is|am|are) based in|resides? in"),
    ("belongs_to", r"belongs? to|(?:is|am|are) (?:a )?(?:part|members?) of"),
    ("manages", r"manages?|managed|leads?|(?:is|am|are) (?:in charge of|responsible for)"),
    ("reports_to", r"reports? to|reported to"),
    ("depends_on", r"depends? on|depended on|(?:is|are) built on"),
)
_HAS_ISSUE_EN = re.compile(
    rf"(?:has|have|had|hit|(?:is|are) having|(?:has|have) been having)\s+"
    rf"(?:a |an |some |the |two |three |several |many |a few )?"
    rf"(?P<obj>(?:[\w-]+ ){{0,3}}?(?:{_ISSUE_EN})"
    rf"(?: (?:in|with|when|on|where|that|affecting) [^,.;:!?()]{{1,40}})?)"
    rf"(?=[,.;:!?()]|$| and | but | so )",
    re.IGNORECASE,
)
_OBJECT_TYPES = {
    "works_at": "organization",
    "belongs_to": "organization",
    "uses": "product",
    "owns": "product",
    "depends_on": "product",
    "lives_in": "place",
    "reports_to": "person",
    "has_issue": "issue",
}
_SUBJECT_TYPES = {"has_issue": "product", "depends_on": "product"}

_ISSUE_ZH = r"bug|BUG|Bug|问题|故障|漏洞|缺陷|毛病|隐患|报错"
# relation → a verb pattern; a group "obj" between two verb parts (在…工作), else the object follows
VERBS_ZH: tuple[tuple[str, str], ...] = (
    ("works_at", r"在(?P<obj>[^，。；！？,.;!?在]{2,16}?)(?:工作|上班|任职|实习)"),
    ("uses", r"用的是|使用的是|正在用|(?<![现存实])在用|改用|换成了?|使用|采用|用上了"),
    ("owns", r"拥有|有一(?:台|辆|套|部)"),
    ("lives_in", r"住在|定居在|家在"),
    ("belongs_to", r"属于|隶属于?|是(?P<obj>[^，。；！？,.;!?]{2,16}?)的(?:员工|成员|一员|人)"),
    ("manages", r"负责|管理|主管|领导"),
    ("reports_to", r"向(?P<obj>[^，。；！？,.;!?]{2,8}?)汇报|汇报给"),
    ("depends_on", r"依赖(?:于)?|基于"),
    (
        "has_issue",
        rf"(?:有|出了|出现了?|存在)(?:个|一个|一些|些|几个|很多|不少|一堆)?"
        rf"(?P<obj>[^，。；！？,.;!?]{{0,10}}?(?:{_ISSUE_ZH}))",
    ),
)
_CLAUSE_ZH = re.compile(r"[，。；！？,;!?：:]|(?<!\d)\.|\.(?!\d)|但是|但|而且|并且|所以|因为")
_ADVERBS_ZH = re.compile(r"(?:现在|目前|一直|也|都|还|已经|主要|平时|其实|就|正|则|又|再|最近|本来|原来)+$")
_NOUNISH = ("n", "eng", "j", "vn", "nz", "nt", "ns", "nr", "m", "a", "x")
_GENERIC_ISSUE = re.compile(
    rf"^(?:(?:a|an|the|some|known|big|serious|major|minor|new|few|several|严重的?|已知的?|大|小|新|的|一些|个)\s*)*"
    rf"(?:{_ISSUE_EN}|{_ISSUE_ZH})$",
    re.IGNORECASE,
)


# --- extraction ---------------------------------------------------------------------------------------


def _entity_type(name: str, role: str | None) -> str:
    """Products by their shape (CamelCase, a version), organisations by their last word, else by the
    place in the relation (the object of "works at" is an organisation, of "uses" a product)."""
    if _CAMEL.search(name.split()[0]) or _HAS_VERSION.search(name):
        return "product"
    if _ORG_WORDS_EN.search(name) or _ORG_WORDS_ZH.search(name):
        return "organization"
    return role or "other"


def _subject_en(before: str, speaker: str) -> str | None:
    """The name that ends right before the verb, or the speaker for "I", "we", "our company"."""
    before = re.sub(rf"\s+{_ADVERB_EN}$", "", " " + before).strip() if before.strip() else ""
    if before.lower().endswith(speaker.lower()):
        return speaker
    words = before.split()
    for n in (3, 2, 1):
        tail = " ".join(words[-n:])
        if len(words) >= n and _FIRST_PERSON_EN.match(tail):
            return speaker
    match = re.search(rf"(?<![\w'])({NAME_EN})$", before)
    if match is None:
        return None
    words = match.group(1).split()
    while words and (words[0].removesuffix("s") in NOT_NAMES or words[0].lower() in STOPWORDS_EN):
        words = words[1:]  # "Today Acme uses …", "On Mondays Priya uses …"
    return " ".join(words) or None


def _relations_en(sentence: str, speaker: str) -> Iterator[tuple[str, str, str]]:
    for relation, verb in VERBS_EN:
        for match in re.finditer(rf"(?<![\w'])(?i:{verb})\s+(?:the |a |an )?(?P<obj>{NAME_EN})", sentence):
            subject = _subject_en(sentence[: match.start()], speaker)
            if not subject:
                continue
            objects = [match.group("obj")]
            rest = sentence[match.end() :]
            while more := re.match(
                rf"(?:,\s*(?:and\s+)?|\s+and\s+)(?:the |a |an )?({NAME_EN}){_LIST_END}", rest
            ):
                objects.append(more.group(1))  # "depends on Postgres 16 and Redis"
                rest = rest[more.end() :]
            for obj in objects:
                if obj.split()[0] not in NOT_NAMES:  # "reports to Monday"
                    yield subject, relation, obj
    for match in _HAS_ISSUE_EN.finditer(sentence):
        subject = _subject_en(sentence[: match.start()], speaker)
        if subject:
            yield subject, "has_issue", match.group("obj").strip()


def _nounish(word: str, flag: str) -> bool:
    return word not in "的了呢啊吧" and (
        flag.startswith(_NOUNISH) or bool(re.fullmatch(r"[A-Za-z0-9. +#-]+", word))
    )


def _subject_run_zh(clause: str) -> str:
    """The nouns that end the clause before the verb: "青松科技的网关", "支付服务" (a verb that starts
    the clause is part of the name), "博远科技"."""
    tokens = pos_tag(clause, min_length=1)
    end = len(tokens)
    start = end
    while start > 0:
        word, flag = tokens[start - 1]
        if _nounish(word, flag):
            start -= 1
        elif word == "的" and start < end and start >= 2 and _nounish(*tokens[start - 2]):
            start -= 1  # "X的Y": Y of X
        elif start == 1 and start < end and flag.startswith("v") and len(word) >= 2:
            start -= 1
        else:
            break
    return "".join(w for w, _ in tokens[start:end]).strip()


def _subject_zh(before: str, speaker: str) -> str | None:
    clause = _CLAUSE_ZH.split(before)[-1]
    clause = _ADVERBS_ZH.sub("", clause.strip())
    if not clause:
        return None
    if clause.endswith(speaker) or _FIRST_PERSON_ZH.search(clause):
        return speaker
    subject = _subject_run_zh(clause)
    return subject if len(subject) >= 2 else None


def _object_zh(after: str) -> str | None:
    clause = _CLAUSE_ZH.split(after)[0].strip()
    clause = re.sub(r"^(?:这个|那个|一个|这些|那些|我们的|我们|的)", "", clause)
    clause = re.sub(r"[了的呢啊吧呀]+$", "", clause).strip()
    if not clause or len(clause) > 16:
        return None
    return clause


def _relations_zh(sentence: str, speaker: str) -> Iterator[tuple[str, str, str]]:
    for relation, verb in VERBS_ZH:
        for match in re.finditer(verb, sentence):
            inner = match.groupdict().get("obj")
            obj = inner.strip() if inner else _object_zh(sentence[match.end() :])
            if relation == "has_issue" and inner is not None:
                obj = re.sub(r"^(?:个|一个|些)", "", inner).strip()
            subject = _subject_zh(sentence[: match.start()], speaker)
            if subject and obj and subject != obj:
                yield subject, relation, obj


def extract_relations(text: str, speaker: str) -> tuple[list[EntityOut], list[RelationOut]]:
    """The relations a text states and their ends as typed entities (the speaker's left out: the
    distiller names it). `speaker`: who "I" and "we" are in the text."""
    entities: dict[str, EntityOut] = {}
    relations: dict[tuple[str, str, str], RelationOut] = {}
    for sentence in split_sentences(text):
        zh = has_cjk(sentence)
        found = _relations_zh(sentence, speaker) if zh else _relations_en(sentence, speaker)
        for subject, relation, obj in found:
            if relation == "has_issue" and _GENERIC_ISSUE.match(obj):
                obj = f"{subject}{'的' if zh else ' '}{obj}"  # "a known bug" of this product, not a hub
            relations.setdefault(
                (subject, relation, obj), RelationOut(subject=subject, relation=relation, object=obj)
            )
            object_type = (
                "issue" if relation == "has_issue" else _entity_type(obj, _OBJECT_TYPES.get(relation))
            )
            entities.setdefault(obj.lower(), EntityOut(name=obj, type=object_type))
            if subject != speaker:
                kind = _entity_type(subject, _SUBJECT_TYPES.get(relation))
                entities.setdefault(subject.lower(), EntityOut(name=subject, type=kind))
    return list(entities.values()), list(relations.values())


_ATTRIBUTION = re.compile(r"^(?P<who>[^:：]{1,40})[:：]\s*")


def with_relations(candidate: Candidate, speaker: str) -> Candidate:
    """The candidate with the relations its content states added (and the entities they join)."""
    content = REPLY_QUOTE.sub("", candidate.content)  # the other turn's question is not its claim
    attributed = _ATTRIBUTION.match(content)
    if attributed and attributed.group("who").strip() == speaker:
        content = content[attributed.end() :]
    entities, relations = extract_relations(content, speaker)
    if not relations:
        return candidate
    known = {(r.subject, r.relation, r.object) for r in candidate.relations}
    added = [r for r in relations if (r.subject, r.relation, r.object) not in known]
    names = {e.name.lower() for e in candidate.entities}
    typed = [e for e in entities if e.name.lower() not in names]
    # a relation's end the candidate had as a guess ("other") takes the relation's type
    guesses = {e.name.lower(): e for e in entities}
    kept = [
        guesses[e.name.lower()] if e.type == "other" and e.name.lower() in guesses else e
        for e in candidate.entities
    ]
    return candidate.model_copy(
        update={"relations": [*candidate.relations, *added], "entities": kept + typed}
    )
