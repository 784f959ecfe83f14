"""Vocabulary distillation: PSPEmbedding.from_teacher against an independent PCA computation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from psp_st.modules.psp import PSPEmbedding


def independent_pca(vectors: np.ndarray, k: int) -> np.ndarray:
    """Top-k principal-component scores via the covariance eigendecomposition, each column standardised."""
    centred = vectors - vectors.mean(0)
    values, vectors_ = np.linalg.eigh(np.cov(centred, rowvar=False))
    top = vectors_[:, np.argsort(values)[::-1][:k]]
    scores = centred @ top
    return scores / scores.std(0)


def test_shapes_and_standardisation(sp_tokenizer, stub_teacher):
    module = PSPEmbedding.from_teacher(stub_teacher(dim=16), sp_tokenizer, embedding_dim=8)
    weights = module.embedding.weight.detach()[: module.vocab_size].numpy()
    assert weights.shape == (sp_tokenizer.vocab_size, 8)
    np.testing.assert_allclose(weights.mean(0), 0.0, atol=1e-4)
    np.testing.assert_allclose(weights.std(0), 1.0, atol=1e-4)
    assert torch.all(module.embedding.weight[module.vocab_size] == 0)  # padding row stays zero


def test_matches_an_independent_pca_up_to_sign(sp_tokenizer, stub_teacher):
    teacher = stub_teacher(dim=16)
    module = PSPEmbedding.from_teacher(teacher, sp_tokenizer, embedding_dim=6)
    texts = sp_tokenizer.token_texts()
    expected = independent_pca(np.stack([teacher.vector(t) for t in texts]).astype(np.float64), 6)
    weights = module.embedding.weight.detach()[: module.vocab_size].numpy()
    for column in range(6):
        sign = np.sign(weights[:, column] @ expected[:, column])
        np.testing.assert_allclose(weights[:, column], sign * expected[:, column], atol=1e-3)


def test_deterministic(sp_tokenizer, stub_teacher):
    first = PSPEmbedding.from_teacher(stub_teacher(dim=16), sp_tokenizer, embedding_dim=24, seed=3)
    second = PSPEmbedding.from_teacher(stub_teacher(dim=16), sp_tokenizer, embedding_dim=24, seed=3)
    assert torch.equal(first.embedding.weight, second.embedding.weight)


def test_wider_than_the_teacher_keeps_all_components_then_seeded_noise(sp_tokenizer, stub_teacher):
    module = PSPEmbedding.from_teacher(stub_teacher(dim=16), sp_tokenizer, embedding_dim=24, seed=3)
    weights = module.embedding.weight.detach()[: module.vocab_size].numpy()
    assert weights.shape[1] == 24
    other = PSPEmbedding.from_teacher(stub_teacher(dim=16), sp_tokenizer, embedding_dim=24, seed=4)
    other_weights = other.embedding.weight.detach()[: other.vocab_size].numpy()
    np.testing.assert_array_equal(weights[:, :16], other_weights[:, :16])  # the distilled part
    assert not np.array_equal(weights[:, 16:], other_weights[:, 16:])  # the seeded extra dimensions


def test_directions_the_teacher_never_varies_in_become_seeded_noise():
    from psp_st.modules.teacher_init import distilled_piece_vectors

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(50, 6)).astype(np.float32)
    vectors[:, 4] = 0.25  # constant: once centred, only rounding noise
    vectors[:, 5] = np.float32(0.5) + rng.normal(size=50).astype(np.float32) * 1e-9
    out = distilled_piece_vectors(vectors, 6, seed=7)
    expected = independent_pca(vectors[:, :4].astype(np.float64), 4)
    np.testing.assert_allclose(out[:, :4], expected * np.sign((out[:, :4] * expected).sum(0)), atol=1e-4)
    np.testing.assert_array_equal(out[:, 4:], np.random.default_rng(7).standard_normal((50, 2)).astype(np.float32))


def test_each_component_is_signed_so_its_largest_magnitude_loading_is_positive():
    """M6-14: the documented sign rule itself (the tests above compare up to sign)."""
    from psp_st.modules.teacher_init import distilled_piece_vectors

    vectors = np.random.default_rng(1).normal(size=(60, 8)) * np.linspace(3.0, 1.0, 8)
    out = distilled_piece_vectors(vectors, 8)
    expected = independent_pca(vectors, 8)
    centred = vectors - vectors.mean(0)
    loadings = np.linalg.lstsq(centred, expected, rcond=None)[0]  # columns: each component's direction
    expected *= np.sign(loadings[np.abs(loadings).argmax(0), np.arange(8)])
    np.testing.assert_allclose(out, expected, atol=1e-4)


def test_numerical_rank_is_numpys_matrix_rank_at_float32():
    """M6-15: the tolerance scales with the longer side (``max(shape)``), as ``numpy.linalg.matrix_rank``'s."""
    from psp_st.modules.teacher_init import numerical_rank

    basis = np.linalg.qr(np.random.default_rng(0).normal(size=(1000, 2)))[0]
    matrix = (basis * np.array([1.0, 1e-5])).astype(np.float32)  # 1e-5 lies between 2 and 1000 float32 eps
    singular = np.linalg.svd(matrix, compute_uv=False)
    assert numerical_rank(singular, matrix.shape) == np.linalg.matrix_rank(matrix) == 1


def test_piece_texts_read_like_words(sp_tokenizer):
    texts = sp_tokenizer.token_texts()
    assert len(texts) == sp_tokenizer.vocab_size
    assert not any("\u2581" in text and text != "\u2581" for text in texts)


def test_cached_piece_vectors_are_reused(tmp_path, sp_tokenizer, stub_teacher):
    teacher = stub_teacher(dim=16)
    first = PSPEmbedding.from_teacher(teacher, sp_tokenizer, embedding_dim=8, cache_dir=tmp_path, teacher_name="stub")
    calls = len(teacher.calls)
    second = PSPEmbedding.from_teacher(teacher, sp_tokenizer, embedding_dim=8, cache_dir=tmp_path, teacher_name="stub")
    assert len(teacher.calls) == calls
    assert torch.equal(first.embedding.weight, second.embedding.weight)


def test_cache_needs_a_teacher_name(tmp_path, sp_tokenizer, stub_teacher):
    with pytest.raises(ValueError, match="teacher_name"):
        PSPEmbedding.from_teacher(stub_teacher(), sp_tokenizer, embedding_dim=8, cache_dir=tmp_path)


@pytest.mark.parametrize("kind", ["words", "trigrams"])
def test_zoo_encoders_start_from_teacher_token_vectors(caption_sentences, stub_teacher, kind):
    from psp_st.modules.averaging import TrigramAveraging, WordAveraging
    from psp_st.modules.recurrent import GRAN
    from psp_st.tokenization.words import TrigramTokenizer, WordTokenizer

    tokenizer = (WordTokenizer if kind == "words" else TrigramTokenizer).train(caption_sentences[:500], min_count=3)
    teacher = stub_teacher(dim=16)
    texts = [tokenizer.id_to_token(i).strip() or tokenizer.id_to_token(i) for i in range(tokenizer.vocab_size)]
    expected = independent_pca(np.stack([teacher.vector(t) for t in texts]).astype(np.float64), 6)
    averaging = WordAveraging if kind == "words" else TrigramAveraging
    for cls, options in ((averaging, {}), (GRAN, {"gate": "gru"})):
        module = cls.from_teacher(teacher, tokenizer, embedding_dim=6, **options)
        weights = module.embedding.weight.detach()[: module.vocab_size].numpy()
        for column in range(6):
            sign = np.sign(weights[:, column] @ expected[:, column])
            np.testing.assert_allclose(weights[:, column], sign * expected[:, column], atol=1e-3)
        assert torch.all(module.embedding.weight[module.vocab_size] == 0)


def test_cached_piece_vectors_are_read_in_one_arrow_read(tmp_path, sp_tokenizer, stub_teacher, monkeypatch):  # F7-4
    """``np.asarray`` of datasets' lazy numpy ``Column`` makes a Python call per piece (~70 µs per 384-d row)."""
    from datasets.arrow_dataset import Column

    PSPEmbedding.from_teacher(stub_teacher(dim=16), sp_tokenizer, embedding_dim=8, cache_dir=tmp_path, teacher_name="s")

    def refuse(self):
        raise AssertionError("a datasets Column was iterated row by row")

    monkeypatch.setattr(Column, "__iter__", refuse)
    PSPEmbedding.from_teacher(stub_teacher(dim=16), sp_tokenizer, embedding_dim=8, cache_dir=tmp_path, teacher_name="s")
