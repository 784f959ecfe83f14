"""Shared fixtures of the training tests: a stand-in teacher and a tiny distilled recipe over caption files."""

from __future__ import annotations

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


def distillation_recipe(files, cache) -> dict:
    """A tiny recipe with teacher init and sentence distillation (teacher ``stub-teacher``) over ``files``."""
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
