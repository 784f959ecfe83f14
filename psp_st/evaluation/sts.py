"""STS evaluation: per-subset Pearson/Spearman and the two ways the literature averages STS years."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from psp_st.arguments import check_names
from psp_st.evaluation.base import CachedEmbeddingEvaluator, read_pairs, shared_cache
from psp_st.evaluation.correlation import correlations
from psp_st.evaluation.embeddings import EmbeddingCache, cosine_pairs


def wieting_means(
    per_subset: Mapping[str, Mapping[str, float]], groups: Mapping[str, Sequence[str]], metric: str = "pearson"
) -> dict[str, float]:
    """The Wieting convention: ``{group (STS year): mean of its subsets' metric, ..., "all": mean of those}``."""
    means: dict[str, float] = {}
    for group, names in groups.items():
        missing = [name for name in names if name not in per_subset]
        if missing or not names:
            raise ValueError(f"STS group {group!r}: no result for subset(s) {missing or names}")
        means[group] = float(np.mean([per_subset[name][metric] for name in names]))
    if not means:
        raise ValueError("no STS groups to average")
    means["all"] = float(np.mean(list(means.values())))
    return means


def sbert_pooled(
    gold: Mapping[str, ArrayLike], predicted: Mapping[str, ArrayLike], groups: Mapping[str, Sequence[str]]
) -> dict[str, float]:
    """The SBERT convention: per group, Spearman over the concatenation of its subsets; then their mean."""
    pooled: dict[str, float] = {}
    for group, names in groups.items():
        gold_all = np.concatenate([np.asarray(gold[name], dtype=np.float64) for name in names])
        predicted_all = np.concatenate([np.asarray(predicted[name], dtype=np.float64) for name in names])
        pooled[group] = correlations(gold_all, predicted_all, name=f"{group} (all subsets)")["spearman"]
    pooled["all"] = float(np.mean(list(pooled.values())))
    return pooled


class STSEvaluator(CachedEmbeddingEvaluator):
    """Cosine vs. human ``score`` on ``{subset name: dataset}``, optionally grouped (``{year: [subset names]}``).

    Per subset, the Pearson and Spearman of ST's ``EmbeddingSimilarityEvaluator`` (a test checks); our own for what
    the STS years need: many subsets over shared embeddings, :func:`wieting_means`, :func:`sbert_pooled`, no NaN."""

    def __init__(
        self,
        subsets: Mapping[str, Any],
        groups: Mapping[str, Sequence[str]] | None = None,
        name: str = "",
        batch_size: int = 64,
        show_progress_bar: bool = False,
        cache: EmbeddingCache | None = None,
    ) -> None:
        super().__init__(name=name, batch_size=batch_size, show_progress_bar=show_progress_bar, cache=cache)
        if not isinstance(subsets, Mapping):
            raise TypeError(
                f"subsets must map subset names to datasets, got {type(subsets).__name__}: for one dataset write "
                "STSEvaluator({'my-sts': data})"
            )
        if not subsets:
            raise ValueError("STSEvaluator needs at least one subset")
        self.subsets: dict[str, tuple[list[str], list[str], np.ndarray]] = {}
        for subset, data in subsets.items():
            source = getattr(getattr(data, "info", None), "description", None) or subset
            first, second, scores = read_pairs(data, "score", f"STS subset {subset!r} ({source})")
            try:
                self.subsets[subset] = (first, second, np.asarray(scores, dtype=np.float64))
            except (TypeError, ValueError) as error:
                raise ValueError(f"STS subset {subset!r} ({source}): column 'score' is not numeric ({error})") from None
        self.groups = {
            group: check_names(f"groups[{group!r}]", names, "subset names") for group, names in (groups or {}).items()
        }
        for group, names in self.groups.items():
            unknown = [n for n in names if n not in self.subsets]
            if unknown:
                raise ValueError(f"STS group {group!r} names unknown subset(s) {unknown}")
        self.primary_metric = "wieting_pearson" if self.groups else f"{next(iter(self.subsets))}_spearman"

    def predict(self, model: Any) -> dict[str, np.ndarray]:
        """Cosine similarity of every pair, per subset."""
        cache = shared_cache(self, model)
        cache.add([text for s1, s2, _ in self.subsets.values() for text in (*s1, *s2)])
        return {
            subset: cosine_pairs(cache.encode(s1), cache.encode(s2)) for subset, (s1, s2, _) in self.subsets.items()
        }

    def compute_metrics(self, model: Any) -> dict[str, float]:
        predicted = self.predict(model)
        gold = {subset: scores for subset, (_, _, scores) in self.subsets.items()}
        per_subset = {
            subset: correlations(gold[subset], predicted[subset], name=f"{self.name or 'STS'}/{subset}")
            for subset in self.subsets
        }
        metrics = {
            f"{subset}_{metric}": value for subset, values in per_subset.items() for metric, value in values.items()
        }
        if self.groups:
            for metric in ("pearson", "spearman"):
                for group, value in wieting_means(per_subset, self.groups, metric).items():
                    metrics[f"wieting_{metric}" if group == "all" else f"{group}_mean_{metric}"] = value
            for group, value in sbert_pooled(gold, predicted, self.groups).items():
                metrics["sbert_spearman" if group == "all" else f"{group}_all_spearman"] = value
        return metrics

    description = "Semantic Similarity"

    def get_config_dict(self) -> dict[str, Any]:
        return {"subsets": list(self.subsets), "groups": self.groups} if self.groups else {}
