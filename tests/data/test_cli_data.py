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
    code = main(["data", str(fixture_path("empty_side.tsv")), "--cache-dir", cache_dir])
    assert code == 2
    assert "empty_side.tsv:2: column 'sentence2': empty" in capsys.readouterr().err


def test_data_command_names_the_file_and_row_of_a_null(tmp_path, cache_dir, capsys):
    import pandas as pd

    pd.DataFrame({"sentence1": ["a b", "c d"], "sentence2": ["e f", None]}).to_parquet(tmp_path / "null.parquet")
    assert main(["data", str(tmp_path / "null.parquet"), "--cache-dir", cache_dir]) == 2
    assert "null.parquet: row 2: column 'sentence2': missing value" in capsys.readouterr().err
