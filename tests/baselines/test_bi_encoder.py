from __future__ import annotations

import numpy as np
import pytest
import torch
from datasets import Dataset

from benchmarks.baselines.bi_encoder import build_bi_encoder, train_bi_encoder

PAIRS = Dataset.from_dict(
    {
        "sentence1": ["the cat sat", "a dog ran", "the man is big", "a woman was red"],
        "sentence2": ["a cat sat on the mat", "the dog ran in the park", "a big man", "the red woman"],
    }
)
LABELLED = Dataset.from_dict(
    {"sentence1": ["the cat sat", "a dog ran"], "sentence2": ["a cat sat", "the man is small"], "label": [1, 0]}
)


def test_plain_transformer_gets_mean_pooling(tiny_bert_dir):
    model = build_bi_encoder(str(tiny_bert_dir), max_seq_length=16)
    pooling = model[1]
    assert pooling.get_config_dict()["pooling_mode"] == "mean"
    assert model.encode(["the cat sat", "a dog"]).shape == (2, 32)


def test_training_moves_weights_and_round_trips(tiny_bert_dir, tmp_path):
    from sentence_transformers import SentenceTransformer

    model = build_bi_encoder(str(tiny_bert_dir))
    before = model.encode(["the cat sat"])
    stats = train_bi_encoder(
        model,
        {"pairs": PAIRS},
        {"labelled": LABELLED},
        output_dir=tmp_path / "sbert",
        batch_size=2,
        max_steps=3,
        show_progress_bar=False,
    )
    assert stats["steps"] == 3 and np.isfinite(stats["loss"])
    after = model.encode(["the cat sat"])
    assert not np.allclose(before, after)
    reloaded = SentenceTransformer(str(tmp_path / "sbert"), device="cpu")
    np.testing.assert_allclose(reloaded.encode(["the cat sat"]), after, atol=1e-5)


def test_bad_label_names_the_set_and_row(tiny_bert_dir):
    model = build_bi_encoder(str(tiny_bert_dir))
    bad = Dataset.from_dict({"sentence1": ["a", "b"], "sentence2": ["c", "d"], "label": [1, 2]})
    with pytest.raises(ValueError, match="pair set 'msrpc', row 1: label 2 is not 0 or 1"):
        train_bi_encoder(model, labelled_sets={"msrpc": bad}, max_steps=1)
    empty = Dataset.from_dict({"sentence1": ["a", ""], "sentence2": ["c", "d"]})
    with pytest.raises(ValueError, match="pair set 'caps', row 1: sentence1 is empty"):
        train_bi_encoder(model, pair_sets={"caps": empty}, max_steps=1)
    with pytest.raises(ValueError, match="at least one"):
        train_bi_encoder(model)
    assert torch.get_num_threads() >= 1


def test_static_embedding_folder_loads_without_a_length_cap(tiny_bert_dir, tmp_path):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from tokenizers import Tokenizer

    static = StaticEmbedding(Tokenizer.from_file(str(tiny_bert_dir / "tokenizer.json")), embedding_dim=8)
    SentenceTransformer(modules=[static], device="cpu").save(str(tmp_path / "static"))
    model = build_bi_encoder(str(tmp_path / "static"), max_seq_length=16)
    assert model.encode(["the cat sat"]).shape == (1, 8)
