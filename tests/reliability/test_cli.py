"""The CLI: one overwrite policy, one error boundary (one line, exit code 2, -v traceback), finite outputs."""

from __future__ import annotations

import errno
import logging
import os

import numpy as np
import pytest

from psp_st.cli import EXIT_ERROR, main


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("a man rides a horse\ntwo kids play\n", encoding="utf-8")
    return path


@pytest.fixture
def pairs_file(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("a dog runs\ta dog is running\n", encoding="utf-8")
    return path


def _embed(model, source, output, *extra):
    return main(
        ["embed", "--model", str(model), "--input", str(source), "--output", str(output), "--no-progress", *extra]
    )


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


# -- overwrite policy ---------------------------------------------------------------------------------------
def test_embed_refuses_existing_output(saved_model, text_file, tmp_path, capsys):
    out = tmp_path / "out.npy"
    out.write_bytes(b"precious")
    assert _embed(saved_model, text_file, out) == EXIT_ERROR
    assert "already exists: pass --overwrite" in _one_error_line(capsys)
    assert out.read_bytes() == b"precious"


def test_embed_overwrite_replaces_existing_output(saved_model, text_file, tmp_path):
    out = tmp_path / "out.npy"
    out.write_bytes(b"old")
    assert _embed(saved_model, text_file, out, "--overwrite") == 0
    assert np.load(out).shape == (2, 16)


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_embed_output_equal_to_input_is_refused(saved_model, text_file, capsys, overwrite):
    before = text_file.read_bytes()
    assert _embed(saved_model, text_file, text_file, *overwrite) == EXIT_ERROR
    assert "is the input" in _one_error_line(capsys)
    assert text_file.read_bytes() == before


def test_embed_output_that_is_a_symlink_to_the_input_is_refused(saved_model, text_file, tmp_path, capsys):
    link = tmp_path / "link.npy"
    link.symlink_to(text_file)
    before = text_file.read_bytes()
    assert _embed(saved_model, text_file, link, "--overwrite") == EXIT_ERROR
    assert "is the input" in _one_error_line(capsys)
    assert text_file.read_bytes() == before


def test_embed_output_inside_the_model_folder_path_spelled_differently_is_refused(saved_model, text_file, capsys):
    weights = next(saved_model.rglob("model.safetensors"))
    spelled = saved_model / ".." / saved_model.name / weights.relative_to(saved_model)
    assert _embed(saved_model, text_file, spelled, "--overwrite") == EXIT_ERROR
    assert "is the input" in _one_error_line(capsys)


def test_score_refuses_existing_output_and_input_as_output(saved_model, pairs_file, tmp_path, capsys):
    out = tmp_path / "scores.tsv"
    out.write_text("keep")
    assert (
        main(["score", "--model", str(saved_model), "--pairs", str(pairs_file), "--output", str(out), "--no-progress"])
        == EXIT_ERROR
    )
    assert "--overwrite" in _one_error_line(capsys)
    assert (
        main(
            [
                "score",
                "--model",
                str(saved_model),
                "--pairs",
                str(pairs_file),
                "--output",
                str(pairs_file),
                "--overwrite",
                "--no-progress",
            ]
        )
        == EXIT_ERROR
    )
    assert "is the input" in _one_error_line(capsys)
    assert out.read_text() == "keep"


def test_data_refuses_existing_output(tmp_path, capsys):
    source = tmp_path / "pairs.tsv"
    source.write_text("a dog\ta puppy\n")
    out = tmp_path / "out.parquet"
    out.write_text("keep")
    assert main(["data", str(source), "--output", str(out)]) == EXIT_ERROR
    assert "--overwrite" in _one_error_line(capsys)
    assert main(["data", str(source), "--output", str(source), "--overwrite"]) == EXIT_ERROR
    assert "is the input" in _one_error_line(capsys)


def test_mine_refuses_existing_output_before_loading_the_teacher(tmp_path, capsys):
    source = tmp_path / "sentences.txt"
    source.write_text("a dog\n")
    out = tmp_path / "pairs.parquet"
    out.write_text("keep")
    assert (
        main(["mine", "--input", str(source), "--output", str(out), "--model", str(tmp_path / "no-teacher")])
        == EXIT_ERROR
    )
    assert "already exists: pass --overwrite" in _one_error_line(capsys)


def test_a_new_output_inside_the_model_folder_is_refused(saved_model, text_file, capsys):
    assert _embed(saved_model, text_file, saved_model / "vectors.npy") == EXIT_ERROR
    assert "is the input" in _one_error_line(capsys)
    assert not (saved_model / "vectors.npy").exists()


def test_an_empty_model_name_is_named_not_taken_for_the_current_folder(saved_model, text_file, capsys, monkeypatch):
    """`--model "$UNSET"` in a model folder: not that model, nor "the output is the input ''"."""
    monkeypatch.chdir(saved_model)
    assert _embed("", text_file, "vectors.npy") == EXIT_ERROR
    assert "the model name is empty" in _one_error_line(capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["push", "", "--repo-id", "org/name", "--dry-run", "staged"],
        ["build", "psp-en", "--output", ""],
        ["mine", "--input", "in.txt", "--output", ""],
    ],
)
def test_an_empty_path_option_is_refused_not_the_current_folder(saved_model, capsys, monkeypatch, argv):
    """`push "$UNSET"` in a model folder staged (or uploaded) that folder: Path("") is the current folder."""
    monkeypatch.chdir(saved_model)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == EXIT_ERROR
    assert "empty path" in capsys.readouterr().err
    assert not (saved_model / "staged").exists()


@pytest.mark.parametrize("where", ["output", "work-dir"])
def test_mine_output_or_work_dir_inside_an_input_folder_is_refused(tmp_path, capsys, where):
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "a.txt").write_text("a dog\na cat\n")
    inside, outside = shards / "pairs.parquet", tmp_path / "pairs.parquet"
    paths = ["--output", str(outside), "--work-dir", str(inside)] if where == "work-dir" else ["--output", str(inside)]
    assert main(["mine", "--input", str(shards), *paths, "--model", str(tmp_path / "no-teacher")]) == EXIT_ERROR
    assert "is the input" in _one_error_line(capsys)
    assert sorted(path.name for path in shards.iterdir()) == ["a.txt"]


RECIPE = "name: tiny\ndata: {sources: [x.parquet]}\n"


@pytest.fixture
def recipe_and_busy_folder(tmp_path):
    """A valid tiny recipe and a folder holding a file of the user's."""
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(RECIPE)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    return recipe, busy


def test_train_refuses_non_empty_run_folder(recipe_and_busy_folder, capsys):
    recipe, run = recipe_and_busy_folder
    assert main(["train", "--config", str(recipe), "--output", str(run)]) == EXIT_ERROR
    assert "is a folder that is not empty: pass --overwrite" in _one_error_line(capsys)


def test_train_resume_refuses_a_folder_holding_no_run(recipe_and_busy_folder, capsys):
    recipe, busy = recipe_and_busy_folder
    assert main(["train", "--config", str(recipe), "--output", str(busy), "--resume"]) == EXIT_ERROR
    assert "holds no psp-st run (no initial/ folder)" in _one_error_line(capsys)


def test_train_resume_refuses_a_run_folder_holding_its_recipe(tmp_path, capsys):
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(RECIPE)
    (tmp_path / "initial").mkdir()
    assert main(["train", "--config", str(recipe), "--output", str(tmp_path), "--resume"]) == EXIT_ERROR
    assert "is the input" in _one_error_line(capsys)


@pytest.mark.parametrize("command", ["train", "build"])
@pytest.mark.parametrize("steps", ["0", "-5"])
def test_max_steps_below_one_is_one_line(recipe_and_busy_folder, tmp_path, capsys, command, steps):
    recipe, _ = recipe_and_busy_folder
    where = ["--config", str(recipe)] if command == "train" else [str(recipe)]
    assert main([command, *where, "--output", str(tmp_path / "out"), f"--max-steps={steps}"]) == EXIT_ERROR
    assert f"--max-steps must be >= 1, got {steps}" in _one_error_line(capsys)


def test_train_reads_relative_data_paths_in_its_data_dir(recipe_and_busy_folder, tmp_path, capsys):
    recipe, _ = recipe_and_busy_folder
    folder = tmp_path / "data"
    folder.mkdir()
    assert (
        main(["train", "--config", str(recipe), "--output", str(tmp_path / "run"), "--data-dir", str(folder)])
        == EXIT_ERROR
    )
    assert f"then the data folder {folder}" in _one_error_line(capsys)


def test_ctrl_c_during_train_is_one_line_with_exit_130(recipe_and_busy_folder, tmp_path, monkeypatch, capsys):
    import psp_st.training.recipe as recipe_module

    message = "training interrupted at step 3; run/checkpoint-2 is the last checkpoint: --resume continues from it"

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt(message)

    monkeypatch.setattr(recipe_module, "train_from_config", interrupted)
    recipe, _ = recipe_and_busy_folder
    assert main(["train", "--config", str(recipe), "--output", str(tmp_path / "run")]) == 130
    assert _one_error_line(capsys) == f"psp-st train: {message}"


def test_build_refuses_unrelated_non_empty_folder_before_training(recipe_and_busy_folder, tmp_path, capsys):
    recipe, out = recipe_and_busy_folder
    assert main(["build", str(recipe), "--output", str(out), "--data-dir", str(tmp_path)]) == EXIT_ERROR
    assert "not empty: pass --overwrite" in _one_error_line(capsys)
    assert (out / "notes.txt").read_text() == "mine"


def test_build_refuses_output_containing_its_recipe(tmp_path, capsys):
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(RECIPE)
    assert (
        main(["build", str(recipe), "--output", str(tmp_path), "--data-dir", str(tmp_path), "--overwrite"])
        == EXIT_ERROR
    )
    assert "is the input" in _one_error_line(capsys)


# -- full disk, permissions -----------------------------------------------------------------------------------
def test_embed_on_a_full_disk_fails_cleanly_without_temp_file(saved_model, text_file, tmp_path, monkeypatch, capsys):
    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    assert _embed(saved_model, text_file, out_dir / "e.npy") == EXIT_ERROR
    assert f"{out_dir / 'e.npy'}: no space left on the device" in _one_error_line(capsys)
    assert list(out_dir.iterdir()) == []


def test_a_short_write_names_the_output(saved_model, text_file, tmp_path, capsys):
    """X2: a full disk or a file size limit while a shard is written names the output, not just the byte counts."""
    import resource

    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100, limit[1]))
    try:
        args = ["--shard-rows", "100", "--threads", "1"]
        assert _embed(saved_model, text_file, tmp_path / "es", *args) == EXIT_ERROR
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limit)
    line = _one_error_line(capsys)
    assert f"{tmp_path / 'es'}/" in line and "File too large (a file size limit" in line


def test_outputs_get_the_umask_permissions(saved_model, text_file, tmp_path):
    old = os.umask(0o022)
    try:
        assert _embed(saved_model, text_file, tmp_path / "a.npy") == 0
        os.umask(0o002)
        assert _embed(saved_model, text_file, tmp_path / "b.npy") == 0
    finally:
        os.umask(old)
    assert (tmp_path / "a.npy").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b.npy").stat().st_mode & 0o777 == 0o664


# -- the error boundary -------------------------------------------------------------------------------------
def test_model_typo_is_one_line_with_the_fix(text_file, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _embed("./psp-enn", text_file, tmp_path / "o.npy") == EXIT_ERROR
    line = _one_error_line(capsys)
    assert "psp-enn" in line and "check the path" in line and "psp-st build psp-en" in line


def test_short_name_without_build_is_one_line_with_the_build_command(text_file, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _embed("psp-en", text_file, tmp_path / "o.npy") == EXIT_ERROR
    line = _one_error_line(capsys)
    assert "unreachable" in line and "`psp-st build psp-en`" in line


def test_input_that_is_a_folder_is_one_line(saved_model, tmp_path, capsys):
    assert _embed(saved_model, tmp_path, tmp_path / "o.npy") == EXIT_ERROR
    assert str(tmp_path) in _one_error_line(capsys)


def test_yaml_error_is_one_line_naming_the_file(tmp_path, capsys):
    recipe = tmp_path / "broken.yaml"
    recipe.write_text("data: {sources: [x.parquet]\ntrainer: [\n")
    assert main(["train", "--config", str(recipe), "--output", str(tmp_path / "run")]) == EXIT_ERROR
    assert "broken.yaml" in _one_error_line(capsys)


def test_nan_learning_rate_is_one_line_naming_the_key(tmp_path, capsys):
    recipe = tmp_path / "nan.yaml"
    recipe.write_text(RECIPE + "trainer: {learning_rate: .nan}\n")
    assert main(["train", "--config", str(recipe), "--output", str(tmp_path / "run")]) == EXIT_ERROR
    assert "trainer.learning_rate is nan" in _one_error_line(capsys)


def test_key_error_is_one_line(monkeypatch, capsys):
    import psp_st.cli.tokenizer as command

    def missing(args):
        raise KeyError("vocab_size")

    monkeypatch.setattr(command, "run_train", missing)
    assert main(["tokenizer", "train", "--input", "x", "--output", "y"]) == EXIT_ERROR
    assert "missing key 'vocab_size'" in _one_error_line(capsys)


def test_verbose_shows_the_traceback(text_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from psp_st.inference.load import ModelNotFoundError

    with pytest.raises(ModelNotFoundError, match="psp-enn"):
        main(["-v", "embed", "--model", "./psp-enn", "--input", str(text_file), "--output", str(tmp_path / "o.npy")])


@pytest.mark.parametrize(
    "code, hint", [(errno.ENOSPC, "free some space"), (errno.EROFS, "writable folder"), (errno.EISDIR, "not a folder")]
)
def test_os_errors_name_the_file_and_the_fix(code, hint):
    from psp_st.cli import error_message

    message = error_message(OSError(code, os.strerror(code), "/data/out.npy"))
    assert message.startswith("/data/out.npy: ") and hint in message


def test_a_read_only_datasets_cache_names_the_variable_that_moves_it(tmp_path, monkeypatch):  # P6-4
    """A read-only HOME: data, train, build and eval failed with "<HOME>/.cache: ... (write to a writable folder)"."""
    import datasets.config

    from psp_st.cli import error_message

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "home/.cache/huggingface/datasets")
    message = error_message(OSError(errno.EROFS, os.strerror(errno.EROFS), str(tmp_path / "home/.cache")))
    assert "set HF_DATASETS_CACHE (or HF_HOME) to a writable folder" in message


def test_a_file_name_a_library_cannot_take_says_set_pythonutf8(tmp_path, capsys):  # P6-9
    """pyarrow takes UTF-8 names: a Parquet input named in Latin-1 (or any non-ASCII name under LANG=C)."""
    import pandas as pd

    path = tmp_path / os.fsdecode(b"s\xe9.parquet")
    pd.DataFrame({"sentence": ["a dog runs"]}).to_parquet(str(tmp_path / "s.parquet"))
    (tmp_path / "s.parquet").rename(path)
    argv = ["embed", "--model", "m", "--input", str(path), "--output", str(tmp_path / "o"), "--shard-rows", "10"]
    assert main(argv) == EXIT_ERROR
    assert "a file or folder name is not UTF-8 here" in _one_error_line(capsys)


def test_quiet_by_default_and_info_with_verbose(saved_model, text_file, tmp_path):
    assert _embed(saved_model, text_file, tmp_path / "a.npy") == 0
    assert logging.getLogger().level == logging.WARNING
    assert (
        main(
            [
                "-v",
                "embed",
                "--model",
                str(saved_model),
                "--input",
                str(text_file),
                "--output",
                str(tmp_path / "b.npy"),
                "--no-progress",
            ]
        )
        == 0
    )
    assert logging.getLogger().level == logging.INFO


def test_model_with_nan_weights_writes_nothing(saved_model, text_file, tmp_path, capsys, poison):
    poison(saved_model, float("nan"))
    assert _embed(saved_model, text_file, tmp_path / "o.npy") == EXIT_ERROR
    assert "non-finite" in _one_error_line(capsys)
    assert not (tmp_path / "o.npy").exists()


# -- push -------------------------------------------------------------------------------------------------------
def test_push_of_a_psp_root_folder_loads_without_trust_flag(saved_model, monkeypatch):
    from sentence_transformers import SentenceTransformer

    from psp_st.hub.push import push

    pushed = []
    monkeypatch.setattr(
        SentenceTransformer,
        "push_to_hub",
        lambda self, repo_id, **kwargs: pushed.append(repo_id) or "https://hub/commit",
    )
    assert push(saved_model, "org/final") == "https://hub/commit" and pushed == ["org/final"]


def test_push_refuses_a_symlink_inside_the_folder(saved_model, tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("ssh key")
    (saved_model / "extra.txt").symlink_to(secret)
    assert main(["push", str(saved_model), "--repo-id", "org/x", "--dry-run", str(tmp_path / "out")]) == EXIT_ERROR
    assert "extra.txt is a symbolic link" in _one_error_line(capsys)
    assert not (tmp_path / "out" / "extra.txt").exists()


@pytest.mark.parametrize("value", ["0", "-5"])
def test_embed_chunk_size_must_be_positive(saved_model, text_file, tmp_path, capsys, value):
    assert _embed(saved_model, text_file, tmp_path / "o.npy", "--chunk-size", value) == EXIT_ERROR
    assert "--chunk-size" in _one_error_line(capsys) and not (tmp_path / "o.npy").exists()


def test_output_below_a_file_is_one_line(saved_model, text_file, tmp_path, capsys):
    assert _embed(saved_model, text_file, text_file / "o.npy") == EXIT_ERROR
    assert f"{text_file} is a file, not a folder" in _one_error_line(capsys)


def test_corrupt_tokenizer_json_of_a_static_export_is_one_line(saved_model, text_file, tmp_path, capsys):
    from psp_st.modules.psp import PSPEmbedding

    static = tmp_path / "static"
    PSPEmbedding.load(str(saved_model)).export_static(static)
    (static / "tokenizer.json").write_text("{bad")
    assert _embed(static, text_file, tmp_path / "o.npy") == EXIT_ERROR
    assert "cannot load the model" in _one_error_line(capsys)


def test_tokenizer_train_refuses_its_input_and_an_existing_output(text_file, tmp_path, capsys):
    before = text_file.read_bytes()
    args = ["tokenizer", "train", "--input", str(text_file), "--vocab-size", "20", "--threads", "1", "--output"]
    assert main([*args, str(text_file), "--overwrite"]) == EXIT_ERROR
    assert "is the input" in _one_error_line(capsys) and text_file.read_bytes() == before
    out = tmp_path / "sp.model"
    out.write_bytes(b"precious")
    assert main([*args, str(out)]) == EXIT_ERROR
    assert "already exists: pass --overwrite" in _one_error_line(capsys) and out.read_bytes() == b"precious"
    assert main([*args, str(out), "--overwrite"]) == 0 and out.read_bytes() != b"precious"
