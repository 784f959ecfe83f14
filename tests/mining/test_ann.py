"""FAISS index build/search against exact search on random data; recall@k."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("faiss")

from psp_st.mining.ann import IndexSpec, build_index, exact_search, recall_at_k, search  # noqa: E402
from psp_st.mining.shards import ShardedVectors  # noqa: E402


def _unit(n: int, dim: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_exact_search_matches_numpy_over_several_shards():
    data = _unit(500, 16, 0)
    vectors = ShardedVectors([data[:200], data[200:]])
    sims, ids = exact_search(data[:20], vectors, k=5, exclude=np.arange(20))
    full = data[:20] @ data.T
    full[np.arange(20), np.arange(20)] = -np.inf
    expected = np.argsort(-full, axis=1)[:, :5]
    assert (ids == expected).all()
    np.testing.assert_allclose(sims, np.take_along_axis(full, expected, axis=1), rtol=1e-5)


def test_flat_index_is_exact_and_excludes_self():
    data = _unit(300, 8, 1)
    index = build_index(ShardedVectors([data]), IndexSpec(kind="auto", exact_below=1000))
    _, ids = search(index, data, k=3, exclude=np.arange(300))
    _, exact = exact_search(data, ShardedVectors([data]), k=3, exclude=np.arange(300))
    assert recall_at_k(ids, exact) == 1.0
    assert not (ids == np.arange(300)[:, None]).any()


@pytest.mark.parametrize(("kind", "minimum"), [("ivf", 0.9), ("ivf-sq8", 0.85), ("hnsw", 0.9)])
def test_approximate_indexes_reach_high_recall_on_clustered_data(kind, minimum):
    rng = np.random.default_rng(2)
    centres = _unit(50, 32, 3)
    data = centres[rng.integers(0, 50, 4000)] + 0.1 * rng.standard_normal((4000, 32)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    vectors = ShardedVectors([data])
    index = build_index(vectors, IndexSpec(kind=kind, nlist=32, nprobe=8))
    queries = np.arange(0, 4000, 40)
    _, approx = search(index, data[queries], k=10, exclude=queries)
    _, exact = exact_search(data[queries], vectors, k=10, exclude=queries)
    recall = recall_at_k(approx, exact)
    assert minimum <= recall <= 1.0


def test_recall_counts_shared_ids():
    assert recall_at_k(np.array([[1, 2], [3, 4]]), np.array([[2, 9], [3, 4]])) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="shapes differ"):
        recall_at_k(np.zeros((2, 2)), np.zeros((2, 3)))


def test_recall_with_ties_accepts_an_equally_close_duplicate():
    # exact top-1 of the query is id 5; the index returned id 7, a duplicate with the same similarity
    assert recall_at_k(np.array([[7]]), np.array([[5]])) == 0.0
    assert recall_at_k(np.array([[7]]), np.array([[5]]), np.array([[0.9]]), np.array([[0.9]])) == 1.0
    assert recall_at_k(np.array([[7]]), np.array([[5]]), np.array([[0.8]]), np.array([[0.9]])) == 0.0


def test_pca_ivf_index_saves_loads_and_finds_neighbours(tmp_path):
    from psp_st.mining.ann import load_index, save_index

    rng = np.random.default_rng(4)  # 64-d vectors that live (up to small noise) in a 12-d subspace, as PCA assumes
    latent = rng.standard_normal((3000, 12)).astype(np.float32) @ rng.standard_normal((12, 64)).astype(np.float32)
    data = latent + 0.01 * rng.standard_normal((3000, 64)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    vectors = ShardedVectors([data])
    save_index(build_index(vectors, IndexSpec(kind="ivf", nlist=16, pca=16)), tmp_path / "i.faiss")
    index = load_index(tmp_path / "i.faiss", nprobe=4)
    queries = np.arange(0, 3000, 30)
    _, approx = search(index, data[queries], k=5, exclude=queries)
    _, exact = exact_search(data[queries], vectors, k=5, exclude=queries)
    assert index.d == 64 and recall_at_k(approx, exact) >= 0.8


def test_a_training_sample_smaller_than_the_lists_is_refused_naming_the_options():
    vectors = ShardedVectors([np.eye(400, 16, dtype=np.float32)])
    with pytest.raises(ValueError, match="--train-size 5 is below the 10 IVF lists"):
        build_index(vectors, IndexSpec(kind="ivf", nlist=10, train_size=5))
    for name in ("nlist", "train_size"):
        with pytest.raises(ValueError, match=rf"{name} \(--{name.replace('_', '-')}\) must be >= 1, got 0"):
            IndexSpec(kind="ivf", **{name: 0})


def test_pca_wider_than_the_training_sample_is_a_value_error():
    """FAISS's PCA cannot give more components than training vectors: a clear error, not a FAISS RuntimeError."""
    vectors = ShardedVectors([_unit(20, 32, 5)])
    with pytest.raises(ValueError, match="--pca 21 needs at least 21 training vectors, got 20"):
        build_index(vectors, IndexSpec(kind="hnsw", pca=21))
