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


def test_sts_years_from_local_folders_feed_the_full_suite(tmp_path, lookup_model):
    import shutil

    from tests.conftest import FIXTURE_DATA_DIR

    data_dir = shutil.copytree(FIXTURE_DATA_DIR, tmp_path / "data")  # the suite checks every file it reads first
    for year, subsets in (("sts2012", ("MSRpar", "OnWN")), ("sts2013", ("FNWN",))):
        folder = data_dir / "sts" / year
        folder.mkdir(parents=True)
        for subset in subsets:
            pd.DataFrame(
                {"sentence1": ["a", "a", "c"], "sentence2": ["b", "c", "d"], "score": [5.0, 1.0, 2.0]}
            ).to_parquet(folder / f"{subset}.parquet")
    tasks, skipped = suite_tasks("full", data_dir)
    assert "sts2012-2016" not in skipped
    years = next(task for task in tasks if task.name == "sts2012-2016")
    model = lookup_model({"a": [1, 0], "b": [1, 0.1], "c": [0, 1], "d": [0.5, 1]})
    evaluator = years.build(EmbeddingCache(model))
    assert evaluator.groups == {"sts2012": ["sts2012/MSRpar", "sts2012/OnWN"], "sts2013": ["sts2013/FNWN"]}
    metrics = evaluator(model)
    assert metrics["wieting_pearson"] == pytest.approx(metrics["sts2012/MSRpar_pearson"])  # identical subsets


def test_evaluators_read_a_datasets_table_in_one_arrow_read(monkeypatch):  # F7-5
    """Iterating datasets' lazy ``Column`` costs a Python call per row: ~5 s of the ~19 s full suite on psp-en."""
    from datasets import Dataset
    from datasets.arrow_dataset import Column

    from psp_st.evaluation.base import read_pairs
    from psp_st.evaluation.bitext import BitextMiningEvaluator

    pairs = Dataset.from_dict({"sentence1": ["a", "b"], "sentence2": ["c", "d"], "score": [1.0, 2.0]})
    bitext = Dataset.from_dict({"source": ["ein Hund", "eine Katze"], "target": ["a dog", "a cat"]})

    def refuse(self):
        raise AssertionError("a datasets Column was iterated row by row")

    monkeypatch.setattr(Column, "__iter__", refuse)
    assert read_pairs(pairs, "score", "test") == (["a", "b"], ["c", "d"], [1.0, 2.0])
    BitextMiningEvaluator(bitext)
