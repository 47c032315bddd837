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
