from __future__ import annotations

import pandas as pd
import pytest

from psp_st.evaluation import loaders
from psp_st.evaluation.embeddings import EmbeddingCache
from psp_st.evaluation.suite import suite_tasks


@pytest.mark.shared_data
def test_local_stsb_test_has_the_documented_shape(data_dir):
    data = loaders.load_local("stsb-test", data_dir)
    assert len(data) == 1379 and {"sentence1", "sentence2", "score"} <= set(data.column_names)
    assert isinstance(data[0]["sentence1"], str)


def test_sick_scores_stay_on_their_1_to_5_scale(data_dir):
    scores = loaders.load_local("sick-test", data_dir)["score"]
    assert min(scores) >= 1.0 and max(scores) <= 5.0
    assert loaders.SCORE_RANGES["sick"] == (1.0, 5.0)


def test_sts_years_from_local_folders_feed_the_full_suite(tmp_path, lookup_model):
    for year, subsets in (("sts2012", ("MSRpar", "OnWN")), ("sts2013", ("FNWN",))):
        folder = tmp_path / "sts" / year
        folder.mkdir(parents=True)
        for subset in subsets:
            pd.DataFrame(
                {"sentence1": ["a", "a", "c"], "sentence2": ["b", "c", "d"], "score": [5.0, 1.0, 2.0]}
            ).to_parquet(folder / f"{subset}.parquet")
    tasks, skipped = suite_tasks("full", tmp_path)
    assert "sts2012-2016" not in skipped
    years = next(task for task in tasks if task.name == "sts2012-2016")
    model = lookup_model({"a": [1, 0], "b": [1, 0.1], "c": [0, 1], "d": [0.5, 1]})
    evaluator = years.build(EmbeddingCache(model))
    assert evaluator.groups == {"sts2012": ["sts2012/MSRpar", "sts2012/OnWN"], "sts2013": ["sts2013/FNWN"]}
    metrics = evaluator(model)
    assert metrics["wieting_pearson"] == pytest.approx(metrics["sts2012/MSRpar_pearson"])  # identical subsets


def test_hub_sts_loader_calls_the_mteb_copy(monkeypatch):
    import datasets

    calls = []

    def fake_load_dataset(path, name=None, split=None, **kwargs):
        calls.append((path, name, split))
        return datasets.Dataset.from_dict({"sentence1": ["a"], "sentence2": ["b"], "score": [3.0]})

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    assert len(loaders.load_sts_hub("sts12")) == 1
    loaders.load_sts_hub("sts17", subset="en-de")
    assert calls == [("mteb/sts12-sts", None, "test"), ("mteb/sts17-crosslingual-sts", "en-de", "test")]
    with pytest.raises(ValueError, match="unknown Hub STS set 'sts11'"):
        loaders.load_sts_hub("sts11")


def test_hub_opusparcus_loader_renames_to_our_columns(monkeypatch):
    import datasets

    def fake_load_dataset(path, name=None, split=None, **kwargs):
        assert (path, name) == ("GEM/opusparcus", "en.100")
        return datasets.Dataset.from_dict({"input": ["a"], "target": ["b"], "annot_score": [4.0], "lang": ["en"]})

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    data = loaders.load_opusparcus_hub("en", "test")
    assert data[0]["sentence1"] == "a" and data[0]["score"] == 4.0
