"""Fixtures for the reliability matrix: a tiny saved psp-st model folder (PSPEmbedding at the root)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def saved_model_master(tmp_path_factory, sp_tokenizer) -> Path:
    """A dim-16 PSPEmbedding SentenceTransformer saved once per session (do not modify; use ``saved_model``)."""
    import torch
    from sentence_transformers import SentenceTransformer

    from psp_st.modules.psp import PSPEmbedding

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("saved") / "model"
    SentenceTransformer(modules=[PSPEmbedding(sp_tokenizer, embedding_dim=16)], device="cpu").save(str(folder))
    return folder


@pytest.fixture
def saved_model(saved_model_master, tmp_path) -> Path:
    """A private copy of the saved tiny model folder that a test may damage."""
    copy = tmp_path / "model"
    shutil.copytree(saved_model_master, copy)
    return copy


@pytest.fixture
def poison():
    """``poison(folder, value)``: write ``value`` (NaN/inf) into element [0, 0] of the folder's weights; returns the file."""
    from safetensors.torch import load_file, save_file

    def write(folder: Path, value: float) -> Path:
        file = next(folder.rglob("model.safetensors"))
        weights = load_file(str(file))
        weights[next(iter(weights))][0, 0] = value
        save_file(weights, str(file))
        return file

    return write
