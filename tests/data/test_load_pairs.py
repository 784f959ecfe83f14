"""load_pairs: each local format, column mapping, passthrough columns, streaming and source resolution."""

from __future__ import annotations

import gzip
import shutil

import pytest

from psp_st.data import load_pairs


def test_headerless_tsv_reads_sentences_and_score(fixture_path, cache_dir):
    pairs = load_pairs(fixture_path("paranmt.tsv"), cache_dir=cache_dir)
    assert pairs.column_names == ["sentence1", "sentence2", "score"]
    assert len(pairs) == 4
    assert pairs[0] == {
        "sentence1": "A man is playing a guitar .",
        "sentence2": "A guy plays the guitar .",
        "score": 0.91,
    }


def test_tsv_header_is_detected_and_group_id_passes_through(fixture_path, cache_dir):
    pairs = load_pairs(fixture_path("header.tsv"), cache_dir=cache_dir)
    assert pairs.column_names == ["sentence1", "sentence2", "group_id"]
    assert pairs["group_id"][:] == ["img1", "img2"]


def test_tsv_positions_select_fields(fixture_path, cache_dir):
    pairs = load_pairs(fixture_path("paranmt.tsv"), columns={"sentence1": 1, "sentence2": 0}, cache_dir=cache_dir)
    assert pairs.column_names == ["sentence1", "sentence2"]
    assert pairs[0]["sentence1"] == "A guy plays the guitar ."


def test_jsonl_columns_are_renamed_and_extra_keys_dropped(fixture_path, cache_dir):
    pairs = load_pairs(
        fixture_path("pairs.jsonl"),
        columns={"sentence1": "src", "sentence2": "tgt", "score": "sim"},
        cache_dir=cache_dir,
    )
    assert pairs.column_names == ["sentence1", "sentence2", "score"]
    assert len(pairs) == 3  # the blank line is ignored
    assert pairs[2] == {"sentence1": "He opened the door .", "sentence2": "The door was opened by him .", "score": 0.9}


def test_parquet_renames_and_keeps_only_known_columns(write_parquet, cache_dir):
    path = write_parquet(
        "bitext.parquet", {"source": ["Guten Morgen"], "target": ["Good morning"], "lang": ["de"], "corpus": ["x"]}
    )
    pairs = load_pairs(path, columns={"sentence1": "source", "sentence2": "target"}, cache_dir=cache_dir)
    assert pairs.column_names == ["sentence1", "sentence2", "lang"]
    assert pairs[0] == {"sentence1": "Guten Morgen", "sentence2": "Good morning", "lang": "de"}


def test_parquet_dataset_is_memory_mapped_not_in_memory(write_parquet, cache_dir):
    path = write_parquet("p.parquet", {"sentence1": ["a b c"] * 10, "sentence2": ["d e f"] * 10})
    pairs = load_pairs(path, cache_dir=cache_dir)
    assert pairs.cache_files, "expected an on-disk Arrow cache file"
    assert all(entry["filename"].startswith(cache_dir) for entry in pairs.cache_files)


def test_glob_and_list_sources_concatenate_in_name_order(write_parquet, tmp_path, cache_dir):
    write_parquet("parts/b.parquet", {"sentence1": ["b1"], "sentence2": ["b2"]})
    write_parquet("parts/a.parquet", {"sentence1": ["a1"], "sentence2": ["a2"]})
    by_glob = load_pairs(str(tmp_path / "parts" / "*.parquet"), cache_dir=cache_dir)
    by_list = load_pairs([tmp_path / "parts" / "a.parquet", tmp_path / "parts" / "b.parquet"], cache_dir=cache_dir)
    by_folder = load_pairs(tmp_path / "parts", cache_dir=cache_dir)
    assert by_glob["sentence1"][:] == by_list["sentence1"][:] == by_folder["sentence1"][:] == ["a1", "b1"]


def test_streaming_yields_the_same_rows(fixture_path, cache_dir):
    from datasets import IterableDataset

    stream = load_pairs(fixture_path("paranmt.tsv"), streaming=True)
    assert isinstance(stream, IterableDataset)
    assert list(stream) == load_pairs(fixture_path("paranmt.tsv"), cache_dir=cache_dir).to_list()


def test_gzip_tsv_is_read(fixture_path, tmp_path, cache_dir):
    target = tmp_path / "paranmt.tsv.gz"
    with open(fixture_path("paranmt.tsv"), "rb") as source, gzip.open(target, "wb") as sink:
        shutil.copyfileobj(source, sink)
    assert len(load_pairs(target, cache_dir=cache_dir)) == 4


def test_edited_text_file_is_not_served_from_a_stale_cache(tmp_path, cache_dir):
    path = tmp_path / "pairs.tsv"
    path.write_text("one two\tthree four\n")
    assert load_pairs(path, cache_dir=cache_dir)["sentence1"][:] == ["one two"]
    path.write_text("five six seven\teight nine\n")
    assert load_pairs(path, cache_dir=cache_dir)["sentence1"][:] == ["five six seven"]


def test_missing_sentence_column_names_file_and_columns(write_parquet, cache_dir):
    path = write_parquet("p.parquet", {"source": ["x"], "target": ["y"]})
    with pytest.raises(ValueError, match=r"p\.parquet: column 'sentence1'.*available columns: \['source', 'target'\]"):
        load_pairs(path, cache_dir=cache_dir)


def test_missing_kept_column_is_named_without_a_columns_hint(write_parquet, cache_dir):
    path = write_parquet("p.parquet", {"sentence1": ["x"], "sentence2": ["y"]})
    with pytest.raises(ValueError, match=r"column 'corpus' \(for 'corpus'\) is missing.*'sentence2'\]$"):
        load_pairs(path, cache_dir=cache_dir, keep_columns=["corpus"])


def test_nonexistent_local_path_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        load_pairs(str(tmp_path / "nope.tsv"))


def test_unknown_suffix_asks_for_format(tmp_path):
    path = tmp_path / "pairs.xyz"
    path.write_text("a\tb\n")
    with pytest.raises(ValueError, match="format="):
        load_pairs(path)


def test_mixed_formats_in_one_source_are_refused(fixture_path):
    with pytest.raises(ValueError, match="mixes formats"):
        load_pairs([fixture_path("paranmt.tsv"), fixture_path("pairs.jsonl")])


def test_hub_id_goes_to_load_dataset_and_is_renamed(monkeypatch, pairs_dataset):
    import datasets

    calls = {}

    def fake_load_dataset(name, **kwargs):
        calls.update(kwargs, name=name)
        return pairs_dataset({"question": ["q1"], "answer": ["a1"], "other": [1]})

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    pairs = load_pairs("org/pairs", columns={"sentence1": "question", "sentence2": "answer"}, split="dev")
    assert calls == {"name": "org/pairs", "split": "dev", "streaming": False, "cache_dir": None}
    assert pairs.to_list() == [{"sentence1": "q1", "sentence2": "a1"}]


def test_streaming_parquet_uses_row_groups_as_shards(tmp_path, cache_dir):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "rg.parquet"
    table = pa.table({"src": [f"s{i}" for i in range(10)], "tgt": [f"t{i}" for i in range(10)], "group_id": ["g"] * 10})
    pq.write_table(table, path, row_group_size=3)
    stream = load_pairs(path, columns={"sentence1": "src", "sentence2": "tgt"}, streaming=True)
    assert stream.num_shards == 4 and stream.column_names == ["sentence1", "sentence2", "group_id"]
    assert (
        list(stream)
        == load_pairs(path, columns={"sentence1": "src", "sentence2": "tgt"}, cache_dir=cache_dir).to_list()
    )
    shuffled = [row["sentence1"] for row in stream.shuffle(seed=0, buffer_size=4)]
    assert sorted(shuffled) == sorted(table.column("src").to_pylist()) and shuffled != table.column("src").to_pylist()


def test_missing_local_file_with_a_hub_like_name_is_not_looked_up_on_the_hub(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="no data file matches 'in/nope.jsonl'"):
        load_pairs("in/nope.jsonl", data_dir=tmp_path)


def test_tsv_header_with_other_names_is_refused_not_read_as_a_pair(tmp_path, cache_dir):
    path = tmp_path / "mine.tsv"
    path.write_text("text_a\ttext_b\na dog runs\ta dog is running\n")
    with pytest.raises(ValueError, match=r"mine\.tsv:1 looks like a header.*sentence1: text_a, sentence2: text_b"):
        load_pairs(path, cache_dir=cache_dir)


def test_headerless_word_pairs_are_not_taken_for_a_header(tmp_path, cache_dir):
    path = tmp_path / "words.tsv"
    path.write_text("car\tautomobile\nbig\tlarge\n")
    assert load_pairs(path, cache_dir=cache_dir)["sentence1"][:] == ["car", "big"]


def test_missing_sentence_column_hint_names_the_files_own_columns(tmp_path, cache_dir):
    path = tmp_path / "st.jsonl"
    path.write_text('{"anchor": "a b", "positive": "c d"}\n')
    with pytest.raises(ValueError, match=r"`columns: \{sentence1: anchor, sentence2: positive\}`.*--column"):
        load_pairs(path, cache_dir=cache_dir)


def test_a_csv_source_is_refused_saying_what_to_save_it_as(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("sentence1,sentence2\na b,c d\n")
    with pytest.raises(ValueError, match=r"pairs\.csv: CSV is not read; save it as TSV"):
        load_pairs(path)


def test_a_headerless_third_field_that_is_no_score_says_how_to_leave_it_out(tmp_path, cache_dir):
    path = tmp_path / "three.tsv"
    path.write_text("a dog runs\ta dog is running\tflickr\n")
    with pytest.raises(ValueError, match=r"three\.tsv:1: the third field .* read as the score.*--column sentence1=0"):
        load_pairs(path, cache_dir=cache_dir)
    assert len(load_pairs(path, cache_dir=cache_dir, columns={"sentence1": 0, "sentence2": 1})) == 1


def test_a_mapping_naming_a_column_the_tsv_header_lacks_names_it_not_a_missing_header(tmp_path, cache_dir):
    """U13: a misspelt mapped column was reported as "has no header line; give columns as 0-based positions"."""
    path = tmp_path / "mine.tsv"
    path.write_text("text_a\ttext_b\na dog runs\ta dog is running\n")
    with pytest.raises(ValueError, match=r"mine\.tsv:1 \(header\): column 'txt_b' .*sentence2: text_b\}"):
        load_pairs(path, cache_dir=cache_dir, columns={"sentence1": "text_a", "sentence2": "txt_b"})


def test_parquet_named_like_a_glob_loads_itself(write_parquet, cache_dir):
    from psp_st.data.loaders import load_table

    path = write_parquet("pairs [v2] é.parquet", {"sentence1": ["a dog"], "sentence2": ["a hound"]})
    write_parquet("pairs v é.parquet", {"sentence1": ["other"], "sentence2": ["file"]})  # what the glob matches
    assert load_pairs(path, cache_dir=cache_dir)["sentence1"][:] == ["a dog"]
    assert load_table(path, ["sentence1"], cache_dir=cache_dir)["sentence1"] == ["a dog"]


def test_a_parquet_file_replaced_with_the_same_mtime_is_read_again(write_parquet, cache_dir):  # C13-2
    """datasets keys a local file's Arrow copy by its mtime alone (cp -p, rsync -a, tar keep one)."""
    import os

    path = write_parquet("p.parquet", {"sentence1": ["old a", "old b"], "sentence2": ["x", "y"]})
    stat = os.stat(path)
    assert load_pairs(path, cache_dir=cache_dir)["sentence1"][:] == ["old a", "old b"]
    write_parquet("p.parquet", {"sentence1": ["a new one", "another"], "sentence2": ["x", "y"]})
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert load_pairs(path, cache_dir=cache_dir)["sentence1"][:] == ["a new one", "another"]


def test_another_psp_st_version_reads_a_tsv_again(tmp_path, cache_dir, monkeypatch):  # C13-4
    """datasets keys the reader by its name, not its code: an upgrade's reading rules never reached cached rows."""
    import psp_st
    from psp_st.data import text_files

    path = tmp_path / "p.tsv"
    path.write_text("a dog runs\ta dog is running\ntwo cats\ta pair of cats\n", encoding="utf-8")
    assert load_pairs(path, cache_dir=cache_dir)["sentence1"][:] == ["a dog runs", "two cats"]
    reader = text_files.tsv_rows

    def upgraded(*args, **kwargs):  # another version's reading rule: upper-case
        for number, row in reader(*args, **kwargs):
            yield number, {key: value.upper() for key, value in row.items()}

    monkeypatch.setattr(text_files, "tsv_rows", upgraded)
    monkeypatch.setattr(psp_st, "__version__", "99.0")
    assert load_pairs(path, cache_dir=cache_dir)["sentence1"][:] == ["A DOG RUNS", "TWO CATS"]
