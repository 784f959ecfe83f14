"""One rule for the shared data folder: env var, then ../shared/data from the working directory, then the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from psp_st.io.data_dir import default_data_dir, resolve_data_files


def test_env_var_wins_and_is_read_at_call_time(tmp_path, monkeypatch):
    monkeypatch.setenv("PSP_ST_DATA_DIR", str(tmp_path))
    assert default_data_dir() == tmp_path


def test_working_directory_convention(tmp_path, monkeypatch):
    monkeypatch.delenv("PSP_ST_DATA_DIR", raising=False)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    assert default_data_dir() == Path("../shared/data")


def test_training_and_evaluation_resolve_the_same_folder(tmp_path, monkeypatch):
    from psp_st.evaluation.loaders import local_path

    monkeypatch.setenv("PSP_ST_DATA_DIR", str(tmp_path))
    (tmp_path / "sts" / "stsbenchmark").mkdir(parents=True)
    (tmp_path / "sts" / "stsbenchmark" / "dev.parquet").write_bytes(b"")
    assert resolve_data_files("sts/stsbenchmark/dev.parquet") == [str(tmp_path / "sts/stsbenchmark/dev.parquet")]
    assert local_path("stsb-dev") == tmp_path / "sts/stsbenchmark/dev.parquet"


def test_resolver_prefers_the_working_directory_then_the_data_folder(tmp_path, monkeypatch):
    (tmp_path / "cwd" / "pairs").mkdir(parents=True)
    (tmp_path / "data" / "pairs").mkdir(parents=True)
    for folder in ("cwd", "data"):
        (tmp_path / folder / "pairs" / "b.tsv").write_text("x")
    (tmp_path / "data" / "pairs" / "a.tsv").write_text("x")
    (tmp_path / "data" / "pairs" / "c.txt").write_text("x")
    monkeypatch.chdir(tmp_path / "cwd")
    assert resolve_data_files("pairs/b.tsv", tmp_path / "data") == ["pairs/b.tsv"]
    found = resolve_data_files(["pairs/[ac].*"], tmp_path / "data")
    assert found == [str(tmp_path / "data/pairs/a.tsv"), str(tmp_path / "data/pairs/c.txt")]
    folder = resolve_data_files(tmp_path / "data/pairs", keep=lambda name: name.endswith(".tsv"))
    assert folder == [str(tmp_path / "data/pairs/a.tsv"), str(tmp_path / "data/pairs/b.tsv")]


def test_resolver_names_the_pattern_and_the_data_folder(tmp_path):
    with pytest.raises(
        FileNotFoundError,
        match=r"'nothing/\*\.parquet' \(a relative path is from the working directory .*, then the data folder .*\)"
        r".*PSP_ST_DATA_DIR",
    ):
        resolve_data_files("nothing/*.parquet", tmp_path)


def test_an_existing_file_named_like_a_glob_is_itself(tmp_path, monkeypatch):
    (tmp_path / "pairs [v2] é.parquet").write_bytes(b"")
    (tmp_path / "pairs v é.parquet").write_bytes(b"")  # what the name matches read as a glob
    monkeypatch.chdir(tmp_path)
    assert resolve_data_files("pairs [v2] é.parquet", tmp_path / "data") == ["pairs [v2] é.parquet"]


def test_a_data_folder_named_like_a_glob_is_no_pattern(tmp_path):
    folder = tmp_path / "data [2026] 中文"
    (folder / "pairs").mkdir(parents=True)
    (folder / "pairs" / "a.tsv").write_text("x")
    assert resolve_data_files("pairs/*.tsv", folder) == [str(folder / "pairs" / "a.tsv")]


def test_a_home_path_in_a_recipe_or_the_env_var_is_expanded(tmp_path, monkeypatch):
    from psp_st.evaluation.loaders import local_path

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "data é").mkdir()
    (tmp_path / "data é" / "p.tsv").write_text("x")
    monkeypatch.setenv("PSP_ST_DATA_DIR", "~/data é")
    assert default_data_dir() == tmp_path / "data é"
    assert resolve_data_files("~/data é/p.tsv") == [str(tmp_path / "data é" / "p.tsv")]
    assert resolve_data_files("p.tsv", "~/data é") == [str(tmp_path / "data é" / "p.tsv")]
    (tmp_path / "data é" / "sts" / "stsbenchmark").mkdir(parents=True)
    (tmp_path / "data é" / "sts" / "stsbenchmark" / "dev.parquet").write_bytes(b"")
    assert local_path("stsb-dev", "~/data é") == tmp_path / "data é" / "sts/stsbenchmark/dev.parquet"
