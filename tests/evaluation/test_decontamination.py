"""The evaluation sentences that distillation and mining leave out, against the data files read with pandas."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import FIXTURE_DATA_DIR


def _texts(pattern: str, columns: tuple[str, ...] = ("sentence1", "sentence2"), folder: Path = FIXTURE_DATA_DIR):
    found: set[str] = set()
    for path in folder.glob(pattern):
        frame = pd.read_parquet(path)
        for column in columns:
            found.update(frame[column].dropna())
    return found


def _flores(folder: Path = FIXTURE_DATA_DIR) -> set[str]:
    found: set[str] = set()
    for path in (folder / "bitext").glob("*-en.parquet"):
        frame = pd.read_parquet(path)
        rows = frame[frame.corpus == "flores200-devtest"]
        found.update(rows.source)
        found.update(rows.target)
    return found


def test_the_english_suite_sentences_are_what_the_recipes_exclude():
    from psp_st.evaluation.decontamination import evaluation_sentences

    expected = _texts("sts/**/*.parquet") | _texts("pair_classification/msrpc/*.parquet")
    expected |= _texts("pair_classification/pawsx/en_*.parquet")
    assert evaluation_sentences(FIXTURE_DATA_DIR) == expected


def test_every_language_adds_tatoeba_turku_pawsx_and_only_the_flores_rows_of_bitext():
    from psp_st.evaluation.decontamination import evaluation_sentences

    expected = _texts("sts/**/*.parquet") | _texts("pair_classification/**/*.parquet")
    expected |= _texts("bitext_mining/**/*.parquet", ("source", "target")) | _flores()
    found = evaluation_sentences(FIXTURE_DATA_DIR, every_language=True)
    assert found == expected
    training_rows = _texts("bitext/*.parquet", ("source", "target")) - expected
    assert training_rows and not training_rows & found  # the fixture tells the two apart: bitext training rows stay


def test_a_folder_with_no_evaluation_file_gives_none_but_mine_refuses_it(tmp_path):
    """A recipe's own data folder may hold no evaluation file; `mine --exclude-data-dir <wrong folder>` must not
    silently exclude nothing."""
    from psp_st.evaluation.decontamination import evaluation_sentences
    from psp_st.mining.pairs import mining_config

    (tmp_path / "corpus").mkdir()
    assert evaluation_sentences(tmp_path) == evaluation_sentences(tmp_path, every_language=True) == set()
    with pytest.raises(ValueError, match=r"--exclude-data-dir .* holds no evaluation file .*pass the shared data"):
        mining_config({"exclude_data_dir": str(tmp_path)})


def test_mine_exclude_data_dir_leaves_out_tatoeba_and_flores_sentences():
    """`mine --exclude-data-dir` left the cross-lingual evaluation sets (Tatoeba, FLORES devtest) in mined bitext."""
    from psp_st.data.filters import text_key
    from psp_st.mining.pairs import mining_config

    config = mining_config({"exclude_data_dir": str(FIXTURE_DATA_DIR)}, bitext=True)
    tatoeba = _texts("bitext_mining/**/*.parquet", ("source", "target"))
    assert {text_key(text) for text in tatoeba | _flores()} <= config.exclude


def test_a_data_folder_inside_a_folder_named_bitext_mining_keeps_its_pair_files(tmp_path):
    """Only the data folder's own bitext_mining/ holds bitext: a parent folder of that name made every pair file
    read as bitext (source/target), so its STS/MSRPC/PAWS-X sentences were silently not excluded."""
    import shutil

    from psp_st.evaluation.decontamination import evaluation_sentences

    copy = tmp_path / "bitext_mining" / "data"
    shutil.copytree(FIXTURE_DATA_DIR, copy)
    assert evaluation_sentences(copy) == evaluation_sentences(FIXTURE_DATA_DIR)
    assert evaluation_sentences(copy, every_language=True) == evaluation_sentences(FIXTURE_DATA_DIR, True)
