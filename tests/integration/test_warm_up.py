"""An API process loads the embedding model and jieba's dictionary as it starts serving, so its users'
first query (and first Chinese query) does not wait ~0.3 s and ~1 s for them."""

from __future__ import annotations

import logging

import jieba
import pytest

from app.config import Settings, get_settings
from app.main import warm_up
from app.providers.embeddings import LazyEmbedder
from tests.conftest import Stack, running_app, wait_for


async def test_the_model_is_loaded_before_any_request(stack: Stack) -> None:
    async with running_app(get_settings()) as application:
        embedder: LazyEmbedder = application.state.embedder

        async def loaded() -> bool:
            return embedder.loaded and bool(jieba.dt.initialized)

        await wait_for(loaded, within=60)  # no request was made


async def test_a_failed_warm_up_is_a_warning_and_the_first_request_tries_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    embedder = LazyEmbedder(Settings(env="test", embedding_dim=768))  # the local model is 384-d
    with caplog.at_level(logging.WARNING, logger="app.main"):
        await warm_up(embedder)
    assert "warm-up failed" in caplog.text
    assert "768" in caplog.text
    assert not embedder.loaded
    with pytest.raises(ValueError, match="384-d"):
        await embedder.embed(["a request that needs a vector"])
