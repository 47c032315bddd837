"""A statement's modality besides firm: whether it says its claim uncertainly (a hedge: "might", "可能",
"if possible", never "May" the month) or ends what it is about (a retirement: "I cancelled it", 不再用了,
never under a negation: "won't quit"); and whether it names its value as the one that holds (a cleft)."""

from __future__ import annotations

import re

from app.claims import lexicon as lx
from app.text import pos_words

# "May" the month: capitalised past a sentence's first word, or after a preposition
_MAY_MONTH = re.compile(
    r"(?-i:(?<=\S )May\b)|\b(?:in|from|by|until|since|of|early|late|mid)\s+may\b", re.IGNORECASE
)


def says_hedged(text: str, zh: bool) -> bool:
    """Whether `text` hedges what it says."""
    return (lx.ZH_HEDGE if zh else lx.EN_HEDGE).search(_MAY_MONTH.sub(" ", text)) is not None


# A verb of ending under a negation says the thing goes on ("won't quit", "not giving up", "don't let
# anything stop you", 不会放弃, 别退出): no retirement. "Not … anymore" and "no longer" end it.
_EN_NEGATED = re.compile(r"(?:\bnot|\bnever|n't|\bcannot)\s+(?:[\w']+\s+){0,2}$", re.IGNORECASE)
_ZH_NEGATED = re.compile(r"(?:不会|不想|不要|不能|不肯|绝不|从不|从没|没有|没|别)$")


# Words made with 不 that negate nothing (an apology, "quite good", "but", "many"): no 不…了 ending,
# and a potential complement, "cannot" (受不了, 去不了: 不了 before anything but another 了)
_ZH_LEXICAL_BU = re.compile(r"不好意思|对不起|不客气|不错|不过|不少|不仅|不管|不久|不断|不了(?!了)")


def retirement(clause: str, zh: bool) -> re.Match[str] | None:
    """The words of `clause` that end what it is about, unless negated (a negated ending is no ending)."""
    pattern = lx.ZH_RETIRE if zh else lx.EN_RETIRE
    if zh:  # masked to the same length: the match's offsets are the clause's
        clause = _ZH_LEXICAL_BU.sub(lambda m: "　" * len(m.group()), clause)
    for match in pattern.finditer(clause):
        if not zh and _REMAINING_EN.search(clause[: match.start()]) and match.group(0).lower() == "left":
            continue
        negated = _ZH_NEGATED if zh else _EN_NEGATED
        if match.group(0)[:1] in "不没" or not negated.search(clause[: match.start()]):
            return match
    return None


# A count before "left" says what remains ("three weeks of leave left", "two days left"), not a departure
_REMAINING_EN = re.compile(
    r"\b(?:\d+|a\s+few|few|some|no|any|much|many|little|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"twelve)\b(?:\s+[\w'-]+){0,4}\s+$",
    re.IGNORECASE,
)


def says_cleft(text: str, zh: bool) -> bool:
    """Whether `text` names its value by a cleft (Chinese: a verb, 的, then 是 or 都是)."""
    if not zh:
        return lx.EN_CLEFT_SAID.search(text) is not None
    words = pos_words(text)
    return any(
        words[i][0] == "的" and words[i - 1][1].startswith("v") and words[i + 1][0] in ("是", "都")
        for i in range(1, len(words) - 1)
    )


# A state said as past ("I used to live in Cork", "previously", 我以前住在…): the value held once, not now.
# Never "I'm used to it" (accustomed), nor 之前 after a time ("周五之前": by Friday).
_PAST_EN = re.compile(
    r"(?<!am )(?<!is )(?<!be )(?<!get )(?<!got )(?<!'m )(?<!'s )(?<!are )(?<!'re )(?<!been )\bused\s+to\b"
    r"|\b(?:previously|formerly|back\s+then|in\s+the\s+past)\b",
    re.IGNORECASE,
)
_PAST_ZH = re.compile(r"(?:^|[我你他她们咱])(?:以前|之前|曾经|当年|过去)(?!的)")


def says_past(clause: str, zh: bool) -> bool:
    """Whether `clause` says its state held in the past only."""
    return (_PAST_ZH if zh else _PAST_EN).search(clause) is not None
