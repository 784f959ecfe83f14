"""Bitext mining (Tatoeba, FLORES): error rate of nearest-neighbour translation retrieval, both directions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from sentence_transformers.sentence_transformer.evaluation import TranslationEvaluator

from psp_st.evaluation.base import CachedEmbeddingEvaluator, shared_cache
from psp_st.evaluation.embeddings import EmbeddingCache, cosine_matrix
from psp_st.evaluation.loaders import BITEXT_COLUMNS, check_columns

#: The retrieval directions: source -> target (x->en), target -> source (en->x), and their mean.
DIRECTIONS = ("src2trg", "trg2src", "mean")


def tied_top1_accuracy(similarities: np.ndarray, candidate_texts: list[str]) -> float:
    """Share of queries (rows; row ``i``'s gold is candidate ``i``) whose nearest candidate has the gold's text, ties
    counted as the mean over tie orders: a query tied at the top between k candidates, g of them with the gold's
    text, scores g / k. Cosines are compared rounded to 6 decimals (float noise ties, as in pair classification), so
    the result does not depend on the order of the rows (an argmax gives a tie to the lowest row)."""
    ids = np.unique(np.asarray(candidate_texts, dtype=object), return_inverse=True)[1]
    rounded = np.round(similarities.astype(np.float64), 6)
    credit = [np.mean(ids[row == row.max()] == ids[i]) for i, row in enumerate(rounded)]
    return float(np.mean(credit))


class BitextMiningEvaluator(TranslationEvaluator):
    """ST's ``TranslationEvaluator`` (row ``i`` of ``source`` translates row ``i`` of ``target``), plus error rates.

    A retrieval is correct when the nearest neighbour has the gold's text (as in LASER's Tatoeba); a tie at the top
    counts as the mean over tie orders (:func:`tied_top1_accuracy`; ST and MTEB give it to the lowest row). Adds
    ``src2trg_error``, ``trg2src_error`` and ``mean_error`` in percent (P-SP's Tatoeba numbers) to ST's accuracies.
    Lower is better: as a trainer's ``metric_for_best_model``, pass ``greater_is_better=False`` (transformers does
    not read the evaluator's)."""

    def __init__(
        self,
        data: Any,
        name: str = "",
        cache: EmbeddingCache | None = None,
        batch_size: int = 64,
        show_progress_bar: bool = False,
    ) -> None:
        check_columns(data, BITEXT_COLUMNS, f"bitext data {name!r}", BITEXT_COLUMNS)
        super().__init__(
            list(data["source"][:]),  # [:]: a datasets Column in one Arrow read, not a call per row
            list(data["target"][:]),
            name=name,
            batch_size=batch_size,
            show_progress_bar=show_progress_bar,
            write_csv=False,
        )
        self.cache = cache
        self.primary_metric = "mean_error"

    def embed_inputs(self, model: Any, sentences: Any, **kwargs: Any) -> list[torch.Tensor]:
        return list(torch.from_numpy(shared_cache(self, model).encode(list(sentences))))

    def __call__(
        self, model: Any, output_path: str | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        cache = shared_cache(self, model)
        similarities = cosine_matrix(cache.encode(self.source_sentences), cache.encode(self.target_sentences))
        accuracies = {
            "src2trg_accuracy": tied_top1_accuracy(similarities, self.target_sentences),
            "trg2src_accuracy": tied_top1_accuracy(similarities.T, self.source_sentences),
        }
        accuracies["mean_accuracy"] = (accuracies["src2trg_accuracy"] + accuracies["trg2src_accuracy"]) / 2
        metrics = self.prefix_name_to_metrics(accuracies, self.name)
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        prefix = f"{self.name}_" if self.name else ""
        for direction in DIRECTIONS:
            metrics[f"{prefix}{direction}_error"] = 100.0 * (1.0 - metrics[f"{prefix}{direction}_accuracy"])
        self.primary_metric = f"{prefix}mean_error"
        self.greater_is_better = False
        return metrics


class MultiBitextEvaluator(CachedEmbeddingEvaluator):
    """:class:`BitextMiningEvaluator`'s errors on several sets (``<set>_src2trg_error``, ...) with one cache, and
    their unweighted means (``mean_src2trg_error``, ``mean_trg2src_error``, ``mean_error``): ST's
    ``SequentialEvaluator`` averages only one primary score, so the directions would be lost."""

    def __init__(
        self,
        datasets: Mapping[str, Any],
        name: str = "",
        cache: EmbeddingCache | None = None,
        batch_size: int = 64,
        show_progress_bar: bool = False,
    ) -> None:
        super().__init__(name=name, batch_size=batch_size, show_progress_bar=show_progress_bar, cache=cache)
        if not datasets:
            raise ValueError("MultiBitextEvaluator needs at least one bitext set")
        self.evaluators = {
            key: BitextMiningEvaluator(data, name=key, batch_size=batch_size, show_progress_bar=show_progress_bar)
            for key, data in datasets.items()
        }
        self.primary_metric = "mean_error"
        self.greater_is_better = False

    def compute_metrics(self, model: Any) -> dict[str, float]:
        cache = shared_cache(self, model)
        metrics: dict[str, float] = {}
        for key, evaluator in self.evaluators.items():
            evaluator.cache = cache
            found = evaluator(model)
            for direction in DIRECTIONS:
                metrics[f"{key}_{direction}_error"] = found[f"{key}_{direction}_error"]
        for direction in DIRECTIONS:  # mean_src2trg_error, mean_trg2src_error and (both directions) mean_error
            values = [metrics[f"{key}_{direction}_error"] for key in self.evaluators]
            metrics["mean_error" if direction == "mean" else f"mean_{direction}_error"] = sum(values) / len(values)
        return metrics

    description = "Bitext Mining"

    def get_config_dict(self) -> dict[str, Any]:
        return {"sets": list(self.evaluators)}
