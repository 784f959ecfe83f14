"""``psp-st data``: prints the validation and filter reports; bad lines exit 1 naming file and line."""

from __future__ import annotations

from psp_st.cli import main


def test_data_command_prints_reports_and_writes_parquet(fixture_path, tmp_path, cache_dir, capsys):
    import pyarrow.parquet as pq

    output = tmp_path / "kept.parquet"
    code = main(
        [
            "data",
            str(fixture_path("paranmt.tsv")),
            "--filters",
            "{score: {min: 0.3}}",
            "--cache-dir",
            cache_dir,
            "--output",
            str(output),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "no bad rows" in printed and "score" in printed
    assert pq.read_table(output).column("score").to_pylist() == [0.91, 0.75, 0.40]


def test_data_command_reports_bad_line(fixture_path, cache_dir, capsys):
    code = main(["data", str(fixture_path("bad_fields.tsv")), "--cache-dir", cache_dir])
    assert code == 2
    assert "bad_fields.tsv:2: expected 3 tab-separated fields" in capsys.readouterr().err


def test_on_error_skip_also_skips_bad_lines(fixture_path, cache_dir, capsys):
    assert main(["data", str(fixture_path("bad_fields.tsv")), "--on-error", "skip", "--cache-dir", cache_dir]) == 0
    assert "2 rows checked" in capsys.readouterr().out


def test_data_command_names_the_file_and_row_of_a_null(tmp_path, cache_dir, capsys):
    import pandas as pd

    pd.DataFrame({"sentence1": ["a b", "c d"], "sentence2": ["e f", None]}).to_parquet(tmp_path / "null.parquet")
    assert main(["data", str(tmp_path / "null.parquet"), "--cache-dir", cache_dir]) == 2
    assert "null.parquet: row 2: column 'sentence2': missing value" in capsys.readouterr().err


def test_output_matched_by_an_input_glob_is_refused(write_parquet, cache_dir, capsys):
    first = write_parquet("g/p1.parquet", {"sentence1": ["a"], "sentence2": ["b"]})
    write_parquet("g/p2.parquet", {"sentence1": ["c"], "sentence2": ["d"]})
    args = ["data", str(first.parent / "p*.parquet"), "--output", str(first.parent / "p2.parquet"), "--overwrite"]
    assert main([*args, "--cache-dir", cache_dir]) == 2
    assert "would destroy or change the input" in capsys.readouterr().err


def test_output_that_is_not_parquet_is_refused(fixture_path, tmp_path, capsys):
    assert main(["data", str(fixture_path("paranmt.tsv")), "--output", str(tmp_path / "kept.tsv")]) == 2
    assert "end the name in .parquet" in capsys.readouterr().err and not (tmp_path / "kept.tsv").exists()


def test_column_with_another_kind_is_refused(fixture_path, capsys):
    assert main(["data", str(fixture_path("paranmt.tsv")), "--kind", "bitext", "--column", "sentence1=0"]) == 2
    assert "--column and --format apply to --kind pairs" in capsys.readouterr().err


def test_local_folder_without_pair_files_is_not_a_hub_id(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "csvdir").mkdir()
    (tmp_path / "csvdir" / "x.csv").write_text("sentence1,sentence2\na,b\n")
    assert main(["data", "csvdir"]) == 2
    assert "no data file matches 'csvdir'" in capsys.readouterr().err


def test_filters_file_that_does_not_exist_is_named_not_read_as_inline_yaml(fixture_path, tmp_path, capsys):
    code = main(["data", str(fixture_path("paranmt.tsv")), "--filters", str(tmp_path / "my filters é.yaml")])
    assert code == 2 and "my filters é.yaml: no such file" in capsys.readouterr().err


def test_filters_file_under_home_is_read(fixture_path, tmp_path, cache_dir, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "f é.yaml").write_text("filters:\n  score: {min: 0.3}\n", encoding="utf-8")
    code = main(["data", str(fixture_path("paranmt.tsv")), "--filters=~/f é.yaml", "--cache-dir", cache_dir])
    assert code == 0 and "score" in capsys.readouterr().out


def test_data_with_filters_imports_no_sentence_transformers(fixture_path, cache_dir):  # F7-1
    """The YAML loader of --filters lives beside the recipes: importing it pulled in the trainer (seconds, ~0.5 GB)."""
    from tests.conftest import run_cli_without_sentence_transformers

    args = ["data", str(fixture_path("paranmt.tsv")), "--filters", "{score: {min: 0.3}}", "--cache-dir", cache_dir]
    run_cli_without_sentence_transformers(args)
