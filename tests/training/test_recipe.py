"""A YAML recipe trains end to end: tokenizer, model, mega-batching, STS-B dev evaluation, final save + card."""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest


@pytest.fixture
def pairs_file(tmp_path, caption_sentences):
    frame = pd.DataFrame(
        {
            "sentence1": caption_sentences[:60],
            "sentence2": caption_sentences[10_000:10_060],
            "group_id": [f"img{i // 5}" for i in range(60)],
        }
    )
    frame.loc[3, "sentence2"] = None  # a missing side: dropped and counted
    frame.loc[4, "sentence1"] = "   "  # an empty side: dropped and counted
    path = tmp_path / "pairs.parquet"
    frame.to_parquet(path)
    return path


def recipe(pairs_file, data_dir):
    return {
        "name": "tiny",
        "seed": 0,
        "data": {"sources": [str(pairs_file)]},
        "tokenizer": {"vocab_size": 300},
        "model": {"embedding_dim": 16},
        "loss": {"name": "margin"},
        "megabatch": {"size": 2, "anneal": 2},
        "trainer": {
            "per_device_train_batch_size": 8,
            "eval_steps": 4,
            "save_steps": 4,
            "logging_steps": 2,
            "learning_rate": 0.05,
            "disable_tqdm": True,
        },
        "evaluation": {"sts_dev": str(data_dir / "sts" / "stsbenchmark" / "dev.parquet")},
    }


def test_recipe_trains_saves_and_counts_bad_rows(pairs_file, data_dir, tmp_path, caplog):
    from sentence_transformers import SentenceTransformer

    from psp_st.training.recipe import train_from_config

    with caplog.at_level(logging.WARNING):
        train_from_config(recipe(pairs_file, data_dir), output_dir=tmp_path / "run", max_steps=6)
    assert "dropped 2 training pair(s)" in caplog.text
    metrics = json.loads((tmp_path / "run" / "train_metrics.json").read_text())
    assert metrics["global_step"] == 6 and metrics["train_pairs"] == 58
    final = tmp_path / "run" / "final"
    assert (final / "README.md").exists()
    state = json.loads((tmp_path / "run" / "checkpoint-6" / "trainer_state.json").read_text())
    assert any("eval_sts-dev_spearman_cosine" in entry for entry in state["log_history"])
    reloaded = SentenceTransformer(str(final), device="cpu", trust_remote_code=True)
    assert reloaded.encode(["a dog runs"]).shape == (1, 16)


def test_unknown_recipe_key_is_a_clear_error(pairs_file, data_dir):
    from psp_st.training.recipe import load_config

    bad = {**recipe(pairs_file, data_dir), "optimiser": {}}
    with pytest.raises(ValueError, match="optimiser"):
        load_config(bad)


def test_missing_column_names_the_file(tmp_path):
    from psp_st.training.pairs import load_training_pairs

    path = tmp_path / "bad.parquet"
    pd.DataFrame({"sentence1": ["a"], "text": ["b"]}).to_parquet(path)
    with pytest.raises(ValueError, match="bad.parquet.*sentence2"):
        load_training_pairs([str(path)])
