"""One rule for the shared data folder: env var, then ../shared/data from the working directory, then the checkout."""

from __future__ import annotations

from pathlib import Path

from psp_st.io.data_dir import default_data_dir


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
    from psp_st.training.pairs import resolve_data_path

    monkeypatch.setenv("PSP_ST_DATA_DIR", str(tmp_path))
    (tmp_path / "sts" / "stsbenchmark").mkdir(parents=True)
    (tmp_path / "sts" / "stsbenchmark" / "dev.parquet").write_bytes(b"")
    assert resolve_data_path("sts/stsbenchmark/dev.parquet") == [str(tmp_path / "sts/stsbenchmark/dev.parquet")]
    assert local_path("stsb-dev") == tmp_path / "sts/stsbenchmark/dev.parquet"
