"""A recipe with ``soup: N`` trains N members from one initial model and saves the mean of their weights; with
``wise_ft: a`` it saves ``initial + a * (mean - initial)``, and with ``norm_power: g`` every row's norm to the power g."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from safetensors.numpy import load_file

from tests.training.conftest import Stub, distillation_recipe


def soup_recipe(files, cache, members=2):
    config = distillation_recipe(files, cache)
    config["soup"] = members
    config["trainer"].update({"save_strategy": "steps", "save_steps": 3})
    return config


@pytest.fixture
def soup_run(files, tmp_path, monkeypatch):
    import psp_st.modules.teacher_init as teacher_module
    from psp_st.training.recipe import train_from_config

    monkeypatch.setattr(teacher_module, "load_teacher", lambda name, device="cpu": Stub())
    train_from_config(soup_recipe(files, tmp_path / "cache"), output_dir=tmp_path / "run", max_steps=3)
    return tmp_path / "run"


def weights(folder):
    return load_file(str(folder / "model.safetensors"))["embedding.weight"]


def test_add_to_soup_is_the_mean_of_the_weights_and_keeps_the_first_integer_buffer():
    from psp_st.training.soup import add_to_soup

    torch.manual_seed(0)
    models = [torch.nn.Linear(3, 2) for _ in range(3)]
    for i, model in enumerate(models):
        model.register_buffer("count", torch.tensor([i]))
    soup: dict[str, torch.Tensor] = {}
    for model in models:
        add_to_soup(soup, model, len(models))
    want = np.mean([model.weight.detach().numpy().astype(np.float64) for model in models], axis=0)
    np.testing.assert_allclose(soup["weight"].numpy(), want, rtol=1e-12, atol=1e-15)
    assert soup["count"].tolist() == [0]


def test_soup_final_is_the_mean_of_its_members(soup_run):
    members = [weights(soup_run / "soup" / str(i) / "final") for i in range(2)]
    assert not np.allclose(members[0], members[1])  # the members saw other data orders
    np.testing.assert_allclose(weights(soup_run / "final"), (members[0] + members[1]) / 2, rtol=1e-6, atol=1e-7)
    metrics = json.loads((soup_run / "train_metrics.json").read_text())
    assert metrics["soup"] == {"members": 2, "seeds": [0, 1]} and metrics["global_step"] == 3


def test_soup_of_one_is_the_plain_run(files, tmp_path, soup_run, monkeypatch):
    from psp_st.training.recipe import train_from_config

    monkeypatch.setattr("psp_st.modules.teacher_init.load_teacher", lambda name, device="cpu": Stub())
    train_from_config(soup_recipe(files, tmp_path / "cache", members=1), output_dir=tmp_path / "one", max_steps=3)
    assert not (tmp_path / "one" / "soup").exists()
    np.testing.assert_array_equal(weights(tmp_path / "one" / "final"), weights(soup_run / "soup" / "0" / "final"))


def no_teacher(name, device="cpu"):
    raise AssertionError("the teacher was loaded although every vector is cached")


def test_resumed_soup_finishes_each_member_from_its_checkpoint(files, tmp_path, soup_run, monkeypatch):
    from psp_st.training.recipe import train_from_config

    monkeypatch.setattr("psp_st.modules.teacher_init.load_teacher", no_teacher)
    copy = shutil.copytree(soup_run, tmp_path / "copy")
    shutil.rmtree(copy / "final")
    shutil.rmtree(copy / "soup" / "1" / "final")
    train_from_config(soup_recipe(files, tmp_path / "cache"), output_dir=copy, max_steps=3, resume=True)
    for member in ("0", "1"):  # no step more: the same weights, no new checkpoint
        assert sorted(p.name for p in (copy / "soup" / member).glob("checkpoint-*")) == ["checkpoint-3"]
        np.testing.assert_array_equal(
            weights(copy / "soup" / member / "final"), weights(soup_run / "soup" / member / "final")
        )
    np.testing.assert_array_equal(weights(copy / "final"), weights(soup_run / "final"))


def test_resumed_soup_with_more_steps_extends_every_member(files, tmp_path, soup_run, monkeypatch):
    from psp_st.training.recipe import train_from_config

    monkeypatch.setattr("psp_st.modules.teacher_init.load_teacher", no_teacher)
    copy = shutil.copytree(soup_run, tmp_path / "copy")
    train_from_config(soup_recipe(files, tmp_path / "cache"), output_dir=copy, max_steps=6, resume=True)
    for member in ("0", "1"):
        assert sorted(p.name for p in (copy / "soup" / member).glob("checkpoint-*")) == ["checkpoint-3", "checkpoint-6"]
    members = [weights(copy / "soup" / str(i) / "final") for i in range(2)]
    np.testing.assert_allclose(weights(copy / "final"), (members[0] + members[1]) / 2, rtol=1e-6, atol=1e-7)


@pytest.fixture
def no_checkpoint_run(files, tmp_path, monkeypatch):
    """A soup of 2 that saves no checkpoint (``save_strategy: "no"``): only each member's ``final/``."""
    from psp_st.training.recipe import train_from_config

    monkeypatch.setattr("psp_st.modules.teacher_init.load_teacher", lambda name, device="cpu": Stub())
    config = soup_recipe(files, tmp_path / "cache")
    config["trainer"]["save_strategy"] = "no"
    train_from_config(config, output_dir=tmp_path / "run", max_steps=3)
    return config, tmp_path / "run"


def resume_counting(config, run, monkeypatch, max_steps=3):
    """Resume ``run`` and return the soup members that trained (folder names)."""
    import psp_st.training.recipe as recipe_module

    trained, train_run = [], recipe_module._train_run
    monkeypatch.setattr("psp_st.modules.teacher_init.load_teacher", no_teacher)
    monkeypatch.setattr(recipe_module, "_train_run", lambda *a, **k: trained.append(a[2].name) or train_run(*a, **k))
    recipe_module.train_from_config(config, output_dir=run, max_steps=max_steps, resume=True)
    return trained


def test_resumed_soup_without_checkpoints_keeps_the_finished_members(no_checkpoint_run, tmp_path, monkeypatch):
    config, run = no_checkpoint_run
    copy = shutil.copytree(run, tmp_path / "copy")  # as killed while member 1 trained
    shutil.rmtree(copy / "final")
    shutil.rmtree(copy / "soup" / "1" / "final")
    (copy / "soup" / "1" / "member.json").unlink()
    assert resume_counting(config, copy, monkeypatch) == ["1"]
    np.testing.assert_array_equal(weights(copy / "final"), weights(run / "final"))


def test_resumed_soup_whose_members_all_finished_trains_none(no_checkpoint_run, tmp_path, monkeypatch):
    config, run = no_checkpoint_run
    copy = shutil.copytree(run, tmp_path / "copy")  # as killed before the soup's final/
    shutil.rmtree(copy / "final")
    (copy / "train_metrics.json").unlink()
    assert resume_counting(config, copy, monkeypatch) == []
    np.testing.assert_array_equal(weights(copy / "final"), weights(run / "final"))
    assert json.loads((copy / "train_metrics.json").read_text())["global_step"] == 3


def test_resumed_soup_under_other_max_steps_trains_the_finished_members_again(no_checkpoint_run, tmp_path, monkeypatch):
    config, run = no_checkpoint_run
    copy = shutil.copytree(run, tmp_path / "copy")
    shutil.rmtree(copy / "final")
    assert resume_counting(config, copy, monkeypatch, max_steps=4) == ["0", "1"]  # no members of two lengths
    assert json.loads((copy / "soup" / "0" / "member.json").read_text())["global_step"] == 4


@pytest.mark.parametrize(("soup", "message"), [(0, "recipe: soup must be >= 1"), ("2", "recipe: soup")])
def test_soup_must_be_a_positive_integer(soup, message):
    from psp_st.training.schema import parse_recipe

    with pytest.raises(ValueError, match=message):
        parse_recipe({"name": "x", "data": {"sources": ["pairs.parquet"]}, "soup": soup})


def test_interpolate_from_initial_moves_the_weights_towards_the_initial_ones_and_keeps_integer_buffers():
    from psp_st.training.wise_ft import interpolate_from_initial

    torch.manual_seed(0)
    trained, initial = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    trained.register_buffer("count", torch.tensor([5]))
    initial.register_buffer("count", torch.tensor([0]))
    want = {
        name: initial.state_dict()[name].double() * 0.7 + value.double() * 0.3
        for name, value in trained.state_dict().items()
        if name != "count"
    }
    interpolate_from_initial(trained, initial, 0.3)
    for name, value in want.items():
        np.testing.assert_allclose(trained.state_dict()[name].numpy(), value.numpy(), rtol=1e-6)
    assert trained.count.tolist() == [5]


def test_interpolate_from_initial_refuses_another_architecture():
    from psp_st.training.wise_ft import interpolate_from_initial

    with pytest.raises(ValueError, match="wise_ft: the initial model has no .weight. of shape"):
        interpolate_from_initial(torch.nn.Linear(3, 2), torch.nn.Linear(4, 2), 0.5)


def test_wise_ft_soup_saves_the_initial_weights_plus_a_times_the_members_mean_change(files, tmp_path, monkeypatch):
    from psp_st.training.recipe import train_from_config

    monkeypatch.setattr("psp_st.modules.teacher_init.load_teacher", lambda name, device="cpu": Stub())
    config = {**soup_recipe(files, tmp_path / "cache"), "wise_ft": 0.25}
    train_from_config(config, output_dir=tmp_path / "run", max_steps=3)
    run = tmp_path / "run"
    start = weights(run / "initial").astype(np.float64)
    mean = (weights(run / "soup" / "0" / "final") + weights(run / "soup" / "1" / "final")) / 2
    np.testing.assert_allclose(weights(run / "final"), start + 0.25 * (mean - start), rtol=1e-5, atol=1e-6)
    assert json.loads((run / "train_metrics.json").read_text())["wise_ft"] == 0.25


def test_norm_power_soup_saves_the_members_mean_with_every_rows_norm_to_the_power(files, tmp_path, monkeypatch):
    from psp_st.training.norm_power import powered_row_norms
    from psp_st.training.recipe import train_from_config

    monkeypatch.setattr("psp_st.modules.teacher_init.load_teacher", lambda name, device="cpu": Stub())
    config = {**soup_recipe(files, tmp_path / "cache"), "norm_power": 0.5}
    train_from_config(config, output_dir=tmp_path / "run", max_steps=3)
    run = tmp_path / "run"
    mean = (weights(run / "soup" / "0" / "final") + weights(run / "soup" / "1" / "final")) / 2
    saved = weights(run / "final")
    np.testing.assert_allclose(saved, powered_row_norms(mean, 0.5), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(saved, axis=1), np.linalg.norm(mean, axis=1) ** 0.5, rtol=1e-5)
    assert json.loads((run / "train_metrics.json").read_text())["norm_power"] == 0.5
