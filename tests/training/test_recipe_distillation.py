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


def test_distillation_text_gives_pieces_for_words_only_the_distillation_sentences_have(files, tmp_path, monkeypatch):
    import pandas as pd

    import psp_st.modules.teacher_init as teacher_module
    from psp_st.training.recipe import build_model, load_recipe_pairs

    monkeypatch.setattr(teacher_module, "load_teacher", lambda name, device="cpu": Stub())
    news = [f"the parliament voted on the budget amendment number {i}" for i in range(100)]
    pd.DataFrame({"sentence": news}).to_parquet(files / "news.parquet")
    config = distillation_recipe(files, tmp_path / "cache")
    config["distillation"]["sources"] = [{"path": str(files / "news.parquet")}]
    pairs = load_recipe_pairs(config["data"], seed=0)

    def pieces(distillation_text: bool) -> int:
        recipe = {**config, "tokenizer": {**config["tokenizer"], "distillation_text": distillation_text}}
        (ids,) = build_model(recipe, pairs, seed=0)[0].tokenizer.encode(["the parliament voted on the amendment"])
        return len(ids)

    assert pieces(True) < pieces(False)  # the news words got pieces of their own


def test_distillation_text_counts_sif_weights_on_the_pairs_alone(files, tmp_path, monkeypatch):
    import pandas as pd

    import psp_st.modules.teacher_init as teacher_module
    from psp_st.distillation.piece_weights import piece_counts
    from psp_st.training.recipe import build_model, load_recipe_pairs

    monkeypatch.setattr(teacher_module, "load_teacher", lambda name, device="cpu": Stub())
    pd.DataFrame({"sentence": ["a dog a dog a dog runs"] * 50}).to_parquet(files / "dogs.parquet")
    config = distillation_recipe(files, tmp_path / "cache")
    config["distillation"]["sources"] = [{"path": str(files / "dogs.parquet")}]
    config["tokenizer"] = {**config["tokenizer"], "distillation_text": True}
    config["model"] = {**config["model"], "init_sif": 0.01}
    pairs = load_recipe_pairs(config["data"], seed=0)
    module = build_model(config, pairs, seed=0)[0]
    unweighted = build_model({**config, "model": {**config["model"], "init_sif": None}}, pairs, seed=0)[0]
    counts = piece_counts(module.tokenizer, pairs["sentence1"][:] + pairs["sentence2"][:])
    ratio = (module.embedding.weight / unweighted.embedding.weight).detach().numpy()[: module.vocab_size, 0]
    expected = 0.01 / (0.01 + counts / counts.sum())
    np.testing.assert_allclose(ratio, expected / expected.mean(), rtol=1e-4)


def test_distillation_text_without_distillation_sources_is_refused():
    from psp_st.training.schema import parse_recipe

    with pytest.raises(ValueError, match=r"tokenizer\.distillation_text .* needs distillation\.sources"):
        parse_recipe({"name": "t", "data": {"sources": ["x.parquet"]}, "tokenizer": {"distillation_text": True}})
