"""Fixtures of the evaluation tests: a lookup "model" with hand-chosen vectors, and the Opusparcus fixture."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

FIXTURES = Path(__file__).parent / "fixtures"


class LookupModel:
    """A stand-in for a SentenceTransformer whose ``encode`` returns hand-chosen vectors per text."""

    similarity_fn_name = "cosine"

    def __init__(self, vectors: dict[str, list[float]], name: str = "lookup-model") -> None:
        self.vectors = {text: np.asarray(vector, dtype=np.float32) for text, vector in vectors.items()}
        self.model_card_data = SimpleNamespace(model_name=name, set_evaluation_metrics=lambda *args: None)
        self.calls: list[list[str]] = []

    def encode(self, texts, batch_size=32, show_progress_bar=False, convert_to_numpy=True, **kwargs):
        texts = list(texts)
        self.calls.append(texts)
        return np.stack([self.vectors[text] for text in texts])


@pytest.fixture
def lookup_model():
    return LookupModel


@pytest.fixture
def opusparcus_dir() -> Path:
    return FIXTURES / "opusparcus"


def _stsb_test_scores(model: Any, data_dir: Any) -> tuple[float, float, float]:
    """STS Benchmark test Spearman of ``model`` from our evaluator, ST's, and ``mteb.evaluate`` (offline)."""
    import mteb
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

    from psp_st.evaluation import STSEvaluator, load_local
    from psp_st.evaluation.mteb_tasks import STSBenchmarkLocal

    data = load_local("stsb-test", data_dir)
    ours = STSEvaluator({"stsb-test": data})(model)["stsb-test_spearman"]
    st = EmbeddingSimilarityEvaluator(
        data["sentence1"],
        data["sentence2"],
        data["score"],
        batch_size=64,
        similarity_fn_names=["cosine"],
        write_csv=False,
    )(model)["spearman_cosine"]
    task = STSBenchmarkLocal(data_dir=data_dir).filter_eval_splits(["test"])
    results = mteb.evaluate(model, [task], cache=None, show_progress_bar=False, encode_kwargs={"batch_size": 64})
    mteb_score = results.task_results[0].scores["test"][0]["cosine_spearman"]
    return ours, st, mteb_score


@pytest.fixture
def stsb_test_scores():
    """STS Benchmark test Spearman from our evaluator, ST's and ``mteb.evaluate`` on the offline task."""
    return _stsb_test_scores
