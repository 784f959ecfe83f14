from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from psp_st.data.licenses import UNKNOWN, data_license
from tests.conftest import data_path

TABLE = Path(__file__).resolve().parents[2] / "psp_st" / "resources" / "data_licenses.yaml"


def test_a_training_file_gets_the_licence_of_the_packaged_table():
    genre, licence = yaml.safe_load(TABLE.read_text(encoding="utf-8"))["coco_captions_val2017"]
    assert data_license("training_pairs/coco_captions_val2017.parquet") == (genre, licence)


def test_a_file_missing_from_the_table_says_so():
    assert data_license("training_pairs/my_own_pairs.parquet") == UNKNOWN


#: ``corpus`` value prefix in the bitext files -> the name the table gives that corpus
BITEXT_CORPORA = {"news": "WMT", "multi30k": "Multi30k", "tico19": "TICO-19", "flores200": "FLORES-200"}


@pytest.mark.shared_data
@pytest.mark.parametrize("lang", ["ar", "cs", "de", "es", "fi", "fr", "ru", "sv", "tr", "zh"])
def test_a_bitext_file_is_described_by_the_corpora_it_holds(lang):
    import pandas as pd

    corpora = pd.read_parquet(data_path(f"bitext/{lang}-en.parquet"), columns=["corpus"])["corpus"].unique()
    held = {name for prefix, name in BITEXT_CORPORA.items() if any(str(c).startswith(prefix) for c in corpora)}
    genre, licence = data_license(f"bitext/{lang}-en.parquet")
    assert {name for name in BITEXT_CORPORA.values() if name in genre} == held
    assert {name for name in BITEXT_CORPORA.values() if name in licence} == held
