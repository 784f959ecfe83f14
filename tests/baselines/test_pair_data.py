from __future__ import annotations

import pytest

from benchmarks.baselines.pair_data import load_pair_frame


def test_turku_split_is_disjoint_and_complete(data_dir):
    train = load_pair_frame("turku-train", data_dir)
    evaluation = load_pair_frame("turku-eval", data_dir)
    release1 = load_pair_frame("turku-release1-dev", data_dir)
    opus_pb = load_pair_frame("turku-opus-pb-dev", data_dir)
    assert set(evaluation.fold) == set(range(85, 90))
    assert len(train) == len(opus_pb) + (len(release1) - len(evaluation))
    train_pairs = set(zip(train.sentence1, train.sentence2, strict=True))
    assert not train_pairs & set(zip(evaluation.sentence1, evaluation.sentence2, strict=True))
    assert {"label_str", "label"} <= set(train.columns)


def test_named_sets_and_limit(data_dir):
    frame = load_pair_frame("pawsx-de-test", data_dir, limit=5)
    assert list(frame.columns[:2]) == ["sentence1", "sentence2"] and len(frame) == 5
    assert len(load_pair_frame("training_pairs/parasci.parquet", data_dir, limit=3)) == 3


def test_unknown_names_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="unknown pair set 'stsb-valid'"):
        load_pair_frame("stsb-valid", tmp_path)
    with pytest.raises(ValueError, match="unknown PAWS-X language 'xx'"):
        load_pair_frame("pawsx-xx-dev", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"no data file matches .*msrpc/test\.parquet.*--data-dir"):
        load_pair_frame("msrpc-test", tmp_path)
