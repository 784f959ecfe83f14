from __future__ import annotations

import json

import pytest

from psp_st.evaluation import load_local, run_suite, to_markdown
from psp_st.evaluation.suite import suite_tasks


def test_quick_suite_returns_every_quick_task(psp_model, data_dir):
    result = run_suite(psp_model, "quick", data_dir=data_dir)
    assert set(result["results"]) == {
        "stsb-dev",
        "stsb-test",
        "sick-r-test",
        "sts17-en-en",
        "pawsx-en-test",
        "msrpc-test",
    }
    stsb = result["results"]["stsb-test"]["stsb-test_spearman"]
    assert -1.0 <= stsb <= 1.0
    row = next(r for r in result["summary"] if r["task"] == "stsb-test" and r["metric"] == "Spearman")
    assert row["value"] == pytest.approx(stsb * 100)
    texts = set()
    for key in ("stsb-dev", "stsb-test", "sick-test", "sts17-en-en", "pawsx-en-test", "msrpc-test"):
        data = load_local(key, data_dir)
        texts |= set(data["sentence1"]) | set(data["sentence2"])
    assert result["embedded_texts"] == len(texts)  # every distinct text embedded once, shared by the tasks
    json.dumps(result)  # serialisable as is
    report = to_markdown(result, command="psp-st eval --suite quick")
    assert "| stsb-test |" in report and "psp-st eval --suite quick" in report


def test_full_suite_lists_absent_optional_data_as_skipped(data_dir):
    tasks, skipped = suite_tasks("full", data_dir)
    names = {task.name for task in tasks}
    assert {"tatoeba-deu", "turku-release1-dev retrieval", "msrpc train->test", "pawsx-zh-test"} <= names
    assert "opusparcus" in skipped


def test_full_suite_with_the_opusparcus_fixture_adds_its_tasks(data_dir, opusparcus_dir):
    tasks, skipped = suite_tasks("full", data_dir, opusparcus_dir=opusparcus_dir)
    names = {task.name for task in tasks}
    assert {"opusparcus-en dev->test", "opusparcus-en-dev"} <= names and "opusparcus" not in skipped


def test_unknown_suite_and_missing_data_dir(tmp_path):
    with pytest.raises(ValueError, match="unknown suite 'medium'"):
        suite_tasks("medium", tmp_path)
    with pytest.raises(FileNotFoundError, match="evaluation data folder .*nowhere does not exist"):
        suite_tasks("quick", tmp_path / "nowhere")


def test_suite_evaluator_flattens_metrics_with_dev_as_primary(psp_model, data_dir):
    from psp_st.evaluation import SuiteEvaluator

    evaluator = SuiteEvaluator("quick", data_dir=data_dir, name="quick")
    metrics = evaluator(psp_model)
    assert evaluator.primary_metric == "quick_stsb-dev_spearman"
    assert evaluator.primary_metric in metrics and "quick_msrpc-test_cosine_accuracy" in metrics
