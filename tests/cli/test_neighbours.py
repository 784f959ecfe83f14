"""`psp-st neighbours` reads its candidates through the one text reader: text lines or Parquet columns."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from psp_st.cli import EXIT_BROKEN_PIPE, main


def test_parquet_candidates_are_the_distinct_texts_of_the_columns(psp_model_dir, tmp_path, capsys):
    frame = pd.DataFrame({"sentence1": ["a dog runs", "a cat sleeps"], "sentence2": ["a dog is running", "a dog runs"]})
    frame.to_parquet(tmp_path / "pairs.parquet")
    args = ["neighbours", "--model", str(psp_model_dir), "--query", "a dog is running", "-k", "5", "--no-progress"]
    assert main([*args, "--parquet", str(tmp_path / "pairs.parquet")]) == 0
    printed = capsys.readouterr().out
    assert printed.count("\n| ") == 3  # header + "a dog runs" + "a cat sleeps": distinct, the query excluded


def test_parquet_option_refuses_a_text_file(psp_model_dir, tmp_path, capsys):
    (tmp_path / "lines.txt").write_text("a dog runs\n", encoding="utf-8")
    args = ["neighbours", "--model", str(psp_model_dir), "--query", "a dog", "--parquet", str(tmp_path / "lines.txt")]
    assert main(args) == 2 and "is not a .parquet file" in capsys.readouterr().err


def test_a_blank_query_is_refused(psp_model_dir, tmp_path, capsys):  # C6
    (tmp_path / "lines.txt").write_text("a dog runs\n", encoding="utf-8")
    args = ["neighbours", "--model", str(psp_model_dir), "--query", " ", "--candidates", str(tmp_path / "lines.txt")]
    assert main(args) == 2 and "--query is empty" in capsys.readouterr().err


def test_a_query_with_no_known_piece_is_warned_about(psp_model_dir, tmp_path, caplog):  # C6
    (tmp_path / "lines.txt").write_text("a dog runs\na cat sleeps\n", encoding="utf-8")
    args = ["neighbours", "--model", str(psp_model_dir), "--query", "一二", "--candidates", str(tmp_path / "lines.txt")]
    assert main(args) == 0
    assert "--query '一二' has no piece the model knows" in caplog.text


def test_a_reader_that_stops_early_is_no_error(psp_model_dir, distinct_captions, tmp_path):
    # `psp-st neighbours ... | head -3`: the closed pipe ends the output quietly, as for any Unix tool
    lines = tmp_path / "lines.txt"
    lines.write_text("\n".join(distinct_captions[:5000]), encoding="utf-8")  # a table larger than a pipe's 64 KiB
    args = ["neighbours", "--model", str(psp_model_dir), "--query", "a dog", "--candidates", str(lines), "-k", "5000"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "OMP_NUM_THREADS": "1"}
    run = [sys.executable, "-m", "psp_st", *args]
    with subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as process:
        assert process.stdout.readline().startswith(b"Nearest neighbours")
        process.stdout.close()  # what head does after its lines
        stderr = process.stderr.read().decode()
    assert process.returncode == EXIT_BROKEN_PIPE and stderr == "", stderr


def test_neighbours_of_a_psp_model_import_no_sentence_transformers(psp_model_dir, tmp_path):  # T1
    from tests.conftest import run_cli_without_sentence_transformers

    # a CLI call in a shell loop: the engine embeds, so importing ST (transformers, sklearn, pandas) is seconds lost
    (tmp_path / "lines.txt").write_text("a dog runs\na cat sleeps\n", encoding="utf-8")
    args = [
        "neighbours",
        "--model",
        str(psp_model_dir),
        "--query",
        "a dog",
        "--candidates",
        str(tmp_path / "lines.txt"),
    ]
    assert "| 1 |" in run_cli_without_sentence_transformers(args).stdout


def test_a_sentence_the_stdout_encoding_lacks_is_escaped_not_a_crash(psp_model_dir, tmp_path, monkeypatch):  # P6-2
    """Windows writes a redirected stdout in cp1252 (LANG=C: ASCII); an emoji candidate crashed the table."""
    (tmp_path / "lines.txt").write_text("a dog runs \U0001f415\na café\n", encoding="utf-8")
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="cp1252")
    monkeypatch.setattr(sys, "stdout", stdout)
    args = [
        "neighbours",
        "--model",
        str(psp_model_dir),
        "--query",
        "a dog",
        "--candidates",
        str(tmp_path / "lines.txt"),
    ]
    assert main([*args, "--no-progress"]) == 0
    stdout.flush()
    printed = stdout.buffer.getvalue().decode("cp1252")
    assert "a dog runs \\U0001f415" in printed and "a café" in printed and stdout.errors == "strict"


def test_a_query_decoded_under_an_ascii_locale_is_read_as_utf8(psp_model_dir, tmp_path, capsys):  # P6-3
    """LANG=C with PYTHONUTF8=0: the shell's UTF-8 bytes of "a dög" reach sys.argv as lone surrogates."""
    (tmp_path / "lines.txt").write_text("a dög\na cat\n", encoding="utf-8")
    args = ["neighbours", "--model", str(psp_model_dir), "--query", "a d\udcc3\udcb6g", "-k", "1"]
    assert main([*args, "--candidates", str(tmp_path / "lines.txt"), "--no-progress"]) == 0
    assert "Nearest neighbours of **a dög**" in capsys.readouterr().out
