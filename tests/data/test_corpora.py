"""Corpus loaders: ParaNMT scored pairs, Opusparcus train/dev, bitext, our training-pair files."""

from __future__ import annotations

import bz2

import pytest

from psp_st.data import load_bitext, load_opusparcus, load_scored_pairs, load_training_pairs


def test_scored_pairs_keep_the_score(fixture_path, cache_dir):
    pairs = load_scored_pairs(fixture_path("paranmt.tsv"), cache_dir=cache_dir)
    assert pairs["score"][:] == [0.91, 0.75, 0.40, 0.12]


def test_scored_pairs_without_score_raise(fixture_path, cache_dir):
    with pytest.raises(ValueError, match="no score column"):
        load_scored_pairs(fixture_path("header.tsv"), cache_dir=cache_dir)


def test_opusparcus_train_reads_the_ranked_layout(fixture_path, cache_dir):
    pairs = load_opusparcus(fixture_path("en-train.txt"), cache_dir=cache_dir)
    assert pairs.column_names == ["sentence1", "sentence2", "score"]
    assert pairs[0] == {"sentence1": "Get up , Sam .", "sentence2": "On your feet , Sam .", "score": 97.2}


def test_opusparcus_top_n_is_the_head_of_the_ranking(fixture_path, cache_dir):
    pairs = load_opusparcus(fixture_path("en-train.txt"), top_n=2, cache_dir=cache_dir)
    assert pairs["sentence1"][:] == ["Get up , Sam .", "I am sorry ."]


def test_opusparcus_top_n_sorts_unranked_input(fixture_path, tmp_path, cache_dir):
    lines = fixture_path("en-train.txt").read_text().splitlines()
    shuffled = tmp_path / "en-train.txt"
    shuffled.write_text("\n".join([lines[3], lines[0], lines[4], lines[1], lines[2]]) + "\n")
    pairs = load_opusparcus(shuffled, top_n=2, cache_dir=cache_dir)
    assert pairs["score"][:] == [97.2, 80.5]


def test_opusparcus_compressed_train_streams_top_n(fixture_path, tmp_path):
    target = tmp_path / "en-train.txt.bz2"
    target.write_bytes(bz2.compress(fixture_path("en-train.txt").read_bytes()))
    pairs = load_opusparcus(target, top_n=3, streaming=True)
    assert [row["score"] for row in pairs] == [97.2, 80.5, 51.0]


def test_opusparcus_dev_keeps_annotation_and_selects_paraphrases(fixture_path, cache_dir):
    every = load_opusparcus(fixture_path("en-dev.txt"), cache_dir=cache_dir)
    assert every["score"][:] == [4.0, 1.0, 3.5, 1.5, 3.0]
    good = load_opusparcus(fixture_path("en-dev.txt"), min_annotation=3.0, cache_dir=cache_dir)
    assert good["sentence1"][:] == ["Get out of here .", "He is late .", "See you later ."]


def test_opusparcus_dev_scores_outside_1_to_4_raise(fixture_path, cache_dir):
    with pytest.raises(ValueError, match=r"annotation scores must be in \[1.0, 4.0\]; row 0"):
        load_opusparcus(fixture_path("en-train.txt"), split="dev", cache_dir=cache_dir)


def test_opusparcus_top_n_on_dev_is_refused(fixture_path):
    with pytest.raises(ValueError, match="top_n"):
        load_opusparcus(fixture_path("en-dev.txt"), top_n=2)


def test_bitext_maps_source_to_sentence1_and_keeps_lang(write_parquet, cache_dir):
    path = write_parquet(
        "de-en.parquet",
        {
            "source": ["Guten Morgen", "Danke", "Hallo"],
            "target": ["Good morning", "Thanks", "Hello"],
            "lang": ["de", "de", "de"],
            "corpus": ["newstest", "flores200-devtest", "newstest"],
        },
    )
    pairs = load_bitext(path, cache_dir=cache_dir)
    assert pairs.column_names == ["sentence1", "sentence2", "lang"]
    assert pairs[0] == {"sentence1": "Guten Morgen", "sentence2": "Good morning", "lang": "de"}
    without_flores = load_bitext(path, exclude_corpora=["flores200-devtest"], cache_dir=cache_dir)
    assert without_flores["sentence1"][:] == ["Guten Morgen", "Hallo"]
    assert without_flores.column_names == ["sentence1", "sentence2", "lang"]


def test_training_pairs_get_group_ids_unique_across_files(write_parquet, tmp_path, cache_dir):
    write_parquet("tp/coco.parquet", {"sentence1": ["a", "b"], "sentence2": ["c", "d"], "group_id": ["7", "8"]})
    write_parquet("tp/flickr.parquet", {"sentence1": ["e"], "sentence2": ["f"], "group_id": ["7"], "split": ["train"]})
    write_parquet("tp/wiki.parquet", {"sentence1": ["x", "x", "y"], "sentence2": ["x1", "x2", "y1"]})
    pairs = load_training_pairs(tmp_path / "tp", cache_dir=cache_dir)
    assert pairs.column_names == ["sentence1", "sentence2", "group_id"]
    groups = pairs["group_id"][:]
    assert groups[:3] == ["coco:7", "coco:8", "flickr:7"]
    assert groups[3] == groups[4] != groups[5]  # wiki pairs sharing sentence1 form one group
    assert groups[3].startswith("wiki:")


def test_training_pairs_stream_with_the_same_group_ids(write_parquet, tmp_path, cache_dir):
    write_parquet("tp/coco.parquet", {"sentence1": ["a"], "sentence2": ["c"], "group_id": ["7"]})
    write_parquet("tp/wiki.parquet", {"sentence1": ["x"], "sentence2": ["x1"]})
    stream = [row["group_id"] for row in load_training_pairs(tmp_path / "tp", streaming=True)]
    assert stream == load_training_pairs(tmp_path / "tp", cache_dir=cache_dir)["group_id"][:]


@pytest.mark.shared_data
def test_real_training_pairs_have_482k_rows_and_group_ids(data_dir, tmp_path):
    pairs = load_training_pairs(data_dir / "training_pairs", cache_dir=str(tmp_path / "cache"))
    assert len(pairs) == 482_315
    assert pairs[0]["group_id"].startswith("coco_captions_val2017:")


def test_int_group_ids_are_stable_int64_codes(pairs_dataset):
    from psp_st.data import group_code, int_group_ids

    pairs = pairs_dataset(
        {"sentence1": ["a", "b", "c"], "sentence2": ["x", "y", "z"], "group_id": ["f:1", "f:1", None]}
    )
    coded = int_group_ids(pairs)
    assert coded.features["group_id"].dtype == "int64"
    codes = coded["group_id"][:]
    assert codes[0] == codes[1] == group_code("f:1") >= 0 and codes[2] == -1
    streamed = [row["group_id"] for row in int_group_ids(pairs.to_iterable_dataset())]
    assert streamed == codes
