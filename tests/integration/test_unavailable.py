"""When a backing service is unreachable the API answers 503 problem+json, not 500."""

from __future__ import annotations

from typing import Any

from app.config import Settings
from app.embedded import free_port
from app.main import create_app
from tests.conftest import ADMIN_KEY, Stack, assert_problem, make_client


async def test_database_down_gives_503_and_readyz_says_why(stack: Stack) -> None:
    dead = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/hindsight"
    settings = Settings(env="test", database_url=dead, redis_url=stack.redis_url, admin_key=ADMIN_KEY)
    app: Any = create_app(settings)
    async with app.router.lifespan_context(app), make_client(app, ADMIN_KEY) as client:
        assert_problem(await client.get("/v1/banks"), 503)
        response = await client.post(
            "/v1/banks/b/sessions/s/events", json={"events": [{"role": "user", "content": "x"}]}
        )
        assert_problem(response, 503)
        assert response.headers["retry-after"] == "1"
        ready = assert_problem(await client.get("/readyz"), 503)
        assert "database down" in ready["detail"]
        assert (await client.get("/healthz")).status_code == 200
