"""Fixtures for the hub tests: a tiny psp-en recipe, one release folder built from it and one `psp-st train` run
(session-wide)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TINY_RECIPE = """\
name: psp-en
description: tiny psp-en recipe for tests
seed: 7
data:
  sources: [training_pairs/coco_captions_val2017.parquet]
  max_pairs: 600
tokenizer: {vocab_size: 400}
model: {type: psp, embedding_dim: 16}
loss: {name: margin, margin: 0.4}
megabatch: {size: 2, anneal: 2}
trainer:
  per_device_train_batch_size: 32
  learning_rate: 0.01
  eval_strategy: "no"
  save_strategy: "no"
  logging_steps: 1000
  disable_tqdm: true
evaluation: {}
"""

TRAIN_RECIPE = """\
name: tiny-train
seed: 3
data:
  sources: [{source}]
  max_pairs: 300
tokenizer: {{vocab_size: 300}}
model: {{type: psp, embedding_dim: 8}}
loss: {{name: margin, margin: 0.4}}
megabatch: {{size: 2, anneal: 2}}
trainer: {{per_device_train_batch_size: 32, learning_rate: 0.01, eval_strategy: "no", save_strategy: "no"}}
evaluation: {{}}
"""


#: Optimizer steps of the tiny builds.
TINY_STEPS = 4


@pytest.fixture(scope="session")
def tiny_recipe(tmp_path_factory, data_dir) -> Path:
    """A recipe named psp-en that trains a 16-dim model on 600 COCO caption pairs (a few seconds)."""
    path = tmp_path_factory.mktemp("recipe") / "tiny-psp-en.yaml"
    path.write_text(TINY_RECIPE, encoding="utf-8")
    return path


def run_build(recipe: Path, data_dir: Path, cwd: Path, *extra: str) -> int:
    """``psp-st build RECIPE --max-steps 4 --no-eval --no-progress`` run from ``cwd``, like a user would."""
    from psp_st.cli import main

    before = Path.cwd()
    os.chdir(cwd)
    try:
        return main(
            [
                "build",
                str(recipe),
                "--max-steps",
                str(TINY_STEPS),
                "--data-dir",
                str(data_dir),
                "--no-eval",
                "--no-progress",
                *extra,
            ]
        )
    finally:
        os.chdir(before)


@pytest.fixture(scope="session")
def build_cli():
    """:func:`run_build` as a fixture (test modules cannot import this conftest)."""
    return run_build


@pytest.fixture(scope="session")
def release(tmp_path_factory, tiny_recipe, data_dir) -> Path:
    """The ./psp-en folder written by a tiny `psp-st build` run with no --output (do not modify it)."""
    workdir = tmp_path_factory.mktemp("build")
    assert run_build(tiny_recipe, data_dir, workdir) == 0
    return workdir / "psp-en"


@pytest.fixture
def release_copy(release, tmp_path) -> Path:
    """A private copy of :func:`release` that a test may damage."""
    import shutil

    copy = tmp_path / "psp-en"
    shutil.copytree(release, copy)
    return copy


@pytest.fixture(scope="session")
def release_as_run(tmp_path_factory, tiny_recipe, data_dir) -> Path:
    """A tiny build run from its folder with a relative --output and overrides: the folder ``out/rel`` (do not modify)."""
    workdir = tmp_path_factory.mktemp("build-as-run")
    assert run_build(tiny_recipe, data_dir, workdir, "--output", "out/rel", "--seed", "5", "--dtype", "float16") == 0
    return workdir / "out" / "rel"


@pytest.fixture
def changed_release(release_copy) -> Path:
    """:func:`release_copy` with the rows of its root weights reversed: a valid file of the recorded size."""
    from safetensors.torch import load_file, save_file

    tensors = load_file(release_copy / "model.safetensors")
    save_file({key: value.flip(0).contiguous() for key, value in tensors.items()}, release_copy / "model.safetensors")
    return release_copy


@pytest.fixture(scope="session")
def train_output(tmp_path_factory, data_dir) -> Path:
    """The final/ folder of a tiny `psp-st train` run."""
    from psp_st.cli import main

    root = tmp_path_factory.mktemp("train")
    recipe = root / "tiny-train.yaml"
    recipe.write_text(TRAIN_RECIPE.format(source=data_dir / "training_pairs/coco_captions_val2017.parquet"))
    code = main(["train", "--config", str(recipe), "--output", str(root / "run"), "--max-steps", "2", "--no-progress"])
    assert code == 0
    return root / "run" / "final"
