"""SIF piece weights: counts from the tokenizer, a/(a+p) with mean 1, folded into the recipe's initial model."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from psp_st.distillation.piece_weights import piece_counts, sif_weights


def test_piece_counts_match_counting_each_texts_ids(sp_tokenizer, caption_sentences):
    texts = caption_sentences[:200]
    expected = Counter(piece for ids in sp_tokenizer.encode(texts) for piece in ids)
    counts = piece_counts(sp_tokenizer, texts)
    assert counts.shape == (sp_tokenizer.vocab_size,)
    assert {i: int(c) for i, c in enumerate(counts) if c} == dict(expected)


def test_sif_weights_by_hand():
    weights = sif_weights(np.array([6, 3, 1, 0]), a=0.1)  # p = 0.6, 0.3, 0.1, 0
    raw = np.array([0.1 / 0.7, 0.1 / 0.4, 0.1 / 0.2, 1.0])
    np.testing.assert_allclose(weights, raw / raw.mean())
    assert weights.mean() == pytest.approx(1.0)


def test_sif_weights_of_no_counts_at_all_leave_every_row_as_it_is():
    """M6-16: texts with no piece (every count 0) give weight 1 everywhere, not 0 / 0 = NaN rows."""
    np.testing.assert_array_equal(sif_weights(np.zeros(3), a=0.1), np.ones(3))


@pytest.mark.parametrize("a", [0.0, -1.0])
def test_sif_constant_must_be_positive(a):
    with pytest.raises(ValueError, match="must be > 0"):
        sif_weights(np.array([1, 2]), a=a)


def test_negative_counts_are_refused():
    with pytest.raises(ValueError, match="non-negative"):
        sif_weights(np.array([1, -2]), a=0.1)


def test_recipe_init_sif_scales_each_piece_row(caption_sentences):
    import datasets

    from psp_st.training.recipe import build_model

    pairs = datasets.Dataset.from_dict({"sentence1": caption_sentences[:300], "sentence2": caption_sentences[300:600]})
    base = {"name": "t", "data": {"sources": ["x.parquet"]}, "tokenizer": {"vocab_size": 300}}
    plain = build_model({**base, "model": {"embedding_dim": 8}}, pairs, seed=0)[0]
    sif = build_model({**base, "model": {"embedding_dim": 8, "init_sif": 0.01}}, pairs, seed=0)[0]
    texts = caption_sentences[:600]
    expected = (
        plain.embedding.weight.detach().numpy()[: plain.vocab_size]
        * sif_weights(piece_counts(plain.tokenizer, texts), 0.01)[:, None]
    )
    np.testing.assert_allclose(sif.embedding.weight.detach().numpy()[: sif.vocab_size], expected, rtol=1e-5)
