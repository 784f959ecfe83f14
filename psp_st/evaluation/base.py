"""What every psp-st evaluator shares: ST's ``BaseEvaluator`` plus one embedding cache per evaluation run."""

from __future__ import annotations

from typing import Any

from sentence_transformers.base.evaluation.evaluator import BaseEvaluator

from psp_st.evaluation.embeddings import EmbeddingCache
from psp_st.evaluation.loaders import check_columns


def read_pairs(data: Any, column: str, source: str) -> tuple[list[str], list[str], Any]:
    """``sentence1``, ``sentence2`` and ``column`` of ``data``, checked (errors name ``source``)."""
    check_columns(data, ("sentence1", "sentence2", column), source, ("sentence1", "sentence2"))
    # [:]: a datasets Column in one Arrow read, not a Python call per row (a DataFrame: its Series; a dict: a copy)
    return list(data["sentence1"][:]), list(data["sentence2"][:]), data[column][:]


class CachedEmbeddingEvaluator(BaseEvaluator):
    """A ``BaseEvaluator`` that embeds through ``cache`` (shared by several evaluators; never one built for another
    model) or a fresh :class:`EmbeddingCache`. Subclasses implement :meth:`compute_metrics`."""

    def __init__(
        self, name: str = "", batch_size: int = 64, show_progress_bar: bool = False, cache: EmbeddingCache | None = None
    ) -> None:
        super().__init__()
        self.name = name
        self.batch_size = batch_size
        self.show_progress_bar = show_progress_bar
        self.cache = cache

    def compute_metrics(self, model: Any) -> dict[str, float]:
        """The metrics of ``model``, unprefixed."""
        raise NotImplementedError

    def __call__(
        self, model: Any, output_path: str | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        """The metrics prefixed with ``name`` and stored in the model card, like ST's evaluators."""
        metrics = self.prefix_name_to_metrics(self.compute_metrics(model), self.name)
        if hasattr(model, "model_card_data"):
            self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics


def shared_cache(evaluator: Any, model: Any) -> EmbeddingCache:
    """The evaluator's ``cache`` when it was built for ``model``, else a fresh one with its batch settings."""
    if evaluator.cache is not None and evaluator.cache.model is model:
        return evaluator.cache
    return EmbeddingCache(model, batch_size=evaluator.batch_size, show_progress_bar=evaluator.show_progress_bar)
