from __future__ import annotations

import json

import pytest


def test_table_renders_records(table_script, tmp_path):
    record = {
        "name": "toy",
        "command": "psp-st baseline sbert",
        "train": {"seconds": 120.0},
        "metrics": {"stsb_spearman": 80.123, "pairs_per_second": 250.4},
    }
    (tmp_path / "toy.json").write_text(json.dumps(record))
    assert table_script.main(["table", str(tmp_path / "toy.json"), "--output", str(tmp_path / "t.md")]) == 0
    text = (tmp_path / "t.md").read_text()
    assert "| toy | 80.1 | — |" in text and "2.0 min" in text
    assert "python benchmarks/baselines_table.py sbert" in text and "psp-st baseline" not in text  # B9-3: old records


def test_speed_feeds_the_table(table_script, tiny_bert_dir, data_dir, tmp_path):
    speed = tmp_path / "speed.json"
    argv = ["speed", f"toy=sbert:{tiny_bert_dir}", "--data-dir", str(data_dir), "--pairs", "8", "--repeats", "1"]
    assert table_script.main([*argv, "--output", str(speed)]) == 0
    measured = json.loads(speed.read_text())["pairs_per_second"]["toy"]
    assert measured > 0
    (tmp_path / "toy.json").write_text(json.dumps({"name": "toy", "metrics": {"pairs_per_second": -1.0}}))
    table = tmp_path / "t.md"
    assert table_script.main(["table", str(tmp_path / "toy.json"), "--speed", str(speed), "--output", str(table)]) == 0
    assert f"| {measured:.0f} |" in table.read_text()


def test_bad_speed_spec_is_a_clean_error(table_script):
    with pytest.raises(SystemExit, match="expected NAME=sbert|cross-encoder|turku:PATH"):
        table_script.main(["speed", "toy=bogus:/nowhere"])
