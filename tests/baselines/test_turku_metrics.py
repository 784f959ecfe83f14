from __future__ import annotations

import pytest

from benchmarks.baselines.turku_metrics import format_turku_table, turku_scores


def test_perfect_predictions_score_one():
    gold = ["2", "3", "4", "4>i", "4<s"]
    scores = turku_scores(gold, gold)
    assert scores["accuracy"] == 1.0 and scores["weighted_f1"] == 1.0
    assert all(head["accuracy"] == 1.0 for head in scores["heads"].values())


def test_complete_label_vs_merged_class_and_flags():
    gold = ["4>i", "3", "4", "2"]
    pred = ["4>", "3", "4", "3"]
    scores = turku_scores(gold, pred)
    assert scores["accuracy"] == 0.5  # 4> != 4>i on the complete label; 3 != 2
    assert scores["classes"]["4>"]["recall"] == 1.0  # merged class ignores the i flag
    assert scores["classes"]["i"]["recall"] == 0.0 and scores["classes"]["i"]["support"] == 1
    assert scores["heads"]["base"]["accuracy"] == 0.75
    assert scores["heads"]["minor"]["rows"] == 2  # flag heads are scored on gold base-4 rows only
    assert "| W. avg |" in format_turku_table(scores)


def test_length_mismatch_and_bad_label_raise():
    with pytest.raises(ValueError, match="2 gold labels but 1"):
        turku_scores(["4", "3"], ["4"])
    with pytest.raises(ValueError, match="predicted labels, row 0: label '4<>'"):
        turku_scores(["4"], ["4<>"])
