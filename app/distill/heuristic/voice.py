"""Whose a unit is, said as a sentence and never as a label (issue 32): "The user says the hotel has to
be near the venue", "用户说考试定在8月22号", not "The user: …" / "用户：…"; and the listener named: "your"
in the user's turn is the assistant's, in the assistant's turn the user's."""

from __future__ import annotations

import re

from app.text import STOPWORDS_EN

# How a role is named when its turn names no speaker, and the verb that reports its words
_VOICES = {
    ("en", "user"): ("The user", "says"),
    ("en", "assistant"): ("The assistant", "says"),
    ("en", "tool"): ("A tool", "reports"),
    ("zh", "user"): ("用户", "说"),
    ("zh", "assistant"): ("助手", "说"),
    ("zh", "tool"): ("工具", "显示"),
}


def voice(language: str, role: str) -> tuple[str, str]:
    """(the name of a role's speaker, the verb that reports its words) in a language (a role the table
    does not know speaks as the user)."""
    return _VOICES.get((language, role), _VOICES[(language, "user")])


_LISTENER = {
    "user": ("the assistant", "助手"),
    "assistant": ("the user", "用户"),
    "tool": ("the user", "用户"),
}
_YOU_EN = (
    (re.compile(r"\byou're\b", re.I), "{0} is"),
    (re.compile(r"\byou've\b", re.I), "{0} has"),
    (re.compile(r"\byou'll\b", re.I), "{0} will"),
    (re.compile(r"\byou'd\b", re.I), "{0} would"),
    (re.compile(r"\byours\b", re.I), "{0}'s"),
    (re.compile(r"\byour\b", re.I), "{0}'s"),
)


def listener_named(content: str, role: str, language: str) -> str:
    """Name the listener: "your answers" in a user's turn → "the assistant's answers", "您的证书" in the
    assistant's → "用户的证书"."""
    en, zh = _LISTENER.get(role, _LISTENER["user"])
    if language == "zh":
        return re.sub(r"您|你(?!们)", zh, content)
    for pattern, template in _YOU_EN:
        content = pattern.sub(template.format(en), content)
    return content


def attributed(content: str, speaker: str, language: str, role: str) -> str:
    """The content with its speaker as the subject of a reporting verb when it does not name them."""
    if speaker.lower() in content.lower() or not content:
        return content
    _, says = voice(language, role)
    if content.rstrip().endswith(("?", "？")):
        says = "问：" if language == "zh" else "asks:"
    if language == "zh":
        return f"{speaker}{says}{content.removeprefix('说')}"
    first, _, rest = content.partition(" ")
    # a capitalised word followed by another or by a number is a name's ("Harbor Soft", "Node 20"),
    # whatever it means alone
    named = _common(first) and (rest[:1].isupper() or rest[:1].isdigit())
    acronym = len(first) > 1 and first.isupper()  # "IT renamed the wifi": never "iT"
    if (
        first != "I"
        and not acronym
        and (
            first.lower() in STOPWORDS_EN or first.lower() in _LOWER_OPENERS or (_common(first) and not named)
        )
    ):
        content = content[0].lower() + content[1:]
    return f"{speaker} {says} {content}"


# Opening words a reported sentence lowers ("Please keep …" → "says please keep …")
_LOWER_OPENERS = frozenset(
    "please the a an this that these those there it its it's our their his her we we're we've we'll "
    "we'd".split()
)


def _common(word: str) -> bool:
    """A capitalised word that is a common English word ("Never", "Talking"), not a name."""
    from lemminflect import getAllLemmas

    return word[:1].isupper() and word[1:].islower() and bool(getAllLemmas(word.lower()))
