from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from psp_st.evaluation import load_local, run_suite, to_markdown, write_report
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
    for key in ("stsb-dev", "stsb-test", "sick-test", "sts17-en-en", "pawsx-en-test", "msrpc-test", *THRESHOLD_SETS):
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
    assert {"opusparcus-en dev->test", "opusparcus-en-dev agreement"} <= names and "opusparcus" not in skipped


def test_full_suite_task_names_are_unique(data_dir, opusparcus_dir):
    # results are keyed by task name: the stsb-test agreement task replaced the stsb-test correlations (Z1)
    names = [task.name for task in suite_tasks("full", data_dir, opusparcus_dir=opusparcus_dir)[0]]
    assert len(names) == len(set(names)) and "stsb-test agreement" in names


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


@pytest.fixture
def fixture_data_copy(tmp_path):
    """A writable copy of the synthetic data folder (a few dozen rows per file)."""
    import shutil

    from tests.conftest import FIXTURE_DATA_DIR

    return Path(shutil.copytree(FIXTURE_DATA_DIR, tmp_path / "data"))


class NoEncodeModel:
    """A model that fails the test when anything is embedded."""

    model_card_data = None  # a SentenceTransformer's attribute, which run_suite checks for

    def encode(self, *args, **kwargs):
        raise AssertionError("embedded before the suite's checks")


def test_a_missing_file_stops_the_suite_before_any_task(fixture_data_copy):  # C1
    (fixture_data_copy / "bitext_mining" / "tatoeba" / "fra-eng.parquet").unlink()
    with pytest.raises(FileNotFoundError, match=r"has no bitext_mining/tatoeba/fra-eng\.parquet"):
        run_suite(NoEncodeModel(), "full", data_dir=fixture_data_copy)


def test_missing_matplotlib_stops_a_plotting_suite_before_any_task(data_dir, tmp_path, monkeypatch):  # C2
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"psp-st\[eval\]"):
        run_suite(NoEncodeModel(), "full", data_dir=data_dir, out_dir=tmp_path / "out")


def test_a_data_error_names_the_suite_task(fixture_data_copy, monkeypatch):  # C5
    from psp_st.evaluation import suite

    path = fixture_data_copy / "pair_classification" / "msrpc" / "train.parquet"
    frame = pd.read_parquet(path)
    frame.assign(label=frame.label.astype(str)).to_parquet(path)
    mlp = [task for task in suite_tasks("full", fixture_data_copy)[0] if task.name == "msrpc train->test"]
    monkeypatch.setattr(suite, "suite_tasks", lambda *args: (mlp, {}))
    with pytest.raises(ValueError, match=r"^suite task msrpc train->test: .*train\.parquet: column 'label' holds"):
        run_suite(NoEncodeModel(), "full", data_dir=fixture_data_copy)


def test_opusparcus_dir_is_refused_outside_the_full_suite(data_dir, tmp_path):  # C7
    with pytest.raises(ValueError, match="--opusparcus-dir .* full suite only"):
        suite_tasks("quick", data_dir, opusparcus_dir=tmp_path)


def test_xling_names_an_absent_bitext_file_as_absent(fixture_data_copy):  # C8
    (fixture_data_copy / "bitext" / "fr-en.parquet").unlink()
    _, skipped = suite_tasks("xling", fixture_data_copy)
    assert skipped["flores-fr"].endswith("fr-en.parquet does not exist")


def test_a_report_of_a_command_naming_a_file_that_is_not_utf8_is_written(tmp_path):  # P6-1
    command = "psp-st eval --model m --out ev\udce9"
    result = {"model": "m", "suite": "quick", "data_dir": "d", "embedded_texts": 0, "seconds": 1.0, "summary": []}
    paths = write_report(result, tmp_path, command)
    assert json.loads(paths["json"].read_text(encoding="utf-8"))["command"] == command
    assert "ev\\udce9" in paths["markdown"].read_text(encoding="utf-8")


#: The splits the quick suite's test-set classification tasks take their dev threshold from (E11-1).
THRESHOLD_SETS = ("pawsx-en-dev", "msrpc-train")


def test_test_set_classification_reports_accuracy_at_a_threshold_chosen_elsewhere(psp_model, data_dir):  # E11-1
    result = run_suite(psp_model, "quick", data_dir=data_dir)
    for task in ("pawsx-en-test", "msrpc-test"):
        assert "cosine_accuracy_at_dev_threshold" in result["results"][task]
        assert any(r["task"] == task and r["metric"] == "accuracy at dev threshold" for r in result["summary"])


def test_a_report_with_threshold_tasks_says_where_the_thresholds_come_from():  # E11-1
    from psp_st.evaluation.report import THRESHOLD_NOTE

    row = {"group": "Paraphrase classification", "task": "msrpc-test", "metric": "majority rate", "value": 66.5}
    result = {"model": "m", "suite": "quick", "data_dir": "d", "embedded_texts": 2, "seconds": 1.0, "summary": [row]}
    assert THRESHOLD_NOTE in to_markdown(result)


def test_no_progress_bar_means_none_from_the_data_loading_either(psp_model, data_dir, tmp_path, monkeypatch, capsys):
    """E14-4: with show_progress_bar=False (the default), datasets' "Generating train split" bars still printed."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "fresh-cache")  # the files load anew
    capsys.readouterr()
    run_suite(psp_model, "quick", data_dir=data_dir)
    assert capsys.readouterr().err == ""
    assert datasets.is_progress_bar_enabled()  # the caller's switch is back
