from __future__ import annotations

import numpy as np
import pytest
from datasets import Dataset

from benchmarks.baselines.cross_encoder import build_cross_encoder, train_cross_encoder

LABELLED = Dataset.from_dict(
    {
        "sentence1": ["the cat sat", "a dog ran", "the man is big", "a woman was red"],
        "sentence2": ["a cat sat", "the man is small", "a big man", "the dog ran"],
        "label": [1, 0, 1, 0],
    }
)
PAIRS = [("the cat sat", "a cat sat"), ("a dog ran", "the man is small")]


def test_train_predict_and_round_trip(tiny_bert_dir, tmp_path):
    from sentence_transformers.cross_encoder import CrossEncoder

    model = build_cross_encoder(str(tiny_bert_dir), max_length=32)
    stats = train_cross_encoder(
        model, {"toy": LABELLED}, output_dir=tmp_path / "ce", batch_size=2, max_steps=2, show_progress_bar=False
    )
    assert stats["steps"] == 2 and np.isfinite(stats["loss"])
    scores = model.predict(PAIRS)
    assert scores.shape == (2,) and ((scores >= 0) & (scores <= 1)).all()  # sigmoid probabilities
    assert (tmp_path / "ce" / "model.safetensors").is_file()
    reloaded = CrossEncoder(str(tmp_path / "ce"), device="cpu")
    np.testing.assert_allclose(reloaded.predict(PAIRS), scores, atol=1e-5)


def test_bad_label_names_the_row(tiny_bert_dir):
    model = build_cross_encoder(str(tiny_bert_dir))
    bad = Dataset.from_dict({"sentence1": ["a", "b", "c"], "sentence2": ["c", "d", "e"], "label": [1, 0, 3]})
    with pytest.raises(ValueError, match="pair set 'pawsx', row 2: label 3"):
        train_cross_encoder(model, {"pawsx": bad}, max_steps=1)


def test_scoring_reports_turku_binary_with_its_majority_rate(tiny_bert_dir, data_dir):
    from benchmarks.baselines.evaluate import score_cross_encoder
    from benchmarks.baselines.pair_data import load_pair_frame

    model = build_cross_encoder(str(tiny_bert_dir), max_length=32)
    metrics = score_cross_encoder(model, data_dir, batch_size=64, limit=200)
    positives = (load_pair_frame("turku-eval", data_dir, limit=200).label >= 3).mean()
    assert metrics["turku_binary_majority_rate"] == pytest.approx(100 * max(positives, 1 - positives))
    assert 0 <= metrics["turku_binary_balanced_accuracy"] <= 100
    assert {"stsb_spearman", "pawsx_en_accuracy", "msrpc_f1", "pairs_per_second"} <= set(metrics)
