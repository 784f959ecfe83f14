"""Every zoo encoder: the padded-ids contract, padding invariance and the bad-input matrix."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from sentence_transformers import SentenceTransformer

MIXED = ["a", "a man is riding a horse on the beach at sunset while two dogs run after him", "two dogs", ""]


def st(module) -> SentenceTransformer:
    return SentenceTransformer(modules=[module], device="cpu")


def test_preprocess_emits_padded_2d_ids_and_mask(make_encoder, encoder_kind):
    module = make_encoder(encoder_kind)
    features = module.preprocess(["a dog", "a man rides a red bike down the street"])
    ids, mask = features["input_ids"], features["attention_mask"]
    assert ids.dim() == 2 and ids.shape == mask.shape and ids.shape[0] == 2
    assert mask.dtype == torch.long and set(mask.unique().tolist()) <= {0, 1}
    assert mask[0].sum() < mask[1].sum()


def test_forward_returns_sentence_embedding_of_declared_size(make_encoder, encoder_kind):
    module = make_encoder(encoder_kind).eval()
    out = module(module.preprocess(MIXED))["sentence_embedding"]
    assert out.shape == (len(MIXED), module.get_sentence_embedding_dimension())
    assert torch.isfinite(out).all()


def test_mixed_length_batch_equals_one_by_one(make_encoder, encoder_kind):
    model = st(make_encoder(encoder_kind))
    together = model.encode(MIXED, batch_size=len(MIXED))
    alone = np.stack([model.encode([text])[0] for text in MIXED])
    np.testing.assert_allclose(together, alone, rtol=1e-5, atol=1e-6)


def test_texts_without_known_tokens_get_the_unk_vector(make_encoder, encoder_kind):
    model = st(make_encoder(encoder_kind))
    vectors = model.encode(["", "   \n\t", "\u2603\u2603 \u2603"])
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(vectors[1], vectors[0], rtol=1e-6)
    np.testing.assert_allclose(vectors[2], vectors[0], rtol=1e-6)


def test_unk_vector_is_the_unk_row_for_averaging(make_encoder):
    module = make_encoder("word")
    vector = st(module).encode(["qqqzzz xxyyq"])[0]
    np.testing.assert_allclose(vector, module.embedding.weight[module.unk_id].detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("bad", [None, 3, ["nested"]])
def test_non_string_is_a_type_error_naming_the_caller(make_encoder, encoder_kind, bad):
    module = make_encoder(encoder_kind)  # not the index: Sentence-Transformers reorders inputs by length
    with pytest.raises(TypeError, match="an input of SentenceTransformer.encode"):
        module.preprocess(["fine", bad])
    with pytest.raises(TypeError):
        st(module).encode(["fine", bad])


def test_empty_list(make_encoder, encoder_kind):
    module = make_encoder(encoder_kind)
    assert st(module).encode([]).shape == (0,)  # Sentence-Transformers' own convention for no input
    assert module.preprocess([])["input_ids"].shape[0] == 0


def test_one_megabyte_string_is_finite_and_bounded(make_encoder, encoder_kind):
    module = make_encoder(encoder_kind)
    text = "a dog runs on the beach " * 44_000  # ~1 MB
    start = time.perf_counter()
    vector = st(module).encode([text, "a dog"])
    assert np.isfinite(vector).all()
    assert time.perf_counter() - start < 20
    if getattr(module, "max_seq_length_limit", None):  # recurrent: cut to max_seq_length tokens
        assert module.preprocess([text])["input_ids"].shape[1] == module.max_seq_length


def test_emoji_and_mixed_scripts_are_finite(make_encoder, encoder_kind):
    vectors = st(make_encoder(encoder_kind)).encode(["😀😀", "Καλημέρα κόσμε", "Привет мир", "مرحبا", "dog 犬 собака"])
    assert np.isfinite(vectors).all()


def test_prompt_is_prepended(make_encoder):
    module = make_encoder("word")
    with_prompt = module.preprocess(["dog"], prompt="a ")["input_ids"]
    assert torch.equal(with_prompt, module.preprocess(["a dog"])["input_ids"])


def test_averaging_refuses_sentencepiece_and_points_to_psp(sp_tokenizer, zoo_texts):
    from psp_st.modules.averaging import TrigramAveraging, WordAveraging

    with pytest.raises(ValueError, match="WordAveraging does not average sentencepiece pieces.*PSPEmbedding"):
        WordAveraging(sp_tokenizer, embedding_dim=4)
    with pytest.raises(ValueError, match="TrigramAveraging does not average sentencepiece pieces"):
        TrigramAveraging.from_texts(zoo_texts[:50], embedding_dim=4, tokenizer="sentencepiece")


@pytest.mark.parametrize("dim", [0, -3, 2.5])
def test_from_texts_refuses_a_bad_embedding_dim_naming_it(zoo_texts, dim):
    from psp_st.modules.averaging import WordAveraging

    with pytest.raises((ValueError, TypeError), match="embedding_dim"):
        WordAveraging.from_texts(zoo_texts[:50], embedding_dim=dim)


def test_tokenizer_option_repeating_an_argument_is_refused_naming_it(zoo_texts):
    from psp_st.modules.recurrent import GRAN

    with pytest.raises(ValueError, match=r"tokenizer_options \['vocab_size'\].*max_size"):
        GRAN.from_texts(zoo_texts[:50], tokenizer="sentencepiece", tokenizer_options={"vocab_size": 500})


def test_psp_from_texts_refuses_another_tokenizer_kind(zoo_texts):
    from psp_st.modules.psp import PSPEmbedding

    with pytest.raises(ValueError, match="PSPEmbedding averages sentencepiece pieces, not words"):
        PSPEmbedding.from_texts(zoo_texts[:50], tokenizer="words")
