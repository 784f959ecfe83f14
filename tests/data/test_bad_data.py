"""The bad-data matrix: each kind of bad row gives a clear error naming row/column (or file:line), or a counted skip."""

from __future__ import annotations

import logging
import math

import pytest

from psp_st.data import BadLineError, load_pairs, validate_pairs

GOOD = {"sentence1": "A dog runs .", "sentence2": "A dog is running .", "score": 0.8}

BAD_ROWS = [
    ({"sentence2": None}, "sentence2", "missing value"),
    ({"sentence1": ""}, "sentence1", "empty"),
    ({"sentence2": "   "}, "sentence2", "empty"),
    ({"score": math.nan}, "score", "NaN score"),
    ({"score": math.inf}, "score", "infinite score"),
    ({"score": None}, "score", "missing score"),
]


def _with_bad_row(pairs_dataset, change):
    rows = [dict(GOOD), dict(GOOD, **change), dict(GOOD)]
    return pairs_dataset({key: [row[key] for row in rows] for key in GOOD})


@pytest.mark.parametrize(("change", "column", "reason"), BAD_ROWS)
def test_bad_row_raises_naming_row_and_column(pairs_dataset, change, column, reason):
    pairs = _with_bad_row(pairs_dataset, change)
    with pytest.raises(ValueError, match=rf"row 2: column '{column}': {reason}.*on_error='skip'"):
        validate_pairs(pairs)


@pytest.mark.parametrize(("change", "column", "reason"), BAD_ROWS)
def test_bad_row_is_skipped_and_counted(pairs_dataset, change, column, reason):
    pairs = _with_bad_row(pairs_dataset, change)
    kept, report = validate_pairs(pairs, on_error="skip")
    assert len(kept) == 2
    assert report.skipped == 1 and report.reasons == {reason: 1}
    assert f"row 2: column '{column}'" in str(report)


@pytest.mark.parametrize(("change", "column", "reason"), BAD_ROWS)
def test_bad_row_in_a_stream_raises_naming_row(pairs_dataset, change, column, reason):
    stream = _with_bad_row(pairs_dataset, change).to_iterable_dataset()
    checked, _ = validate_pairs(stream)
    with pytest.raises(ValueError, match=rf"row 2: column '{column}': {reason}"):
        list(checked)


def test_bad_rows_in_a_stream_are_skipped_and_counted(pairs_dataset):
    stream = _with_bad_row(pairs_dataset, {"sentence1": ""}).to_iterable_dataset()
    checked, report = validate_pairs(stream, on_error="skip")
    assert len(list(checked)) == 2
    assert report.skipped == 1 and report.reasons == {"empty": 1}


def test_non_string_value_in_a_stream_is_named(pairs_dataset):
    from datasets import IterableDataset

    def rows():
        yield dict(GOOD)
        yield dict(GOOD, sentence1=12)

    checked, _ = validate_pairs(IterableDataset.from_generator(rows))
    with pytest.raises(ValueError, match=r"row 2: column 'sentence1': non-string \(int\)"):
        list(checked)


def test_missing_column_raises_even_when_skipping(pairs_dataset):
    pairs = pairs_dataset({"sentence1": ["a"], "text": ["b"]})
    with pytest.raises(ValueError, match=r"column 'sentence2' is missing; the dataset has \['sentence1', 'text'\]"):
        validate_pairs(pairs, on_error="skip")


def test_non_string_column_raises_type_error(pairs_dataset):
    pairs = pairs_dataset({"sentence1": ["a"], "sentence2": [3]})
    with pytest.raises(TypeError, match="column 'sentence2' holds int64, expected strings"):
        validate_pairs(pairs)


def test_non_numeric_score_column_raises_type_error(pairs_dataset):
    pairs = pairs_dataset({"sentence1": ["a"], "sentence2": ["b"], "score": ["high"]})
    with pytest.raises(TypeError, match="column 'score' holds string, expected numbers"):
        validate_pairs(pairs)


def test_clean_dataset_is_returned_unchanged(pairs_dataset):
    pairs = _with_bad_row(pairs_dataset, {})
    checked, report = validate_pairs(pairs, on_error="skip")
    assert checked is pairs and report.skipped == 0 and "no bad rows" in str(report)


def test_null_in_parquet_is_named_by_row(write_parquet, cache_dir):
    path = write_parquet("p.parquet", {"sentence1": ["a b", "c d", "e f"], "sentence2": ["g h", None, "i j"]})
    with pytest.raises(ValueError, match="row 2: column 'sentence2': missing value"):
        validate_pairs(load_pairs(path, cache_dir=cache_dir))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad_fields.tsv", r"bad_fields\.tsv:2: expected 3 tab-separated fields \(as on the first line\), got 2"),
        ("nan_score.tsv", r"nan_score\.tsv:2: column 'score': NaN score"),
        ("bad_json.jsonl", r"bad_json\.jsonl:2: invalid JSON"),
        ("nonstring.jsonl", r"nonstring\.jsonl:2: column 'sentence2': non-string \(int\)"),
        ("missing_key.jsonl", r"missing_key\.jsonl:2: missing key\(s\) \['sentence2'\]"),
    ],
)
def test_malformed_line_names_file_and_line(fixture_path, cache_dir, name, message):
    with pytest.raises(BadLineError, match=message):
        load_pairs(fixture_path(name), cache_dir=cache_dir)


def test_jsonl_score_beyond_float64_names_the_line(tmp_path, cache_dir):
    path = tmp_path / "p.jsonl"
    path.write_text('{"sentence1": "a", "sentence2": "b", "score": 1' + "0" * 400 + "}\n")
    with pytest.raises(BadLineError, match=r"p\.jsonl:1: column 'score': score out of range"):
        load_pairs(path, cache_dir=cache_dir)


@pytest.mark.parametrize(
    ("value", "reason"),
    [("1" + "0" * 5000, "an integer of more than 4,300 digits"), ("[" * 100_000 + "]" * 100_000, "nested too deeply")],
    ids=["huge-integer", "deep-nesting"],
)
@pytest.mark.parametrize("line", [1, 2], ids=["first-line", "later-line"])
def test_jsonl_line_python_cannot_parse_names_the_file_and_line(tmp_path, cache_dir, value, reason, line):  # S6-3
    path = tmp_path / "p.jsonl"
    good = '{"sentence1": "a", "sentence2": "b"}\n'
    path.write_text(good * (line - 1) + '{"sentence1": "a", "sentence2": "b", "x": ' + value + "}\n" + good)
    where = r"p\.jsonl: first line is not valid JSON" if line == 1 else r"p\.jsonl:2: invalid JSON"
    with pytest.raises(ValueError, match=f"{where} \\({reason}\\)"):
        load_pairs(path, cache_dir=cache_dir)


def test_tsv_infinite_score_names_the_line(tmp_path, cache_dir):
    path = tmp_path / "p.tsv"
    path.write_text("a\tb\t1\nc\td\tinf\n")
    with pytest.raises(BadLineError, match=r"p\.tsv:2: column 'score': infinite score"):
        load_pairs(path, cache_dir=cache_dir)


def test_malformed_line_in_a_stream_names_file_and_line(fixture_path):
    with pytest.raises(BadLineError, match=r"bad_json\.jsonl:2: invalid JSON"):
        list(load_pairs(fixture_path("bad_json.jsonl"), streaming=True))


def test_skipped_lines_are_counted_in_the_log(fixture_path, cache_dir, caplog):
    with caplog.at_level(logging.WARNING, logger="psp_st.data.text_files"):
        pairs = load_pairs(fixture_path("bad_fields.tsv"), on_bad_lines="skip", cache_dir=cache_dir)
    assert len(pairs) == 2
    assert "skipped 1 malformed line(s)" in caplog.text and "bad_fields.tsv:2" in caplog.text


def test_parquet_without_rows_is_named(write_parquet, cache_dir):
    import pyarrow as pa

    path = write_parquet(
        "empty.parquet", {"sentence1": pa.array([], pa.string()), "sentence2": pa.array([], pa.string())}
    )
    with pytest.raises(ValueError, match=r"empty\.parquet: no rows"):
        load_pairs(path, cache_dir=cache_dir)


def test_non_utf8_jsonl_line_is_named(tmp_path, cache_dir):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"sentence1": "a", "sentence2": "b"}\n{"sentence1": "\xff", "sentence2": "b"}\n')
    with pytest.raises(BadLineError, match=r"p\.jsonl:2: line is not valid UTF-8 .*; save the file as UTF-8"):
        load_pairs(path, cache_dir=cache_dir)


def test_file_that_is_not_parquet_is_named(tmp_path):
    path = tmp_path / "fake.parquet"
    path.write_text("sentence1\tsentence2\n")
    with pytest.raises(ValueError, match=r"fake\.parquet: not a readable Parquet file"):
        load_pairs(path)


def test_int_column_in_parquet_names_the_file(write_parquet):
    path = write_parquet("ints.parquet", {"sentence1": [1, 2], "sentence2": ["a", "b"]})
    with pytest.raises(ValueError, match=r"ints\.parquet: column 'sentence1' holds int64, expected strings"):
        load_pairs(path)


def test_bad_row_names_the_source(pairs_dataset):
    pairs = _with_bad_row(pairs_dataset, {"sentence1": ""})
    with pytest.raises(ValueError, match=r"p\.parquet: row 2: column 'sentence1': empty.*--on-error skip"):
        validate_pairs(pairs, source="p.parquet")


def test_empty_text_in_a_text_file_is_left_to_validate_pairs(fixture_path, cache_dir):
    pairs = load_pairs(fixture_path("empty_side.tsv"), cache_dir=cache_dir)  # as a Parquet row: read, then checked
    with pytest.raises(ValueError, match=r"empty_side\.tsv: row 2: column 'sentence2': empty"):
        validate_pairs(pairs, source="empty_side.tsv")


@pytest.mark.parametrize("name", ["p.tsv", "p.jsonl"])
def test_byte_order_mark_is_ignored(tmp_path, cache_dir, name):
    path = tmp_path / name
    first = (
        "sentence1\tsentence2\na b\tc d\n" if name.endswith(".tsv") else '{"sentence1": "a b", "sentence2": "c d"}\n'
    )
    path.write_bytes(b"\xef\xbb\xbf" + first.encode())
    assert load_pairs(path, cache_dir=cache_dir)[:] == {"sentence1": ["a b"], "sentence2": ["c d"]}


@pytest.mark.parametrize("streaming", [False, True])
def test_lone_surrogate_is_a_bad_line(tmp_path, cache_dir, streaming):
    path = tmp_path / "s.jsonl"
    path.write_text('{"sentence1": "a b", "sentence2": "c d"}\n{"sentence1": "x \\ud800", "sentence2": "y"}\n')
    with pytest.raises(BadLineError, match=r"s\.jsonl:2: column 'sentence1': lone surrogate"):
        list(load_pairs(path, cache_dir=cache_dir, streaming=streaming))


@pytest.mark.parametrize("streaming", [False, True])
def test_header_only_tsv_is_named(tmp_path, cache_dir, streaming):
    path = tmp_path / "h.tsv"
    path.write_text("sentence1\tsentence2\n\n")
    with pytest.raises(ValueError, match=r"h\.tsv: no pairs in the file"):
        list(load_pairs(path, cache_dir=cache_dir, streaming=streaming))


@pytest.mark.parametrize("streaming", [False, True])
def test_parquet_files_with_different_column_types_are_refused(write_parquet, cache_dir, streaming):
    write_parquet("a.parquet", {"sentence1": ["a"], "sentence2": ["b"], "score": [1]})
    path = write_parquet("b.parquet", {"sentence1": ["c"], "sentence2": ["d"], "score": [0.5]})
    with pytest.raises(ValueError, match=r"b\.parquet: columns .* differ from the first file's"):
        load_pairs(str(path.parent / "*.parquet"), cache_dir=cache_dir, streaming=streaming)


def test_wrong_column_type_names_the_source(pairs_dataset):
    pairs = pairs_dataset({"sentence1": ["a"], "sentence2": ["b"], "score": ["x"]})
    with pytest.raises(TypeError, match=r"^p\.parquet: column 'score' holds string"):
        validate_pairs(pairs, source="p.parquet")


@pytest.mark.parametrize("length", [20, 100])  # within one read of the line / past it: refused before it is read whole
def test_a_line_over_the_length_limit_is_refused_naming_it(tmp_path, cache_dir, monkeypatch, length):
    from psp_st.io import lines

    monkeypatch.setattr(lines, "MAX_LINE_CHARS", 10)
    path = tmp_path / "long.tsv"
    path.write_text("a\tb\n" + "x" * length + "\tb\nc\td\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"long\.tsv:2: line has .* characters; the limit is 10 per text"):
        load_pairs(path, cache_dir=cache_dir)


def test_a_csv_quoted_tsv_field_is_named_not_trained_with_its_quotes(tmp_path, cache_dir):
    """pandas' to_csv(sep="\\t") wraps a sentence holding a quote in quotes and doubles it: it was read as is."""
    path = tmp_path / "p.tsv"
    path.write_text('sentence1\tsentence2\na dog runs\ta dog is running\n"He said ""hi"" ."\tHe greeted me .\n')
    with pytest.raises(BadLineError, match=r"p\.tsv:3: field \"He said \"\"hi\"\" \.\" is CSV-quoted"):
        load_pairs(path, cache_dir=cache_dir)


def test_validate_pairs_refuses_batch_size_zero(pairs_dataset):
    """AP10: batch_size=0 looped forever on empty batches (100% CPU, no output)."""
    with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
        validate_pairs(_with_bad_row(pairs_dataset, {}), batch_size=0)


@pytest.mark.parametrize("call", ["validate_pairs", "load_table_columns", "load_table_text_columns", "keep_columns"])
def test_a_single_column_name_where_a_list_is_due_is_named(pairs_dataset, tmp_path, call):
    """AP11: a str was iterated: "column 's' is missing", pyarrow's KeyError 'Field "s" does not exist'."""
    from psp_st.data import load_table

    dataset = _with_bad_row(pairs_dataset, {})
    path = tmp_path / "pairs.parquet"
    dataset.to_parquet(str(path))
    calls = {
        "validate_pairs": lambda: validate_pairs(dataset, columns="sentence1"),
        "load_table_columns": lambda: load_table(path, "sentence1"),
        "load_table_text_columns": lambda: load_table(path, ["sentence1"], text_columns="sentence1"),
        "keep_columns": lambda: load_pairs(path, keep_columns="sentence1"),
    }
    with pytest.raises(TypeError, match="must be a list of column names, got the single str 'sentence1'"):
        calls[call]()


def test_load_pairs_columns_as_a_list_asks_for_a_mapping(tmp_path):
    """AP11: 'dictionary update sequence element #0 has length 9; 2 is required'."""
    with pytest.raises(TypeError, match="columns must map output columns to source columns"):
        load_pairs(tmp_path / "x.tsv", columns=["sentence1", "sentence2"])


def test_parquet_with_a_repeated_column_name_is_named(tmp_path, cache_dir):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "dup.parquet"
    columns = [pa.array(["a"]), pa.array(["b"]), pa.array(["c"])]
    pq.write_table(pa.Table.from_arrays(columns, names=["sentence1", "sentence2", "sentence1"]), path)
    with pytest.raises(ValueError, match=r"dup\.parquet: column name\(s\) \['sentence1'\] appear more than once"):
        load_pairs(path, cache_dir=cache_dir)


@pytest.fixture
def corrupt_parquet(write_parquet):
    """A Parquet file whose footer is intact and whose zstd data page does not decode (overwritten bytes)."""
    import pyarrow.parquet as pq

    texts = [f"sentence number {index} of the corrupt file" for index in range(200)]
    path = write_parquet("corrupt.parquet", {"sentence1": texts, "sentence2": texts})
    pq.write_table(pq.read_table(path), path, compression="zstd")
    chunk = pq.read_metadata(path).row_group(0).column(0)
    data = bytearray(path.read_bytes())
    middle = chunk.data_page_offset + chunk.total_compressed_size // 2
    data[middle : middle + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("streaming", [False, True])
def test_parquet_whose_pages_do_not_decode_is_named(corrupt_parquet, cache_dir, streaming):
    with pytest.raises(ValueError, match=r"corrupt\.parquet: (row group 0: )?not a readable Parquet file"):
        list(load_pairs(corrupt_parquet, cache_dir=cache_dir, streaming=streaming))


@pytest.mark.parametrize("streaming", [False, True])
def test_jsonl_key_missing_from_the_first_line_is_refused_not_dropped(tmp_path, cache_dir, streaming):
    path = tmp_path / "p.jsonl"
    path.write_text('{"sentence1": "a", "sentence2": "b"}\n{"sentence1": "c", "sentence2": "d", "score": 4}\n')
    with pytest.raises(ValueError, match=r"p\.jsonl:2: key\(s\) \['score'\] are not on the first line"):
        list(load_pairs(path, cache_dir=cache_dir, streaming=streaming, on_bad_lines="skip"))


def test_truncated_gzip_tsv_is_named(tmp_path, cache_dir):
    import gzip

    path = tmp_path / "p.tsv.gz"
    data = gzip.compress("".join(f"sentence {index}\tother {index}\n" for index in range(2000)).encode())
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"p\.tsv\.gz: cannot decompress it after line \d+ \(EOFError"):
        load_pairs(path, cache_dir=cache_dir)


def test_plain_text_under_a_gzip_name_is_named(tmp_path, cache_dir):
    path = tmp_path / "p.tsv.gz"
    path.write_text("a dog\tthe dog\n")
    with pytest.raises(ValueError, match=r"p\.tsv\.gz: cannot decompress it after line 0 .*not gz-compressed"):
        load_pairs(path, cache_dir=cache_dir)


def test_tsv_files_of_which_only_a_later_one_has_a_header_are_refused(tmp_path, cache_dir):
    (tmp_path / "a.tsv").write_text("a dog\tthe dog\n")
    (tmp_path / "b.tsv").write_text("sentence1\tsentence2\nx y\tz w\n")
    with pytest.raises(ValueError, match=r"b\.tsv has a header line and .*a\.tsv has not"):
        load_pairs([tmp_path / "a.tsv", tmp_path / "b.tsv"], cache_dir=cache_dir)


def test_utf16_tsv_gets_the_utf16_remedy(tmp_path, cache_dir):
    path = tmp_path / "p.tsv"
    path.write_bytes("a dog\tthe dog\n".encode("utf-16"))
    with pytest.raises(BadLineError, match=r"p\.tsv:1: .*the file is UTF-16 .*iconv -f utf-16 -t utf-8"):
        load_pairs(path, cache_dir=cache_dir)


def test_utf16_tsv_without_a_byte_order_mark_is_refused(tmp_path, cache_dir):
    path = tmp_path / "p.tsv"
    path.write_bytes("a dog\tthe dog\n".encode("utf-16le"))
    with pytest.raises(BadLineError, match=r"p\.tsv:1: .*looks like UTF-16LE .*iconv -f utf-16le -t utf-8"):
        load_pairs(path, cache_dir=cache_dir)
