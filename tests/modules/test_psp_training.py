from __future__ import annotations

import numpy as np
import pytest
import torch
from datasets import Dataset
from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, SentenceTransformerTrainingArguments
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

from psp_st.modules.psp import PSPEmbedding


def test_from_texts_builds_an_untrained_module(caption_sentences):
    module = PSPEmbedding.from_texts(caption_sentences[:3000], vocab_size=500, embedding_dim=24, max_seq_length=40)
    assert module.embedding_dim == 24 and module.max_seq_length == 40
    assert module.embedding.weight.shape == (module.vocab_size + 1, 24)
    assert torch.all(module.embedding.weight[module.pad_id] == 0)


def test_from_texts_is_seeded(caption_sentences):
    a = PSPEmbedding.from_texts(caption_sentences[:2000], vocab_size=300, embedding_dim=8, seed=3)
    b = PSPEmbedding.from_texts(caption_sentences[:2000], vocab_size=300, embedding_dim=8, seed=3)
    assert torch.equal(a.embedding.weight, b.embedding.weight)


def test_from_texts_takes_the_module_argument_weights_dtype(caption_sentences):
    module = PSPEmbedding.from_texts(caption_sentences[:2000], vocab_size=300, embedding_dim=8, weights_dtype="float16")
    assert module.weights_dtype == "float16"


def test_one_trainer_step_changes_weights_and_round_trips(psp_module, tmp_path):
    model = SentenceTransformer(modules=[psp_module], device="cpu")
    pairs = Dataset.from_dict(
        {
            "anchor": ["a dog runs", "a man cooks", "kids play", "a cat sleeps"],
            "positive": ["a dog is running", "a man is cooking", "children are playing", "a cat is sleeping"],
        }
    )
    before = psp_module.embedding.weight.detach().clone()
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path / "out"),
        max_steps=1,
        per_device_train_batch_size=4,
        learning_rate=0.1,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
    )
    trainer = SentenceTransformerTrainer(
        model=model, args=args, train_dataset=pairs, loss=MultipleNegativesRankingLoss(model)
    )
    trainer.train()
    after = psp_module.embedding.weight.detach()
    assert not torch.equal(before, after)
    assert torch.all(after[psp_module.pad_id] == 0)  # padding row never learns
    model.save(str(tmp_path / "saved"))
    reloaded = SentenceTransformer(str(tmp_path / "saved"), trust_remote_code=True, device="cpu")
    texts = ["a dog runs", "unseen words here"]
    np.testing.assert_array_equal(reloaded.encode(texts), model.encode(texts))


@pytest.mark.parametrize(("option", "value"), [("dropout", 1.5), ("max_seq_length", 0), ("weights_dtype", "int8")])
def test_from_texts_refuses_a_bad_module_option_before_sentencepiece_trains(monkeypatch, option, value):  # Z8-5
    from psp_st.tokenization import SentencePieceTokenizer

    def never(*args, **kwargs):
        raise AssertionError("sentencepiece trained before the options were checked")

    monkeypatch.setattr(SentencePieceTokenizer, "train", never)
    with pytest.raises((TypeError, ValueError), match=option):
        PSPEmbedding.from_texts(["a dog runs", "a cat sleeps"], vocab_size=300, embedding_dim=8, **{option: value})
