"""Every zoo encoder trains inside SentenceTransformerTrainer: in-batch MNRL, the margin loss, mega-batching."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from datasets import Dataset
from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

from psp_st.training import PSPTrainingArguments


@pytest.fixture
def pairs(caption_sentences) -> Dataset:
    """16 real caption pairs (4 per image group)."""
    return Dataset.from_dict(
        {
            "sentence1": caption_sentences[:16],
            "sentence2": caption_sentences[10_000:10_016],
            "group_id": [i // 4 for i in range(16)],
        }
    )


def training_args(tmp_path, steps: int = 2, **megabatch) -> PSPTrainingArguments:
    """ST training arguments (a PSPTrainingArguments: ``megabatch`` sets the mega-batch options)."""
    return PSPTrainingArguments(
        output_dir=str(tmp_path / "out"),
        max_steps=steps,
        per_device_train_batch_size=4,
        learning_rate=0.05,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
        **megabatch,
    )


def snapshot(model) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def assert_trained_and_round_trips(model, before, tmp_path) -> None:
    after = dict(model.named_parameters())
    changed = [name for name, p in after.items() if not torch.equal(before[name], p.detach())]
    assert any("embedding" in name for name in changed)
    recurrent = [name for name in after if "lstm" in name or "gru" in name or "gate" in name]
    assert all(name in changed for name in recurrent), set(recurrent) - set(changed)
    for module in model.modules():  # the padding row never learns
        if isinstance(module, torch.nn.Embedding) and module.padding_idx is not None:
            assert torch.all(module.weight[module.padding_idx] == 0)
    model.save(str(tmp_path / "saved"))
    reloaded = SentenceTransformer(str(tmp_path / "saved"), trust_remote_code=True, device="cpu")
    texts = ["a dog runs", "unseen words here"]
    np.testing.assert_array_equal(reloaded.encode(texts), model.encode(texts))


@pytest.mark.parametrize("kind", ["word", "lstm_morfessor", "gran_gru", "word_trigram_concat"])
def test_trains_with_multiple_negatives_ranking_loss(make_encoder, kind, pairs, tmp_path):
    model = SentenceTransformer(modules=[make_encoder(kind)], device="cpu")
    before = snapshot(model)
    trainer = SentenceTransformerTrainer(
        model=model,
        args=training_args(tmp_path),
        train_dataset=pairs.remove_columns("group_id"),
        loss=MultipleNegativesRankingLoss(model),
    )
    trainer.train()
    assert_trained_and_round_trips(model, before, tmp_path)


def test_trains_with_margin_loss_and_megabatching(make_encoder, encoder_kind, pairs, tmp_path):
    from psp_st.losses import ParaphraseMarginLoss
    from psp_st.training import MegaBatchTrainer

    model = SentenceTransformer(modules=[make_encoder(encoder_kind)], device="cpu")
    before = snapshot(model)
    trainer = MegaBatchTrainer(
        model=model,
        args=training_args(tmp_path, steps=3, megabatch_size=2, anneal=0),
        train_dataset=pairs,
        loss=ParaphraseMarginLoss(model, margin=0.4),
    )
    trainer.train()
    assert trainer._stream is not None and trainer._stream.current_megabatch_size == 2
    assert_trained_and_round_trips(model, before, tmp_path)


def test_trains_with_in_batch_margin_loss(make_encoder, pairs, tmp_path):
    from psp_st.losses import ParaphraseMarginLoss

    model = SentenceTransformer(modules=[make_encoder("gran_gru")], device="cpu")
    before = snapshot(model)
    trainer = SentenceTransformerTrainer(
        model=model,
        args=training_args(tmp_path),
        train_dataset=pairs.remove_columns("group_id"),
        loss=ParaphraseMarginLoss(model, margin=0.4),
    )
    trainer.train()
    assert_trained_and_round_trips(model, before, tmp_path)


@pytest.mark.parametrize("kind", ["gran_gru", "blstm_sum", "word_trigram_concat"])
def test_margin_loss_merged_forward_equals_one_forward_per_column(make_encoder, kind, caption_sentences):
    from psp_st.losses import ParaphraseMarginLoss

    model = SentenceTransformer(modules=[make_encoder(kind)], device="cpu").train()
    columns = [caption_sentences[i : i + 6] for i in (0, 10_000, 10_006, 6)]  # four columns of different widths
    features = [model.preprocess(texts) for texts in columns]
    assert len({f["input_ids"].shape[1] for f in features}) > 1
    loss = ParaphraseMarginLoss(model)
    merged = loss([dict(f) for f in features], None)
    merged.backward()
    merged_grads = {name: p.grad.to_dense().clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    separate = loss.compute_loss_from_embeddings([model(dict(f))["sentence_embedding"] for f in features])
    separate.backward()
    torch.testing.assert_close(merged, separate)
    for name, p in model.named_parameters():
        if p.grad is not None:
            torch.testing.assert_close(merged_grads[name], p.grad.to_dense(), msg=name)


def test_averaging_sparse_gradient_path_equals_dense_gradient(make_encoder, caption_sentences):
    dense = make_encoder("trigram")
    sparse = make_encoder("trigram")
    sparse.embedding.sparse = True  # what MegaBatchTrainer sets (PSPTrainingArguments.sparse_embeddings)
    features = dense.preprocess(caption_sentences[:5])
    weights = torch.randn(5, 8)
    for module in (dense, sparse):
        (module(dict(features))["sentence_embedding"] * weights).sum().backward()
    assert sparse.embedding.weight.grad.is_sparse
    torch.testing.assert_close(sparse.embedding.weight.grad.to_dense(), dense.embedding.weight.grad)


def test_sparse_mean_of_a_text_with_no_token_is_zeros_as_on_the_dense_path():
    """M6-11: a row of padding only (a text with no known token) averages to zeros, not 0 / 0 = NaN."""
    from psp_st.modules.sparse_mean import bag_mean

    ids = torch.tensor([[0, 1, 4], [4, 4, 4]])
    sparse = torch.nn.Embedding(5, 3, padding_idx=4, sparse=True)
    dense = torch.nn.Embedding(5, 3, padding_idx=4)
    dense.weight.data.copy_(sparse.weight.data)
    assert torch.equal(bag_mean(ids, dense, 4), bag_mean(ids, sparse, 4))
    assert torch.equal(bag_mean(ids, sparse, 4)[1], torch.zeros(3))
