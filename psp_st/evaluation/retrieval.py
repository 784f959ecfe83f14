"""Paraphrase retrieval per label (Turku Paraphrase Corpus, Kanerva et al. 2023, section 8.1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from psp_st.arguments import check_int
from psp_st.evaluation.base import CachedEmbeddingEvaluator, read_pairs, shared_cache
from psp_st.evaluation.classification import TURKU_PARAPHRASE_FROM
from psp_st.evaluation.embeddings import EmbeddingCache
from psp_st.evaluation.turku_labels import parse_labels

#: Label groups reported by default, in order.
LABEL_GROUPS = ("1", "2", "3", "4<>", "4", "positive")


def retrieval_ranks(
    embeddings: np.ndarray, queries: ArrayLike, targets: ArrayLike, batch_size: int = 1024
) -> np.ndarray:
    """1-based rank of row ``targets[i]`` among all rows of ``embeddings`` by cosine similarity to row ``queries[i]``
    (itself no candidate, unless it is the target: rank 1). Ties count half (the mean over tie orders); cosines are
    compared rounded to 6 decimals, as in pair classification, so candidates whose cosines differ only by float noise
    (reordered words under a bag of pieces) tie."""
    import torch

    batch_size = check_int("batch_size", batch_size)
    vectors = torch.nn.functional.normalize(torch.as_tensor(embeddings, dtype=torch.float32), dim=-1)
    queries, targets = (
        _row_indexes(name, values, len(vectors)) for name, values in (("queries", queries), ("targets", targets))
    )
    if len(queries) != len(targets):
        raise ValueError(f"{len(queries)} queries but {len(targets)} targets")
    ranks = np.empty(len(queries), dtype=np.float64)
    for start in range(0, len(queries), batch_size):
        q = torch.from_numpy(queries[start : start + batch_size])
        t = torch.from_numpy(targets[start : start + batch_size])
        sims = torch.round(vectors[q] @ vectors.T, decimals=6)
        rows = torch.arange(len(q))
        target_sims = sims[rows, t].unsqueeze(1)
        sims[rows, q] = -torch.inf  # the query is not its own candidate
        greater = (sims > target_sims).sum(1)
        ties = (sims == target_sims).sum(1) - 1  # minus the target itself
        rank = 1.0 + greater.double() + ties.clamp(min=0).double() / 2.0
        rank[q == t] = 1.0
        ranks[start : start + len(q)] = rank.numpy()
    return ranks


def _row_indexes(name: str, values: ArrayLike, rows: int) -> np.ndarray:
    """``values`` as int64 row numbers of a matrix of ``rows`` rows; a float, negative or too large index is a
    ValueError naming ``name`` (numpy would truncate or count from the end)."""
    array = np.asarray(values)
    if array.size and (array.ndim != 1 or array.dtype.kind not in "iu"):
        raise ValueError(
            f"{name} must be a 1-D sequence of integer row numbers, got {array.dtype} of shape {array.shape}"
        )
    array = array.astype(np.int64).reshape(-1)
    if array.size and (array.min() < 0 or array.max() >= rows):
        raise ValueError(
            f"{name} must be row numbers in [0, {rows}) (the embeddings' rows), got {array.min()}..{array.max()}"
        )
    return array


def rank_metrics(ranks: Sequence[int] | np.ndarray, num_candidates: int) -> dict[str, float]:
    """``top1``/``top10`` accuracy (%) and ``mean_rank_pct``, ``mean(rank - 1) / (num_candidates - 1) * 100``
    ("as if there were 100 candidates": 5% is 6th of 100 on average; Kanerva et al., 2023, section 8.1)."""
    if len(ranks) == 0:
        raise ValueError("no pairs to compute retrieval metrics on")
    if num_candidates < 2:
        raise ValueError(f"retrieval needs at least 2 candidates, got {num_candidates}")
    ranks = np.asarray(ranks, dtype=np.float64)
    if ranks.min() < 1 or ranks.max() > num_candidates:
        raise ValueError(f"ranks must be 1-based, in [1, {num_candidates}], got {ranks.min()}..{ranks.max()}")
    return {
        "top1": float(np.mean(ranks <= 1) * 100),
        "top10": float(np.mean(ranks <= 10) * 100),
        "mean_rank_pct": float(np.mean(ranks - 1) / (num_candidates - 1) * 100),
        "pairs": float(len(ranks)),
    }


class RetrievalEvaluator(CachedEmbeddingEvaluator):
    """Kanerva et al. (2023), section 8.1: :func:`rank_metrics` of s2 among the distinct sentences of both sides,
    queried with s1, per Turku label group (``label_column``, ``4>``) and for all positive pairs (labels 3, 4).
    ST's ``InformationRetrievalEvaluator`` reports MRR/nDCG over relevant sets, not one target's rank per label."""

    def __init__(
        self,
        data: Any,
        name: str = "",
        label_column: str = "label_str",
        batch_size: int = 64,
        show_progress_bar: bool = False,
        cache: EmbeddingCache | None = None,
    ) -> None:
        super().__init__(name=name, batch_size=batch_size, show_progress_bar=show_progress_bar, cache=cache)
        self.sentences1, self.sentences2, raw = read_pairs(data, label_column, f"retrieval data {name!r}")
        labels = parse_labels(raw, f"column {label_column!r}")
        self.groups = [label.group for label in labels]
        self.positive = np.array([int(label.base) >= TURKU_PARAPHRASE_FROM for label in labels], dtype=bool)
        self.primary_metric = "positive_top1"

    def compute_metrics(self, model: Any) -> dict[str, float]:
        candidates = list(dict.fromkeys([*self.sentences1, *self.sentences2]))
        index = {text: row for row, text in enumerate(candidates)}
        embeddings = shared_cache(self, model).encode(candidates)
        ranks = retrieval_ranks(embeddings, [index[s] for s in self.sentences1], [index[s] for s in self.sentences2])
        groups = np.asarray(self.groups)
        metrics: dict[str, float] = {"candidates": float(len(candidates))}
        for group in LABEL_GROUPS:
            mask = self.positive if group == "positive" else groups == group
            if mask.any():
                for key, value in rank_metrics(ranks[mask], len(candidates)).items():
                    metrics[f"{group}_{key}"] = value
        return metrics

    description = "Paraphrase Retrieval"
