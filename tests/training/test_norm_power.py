"""``norm_power: g`` raises every piece vector's norm to the power ``g`` after training, its direction kept."""

from __future__ import annotations

import numpy as np
import pytest
import torch


def test_powered_row_norms_scales_each_row_to_its_norm_to_the_power_and_keeps_zero_rows():
    from psp_st.training.norm_power import powered_row_norms

    table = np.array([[3.0, 4.0], [0.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    powered = powered_row_norms(table, 0.5)
    np.testing.assert_allclose(powered, [[3 / 5**0.5, 4 / 5**0.5], [0, 0], [0.6, 0.8]], rtol=1e-6)
    assert powered.dtype == np.float32


def test_powered_row_norms_at_power_one_is_the_table():
    from psp_st.training.norm_power import powered_row_norms

    table = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    np.testing.assert_allclose(powered_row_norms(table, 1.0), table, rtol=1e-6)


@pytest.mark.parametrize("power", [0, -0.5, 1.5])
def test_powered_row_norms_refuses_a_power_outside_zero_to_one(power):
    from psp_st.training.norm_power import powered_row_norms

    with pytest.raises(ValueError, match=r"norm_power must be in \(0, 1\]"):
        powered_row_norms(np.ones((2, 2)), power)


def test_raise_row_norms_changes_the_embedding_in_place():
    from psp_st.training.norm_power import raise_row_norms

    embedding = torch.nn.Embedding(2, 2)
    with torch.no_grad():
        embedding.weight.copy_(torch.tensor([[0.0, 4.0], [0.0, 0.25]]))
    before = embedding.weight
    raise_row_norms(embedding, 0.5)
    assert embedding.weight is before
    np.testing.assert_allclose(embedding.weight.detach().numpy(), [[0.0, 2.0], [0.0, 0.5]], rtol=1e-6)


@pytest.mark.parametrize("subfolder", ["", "trainable"])
def test_init_from_a_model_built_with_norm_power_warns_that_the_power_applies_again(
    psp_model, tmp_path, caplog, subfolder
):
    """R11-1: fine-tuning psp-en (norm_power 0.9) with its own recipe raised its norms to 0.81 overall, silently."""
    import json

    from psp_st.training.recipe import build_model

    psp_model.save(str(tmp_path / "release" / "trainable"))
    record = {"format_version": 1, "training": {"norm_power": 0.9}}
    (tmp_path / "release" / "psp_build.json").write_text(json.dumps(record), encoding="utf-8")
    config = {
        "name": "ft",
        "data": {"sources": ["x.parquet"]},
        "model": {"init_from": str(tmp_path / "release" / subfolder)},
        "norm_power": 0.9,
        "evaluation": {},
    }
    with caplog.at_level("WARNING", logger="psp_st.training.recipe"):
        build_model(config, None, seed=0)
    assert "norm_power 0.9 raises the piece norms again" in caplog.text and "power 0.81" in caplog.text


def test_raise_row_norms_takes_a_bfloat16_table():
    """R11-2: numpy has no bfloat16, so the table's copy failed with "Got unsupported ScalarType BFloat16"."""
    from psp_st.training.norm_power import raise_row_norms

    embedding = torch.nn.Embedding(1, 2).to(torch.bfloat16)
    with torch.no_grad():
        embedding.weight.copy_(torch.tensor([[0.0, 4.0]]))
    raise_row_norms(embedding, 0.5)
    assert embedding.weight.dtype == torch.bfloat16 and embedding.weight.tolist() == [[0.0, 2.0]]
