from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.config import Settings


@pytest.mark.parametrize("key", ["", "changeme", "admin", "short-key"])
def test_production_refuses_placeholder_admin_keys(key: str) -> None:
    with pytest.raises(ValidationError, match="HINDSIGHT_ADMIN_KEY"):
        Settings(env="production", admin_key=key)


def test_production_accepts_a_real_key_and_dev_needs_none() -> None:
    assert Settings(env="production", admin_key="k" * 32).admin_key.get_secret_value() == "k" * 32
    assert Settings(env="dev", admin_key="").env == "dev"


def test_broker_defaults_to_redis() -> None:
    settings = Settings(env="dev", redis_url="redis://r:6379/1")
    assert settings.effective_broker_url == "redis://r:6379/1"
    amqp = Settings(env="dev", broker_url="amqp://guest:guest@rabbit:5672//")
    assert amqp.effective_broker_url.startswith("amqp://")


def test_rate_limit_and_cors_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HINDSIGHT_RATE_LIMIT_PER_SECOND", "HINDSIGHT_RATE_LIMIT_BURST", "HINDSIGHT_CORS_ORIGINS"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings(env="dev")
    # A product default no agent in normal use reaches; CORS stays off until origins are listed.
    assert (settings.rate_limit_per_second, settings.rate_limit_burst) == (100.0, 200)
    assert settings.cors_origins == []


def test_rate_limit_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_RATE_LIMIT_PER_SECOND", "0.5")
    monkeypatch.setenv("HINDSIGHT_RATE_LIMIT_BURST", "3")
    settings = Settings(env="dev")
    assert (settings.rate_limit_per_second, settings.rate_limit_burst) == (0.5, 3)
    monkeypatch.setenv("HINDSIGHT_RATE_LIMIT_PER_SECOND", "0")  # 0 turns the limit off
    assert Settings(env="dev").rate_limit_per_second == 0
    for name, value in (("HINDSIGHT_RATE_LIMIT_PER_SECOND", "-1"), ("HINDSIGHT_RATE_LIMIT_BURST", "0")):
        monkeypatch.setenv(name, value)
        with pytest.raises(ValidationError, match=name.removeprefix("HINDSIGHT_").lower()):
            Settings(env="dev")
        monkeypatch.delenv(name)
