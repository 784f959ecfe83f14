from __future__ import annotations

from pathlib import Path

import yaml

from psp_st.data.licenses import UNKNOWN, data_license

TABLE = Path(__file__).resolve().parents[2] / "psp_st" / "resources" / "data_licenses.yaml"


def test_a_training_file_gets_the_licence_of_the_packaged_table():
    genre, licence = yaml.safe_load(TABLE.read_text(encoding="utf-8"))["coco_captions_val2017"]
    assert data_license("training_pairs/coco_captions_val2017.parquet") == (genre, licence)


def test_a_file_missing_from_the_table_says_so():
    assert data_license("training_pairs/my_own_pairs.parquet") == UNKNOWN
