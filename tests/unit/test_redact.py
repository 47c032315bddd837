"""Secrets found and masked; ordinary text, numbers, dates and ids left exactly as they were."""

from __future__ import annotations

import time

import pytest

from app.redact import find_secrets, is_redacted, redact, redact_json

MASKED = [
    # API keys and tokens
    ("My OpenAI key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t.", "My OpenAI key is [REDACTED:api_key]."),
    ("use sk-Xy12Ab34Cd56Ef78Gh90Ij12Kl34 for the bot", "use [REDACTED:api_key] for the bot"),
    ("AWS access key AKIAIOSFODNN7EXAMPLE in us-east-1", "AWS access key [REDACTED:api_key] in us-east-1"),
    ("token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "token [REDACTED:api_key]"),
    ("gitlab glpat-xY12zW34vU56tS78rQ90", "gitlab [REDACTED:api_key]"),
    ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack [REDACTED:api_key]"),
    ("stripe sk_live_51Habcdefghijklmnopqrstuv", "stripe [REDACTED:api_key]"),
    ("Authorization: Bearer abcDEF123456ghiJKL789", "Authorization: Bearer [REDACTED:api_key]"),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok",
        "jwt [REDACTED:api_key] ok",
    ),
    ("config: api_key=Zx8qT2mL9vR4wK7pN3", "config: api_key=[REDACTED:api_key]"),
    ("The client secret is 9fK2xQ7mW4pL8sN3vB6t.", "The client secret is [REDACTED:api_key]."),
    (
        "db at postgres://admin:s3cretPassw0rd@db.internal/app",
        "db at postgres://admin:[REDACTED:password]@db.internal/app",
    ),
    ("broker amqp://guest:guest@rabbit:5672//", "broker amqp://guest:[REDACTED:password]@rabbit:5672//"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\n-----END RSA PRIVATE KEY----- done",
        "[REDACTED:private_key] done",
    ),
    ("访问令牌是 Zx8qT2mL9vR4wK7pN3", "访问令牌是 [REDACTED:api_key]"),
    # passwords stated in text
    ("my password is hunter2", "my password is [REDACTED:password]"),
    ("My password is hunter2.", "My password is [REDACTED:password]."),
    ("wifi password: S3cr3t!x, ok", "wifi password: [REDACTED:password], ok"),
    ("The PIN is 4821", "The PIN is [REDACTED:password]"),
    ('passphrase = "correct horse"', 'passphrase = "[REDACTED:password]"'),
    ("我的password是xyz98765", "我的password是[REDACTED:password]"),
    ("我的api_key=Zx8qT2mL9vR4wK7pN3", "我的api_key=[REDACTED:api_key]"),
    ("账户GB82WEST12345698765432", "账户[REDACTED:bank_account]"),
    ("我的密码是abc12345", "我的密码是[REDACTED:password]"),
    ("支付密码为 889900。", "支付密码为 [REDACTED:password]。"),
    ("登录密码：Pa55word!，别告诉别人", "登录密码：[REDACTED:password]，别告诉别人"),
    # payment cards (Luhn)
    ("card 4111 1111 1111 1111 exp 12/27", "card [REDACTED:card_number] exp 12/27"),
    ("Mastercard 5555-5555-5555-4444", "Mastercard [REDACTED:card_number]"),
    ("amex 378282246310005", "amex [REDACTED:card_number]"),
    ("银行卡号6222021234567890128", "银行卡号[REDACTED:card_number]"),
    # national ids and bank accounts (checksums)
    ("SSN 123-45-6789 on file", "SSN [REDACTED:national_id] on file"),
    ("my ssn is 123456789", "my ssn is [REDACTED:national_id]"),
    ("身份证号11010519491231002X", "身份证号[REDACTED:national_id]"),
    ("身份证 440308199901010012，请核对", "身份证 [REDACTED:national_id]，请核对"),
    ("RRN 900101-1234568", "RRN [REDACTED:national_id]"),
    ("IBAN GB82 WEST 1234 5698 7654 32 please", "IBAN [REDACTED:bank_account] please"),
    ("pay DE89370400440532013000", "pay [REDACTED:bank_account]"),
]

UNCHANGED = [
    "I forgot my password",
    "My password is too weak, so I changed it.",
    "The password isn't right",
    "password is required",
    "密码是什么？",
    "我忘了密码",
    "the token is expired",
    "The API key is in the vault.",
    "My budget is 5000 and I need it by 2026-12-04.",
    "预算不超过8000元，明天（2026-12-01）之前",
    "Your order ORD-12345 has been created.",
    "order 2024051812345678",  # 16 digits, fails Luhn
    "card 4111 1111 1111 1112",  # a typo'd card: fails Luhn
    "call me at +86 138 0013 8000 or 415-555-0132",
    "tracking 1Z999AA10123456784",
    "ssn 078-05-1120",  # the famous invalid one
    "000-12-3456 is not a valid SSN",
    "身份证号110105194912310021",  # wrong check digit
    "invoice 20240518-0001, 3 items, 12.50 EUR",
    "on 2024-05-18 at 10:30 the meeting moved to room 1204",
    "version 3.12.4 and build 20240518123456",
    "ISBN 978-3-16-148410-0",
    "Alice prefers window seats and likes tea.",
    "The keyboard has 104 keys; the monkey is happy.",
    "Please reset the password for Bob tomorrow.",
    "[REDACTED:password] stays as it is",
]


@pytest.mark.parametrize(("text", "expected"), MASKED)
def test_secrets_are_masked(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected  # masking is idempotent


@pytest.mark.parametrize("text", UNCHANGED)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text
    assert find_secrets(text) == []


def test_several_secrets_in_one_text_and_their_kinds() -> None:
    text = "Alice: password: hunter2, card 4111111111111111, key sk-Xy12Ab34Cd56Ef78Gh90Ij12Kl34"
    assert [f.kind for f in find_secrets(text)] == ["password", "card_number", "api_key"]
    assert redact(text) == (
        "Alice: password: [REDACTED:password], card [REDACTED:card_number], key [REDACTED:api_key]"
    )


def test_json_values_and_mask_only_strings() -> None:
    value = {"note": "pin is 4821", "nested": [{"k": "AKIAIOSFODNN7EXAMPLE"}, 3], "password is x": True}
    assert redact_json(value) == {
        "note": "pin is [REDACTED:password]",
        "nested": [{"k": "[REDACTED:api_key]"}, 3],
        "password is x": True,
    }
    assert is_redacted("[REDACTED:card_number]")
    assert not is_redacted("card [REDACTED:card_number]")
    assert not is_redacted("")


def test_fast_enough_for_every_distilled_unit() -> None:
    texts = [t for t, _ in MASKED] + UNCHANGED
    units = [f"{t} The user said this on 2026-11-30 about order ORD-{i}." for i, t in enumerate(texts * 20)]
    started = time.perf_counter()
    for unit in units:
        redact(unit)
    per_unit = (time.perf_counter() - started) / len(units)
    assert per_unit < 0.001, f"{per_unit * 1e6:.0f} µs per unit"
