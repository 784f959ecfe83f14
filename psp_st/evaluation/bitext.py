"""Bitext mining (Tatoeba): error rate of nearest-neighbour translation retrieval, both directions."""

from __future__ import annotations

from typing import Any

import torch
from sentence_transformers.sentence_transformer.evaluation import TranslationEvaluator

from psp_st.evaluation.embeddings import EmbeddingCache
from psp_st.evaluation.loaders import BITEXT_COLUMNS, check_columns


class BitextMiningEvaluator(TranslationEvaluator):
    """ST's ``TranslationEvaluator`` (cosine nearest neighbour, both directions), reported as error rates.

    Row ``i`` of ``source`` translates row ``i`` of ``target``. A retrieval is correct when the nearest
    neighbour has the same text as the gold translation (so duplicate sentences do not count as errors, as in
    LASER's Tatoeba evaluation). Adds ``src2trg_error``, ``trg2src_error`` and ``mean_error`` in percent, the
    numbers P-SP reports for Tatoeba, to ST's accuracies. Embeds through a shared, NaN-checked cache.

    Args:
        data: dataset with ``source`` and ``target`` text columns.
        name: metric name prefix (e.g. ``tatoeba-deu``).

    Example::

        evaluator = BitextMiningEvaluator(load_local("tatoeba-deu", data_dir), name="tatoeba-deu")
        evaluator(model)["tatoeba-deu_mean_error"]
    """

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
            list(data["source"]),
            list(data["target"]),
            name=name,
            batch_size=batch_size,
            show_progress_bar=show_progress_bar,
            write_csv=False,
        )
        self.cache = cache
        self.primary_metric = "mean_error"

    def embed_inputs(self, model: Any, sentences: Any, **kwargs: Any) -> list[torch.Tensor]:
        cache = (
            self.cache
            if self.cache is not None and self.cache.model is model
            else EmbeddingCache(model, batch_size=self.batch_size, show_progress_bar=self.show_progress_bar)
        )
        return list(torch.from_numpy(cache.encode(list(sentences))))

    def __call__(
        self, model: Any, output_path: str | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        metrics = super().__call__(model, output_path, epoch, steps)
        prefix = f"{self.name}_" if self.name else ""
        for direction in ("src2trg", "trg2src", "mean"):
            metrics[f"{prefix}{direction}_error"] = 100.0 * (1.0 - metrics[f"{prefix}{direction}_accuracy"])
        self.primary_metric = f"{prefix}mean_error"
        self.greater_is_better = False
        return metrics

    @property
    def description(self) -> str:
        return "Bitext Mining"
