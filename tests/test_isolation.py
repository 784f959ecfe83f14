"""The suite keeps what it writes in pytest's temp folders (T13-1: the datasets cache grew under ~/.cache)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def test_a_loaded_files_arrow_copy_is_written_under_the_sessions_temp_folder(tmp_path, tmp_path_factory):
    from psp_st.data.loaders import load_pairs

    path = tmp_path / "pairs.parquet"
    pd.DataFrame({"sentence1": ["a dog runs"], "sentence2": ["a dog is running"]}).to_parquet(path)
    files = [Path(file["filename"]) for file in load_pairs(path).cache_files]
    assert files and all(file.is_relative_to(tmp_path_factory.getbasetemp()) for file in files)
