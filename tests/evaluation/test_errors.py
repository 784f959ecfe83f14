from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from psp_st.data import load_opusparcus, load_table
from psp_st.evaluation.embeddings import EmbeddingCache, NonFiniteEmbeddingError
from psp_st.evaluation.loaders import load_local
from psp_st.evaluation.sts import STSEvaluator
from psp_st.inference.finite import NonFiniteOutputError


def test_missing_data_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"sts/stsbenchmark/test\.parquet.*--data-dir"):
        load_local("stsb-test", tmp_path)


def test_split_without_a_needed_column_names_file_and_column(tmp_path):
    path = tmp_path / "sts" / "stsbenchmark" / "test.parquet"
    path.parent.mkdir(parents=True)
    pd.DataFrame({"sentence1": ["a"], "sentence2": ["b"], "similarity": [1.0]}).to_parquet(path)
    with pytest.raises(ValueError, match=r"test\.parquet: missing column\(s\) \['score'\]"):
        load_local("stsb-test", tmp_path)


def test_null_sentence_names_the_row(tmp_path):
    path = tmp_path / "pairs.parquet"
    pd.DataFrame({"sentence1": ["a", None], "sentence2": ["b", "c"], "label": [1, 0]}).to_parquet(path)
    with pytest.raises(ValueError, match=r"pairs\.parquet: column 'sentence1' row 2 is null \(missing\)"):
        load_table(path, ["sentence1", "sentence2", "label"], ["sentence1", "sentence2"])


def test_unknown_dataset_key():
    with pytest.raises(ValueError, match="unknown dataset 'stsc-test'"):
        load_local("stsc-test")


def test_malformed_opusparcus_line(tmp_path):
    path = tmp_path / "en-dev.txt"
    path.write_text("en-D1\ta\tb\t4.0\nen-D2\ta\tb\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"en-dev\.txt:2: expected 4 tab-separated fields"):
        load_opusparcus(path)


class NaNModel:
    model_card_data = type("Card", (), {"model_name": "broken-model"})()

    def encode(self, texts, **kwargs):
        vectors = np.ones((len(texts), 4), dtype=np.float32)
        vectors[texts.index("bad")] = np.nan if "bad" in texts else 1.0
        return vectors


def test_model_returning_nan_is_named_with_the_text():
    with pytest.raises(
        NonFiniteEmbeddingError,
        match="model broken-model returned NaN/inf embeddings for 1 of 2 texts, first at index 1: 'bad'",
    ):
        EmbeddingCache(NaNModel()).encode(["good", "bad"])


def test_evaluators_surface_the_nan_error():
    data = {"sentence1": ["good", "bad"], "sentence2": ["fine", "ok"], "score": [1.0, 2.0]}
    with pytest.raises(NonFiniteEmbeddingError, match="broken-model"):
        STSEvaluator({"toy": data})(NaNModel())


class NaNModule:
    """A first module with ``embed``: the fast path (``encode_texts``) takes it, not ``encode``."""

    def embed(self, texts, batch_size=8192, normalize=False):
        return np.array([[np.nan, 1.0] if text == "bad" else [1.0, 0.0] for text in texts], dtype=np.float32)


class FastNaNModel(NaNModel):
    prompts: dict[str, str] = {}
    default_prompt_name = None

    def __iter__(self):
        return iter([NaNModule()])


def test_the_fast_path_nan_is_the_evaluation_error_naming_the_model():  # A6-10
    with pytest.raises(NonFiniteEmbeddingError, match="model broken-model: .*non-finite"):
        EmbeddingCache(FastNaNModel()).encode(["good", "bad"])


def test_catching_the_inference_error_catches_the_evaluation_one():  # A6-10
    with pytest.raises(NonFiniteOutputError):
        EmbeddingCache(NaNModel()).encode(["good", "bad"])


def test_data_dir_without_the_file_names_the_folder_and_file(tmp_path):
    with pytest.raises(FileNotFoundError) as error:
        load_local("stsb-dev", tmp_path)
    assert str(error.value).startswith(f"the data folder {tmp_path} has no sts/stsbenchmark/dev.parquet")


def test_a_score_column_of_strings_names_file_and_column(tmp_path):  # C3
    path = tmp_path / "sts" / "stsbenchmark" / "test.parquet"
    path.parent.mkdir(parents=True)
    pd.DataFrame({"sentence1": ["a", "b"], "sentence2": ["b", "c"], "score": ["4.5", "1"]}).to_parquet(path)
    with pytest.raises(ValueError, match=r"test\.parquet: column 'score' holds .*string, expected numbers"):
        load_local("stsb-test", tmp_path)


def test_a_null_label_names_the_row(tmp_path):  # C3
    path = tmp_path / "pair_classification" / "msrpc" / "test.parquet"
    path.parent.mkdir(parents=True)
    pd.DataFrame({"sentence1": ["a", "b"], "sentence2": ["b", "c"], "label": [1, None]}).to_parquet(path)
    with pytest.raises(ValueError, match=r"column 'label' row 2 is null \(missing\), expected a number"):
        load_local("msrpc-test", tmp_path)


def test_a_missing_flores_file_says_how_to_narrow_the_mteb_task(tmp_path):  # C9
    """XL7: "keep the languages you have" led to filter_languages(["deu", "eng"]), which keeps every subset."""
    from psp_st.evaluation.loaders import load_flores

    with pytest.raises(FileNotFoundError, match=r"ar-en\.parquet does not exist.*filter_languages.*without 'eng'"):
        load_flores("ar", tmp_path)


@pytest.mark.parametrize("model", ["psp-en", None])
def test_run_suite_asks_for_a_loaded_model(model, tmp_path):
    """AP13: a name reached str.encode ('encode() takes at most 2 arguments (4 given)'); None 'has no attribute'."""
    from psp_st.evaluation import run_suite

    with pytest.raises(TypeError, match="model must be a loaded model .*psp_st.load"):
        run_suite(model, data_dir=tmp_path)


def test_run_suite_names_an_engine_and_says_to_load_the_model(psp_module, tmp_path):
    """An engine passed the model check, then failed in ST's evaluator: 'PSPEngine' has no attribute 'model_card_data'."""
    from psp_st.evaluation import run_suite

    with pytest.raises(TypeError, match=r"run_suite needs a SentenceTransformer, got PSPEngine: .*psp_st\.load"):
        run_suite(psp_module.inference_engine(), data_dir=tmp_path)


def test_embedding_cache_names_batch_size_zero(lookup_model):
    """AP13: batch_size=0 surfaced as Sentence-Transformers' error inside the first suite task."""
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        EmbeddingCache(lookup_model, batch_size=0)


def test_sts_evaluator_given_one_dataset_asks_for_a_mapping():
    """AP14: AttributeError: 'Dataset' object has no attribute 'items'."""
    data = pd.DataFrame({"sentence1": ["a", "b"], "sentence2": ["c", "d"], "score": [1.0, 2.0]})
    with pytest.raises(
        TypeError, match=r"subsets must map subset names to datasets.*STSEvaluator\(\{'my-sts': data\}\)"
    ):
        STSEvaluator(data)


def test_sts_group_given_as_one_name_is_named():
    """AP14: a str group was read as its characters ('names unknown subset(s) ['s', 't', ...]')."""
    data = pd.DataFrame({"sentence1": ["a", "b"], "sentence2": ["c", "d"], "score": [1.0, 2.0]})
    with pytest.raises(TypeError, match=r"groups\['2012'\] must be a list of subset names, got the single str"):
        STSEvaluator({"sts12": data}, groups={"2012": "sts12"})
