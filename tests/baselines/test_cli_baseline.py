from __future__ import annotations

import json


def test_turku_command_trains_saves_and_records(table_script, tiny_bert_dir, data_dir, tmp_path):
    code = table_script.main(
        [
            "turku",
            "--model",
            str(tiny_bert_dir),
            "--data-dir",
            str(data_dir),
            "--limit",
            "8",
            "--max-steps",
            "1",
            "--batch-size",
            "4",
            "--no-eval",
            "--output",
            str(tmp_path / "turku"),
            "--results",
            str(tmp_path / "turku.json"),
        ]
    )
    assert code == 0
    assert (tmp_path / "turku" / "turku_heads.safetensors").is_file()
    record = json.loads((tmp_path / "turku.json").read_text())
    assert record["kind"] == "turku" and record["train"]["steps"] == 1


def test_bad_turku_label_in_a_file_is_a_clean_error(table_script, tiny_bert_dir, tmp_path, capsys):
    import pandas as pd

    pd.DataFrame(
        {"sentence1": ["a", "b", "c"], "sentence2": ["d", "e", "f"], "label": [4, 3, 5], "label_str": ["4", "3", "5"]}
    ).to_parquet(tmp_path / "bad.parquet")
    code = table_script.main(
        [
            "turku",
            "--model",
            str(tiny_bert_dir),
            "--train",
            str(tmp_path / "bad.parquet"),
            "--max-steps",
            "1",
            "--no-eval",
        ]
    )
    assert code == 2
    assert "bad.parquet column label_str, row 2: label '5'" in capsys.readouterr().err


def test_untrained_record_of_a_built_model_carries_its_build_time(tmp_path):
    import json

    from benchmarks.baselines.runner import build_record_training

    (tmp_path / "psp_build.json").write_text(json.dumps({"training": {"seconds": 821.6, "threads": 2}}))
    assert build_record_training(str(tmp_path))["seconds"] == 821.6
    assert build_record_training(str(tmp_path / "missing")) is None


def test_sbert_and_cross_encoder_commands_train_on_the_named_sets_and_record(
    table_script, tiny_bert_dir, data_dir, tmp_path
):
    sets = ["--limit", "8", "--max-steps", "1", "--batch-size", "4", "--no-eval", "--data-dir", str(data_dir)]
    assert (
        table_script.main(
            [
                "sbert",
                "--model",
                str(tiny_bert_dir),
                "--pairs",
                "training_pairs/parasci.parquet",
                "--pairs-per-set",
                "6",
                "--labelled",
                "msrpc-train",
                "turku-eval",
                *sets,
                "--results",
                str(tmp_path / "sbert.json"),
            ]
        )
        == 0
    )
    record = json.loads((tmp_path / "sbert.json").read_text())
    assert record["kind"] == "sbert" and record["train"]["steps"] == 1
    assert record["train"]["sets"] == {"parasci": 6, "msrpc-train": 8, "turku-eval": 8}
    assert (
        table_script.main(
            [
                "cross-encoder",
                "--model",
                str(tiny_bert_dir),
                "--train",
                "pawsx-en-dev",
                *sets,
                "--name",
                "toy",
                "--results",
                str(tmp_path / "cross.json"),
            ]
        )
        == 0
    )
    record = json.loads((tmp_path / "cross.json").read_text())
    assert record["name"] == "toy" and record["train"]["sets"] == {"pawsx-en-dev": 8}
