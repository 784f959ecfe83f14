"""Shared fixtures: the real data in ../shared/data (skipped with a reason when absent) and tiny models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("PSP_ST_DATA_DIR", REPO.parent / "shared" / "data"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def data_path(relative: str) -> Path:
    """Path of a file under the shared data folder; skips the test with a clear reason when it is missing."""
    path = DATA_DIR / relative
    if not path.exists():
        pytest.skip(f"shared data file {path} is absent (set PSP_ST_DATA_DIR to the shared/data folder)")
    return path


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA_DIR.is_dir():
        pytest.skip(f"shared data folder {DATA_DIR} is absent (set PSP_ST_DATA_DIR)")
    return DATA_DIR


@pytest.fixture(scope="session")
def caption_sentences() -> list[str]:
    """20,000 real English captions (Flickr8k side 1 + side 2), for tokenizer and module tests."""
    import pandas as pd

    frame = pd.read_parquet(data_path("training_pairs/flickr8k_captions.parquet"), columns=["sentence1", "sentence2"])
    return frame.sentence1.tolist()[:10_000] + frame.sentence2.tolist()[:10_000]


@pytest.fixture(scope="session")
def sp_tokenizer(caption_sentences):
    """A small sentencepiece model trained on real captions (session-wide, ~0.5 s)."""
    from psp_st.tokenization import SentencePieceTokenizer

    return SentencePieceTokenizer.train(caption_sentences, vocab_size=2000, seed=0)


@pytest.fixture
def psp_module(sp_tokenizer):
    """A fresh, untrained PSPEmbedding of dimension 32 over the shared small tokenizer."""
    import torch

    from psp_st.modules.psp import PSPEmbedding

    torch.manual_seed(0)
    return PSPEmbedding(sp_tokenizer, embedding_dim=32)


@pytest.fixture
def psp_model(psp_module):
    """A SentenceTransformer holding :func:`psp_module` (CPU)."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(modules=[psp_module], device="cpu")


@pytest.fixture
def psp_model_dir(psp_model, tmp_path) -> Path:
    """:func:`psp_model` saved as a model folder (what the CLI and the sharded jobs open by path)."""
    path = tmp_path / "psp-model"
    psp_model.save(str(path))
    return path


@pytest.fixture
def caption_file(caption_sentences, tmp_path) -> Path:
    """800 distinct real Flickr8k captions, one per line (several per image, so the file holds paraphrases)."""
    path = tmp_path / "captions.txt"
    path.write_text("\n".join(list(dict.fromkeys(caption_sentences))[:800]) + "\n", encoding="utf-8")
    return path
