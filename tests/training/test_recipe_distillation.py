"""A recipe with teacher init and sentence distillation trains end to end; a rerun never loads the teacher."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.training.conftest import Stub, distillation_recipe


def test_distilled_recipe_trains_and_reuses_the_teacher_cache(files, data_dir, tmp_path, monkeypatch):
    import psp_st.modules.teacher_init as teacher_module
    from psp_st.training.recipe import train_from_config

    stub = Stub()
    monkeypatch.setattr(teacher_module, "load_teacher", lambda name, device="cpu": stub)
    train_from_config(distillation_recipe(files, tmp_path / "cache"), output_dir=tmp_path / "run1", max_steps=3)
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
    train_from_config(distillation_recipe(files, tmp_path / "cache"), output_dir=tmp_path / "run2", max_steps=3)
    from safetensors.numpy import load_file

    weights = [
        load_file(str(tmp_path / run / "final" / "model.safetensors"))["embedding.weight"] for run in ("run1", "run2")
    ]
    np.testing.assert_array_equal(weights[0], weights[1])


def test_distillation_sources_giving_no_sentence_are_refused_leaving_no_run(files, data_dir, tmp_path, monkeypatch):
    import psp_st.modules.teacher_init as teacher_module
    from psp_st.training.recipe import train_from_config

    monkeypatch.setattr(teacher_module, "load_teacher", lambda name, device="cpu": Stub())
    config = distillation_recipe(files, tmp_path / "cache")
    config["distillation"]["max_words"] = 1  # every caption is longer
    with pytest.raises(ValueError, match=r"recipe: distillation\.sources give no sentence"):
        train_from_config(config, output_dir=tmp_path / "run", max_steps=3)
    assert not (tmp_path / "run" / "initial").exists()
