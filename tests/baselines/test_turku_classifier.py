from __future__ import annotations

import pytest
import torch

from benchmarks.baselines.turku_classifier import TurkuClassifier
from psp_st.evaluation.turku_labels import parse_labels

A = ["the cat sat on the mat", "hän lähti", "a big dog ran", "the man is not small"]
B = ["a cat sat", "hän meni pois puistossa", "the dog ran in the park", "the woman was red"]


@pytest.fixture
def model(tiny_bert_dir):
    torch.manual_seed(0)
    return TurkuClassifier.from_backbone(str(tiny_bert_dir), max_length=32, dropout=0.0)


def test_forward_shapes(model):
    logits = model(model.tokenize(A, B))
    assert {name: tuple(t.shape) for name, t in logits.items()} == {
        "base": (4, 4),
        "subsumption": (4, 3),
        "style": (4, 2),
        "minor": (4, 2),
    }
    assert model.feature_dim == 5 * 32


def test_separator_positions_and_sentence_masks(model):
    features = model.tokenize(A, B)
    rows = torch.arange(len(A))
    sep = model.tokenizer.sep_token_id
    assert (features["input_ids"][rows, features["sep1_index"]] == sep).all()
    assert (features["input_ids"][rows, features["sep2_index"]] == sep).all()
    assert (features["input_ids"][:, 0] == model.tokenizer.cls_token_id).all()
    assert not (features["a_mask"] & features["b_mask"]).any()
    for i in range(len(A)):  # A's tokens lie between [CLS] and the first [SEP], B's between the two [SEP]s
        a_positions = features["a_mask"][i].nonzero().flatten()
        b_positions = features["b_mask"][i].nonzero().flatten()
        assert a_positions.min() == 1 and a_positions.max() == features["sep1_index"][i] - 1
        assert b_positions.min() == features["sep1_index"][i] + 1
        assert b_positions.max() == features["sep2_index"][i] - 1


def _flag_grads(model):
    return {name: model.heads[name].weight.grad for name in ("subsumption", "style", "minor")}


def test_flag_heads_get_no_gradient_without_base_4(model):
    targets = model.label_targets(parse_labels(["2", "3", "1", "3"]))
    model.compute_loss(model(model.tokenize(A, B)), targets).backward()
    assert model.heads["base"].weight.grad.abs().sum() > 0
    for name, grad in _flag_grads(model).items():
        assert grad is None or torch.count_nonzero(grad) == 0, name


def test_flag_heads_learn_only_from_base_4_rows(model):
    labels = parse_labels(["4>i", "3", "2", "4s"])
    model.compute_loss(model(model.tokenize(A, B)), model.label_targets(labels)).backward()
    masked = {name: grad.clone() for name, grad in _flag_grads(model).items()}
    assert all(torch.count_nonzero(grad) > 0 for grad in masked.values())
    # changing the flags written on non-4 rows can't matter; changing base-4 rows' flags does
    model.zero_grad()
    only4 = model.label_targets(parse_labels(["4>i", "4", "4", "4s"]))
    only4["flagged"] = torch.tensor([True, False, False, True])
    loss_flags = sum(
        torch.nn.functional.cross_entropy(model(model.tokenize(A, B))[n][only4["flagged"]], only4[n][only4["flagged"]])
        for n in ("subsumption", "style", "minor")
    )
    loss_flags.backward()
    for name, grad in _flag_grads(model).items():
        assert torch.allclose(grad, masked[name], atol=1e-6), name


def test_save_load_round_trip(model, tmp_path):
    model.fit(A, B, ["4>i", "3", "2", "4s"], max_steps=2, batch_size=2, show_progress_bar=False)
    model.save(tmp_path / "turku")
    assert {"turku_config.json", "turku_heads.safetensors", "model.safetensors", "config.json"} <= {
        p.name for p in (tmp_path / "turku").iterdir()
    }
    loaded = TurkuClassifier.load(tmp_path / "turku")
    model.eval()
    with torch.inference_mode():
        before, after = model(model.tokenize(A, B)), loaded(loaded.tokenize(A, B))
    for name in before:
        torch.testing.assert_close(before[name], after[name])
    assert loaded.predict(list(zip(A, B, strict=True))) == model.predict(list(zip(A, B, strict=True)))


def test_load_names_the_missing_file(model, tmp_path):
    model.save(tmp_path / "turku")
    (tmp_path / "turku" / "turku_heads.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="turku_heads.safetensors is missing"):
        TurkuClassifier.load(tmp_path / "turku")


def test_predict_gives_full_label_strings_with_flags_only_on_4(model):
    with torch.no_grad():
        model.heads["base"].bias.copy_(torch.tensor([0.0, 0.0, 0.0, 50.0]))  # force base label 4
        model.heads["subsumption"].bias.copy_(torch.tensor([0.0, 0.0, 50.0]))
        model.heads["minor"].bias.copy_(torch.tensor([0.0, 50.0]))
        model.heads["style"].bias.copy_(torch.tensor([50.0, 0.0]))
    assert model.predict(list(zip(A, B, strict=True))) == ["4>i"] * 4
    with torch.no_grad():
        model.heads["base"].bias.copy_(torch.tensor([0.0, 50.0, 0.0, 0.0]))  # base 2: flags dropped
    assert model.predict(list(zip(A, B, strict=True))) == ["2"] * 4


def test_fit_changes_weights_and_rejects_bad_labels_by_row(model):
    before = model.heads["base"].weight.detach().clone()
    stats = model.fit(A, B, ["4>i", "3", "2", "4s"], max_steps=2, batch_size=4, show_progress_bar=False)
    assert stats["steps"] == 2 and stats["loss"] == stats["loss"]  # finite, not NaN
    assert not torch.equal(before, model.heads["base"].weight)
    with pytest.raises(ValueError, match=r"dev\.parquet, row 3: label '4<>'"):
        model.fit(A, B, ["4", "3", "2", "4<>"], max_steps=1, label_source="dev.parquet")


def test_empty_sentence_names_the_row(model):
    with pytest.raises(ValueError, match="sentence2, row 1: empty"):
        model.tokenize(["a", "b"], ["c", "  "])


@pytest.mark.slow
def test_real_minilm_backbone_trains_a_step():
    model = TurkuClassifier.from_backbone("all-MiniLM-L6-v2", max_length=64)
    assert model.feature_dim == 5 * 384
    model.fit(A, B, ["4>i", "3", "2", "4s"], max_steps=1, batch_size=4, show_progress_bar=False)
    assert all(label[0] in "1234" for label in model.predict(list(zip(A, B, strict=True))))
