"""Settings both clients read the same way: arguments first, then the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass

from hindsight_memory._errors import HindsightError

DEFAULT_URL = "http://127.0.0.1:8000"  # `make up`
VERSION = "0.1.0"


@dataclass(frozen=True)
class ClientConfig:
    base_url: str
    api_key: str | None
    timeout: float
    max_retries: int
    agent_id: str | None = None

    @classmethod
    def resolve(
        cls,
        base_url: str | None,
        api_key: str | None,
        timeout: float,
        max_retries: int,
        agent_id: str | None = None,
    ) -> ClientConfig:
        """`base_url` or $HINDSIGHT_URL (default the `make up` address), `api_key` or
        $HINDSIGHT_API_KEY, `agent_id` or $HINDSIGHT_AGENT_ID."""
        if max_retries < 0:
            raise HindsightError("max_retries must be 0 or more")
        url = base_url or os.environ.get("HINDSIGHT_URL") or DEFAULT_URL
        key = api_key or os.environ.get("HINDSIGHT_API_KEY") or None
        agent = agent_id or os.environ.get("HINDSIGHT_AGENT_ID") or None
        return cls(url.rstrip("/"), key, timeout, max_retries, agent)

    @property
    def headers(self) -> dict[str, str]:
        headers = {"user-agent": f"hindsight-memory/{VERSION}", "accept": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        if self.agent_id:  # the agent the service records this client's writes as
            headers["x-agent-id"] = self.agent_id
        return headers
