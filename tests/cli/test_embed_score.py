from __future__ import annotations

import numpy as np
import pytest

from psp_st.cli import main


@pytest.fixture
def model_dir(psp_model, tmp_path):
    path = tmp_path / "model"
    psp_model.save(str(path))
    return path


def test_embed_writes_one_row_per_line(model_dir, psp_module, tmp_path):
    lines = ["a man rides a horse", "", "two kids play", "   "]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(
        [
            "embed",
            "--model",
            str(model_dir),
            "--input",
            str(tmp_path / "in.txt"),
            "--output",
            str(tmp_path / "out.npy"),
            "--chunk-size",
            "3",
            "--no-progress",
        ]
    )
    assert code == 0
    array = np.load(tmp_path / "out.npy")
    assert array.shape == (4, 32) and array.dtype == np.float32
    np.testing.assert_allclose(array, psp_module.embed(lines), rtol=1e-6)


def test_embed_float16(model_dir, tmp_path):
    (tmp_path / "in.txt").write_text("a dog\nlast line without newline", encoding="utf-8")
    assert (
        main(
            [
                "embed",
                "--model",
                str(model_dir),
                "--input",
                str(tmp_path / "in.txt"),
                "--output",
                str(tmp_path / "out.npy"),
                "--float16",
                "--no-progress",
            ]
        )
        == 0
    )
    array = np.load(tmp_path / "out.npy")
    assert array.shape == (2, 32) and array.dtype == np.float16


def test_embed_reports_the_bad_line(model_dir, tmp_path, capsys):
    (tmp_path / "in.txt").write_bytes(b"fine\nalso fine\nbad \xff byte\n")
    code = main(
        [
            "embed",
            "--model",
            str(model_dir),
            "--input",
            str(tmp_path / "in.txt"),
            "--output",
            str(tmp_path / "out.npy"),
            "--no-progress",
        ]
    )
    assert code == 2
    assert "in.txt:3: line is not valid UTF-8" in capsys.readouterr().err
    assert not (tmp_path / "out.npy").exists()


def test_score_appends_cosine_in_order(model_dir, psp_module, tmp_path):
    pairs = [("a dog runs", "a dog is running"), ("a man cooks", "kids play"), ("", "a cat")]
    (tmp_path / "pairs.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in pairs), encoding="utf-8")
    assert (
        main(
            [
                "score",
                "--model",
                str(model_dir),
                "--pairs",
                str(tmp_path / "pairs.tsv"),
                "--output",
                str(tmp_path / "scores.tsv"),
                "--chunk-size",
                "2",
                "--no-progress",
            ]
        )
        == 0
    )
    rows = [line.split("\t") for line in (tmp_path / "scores.tsv").read_text(encoding="utf-8").splitlines()]
    assert [(a, b) for a, b, _ in rows] == pairs
    left = psp_module.embed([a for a, _ in pairs], normalize=True)
    right = psp_module.embed([b for _, b in pairs], normalize=True)
    np.testing.assert_allclose([float(c) for *_, c in rows], (left * right).sum(1), atol=1e-5)


def test_score_header_is_kept(model_dir, tmp_path):
    (tmp_path / "pairs.tsv").write_text("s1\ts2\na dog\ta cat\n", encoding="utf-8")
    assert (
        main(
            [
                "score",
                "--model",
                str(model_dir),
                "--pairs",
                str(tmp_path / "pairs.tsv"),
                "--header",
                "--output",
                str(tmp_path / "scores.tsv"),
                "--no-progress",
            ]
        )
        == 0
    )
    assert (tmp_path / "scores.tsv").read_text().splitlines()[0] == "s1\ts2\tcosine"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("a\tb\nonly one field\n", "pairs.tsv:2: expected 2 tab-separated sentences, got 1 field(s)"),
        ("a\tb\n\nc\td\n", "pairs.tsv:2: expected 2 tab-separated sentences, got an empty line"),
        ("a\tb\tc\n", "pairs.tsv:1: expected 2 tab-separated sentences, got 3 field(s)"),
    ],
)
def test_score_reports_malformed_lines(model_dir, tmp_path, capsys, content, message):
    (tmp_path / "pairs.tsv").write_text(content, encoding="utf-8")
    code = main(
        [
            "score",
            "--model",
            str(model_dir),
            "--pairs",
            str(tmp_path / "pairs.tsv"),
            "--output",
            str(tmp_path / "scores.tsv"),
            "--no-progress",
        ]
    )
    assert code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "scores.tsv").exists()


def test_missing_model_folder_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "in.txt").write_text("a\n")
    code = main(
        [
            "embed",
            "--model",
            str(tmp_path / "empty"),
            "--input",
            str(tmp_path / "in.txt"),
            "--output",
            str(tmp_path / "o.npy"),
        ]
    )
    assert code == 2 and "no modules.json" in capsys.readouterr().err


def test_tokenizer_train_command(tmp_path, caption_sentences, capsys):
    (tmp_path / "corpus.txt").write_text("\n".join(caption_sentences[:3000]), encoding="utf-8")
    assert (
        main(
            [
                "tokenizer",
                "train",
                "--input",
                str(tmp_path / "corpus.txt"),
                "--output",
                str(tmp_path / "sp.model"),
                "--vocab-size",
                "400",
                "--threads",
                "1",
            ]
        )
        == 0
    )
    assert (tmp_path / "sp.model").stat().st_size > 0
    assert "0.00% of 3000 training texts contain an unknown piece" in capsys.readouterr().out


def test_tokenizer_train_reports_missing_column(tmp_path, capsys):
    import pandas as pd

    pd.DataFrame({"other": ["x"]}).to_parquet(tmp_path / "t.parquet")
    code = main(
        [
            "tokenizer",
            "train",
            "--input",
            str(tmp_path / "t.parquet"),
            "--column",
            "text",
            "--output",
            str(tmp_path / "sp.model"),
        ]
    )
    assert code == 2 and "missing column(s) ['text']" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("t.jsonl", '{"text": "a dog"}\nnot json\n', "t.jsonl:2: invalid JSON"),
        (
            "t.jsonl",
            '{"sentence1": "a", "sentence2": "b"}\n{"sentence1": "c"}\n',
            "t.jsonl:2: missing key(s) ['sentence2']",
        ),
        ("t.tsv", "text\tid\na dog\t1\nstray\n", "t.tsv:3: expected 2 tab-separated fields"),
        ("t.csv", "text\na dog\n", "t.csv: CSV is not read"),
    ],
)
def test_tokenizer_train_reads_tables_like_psp_st_data(tmp_path, capsys, name, content, message):
    (tmp_path / name).write_text(content, encoding="utf-8")
    code = main(["tokenizer", "train", "--input", str(tmp_path / name), "--output", str(tmp_path / "sp.model")])
    assert code == 2 and message in capsys.readouterr().err


def test_embed_parquet_input_needs_shard_rows(model_dir, tmp_path, capsys):
    import pandas as pd

    pd.DataFrame({"sentence": ["a dog runs"]}).to_parquet(tmp_path / "in.parquet")
    code = main(["embed", "--model", str(model_dir), "--input", str(tmp_path / "in.parquet"), "--output", "o.npy"])
    assert code == 2 and "is Parquet: pass --shard-rows" in capsys.readouterr().err


def test_output_with_an_unexpanded_home_is_refused_not_written_as_a_tilde_folder(
    model_dir, tmp_path, monkeypatch, capsys
):
    work = tmp_path / "my dir é 中文"
    work.mkdir()
    (work / "in é.txt").write_text("a dog\n", encoding="utf-8")
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    code = main(["embed", "--model", str(model_dir), "--input", "in é.txt", "--output=~/e.npy", "--no-progress"])
    assert code == 2 and not (work / "~").exists()
    assert f"write {tmp_path / 'home' / 'e.npy'}" in capsys.readouterr().err
