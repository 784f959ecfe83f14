"""`psp-st build`: the release folder loads by short name, without flags or psp-st, and is reproducible."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

SENTENCES = ["A man is riding a horse on the beach.", "Two dogs play in the snow.", "a plate of food"]


def test_short_name_loads_static_export_without_flags_or_psp_st(release):
    # the user's line, in a fresh interpreter where psp_st cannot be imported, from the folder build ran in
    code = (
        "import sys; sys.modules['psp_st'] = None\n"
        "from sentence_transformers import SentenceTransformer\n"
        "model = SentenceTransformer('psp-en')\n"
        f"print(model.encode({SENTENCES!r}).shape)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=release.parent,
        capture_output=True,
        text=True,
        timeout=120,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("(3, 16)")


def test_release_holds_both_forms_and_the_record(release):
    assert json.loads((release / "modules.json").read_text())[0]["type"].endswith("StaticEmbedding")
    trainable_modules = json.loads((release / "trainable" / "modules.json").read_text())
    assert trainable_modules[0]["type"] == "psp_st.modules.psp.PSPEmbedding"
    info = json.loads((release / "psp_build.json").read_text())
    assert info["name"] == "psp-en" and info["seed"] == 7 and info["max_steps"] == 4
    assert "model.safetensors" in info["files"] and "trainable/sentencepiece.model" in info["files"]
    assert (release / "psp_recipe.yaml").is_file() and (release / "README.md").is_file()


def test_record_and_card_name_every_training_file_with_its_rows(release, tiny_recipe, data_dir):
    import pyarrow.parquet as pq
    import yaml

    training = json.loads((release / "psp_build.json").read_text())["training"]
    sources = yaml.safe_load(tiny_recipe.read_text())["data"]["sources"]
    matched = sorted(p for source in sources for p in data_dir.glob(source))
    assert training["files"] == {str(p.relative_to(data_dir)): pq.ParquetFile(p).metadata.num_rows for p in matched}
    assert training["pairs"] > 0
    card = (release / "README.md").read_text()
    assert all(f"| `{name}` | {rows:,} |" in card for name, rows in training["files"].items())
    assert training["pairs_per_source"] == {sources[0]: training["pairs"]}
    assert set(json.loads((release / "psp_build.json").read_text())["stage_seconds"]) >= {
        "data",
        "tokenizer",
        "training",
        "export",
    }


def test_static_and_trainable_forms_give_the_same_vectors(release, monkeypatch):
    from psp_st.inference.load import load

    monkeypatch.chdir(release.parent)
    static = load("psp-en").encode(SENTENCES)
    trainable = load("psp-en", trainable=True).encode(SENTENCES)
    # identical: both forms drop unknown pieces (they differ only on a text with no known piece)
    np.testing.assert_allclose(static, trainable, atol=1e-5)


def test_same_seed_twice_gives_the_same_vectors(release, build_cli, tiny_recipe, data_dir, tmp_path):
    from sentence_transformers import SentenceTransformer

    assert build_cli(tiny_recipe, data_dir, tmp_path) == 0
    first = SentenceTransformer(str(release), device="cpu").encode(SENTENCES)
    second = SentenceTransformer(str(tmp_path / "psp-en"), device="cpu").encode(SENTENCES)
    # same seed -> same tokenizer, data order and updates: bit for bit, as docs/training.md promises
    np.testing.assert_array_equal(first, second)
    assert (release / "model.safetensors").read_bytes() == (tmp_path / "psp-en" / "model.safetensors").read_bytes()


def test_different_seed_gives_different_vectors(release, build_cli, tiny_recipe, data_dir, tmp_path):
    from sentence_transformers import SentenceTransformer

    assert build_cli(tiny_recipe, data_dir, tmp_path, "--seed", "8", "--output", "other") == 0
    first = SentenceTransformer(str(release), device="cpu").encode(SENTENCES)
    other = SentenceTransformer(str(tmp_path / "other"), device="cpu").encode(SENTENCES)
    assert not np.allclose(first, other, atol=1e-3)


def test_build_records_suite_summary_in_card(build_cli, tiny_recipe, data_dir, tmp_path, monkeypatch):
    import psp_st.evaluation

    calls = []

    def fake_run_suite(model, suite="quick", data_dir=None):
        calls.append((suite, data_dir, model.encode(["a dog"]).shape))
        return {
            "summary": [{"group": "STS", "task": "stsb-test", "metric": "Spearman", "value": 12.345}],
            "seconds": 1.0,
            "skipped": {},
        }

    monkeypatch.setattr(psp_st.evaluation, "run_suite", fake_run_suite)
    from psp_st.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["build", str(tiny_recipe), "--max-steps", "1", "--data-dir", str(data_dir)]) == 0
    assert calls == [("quick", str(data_dir), (1, 16))]  # the static form, i.e. what ships, is evaluated
    info = json.loads((tmp_path / "psp-en" / "psp_build.json").read_text())
    assert info["evaluation"]["metrics"] == {"stsb-test / Spearman": 12.345}
    assert "| STS Benchmark test | Spearman | 12.35 |" in (tmp_path / "psp-en" / "README.md").read_text()


def test_threads_option_trains_on_that_many_threads_and_restores_torch(build_cli, tiny_recipe, data_dir, tmp_path):
    import torch

    threads = torch.get_num_threads()
    assert build_cli(tiny_recipe, data_dir, tmp_path, "--threads", "1") == 0
    assert json.loads((tmp_path / "psp-en" / "psp_build.json").read_text())["training"]["threads"] == 1
    assert torch.get_num_threads() == threads


def test_a_misspelled_suite_fails_before_training(tiny_recipe, data_dir, tmp_path, monkeypatch):
    import pytest

    import psp_st.training.recipe
    from psp_st.hub.build import build

    monkeypatch.setattr(psp_st.training.recipe, "train_from_config", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(ValueError, match=r"unknown suite 'qiuck'; choose one of \('quick', 'full', 'xling'\)"):
        build(str(tiny_recipe), output=tmp_path / "out", data_dir=data_dir, suite="qiuck")
    assert not (tmp_path / "out").exists()


def test_init_from_another_encoder_fails_before_training(tiny_recipe, data_dir, tmp_path, monkeypatch):
    """A zoo model as model.init_from trained a GRAN, then failed: "a psp-st release publishes PSPEmbedding"."""
    import pytest
    import yaml
    from sentence_transformers import SentenceTransformer

    import psp_st.training.recipe
    from psp_st.hub.build import build
    from psp_st.modules import WordAveraging

    SentenceTransformer(modules=[WordAveraging.from_texts(["a dog", "a cat"], embedding_dim=4)]).save(
        str(tmp_path / "w")
    )
    recipe = yaml.safe_load(tiny_recipe.read_text())
    recipe["model"] = {"init_from": str(tmp_path / "w")}
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(recipe))
    monkeypatch.setattr(psp_st.training.recipe, "train_from_config", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(ValueError, match=r"model\.init_from .* is a psp_st\.modules\.averaging\.WordAveraging model"):
        build(str(tmp_path / "r.yaml"), output=tmp_path / "out", data_dir=data_dir, suite=None)


def test_record_and_card_give_the_command_as_run(release_as_run, tiny_recipe, data_dir):
    command = (
        f"psp-st build {tiny_recipe} --output out/rel --data-dir {data_dir} --seed 5 --max-steps 4 --dtype float16"
    )
    assert json.loads((release_as_run / "psp_build.json").read_text())["command"] == f"{command} --no-eval"
    assert f"Built with `{command} --no-eval`" in (release_as_run / "README.md").read_text()


def test_overrides_are_folded_into_the_recorded_recipe(release_as_run):
    import yaml

    recipe = yaml.safe_load((release_as_run / "psp_recipe.yaml").read_text())
    assert recipe["seed"] == 5 and recipe["trainer"]["max_steps"] == 4 and recipe["release"] == {"dtype": "float16"}
    assert json.loads((release_as_run / "psp_build.json").read_text())["recipe"] == recipe


def test_rebuild_from_the_recorded_recipe_gives_the_same_release(release_as_run, data_dir, tmp_path):
    from sentence_transformers import SentenceTransformer

    from psp_st.cli import main

    again = tmp_path / "again"
    assert (
        main(
            [
                "build",
                str(release_as_run / "psp_recipe.yaml"),
                "--output",
                str(again),
                "--data-dir",
                str(data_dir),
                "--no-eval",
                "--no-progress",
            ]
        )
        == 0
    )
    assert json.loads((again / "psp_build.json").read_text())["weights_dtype"] == "float16"
    first = SentenceTransformer(str(release_as_run), device="cpu").encode(SENTENCES)
    np.testing.assert_allclose(
        SentenceTransformer(str(again), device="cpu").encode(SENTENCES), first, rtol=0, atol=1e-6
    )


def test_record_holds_the_sha256_of_every_recorded_file(release):
    from psp_st.io.checksums import sha256_file

    info = json.loads((release / "psp_build.json").read_text())
    assert info["sha256"] == {name: sha256_file(release / name) for name in info["files"]}


def test_a_killed_build_with_a_work_dir_resumes_from_its_checkpoint(build_cli, tiny_recipe, data_dir, tmp_path):
    """X4: the same command again resumes the run kept in --work-dir (here from checkpoint-2) to the same release."""
    import shutil

    from sentence_transformers import SentenceTransformer

    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(tiny_recipe.read_text().replace('save_strategy: "no"', "save_steps: 2"))
    args = ("--work-dir", "work", "--output", "out")
    assert build_cli(recipe, data_dir, tmp_path, *args) == 0
    first = SentenceTransformer(str(tmp_path / "out"), device="cpu").encode(SENTENCES)
    for name in ("checkpoint-4", "final", "train_metrics.json"):  # as if killed after step 2's checkpoint
        shutil.rmtree(tmp_path / "work" / name) if name != "train_metrics.json" else (tmp_path / "work" / name).unlink()
    shutil.rmtree(tmp_path / "out")
    assert build_cli(recipe, data_dir, tmp_path, *args) == 0
    resumed = SentenceTransformer(str(tmp_path / "out"), device="cpu").encode(SENTENCES)
    np.testing.assert_array_equal(first, resumed)


def test_a_resumed_build_says_its_times_are_those_of_the_last_run(build_cli, tiny_recipe, data_dir, tmp_path):
    """K6-1: a build that went on from a checkpoint timed only its last process: the record and card say so."""
    import shutil

    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(tiny_recipe.read_text().replace('save_strategy: "no"', "save_steps: 2"))
    args = ("--work-dir", "work", "--output", "out")
    assert build_cli(recipe, data_dir, tmp_path, *args) == 0
    assert "resumed_from" not in json.loads((tmp_path / "out" / "psp_build.json").read_text())["training"]
    for name in ("checkpoint-4", "final"):  # as if killed after step 2's checkpoint
        shutil.rmtree(tmp_path / "work" / name)
    assert build_cli(recipe, data_dir, tmp_path, *args) == 0
    assert json.loads((tmp_path / "out" / "psp_build.json").read_text())["training"]["resumed_from"] == "checkpoint-2"
    assert "of the last run only: it went on from checkpoint-2" in (tmp_path / "out" / "README.md").read_text()


def test_a_build_rerun_with_another_seed_names_the_work_dir_to_change(
    build_cli, tiny_recipe, data_dir, tmp_path, capsys
):
    """K6-3: the refusal said "another --output", which a build's --work-dir run ignores."""
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(tiny_recipe.read_text().replace('save_strategy: "no"', "save_steps: 2"))
    args = ("--work-dir", "work", "--output", "out")
    assert build_cli(recipe, data_dir, tmp_path, *args) == 0
    capsys.readouterr()
    assert build_cli(recipe, data_dir, tmp_path, *args, "--seed", "8") == 2
    error = capsys.readouterr().err
    assert "seed: 7 -> 8" in error and "(another --work-dir, or --overwrite)" in error
    assert "going on in the same --work-dir: the recipe differs" in error and "--resume" not in error  # no such flag


def test_a_build_killed_before_its_initial_model_runs_again_in_its_work_dir(build_cli, tiny_recipe, data_dir, tmp_path):
    """K6-5: killed in the teacher pass, a build's --work-dir held only its pair cache: the same command was refused."""
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(
        tiny_recipe.read_text().replace("  max_pairs: 600\n", "  max_pairs: 600\n  cache_dir: runs/cache\n")
    )
    (tmp_path / "work" / "runs" / "cache" / "pairs-0123").mkdir(parents=True)  # as the killed build left it
    assert build_cli(recipe, data_dir, tmp_path, "--work-dir", "work", "--output", "out") == 0
    assert (tmp_path / "out" / "model.safetensors").is_file()


def test_a_work_dir_holding_no_run_is_refused_by_its_own_option(build_cli, tiny_recipe, data_dir, tmp_path, capsys):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("mine")
    assert build_cli(tiny_recipe, data_dir, tmp_path, "--work-dir", "work", "--output", "out") == 2
    error = capsys.readouterr().err
    assert "--work-dir work is a folder that is not empty" in error and "--overwrite" in error
    assert not (tmp_path / "out").exists()


def test_a_soup_build_records_its_members_wise_ft_and_norm_power_in_the_record_and_card(
    build_cli, tiny_recipe, data_dir, tmp_path
):
    recipe = tmp_path / "soup.yaml"
    text = tiny_recipe.read_text().replace("seed: 7\n", "seed: 7\nsoup: 2\nwise_ft: 0.5\nnorm_power: 0.8\n")
    recipe.write_text(text, encoding="utf-8")
    assert build_cli(recipe, data_dir, tmp_path) == 0
    record = json.loads((tmp_path / "psp-en" / "psp_build.json").read_text())
    assert record["training"]["soup"] == {"members": 2, "seeds": [7, 8]} and record["training"]["wise_ft"] == 0.5
    card = (tmp_path / "psp-en" / "README.md").read_text()
    assert "mean of 2 runs" in card and "plus 0.5 times what training changed" in card
    assert record["training"]["norm_power"] == 0.8 and "raised to the power 0.8" in card


@pytest.mark.parametrize(
    ("path", "recorded"),
    [
        (r"D:\data\training_pairs\flickr8k_captions.parquet", "training_pairs/flickr8k_captions.parquet"),
        (r"C:\mine\pairs.tsv", "C:/mine/pairs.tsv"),  # another drive: relpath raised ValueError
    ],
)
def test_a_record_written_on_windows_names_its_files_with_slashes(path, recorded, monkeypatch):  # P6-7
    """A backslash name read on Linux/macOS has no known stem, so the card lost the file's licence."""
    import importlib
    import ntpath
    import types
    from pathlib import PureWindowsPath

    build = importlib.import_module("psp_st.hub.build")  # the module (psp_st.hub.build is also the function)

    monkeypatch.setattr(build, "os", types.SimpleNamespace(path=ntpath))
    monkeypatch.setattr(build, "Path", PureWindowsPath)
    assert build._relative(path, PureWindowsPath(r"D:\data")) == recorded


def test_a_run_record_naming_a_non_ascii_file_is_read_under_any_locale(tmp_path):  # P6-12
    """train_metrics.json is UTF-8; read with the locale's encoding (Windows cp1252, LANG=C ascii) it failed or garbled."""
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from psp_st.hub.build import training_record\n"
        "from psp_st.io.atomic import atomic_write_json\n"
        "run = Path(sys.argv[1])\n"
        "atomic_write_json(run / 'train_metrics.json', {'pairs_per_source': {'donn\\u00e9es.tsv': 3}})\n"
        "record = training_record({'data': {'sources': []}}, run, run)\n"
        "print(ascii(list(record['training']['pairs_per_source'])))\n"
    )
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['donn\\xe9es.tsv']"
