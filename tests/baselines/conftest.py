"""A tiny randomly initialised BERT (2 layers, hidden 32) saved as a local folder: no 90 MB model in unit tests."""

from __future__ import annotations

import importlib.util
import string
from pathlib import Path

import pytest

WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "on",
    "mat",
    "ran",
    "in",
    "park",
    "man",
    "woman",
    "is",
    "are",
    "was",
    "not",
    "big",
    "small",
    "red",
    "blue",
    "hän",
    "lähti",
    "meni",
    "pois",
    "talo",
    "on",
    "iso",
    "pieni",
    "koira",
    "kissa",
    "juoksi",
    "puistossa",
    ".",
]


def build_tiny_bert(path: Path, seed: int = 0) -> Path:
    """Save a 2-layer, hidden-32 ``BertModel`` and a WordPiece tokenizer over a small vocabulary to ``path``."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(WORDS)]
    vocab += [c for c in string.ascii_lowercase + "äö" if c not in vocab]
    vocab += [f"##{c}" for c in string.ascii_lowercase + "äö"]
    tokenizer = BertTokenizerFast(vocab={token: i for i, token in enumerate(vocab)}, do_lower_case=True)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread():
    """Tiny models gain nothing from threads, and the test machine is shared."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> Path:
    return build_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def table_script():
    """``benchmarks/baselines_table.py`` as a module (its ``main`` runs, scores and tabulates the baselines)."""
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "baselines_table.py"
    spec = importlib.util.spec_from_file_location("baselines_table", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
