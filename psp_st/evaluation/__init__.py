"""Evaluation of sentence embeddings: ST evaluators (usable as a trainer's ``evaluator``), :func:`run_suite`, and
offline MTEB tasks in ``psp_st.evaluation.mteb_tasks`` (not imported here: it needs mteb)."""

from __future__ import annotations

from psp_st.evaluation.agreement import (
    ScoreAgreementEvaluator,
    nearest_neighbours,
    neighbour_table_markdown,
    plot_score_levels,
    score_level_stats,
)
from psp_st.evaluation.bitext import BitextMiningEvaluator
from psp_st.evaluation.classification import ParaphraseMLPEvaluator, ThresholdClassificationEvaluator
from psp_st.evaluation.correlation import UndefinedCorrelationError, correlations
from psp_st.evaluation.embeddings import EmbeddingCache, NonFiniteEmbeddingError
from psp_st.evaluation.loaders import load_local
from psp_st.evaluation.report import summary_markdown, to_markdown, write_report
from psp_st.evaluation.retrieval import RetrievalEvaluator, rank_metrics, retrieval_ranks
from psp_st.evaluation.sts import STSEvaluator, sbert_pooled, wieting_means
from psp_st.evaluation.suite import SuiteEvaluator, run_suite

__all__ = [
    "BitextMiningEvaluator",
    "EmbeddingCache",
    "NonFiniteEmbeddingError",
    "ParaphraseMLPEvaluator",
    "RetrievalEvaluator",
    "STSEvaluator",
    "ScoreAgreementEvaluator",
    "SuiteEvaluator",
    "ThresholdClassificationEvaluator",
    "UndefinedCorrelationError",
    "correlations",
    "load_local",
    "nearest_neighbours",
    "neighbour_table_markdown",
    "plot_score_levels",
    "rank_metrics",
    "retrieval_ranks",
    "run_suite",
    "sbert_pooled",
    "score_level_stats",
    "summary_markdown",
    "to_markdown",
    "wieting_means",
    "write_report",
]
