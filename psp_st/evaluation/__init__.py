"""Evaluation of sentence embeddings: ST evaluators (usable as a trainer's ``evaluator``), :func:`run_suite`, and
offline MTEB tasks in ``psp_st.evaluation.mteb_tasks`` (not imported here: it needs mteb)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from psp_st.evaluation.agreement import ScoreAgreementEvaluator, plot_score_levels, score_level_stats
    from psp_st.evaluation.bitext import BitextMiningEvaluator
    from psp_st.evaluation.classification import ParaphraseMLPEvaluator, ThresholdClassificationEvaluator
    from psp_st.evaluation.correlation import UndefinedCorrelationError, correlations
    from psp_st.evaluation.embeddings import EmbeddingCache, NonFiniteEmbeddingError
    from psp_st.evaluation.loaders import load_local
    from psp_st.evaluation.neighbours import nearest_neighbours, neighbour_table_markdown
    from psp_st.evaluation.report import summary_markdown, to_markdown, write_report
    from psp_st.evaluation.retrieval import RetrievalEvaluator, rank_metrics, retrieval_ranks
    from psp_st.evaluation.sts import STSEvaluator, sbert_pooled, wieting_means
    from psp_st.evaluation.suite import SuiteEvaluator, run_suite

#: Imported on first use: ``psp-st neighbours`` needs EmbeddingCache and the neighbour tables, not the evaluators
#: (Sentence-Transformers' BaseEvaluator: seconds to import, with transformers, sklearn and pandas).
_LAZY = {
    "BitextMiningEvaluator": "psp_st.evaluation.bitext",
    "correlations": "psp_st.evaluation.correlation",
    "EmbeddingCache": "psp_st.evaluation.embeddings",
    "load_local": "psp_st.evaluation.loaders",
    "nearest_neighbours": "psp_st.evaluation.neighbours",
    "neighbour_table_markdown": "psp_st.evaluation.neighbours",
    "NonFiniteEmbeddingError": "psp_st.evaluation.embeddings",
    "ParaphraseMLPEvaluator": "psp_st.evaluation.classification",
    "plot_score_levels": "psp_st.evaluation.agreement",
    "rank_metrics": "psp_st.evaluation.retrieval",
    "retrieval_ranks": "psp_st.evaluation.retrieval",
    "RetrievalEvaluator": "psp_st.evaluation.retrieval",
    "run_suite": "psp_st.evaluation.suite",
    "sbert_pooled": "psp_st.evaluation.sts",
    "score_level_stats": "psp_st.evaluation.agreement",
    "ScoreAgreementEvaluator": "psp_st.evaluation.agreement",
    "STSEvaluator": "psp_st.evaluation.sts",
    "SuiteEvaluator": "psp_st.evaluation.suite",
    "summary_markdown": "psp_st.evaluation.report",
    "ThresholdClassificationEvaluator": "psp_st.evaluation.classification",
    "to_markdown": "psp_st.evaluation.report",
    "UndefinedCorrelationError": "psp_st.evaluation.correlation",
    "wieting_means": "psp_st.evaluation.sts",
    "write_report": "psp_st.evaluation.report",
}

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


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'psp_st.evaluation' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
