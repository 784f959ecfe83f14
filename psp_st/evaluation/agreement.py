"""Agreement with human scores: cosine per score level (Opusparcus Figure 2); nearest-neighbour tables (in
:mod:`psp_st.evaluation.neighbours`, imported here too)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from psp_st.evaluation.base import CachedEmbeddingEvaluator, read_pairs, shared_cache
from psp_st.evaluation.correlation import as_scores
from psp_st.evaluation.embeddings import EmbeddingCache, cosine_pairs
from psp_st.evaluation.neighbours import nearest_neighbours as nearest_neighbours
from psp_st.evaluation.neighbours import neighbour_table_markdown as neighbour_table_markdown
from psp_st.evaluation.neighbours import neighbour_tables as neighbour_tables


def sts_bucket(score: float) -> str:
    """Integer bucket of a 0-5 STS score: ``[0,1)`` -> ``"0-1"`` ... ``[4,5]`` -> ``"4-5"`` (5 joins 4-5)."""
    low = min(int(np.floor(score)), 4)
    return f"{low}-{low + 1}"


def exact_level(score: float) -> str:
    """The score itself as the level (Opusparcus' seven grades 1.0, 1.5, ..., 4.0)."""
    return f"{float(score):.1f}"


def score_level_stats(
    scores: ArrayLike, similarities: ArrayLike, level: Callable[[float], str] = exact_level
) -> list[dict[str, Any]]:
    """One ``{"level", "count", "mean", "std"}`` dict per score level, ordered by the level's lowest score (std:
    ``ddof=1``, 0 for one pair); ``level`` may name levels anything (negative scores, words)."""
    scores = as_scores(scores, "scores", "score levels")
    similarities = as_scores(similarities, "similarities", "score levels")
    if len(scores) != len(similarities):
        raise ValueError(f"{len(scores)} scores but {len(similarities)} similarities")
    if len(scores) == 0:
        raise ValueError("no pairs to compute score-level statistics on")
    levels = np.asarray([level(score) for score in scores])
    rows = []
    for name in sorted(set(levels.tolist()), key=lambda text: scores[levels == text].min()):
        values = similarities[levels == name]
        std = float(values.std(ddof=1)) if len(values) > 1 else 0.0
        rows.append({"level": name, "count": len(values), "mean": float(values.mean()), "std": std})
    return rows


def plot_score_levels(name: str, rows: list[dict[str, Any]], path: str | os.PathLike, title: str = "") -> str:
    """Bar plot of :func:`score_level_stats` ``rows`` with std error bars (Opusparcus' Figure 2); returns its path."""
    from psp_st.io.extras import require

    matplotlib = require("matplotlib", "plots")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not rows:
        raise ValueError("nothing to plot: no score-level statistics")
    colors = [plt.cm.viridis(index / max(len(rows) - 1, 1)) for index in range(len(rows))]
    figure, axis = plt.subplots(figsize=(max(4.0, 0.5 * len(rows) + 1.5), 3.2))
    levels, means, stds = ([row[key] for row in rows] for key in ("level", "mean", "std"))
    axis.bar(levels, means, width=0.8, color=colors, yerr=stds, ecolor="black", capsize=2)
    axis.set_xlabel(f"human score ({name})")
    axis.set_ylabel("mean cosine similarity (± std)")
    if title:
        axis.set_title(title)
    figure.tight_layout()
    path = os.fspath(path)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


class ScoreAgreementEvaluator(CachedEmbeddingEvaluator):
    """Cosine similarity of each pair, summarised per human score level (mean, std, count) in :attr:`stats`.

    ``level``: :func:`exact_level` (Opusparcus, Turku) or :func:`sts_bucket` (0-5 STS). The primary metric,
    ``separation``, is the mean cosine of the highest level minus that of the lowest."""

    def __init__(
        self,
        data: Any,
        level: Callable[[float], str] = exact_level,
        name: str = "",
        score_column: str = "score",
        batch_size: int = 64,
        show_progress_bar: bool = False,
        cache: EmbeddingCache | None = None,
    ) -> None:
        super().__init__(name=name, batch_size=batch_size, show_progress_bar=show_progress_bar, cache=cache)
        self.sentences1, self.sentences2, scores = read_pairs(data, score_column, f"agreement data {name!r}")
        self.scores = np.asarray(scores, dtype=np.float64)
        self.level = level
        self.stats: list[dict[str, Any]] = []
        self.primary_metric = "separation"

    def compute_metrics(self, model: Any) -> dict[str, float]:
        cache = shared_cache(self, model)
        cache.add([*self.sentences1, *self.sentences2])
        similarities = cosine_pairs(cache.encode(self.sentences1), cache.encode(self.sentences2))
        self.stats = score_level_stats(self.scores, similarities, self.level)
        metrics = {f"{row['level']}_{key}": float(row[key]) for row in self.stats for key in ("mean", "std", "count")}
        return {**metrics, "separation": self.stats[-1]["mean"] - self.stats[0]["mean"]}
