"""What every psp-st evaluator shares: ST's ``BaseEvaluator`` plus one embedding cache per evaluation run."""

from __future__ import annotations

from typing import Any

from sentence_transformers.base.evaluation.evaluator import BaseEvaluator

from psp_st.evaluation.embeddings import EmbeddingCache


class CachedEmbeddingEvaluator(BaseEvaluator):
    """A ``BaseEvaluator`` that embeds through an :class:`EmbeddingCache` (each text once, NaN checked).

    Pass the same ``cache`` to several evaluators to share embeddings across datasets; without one, each call
    builds a fresh cache. A cache built for another model is never reused.
    """

    def __init__(
        self, name: str = "", batch_size: int = 64, show_progress_bar: bool = False, cache: EmbeddingCache | None = None
    ) -> None:
        super().__init__()
        self.name = name
        self.batch_size = batch_size
        self.show_progress_bar = show_progress_bar
        self.cache = cache

    def embedding_cache(self, model: Any) -> EmbeddingCache:
        if self.cache is not None and self.cache.model is model:
            return self.cache
        return EmbeddingCache(model, batch_size=self.batch_size, show_progress_bar=self.show_progress_bar)

    def finish(self, model: Any, metrics: dict[str, float], epoch: int, steps: int) -> dict[str, float]:
        """Prefix the metric names with ``name`` and store them in the model card, like ST's evaluators."""
        metrics = self.prefix_name_to_metrics(metrics, self.name)
        if hasattr(model, "model_card_data"):
            self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics
