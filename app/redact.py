"""Finding and masking secrets in text: API keys and tokens, stated passwords, payment card numbers,
national id numbers and bank accounts. Each is replaced by ``[REDACTED:<kind>]`` with ``kind`` one of
`KINDS`; masking is idempotent (a masked text is never changed again).

Where a maintained library knows the format, it decides:
- vendor key formats (AWS, GitHub, GitLab, Slack, Stripe, SendGrid, Twilio, PyPI, npm, …) are the
  `denylist` patterns of Yelp's detect-secrets plugins. Only its regex-based vendor plugins are used:
  its keyword and high-entropy plugins are written for source code (quoted assignments, per-line
  settings) and its verification calls the network, so neither fits running on every memory unit;
- card numbers (Luhn), US SSNs, Chinese resident ids (birth date and check digit), Korean resident
  registration numbers and IBANs (mod 97) are validated with python-stdnum: a regex only finds
  candidates, a number that fails its checksum (an order id, a phone number) is left alone.
Hand-written patterns cover what no library does: how people state secrets in conversation
("my password is …", "密码是…", "token=…"), bearer tokens, JWTs, `sk-…` keys and PEM private keys.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector
from stdnum import iban, luhn
from stdnum.cn import ric
from stdnum.kr import rrn
from stdnum.us import ssn

API_KEY, PASSWORD, CARD, NATIONAL_ID, BANK_ACCOUNT, PRIVATE_KEY = (
    "api_key",
    "password",
    "card_number",
    "national_id",
    "bank_account",
    "private_key",
)
KINDS = (API_KEY, PASSWORD, CARD, NATIONAL_ID, BANK_ACCOUNT, PRIVATE_KEY)
MASK = "[REDACTED:{kind}]"
_MASKED = r"\[REDACTED:[a-z_]+\]"

# Each vendor plugin of detect-secrets with the lower-case text one of its keys must contain (a cheap
# `in` test decides whether its patterns run at all); () = always run.
VENDOR_PLUGINS: tuple[tuple[type[Any], tuple[str, ...]], ...] = (
    (AWSKeyDetector, ("akia", "asia", "abia", "acca", "a3t", "aws")),
    (AzureStorageKeyDetector, ("accountkey",)),
    (BasicAuthDetector, ("://",)),
    (DiscordBotTokenDetector, ()),
    (GitHubTokenDetector, ("gh",)),
    (GitLabTokenDetector, ("gl", "gr1348941")),
    (MailchimpDetector, ("-us",)),
    (NpmDetector, ("_authtoken",)),
    (OpenAIDetector, ("t3blbkfj",)),
    (PypiTokenDetector, ("pypi-",)),
    (SendGridDetector, ("sg.",)),
    (SlackDetector, ("xox", "hooks.slack")),
    (SquareOAuthDetector, ("sq0csp-",)),
    (StripeDetector, ("k_live_",)),
    (TelegramBotTokenDetector, (":",)),
    (TwilioKeyDetector, ()),
)


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int


# --- API keys and tokens ---------------------------------------------------------------------------

_TOKEN_CHARS = r"A-Za-z0-9_\-./+=~"
_TOKEN_END = r"A-Za-z0-9_\-/+=~"  # a sentence's full stop is not part of the token
_KEY_PATTERNS = (
    re.compile(r"(?<![A-Za-z0-9])sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{20,}"),  # OpenAI-style, any vendor
    re.compile(r"(?<![A-Za-z0-9])[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"),
    re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),  # JWT
    re.compile(r"(?<![A-Za-z0-9_-])gh[pousr]_[A-Za-z0-9]{30,}"),  # newer/longer GitHub tokens too
)
_BEARER = re.compile(rf"(?<![A-Za-z0-9])[Bb]earer\s+(?!{_MASKED})([{_TOKEN_CHARS}]{{11,}}[{_TOKEN_END}])")
_PEM = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
# `api_key=…`, `token: …`, "my API key is …", "访问令牌是…": the value must look random (see _random).
_KEYWORD_VALUE = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:api[ _-]?key|apikey|access[ _-]?key(?:[ _-]?id)?|"
    r"secret(?:[ _-]?(?:access[ _-]?)?key)?|"
    r"client[ _-]?secret|(?:access|auth|refresh|bearer|api|session)?[ _-]?token|private[ _-]?key)"
    r"(?:\s+(?:is|was|=|:)|\s*[:=：]|(?:是|为|為))\s*[\"'“`]?"
    rf"(?!{_MASKED})([{_TOKEN_CHARS}]{{11,}}[{_TOKEN_END}])"
    r"|(?:密钥|秘钥|令牌|访问令牌|API\s*Key)\s*(?:是|为|為|:|：|=)\s*"
    rf"(?!{_MASKED})([{_TOKEN_CHARS}]{{11,}}[{_TOKEN_END}])"
)


def _random(value: str) -> bool:
    """A value that looks generated, not a word: letters and digits mixed, high character entropy."""
    value = value.rstrip(".,;:!?=")
    if len(value) < 12 or not re.search(r"\d", value) or not re.search(r"[A-Za-z]", value):
        return False
    counts = {c: value.count(c) for c in set(value)}
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= 3.0


# --- passwords ---------------------------------------------------------------------------------------

# "password is required / wrong / too short" describes the password; it does not state it.
_NOT_A_PASSWORD = frozenset(
    """
    a an the my your his her our their this that it same new old not no too very so also still just now
    required wrong incorrect correct invalid valid weak strong short long empty blank missing different
    expired changed reset saved stored set case sensitive protected hashed encrypted secret safe secure
    ok okay fine good bad right easy hard forgotten lost known unknown here there below above attached
    and or but if when because which what where who how why please for to of in on at by with from
    """.split()
)
_PASSWORD_EN = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:password|passwd|passphrase|pass\s?phrase|passcode|pwd|pw|pin(?:\s?code)?)"
    r"(?:\s+(?:is|was)\b\s*:?|\s*[:=：是为為])\s*"
    rf"(?:[\"“'`](?!{_MASKED})([^\"”'`\n]{{1,64}})[\"”'`]"  # quoted: all of it
    rf"|(?!{_MASKED})([^\s\"'”`,;]+?)(?=[\s,;)]|[.。!?](?:\s|$)|$))"
)
# In Chinese the stated value must be ASCII: "密码是什么" ("what is the password?") masks nothing.
_PASSWORD_ZH = re.compile(
    r"(?:密码|密碼|口令|登录密码|支付密码|PIN码|pin码)\s*(?:是|为|為|:|：|=|改成了?|改为|設為|设为)\s*[\"'“「]?"
    rf"(?!{_MASKED})([!-~]+?)[\"'”」]?(?=[\s，。,；;！？、)）]|$)"
)


def _password_value(value: str) -> bool:
    word = value.rstrip(".")
    if not word or word.lower() in _NOT_A_PASSWORD:
        return False
    # "pin is 1234": digits; "password is sunshine": any word not in the list above, but not
    # "password is changed"-like participles and adverbs.
    return not (word.isalpha() and word.islower() and word.endswith(("ed", "ing", "ly")))


# --- numbers: cards, national ids, bank accounts ---------------------------------------------------

# One scan finds every candidate (a run of digits with single spaces or dashes, or an IBAN-shaped
# token); python-stdnum then decides what, if anything, it is.
_NUMBER = re.compile(
    r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?|\d(?:[ -]?\d){6,21}[ -]?[\dXx]"
)
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_SSN = re.compile(r"\d{3}-\d{2}-\d{4}|\d{9}")
_SSN_CONTEXT = re.compile(r"(?i)\bssn\b|social security")
_CN_RIC = re.compile(r"\d{17}[\dXx]")
_KR_RRN = re.compile(r"\d{6}-\d{7}")
_IBAN = re.compile(r"[A-Z]{2}\d{2}[ A-Z0-9]+")
_CARD_FIRST_DIGITS = "23456"  # Mastercard 2-series, Amex/JCB/Diners, Visa, Mastercard, Discover/UnionPay
_NO_DIGITS = str.maketrans("", "", "0123456789")


def _card_length(candidate: str) -> int:
    """How much of `candidate` (from its start) is a card number, or 0. A run may go on past the card
    ("4111 1111 1111 1111 12/27"), so shorter prefixes that end at a group boundary are tried too."""
    groups = re.split(r"[ -]", candidate)
    for count in range(len(groups), 0, -1):
        number = "".join(groups[:count])
        if len(number) < 13:
            break
        # Groups must look like a card's (4-4-4-4, 4-6-5, …): "2024 05 18 …" is not one.
        if len(number) > 19 or (count > 1 and any(len(g) < 4 for g in groups[:count])):
            continue
        if number[0] in _CARD_FIRST_DIGITS and len(set(number)) > 1 and luhn.is_valid(number):
            return len(" ".join(groups[:count]))
    return 0


def _numbers(text: str) -> Iterator[Finding]:
    for match in _NUMBER.finditer(text):
        value, at, end = match.group(), match.start(), match.end()
        # Part of a longer token (an order id, a version, a hash) is not a number of its own. (Checked
        # here, not by a look-behind in the pattern, which would cost the scan its fast start.)
        if (at and text[at - 1] in _WORD_CHARS) or (end < len(text) and text[end] in _WORD_CHARS):
            continue
        if value[0].isalpha():
            if _IBAN.fullmatch(value) and iban.is_valid(value):
                yield Finding(BANK_ACCOUNT, at, end)
        elif (_CN_RIC.fullmatch(value) and ric.is_valid(value)) or (
            _KR_RRN.fullmatch(value) and rrn.is_valid(value)
        ):
            yield Finding(NATIONAL_ID, at, end)
        elif _SSN.fullmatch(value) and ssn.is_valid(value):
            # A bare nine-digit number is an SSN only when the text says so.
            if "-" in value or _SSN_CONTEXT.search(text, max(0, at - 40), at):
                yield Finding(NATIONAL_ID, at, end)
        elif length := _card_length(value):
            yield Finding(CARD, at, at + length)


# --- the scan ----------------------------------------------------------------------------------------

Check = Callable[[str], bool]


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    kind: str
    check: Check | None = None  # the value must also pass this
    triggers: tuple[str, ...] = ()  # the lower-case text must contain one of these; () = always run


_RULES: tuple[_Rule, ...] = (
    _Rule(_PEM, PRIVATE_KEY, triggers=("private key",)),
    _Rule(_KEY_PATTERNS[0], API_KEY, triggers=("sk-",)),
    _Rule(_KEY_PATTERNS[1], API_KEY, triggers=("k_live_", "k_test_")),
    _Rule(_KEY_PATTERNS[2], API_KEY, triggers=("eyj",)),
    _Rule(_KEY_PATTERNS[3], API_KEY, triggers=("gh",)),
    *(
        _Rule(pattern, PASSWORD if plugin is BasicAuthDetector else API_KEY, triggers=triggers)
        for plugin, triggers in VENDOR_PLUGINS
        for pattern in plugin.denylist
    ),
    _Rule(_BEARER, API_KEY, triggers=("bearer",)),
    _Rule(_KEYWORD_VALUE, API_KEY, _random, ("key", "secret", "token", "密钥", "秘钥", "令牌")),
    _Rule(_PASSWORD_EN, PASSWORD, _password_value, ("pass", "pw", "pin")),
    _Rule(_PASSWORD_ZH, PASSWORD, triggers=("密码", "密碼", "口令", "pin码")),
)
_GROUP_IS_VALUE = frozenset(
    {_PASSWORD_EN, _PASSWORD_ZH, _BEARER, _KEYWORD_VALUE, *BasicAuthDetector.denylist}
)
_MIN_DIGITS = 9  # the shortest number masked (an unformatted SSN)


def _span(match: re.Match[str]) -> tuple[int, int, str]:
    """The secret inside a match: its first non-empty group when that holds the value (8+ characters,
    or any group of a keyword pattern), else the whole match (a vendor pattern's group may be a prefix)."""
    for index in range(1, (match.re.groups or 0) + 1):
        value = match.group(index)
        if value:
            if len(value) >= 8 or match.re in _GROUP_IS_VALUE:
                return match.start(index), match.end(index), value
            break
    return match.start(), match.end(), match.group()


_TRIGGERS = frozenset(t for rule in _RULES for t in rule.triggers)


def _matches(text: str) -> Iterator[Finding]:
    lower = text.lower()
    present = {t for t in _TRIGGERS if t in lower}
    for rule in _RULES:
        if rule.triggers and present.isdisjoint(rule.triggers):
            continue
        for match in rule.pattern.finditer(text):
            start, end, value = _span(match)
            if rule.check is None or rule.check(value):
                yield Finding(rule.kind, start, end)
    if len(text) - len(text.translate(_NO_DIGITS)) >= _MIN_DIGITS:
        yield from _numbers(text)


def find_secrets(text: str) -> list[Finding]:
    """The secrets in `text`, in order, without overlaps (of two overlapping findings the one that
    starts first, or the longer one, wins)."""
    kept: list[Finding] = []
    for finding in sorted(_matches(text), key=lambda f: (f.start, -(f.end - f.start))):
        if kept and finding.start < kept[-1].end:
            continue
        kept.append(finding)
    return kept


def redact(text: str) -> str:
    """`text` with every secret replaced by ``[REDACTED:<kind>]``."""
    findings = find_secrets(text)
    if not findings:
        return text
    parts: list[str] = []
    at = 0
    for finding in findings:
        parts += [text[at : finding.start], MASK.format(kind=finding.kind)]
        at = finding.end
    parts.append(text[at:])
    return "".join(parts)


def is_redacted(text: str) -> bool:
    """Whether `text` is nothing but masks (an entity named only by a secret is dropped, not kept)."""
    return bool(text.strip()) and not re.sub(_MASKED, "", text).strip(" ,;:-")


def redact_json(value: Any) -> Any:
    """Every string inside a JSON-like value (dict keys left as they are) redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_json(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_json(v) for k, v in value.items()}
    return value
