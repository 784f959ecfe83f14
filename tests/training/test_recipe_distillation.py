"""A recipe with teacher init and sentence distillation trains end to end; a rerun never loads the teacher."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest


class Stub:
    """A tiny stand-in teacher (seeded vector per text), so no transformer is loaded."""

    def __init__(self) -> None:
        self.encoded = 0

    def encode(self, texts, batch_size=32, convert_to_numpy=True, **kwargs):
        import zlib

        self.encoded += len(texts)
        return np.stack([np.random.default_rng(zlib.crc32(t.encode())).standard_normal(6) for t in texts])


@pytest.fixture
def files(tmp_path, caption_sentences):
    pairs = pd.DataFrame({"sentence1": caption_sentences[:80], "sentence2": caption_sentences[10_000:10_080]})
    pairs.to_parquet(tmp_path / "pairs.parquet")
    pd.DataFrame({"sentence": caption_sentences[2000:2100]}).to_parquet(tmp_path / "corpus.parquet")
    return tmp_path


def recipe(files, cache):
    return {
        "name": "tiny-distil",
        "seed": 0,
        "data": {"sources": [{"path": str(files / "pairs.parquet"), "max_pairs": 60}]},
        "tokenizer": {"vocab_size": 300},
        "model": {"embedding_dim": 8, "init": "teacher"},
        "distillation": {
            "teacher": "stub-teacher",
            "cache_dir": str(cache),
            "weight": 1.0,
            "batch_size": 8,
            "sources": [{"path": str(files / "corpus.parquet"), "max_sentences": 40}],
        },
        "megabatch": {"size": 2, "anneal": 2},
        "trainer": {
            "per_device_train_batch_size": 8,
            "eval_strategy": "no",
            "save_strategy": "no",
            "logging_steps": 1,
            "learning_rate": 0.05,
            "disable_tqdm": True,
        },
        "evaluation": {},
    }


def test_distilled_recipe_trains_and_reuses_the_teacher_cache(files, data_dir, tmp_path, monkeypatch):
    import psp_st.modules.teacher_init as teacher_module
    from psp_st.training.recipe import train_from_config

    stub = Stub()
    monkeypatch.setattr(teacher_module, "load_teacher", lambda name, device="cpu": stub)
    train_from_config(recipe(files, tmp_path / "cache"), output_dir=tmp_path / "run1", max_steps=3)
    assert stub.encoded > 40  # the pieces and the 40 sentences
    metrics = json.loads((tmp_path / "run1" / "train_metrics.json").read_text())
    assert metrics["pairs_per_source"] == {str(files / "pairs.parquet"): 60}
    assert metrics["distillation"]["sentences"] == 40 and metrics["distillation"]["teacher_dim"] == 6
    assert {
        "data_seconds",
        "tokenizer_seconds",
        "teacher_pieces_seconds",
        "teacher_sentences_seconds",
        "training_seconds",
    } <= set(metrics["stage_seconds"])

    def no_teacher(name, device="cpu"):
        raise AssertionError("the teacher was loaded although every vector is cached")

    monkeypatch.setattr(teacher_module, "load_teacher", no_teacher)
    train_from_config(recipe(files, tmp_path / "cache"), output_dir=tmp_path / "run2", max_steps=3)
    from safetensors.numpy import load_file

    weights = [
        load_file(str(tmp_path / run / "final" / "model.safetensors"))["embedding.weight"] for run in ("run1", "run2")
    ]
    np.testing.assert_array_equal(weights[0], weights[1])


def test_distillation_sources_giving_no_sentence_are_refused_leaving_no_run(files, data_dir, tmp_path, monkeypatch):
    import psp_st.modules.teacher_init as teacher_module
    from psp_st.training.recipe import train_from_config

    monkeypatch.setattr(teacher_module, "load_teacher", lambda name, device="cpu": Stub())
    config = recipe(files, tmp_path / "cache")
    config["distillation"]["max_words"] = 1  # every caption is longer
    with pytest.raises(ValueError, match=r"recipe: distillation\.sources give no sentence"):
        train_from_config(config, output_dir=tmp_path / "run", max_steps=3)
    assert not (tmp_path / "run" / "initial").exists()
