from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from tests.conftest import data_path

SNOWMAN = "\u2603"  # not in the caption vocabulary: an unknown piece


def test_preprocess_emits_padded_ids_and_mask(psp_module):
    features = psp_module.preprocess(["a dog", "a man rides a red bike down the street"])
    ids, mask = features["input_ids"], features["attention_mask"]
    assert ids.dim() == 2 and ids.shape == mask.shape and ids.shape[0] == 2
    assert (ids[mask == 0] == psp_module.pad_id).all()
    assert mask[0].sum() < mask[1].sum()


def test_unknown_pieces_are_dropped(psp_module):
    text = f"a dog {SNOWMAN} runs"
    assert psp_module.unk_id in psp_module.tokenizer.encode([text])[0]
    np.testing.assert_allclose(psp_module.embed([text])[0], psp_module.embed(["a dog runs"])[0], rtol=1e-6)


def test_unknown_characters_inside_a_word_drop_only_themselves(psp_module):
    text = f"a dog{SNOWMAN}"
    flat, _ = psp_module.tokenizer.encode_flat([text], drop_unknown=True)
    expected = psp_module.embedding.weight[torch.from_numpy(flat)].mean(0).detach().numpy()
    assert psp_module.unk_id not in flat.tolist() and len(flat) >= 2
    np.testing.assert_allclose(psp_module.embed([text])[0], expected, rtol=1e-5)


@pytest.mark.parametrize("text", ["", "   ", SNOWMAN * 3])
def test_text_without_known_pieces_gets_the_unk_vector(psp_module, text):
    unk = psp_module.embedding.weight[psp_module.unk_id].detach().numpy()
    np.testing.assert_allclose(psp_module.embed([text])[0], unk)


def test_st_encode_equals_fast_embed_on_real_sentences(psp_module, psp_model):
    texts = pd.read_parquet(data_path("sts/stsbenchmark/dev.parquet")).sentence1.tolist()[:500]
    texts += ["", "emoji 😀 and 漢字", "x" * 5000]
    np.testing.assert_allclose(
        psp_model.encode(texts, batch_size=64), psp_module.embed(texts, batch_size=97), rtol=1e-5, atol=1e-6
    )


def test_max_seq_length_truncates_known_pieces(sp_tokenizer):
    from psp_st.modules.psp import PSPEmbedding

    module = PSPEmbedding(sp_tokenizer, embedding_dim=16, max_seq_length=3)
    ids = sp_tokenizer.encode(["a man is riding a horse on the beach"])[0]
    expected = module.embedding.weight[ids[:3]].mean(0).detach().numpy()
    np.testing.assert_allclose(module.embed(["a man is riding a horse on the beach"])[0], expected, rtol=1e-6)
    features = module.preprocess(["a man is riding a horse on the beach"])
    assert features["input_ids"].shape[1] == 3


def test_mixed_length_batch_equals_one_by_one(psp_module):
    texts = ["a", "a man is riding a horse on the beach at sunset", "two dogs"]
    together = psp_module.embed(texts)
    alone = np.stack([psp_module.embed([text])[0] for text in texts])
    np.testing.assert_allclose(together, alone, rtol=1e-6)


def test_dropout_acts_only_while_training(sp_tokenizer):
    from psp_st.modules.psp import PSPEmbedding

    module = PSPEmbedding(sp_tokenizer, embedding_dim=8, dropout=0.5)
    features = module.preprocess(["a dog", "a man rides a bike"])
    trained = module.train()(dict(features))["sentence_embedding"]
    evaluated = module.eval()(dict(features))["sentence_embedding"]
    assert torch.isfinite(trained).all() and not torch.allclose(trained, evaluated)
    np.testing.assert_allclose(evaluated.detach().numpy(), module.embed(["a dog", "a man rides a bike"]), rtol=1e-5)


def test_training_path_averages_each_text_over_its_own_pieces(sp_tokenizer):
    """M6-12: the dropout path divides each row by its own piece count, not the padded width (dropout ~0: eval's)."""
    from psp_st.modules.psp import PSPEmbedding

    module = PSPEmbedding(sp_tokenizer, embedding_dim=8, dropout=1e-12)
    texts = ["a", "a man is riding a horse on the beach at sunset"]
    trained = module.train()(dict(module.preprocess(texts)))["sentence_embedding"]
    np.testing.assert_allclose(trained.detach().numpy(), module.embed(texts), rtol=1e-5, atol=1e-6)


def test_normalize_option_gives_unit_vectors(psp_module):
    vectors = psp_module.embed(["a dog", ""], normalize=True)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_float16_output(psp_module):
    assert psp_module.embed(["a dog"], dtype=np.float16).dtype == np.float16


@pytest.mark.parametrize("bad", [None, 3, 2.5, ["nested"]])
def test_non_string_is_a_type_error_naming_the_index(psp_module, psp_model, bad):
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        psp_module.embed(["fine", bad])
    with pytest.raises(TypeError, match=f"SentenceTransformer.encode is {type(bad).__name__}"):
        psp_model.encode(["fine", bad])


def test_empty_list(psp_module, psp_model):
    assert psp_module.embed([]).shape == (0, 32)
    assert psp_model.encode([]).shape == (0,)  # Sentence-Transformers' own convention for no input


def test_one_megabyte_string_is_finite(psp_module, psp_model):
    text = "a dog runs on the beach " * 44_000  # ~1 MB
    assert np.isfinite(psp_module.embed([text])).all()
    assert np.isfinite(psp_model.encode([text])).all()


def test_emoji_and_mixed_scripts_are_finite(psp_module):
    vectors = psp_module.embed(["😀😀", "Καλημέρα κόσμε", "Привет мир", "مرحبا", "dog 犬 собака"])
    assert np.isfinite(vectors).all()


@pytest.mark.parametrize(("option", "value"), [("dropout", 1.0), ("dropout", -0.1), ("max_seq_length", 0)])
def test_invalid_options_are_value_errors(sp_tokenizer, option, value):
    from psp_st.modules.psp import PSPEmbedding

    with pytest.raises(ValueError, match=option):
        PSPEmbedding(sp_tokenizer, embedding_dim=8, **{option: value})


def test_zero_padding_from_sentence_transformers_merging_is_ignored(psp_module):
    # ST's merged forward pads input_ids with 0 (a real piece id here); the attention mask must decide.
    features = psp_module.preprocess(["a dog", "a man rides a red bike down the street"])
    expected = psp_module(dict(features))["sentence_embedding"]
    ids = features["input_ids"].masked_fill(features["attention_mask"] == 0, 0)
    merged = psp_module({"input_ids": ids, "attention_mask": features["attention_mask"]})["sentence_embedding"]
    torch.testing.assert_close(merged, expected)


def test_mnrl_with_hard_negative_column_uses_the_mask(psp_model):
    from sentence_transformers.base.losses.merged_forward import merge_feature_batches

    module = psp_model[0]
    short, long = module.preprocess(["a dog"]), module.preprocess(["a man rides a red bike down the street"])
    merged = merge_feature_batches([short, long])
    vectors = module(merged)["sentence_embedding"]
    torch.testing.assert_close(vectors[0], module(short)["sentence_embedding"][0])


def test_misspelt_option_is_refused(sp_tokenizer):
    from psp_st.modules.psp import PSPEmbedding

    with pytest.raises(TypeError, match="dropuot"):
        PSPEmbedding(sp_tokenizer, embedding_dim=8, dropuot=0.3)


def test_token_embeddings_are_a_clear_error(psp_model):
    with pytest.raises(ValueError, match="no token embeddings"):
        psp_model.encode(["a dog runs"], output_value="token_embeddings")


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_embed_follows_in_place_changes_of_weights_in_another_dtype(psp_module, dtype):
    """The engine copies non-float32 weights: an in-place change (optimizer step, load_state_dict) must reach it."""
    psp_module.to(getattr(torch, dtype))
    before = psp_module.embed(["a dog runs"])
    with torch.no_grad():
        psp_module.embedding.weight.mul_(2)
    np.testing.assert_allclose(psp_module.embed(["a dog runs"]), 2 * before, rtol=1e-6)


def test_a_pickle_or_deepcopy_after_embed_carries_one_copy_of_the_weights(psp_module):  # V2
    import copy
    import pickle

    texts = ["a man plays a guitar", "a dog runs"]
    before = len(pickle.dumps(psp_module))
    vectors = psp_module.embed(texts)
    weights = psp_module.embedding.weight.numel() * 4
    assert len(pickle.dumps(psp_module)) < before + weights // 2
    for clone in (pickle.loads(pickle.dumps(psp_module)), copy.deepcopy(psp_module)):
        np.testing.assert_array_equal(clone.embed(texts), vectors)
