"""Transformer baselines: SBERT bi-encoder, CrossEncoder pair classifier, Turku multi-output classifier.

Heavy libraries (transformers, datasets, scikit-learn) are imported inside the functions that use them.
"""

from __future__ import annotations

from psp_st.evaluation.turku_labels import TurkuLabel, parse_label, parse_labels

from .bi_encoder import build_bi_encoder, train_bi_encoder
from .cross_encoder import build_cross_encoder, train_cross_encoder
from .turku_classifier import TurkuClassifier
from .turku_metrics import format_turku_table, turku_scores

__all__ = [
    "TurkuClassifier",
    "TurkuLabel",
    "build_bi_encoder",
    "build_cross_encoder",
    "format_turku_table",
    "parse_label",
    "parse_labels",
    "train_bi_encoder",
    "train_cross_encoder",
    "turku_scores",
]
